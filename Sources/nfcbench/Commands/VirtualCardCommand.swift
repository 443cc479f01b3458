import Dispatch
import Foundation
import NFCBase
import NFCFiles
import NFCHardware
import NFCTags
import NFCTrace
import ReaderSession
import Synchronization
import VirtualHardware

/// `nfcbench virtual card`: a tag file served as a vsmartcard vpcd card to the real pcscd.
enum VirtualCardCommand {
    /// What to do when another card holds vpcd's port (``CardLink``): this command's own flags.
    static let otherSlot = "use the other vpcd slot (--slot 1, port 35964)"

    static let command = Command(
        path: ["virtual", "card"],
        abstract: "Serve a tag file as a virtual card in pcscd's vpcd reader",
        options: [
            OptionSpec(
                "tag", value: "FILE",
                help: "a tag file (our JSON, Flipper .nfc, Proxmark3 dump) or a name in hardware/tags/",
                required: true, completion: .file),
            OptionSpec(
                "personality", .choice(VirtualCardKind.allCases.map(\.rawValue)), value: "P",
                help: """
                    how the reader shows the card: part3, a PC/SC 2.01 part 3
                    reader (FF CA, FF B0/FF D6, FF C2 transparent exchange); acr122u,
                    an ACS ACR122U (a PN532 behind its firmware: FF 00 00 00 Lc D4 …
                    direct transmit, FF 00 48 00 00 firmware version, FF 00 40 LED and
                    buzzer, 63 00 where the card timed out)
                    """, default: .text("part3")),
            OptionSpec("port", .int(1...65535), help: "vpcd's TCP port (default 35963 = \"Virtual PCD 00 00\")"),
            OptionSpec(
                "slot", .choice(["0", "1"]), value: "0|1", help: "the Debian vpcd slot: 0 = port 35963, 1 = port 35964"),
            OptionSpec(
                "reversed", .flag,
                help: """
                    vpcd's reversed mode, for a shared pcscd: the card listens on
                    127.0.0.1:PORT and vpcd connects to it (reader.conf entry
                    hardware/pcsc-loopback/vpcd); nothing listens beyond loopback
                    """),
            OptionSpec(
                "wait", .flag,
                help: """
                    when vpcd does not take the card (no pcscd, or the port held by
                    another card), keep trying, saying why, instead of exiting 69
                    """),
            OptionSpec(
                "present-for", .duration(bare: .seconds, moreThanZero: false),
                help: "alternate presence with --absent-for: in the field this long, out, forever"),
            OptionSpec(
                "absent-for", .duration(bare: .seconds, moreThanZero: false),
                help: "out of the field this long (with --present-for)"),
            OptionSpec(
                "remove-after", .duration(bare: .seconds, moreThanZero: false),
                help: "take the card out of the field after this long"),
            OutputOptions.json("print the trace records (JSON Lines) instead of text lines"),
            OptionSpec(
                "quiet", .flag, help: "print only the start line and errors (the trace keeps everything)",
                group: .output,
                short: "q"),
        ] + Traces.Options.table(),
        discussion: """
            A type4 file becomes a T4T NDEF application behind an ISO/IEC 14443-4 ATR; a Type 2
            file (NTAG21x, Ultralight) its memory image behind a PC/SC part 3 storage-card ATR.
            One line per connection, control byte and APDU; every line is also in the trace,
            whose path is printed right after the line naming the card. Standard input takes
            commands, one per line: 'remove', 'present', 'quit'. SIGINT (Ctrl-C), SIGTERM or SIGHUP stops the card cleanly (exit 0).
            vpcd must be configured in pcscd (scripts/with-pcscd runs a private one). The card is in
            the field once pcscd polls it through vpcd; when that does not happen within 3 s
            (nothing listens on the port, or another card holds it: vpcd serves one card per port)
            the command says why and exits 69, or with --wait says why and keeps trying.
            """,
        validate: { o throws(CLIError) in
            _ = try Traces.Options(o)
            if o.has("port") && o.has("slot") { throw CLIError.usage("give --port or --slot, not both") }
            if o.has("present-for") != o.has("absent-for") {
                throw CLIError.usage("--present-for and --absent-for go together")
            }
        },
        run: { o in try await run(o) })

