import Foundation
import NFCBenchKit
import NFCBenchTestSupport
import NFCTags
import NFCTrace
import Testing

@testable import nfcbench

/// What a fresh user's trial of the declarative command line (issue 32) found, each checked in
/// this process over every command it concerns: `--quiet` is the shared gate everywhere, a flag
/// given twice is refused like a value, every command group says "did you mean", two outputs
/// can't both take standard output, a dry run's JSON says what it would send (not what it
/// sent), a file that is no trace says so, a vpcd card says nothing before vpcd takes it, and
/// ATQA reads most significant byte first wherever a person reads it.
@Suite("Issue 32's gaps: quiet, repeated flags, subcommand typos, stdout clashes, dry-run JSON, non-traces, ATQA")
struct FreshUserGapsTests {
    // MARK: --quiet

    @Test("Every command takes the shared --quiet (none keeps a --quiet of its own that prints status lines)")
    func everyQuietIsShared() throws {
        for command in Registry.commands {
            #expect(!command.handlesQuiet, "\(command.name)")
            let quiet = try #require(command.options.first { $0.name == "quiet" }, "\(command.name)")
            #expect(quiet.help == OutputOptions.quiet.help && quiet.short == "q", "\(command.name)")
        }
        // The gate is set for the virtual devices as for every command (not with --json).
        let (pn532, parsed) = try #require(
            InProcessCLI.parsed(["virtual", "pn532", "--pty", "-", "--tag", "ntag215-uri", "--quiet"]))
        #expect(!pn532.handlesQuiet && parsed.flag("quiet"))
    }

    /// Commands run here with `--quiet`, each printing nothing on stdout or stderr (`T2`, `T4`:
    /// a copy of a Type 2 and a Type 4 tag file of the test's own, as a `sim:tag:` reader).
    static let quietRuns: [[String]] = [
        ["tag", "show", "ntag215-uri"],
        ["write", "--device", "sim:tag:T2", "--ndef", "text:hi", "--dry-run", "--no-trace"],
        ["format", "--device", "sim:tag:T2", "--dry-run", "--no-trace"],
        ["lock", "--device", "sim:tag:T2", "--dry-run", "--no-trace"],
        ["measure", "apdu", "--device", "sim:tag:T4", "--count", "3", "--no-trace"],
        ["bench", "ndef-fuzz", "--count", "100"],
    ]

    /// A copy of hardware/tags' `name` in `folder`, for a `sim:tag:` reader of the test's own.
    static func tagCopy(_ name: String, in folder: TestFolder) throws -> String {
        let copy = folder.file(name + ".json")
        try FileManager.default.copyItem(atPath: try #require(BenchData.resolve(name, in: "tags")), toPath: copy)
        return copy
    }

    @Test("--quiet: nothing on stdout or stderr from a command that succeeds", arguments: quietRuns)
    func quietPrintsNothing(_ argv: [String]) async throws {
        let folder = try TestFolder("quiet")
        defer { folder.remove() }
        let (t2, t4) = (try Self.tagCopy("ntag215-uri", in: folder), try Self.tagCopy("t4t-uri", in: folder))
        let words = argv.map { $0.replacingOccurrences(of: "sim:tag:T2", with: "sim:tag:" + t2) }
            .map { $0.replacingOccurrences(of: "sim:tag:T4", with: "sim:tag:" + t4) }
        let r = await InProcessCLI.run(words + ["--quiet"])
        #expect(r.status == 0, "\(argv): \(r.stderr)")
        #expect(r.stdout.isEmpty, "\(argv): \(r.stdout)")
        #expect(r.stderr.isEmpty, "\(argv): \(r.stderr)")
    }

    @Test("The PN532 server with quiet prints nothing (with no link: the pty's path alone); without, its start lines")
    func pn532Quiet() async throws {
        let file = try TagFile.load(path: try #require(BenchData.resolve("ntag215-uri", in: "tags")))
        let folder = try TestFolder("quiet-pn532")
        defer { folder.remove() }
        for (pty, quiet) in [(folder.file("pn532"), true), ("-", true), (folder.file("pn532"), false)] {
            let capture = BenchOutput.Capture()
            let server = try PN532Server.start(
                pty: pty, file: file, reader: nil, cycle: nil, json: false, quiet: quiet,
                traceOptions: BenchTraces.Options(noTrace: true), savePath: nil)
            let serving = Task { try await BenchOutput.$capture.withValue(capture) { try await server.serve() } }
            try await wait(for: "the start", timeout: .seconds(10), every: .milliseconds(10)) {
                !quiet || pty != "-" || !capture.stdout.isEmpty
            }
            server.stop()
            #expect(try await serving.value == 0)
            switch (pty, quiet) {
            case ("-", true): #expect(capture.stdout == server.pn532.slavePath + "\n", "\(capture.stdout)")
            case (_, true): #expect(capture.stdout.isEmpty, "\(capture.stdout)")
            default:
                #expect(capture.stdout.hasPrefix("virtual PN532 on \(pty) -> "), "\(capture.stdout)")
                #expect(capture.stdout.hasSuffix("stopped; removed \(pty)\n"), "\(capture.stdout)")
            }
            #expect(capture.stderr.isEmpty, "\(capture.stderr)")
        }
    }

    // MARK: virtual card: nothing claims it serves before vpcd takes it

    @Test("A vpcd card vpcd never takes prints no start line (no 'virtual card: … on vpcd port'), only why, 69")
    func cardSaysNothingBeforeVPCD() async throws {
        let (path, file, personality) = try VirtualCardKind.part3.load("t4t-uri")
        let folder = try TestFolder("card-start")
        defer { folder.remove() }
        let capture = BenchOutput.Capture()
        let server = try BenchOutput.$capture.withValue(capture) {
            try VirtualCardServer.start(
                tagPath: path, file: file, personality: personality, kind: .part3, port: try TestPorts.free(),
                reversed: false, traceOptions: BenchTraces.Options(path: folder.file("t.jsonl")), json: false,
                quiet: false, wait: false, otherSlot: "another slot", grace: .zero)
        }
        #expect(server.startLines.first?.hasPrefix("virtual card: type4 from \(path) on vpcd port ") == true)
        #expect(server.startLines.last == "trace: \(folder.file("t.jsonl"))")
        let status = await BenchOutput.$capture.withValue(capture) { () async -> Int32? in
            try? await server.serve(readingStandardInput: false)
        }
        #expect(status == nil, "it never served")
        #expect(capture.stdout.isEmpty, "\(capture.stdout)")
        #expect(capture.stderr.isEmpty, "the error is the command's to print: \(capture.stderr)")
    }

    // MARK: a flag given twice

    @Test("Every flag of every command, given twice, is refused as a value option is: '--X is given twice'")
    func everyFlagTwice() {
        for command in Registry.commands {
            for o in command.options where o.kind == .flag {
                let argv = command.path + ["--" + o.name, "--" + o.name]
                #expect(InProcessCLI.mistake(argv) == "--\(o.name) is given twice: give it once", "\(argv)")
            }
        }
    }

    // MARK: did you mean, for every command group

    @Test("Every subcommand of every group, two neighbouring letters swapped, gets 'did you mean' it")
    func everySubcommandTypo() throws {
        for command in Registry.commands where command.path.count == 2 {
            let group = command.path[0]
            var sub = Array(command.path[1])
            let at = sub[1] != sub[2] ? 1 : 0  // `all`: `lal`
            sub.swapAt(at, at + 1)
            let typo = String(sub)
            #expect(
                InProcessCLI.mistake([group, typo])
                    == "unknown command 'nfcbench \(group) \(typo)' (did you mean '\(command.path[1])'?)",
                "\(group) \(typo)")
        }
    }

    // MARK: two outputs on standard output

    @Test("Every command with --json and --trace refuses --trace - (or /dev/stdout) with --json, before it runs")
    func jsonWithTraceOnStdout() {
        var checked = 0
        for command in Registry.commands
        where command.options.contains(where: { $0.name == "json" })
            && command.options.contains(where: { $0.name == "trace" })
        {
            for dash in ["-", "/dev/stdout"] {
                let argv = command.path + ["--trace", dash, "--json"]
                #expect(
                    InProcessCLI.mistake(argv)
                        == "--json and --trace \(dash) both write to standard output: give --trace a file name,"
                        + " or leave out --json", "\(argv)")
            }
            checked += 1
        }
        #expect(checked >= 10, "\(checked) commands")
        // A trace file and --json, or --trace - alone, are no clash.
        #expect(InProcessCLI.parsed(["session", "--device", "sim:tap-uri", "--trace", "t.jsonl", "--json"]) != nil)
        #expect(InProcessCLI.parsed(["session", "--device", "sim:tap-uri", "--trace", "-"]) != nil)
    }

    // MARK: write --dry-run --json

    @Test("write --dry-run --json: dry_run true, nothing in 'sent', the planned pages in 'would_send'; a write: sent")
    func dryRunJSON() async throws {
        let folder = try TestFolder("dry-json")
        defer { folder.remove() }
        let tag = try Self.tagCopy("ntag215-uri", in: folder)
        func run(_ extra: [String]) async throws -> [String: Any] {
            let r = await InProcessCLI.run(
                ["write", "--device", "sim:tag:\(tag)", "--ndef", "text:hi", "--json", "--no-trace"] + extra)
            #expect(r.status == 0, "\(r.stderr)")
            return try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        }
        let dry = try await run(["--dry-run"])
        #expect(dry["status"] as? String == "dry_run")
        #expect(dry["dry_run"] as? Bool == true)
        #expect(dry["sent"] as? [String] == [], "nothing was sent: \(dry)")
        #expect(dry["would_send"] as? [String] == ["page 4", "page 5", "page 6", "page 4"], "\(dry)")
        let real = try await run(["--backup", folder.file("backup.json")])
        #expect(real["status"] as? String == "written")
        #expect(real["dry_run"] as? Bool == false)
        #expect((real["sent"] as? [String])?.isEmpty == false, "\(real)")
        #expect(real["would_send"] == nil)
        // The screen's first line (the task's; the plan's lines come from the reader's thread).
        let text = await InProcessCLI.run(
            ["write", "--device", "sim:tag:\(tag)", "--ndef", "text:hi", "--dry-run", "--no-trace"])
        #expect(text.stdout.hasPrefix("dry run: would write NDEF message of 9 bytes (text:hi)"), "\(text.stdout)")
    }

    @Test(
        "restore --dry-run --json: dry_run true, 'sent' empty, 'would_send' the writes in order (pages; a Type 4 tag's APDUs), as write's"
    )
    func restoreDryRunJSON() async throws {
        let folder = try TestFolder("restore-dry-json")
        defer { folder.remove() }
        // The tag as shipped, and a file of it that differs in one byte of its NDEF data.
        for (tag, from, to) in [
            ("ntag215-uri", "\"66636265\"", "\"66636266\""), ("t4t-uri", "63682F743474\"", "63682F743475\""),
        ] {
            let device = try Self.tagCopy(tag, in: folder)
            let file = folder.file("\(tag)-changed.json")
            let text = try String(contentsOfFile: device, encoding: .utf8)
            try #require(text.contains(from))
            try text.replacingOccurrences(of: from, with: to).write(toFile: file, atomically: true, encoding: .utf8)
            func run(_ extra: [String]) async throws -> [String: Any] {
                let r = await InProcessCLI.run(
                    ["restore", "--device", "sim:tag:\(device)", "--json", "--no-trace"] + extra + [file])
                #expect(r.status == 0, "\(r.stderr)")
                return try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            }
            let dry = try await run(["--dry-run"])
            #expect(dry["status"] as? String == "dry_run")
            #expect(dry["dry_run"] as? Bool == true)
            #expect(dry["sent"] as? [String] == [], "nothing was sent: \(dry)")
            let wouldSend = try #require(dry["would_send"] as? [String], "\(dry)")
            if tag == "ntag215-uri" {
                // The NDEF length to 0 first, the changed page, the length back last (the file's
                // length is the tag's: page 4 was left at 0 before, an empty message).
                #expect(wouldSend == ["page 4", "page 9", "page 4"], "\(dry)")
                #expect((dry["writes"] as? [[String: Any]])?.compactMap { $0["page"] as? Int } == [4, 9, 4])
            } else {
                #expect(wouldSend.count == 3 && wouldSend.allSatisfy { $0.hasPrefix("00 D6 00 ") }, "\(dry)")
                #expect(wouldSend.last == "00 D6 00 00 02 00 1D", "NLEN last: \(dry)")
            }
            let real = try await run(["--backup", folder.file("\(tag)-backup.json")])
            #expect(real["status"] as? String == "restored", "\(real)")
            #expect(real["dry_run"] as? Bool == false)
            #expect(real["would_send"] == nil)
        }
    }

    // MARK: a file that is no trace

    /// A file of each kind, and what `trace show|export|plot|diff` say of it after "error: FILE".
    static let nonTraces: [(name: String, bytes: [UInt8], says: String)] = [
        (
            "picture.png", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D],
            " is not an nfcbench trace (binary data"
        ),
        ("empty.jsonl", [], " is not an nfcbench trace (the file is empty)"),
        (
            "tag.json", Array("{\n  \"format\": \"nfcbench-tag\",\n  \"version\": 1\n}\n".utf8),
            " is not an nfcbench trace (it is one JSON document of format \"nfcbench-tag\", not JSON Lines"
        ),
        (
            "object.json", Array("{\"a\": 1}\n".utf8),
            " is not an nfcbench trace (line 1 is a JSON object with no \"event\""
        ),
        ("array.json", Array("[1, 2]\n".utf8), " is not an nfcbench trace (line 1 is JSON but not an object"),
        ("words.txt", Array("hello\nworld\n".utf8), " is not an nfcbench trace (line 1 is not JSON)"),
        // A real trace killed while writing its header is cut short, not "no trace".
        (
            "cut.jsonl", Array(#"{"schema":"nfcbench.trace/1","t_us":0,"event":"hea"#.utf8),
            ": no trace records: its only line is cut short"
        ),
    ]

    @Test("trace show, export, plot and diff: a file that is no trace says so (65); a cut trace says cut short")
    func notATrace() async throws {
        let folder = try TestFolder("not-a-trace")
        defer { folder.remove() }
        let good = folder.file("good.jsonl")
        let header = #"{"schema":"nfcbench.trace/1","t_us":0,"event":"header","command":"session"}"#
        let record = #"{"t_us":5,"event":"didBecomeActive"}"#
        try Data((header + "\n" + record + "\n").utf8).write(to: URL(fileURLWithPath: good))
        for (name, bytes, says) in Self.nonTraces {
            let file = folder.file(name)
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            for argv in [
                ["trace", "show", file], ["trace", "export", "--pcapng", folder.file("o.pcapng"), file],
                ["trace", "plot", "--svg", folder.file("o.svg"), file], ["trace", "diff", good, file],
            ] {
                let r = await InProcessCLI.run(argv)
                #expect(r.status == 65, "\(argv): \(r.stderr)")
                #expect(r.stderr.hasPrefix("error: \(file)\(says)"), "\(argv): \(r.stderr)")
                #expect(r.stdout.isEmpty, "\(argv)")
            }
        }
        // A trace whose last line is cut is read without it, as before.
        let cutLast = folder.file("cut-last.jsonl")
        try Data((header + "\n" + #"{"t_us":5,"ev"#).utf8).write(to: URL(fileURLWithPath: cutLast))
        let r = await InProcessCLI.run(["trace", "show", cutLast])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("its last line is cut"), "\(r.stderr)")
    }

    // MARK: ATQA as nfc-list prints it

    @Test("ATQA reads most significant byte first wherever a person reads it; JSON keeps the wire order")
    func atqaAsNfcListPrintsIt() async throws {
        let activation = try ISO14443AActivation(
            uid: [0x04, 0xA2, 0x3B, 0x91, 0x5C, 0x6E, 0x80], atqa: [0x44, 0x00], sak: 0)
        #expect(activation.atqaText == "00 44")
        #expect(activation.description == "UID 04 A2 3B 91 5C 6E 80, ATQA 00 44, SAK 00")
        #expect(ISO14443AActivation.atqaText([0x44, 0x03], separator: "") == "0344")
        let text = await InProcessCLI.run(["tag", "show", "ntag215-uri"])
        #expect(text.stdout.contains("ATQA/SAK:  00 44 / 00\n"), "\(text.stdout)")
        let json = await InProcessCLI.run(["tag", "show", "ntag215-uri", "--json"])
        #expect(json.stdout.contains(#""atqa":"4400""#), "the field keeps its name and wire order: \(json.stdout)")
        let t4 = await InProcessCLI.run(["tag", "show", "t4t-uri"])
        #expect(t4.stdout.contains("ATQA/SAK:  03 44 / 20"), "\(t4.stdout)")
    }
}
