import Foundation
import NFCTrace
import Testing

/// Issue 19: `tag show` (run in this process, ``InProcessCLI/run(_:environment:)``) on a mapping 1.0 Type 4 tag, a Type 2 tag
/// with control TLVs of the wrong length, a Smart Poster with bad optional records, and a
/// Type 4 file no device can present (`tag show` and `session --device sim:` both refuse it,
/// with the same error). Expected values are written by hand.
@Suite("nfcbench tag show and sim: on issue 19's inputs")
struct TagReadProceduresCLITests {
    static func array(_ v: JSONValue?) -> [JSONValue]? {
        if case .array(let a)? = v { return a }
        return nil
    }

    static func hex(_ s: String) -> [UInt8] {
        let digits = Array(s.filter { !$0.isWhitespace })
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }

    /// A temporary folder, removed by `cleanup()`.
    struct Folder {
        let url: URL
        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-i19-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
        func write(_ name: String, _ text: String) throws -> String {
            let path = url.appendingPathComponent(name).path
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        func cleanup() { try? FileManager.default.removeItem(at: url) }
    }

    /// A shipped Type 2 tag file with `data` from page 4 on (the rest of the user pages
    /// zeroed) and, when given, another CC.
    static func type2File(base: String, cc: String? = nil, data: [UInt8], userPages: Int) throws -> String {
        let url = NFCBench.packageRoot.appendingPathComponent("hardware/tags/\(base)")
        var o = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var pages = try #require(o["pages"] as? [String])
        if let cc { pages[3] = cc }
        for p in 4..<(4 + userPages) { pages[p] = "00000000" }
        for (i, chunk) in stride(from: 0, to: data.count, by: 4).enumerated() {
            let bytes =
                data[chunk..<min(chunk + 4, data.count)] + [UInt8](repeating: 0, count: max(0, chunk + 4 - data.count))
            pages[4 + i] = bytes.map { String(format: "%02X", $0) }.joined()
        }
        o["pages"] = pages
        return String(decoding: try JSONSerialization.data(withJSONObject: o), as: UTF8.self)
    }