    static func run(_ o: ParsedOptions) async throws -> Int32 {
        let tagName = o.string("tag")!
        let personalityName = o.string("personality")!
        let portOption = o.int("port")
        let slot = o.string("slot").flatMap { Int($0) }
        let presentFor = o.duration("present-for")
        let absentFor = o.duration("absent-for")
        let removeAfter = o.duration("remove-after")
        let json = o.flag("json")
        let quiet = o.flag("quiet")
        let wait = o.flag("wait")
        let reversed = o.flag("reversed")
        var traceOptions = try Traces.Options(o)
        traceOptions.json = json
        let port = UInt16(portOption ?? (slot == 1 ? 35964 : 35963))

        let kind = VirtualCardKind(rawValue: personalityName)!
        let (path, file, personality) = try loadVirtualCard(tagName, as: kind)
        if let mismatch = file.uidMismatch { Output.err("warning: \(mismatch)") }

        var configuration = VirtualCard.Configuration(port: port)
        configuration.reversed = reversed
        let card = VirtualCard(personality: personality, configuration: configuration)
        let trace = try Traces.open(
            command: "virtual card", device: "vpcd:\(port)",
            setup: [
                "tag_file": .string(path), "personality": .string(kind.rawValue),
                "tag_type": .string(file.type.rawValue), "port": .int(Int64(port)),
                "atr": .string(personality.atr.hexString()), "reversed": .bool(reversed),
            ],
            options: traceOptions, inputs: [NamedFile("--tag \(path)", path)])
        defer { trace.close() }
        let start = BenchTrace.monotonicMicros()
        if !json {
            Output.out(
                "virtual card: \(file.type.rawValue) from \(path) on vpcd port \(port)\(reversed ? " (reversed: listening on 127.0.0.1)" : ""), ATR \(personality.atr.hexString(separator: " "))"
            )
            Output.out("trace: \(trace.path ?? "(none)")")
        }

        let done = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        let signals = Signals.handle { sig in
            if Signals.stops(sig) { done.signal() } else { Signals.runDefault(sig) }
        }
        defer { signals.cancel() }
        card.start()
        if let presentFor, let absentFor { card.cyclePresence(present: presentFor, absent: absentFor) }
        if let removeAfter {
            DispatchQueue.global().asyncAfter(deadline: .now() + BenchTrace.seconds(removeAfter)) {
                trace.record("command", ["input": "remove-after"])
                card.remove()
            }
        }
        StdinCommands.start { line in
            switch line {
            case "remove":
                trace.record("command", ["input": "remove"])
                card.remove()
            case "present":
                trace.record("command", ["input": "present"])
                card.present()
            case "quit", "exit":
                done.signal()
            case "":
                break
            default:
                Output.err("unknown command '\(line)': remove, present or quit")
            }
        } onEnd: {
        }

        // Follow the card's log: trace every event, print the human line; and watch that vpcd
        // takes the card (CardLink): say why not, then exit 69 or (--wait) keep trying.
        let stopFollowing = BenchFlag()
        let followerDone = DispatchSemaphore(value: 0)
        let follower = Thread {
            var everInField = false
            var said: String? = nil
            while true {
                let link = card.link
                if link.state == .inField {
                    everInField = true
                    said = nil
                } else if BenchTrace.monotonicMicros() >= link.sinceMicros + UInt64(CardLink.grace.components.seconds)
                    * 1_000_000,
                    let why = CardLink.diagnosis(card, otherSlot: otherSlot)
                {
                    if !everInField && !wait {
                        if failure.withLock({ $0 }) == nil {
                            trace.record("not_in_field", ["reason": .string(why)])
                            failure.withLock { $0 = why }
                            done.signal()
                        }
                    } else if why != said {
                        trace.record("waiting", ["reason": .string(why)])
                        if !json { Output.err("waiting: \(why); trying again (Ctrl-C stops)") }
                        said = why
                    }
                }
                let new = card.takeEvents()
                // The events since the last look go to the trace with one write(2).
                let records = new.map { e -> JSONObject in
                    let (name, fields) = BenchTrace.fields(of: e)
                    let t = Int64(e.timestampMicros) - Int64(start)
                    var record: JSONObject = ["t_us": .int(t), "event": .string(name)]
                    record.merge(fields)
                    return record
                }
                for written in trace.emit(contentsOf: records) where !json && !quiet {
                    if let line = BenchTrace.text(written) { Output.out(line) }
                }
                if new.isEmpty {
                    if stopFollowing.isSet {
                        followerDone.signal()
                        return
                    }
                    usleep(10_000)
                }
            }
        }
        follower.start()
        await OffPool.run { done.wait() }
        card.stop()
        // The card's last events (its disconnect) reach the log, then the follower traces what
        // is left and ends: waited for off Swift's cooperative pool.
        await OffPool.run {
            usleep(50_000)
            stopFollowing.set()
            followerDone.wait()
        }
        if let why = failure.withLock({ $0 }) {
            trace.record("stopped", ["reason": "not in the field"])
            throw CLIError.unavailable(why + " (--wait keeps trying)")
        }
        trace.record("stopped", [:])
        if !json { Output.out("stopped") }
        return 0
    }
}

