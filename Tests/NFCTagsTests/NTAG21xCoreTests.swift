import NFCBenchTestSupport
import Testing

@testable import NFCTags

@Suite("NTAG21x / Ultralight emulation core")
struct NTAG21xCoreTests {
    func fresh(_ v: NTAG21xCore.Variant = .ntag216) throws -> NTAG21xCore {
        try NTAG21xCore(variant: v, pages: NTAG21xCore.factoryPages(variant: v, uid: Type2Fixture.uid))
    }

    func page(_ core: NTAG21xCore, _ p: Int) -> [UInt8] { core.pages[p] }

    @Test("READ returns 16 bytes and rolls over to page 0 past the last page (NTAG216: E5 E6 00 01)")
    func readRollOver() throws {
        var core = try fresh()
        let d = try #require(
            matched { if case .data(let d) = core.respond(to: [0x30, 0xE5]) { d } else { nil } }, "no data")
        #expect(d.count == 16)
        #expect(Array(d[0..<8]) == [0, 0, 0, 0, 0, 0, 0, 0])  // PWD (E5) and PACK (E6) read as 00
        #expect(
            core.respond(to: [0x30, 0xE3]) == .data(page(core, 0xE3) + page(core, 0xE4) + [0, 0, 0, 0, 0, 0, 0, 0]))
        #expect(Array(d[8..<12]) == page(core, 0))
        #expect(Array(d[12..<16]) == page(core, 1))
    }

    @Test("PWD and PACK read as 00 with READ and FAST_READ although PWD holds FF FF FF FF")
    func pwdPackHidden() throws {
        var core = try fresh(.ntag213)
        #expect(core.pages[0x2B] == [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(core.respond(to: [0x30, 0x2B]) == .data([0, 0, 0, 0, 0, 0, 0, 0] + core.pages[0] + core.pages[1]))
        #expect(core.respond(to: [0x3A, 0x2A, 0x2C]) == .data(core.pages[0x2A] + [0, 0, 0, 0, 0, 0, 0, 0]))
    }

    @Test("FAST_READ: start > end, end past the last page → NAK, then idle")
    func fastReadRanges() throws {
        var core = try fresh(.ntag213)
        #expect(core.respond(to: [0x3A, 0x04, 0x05]) == .data(core.pages[4] + core.pages[5]))
        #expect(core.respond(to: [0x3A, 0x05, 0x04]) == .nak(0))
        #expect(core.state == .idle)
        core.wakeUp()
        #expect(core.respond(to: [0x3A, 0x00, 0x2D]) == .nak(0))
        core.wakeUp()
        #expect(core.respond(to: [0x3A, 0x00, 0x2C]).dataCount == 45 * 4)
    }

    @Test("NAK on a bad address or unknown command; every later frame is silent until wakeUp()")
    func nakThenIdle() throws {
        var core = try fresh(.ntag215)
        #expect(core.respond(to: [0x30, 0x87]) == .nak(0))  // 135 pages: 0x87 is past the end
        #expect(core.respond(to: [0x30, 0x00]) == .silent)
        #expect(core.respond(to: [0x60]) == .silent)
        core.wakeUp()
        #expect(core.respond(to: [0x30, 0x00]).dataCount == 16)
        #expect(core.respond(to: [0x42]) == .nak(0))
        #expect(core.respond(to: [0x30, 0x00]) == .silent)
        core.reactivate()
        #expect(core.respond(to: [0x50, 0x00]) == .silent)
        #expect(core.state == .halted)
    }

    @Test("WRITE: ACK, page stored; pages 0-1 and past the end NAK; page 2 only ORs the lock bytes")
    func write() throws {
        var core = try fresh(.ntag213)
        #expect(core.respond(to: [0xA2, 0x04, 1, 2, 3, 4]) == .ack)
        #expect(core.pages[4] == [1, 2, 3, 4])
        #expect(core.respond(to: [0xA2, 0x01, 1, 2, 3, 4]) == .nak(0))
        core.wakeUp()
        #expect(core.respond(to: [0xA2, 0x2D, 1, 2, 3, 4]) == .nak(0))
        core.wakeUp()
        let uidPage2 = core.pages[2]
        #expect(core.respond(to: [0xA2, 0x02, 0xAA, 0xBB, 0x10, 0x00]) == .ack)
        #expect(core.pages[2] == [uidPage2[0], uidPage2[1], 0x10, 0x00])
        // L4 set → page 4 locked.
        #expect(core.respond(to: [0xA2, 0x04, 9, 9, 9, 9]) == .nak(0))
        #expect(core.pages[4] == [1, 2, 3, 4])
    }

    @Test("Dynamic lock bits lock user pages (NTAG213: bit 0 → pages 16-17)")
    func dynamicLock() throws {
        var core = try fresh(.ntag213)
        #expect(core.respond(to: [0xA2, 0x28, 0x01, 0x00, 0x00, 0x00]) == .ack)
        #expect(core.respond(to: [0xA2, 0x11, 1, 1, 1, 1]) == .nak(0))
        core.wakeUp()
        #expect(core.respond(to: [0xA2, 0x12, 1, 1, 1, 1]) == .ack)
    }

    @Test("COMPATIBILITY_WRITE: ACK to the address, ACK to 16 bytes, only the first 4 stored")
    func compatibilityWrite() throws {
        var core = try fresh(.ultralight)
        #expect(core.respond(to: [0xA0, 0x05]) == .ack)
        #expect(core.respond(to: Array(1...16)) == .ack)
        #expect(core.pages[5] == [1, 2, 3, 4])
        #expect(core.pages[6] == [0, 0, 0, 0])
    }

    @Test("AUTH0 with PROT: reads from AUTH0 on NAK, READ rolls over at AUTH0, PWD_AUTH answers PACK and unlocks")
    func auth0() throws {
        var core = try fresh(.ntag213)
        // PWD 11 22 33 44, PACK AB CD, ACCESS PROT, then AUTH0 = 0x10 (after it, config pages are protected too).
        for frame: [UInt8] in [
            [0xA2, 0x2B, 0x11, 0x22, 0x33, 0x44], [0xA2, 0x2C, 0xAB, 0xCD, 0, 0],
            [0xA2, 0x2A, 0x80, 0x05, 0x00, 0x00], [0xA2, 0x29, 0x04, 0x00, 0x00, 0x10],
        ] {
            #expect(core.respond(to: frame) == .ack)
        }
        #expect(
            core.respond(to: [0x30, 0x0E]) == .data(core.pages[14] + core.pages[15] + core.pages[0] + core.pages[1]))
        #expect(core.respond(to: [0x30, 0x10]) == .nak(0))
        core.wakeUp()
        #expect(core.respond(to: [0xA2, 0x10, 1, 1, 1, 1]) == .nak(0))
        core.wakeUp()
        #expect(core.respond(to: [0x1B, 0x00, 0x00, 0x00, 0x00]) == .nak(0))
        core.wakeUp()
        #expect(core.respond(to: [0x1B, 0x11, 0x22, 0x33, 0x44]) == .data([0xAB, 0xCD]))
        #expect(core.isAuthenticated)
        #expect(core.respond(to: [0x30, 0x10]).dataCount == 16)
        #expect(core.respond(to: [0xA2, 0x10, 1, 1, 1, 1]) == .ack)
        core.wakeUp()
        #expect(!core.isAuthenticated)
    }

    @Test("AUTHLIM: after the limit of wrong passwords even the right one gets NAK 4")
    func authLimit() throws {
        var core = try fresh(.ntag215)
        #expect(core.respond(to: [0xA2, 0x84, 0x02, 0x05, 0x00, 0x00]) == .ack)  // AUTHLIM 2
        for _ in 0..<2 {
            #expect(core.respond(to: [0x1B, 0, 0, 0, 0]) == .nak(0))
            core.wakeUp()
        }
        #expect(core.respond(to: [0x1B, 0xFF, 0xFF, 0xFF, 0xFF]) == .nak(4))
    }

    @Test("GET_VERSION and READ_SIG per product; a plain Ultralight does not answer GET_VERSION and goes idle")
    func versionAndSignature() throws {
        var ntag = try fresh(.ntag215)
        #expect(ntag.respond(to: [0x60]) == .data([0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x11, 0x03]))
        #expect(ntag.respond(to: [0x3C, 0x00]) == .data([UInt8](repeating: 0, count: 32)))
        var ev1 = try fresh(.ultralightEV1MF0UL11)
        #expect(ev1.respond(to: [0x60]) == .data([0x00, 0x04, 0x03, 0x01, 0x01, 0x00, 0x0B, 0x03]))
        var ul = try fresh(.ultralight)
        #expect(ul.respond(to: [0x60]) == .silent)
        #expect(ul.state == .idle)
        #expect(ul.respond(to: [0x30, 0x00]) == .silent)
        ul.wakeUp()
        #expect(ul.respond(to: [0x30, 0x00]).dataCount == 16)
    }

    /// Each chip's answer to commands it does not implement (datasheets and AN10833, cited in
    /// `NTAG21xCore.Variant.unsupportedCommandAnswer`), written out by hand per chip.
    @Test(
        "Commands a chip does not implement: NTAG21x and EV1 NAK 0h, a plain Ultralight stays silent; all go idle",
        arguments: [
            // variant, frame, answer
            (NTAG21xCore.Variant.ntag213, [UInt8]([0x1A, 0x00]), Type2Answer.nak(0)),  // Ultralight C AUTHENTICATE
            (.ntag215, [0x1A, 0x00], .nak(0)),
            (.ntag216, [0xA5, 0x00, 1, 0, 0, 0], .nak(0)),  // INCR_CNT is EV1-only
            (.ntag215, [0x3E, 0x00], .nak(0)),  // CHECK_TEARING_EVENT is EV1-only
            (.ultralightEV1MF0UL11, [0x1A, 0x00], .nak(0)),
            (.ultralightEV1MF0UL21, [0x42], .nak(0)),
            (.ultralight, [0x60], .silent),  // GET_VERSION
            (.ultralight, [0x1A, 0x00], .silent),  // Ultralight C AUTHENTICATE
            (.ultralight, [0x3A, 0x00, 0x03], .silent),  // FAST_READ
            (.ultralight, [0x3C, 0x00], .silent),  // READ_SIG
            (.ultralight, [0x1B, 0xFF, 0xFF, 0xFF, 0xFF], .silent),  // PWD_AUTH
        ])
    func unsupportedCommands(variant: NTAG21xCore.Variant, frame: [UInt8], answer: Type2Answer) throws {
        var core = try fresh(variant)
        #expect(core.respond(to: frame) == answer)
        #expect(core.state == .idle)
        #expect(core.respond(to: [0x30, 0x04]) == .silent)
    }

    @Test("Ultralight EV1: INCR_CNT adds to a counter (ACK), READ_CNT shows it, CHECK_TEARING_EVENT answers BD")
    func ev1Counters() throws {
        var core = try fresh(.ultralightEV1MF0UL11)
        #expect(core.respond(to: [0xA5, 0x01, 0x05, 0x01, 0x00, 0x00]) == .ack)
        #expect(core.respond(to: [0x39, 0x01]) == .data([0x05, 0x01, 0x00]))
        #expect(core.respond(to: [0x3E, 0x02]) == .data([0xBD]))
        #expect(core.respond(to: [0xA5, 0x03, 0x01, 0x00, 0x00, 0x00]) == .nak(0))
    }

    @Test("READ_CNT only when NFC_CNT_EN is set; the counter counts the first READ of each activation")
    func readCounter() throws {
        var core = try fresh(.ntag213)
        #expect(core.respond(to: [0x39, 0x02]) == .nak(0))
        core.wakeUp()
        #expect(core.respond(to: [0xA2, 0x2A, 0x10, 0x05, 0x00, 0x00]) == .ack)
        _ = core.respond(to: [0x30, 0x04])
        _ = core.respond(to: [0x30, 0x08])
        #expect(core.respond(to: [0x39, 0x02]) == .data([1, 0, 0]))
        core.reactivate()
        _ = core.respond(to: [0x3A, 0x04, 0x04])
        #expect(core.respond(to: [0x39, 0x02]) == .data([2, 0, 0]))
    }

    @Test("A memory image of the wrong size is refused with a typed error")
    func badImage() {
        #expect(throws: NTAG21xCoreError.self) {
            try NTAG21xCore(variant: .ntag213, pages: [[UInt8]](repeating: [0, 0, 0, 0], count: 44))
        }
    }
}

