import Foundation
import NFCBenchTestSupport
import Testing

/// `--redact` on every command that takes it (issue 28): the tag's UID, in any spelling, is in
/// none of what the command shows (stdout, stderr), prints with `--json` or records in its trace;
/// what is left still says what happened (`redacted:<n> bytes` where the UID was). Each test's
/// reader is a copy of a tag file under a name of its own (`sim:tag-<stem>` is the reader's lock),
/// so no test waits on another's reader.
@Suite("--redact hides the tag's UID and content on every command that takes it")
struct RedactCommandsTests {
    static let tags = NFCBench.packageRoot.appendingPathComponent("hardware/tags").path
    static let ntag215UID = "04A23B915C6E80"  // hardware/tags/ntag215-uri.json
    static let t4tUID = "04518A2B6C1F90"  // hardware/tags/t4t-uri.json

    /// `hex`'s bytes run together, with spaces, colons or dashes between them, in upper and
    /// lower case; for a 7-byte UID also its first three and last four bytes (a Type 2 tag's
    /// pages 0 and 1 hold them apart, around BCC0).
    static func spellings(_ hex: String) -> [String] {
        func pairs(_ h: Substring) -> [String] {
            stride(from: 0, to: h.count, by: 2).map { i in
                String(h.dropFirst(i).prefix(2))
            }
        }
        var parts = [pairs(Substring(hex))]
        if hex.count == 14 { parts += [pairs(hex.prefix(6)), pairs(hex.suffix(8))] }
        var out: [String] = []
        for p in parts {
            for separator in ["", " ", ":", "-"] {
                let s = p.joined(separator: separator)
                out += [s.uppercased(), s.lowercased()]
            }
        }
        return out
    }

    /// Fails for each output that holds `hex` in any of its ``spellings(_:)``.
    static func expectHidden(_ hex: String, in outputs: [(what: String, text: String)]) {
        for (what, text) in outputs {
            for s in spellings(hex) {
                #expect(!text.contains(s), "\(what) holds '\(s)': \(text)")
            }
        }
    }

    /// The trace's records after its header (there must be some).
    static func records(_ path: String) throws -> String {
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        try #require(lines.count > 1, "the trace has records: \(lines)")
        #expect(lines[0].contains("\"event\":\"header\""))
        return lines.dropFirst().joined(separator: "\n")
    }

    /// A copy of `tag` (a name in hardware/tags/) as `stem`.json in `folder`: a reader of the test's own.
    static func reader(_ tag: String, _ stem: String, in folder: TestFolder) throws -> String {
        let path = folder.file("\(stem).json")
        try FileManager.default.copyItem(atPath: "\(tags)/\(tag).json", toPath: path)
        return "sim:tag:\(path)"
    }

