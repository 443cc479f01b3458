import Foundation
import NFCBenchTestSupport
import NFCFiles
import Testing

@testable import NFCTags

@Suite("Tag files and tag reports")
struct TagFileTests {
    static let tagsDirectory: String = TestPaths.tags.path

    func load(_ name: String) throws -> TagFile { try TagFile.load(path: Self.tagsDirectory + "/" + name) }

    @Test("ntag215-uri.json: valid UID pages, no warnings, the URI record read back by the procedure")
    func ntag215URI() throws {
        let report = TagReport(file: try load("ntag215-uri.json"))
        #expect(report.warnings.isEmpty)
        #expect(report.version?.product == .ntag215)
        let uri: [UInt8] = [0xD1, 0x01, 0x15, 0x55, 0x04] + Array("example.com/nfcbench".utf8)
        #expect(report.ndefMessageBytes == uri)
        #expect(report.maximumNDEFMessageSize == 492)
        #expect(report.layout?.tlvs.map(\.kind) == [.ndef, .terminator])
        #expect(report.ndefMessage?.descriptions.first?.uri == "https://example.com/nfcbench")
        #expect(report.text.contains("https://example.com/nfcbench"))
    }

    @Test("ntag213-text.json: Text record 'Hello, bench' (en) behind the factory Lock Control TLV; max 137")
    func ntag213Text() throws {
        let report = TagReport(file: try load("ntag213-text.json"))
        #expect(report.warnings.isEmpty)
        let text: [UInt8] = [0xD1, 0x01, 0x0F, 0x54, 0x02, 0x65, 0x6E] + Array("Hello, bench".utf8)
        #expect(report.ndefMessageBytes == text)
        #expect(report.maximumNDEFMessageSize == 137)
        #expect(report.ndefMessage?.descriptions.first?.text == "Hello, bench")
        #expect(report.ndefMessage?.descriptions.first?.language == "en")
    }

    @Test("ntag216-empty.json and ultralight-blank.json: empty messages; Ultralight has no GET_VERSION")
    func emptyTags() throws {
        let ntag = TagReport(file: try load("ntag216-empty.json"))
        #expect(ntag.ndefMessageBytes == [] && ntag.dataAreaSize == 872 && ntag.maximumNDEFMessageSize == 868)
        #expect(ntag.warnings.isEmpty)
        let ul = TagReport(file: try load("ultralight-blank.json"))
        #expect(ul.version == nil)
        #expect(ul.ndefMessageBytes == [] && ul.dataAreaSize == 48 && ul.maximumNDEFMessageSize == 46)
        #expect(ul.warnings.isEmpty)
    }

    @Test("ntag215-flaky.json: its fault schedule loads and a transport built from it loses the tag on command 4")
    func flaky() throws {
        let file = try load("ntag215-flaky.json")
        #expect(file.faults == [TagFault(.pageRead(8), kind: .tagLost)])
        var reader = Type2TagReader(transport: EmulatedType2Transport(core: try file.makeCore(), faults: file.faults))
        _ = try reader.identify()
        #expect(throws: Type2TagError(.communication(.tagLost))) { try reader.readNDEF() }
        #expect(TagReport(file: file).warnings.map(\.kind) == [.faultsScheduled])
    }

    @Test("Type 4 files: NLEN (2.0) and ENLEN (3.0) messages, sizes")
    func type4() throws {
        let v2 = try load("t4t-uri.json")
        #expect(v2.type4?.mappingVersion == "2.0" && v2.type4?.fileID == [0xE1, 0x04])
        let uri: [UInt8] = [0xD1, 0x01, 0x19, 0x55, 0x04] + Array("example.com/nfcbench/t4t".utf8)
        #expect(v2.type4?.ndefMessage == uri)
        #expect(v2.activation.supportsISODEP)
        let v3 = try load("t4t-v3-large.json")
        #expect(v3.type4?.lengthFieldSize == 4)
        let recordSize = 2 + 4 + 10 + 5000  // header, 4-byte payload length, "text/plain", payload
        #expect(v3.type4?.ndefMessage?.count == recordSize)
        #expect(TagReport(file: v3).maximumNDEFMessageSize == 0x20000 - 4)
    }

