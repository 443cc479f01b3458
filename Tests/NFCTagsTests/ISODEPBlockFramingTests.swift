import NFCTags
import Testing

@Suite("ISO/IEC 14443-4 block framing (§7.5), for devices that pass whole APDUs")
struct ISODEPBlockFramingTests {
    @Test("Block numbers start at 0 and alternate per exchange; the card answers with the number it got")
    func alternation() {
        var f = ISODEPBlockFraming(ats: [0x05, 0x78, 0x80, 0x70, 0x02], rats: [0xE0, 0x80])
        let a = f.exchange([0x00, 0xA4], [0x90, 0x00])
        let b = f.exchange([0x00, 0xB0], [0x90, 0x00])
        #expect(a.map(\.bytes) == [[0x02, 0x00, 0xA4], [0x02, 0x90, 0x00]])
        #expect(b.map(\.bytes) == [[0x03, 0x00, 0xB0], [0x03, 0x90, 0x00]])
    }

    @Test("A command longer than FSC − 3 is chained; the card acknowledges each link with R(ACK)")
    func commandChaining() {
        // ATS T0 = 0x70: FSCI 0, FSC 16 bytes: 13 INF bytes per block.
        var f = ISODEPBlockFraming(ats: [0x05, 0x70, 0x80, 0x70, 0x02], rats: [0xE0, 0x80])
        let command = [UInt8](repeating: 0x11, count: 20)
        let blocks = f.exchange(command, [0x90, 0x00])
        #expect(blocks.map(\.fromReader) == [true, false, true, false])
        #expect(blocks.map { $0.bytes[0] } == [0x12, 0xA2, 0x03, 0x03])
        #expect(blocks[0].bytes.count == 14)
        #expect(blocks[2].bytes.count == 8)
    }

    @Test("No answer: only the command's block, and the block number stays (rule B toggles on receipt only)")
    func silence() {
        var f = ISODEPBlockFraming()
        #expect(f.exchange([0x00, 0xA4], nil).count == 1)
        #expect(f.exchange([0x00, 0xA4], []).map(\.bytes) == [[0x02, 0x00, 0xA4]])
    }

    @Test("Anticollision cascade levels: CT 88 and BCC per level")
    func cascade() {
        let levels = ISO14443AActivation.cascadeLevels(uid: [0x04, 0x51, 0x8A, 0x2B, 0x6C, 0x1F, 0x90])
        #expect(levels.map(\.sel) == [0x93, 0x95])
        #expect(levels[0].anticollisionAnswer == [0x88, 0x04, 0x51, 0x8A, 0x57])
        #expect(levels[1].select == [0x95, 0x70, 0x2B, 0x6C, 0x1F, 0x90, 0xC8])
        #expect(ISO14443AActivation.cascadeLevels(uid: [1, 2, 3, 4]).map(\.bcc) == [1 ^ 2 ^ 3 ^ 4])
    }
}
