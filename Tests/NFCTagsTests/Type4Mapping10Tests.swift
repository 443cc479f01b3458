import Foundation
import NFCBenchTestSupport
import NFCFiles
import Testing

@testable import NFCTags

private func h(_ s: String) -> [UInt8] { [UInt8](hex: s) ?? [] }

/// NFC Forum Type 4 Tags of mapping 1.0 (issue 19, item 1): the emulation core answers as a
/// 1.0 tag does, and the reader falls back from the 2.0 application name to the 1.0 one as
/// T4T 2.0 §5.5 and Annex D say. The command sequences are written out by hand; nfcpy's
/// `tests/test_tag_tt4.py` sends the same 1.0 SELECT (`00a4040007d2760000850100`).
@Suite("Type 4 Tags of mapping 1.0")
struct Type4Mapping10Tests {
    /// `https://example.com/nfcbench/t4t-v1`: URI record, prefix 04, 27 bytes of URI field.
    static let uriMessage: [UInt8] = h("D1 01 1C 55 04") + Array("example.com/nfcbench/t4t-v1".utf8)

    static func shippedFile() throws -> TagFile {
        try TagFile.load(path: TagFileTests.tagsDirectory + "/t4t-v1-uri.json")
    }

    @Test("A 1.0 core answers only the 1.0 name, serves a 1.0 CC, and takes SELECT by id with P2 00")
    func coreAnswers() throws {
        var tag = try Type4NDEFApplication(ndefMessage: h("D0 00 00"), maximumFileSize: 64, mappingVersion: 0x10)
        #expect(tag.respond(to: h("00 A4 04 00 07 D2 76 00 00 85 01 01 00")) == h("6A 82"))
        #expect(!tag.isApplicationSelected)
        #expect(tag.respond(to: h("00 A4 04 00 07 D2 76 00 00 85 01 00")) == h("90 00"))
        #expect(tag.respond(to: h("00 A4 00 00 02 E1 03")) == h("90 00"))
        #expect(tag.respond(to: h("00 B0 00 00 0F")) == h("00 0F 10 00 FF 00 FF 04 06 E1 04 00 40 00 00 90 00"))
        #expect(tag.respond(to: h("00 A4 00 0C 02 E1 04")) == h("90 00"))
        #expect(tag.respond(to: h("00 B0 00 00 05")) == h("00 03 D0 00 00 90 00"))

        // A 2.0 tag knows only the 2.0 name and the 2.0 form of SELECT by id.
        var v2 = try Type4NDEFApplication(ndefMessage: [], maximumFileSize: 64)
        #expect(v2.respond(to: h("00 A4 04 00 07 D2 76 00 00 85 01 00")) == h("6A 82"))
        #expect(v2.respond(to: h("00 A4 04 00 07 D2 76 00 00 85 01 01 00")) == h("90 00"))
        #expect(v2.respond(to: h("00 A4 00 00 02 E1 03")) == h("6A 86"))
    }