    @Test("save then parse gives the same tag, for every shipped file")
    func roundTrip() throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.tagsDirectory)
        where name.hasSuffix(".json") {
            let file = try load(name)
            let again = try TagFile.parse(file.jsonText())
            #expect(again == file, "\(name)")
        }
    }

    @Test("Errors name the field or the line")
    func errors() {
        let bad =
            #"{"format": "nfcbench-tag", "version": 1, "type": "ntag215", "uid": "04A23B915C6E80", "atqa": "44", "sak": "00", "pages": []}"#
        #expect(throws: TagFileError(.invalidValue, field: "atqa", "expected 2 bytes, got 1")) {
            try TagFile.parse(bad)
        }
        let noType = #"{"format": "nfcbench-tag", "version": 1, "type": "ntag999"}"#
        do {
            _ = try TagFile.parse(noType)
            Issue.record("parsed")
        } catch { #expect(error.field == "type") }
        let flipper =
            "Filetype: Flipper NFC device\nVersion: 2\nDevice type: NTAG215\nUID: 04 A2 3B 91 5C 6E 80\nATQA: 00 44\nSAK: 00\nPages total: 135\nPage 0: 04 A2 ZZ 15\n"
        do {
            _ = try TagFile.parse(flipper)
            Issue.record("parsed")
        } catch {
            #expect(error.line == 8 && error.field == "Page 0")
        }
        #expect(throws: TagFileError.self) { try TagFile.parse("hello") }
    }

    @Test("A Flipper ATQA written as a number (00 44) is turned to wire order 44 00; 44 03 stays")
    func flipperATQA() throws {
        var notes: [String] = []
        #expect(TagFile.wireOrderATQA([0x00, 0x44], notes: &notes) == [0x44, 0x00])
        #expect(notes.count == 1)
        #expect(TagFile.wireOrderATQA([0x44, 0x03], notes: &notes) == [0x44, 0x03])
        #expect(TagFile.wireOrderATQA([0x44, 0x00], notes: &notes) == [0x44, 0x00])
    }

    @Test("Reports warn about stale bytes after the Terminator, bad BCCs and AUTH0 over the NDEF pages")
    func warnings() throws {
        var file = try load("ntag215-uri.json")
        file.pages[20] = [0x68, 0x74, 0x74, 0x70]  // stale "http" after the Terminator
        file.pages[0][3] ^= 0xFF  // BCC0 broken
        let report = TagReport(file: file)
        #expect(Set(report.warnings.map(\.kind)) == [.staleBytesAfterTerminator, .bccMismatch])
        #expect(report.readError == nil)
        file.pages[0x83][3] = 0x06  // AUTH0 = 6
        file.pages[0x84][0] = 0x80  // PROT: read protected as well
        let protected = TagReport(file: file)
        // The reader is refused (NAK) before it reaches the Terminator: only the image shows AUTH0.
        #expect(Set(protected.warnings.map(\.kind)) == [.bccMismatch, .auth0ProtectsNDEF])
        #expect(protected.readError?.code == .communication(.nak(0)))
    }

    /// Issue 13 input 2: a Flipper v4 NTAG215 with `Pages total: 135`, `Pages read: 133`, pages
    /// 133–134 listed as 00 (PWD and PACK cannot be read).
    static func flipperPagesRead(pagesRead: Int = 133) -> String {
        var lines = [
            "Filetype: Flipper NFC device", "Version: 4", "Device type: NTAG/Ultralight", "UID: 04 A2 3B 91 5C 6E 80",
            "ATQA: 00 44", "SAK: 00", "Data format version: 2", "NTAG/Ultralight type: NTAG215",
            "Mifare version: 00 04 04 02 01 00 11 03", "Pages total: 135", "Pages read: \(pagesRead)",
        ]
        var pages = [[UInt8]](repeating: [0, 0, 0, 0], count: 135)
        pages[0] = [0x04, 0xA2, 0x3B, 0x88 ^ 0x04 ^ 0xA2 ^ 0x3B]
        pages[1] = [0x91, 0x5C, 0x6E, 0x80]
        pages[2] = [0x91 ^ 0x5C ^ 0x6E ^ 0x80, 0x48, 0x00, 0x00]
        pages[3] = [0xE1, 0x10, 0x3E, 0x00]
        pages[4] = [0x03, 0x00, 0xFE, 0x00]
        pages[130] = [0x00, 0x00, 0x00, 0xBD]
        pages[131] = [0x04, 0x00, 0x00, 0xFF]
        pages[132] = [0x00, 0x05, 0x00, 0x00]
        for (i, p) in pages.enumerated() { lines.append("Page \(i): " + p.hexString(separator: " ")) }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test(
        "Flipper 'Pages read' 133 of 135: pages 133-134 are unread, noted, reported, kept through JSON, never restored")
    func flipperPagesRead() throws {
        let file = try TagFile.parse(Self.flipperPagesRead())
        #expect(file.unreadPages == [133, 134])
        #expect(file.pages[133] == [0, 0, 0, 0] && file.pages[134] == [0, 0, 0, 0])
        #expect(
            file.notes.contains {
                $0.hasPrefix("pages 133-134 (2 of 135) not read by the Flipper (\"Pages read: 133\")")
            })
        let report = TagReport(file: file)
        let warning = try #require(report.warnings.first { $0.kind == .unreadPages })
        #expect(
            warning.message
                == "2 pages not read when the file was made (133-134; PWD (page 133), PACK (page 134), which no reader "
                + "can read): their bytes are unknown; emulation answers 00 00 00 00 for them, and a restore never writes them"
        )
        #expect(report.readError == nil && report.ndefMessageBytes == [])
        // Through our JSON and back: still unknown.
        let again = try TagFile.parse(file.jsonText())
        #expect(again.unreadPages == [133, 134])
        #expect(file.jsonText().contains("\"unread_pages\": [133, 134]"))
        // A restore writes pages 2-132 and nothing else.
        #expect(file.restorablePages.map(\.page) == Array(2...132))
        // Every page read: nothing unknown.
        #expect(try TagFile.parse(Self.flipperPagesRead(pagesRead: 135)).unreadPages.isEmpty)
        // Our JSON refuses unread pages outside the image.
        var json = file.jsonText()
        json = json.replacingOccurrences(of: "[133, 134]", with: "[135]")
        #expect(throws: TagFileError.self) { try TagFile.parse(json) }
    }
}
