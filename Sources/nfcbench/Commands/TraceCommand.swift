import Foundation
import NFCBenchKit
import NFCFiles
import NFCTrace

/// `nfcbench trace export|show|diff|plot`: a trace file opened by the field's tools
/// (Wireshark through pcapng), read by a person, compared, or drawn.
enum TraceCommand {
    /// The trace at `path`; a cut last line (a run killed mid-write) is read without, and said.
    static func load(_ path: String) throws(CLIError) -> TraceContents {
        let trace: TraceContents
        do { trace = try TraceContents(path: path) } catch {
            throw error.missing ? .noInput(error.description) : .data(error.description)
        }
        if trace.skippedLines > 0 {
            Output.err("note: \(path): its last line is cut (the run that wrote it stopped mid-line); read without it")
        }
        return trace
    }

    static let export = Command(
        path: ["trace", "export"],
        abstract: "Write a trace's ISO/IEC 14443 and FeliCa frames as pcapng for Wireshark and tshark",
        options: [
            OptionSpec(
                "pcapng", value: "OUT", help: "the file to write (- for standard output); refused when it is TRACE",
                required: true),
            OptionSpec(
                "redact", .flag,
                help: """
                    UIDs, payloads and APDU data become zeros of the same length (SELECT
                    AIDs, status words and Type 2 commands stay)
                    """),
            OutputOptions.json(
                #"print {"pcapng":OUT,"packets":N,"felica_packets":N,"skipped":[{"frames":N,"family":…,"reason":…}]}"#),
        ],
        positionals: [PositionalSpec(name: "TRACE", help: "a trace file (JSON Lines), or - for standard input")],
        discussion: """
            Writes OUT as pcapng: one interface of link type 264 (LINKTYPE_ISO_14443: the 4-byte
            pseudo-header version, event, length before each frame), microsecond timestamps
            (the header's 'started' + each record's t_us), the tool and library versions in the
            section header. Frames carry no CRC, so the "CRC dropped" events (FA, FB) are used.
            FeliCa frames go on a second interface, link type 252 (Wireshark's exported PDU,
            naming its felica dissector), without their length byte. ISO 15693 frames are left
            out (Wireshark has no dissector for them; they stay in the trace): the message and
            --json say how many.

            What each trace gives: the frames a session or bench run exchanged (a libnfc
            device's activation rebuilt from the target it reports; APDUs in ISO-DEP blocks
            whose framing is synthesized; Type 2 frames as sent), the virtual PN532's air side,
            the vpcd card's APDUs (a storage card's FF B0/FF D6/FF CA as the READ/WRITE/
            anticollision frames a reader sends for them), the HCE phone's field and APDUs.
            Every synthesized packet says so in its comment; Type 2 commands get their
            meaning there ("READ page 4"), as Wireshark's dissector does not know them.

            Wireshark hands ISO 14443-4 payloads to the ISO 7816 dissector only when told:
            tshark -r OUT -d iso14443.subdissector,iso7816 (in Wireshark: Analyze > Decode As…,
            "ISO14443 payload subdissector" → ISO 7816).

            TRACE may be - (standard input).
            """,
        run: { o in
            let out = o.string("pcapng")!
            let redact = o.flag("redact")
            let input = o.positional(0)!
            let json = o.flag("json")
            if json && out == "-" { throw CLIError.usage("--json and --pcapng - both write to standard output") }
            _ = try Outputs.plan(out, option: "--pcapng")
            try Outputs.refuseSameFiles(
                outputs: [NamedFile("--pcapng \(out)", out)], inputs: [NamedFile("the trace \(input)", input)])
            let trace = try load(input)
            let counts: PcapngExport.Counts
            do throws(TraceFileError) {
                counts = try PcapngExport.export(trace, to: out, redact: redact, label: "--pcapng \(out)")
            } catch {
                let message = "can't write the pcapng file: \(error)"
                throw error.kind == .io ? CLIError.ioError(message) : CLIError.cantCreate(message)
            }
            Output.err((["\(counts.packets) packets to \(out)"] + counts.skipped).joined(separator: "; "))
            if json {
                var result: JSONObject = ["pcapng": .string(out)]
                for e in counts.json.entries { result[e.key] = e.value }
                Output.out(result.serialized)
            }
            return 0
        })

    static let show = Command(
        path: ["trace", "show"],
        abstract: "Print a trace as the lines the command that wrote it printed",
        options: [OptionSpec("verbose", .flag, help: "also frames and tag operations (as 'session --verbose')")],
        positionals: [PositionalSpec(name: "TRACE", help: "a trace file (JSON Lines), or - for standard input")],
        discussion: """
            The human view of any trace: a session's or the demo's lines, a walk's timeline and
            summary, emulate's and the virtual devices' lines, a bench run's frames, each
            rendered from the records exactly as the live command renders them.
            """,
        run: { o in
            let input = o.positional(0)!
            let verbose = o.flag("verbose")
            let trace = try load(input)
            if let h = trace.header {  // on stderr: stdout has exactly the live command's lines
                var head = "\(h["command"]?.stringValue ?? "?")"
                if let d = h["device"]?.stringValue { head += " on \(d)" }
                Output.err("\(head), started \(h["started"]?.stringValue ?? "?") (\(h["tool"]?.stringValue ?? "?"))")
            }
            for line in lines(trace, verbose: verbose) { Output.out(line) }
            return 0
        })

    /// The lines the command that wrote `trace` printed (or prints with `--verbose`).
    static func lines(_ trace: TraceContents, verbose: Bool) -> [String] {
        body(trace, verbose: verbose)
    }

    static func body(_ trace: TraceContents, verbose: Bool) -> [String] {
        let records = trace.records
        switch trace.command ?? guessCommand(records) {
        case "walk" where trace.header?["device"] == .null || trace.header?["device"] == nil:
            return [WalkReport.timeline(records)]
        case "walk", "emulate":
            var out = [HCELiveCLI.textHeader]
            for r in records {
                if r.is(.summary) {
                    out.append(HCELiveCLI.summaryText(r))
                } else {
                    out.append(HCELiveCLI.text(r))
                }
            }
            return out
        case "virtual card":
            return records.compactMap(VirtualCardTrace.text)
        case "virtual pn532":
            return records.compactMap(PN532Server.text)
        default:
            return records.compactMap { TraceLines.render($0, verbose: verbose) }
        }
    }

    static func guessCommand(_ records: [TraceRecord]) -> String {
        if records.contains(where: { $0["source"] != nil }) { return "emulate" }
        if records.contains(where: { $0["reader"] != nil && $0["session"] == nil }) { return "walk" }
        return "session"
    }

    static let diff = Command(
        path: ["trace", "diff"],
        abstract: "Compare two traces event by event (times ignored); exit 1 when they differ",
        options: [
            OptionSpec("times", .flag, help: "compare the times too"),
            OutputOptions.json(#"one JSON object per differing line: {"side":"-"|"+","index":N,"record":…}"#),
        ],
        positionals: [
            PositionalSpec(name: "A", help: "the first trace"), PositionalSpec(name: "B", help: "the second trace"),
        ],
        discussion: """
            Compares the records after the headers, in order, as JSON without their times
            (t_us, session_t_us, every *_us key, the thermal model's heat and the numbers it
            derives from the heat: time_limit_s, next_time_limit_s, time_to_cool_s). An event only in A
            is printed '- N', one only in B '+ N' (N: its position in that trace), aligned on
            what the two share. Header differences (command, device, versions, model, setup)
            are printed first and do not count.

            Exit status: 0 the same events, 1 they differ, 65 a file is not a trace.
            """,
        run: { o in
            let a = o.positional(0)!
            let b = o.positional(1)!
            let times = o.flag("times")
            let json = o.flag("json")
            let d = TraceDiff(try load(a), try load(b), options: .init(times: times))
            if !json {
                for h in d.headerDifferences { Output.out("header \(h)") }
            }
            for line in d.lines {
                switch line {
                case .same: continue
                case .onlyInFirst(let i, let text):
                    Output.out(json ? diffJSON("-", i, text) : "- \(i) \(text)")
                case .onlyInSecond(let i, let text):
                    Output.out(json ? diffJSON("+", i, text) : "+ \(i) \(text)")
                }
            }
            if !json {
                Output.out(
                    d.same
                        ? "the same events"
                        : "\(d.lines.filter { if case .same = $0 { false } else { true } }.count) lines differ")
            }
            return d.same ? 0 : 1
        })

    static func diffJSON(_ side: String, _ index: Int, _ text: String) -> String {
        var o: JSONObject = ["side": .string(side), "index": .int(Int64(index))]
        o["record"] = (try? JSONValue(parsing: text)) ?? .string(text)
        return o.serialized
    }

    static let plot = Command(
        path: ["trace", "plot"],
        abstract: "Draw a trace as a timeline (SVG)",
        options: [
            OptionSpec("svg", value: "OUT", help: "the SVG file to write (- for standard output)", required: true)
        ],
        positionals: [PositionalSpec(name: "TRACE", help: "a trace file (JSON Lines), or - for standard input")],
        discussion: """
            Writes OUT, a plain SVG 1200 px wide. A session: one lane per session with the
            sheet's active span, the time limit, detections, each frame or APDU as a tick (its
            hex in the hover title), the ending with its code and reason. A walk (or emulate):
            one lane per reader profile from its field on: the field, the wake, SELECTs by who
            answered (app, system, express credential, nobody), and whether the wake was served
            or useless, and why. Other traces: one lane of frames. OUT may be - (standard output),
            TRACE - (standard input); OUT is refused when it is TRACE.
            """,
        run: { o in
            let out = o.string("svg")!
            let input = o.positional(0)!
            let target = try Outputs.plan(out, option: "--svg")
            try Outputs.refuseSameFiles(
                outputs: [NamedFile("--svg \(out)", out)], inputs: [NamedFile("the trace \(input)", input)])
            let svg = TraceTimeline.svg(try load(input))
            do throws(FileError) { try target.write(Array(svg.utf8)) } catch {
                throw CLIError(FileError(error.kind, path: error.path, "can't write the SVG file: \(error.reason)"))
            }
            return 0
        })
}
