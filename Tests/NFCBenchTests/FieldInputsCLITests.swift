import Foundation
import NFCTrace
import Testing

/// Tag files made for one test: an NTAG215 (UID 04 A2 3B 91 5C 6E 80, as `ntag215-uri.json`)
/// whose data area holds `data` from page 4, written 0600 into a fresh folder.
enum FieldInputs {
    static func ntag215(data: [UInt8]) throws -> String {
        let template = NFCBench.packageRoot.appendingPathComponent("hardware/tags/ntag215-uri.json")
        var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: template)) as? [String: Any])
        var pages = try #require(json["pages"] as? [String])
        var bytes = data
        while bytes.count % 4 != 0 { bytes.append(0) }
        for p in 4..<130 { pages[p] = "00000000" }
        for (i, start) in stride(from: 0, to: bytes.count, by: 4).enumerated() {
            pages[4 + i] = bytes[start..<start + 4].map { String(format: "%02X", $0) }.joined()
        }
        json["pages"] = pages
        json["comment"] = "made by a test"
        return try write(JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted]), name: "tag.json")
    }

    /// `text` into a fresh 0700 folder as `name` (0600); the folder is removed at exit of the test process.
    static func write(_ data: Data, name: String) throws -> String {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("nfcbench-field-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(
            at: dir, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let path = dir.appendingPathComponent(name).path
        guard FileManager.default.createFile(atPath: path, contents: data, attributes: [.posixPermissions: 0o600])
        else {
            throw CocoaError(.fileWriteUnknown)
        }
        return path
    }

    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }

    static func array(_ v: JSONValue?) -> [JSONValue]? {
        if case .array(let a)? = v { return a }
        return nil
    }

    /// The first element of a JSON array.
    static func first(_ v: JSONValue?) -> JSONValue? {
        if case .array(let a)? = v { return a.first }
        return nil
    }

    /// An NDEF TLV around `message`, then the Terminator.
    static func tlv(_ message: [UInt8]) -> [UInt8] { [0x03, UInt8(message.count)] + message + [0xFE] }

    /// Every warning and error string in a `tag show --json` object, nested records included.
    static func messages(in o: JSONValue) -> [String] {
        var out: [String] = []
        for key in ["ndef_error", "read_error"] { if let s = o[key]?.stringValue { out.append(s) } }
        if case .array(let ws)? = o["warnings"] {
            out += ws.compactMap { $0["message"]?.stringValue ?? $0.stringValue }
        }
        if case .array(let ns)? = o["notes"] { out += ns.compactMap(\.stringValue) }
        if case .array(let rs)? = o["records"] { out += rs.flatMap { messages(in: $0) } }
        return out
    }
}

@Suite("Faults from the field, round 2: the inputs of issue 13, through the built binary", .serialized)
struct FieldInputsCLITests {
    /// Input 1: NTAG215 data `03 21 D2 19 05` + "text/plain; charset=utf-8" + "hello" + `FE`.
    static let mimeWithParameters: [UInt8] =
        [0x03, 0x21, 0xD2, 0x19, 0x05] + Array("text/plain; charset=utf-8".utf8) + Array("hello".utf8) + [0xFE]