/// Reads standard input line by line on a thread of its own.
enum StdinCommands {
    static func start(_ handle: @escaping @Sendable (String) -> Void, onEnd: @escaping @Sendable () -> Void) {
        let t = Thread {
            while let line = readLine(strippingNewline: true) {
                handle(line.trimmingCharacters(in: .whitespaces).lowercased())
            }
            onEnd()
        }
        t.name = "nfcbench.stdin"
        t.start()
    }
}

/// The bench commands' trace files and their record shapes.
enum BenchTrace {
    static func monotonicMicros() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1_000
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    static func fields(of e: VirtualCardEvent) -> (String, JSONObject) {
        switch e.kind {
        case .connected(let port): ("card_connected", ["port": .int(Int64(port))])
        case .disconnected(let why): ("card_disconnected", ["reason": .string(why.rawValue)])
        case .control(let c):
            ("vpcd_control", ["code": .string(String(format: "%02X", c)), "meaning": .string(controlName(c))])
        case .atr(let b): ("atr", ["atr": .string(b.hexString())])
        case .command(let b): ("c_apdu", ["apdu": .string(b.hexString())])
        case .response(let b): ("r_apdu", ["response": .string(b.hexString())])
        case .fault(let f): ("fault", ["fault": .string("\(f)")])
        }
    }

    static func controlName(_ c: UInt8) -> String {
        switch c {
        case 0x00: "power off"
        case 0x01: "power on"
        case 0x02: "reset"
        case 0x04: "get ATR"
        default: "unknown"
        }
    }

    /// The human line of a virtual card record (what `virtual card` prints and `trace show`
    /// prints of its trace), or nil for records it does not show.
    static func text(_ r: JSONObject) -> String? {
        func spaced(_ key: String) -> String { TraceLines.spaced(r[key]?.stringValue ?? "") }
        let what: String
        switch r["event"]?.stringValue ?? "" {
        case "card_connected": what = "in the field (connected to vpcd :\(r["port"]?.intValue ?? 0))"
        case "card_disconnected": what = "out of the field (\(r["reason"]?.stringValue ?? "?"))"
        case "vpcd_control": what = "vpcd \(r["code"]?.stringValue ?? "?") \(r["meaning"]?.stringValue ?? "")"
        case "atr": what = "ATR    \(spaced("atr"))"
        case "c_apdu": what = "C-APDU \(spaced("apdu"))"
        case "r_apdu": what = "R-APDU \(spaced("response"))"
        case "fault": what = "fault \(r["fault"]?.stringValue ?? "")"
        default: return nil
        }
        return String(format: "%10.3f ms  ", Double(r["t_us"]?.intValue ?? 0) / 1000) + what
    }
}

/// A flag one thread sets and another polls.
final class BenchFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}

/// A tag file (found by name in `hardware/tags/`, or a path) as a vpcd card's personality
/// (`virtual card`, the demo); 65 naming the file when it can't be loaded or emulated, 66 when
/// it is missing.
/// How the vpcd card shows its tag (`virtual card --personality`).
enum VirtualCardKind: String, CaseIterable {
    /// A PC/SC 2.01.09 part 3 reader (``/VirtualHardware/TagFileCardPersonality``).
    case part3
    /// An ACS ACR122U (``/VirtualHardware/ACR122UPersonality``).
    case acr122u
}

func loadVirtualCard(_ tag: String, as kind: VirtualCardKind = .part3) throws(CLIError) -> (
    path: String, file: TagFile, personality: any VirtualCardPersonality
) {
    let path = try DataLocation.require(tag, in: "tags")
    do {
        let file = try TagFile.load(path: path)
        let personality: any VirtualCardPersonality =
            switch kind {
            case .part3: try file.makeVirtualCardPersonality()
            case .acr122u: try file.makeACR122UPersonality()
            }
        return (path, file, personality)
    } catch let e as DataFileError {
        throw CLIError(e)
    } catch {
        throw CLIError.data("\(path): \(error)")
    }
}