    @Test("tag show --json on t4t-v1-uri: the 1.0 application name, CC version 1.0, the URI; exit 0")
    func mapping10() async throws {
        let r = await InProcessCLI.run(["tag", "show", "t4t-v1-uri", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let o = try JSONValue(parsing: r.stdout)
        #expect(o["ndef_application"]?.stringValue == "D2760000850100")
        #expect(o["cc"]?.stringValue == "000F1000FF00FF0406E10400800000")
        #expect(o["cc_version"]?.stringValue == "1.0")
        #expect(o["mapping_version"]?.stringValue == "1.0")
        #expect(o["max_ndef_bytes"]?.intValue == 126)
        let records = try #require(Self.array(o["records"]), "no records: \(r.stdout)")
        #expect(records.first?["uri"]?.stringValue == "https://example.com/nfcbench/t4t-v1")
    }

    @Test("tag show on the issue's Type 2 tag: exit 0, D0 00 00, two controlTLVLength warnings")
    func controlTLVs() async throws {
        let folder = try Folder()
        defer { folder.cleanup() }
        let text = try Self.type2File(
            base: "ultralight-blank.json", cc: "E1100200",
            data: Self.hex("01 04 FF FF FF FF 02 02 FF FF 03 03 D0 00 00 FE"), userPages: 12)
        let path = try folder.write("control-tlvs.json", text)
        let r = await InProcessCLI.run(["tag", "show", path, "--json"])
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        let o = try JSONValue(parsing: r.stdout)
        #expect(o["ndef"]?.stringValue == "D00000")
        #expect(o["read_error"] == nil)
        let warnings = try #require(Self.array(o["warnings"]), "no warnings: \(r.stdout)")
        #expect(
            warnings.compactMap { $0["kind"]?.stringValue } == [
                "controlTLVLength", "controlTLVLength", "ccSizeMismatch",
            ])
        let tlvs = try #require(Self.array(o["tlvs"]), "no tlvs")
        #expect(tlvs.compactMap { $0["address"]?.intValue } == [16, 22, 26, 31])
    }

    @Test("tag show --json on a Smart Poster with an empty t and act 03: every field, warnings on those records")
    func smartPoster() async throws {
        let folder = try Folder()
        defer { folder.cleanup() }
        // NDEF TLV 03 56 around the 86-byte poster of SmartPosterToleranceTests, then FE.
        let poster = Self.hex(
            "D1 02 51 53 70 91 01 0F 55 04 65 78 61 6D 70 6C 65 2E 63 6F 6D 2F 73 70"
                + " 11 01 09 54 02 65 6E 50 6F 73 74 65 72 11 01 0A 54 02 66 72 41 66 66 69 63 68 65"
                + " 11 03 01 61 63 74 03 11 01 04 73 00 00 04 00 11 01 00 74"
                + " 52 09 04 69 6D 61 67 65 2F 70 6E 67 89 50 4E 47")
        #expect(poster.count == 0x56)
        let text = try Self.type2File(
            base: "ntag215-uri.json", data: [0x03, 0x56] + poster + [0xFE], userPages: 126)
        let path = try folder.write("poster.json", text)
        let r = await InProcessCLI.run(["tag", "show", path, "--json"])
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        let o = try JSONValue(parsing: r.stdout)
        let sp = try #require(Self.array(o["records"])?.first, "no records: \(r.stdout)")
        #expect(sp["type"]?.stringValue == "Sp")
        #expect(sp["uri"]?.stringValue == "https://example.com/sp")
        #expect(sp["title"]?.stringValue == "Poster" && sp["lang"]?.stringValue == "en")
        let titles = try #require(Self.array(sp["titles"]), "no titles")
        #expect(titles.compactMap { $0["text"]?.stringValue } == ["Poster", "Affiche"])
        #expect(titles.compactMap { $0["lang"]?.stringValue } == ["en", "fr"])
        #expect(sp["action"]?.stringValue == "reserved" && sp["action_code"]?.intValue == 3)
        #expect(sp["size"]?.intValue == 1024)
        #expect(sp["mime_type"] == nil)
        let icons = try #require(Self.array(sp["icons"]), "no icons")
        let nested = try #require(Self.array(sp["records"]), "no nested records")
        #expect(icons.count == 1)
        #expect(icons.first?["mime_type"]?.stringValue == "image/png")
        #expect(icons.first?["length"]?.intValue == 4 && icons.first?["record"]?.intValue == 6)
        #expect(nested.count == 7)
        let warned = nested.indices.filter { nested[$0]["warnings"] != nil }
        #expect(warned == [3, 5])
        // The text report names them too.
        let plain = await InProcessCLI.run(["tag", "show", path])
        #expect(plain.stdout.contains("record 1: nfcWellKnown Sp: https://example.com/sp"))
        #expect(plain.stdout.contains("record 1.4: nfcWellKnown act: 03\n      warning: act value 0x03 is RFU"))
        #expect(
            plain.stdout.contains("record 1.6: nfcWellKnown t: (no payload)\n      warning: empty t record ignored"))
    }

    @Test("A mapping 3.0 file with a 64-byte NDEF file: tag show and session sim: exit 65 with the same error, no 201")
    func noDeviceCanPresent() async throws {
        let folder = try Folder()
        defer { folder.cleanup() }
        let tag = try folder.write(
            "t4t-v3-small.json",
            #"{"format":"nfcbench-tag","version":1,"type":"type4","uid":"04518A2B6C1F90","atqa":"4403","sak":"20","ndef_file":"00000003D00000","max_ndef_file_size":64,"mapping_version":"3.0"}"#
        )
        let scenario = try folder.write(
            "present-small.json",
            #"{"format":"nfcbench-scenario","version":1,"steps":[{"at_ms":100,"present":"t4t-v3-small","as":"A"}]}"#)
        let reason =
            "field max_ndef_file_size: Type 4 Tag: ccInvalid: max ENDEF file size 64 outside 0000FFFF…FFFFFFFE"

        let show = await InProcessCLI.run(["tag", "show", tag, "--json"])
        #expect(show.status == 65, "\(show.stdout)\n\(show.stderr)")
        let o = try JSONValue(parsing: show.stdout)
        #expect(o["emulation_error"]?.stringValue?.hasPrefix(reason) == true, "\(show.stdout)")
        #expect(o["ndef"] == nil)

        // The session refuses the tag before it opens a reader: in this process too, its trace left out.
        let session = await InProcessCLI.run(["session", "--device", "sim:\(scenario)", "--timeout", "5", "--no-trace"])
        #expect(session.status == 65, "\(session.stdout)\n\(session.stderr)")
        #expect(session.stderr.contains("tag 't4t-v3-small' can't be emulated: \(reason)"), "\(session.stderr)")
    }
}