    @Test("1. A media type with parameters: tag show reads the record with no warning, the text decoded")
    func mimeWithParametersTagShow() async throws {
        let path = try FieldInputs.ntag215(data: Self.mimeWithParameters)
        defer { FieldInputs.remove(path) }
        let json = await InProcessCLI.run(["tag", "show", "--json", path])
        #expect(json.status == 0, "\(json.stderr)")
        let o = try JSONValue(parsing: json.stdout)
        #expect(FieldInputs.messages(in: o).isEmpty, "\(json.stdout)")
        let record = FieldInputs.first(o["records"])
        #expect(record?["mime_type"]?.stringValue == "text/plain; charset=utf-8")
        #expect(record?["payload"]?.stringValue == "68656C6C6F")
        let text = await InProcessCLI.run(["tag", "show", path])
        #expect(
            text.stdout.contains("record 1: media text/plain; charset=utf-8 (5 bytes, text):\n    hello"),
            "\(text.stdout)")
        #expect(!text.stdout.contains("invalid"), "\(text.stdout)")
    }

    @Test("1. write --ndef 'mime:text/plain; charset=utf-8:hi' sends exactly that record (dry run)")
    func mimeWithParametersWrite() async throws {
        let fake = try VirtualPN532Process(tag: "\(VirtualPN532Process.tags)/ntag215-uri.json")
        let r = try await NFCBench.run(
            ["write", "--device", fake.device, "--ndef", "mime:text/plain; charset=utf-8:hi", "--dry-run"],
            timeout: .seconds(30))
        _ = try await fake.stop()
        #expect(r.status == 0, "\(r.stderr)")
        // TLV 03 1E, record D2 19 02, "text/plain; charset=utf-8", "hi".
        #expect(r.stdout.contains("page 4: 03 1E D2 19"), "\(r.stdout)")
        #expect(r.stdout.contains("page 5: 02 74 65 78"), "\(r.stdout)")
    }

    @Test("1. A session over the virtual PN532 reads the record with its media type and no warning")
    func mimeWithParametersSession() async throws {
        let path = try FieldInputs.ntag215(data: Self.mimeWithParameters)
        defer { FieldInputs.remove(path) }
        let fake = try VirtualPN532Process(tag: path)
        let r = try await NFCBench.run(
            ["session", "--device", fake.device, "--first-read", "--json"], timeout: .seconds(30))
        _ = try await fake.stop()
        let detected = r.stdoutLines.compactMap { try? JSONValue(parsing: $0) }.first {
            $0["event"]?.stringValue == "didDetectNDEFs"
        }
        let record = FieldInputs.first(FieldInputs.first(detected?["messages"])?["records"])
        #expect(record?["mime_type"]?.stringValue == "text/plain; charset=utf-8", "\(r.stdout)")
        #expect(record?["warnings"] == nil, "\(r.stdout)")
    }

    /// Input 6: each message's JSON explains it; the text report must say the same.
    static let textHidesJSON: [(String, [UInt8])] = [
        // A Smart Poster whose inner URI and Text records both carry MB and ME.
        (
            "Smart Poster, inner records all MB/ME",
            [0xD1, 0x02, 0x19, 0x53, 0x70]
                + [0xD1, 0x01, 0x0C, 0x55, 0x04] + Array("example.com".utf8)
                + [0xD1, 0x01, 0x05, 0x54, 0x02, 0x65, 0x6E, 0x48, 0x69]
        ),
        // A Text record whose status byte says a 5-byte language code; the payload has 2 bytes after it.
        ("Text, language length past the payload", [0xD1, 0x01, 0x03, 0x54, 0x05, 0x65, 0x6E]),
        // A UTF-16 Text record (status 82: UTF-16, "en") with 3 text bytes.
        ("Text, odd UTF-16 byte count", [0xD1, 0x01, 0x06, 0x54, 0x82, 0x65, 0x6E, 0x00, 0x48, 0x00]),
    ]

    @Test("6. Every warning and error of the JSON report is in the text report", arguments: 0..<3)
    func textSaysWhatJSONSays(index: Int) async throws {
        let (name, message) = Self.textHidesJSON[index]
        let path = try FieldInputs.ntag215(data: FieldInputs.tlv(message))
        defer { FieldInputs.remove(path) }
        let json = await InProcessCLI.run(["tag", "show", "--json", path])
        let text = await InProcessCLI.run(["tag", "show", path])
        let said = FieldInputs.messages(in: try JSONValue(parsing: json.stdout))
        #expect(!said.isEmpty, "\(name): the JSON explains it: \(json.stdout)")
        for m in said { #expect(text.stdout.contains(m), "\(name): text lacks \"\(m)\":\n\(text.stdout)") }
    }

    @Test("6. A session's text output shows a record's warnings too (Smart Poster with MB/ME inside)")
    func sessionTextShowsWarnings() async throws {
        let path = try FieldInputs.ntag215(data: FieldInputs.tlv(Self.textHidesJSON[0].1))
        defer { FieldInputs.remove(path) }
        let fake = try VirtualPN532Process(tag: path)
        let r = try await NFCBench.run(["session", "--device", fake.device, "--first-read"], timeout: .seconds(30))
        _ = try await fake.stop()
        #expect(r.stdout.contains("warning: invalid body:"), "\(r.stdout)")
        #expect(r.stdout.contains("after the record with the ME flag"), "\(r.stdout)")
    }

    @Test("6. A long text/plain payload prints decoded and wrapped; a long binary one as hex, 16 bytes a line")
    func longPayloads() async throws {
        let sentence = String(repeating: "nfcbench wraps long text payloads. ", count: 4)  // 140 bytes
        // Two records: MB on the first (92), ME on the second (52).
        let text: [UInt8] = [0x92, 0x0A, UInt8(sentence.utf8.count)] + Array("text/plain".utf8) + Array(sentence.utf8)
        let binary: [UInt8] = [0x52, 0x18, 40] + Array("application/octet-stream".utf8) + Array(0..<40)
        let path = try FieldInputs.ntag215(data: FieldInputs.tlv(text + binary))
        defer { FieldInputs.remove(path) }
        let r = await InProcessCLI.run(["tag", "show", path])
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("  record 1: media text/plain (140 bytes, text):"), "\(r.stdout)")
        let first = try #require(lines.firstIndex(of: "  record 1: media text/plain (140 bytes, text):"))
        let body = Array(lines[(first + 1)...].prefix { $0.hasPrefix("    ") })
        #expect(body.count == 2 && body.allSatisfy { $0.count <= 100 }, "\(r.stdout)")
        #expect(body.map { $0.dropFirst(4) }.joined(separator: " ") == sentence, "\(r.stdout)")
        #expect(lines.contains("NDEF message (220 bytes):"), "\(r.stdout)")
        #expect(lines.contains("  record 2: media application/octet-stream (40 bytes):"), "\(r.stdout)")
        #expect(lines.contains("    00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F"), "\(r.stdout)")
        #expect(lines.contains("    20 21 22 23 24 25 26 27"), "\(r.stdout)")
    }
}