    @Test("t4t-v1-uri.json is read through the 1.0 fallback: the exact APDUs and the URI")
    func readShippedFile() throws {
        let file = try Self.shippedFile()
        #expect(file.type4?.mappingVersion == "1.0" && file.type4?.lengthFieldSize == 2)
        let app = try #require(
            matched { if case .type4(let app) = try file.makeEmulationCore() { app } else { nil } }, "not a Type 4 core"
        )
        #expect(app.mappingVersion == 0x10 && app.applicationName == h("D2 76 00 00 85 01 00"))
        let link = LoopbackTransport(app)
        let reader = Type4TagReader(transport: link)
        let detection = try reader.detectApplication()
        #expect(detection.isVersion1Application)
        #expect(detection.capabilityContainer.bytes == h("00 0F 10 00 FF 00 FF 04 06 E1 04 00 80 00 00"))
        #expect(try reader.readNDEF(detection: detection) == Self.uriMessage)
        #expect(
            link.log == [
                h("00 A4 04 00 07 D2 76 00 00 85 01 01 00"),  // 2.0 name: 6A82
                h("00 A4 04 00 07 D2 76 00 00 85 01 00"),  // 1.0 name, no Le
                h("00 A4 00 00 02 E1 03"), h("00 B0 00 00 0F"),  // CC, 1.0 SELECT form
                h("00 A4 00 00 02 E1 04"), h("00 B0 00 00 02"), h("00 B0 00 02 20"),
            ])
    }

    @Test("tag show's report of t4t-v1-uri.json: 1.0 CC, the 1.0 name, the URI, no warning")
    func report() throws {
        let report = TagReport(file: try Self.shippedFile())
        #expect(report.isReadable && report.warnings.isEmpty && report.emulationError == nil)
        #expect(report.type4Detection?.applicationName == h("D2 76 00 00 85 01 00"))
        #expect(report.type4CapabilityContainer?.mappingVersion == 0x10)
        #expect(report.ndefMessageBytes == Self.uriMessage)
        #expect(report.ndefMessage?.descriptions.first?.uri == "https://example.com/nfcbench/t4t-v1")
        #expect(report.maximumNDEFMessageSize == 126)
        #expect(report.text.contains("application D2760000850100"))
    }

    @Test("A 1.0 tag is written with the 1.0 SELECT forms and reads back")
    func write() throws {
        let link = LoopbackTransport(
            try Type4NDEFApplication(ndefMessage: [], maximumFileSize: 64, mappingVersion: 0x10))
        let reader = Type4TagReader(transport: link)
        try reader.writeNDEF(h("D1 01 01 54 41"))
        #expect(link.tag.ndefMessage == h("D1 01 01 54 41"))
        #expect(link.log.filter { $0[1] == 0xA4 && $0[2] == 0x00 }.allSatisfy { $0[3] == 0x00 })
        #expect(try reader.readNDEF() == h("D1 01 01 54 41"))
    }

    @Test("Behind the 1.0 name a CC of mapping 2.0 is unsupportedVersion(0x20)")
    func v2CCBehindV1Name() throws {
        let cc = h("00 0F 20 00 FF 00 FF 04 06 E1 04 00 40 00 00")
        let link = LoopbackTransport(
            Type4NDEFApplication(
                rawCapabilityContainer: cc, ndefFileID: 0xE104, ndefFile: [0, 0] + [UInt8](repeating: 0, count: 62),
                mappingVersion: 0x10))
        let e = #expect(throws: Type4TagError.self) { try Type4TagReader(transport: link).detect() }
        #expect(e?.code == .unsupportedVersion(0x20))
    }

    @Test(
        "Behind the 2.0 name CC versions 10, 20 and 30 read (with the 2.0 forms); 00 and 40 do not",
        arguments: [("10", true), ("20", true), ("30", true), ("00", false), ("40", false)])
    func versionsBehindV2Name(version: String, reads: Bool) throws {
        // nfcpy's test_discover_ndef_version: the same CC bytes, the same outcomes.
        let cc = h("00 0F \(version) 00 3B 00 34 04 06 E1 04 00 40 00 00")
        let link = LoopbackTransport(
            Type4NDEFApplication(
                rawCapabilityContainer: cc, ndefFileID: 0xE104,
                ndefFile: h("00 03 D0 00 00") + [UInt8](repeating: 0, count: 59)))
        let reader = Type4TagReader(transport: link)
        if reads {
            #expect(try reader.readNDEF() == h("D0 00 00"))
            #expect(link.log.filter { $0[1] == 0xA4 && $0[2] == 0x00 }.allSatisfy { $0[3] == 0x0C })
        } else {
            let e = #expect(throws: Type4TagError.self) { try reader.readNDEF() }
            #expect(e?.code == .unsupportedVersion(h(version)[0]))
        }
    }

    @Test("When neither name answers, applicationNotFound names both status words")
    func neitherName() throws {
        let link = LoopbackTransport(try Type4NDEFApplication(ndefMessage: []))
        link.override = { _ in h("6A 82") }
        let e = #expect(throws: Type4TagError.self) { try Type4TagReader(transport: link).detect() }
        #expect(e?.code == .applicationNotFound)
        #expect(e?.reason.contains("2.0 name") == true && e?.reason.contains("1.0 name") == true)
        #expect(link.log == [h("00 A4 04 00 07 D2 76 00 00 85 01 01 00"), h("00 A4 04 00 07 D2 76 00 00 85 01 00")])
    }

    @Test("A 1.0 tag file saves and loads as mapping 1.0; other versions are refused by name")
    func tagFileField() throws {
        let file = try Self.shippedFile()
        #expect(try TagFile.parse(file.jsonText()) == file)
        let bad = file.jsonText().replacingOccurrences(of: "\"1.0\"", with: "\"4.0\"")
        #expect(throws: TagFileError.self) { try TagFile.parse(bad) }
        do { _ = try TagFile.parse(bad) } catch { #expect(error.field == "mapping_version") }
    }
}
