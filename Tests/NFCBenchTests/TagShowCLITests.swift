import Foundation
import NFCTrace
import ReaderSession
import Testing

/// `nfcbench tag show` on the corpus (real public dumps, Tests/Fixtures/corpus). Expected values were read
/// by hand from the files (corpus README and the bytes), not produced by our code. The command runs
/// in this process (``InProcessCLI/run(_:environment:)``: the same command, its output captured);
/// `readmePathFromElsewhere` runs the built binary, from another folder.
@Suite("nfcbench tag show")
struct TagShowCLITests {
    static let corpus = NFCBench.packageRoot.appendingPathComponent("Tests/Fixtures/corpus")

    /// A corpus file; fails when the corpus (part of the repository) is missing.
    func corpusFile(_ name: String) throws -> String {
        let path = Self.corpus.appendingPathComponent(name).path
        try #require(FileManager.default.fileExists(atPath: path), "the corpus is missing at \(Self.corpus.path)")
        return path
    }

    static func array(_ v: JSONValue?) -> [JSONValue]? {
        if case .array(let a)? = v { return a }
        return nil
    }

    @Test(
        "A tag file named as the README names it (hardware/tags/…) is found from any folder, not only the clone's root")
    func readmePathFromElsewhere() async throws {
        let r = try await ExternalTool.run(
            "/bin/sh", ["-c", #"cd / && exec "$0" tag show hardware/tags/ntag215-uri.json"#, NFCBench.binary.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("NTAG215"), "\(r.stdout)")
        let missing = try await ExternalTool.run(
            "/bin/sh", ["-c", #"cd / && exec "$0" tag show hardware/tags/no-such-tag.json"#, NFCBench.binary.path])
        #expect(missing.status == 66, "a missing file is still no input: \(missing.stderr)")
    }

    /// The shipped tag files that hold a UID and an NDEF message, with both in hex.
    static var shippedWithNDEF: [String] {
        let folder = NFCBench.packageRoot.appendingPathComponent("hardware/tags").path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().map { "\(folder)/\($0)" }
    }

    @Test("tag show --redact: no spelling of the UID, nor the NDEF message's bytes, in the text or the --json object")
    func redact() async throws {
        var checked = 0
        for path in Self.shippedWithNDEF {
            let plain = await InProcessCLI.run(["tag", "show", path, "--json"])
            let o = try JSONValue(parsing: plain.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            let uid = try #require(o["uid"]?.stringValue, "\(path): \(plain.stdout)")
            let ndef = o["ndef"]?.stringValue ?? ""
            let text = await InProcessCLI.run(["tag", "show", path, "--redact"])
            let json = await InProcessCLI.run(["tag", "show", path, "--redact", "--json"])
            #expect(text.status == plain.status && json.status == plain.status, "\(path): \(text.stderr)")
            #expect(text.stdout.contains("redacted:\(uid.count / 2) bytes"), "\(path): \(text.stdout)")
            let redacted = try JSONValue(parsing: json.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(redacted["uid"]?.stringValue == "redacted:\(uid.count / 2) bytes", "\(path): \(json.stdout)")
            RedactCommandsTests.expectHidden(uid, in: [("text", text.stdout), ("--json", json.stdout)])
            if ndef.count >= 8 {
                #expect(redacted["ndef"]?.stringValue == "redacted:\(ndef.count / 2) bytes", "\(path)")
                for out in [text.stdout, json.stdout] {
                    #expect(!out.replacingOccurrences(of: " ", with: "").contains(ndef), "\(path): \(out)")
                    for case .string(let u)? in Self.array(o["records"])?.map({ $0["uri"] }) ?? [] {
                        #expect(!out.contains(u), "\(path): the URI \(u) is shown")
                    }
                }
                checked += 1
            }
        }
        #expect(checked >= 10, "\(checked) tag files with a message")
    }

    @Test("Flipper Google NTAG216: the URI record and a warning that the header UID differs from pages 0-2")
    func flipperGoogle() async throws {
        let path = try corpusFile("flipper_Google_ntag216.nfc")
        let r = await InProcessCLI.run(["tag", "show", path, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let o = try JSONValue(parsing: r.stdout)
        let records = try #require(Self.array(o["records"]), "no records in \(r.stdout)")
        #expect(records.count == 1)
        #expect(records.first?["uri"]?.stringValue == "https://google.com/?")
        #expect(records.first?["type"]?.stringValue == "U")
        #expect(records.first?["tnf"]?.intValue == 1)
        // Pages 0-2: 04 39 91 (BCC0) C2 FC 67 80; the header says 04 B8 31 3A 30 73 80.
        #expect(o["uid"]?.stringValue == "043991C2FC6780")
        #expect(o["uid_header"]?.stringValue == "04B8313A307380")
        let warnings = try #require(Self.array(o["warnings"]), "no warnings")
        #expect(warnings.contains { $0["kind"]?.stringValue == "uidMismatch" })
        // CC E1 10 12 00: 0x12 × 8 = 144 bytes, though an NTAG216 ships with 0x6D.
        #expect(o["cc"]?.stringValue == "E1101200")
        #expect(o["data_area_bytes"]?.intValue == 144)
        #expect(warnings.contains { $0["kind"]?.stringValue == "ccSizeMismatch" })
    }

    @Test("Proxmark3 empty NTAG216: an empty NDEF message and the maximum NDEF size of 868 bytes")
    func proxmarkEmpty() async throws {
        let path = try corpusFile("pm3_ntag216-empty.json")
        let text = await InProcessCLI.run(["tag", "show", path])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("NDEF message: empty"))
        #expect(text.stdout.contains("Maximum NDEF message: 868 bytes"))
        let json = await InProcessCLI.run(["tag", "show", path, "--json"])
        let o = try JSONValue(parsing: json.stdout)
        #expect(o["ndef_empty"] == .bool(true))
        // CC E1 10 6D 00: data area 0x6D × 8 = 872; minus T and a 3-byte length = 868.
        #expect(o["max_ndef_bytes"]?.intValue == 868)
        #expect(o["product"]?.stringValue == "NTAG216")
        #expect(o["version"]?.stringValue == "0004040201001303")
    }

    @Test("A shipped tag file is found by name, from any working directory")
    func shippedByName() async throws {
        let r = await InProcessCLI.run(["tag", "show", "ntag215-uri", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let o = try JSONValue(parsing: r.stdout)
        #expect(o["product"]?.stringValue == "NTAG215")
        let records = try #require(Self.array(o["records"]), "no records")
        #expect(records.first?["uri"]?.stringValue?.hasPrefix("https://") == true)
    }

    @Test("A missing file is a no-input error (66); a missing argument is a usage error (64)")
    func errors() async throws {
        let missing = await InProcessCLI.run(["tag", "show", "no-such-tag-file"])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("no-such-tag-file"))
        #expect(InProcessCLI.mistake(["tag", "show"]) == "missing FILE")
    }

    @Test("A malformed tag file is a data error naming the problem")
    func malformed() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-tagshow-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let bad = dir.appendingPathComponent("bad.json")
        try Data(#"{"format":"nfcbench-tag","version":1,"type":"ntag215","uid":"04ZZ"}"#.utf8).write(to: bad)
        let r = await InProcessCLI.run(["tag", "show", bad.path])
        #expect(r.status == 65)
        #expect(r.stderr.contains("bad.json"))
    }
}