extension FieldInputsCLITests {
    @Test("2. Flipper 'Pages read: 133' of 135: tag show warns which pages are unknown; emulation answers them 00")
    func flipperPagesRead() async throws {
        var lines = [
            "Filetype: Flipper NFC device", "Version: 4", "Device type: NTAG/Ultralight", "UID: 04 A2 3B 91 5C 6E 80",
            "ATQA: 00 44", "SAK: 00", "Data format version: 2", "NTAG/Ultralight type: NTAG215",
            "Mifare version: 00 04 04 02 01 00 11 03", "Pages total: 135", "Pages read: 133",
        ]
        var pages = [String](repeating: "00 00 00 00", count: 135)
        pages[0] = "04 A2 3B 15"  // BCC0 = 88 ^ 04 ^ A2 ^ 3B
        pages[1] = "91 5C 6E 80"
        pages[2] = "3F 48 00 00"  // BCC1 = 91 ^ 5C ^ 6E ^ 80
        pages[3] = "E1 10 3E 00"
        pages[4] = "03 00 FE 00"
        pages[130] = "00 00 00 BD"
        pages[131] = "04 00 00 FF"
        pages[132] = "00 05 00 00"
        for (i, p) in pages.enumerated() { lines.append("Page \(i): \(p)") }
        let path = try FieldInputs.write(Data((lines.joined(separator: "\n") + "\n").utf8), name: "ntag215.nfc")
        defer { FieldInputs.remove(path) }
        let r = await InProcessCLI.run(["tag", "show", "--json", path])
        #expect(r.status == 0, "\(r.stderr)")
        let o = try JSONValue(parsing: r.stdout)
        let warnings = try #require(FieldInputs.array(o["warnings"]), "no warnings: \(r.stdout)")
        let unread = warnings.first { $0["kind"]?.stringValue == "unreadPages" }
        #expect(unread?["message"]?.stringValue?.contains("133-134; PWD (page 133), PACK (page 134)") == true)
        let text = await InProcessCLI.run(["tag", "show", path])
        #expect(text.stdout.contains("warning: 2 pages not read when the file was made (133-134;"), "\(text.stdout)")
        // What a reader gets on the virtual PN532: pages 132-134 as READ answers them.
        let fake = try VirtualPN532Process(tag: path)
        let dump = try await NFCBench.run(["dump", "--device", fake.device], timeout: .seconds(30))
        _ = try await fake.stop()
        let read = VirtualPN532Process.pages(dump.stdout)
        #expect(read.count == 135 && read[133] == "00000000" && read[134] == "00000000", "\(dump.stdout)")
    }
}

extension FieldInputsCLITests {
    @Test("7. write --help shows the one text: syntax; text:OK: done is the text \"OK: done\" in English (dry run)")
    func textSyntax() async throws {
        let help = try #require(InProcessCLI.text(["write", "--help"]))
        #expect(help.contains("text@de:Hallo") && help.contains("(text:OK: done)"), "\(help)")
        let fake = try VirtualPN532Process(tag: "\(VirtualPN532Process.tags)/ntag215-uri.json")
        let r = try await NFCBench.run(
            ["write", "--device", fake.device, "--ndef", "text:OK: done", "--dry-run"], timeout: .seconds(30))
        _ = try await fake.stop()
        #expect(r.status == 0, "\(r.stderr)")
        // TLV 03 0F, D1 01 0B 54, status 02 "en", then "OK: done".
        #expect(r.stdout.contains("page 4: 03 0F D1 01"), "\(r.stdout)")
        #expect(r.stdout.contains("page 5: 0B 54 02 65"), "\(r.stdout)")
        #expect(r.stdout.contains("page 6: 6E 4F 4B 3A"), "\(r.stdout)")
    }

