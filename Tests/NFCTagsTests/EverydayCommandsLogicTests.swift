import Foundation
import NFCTags
import Testing

/// The pure parts of `apdu`, `raw` and `restore` (issue 33): the scriptor-shaped script, the
/// 61 xx / 6C xx rules, which commands need --allow-write, and the restore plan's pages and order.
@Suite("apdu, raw and restore: the pure logic")
struct EverydayCommandsLogicTests {
    @Test("A scriptor script: one APDU a line, # comments, blank lines; reset; a bad line named")
    func script() throws {
        let steps = try APDUScript.parse(
            """
            # select
            00 A4 04 00 07 D2 76 00 00 85 01 01 00   # NDEF application

            00b000000f
            reset
            """)
        #expect(
            steps == [
                .apdu([UInt8](hex: "00A4040007D276000085010100")!, line: 2),
                .apdu([0x00, 0xB0, 0x00, 0x00, 0x0F], line: 4), .reset(line: 5),
            ])
        #expect(throws: APDUScriptError(line: 2, "'zz' is not hex bytes (two digits a byte, spaces allowed)")) {
            try APDUScript.parse("00 A4 04 00\nzz")
        }
        do {
            _ = try APDUScript.parse("00 A4 04 00 07 D2")
            Issue.record("an APDU whose Lc does not add up was taken")
        } catch {
            #expect(error.line == 1 && error.reason.contains("is no command APDU"), "\(error)")
        }
    }

    @Test("61 xx is answered with GET RESPONSE until the card has no more; 6C xx with Le = xx, once")
    func lengthHints() throws {
        var sent: [[UInt8]] = []
        let e = try APDUExchange.run([0x00, 0xB0, 0x00, 0x00, 0x00]) { c in
            sent.append(c)
            switch sent.count {
            case 1: return [0x6C, 0x04]
            case 2: return [0x01, 0x02, 0x61, 0x02]
            case 3: return [0x03, 0x04, 0x61, 0x01]
            default: return [0x05, 0x90, 0x00]
            }
        }
        #expect(
            sent == [
                [0x00, 0xB0, 0x00, 0x00, 0x00], [0x00, 0xB0, 0x00, 0x00, 0x04], [0x00, 0xC0, 0x00, 0x00, 0x02],
                [0x00, 0xC0, 0x00, 0x00, 0x01],
            ])
        #expect(e.response == [0x01, 0x02, 0x03, 0x04, 0x05, 0x90, 0x00])
        #expect(e.statusWord == .success)
        #expect(
            e.steps.map(\.reason) == [
                nil, "again with Le = 04 (6C 04)", "GET RESPONSE (61 02)", "GET RESPONSE (61 01)",
            ])
        // The logical channel of the command goes with its GET RESPONSE.
        var channel: [[UInt8]] = []
        _ = try APDUExchange.run([0x01, 0xCA, 0x00, 0x6E, 0x00]) { c in
            channel.append(c)
            return channel.count == 1 ? [0x61, 0x10] : [0x90, 0x00]
        }
        #expect(channel.last == [0x01, 0xC0, 0x00, 0x00, 0x10])
        // A second 6C is the answer, not another retry.
        var twice = 0
        let again = try APDUExchange.run([0x00, 0xB0, 0x00, 0x00, 0x10]) { _ in
            twice += 1
            return [0x6C, 0x08]
        }
        #expect(twice == 2 && again.statusWord == StatusWord.wrongLe(0x08))
    }

    @Test("Commands that can change a tag need leave; reads do not")
    func writesNeedLeave() {
        for w in ["00D6000001FF", "00D0000001FF", "000E000000", "00E2000001FF", "00DA000001FF", "FFD6000404FFFFFFFF"] {
            #expect(APDUScript.changesCard([UInt8](hex: w)!) != nil, "\(w)")
        }
        #expect(APDUScript.changesCard([UInt8](hex: "FFC20001059503A20400")!)?.contains("transparent") == true)
        for r in ["00A4040007D276000085010100", "00B0000000", "FFCA000000", "FFB0000410", "00C0000010"] {
            #expect(APDUScript.changesCard([UInt8](hex: r)!) == nil, "\(r)")
        }
        for w in ["A20400000000", "A004", "A900", "AC00", "A50201000000", "1BFFFFFFFF"] {
            #expect(Type2RawFrame.changesTag([UInt8](hex: w)!) != nil, "\(w)")
        }
        for r in ["3004", "60", "3A0010", "3C00", "3902", "1A00"] {
            #expect(Type2RawFrame.changesTag([UInt8](hex: r)!) == nil, "\(r)")
        }
        #expect(Type2RawFrame.describe(.nak(0)) == "NAK 0 (invalid argument (an invalid page address))")
        #expect(
            Type2RawFrame.describe(.data([0x01])).hasSuffix("[CRC \(iso14443CRCA([0x01]).hexString(separator: " "))]"))
    }

    /// An NTAG213 image: UID, lock 00 00, CC E1 10 12 00, the TLV stream at page 4.
    static func ntag213(uid: [UInt8] = [0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66], tlv: [UInt8]) -> TagFile {
        var pages = [[UInt8]](repeating: [0, 0, 0, 0], count: 45)
        pages[0] = Array(uid[0..<3]) + [0x88 ^ uid[0] ^ uid[1] ^ uid[2]]
        pages[1] = Array(uid[3..<7])
        pages[2] = [uid[3] ^ uid[4] ^ uid[5] ^ uid[6], 0x48, 0x00, 0x00]
        pages[3] = [0xE1, 0x10, 0x12, 0x00]
        let padded = tlv + [UInt8](repeating: 0, count: (4 - tlv.count % 4) % 4)
        for i in stride(from: 0, to: padded.count, by: 4) { pages[4 + i / 4] = Array(padded[i..<(i + 4)]) }
        pages[0x29] = [0x04, 0x00, 0x00, 0xFF]  // CFG0: AUTH0 FF
        pages[0x2A] = [0x00, 0x05, 0x00, 0x00]  // CFG1
        return TagFile(
            type: .ntag213,
            activation: try! ISO14443AActivation(uid: uid, atqa: [0x44, 0x00], sak: 0x00, ats: nil), pages: pages)
    }

    @Test(
        "restore: only differing pages; NDEF length 0 first and the real length last; locks, CC and config left unless asked"
    )
    func restoreOrder() throws {
        let message: [UInt8] = [0xD1, 0x01, 0x04, 0x54, 0x02, 0x65, 0x6E, 0x41]  // Text "A"
        var file = Self.ntag213(tlv: [0x03, 0x08] + message + [0xFE])
        file.pages[2][2] = 0x0F  // static lock bits the tag has not
        file.pages[0x28] = [0x01, 0x00, 0x00, 0x00]  // a dynamic lock bit
        file.pages[0x29] = [0x04, 0x00, 0x00, 0x04]  // AUTH0 4
        let current = Self.ntag213(tlv: [0x03, 0x05, 0xD1, 0x01, 0x01, 0x54, 0x00, 0xFE])
        let plan = try Type2RestorePlan(file: file, current: current)
        #expect(plan.writes.map(\.page) == [4, 5, 6, 4])
        #expect(plan.writes.first?.bytes == [0x03, 0x00, 0xD1, 0x01], "the length goes to 0 first")
        #expect(plan.writes.first?.note == "NDEF length 0 first")
        #expect(plan.writes.last?.bytes == [0x03, 0x08, 0xD1, 0x01], "the real length last")
        #expect(plan.skipped.map(\.page) == [2, 0x28, 0x29])
        #expect(plan.skipped.allSatisfy { $0.why.contains("--include-") })
        let all = try Type2RestorePlan(
            file: file, current: current, options: .init(includeLockBits: true, includeConfig: true))
        #expect(all.writes.map(\.page) == [4, 5, 6, 4, 0x29, 0x28, 2], "config after data; locks last, page 2 last")
        #expect(all.writes.last?.bytes == [current.pages[2][0], 0x48, 0x0F, 0x00], "page 2 keeps the tag's bytes 0-1")
        #expect(all.skipped.isEmpty)
    }

    @Test("restore: a message of the same length that differs gets its length zeroed first and written back last")
    func restoreSameLength() throws {
        let message: [UInt8] = [0xD1, 0x01, 0x04, 0x54, 0x02, 0x65, 0x6E, 0x41]  // Text "A"
        var other = message
        other[7] = 0x42  // Text "B": the same length, so page 4 (03 08 D1 01) is the same on both
        let file = Self.ntag213(tlv: [0x03, 0x08] + message + [0xFE])
        let current = Self.ntag213(tlv: [0x03, 0x08] + other + [0xFE])
        let plan = try Type2RestorePlan(file: file, current: current)
        #expect(plan.writes.map(\.page) == [4, 6, 4], "\(plan.writes)")
        #expect(plan.writes.first?.bytes == [0x03, 0x00, 0xD1, 0x01], "the length goes to 0 first")
        #expect(plan.writes.last?.bytes == [0x03, 0x08, 0xD1, 0x01], "and back to the file's last")
        #expect(plan.writes.last?.note == "NDEF length back")
    }

    @Test("restore refuses another type, size or UID; never clears OTP bits; never writes PWD/PACK or unread pages")
    func restoreRefusals() throws {
        let file = Self.ntag213(tlv: [0x03, 0x00, 0xFE])
        let other = Self.ntag213(uid: [0x04, 0x99, 0x22, 0x33, 0x44, 0x55, 0x66], tlv: [0x03, 0x00, 0xFE])
        #expect(throws: Type2RestorePlan.Refusal.self) { try Type2RestorePlan(file: file, current: other) }
        let anyUID = try Type2RestorePlan(file: file, current: other, options: .init(anyUID: true))
        #expect(anyUID.writes.isEmpty, "UID pages and page 2's check byte are no write: \(anyUID.writes)")
        #expect(anyUID.skipped.map(\.page) == [0], "the UID page that differs is said")
        var small = file
        small.pages = Array(file.pages.prefix(16))
        small.type = .ultralight
        do {
            _ = try Type2RestorePlan(file: small, current: file)
            Issue.record("an Ultralight file was restored onto an NTAG213")
        } catch {
            #expect(error.description.contains("of its own type and size"), "\(error)")
        }
        var locked = file
        locked.pages[3] = [0xE1, 0x10, 0x12, 0x0F]
        var pwd = file
        pwd.pages[0x2B] = [0x12, 0x34, 0x56, 0x78]
        pwd.unreadPages = []
        let otp = try Type2RestorePlan(
            file: pwd, current: locked, options: .init(includeLockBits: true, includeConfig: true))
        #expect(otp.writes.isEmpty)
        #expect(otp.skipped.map(\.page) == [3, 0x2B])
        #expect(otp.skipped[0].why.contains("can't be cleared"))
        #expect(otp.skipped[1].why.contains("never restored"))
    }
}
