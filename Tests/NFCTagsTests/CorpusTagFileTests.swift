import Foundation
import NFCBenchTestSupport
import NFCFiles
import NFCTags
import Testing

/// `<package root>/Tests/Fixtures/corpus` (a copy of the public corpus, with its README): the support module's paths.
enum Corpus {
    static let directory: String = TestPaths.corpus.path

    static func path(_ name: String) -> String { directory + "/" + name }

    /// Present, or absent outside CI (then the suite is skipped); under `CI=true` the suite
    /// runs and fails on the missing file.
    static var availableOrCI: Bool { TestPaths.corpusRequired }
}

@Suite("Corpus tag files", .enabled(if: Corpus.availableOrCI, "corpus not found in Tests/Fixtures/corpus"))
struct CorpusTagFileTests {
    @Test("Flipper NTAG216 dump: header values, wire-order ATQA, 231 pages, CC 12 and the Lock Control TLV")
    func flipperLoads() throws {
        let file = try TagFile.load(path: Corpus.path("flipper_Google_ntag216.nfc"))
        // Values read by hand from the file.
        #expect(file.source == .flipper)
        #expect(file.type == .ntag216)
        #expect(file.activation.uid == [0x04, 0xB8, 0x31, 0x3A, 0x30, 0x73, 0x80])
        #expect(file.activation.atqa == [0x44, 0x00])
        #expect(file.activation.sak == 0x00)
        #expect(file.getVersion == [0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x13, 0x03])
        #expect(file.signature?.prefix(4) == [0x31, 0xB5, 0x99, 0x8B])
        #expect(file.pages.count == 231)
        #expect(file.pages[3] == [0xE1, 0x10, 0x12, 0x00])
        #expect(file.pages[4] == [0x01, 0x03, 0xA0, 0x0C])
        #expect(file.pages[227] == [0x04, 0x00, 0x00, 0xE2])
    }

    @Test("Flipper NTAG216 dump: one UID for every device, the pages' (its header's differs), with the warning")
    func flipperUIDIsThePages() throws {
        let file = try TagFile.load(path: Corpus.path("flipper_Google_ntag216.nfc"))
        let onTag: [UInt8] = [0x04, 0x39, 0x91, 0xC2, 0xFC, 0x67, 0x80]
        #expect(file.pagesUID == onTag)
        #expect(file.readerActivation.uid == onTag)
        #expect(file.readerActivation.atqa == file.activation.atqa && file.readerActivation.sak == file.activation.sak)
        #expect(try EmulatedTag(file: file).activation.uid == onTag, "sim: and the conformance reader")
        #expect(TagReport(file: file).uidOnTag == onTag, "tag show")
        #expect(file.uidMismatch?.hasSuffix("readers see the pages' UID") == true)
        var agreeing = file
        agreeing.activation = file.readerActivation
        #expect(agreeing.uidMismatch == nil)
    }

    @Test("Flipper NTAG216 report: UID and CC-size warnings, 144-byte area, Lock Control TLV, the URI message")
    func flipperReport() throws {
        let report = TagReport(file: try TagFile.load(path: Corpus.path("flipper_Google_ntag216.nfc")))
        let kinds = Set(report.warnings.map(\.kind))
        #expect(kinds.contains(.uidMismatch))
        #expect(kinds.contains(.ccSizeMismatch))
        #expect(!kinds.contains(.bccMismatch))
        #expect(report.uidOnTag == [0x04, 0x39, 0x91, 0xC2, 0xFC, 0x67, 0x80])
        #expect(report.version?.product == .ntag216)
        #expect(report.dataAreaSize == 144)
        #expect(report.maximumNDEFMessageSize == 144 - 5 - 2)
        let tlvs = report.layout?.tlvs ?? []
        #expect(tlvs.map(\.kind) == [.lockControl, .ndef, .terminator])
        #expect(
            tlvs.first?.area
                == Type2ReservedArea(
                    kind: .dynamicLockBits(bitCount: 12, bytesLockedPerBit: 8),
                    address: 160, size: 2))
        let expected: [UInt8] = [0xD1, 0x01, 0x15, 0x55, 0x00] + Array("https://google.com/?".utf8)
        #expect(report.ndefMessageBytes == expected)
        #expect(report.readError == nil)
    }

    @Test("Proxmark3 NTAG216 dump: empty NDEF message, 872-byte data area, 868-byte maximum message")
    func proxmark3() throws {
        let file = try TagFile.load(path: Corpus.path("pm3_ntag216-empty.json"))
        #expect(file.source == .proxmark3)
        #expect(file.type == .ntag216)
        #expect(file.activation.uid == [0x04, 0x58, 0x69, 0xD2, 0x9C, 0x39, 0x80])
        #expect(file.activation.atqa == [0x44, 0x00])  // not in the dump: assumed, and noted
        #expect(!file.notes.isEmpty)
        #expect(file.getVersion == [0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x13, 0x03])
        #expect(file.pages.count == 231)
        #expect(file.pages[3] == [0xE1, 0x10, 0x6D, 0x00])
        #expect(file.pages[4] == [0x03, 0x00, 0xFE, 0x00])
        let report = TagReport(file: file)
        #expect(report.ndefMessageBytes == [])
        // CC 6D: 8 × 0x6D = 872 bytes of data area; the NDEF TLV's T and 3-byte L leave 868.
        #expect(report.dataAreaSize == 872)
        #expect(report.maximumNDEFMessageSize == 868)
        #expect(report.warnings.isEmpty)
    }
}