    @Test("8. 430 bytes to a 256-byte Type 4 file: refused, nothing sent, and the message says exactly that")
    func oversizeType4Write() async throws {
        // One 430-byte Text record: C1 (MB ME, not short, TNF 1), type length 01, payload length
        // 00 00 01 A7 (423), type T, payload 02 "en" + 420 × "A".
        let payload: [UInt8] = [0x02, 0x65, 0x6E] + [UInt8](repeating: 0x41, count: 420)
        let message: [UInt8] = [0xC1, 0x01, 0x00, 0x00, 0x01, 0xA7, 0x54] + payload
        #expect(message.count == 430)
        let path = try FieldInputs.write(Data(message), name: "big.ndef")
        defer { FieldInputs.remove(path) }
        let backup = (path as NSString).deletingLastPathComponent + "/backup.json"
        let fake = try VirtualPN532Process(tag: "\(VirtualPN532Process.tags)/t4t-uri.json")
        let r = try await NFCBench.run(
            ["write", "--device", fake.device, "--ndef", "@\(path)", "--backup", backup], timeout: .seconds(30))
        let after = try await fake.stop()
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("no UPDATE BINARY was sent, the tag is unchanged"), "\(r.stderr)")
        #expect(!r.stderr.contains("NLEN was set to 0"), "\(r.stderr)")
        #expect(
            after.contains("\"ndef_file\": \"001DD1011955046578616D706C652E636F6D2F6E666362656E63682F743474"),
            "\(after)")
    }
}

extension FieldInputsCLITests {
    /// A Proxmark3 trace file of `frames` (timestamp 1000 × index, duration 100, parity zero).
    static func traceFile(_ frames: [(fromTag: Bool, hex: String)]) throws -> String {
        var bytes: [UInt8] = []
        for (i, f) in frames.enumerated() {
            let b = try #require([UInt8](hex: f.hex))
            let ts = UInt32(1000 * i)
            let len = UInt16(b.count) | (f.fromTag ? 0x8000 : 0)
            bytes += [UInt8(ts & 0xFF), UInt8(ts >> 8 & 0xFF), UInt8(ts >> 16 & 0xFF), UInt8(ts >> 24), 100, 0]
            bytes += [UInt8(len & 0xFF), UInt8(len >> 8)] + b + [UInt8](repeating: 0, count: (b.count + 7) / 8)
        }
        return try FieldInputs.write(Data(bytes), name: "capture.trace")
    }

    @Test("4. profile import of a WUPB + ATQB trace says ISO14443B; a trace of nothing known is refused (65)")
    func importTypeB() async throws {
        let path = try Self.traceFile([(false, "05 00 08 39 73"), (true, "50 12 34 56 78 00 00 00 00 00 71 85 EE 14")])
        defer { FieldInputs.remove(path) }
        let r = await InProcessCLI.run(["profile", "import", path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("\"technology\": \"ISO14443B\""), "\(r.stdout)")
        let junk = try Self.traceFile([(false, "01 02 03"), (true, "04")])
        defer { FieldInputs.remove(junk) }
        let refused = await InProcessCLI.run(["profile", "import", junk])
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("no ISO/IEC 14443 A or B or FeliCa frame recognised"), "\(refused.stderr)")
    }

    @Test("5. profile import keeps a native answer raw, with no expect_sw, and warns")
    func importNativeAnswer() async throws {
        let path = try Self.traceFile([
            (false, "E0 80 31 73"), (true, "06 75 77 81 02 80 02 F0"),
            (false, "02 5A 00 00 01 EF 0E"), (true, "02 00 10 2D"),
        ])
        defer { FieldInputs.remove(path) }
        let r = await InProcessCLI.run(["profile", "import", path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stdout.contains("\"expect_sw\":"), "\(r.stdout)")
        #expect(!r.stdout.contains("got no answer"), "\(r.stdout)")
        #expect(r.stdout.contains("the card answered 00 (1 byte(s)), not an ISO 7816-4 response"), "\(r.stdout)")
        #expect(r.stderr.contains("1 answer(s) are not ISO 7816-4 responses"), "\(r.stderr)")
    }
}
