import Foundation
import NFCFiles
import Testing

@testable import NFCTags

private func h(_ s: String) -> [UInt8] { [UInt8](hex: s) ?? [] }

/// Lock and Memory Control TLVs whose length is not 3 (issue 19, item 2): T2T 1.0 fixes
/// L = 3 and says nothing of another L; the reader skips such a TLV by its own length, with a
/// warning, as nfcpy's `tt2.py` does, as long as it stays inside the data area.
@Suite("Type 2 control TLVs of the wrong length")
struct Type2ControlTLVTests {
    /// The issue's input: an Ultralight image with CC `E1 10 02 00` (16-byte data area) and
    /// data `01 04 FF FF FF FF 02 02 FF FF 03 03 D0 00 00 FE`.
    static func issueFile() throws -> TagFile {
        var file = try TagFile.load(path: TagFileTests.tagsDirectory + "/ultralight-blank.json")
        file.pages[3] = h("E1 10 02 00")
        let data = h("01 04 FF FF FF FF 02 02 FF FF 03 03 D0 00 00 FE")
        for p in 0..<4 { file.pages[4 + p] = Array(data[(p * 4)..<(p * 4 + 4)]) }
        return file
    }

    @Test("The issue's tag reads D0 00 00; both control TLVs are skipped by their length, with warnings")
    func issueInput() throws {
        let reader = Type2TagReader(transport: EmulatedType2Transport(core: try Self.issueFile().makeCore()))
        #expect(try reader.readNDEF() == h("D0 00 00"))
        let layout = try reader.readLayout()
        #expect(layout.tlvs.map(\.kind) == [.lockControl, .memoryControl, .ndef, .terminator])
        #expect(layout.tlvs.map(\.address) == [16, 22, 26, 31])
        #expect(layout.tlvs.map(\.length) == [4, 2, 3, 0])
        #expect(layout.reservedAreas.isEmpty && layout.dynamicLock == nil)
        #expect(layout.warnings.map(\.kind) == [.controlTLVLength, .controlTLVLength])
        #expect(layout.warnings.map(\.address) == [16, 22])
        #expect(layout.warnings.first?.message.contains("Lock Control TLV at page 4 byte 0 has length 4") == true)
        #expect(layout.warnings.last?.message.contains("Memory Control TLV at page 5 byte 2 has length 2") == true)
        // NDEF TLV at byte 26 of a data area ending at 32: 6 bytes for T, L and V.
        #expect(layout.maximumNDEFMessageSize == 4)
    }

    @Test("tag show's report: D0 00 00 read, two control-TLV warnings and the CC size warning; readable")
    func issueReport() throws {
        let report = TagReport(file: try Self.issueFile())
        #expect(report.readError == nil && report.isReadable)
        #expect(report.ndefMessageBytes == h("D0 00 00"))
        #expect(report.warnings.map(\.kind) == [.controlTLVLength, .controlTLVLength, .ccSizeMismatch])
    }

    @Test("A control TLV whose value runs past the data area is still tlvMalformed at its T byte")
    func pastTheEnd() throws {
        var file = try Self.issueFile()
        file.pages[4] = h("01 20 FF FF")  // 32 bytes declared, 14 left
        let reader = Type2TagReader(transport: EmulatedType2Transport(core: try file.makeCore()))
        #expect(throws: Type2TagError(.tlvMalformed(offset: 16))) { try reader.readNDEF() }
    }
}