extension Type2Answer {
    var dataCount: Int? { if case .data(let d) = self { d.count } else { nil } }
    /// The data of a data answer, else nil (for `#require`: a test never ends early quietly).
    var data: [UInt8]? { if case .data(let d) = self { d } else { nil } }
}

/// MIFARE Ultralight C (MF0ICU2 Rev 3.3): memory, AUTHENTICATE, AUTH0/AUTH1, counter.
/// Cipher vectors: FIPS 46 (DES) and pyDes 2.0.1 (2-key TDEA CBC), computed outside this code.
@Suite("Ultralight C core and its 2K3DES")
struct UltralightCTests {
    let uid: [UInt8] = [0x04, 0x5C, 0x2A, 0x91, 0xE2, 0x33, 0x80]
    /// The factory key as the DES operations take it: K1 "IEMKAERB", K2 "!NACUOYF".
    let key = TDEA(key: Array("IEMKAERB!NACUOYF".utf8))!

    func fresh() throws -> NTAG21xCore {
        try NTAG21xCore(variant: .ultralightC, pages: NTAG21xCore.factoryPages(variant: .ultralightC, uid: uid))
    }

    @Test("DES and 2-key TDEA CBC match the known answers")
    func cipher() {
        let des = DES.subkeys([UInt8](hex: "133457799BBCDFF1")!)
        #expect(
            DES.bytes(DES.crypt(DES.block([UInt8](hex: "0123456789ABCDEF")!), des, decrypt: false))
                == [UInt8](hex: "85E813540F0AB405"))
        let zero = [UInt8](repeating: 0, count: 8)
        #expect(key.encrypt([UInt8](hex: "0011223344556677")!, iv: zero) == [UInt8](hex: "2E27C3BA0A36ED8F"))
        let iv = [UInt8](hex: "A0A1A2A3A4A5A6A7")!
        let two = [UInt8](hex: "00112233445566778899AABBCCDDEEFF")!
        #expect(key.encrypt(two, iv: iv) == [UInt8](hex: "7C715BBAF8E7AF709880B697A58DA81A"))
        #expect(key.decrypt(key.encrypt(two, iv: iv), iv: iv) == two)
    }

    @Test("Factory image: AUTH0 30h, key BREAKMEIFYOUCAN! in 2Ch-2Fh, READ stops before the key pages and rolls over")
    func memory() throws {
        var core = try fresh()
        #expect(core.pages[0x2A] == [0x30, 0, 0, 0])
        #expect(core.pages[0x2C...].flatMap { $0 } == Array("BREAKMEIFYOUCAN!".utf8))
        // READ 29h: pages 29h, 2Ah, 2Bh, then 00h (MF0ICU2 §9.2 roll-over).
        #expect(core.respond(to: [0x30, 0x29]) == .data([0, 0, 0, 0, 0x30, 0, 0, 0, 0, 0, 0, 0] + core.pages[0]))
        #expect(core.respond(to: [0x30, 0x2C]) == .nak(0))
        core.wakeUp()
        #expect(core.respond(to: [0x60]) == .silent)  // no GET_VERSION: silent, idle
        #expect(core.state == .idle)
    }

    @Test("AUTHENTICATE: AF + ek(RndB); AF + ek(RndA‖RndB') → 00 + ek(RndA'), chained as MF0ICU2 §7.5.5 says")
    func authenticate() throws {
        var core = try fresh()
        let first = try #require(
            matched {
                if case .data(let first) = core.respond(to: [0x1A, 0x00]), first.count == 9, first[0] == 0xAF {
                    first
                } else {
                    nil
                }
            }, "no challenge")
        let challenge = Array(first[1...])
        let rndB = key.decrypt(challenge, iv: [UInt8](repeating: 0, count: 8))
        let rndA: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        let token = key.encrypt(rndA + Array(rndB[1...]) + [rndB[0]], iv: challenge)
        let second = try #require(
            matched {
                if case .data(let second) = core.respond(to: [0xAF] + token), second.count == 9, second[0] == 0x00 {
                    second
                } else {
                    nil
                }
            }, "no answer to part 2")
        #expect(key.decrypt(Array(second[1...]), iv: Array(token[8...])) == [2, 3, 4, 5, 6, 7, 8, 1])
        #expect(core.isAuthenticated)
        // A wrong RndB' is refused with NAK and the tag goes idle.
        core.wakeUp()
        let again = try #require(core.respond(to: [0x1A, 0x00]).data, "AUTHENTICATE part 1 answers again")
        let wrong = key.encrypt(rndA + rndA, iv: Array(again[1...]))
        #expect(core.respond(to: [0xAF] + wrong) == .nak(0))
        #expect(core.state == .idle && !core.isAuthenticated)
    }

    @Test("AUTH0 10h with AUTH1 0: pages from 10h neither read nor written until AUTHENTICATE")
    func protection() throws {
        var core = try fresh()
        #expect(core.respond(to: [0xA2, 0x2B, 0x00, 0, 0, 0]) == .ack)  // AUTH1: read and write
        #expect(core.respond(to: [0xA2, 0x2A, 0x10, 0, 0, 0]) == .ack)  // AUTH0 = 10h
        #expect(
            core.respond(to: [0x30, 0x0E]) == .data(core.pages[0x0E] + core.pages[0x0F] + core.pages[0] + core.pages[1])
        )
        #expect(core.respond(to: [0x30, 0x10]) == .nak(0))
        core.wakeUp()
        #expect(core.respond(to: [0xA2, 0x10, 1, 2, 3, 4]) == .nak(0))
        core.wakeUp()
        let first = try #require(core.respond(to: [0x1A, 0x00]).data, "AUTHENTICATE part 1 answers")
        let challenge = Array(first[1...])
        let rndB = key.decrypt(challenge, iv: [UInt8](repeating: 0, count: 8))
        _ = core.respond(
            to: [0xAF] + key.encrypt([UInt8](repeating: 9, count: 8) + Array(rndB[1...]) + [rndB[0]], iv: challenge))
        #expect(core.respond(to: [0xA2, 0x10, 1, 2, 3, 4]) == .ack)
        #expect(core.respond(to: [0x30, 0x10]).dataCount == 16)
    }

    @Test("The one-way counter: the first WRITE sets it, later ones add 1-F, never down")
    func counter() throws {
        var core = try fresh()
        #expect(core.respond(to: [0xA2, 0x29, 0x10, 0x00, 0, 0]) == .ack)
        #expect(core.respond(to: [0xA2, 0x29, 0x05, 0xFF, 0, 0]) == .ack)  // adds 5, byte 1 ignored
        #expect(core.pages[0x29].prefix(2) == [0x15, 0x00])
        #expect(core.respond(to: [0xA2, 0x29, 0x00, 0x00, 0, 0]) == .nak(0))  // an increment of 0
    }
}