    @Test("dump --redact: neither the --json object, the line on stderr nor the trace names the UID; the dump keeps it")
    func dump() async throws {
        let folder = try TestFolder("redact-dump")
        defer { folder.remove() }
        let device = try Self.reader("ntag215-uri", "redact-dump", in: folder)
        let trace = folder.file("t.jsonl")
        let json = await InProcessCLI.run(
            ["dump", "--device", device, "--redact", "--out", folder.file("a.json"), "--json", "--trace", trace])
        #expect(json.status == 0, "\(json.stderr)")
        let text = await InProcessCLI.run(
            ["dump", "--device", device, "--redact", "--out", folder.file("b.json"), "--no-trace"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(json.stdout.contains("\"uid\":\"redacted:7 bytes\""), "\(json.stdout)")
        #expect(json.stdout.contains("\"status\":\"dumped\""), "\(json.stdout)")
        #expect(text.stderr.contains("dumped ntag215 redacted:7 bytes to "), "\(text.stderr)")
        let records = try Self.records(trace)
        #expect(records.contains("\"uid\":\"redacted:7 bytes\""), "\(records)")
        Self.expectHidden(
            Self.ntag215UID,
            in: [
                ("--json", json.stdout + json.stderr), ("text", text.stdout + text.stderr), ("trace", records),
            ])
        // The dump itself is the user's data, as read.
        let dumped = try String(contentsOfFile: folder.file("a.json"), encoding: .utf8)
        #expect(dumped.contains(Self.ntag215UID))
    }

    @Test("poll --redact: the arrival's line and JSON say 'redacted:7 bytes' where the UID was; the trace too")
    func poll() async throws {
        let folder = try TestFolder("redact-poll")
        defer { folder.remove() }
        let device = try Self.reader("ntag215-uri", "redact-poll", in: folder)
        let trace = folder.file("t.jsonl")
        // --once waits 2 s by default: too short for a loaded test machine.
        let base = ["poll", "--device", device, "--once", "--timeout", "30s", "--redact"]
        let json = await InProcessCLI.run(base + ["--json", "--trace", trace])
        #expect(json.status == 0, "\(json.stderr)")
        let text = await InProcessCLI.run(base + ["--no-trace"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(json.stdout.contains("\"event\":\"arrived\""), "\(json.stdout)")
        #expect(json.stdout.contains("\"uid\":\"redacted:7 bytes\""), "\(json.stdout)")
        #expect(text.stdout.contains("ISO14443A UID redacted:7 bytes ATQA 0044 SAK 00 (Type 2)"), "\(text.stdout)")
        let records = try Self.records(trace)
        #expect(records.contains("\"uid\":\"redacted:7 bytes\""), "\(records)")
        Self.expectHidden(
            Self.ntag215UID,
            in: [("--json", json.stdout + json.stderr), ("text", text.stdout + text.stderr), ("trace", records)])
    }

    @Test(
        "apdu --redact: status words and headers stay; the NDEF bytes and the UID are in neither lines, JSON nor trace")
    func apdu() async throws {
        let folder = try TestFolder("redact-apdu")
        defer { folder.remove() }
        let device = try Self.reader("t4t-uri", "redact-apdu", in: folder)
        let trace = folder.file("t.jsonl")
        // SELECT the NDEF application, the NDEF file, READ BINARY its message.
        let apdus = ["00A4040007D276000085010100", "00A4000C02E104", "00B0000030"]
        let text = await InProcessCLI.run(["apdu", "--device", device, "--redact", "--trace", trace] + apdus)
        #expect(text.status == 0, "\(text.stderr)")
        let json = await InProcessCLI.run(["apdu", "--device", device, "--redact", "--json", "--no-trace"] + apdus)
        #expect(json.status == 0, "\(json.stderr)")
        #expect(text.stdout.contains("> 00 A4 04 00 07 redacted:7 bytes 00"), "\(text.stdout)")
        #expect(text.stdout.contains("> 00 B0 00 00 30"), "\(text.stdout)")
        #expect(text.stdout.contains("< redacted:48 bytes 90 00 : success"), "\(text.stdout)")
        #expect(json.stdout.contains("\"uid\":\"redacted:7 bytes\""), "\(json.stdout)")
        #expect(json.stdout.contains("\"sw\":\"9000\""), "\(json.stdout)")
        let records = try Self.records(trace)
        #expect(records.contains("\"response\":\"redacted:50 bytes\""), "\(records)")
        let outputs = [("--json", json.stdout + json.stderr), ("text", text.stdout + text.stderr), ("trace", records)]
        Self.expectHidden(Self.t4tUID, in: outputs)
        Self.expectHidden("6578616D706C65", in: outputs)  // "example", in the tag's URI
    }

    @Test("raw --redact: READ's data (the UID pages) is 'redacted:16 bytes' in the lines, the JSON and the trace")
    func raw() async throws {
        let folder = try TestFolder("redact-raw")
        defer { folder.remove() }
        let device = try Self.reader("ntag215-uri", "redact-raw", in: folder)
        let trace = folder.file("t.jsonl")
        let text = await InProcessCLI.run(["raw", "--device", device, "--redact", "--trace", trace, "3000", "3004"])
        #expect(text.status == 0, "\(text.stderr)")
        let json = await InProcessCLI.run(["raw", "--device", device, "--redact", "--json", "--no-trace", "3000"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(text.stdout.contains("> 30 00 [CRC_A 02 A8 added]    (READ)"), "\(text.stdout)")
        #expect(text.stdout.contains("< redacted:16 bytes"), "\(text.stdout)")
        #expect(json.stdout.contains("\"data\":\"redacted:16 bytes\""), "\(json.stdout)")
        let records = try Self.records(trace)
        Self.expectHidden(
            Self.ntag215UID,
            in: [("--json", json.stdout + json.stderr), ("text", text.stdout + text.stderr), ("trace", records)])
    }

    @Test("format and lock --redact: the tag line, the backup's name (no UID in it) and the trace keep the UID hidden")
    func formatAndLock() async throws {
        let folder = try TestFolder("redact-format")
        defer { folder.remove() }
        let device = try Self.reader("ntag215-uri", "redact-format", in: folder)
        let backups = folder.file("backups")
        try FileManager.default.createDirectory(atPath: backups, withIntermediateDirectories: false)
        var outputs: [(what: String, text: String)] = []
        for (name, argv) in [
            ("format", ["format"]), ("lock", ["lock", "--yes-i-understand-this-is-irreversible"]),
        ] {
            let trace = folder.file("\(name).jsonl")
            let base = argv + ["--device", device, "--redact", "--backup", backups]
            let json = await InProcessCLI.run(base + ["--json", "--trace", trace])
            #expect(json.status == 0, "\(name): \(json.stderr)")
            #expect(json.stdout.contains("\"tag\":\"UID redacted:7 bytes"), "\(name): \(json.stdout)")
            #expect(json.stdout.contains("\"status\":\"written\""), "\(name): \(json.stdout)")
            #expect(json.stdout.contains("\"backup\":\"\(backups)/nfcbench-backup-"), "\(name): \(json.stdout)")
            let records = try Self.records(trace)
            #expect(records.contains("\"event\":\"write_outcome\""), "\(name): \(records)")
            outputs += [("\(name) --json", json.stdout + json.stderr), ("\(name) trace", records)]
        }
        let text = await InProcessCLI.run(["format", "--device", device, "--redact", "--backup", backups, "--no-trace"])
        #expect(text.status == 0, "\(text.stdout) \(text.stderr)")
        #expect(text.stdout.contains("tag: UID redacted:7 bytes"), "\(text.stdout)")
        #expect(text.stdout.contains("backup of the old content: \(backups)/nfcbench-backup-"), "\(text.stdout)")
        outputs.append(("format text", text.stdout + text.stderr))
        Self.expectHidden(Self.ntag215UID, in: outputs)
        let names = try FileManager.default.contentsOfDirectory(atPath: backups)
        #expect(names.count == 3, "\(names)")
        Self.expectHidden(Self.ntag215UID, in: names.map { ("backup name", $0) })
    }

    @Test(
        "write and format --redact --dry-run: each planned WRITE shows its page and 'redacted:4 bytes', not the message's bytes"
    )
    func dryRun() async throws {
        let folder = try TestFolder("redact-dry-run")
        defer { folder.remove() }
        let device = try Self.reader("ntag215-uri", "redact-dry-run", in: folder)
        // "secret.example" as a URI record's bytes: 73 65 63 72 65 74 ("secret") must not show.
        let secret = Array("secret".utf8).map { String(format: "%02X", $0) }
        var outputs: [(what: String, text: String)] = []
        for argv in [["write", "--ndef", "uri:https://secret.example"], ["format"]] {
            for json in [false, true] {
                let r = await InProcessCLI.run(
                    argv + ["--device", device, "--redact", "--dry-run", "--no-trace"] + (json ? ["--json"] : []))
                let all = r.stdout + r.stderr
                #expect(r.status == 0, "\(argv) \(all)")
                #expect(all.contains("would send"), "\(argv): \(all)")
                #expect(all.contains("  page 4: redacted:4 bytes"), "\(argv): \(all)")
                #expect(all.contains("dry run: nothing written"), "\(argv): \(all)")
                outputs.append(("\(argv) --dry-run\(json ? " --json" : "")", all))
            }
        }
        Self.expectHidden(Self.ntag215UID, in: outputs)
        for (what, text) in outputs {
            // The URI's bytes in the lines as they were shown before (pages of four hex pairs).
            #expect(!text.contains("65 63 72 65") && !text.contains(secret.joined()), "\(what): \(text)")
        }
    }

    @Test(
        "restore --redact: the tag, the pages written and a refusal naming two UIDs are shown without either; trace too"
    )
    func restore() async throws {
        let folder = try TestFolder("redact-restore")
        defer { folder.remove() }
        let device = try Self.reader("ntag215-uri", "redact-restore", in: folder)
        let backups = folder.file("backups")
        try FileManager.default.createDirectory(atPath: backups, withIntermediateDirectories: false)
        // The tag's own file with page 6 changed ("xamq"): the restore has pages to write.
        let original = try String(contentsOfFile: "\(Self.tags)/ntag215-uri.json", encoding: .utf8)
        let changed = folder.file("changed.json")
        try original.replacingOccurrences(of: "\"78616D70\"", with: "\"78616D71\"")
            .write(toFile: changed, atomically: false, encoding: .utf8)
        let trace = folder.file("t.jsonl")
        let text = await InProcessCLI.run(
            ["restore", "--device", device, "--redact", "--backup", backups, "--trace", trace, changed])
        #expect(text.status == 0, "\(text.stdout) \(text.stderr)")
        #expect(text.stdout.contains("onto ntag215 UID redacted:7 bytes"), "\(text.stdout)")
        #expect(text.stdout.contains("  page 6: redacted:4 bytes (user data)"), "\(text.stdout)")
        #expect(text.stdout.contains("read back identical"), "\(text.stdout)")
        let json = await InProcessCLI.run(
            ["restore", "--device", device, "--redact", "--dry-run", "--json", "--no-trace", changed])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stdout.contains("\"tag\":\"ntag215 UID redacted:7 bytes\""), "\(json.stdout)")
        // A Type 4 file of another tag: refused, naming neither UID.
        let t4 = try Self.reader("t4t-uri", "redact-restore-t4", in: folder)
        let other = await InProcessCLI.run(
            ["restore", "--device", t4, "--redact", "--json", "--no-trace", "\(Self.tags)/t4t-v1-uri.json"])
        #expect(other.status == 1, "\(other.stdout) \(other.stderr)")
        #expect(other.stdout.contains("the file is of the tag with UID redacted:7 bytes"), "\(other.stdout)")
        let records = try Self.records(trace)
        #expect(records.contains("\"event\":\"restore_outcome\""), "\(records)")
        let outputs = [
            ("text", text.stdout + text.stderr), ("--json", json.stdout + json.stderr),
            ("refusal", other.stdout + other.stderr), ("trace", records),
        ]
        for uid in [Self.ntag215UID, Self.t4tUID, "04629A3B4C5D80"] { Self.expectHidden(uid, in: outputs) }
        Self.expectHidden("78616D71", in: outputs)  // the page written
        let names = try FileManager.default.contentsOfDirectory(atPath: backups)
        #expect(names.count == 1, "\(names)")
        Self.expectHidden(Self.ntag215UID, in: names.map { ("backup name", $0) })
    }

    @Test("session --redact (its own process: its lines come from the delegate's thread): lines, JSON and trace")
    func session() async throws {
        let folder = try TestFolder("redact-session")
        defer { folder.remove() }
        let device = try Self.reader("ntag215-uri", "redact-session", in: folder)
        let trace = folder.file("t.jsonl")
        let env = TestTraces.childEnvironment()
        let base = ["session", "--device", device, "--mode", "ndef", "--first-read", "--redact", "--verbose"]
        let text = try await NFCBench.run(base + ["--trace", trace], environment: env)
        #expect(text.status == 0, "\(text.stdout) \(text.stderr)")
        let json = try await NFCBench.run(base + ["--json", "--no-trace"], environment: env)
        #expect(json.status == 0, "\(json.stderr)")
        #expect(text.stdout.contains("UID redacted:7 bytes"), "\(text.stdout)")
        #expect(json.stdout.contains("\"uid\":\"redacted:7 bytes\""), "\(json.stdout)")
        let records = try Self.records(trace)
        let outputs = [("text", text.stdout + text.stderr), ("--json", json.stdout + json.stderr), ("trace", records)]
        Self.expectHidden(Self.ntag215UID, in: outputs)
        Self.expectHidden("6578616D706C65", in: outputs)  // "example", in the tag's URI
    }
}
