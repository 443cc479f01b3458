import NFCBenchTestSupport
import NFCTags
import Testing
import VirtualHardware

@Suite("Virtual card personalities (pure)")
struct VPCDPersonalityTests {
    @Test("The storage-card personality's default ATR is PC/SC part 3's Ultralight ATR with a correct TCK")
    func storageATR() {
        let atr = StorageCardPersonality(core: VPCDTestType2Core()).atr
        #expect(atr == [UInt8](hex: "3B 8F 80 01 80 4F 0C A0 00 00 03 06 03 00 03 00 00 00 00 68"))
        #expect(atr.dropFirst().reduce(0, ^) == 0, "T0 … TCK XOR to zero (ISO/IEC 7816-3 §8.2.5)")
    }

    @Test("An ISO 14443-4 ATR from historical bytes matches the one verified against pcscd")
    func part4ATR() {
        let atr = ISO14443Part4Personality(
            core: PCSCFreeT4TCore(), historicalBytes: [UInt8](hex: "00 00 00 00 00 71 81 00")!
        ).atr
        #expect(atr == [UInt8](hex: "3B 88 80 01 00 00 00 00 00 71 81 00 F9"))
        let cut = ISO14443Part4Personality(core: PCSCFreeT4TCore(), historicalBytes: .init(repeating: 0, count: 16)).atr
        #expect(cut.count == 20 && cut[1] == 0x8F, "more than 15 historical bytes are cut to 15")
    }

    @Test("The transparent exchange carries GET_VERSION in DO 95 and answers in DO 97")
    func transparentGetVersion() {
        var card = StorageCardPersonality(core: VPCDTestType2Core())
        #expect(card.respond(to: [UInt8](hex: "FF C2 00 00 02 81 00 00")!) == [UInt8](hex: "C0 03 00 90 00 90 00"))
        let answer = card.respond(to: [UInt8](hex: "FF C2 00 01 03 95 01 60 00")!)
        #expect(answer == [UInt8](hex: "C0 03 00 90 00 97 08")! + VPCDTestType2Core.version + [0x90, 0x00])
        // An unknown frame: the core NAKs, the exchange reports "no response" in DO C0.
        #expect(card.respond(to: [UInt8](hex: "FF C2 00 01 03 95 01 1B 00")!) == [UInt8](hex: "C0 03 01 64 01 90 00"))
    }
}

@Suite("Virtual card on the vpcd wire (fake vpcd)")
struct VPCDWireTests {
    struct Echo: VirtualAPDUResponder {
        var resets = 0
        mutating func respond(to apdu: [UInt8]) -> [UInt8] {
            apdu.count == 5 ? [] : Array(apdu.prefix(2)) + [0x90, 0x00]
        }
        mutating func reset() { resets += 1 }
    }

    @Test("Control bytes 00/01/02 get no answer, 04 the ATR, each APDU exactly one answer")
    func protocolRoundTrip() async throws {
        let server = try VPCDTestServer()
        var config = VirtualCard.Configuration(port: server.port)
        config.retryInterval = .milliseconds(5)
        let personality = ISO14443Part4Personality(core: Echo(), historicalBytes: [0x80])
        let card = VirtualCard(personality: personality, configuration: config)
        card.start()
        defer { card.stop() }
        let answers: [[UInt8]?] = try await offPool {
            guard server.accept() else { return [] }
            server.send([0x01])  // power on: nothing comes back
            let afterPowerOn = server.receive(milliseconds: 100)
            server.send([0x04])
            let atr = server.receive()
            server.send([0x00, 0xA4, 0x04, 0x00])
            let apdu = server.receive()
            server.send([0x00, 0xB0, 0x00, 0x00, 0x02])  // the core answers nothing
            let empty = server.receive()
            server.send([0x02])
            server.send([0x04])
            let atrAfterReset = server.receive()
            return [afterPowerOn, atr, apdu, empty, atrAfterReset]
        }
        try #require(answers.count == 5)
        #expect(answers[0] == nil, "no answer to power on")
        #expect(answers[1] == personality.atr)
        #expect(answers[2] == [0x00, 0xA4, 0x90, 0x00])
        #expect(answers[3] == [0x6F, 0x00], "an empty answer would hang vpcd; 6F 00 goes instead")
        #expect(answers[4] == personality.atr, "the reset (02) got no answer of its own")
        let resets = card.withPersonality { ($0 as? ISO14443Part4Personality<Echo>)?.core.resets }
        #expect(resets == 2, "01 and 02 each reset the personality")
        let kinds = card.events.map(\.kind)
        #expect(kinds.contains(.command([0x00, 0xA4, 0x04, 0x00])))
        #expect(kinds.contains(.response([0x00, 0xA4, 0x90, 0x00])))
        #expect(kinds.filter { $0 == .control(0x04) }.count == 2)
        let stamps = card.events.map(\.timestampMicros)
        #expect(stamps == stamps.sorted(), "timestamps are monotonic")
    }

    @Test("A close-mid-APDU fault reads the command and closes without answering; the card reconnects")
    func closeMidAPDU() async throws {
        let server = try VPCDTestServer()
        var config = VirtualCard.Configuration(port: server.port)
        config.retryInterval = .milliseconds(5)
        let card = VirtualCard(personality: ISO14443Part4Personality(core: Echo()), configuration: config)
        card.inject(.closeMidAPDU)
        card.start()
        defer { card.stop() }
        let (eof, reconnected, answer): (Bool, Bool, [UInt8]?) = try await offPool {
            guard server.accept() else { return (false, false, nil) }
            server.send([0x00, 0xA4, 0x04, 0x00])
            let eof = server.sawEOF()
            let again = server.accept()
            server.send([0x00, 0xA4, 0x04, 0x00])
            return (eof, again, server.receive())
        }
        #expect(eof, "the connection closed instead of an answer")
        #expect(reconnected, "EOF is not the end: the card connects again")
        #expect(answer == [0x00, 0xA4, 0x90, 0x00], "the fault applied once")
        #expect(card.events.map(\.kind).contains(.disconnected(.fault)))
    }

    @Test("A replace fault sends garbage status words; remove() closes, present() reconnects")
    func garbageAndRemoval() async throws {
        let server = try VPCDTestServer()
        var config = VirtualCard.Configuration(port: server.port)
        config.retryInterval = .milliseconds(5)
        let card = VirtualCard(personality: ISO14443Part4Personality(core: Echo()), configuration: config)
        card.inject(.replace([0x12]))
        card.start()
        defer { card.stop() }
        let (garbage, eof): ([UInt8]?, Bool) = try await offPool {
            guard server.accept() else { return (nil, false) }
            server.send([0x00, 0xA4, 0x04, 0x00])
            let g = server.receive()
            card.remove()
            return (g, server.sawEOF())
        }
        #expect(garbage == [0x12])
        #expect(eof, "remove() closed the connection")
        card.present()
        let back = try await offPool { server.accept() }
        #expect(back)
        #expect(card.events.map(\.kind).contains(.disconnected(.removed)))
    }

    @Test("While vpcd's port refuses, the card keeps retrying and connects once it listens")
    func retriesWhileRefused() async throws {
        // Take a free port, close it, start the card, then listen on it.
        let probe = try VPCDTestServer()
        let port = probe.port
        var config = VirtualCard.Configuration(port: port)
        config.retryInterval = .milliseconds(5)
        let card = VirtualCard(personality: ISO14443Part4Personality(core: Echo()), configuration: config)
        _ = consume probe
        card.start()
        defer { card.stop() }
        // Its 5 ms retries find no one listening: it stays unconnected (six retries and more).
        try await holds(for: .milliseconds(30), "no vpcd listening, the card stays unconnected") { !card.isConnected }
        let server = try VPCDTestServer(port: port)
        let accepted = try await offPool { server.accept() }
        #expect(accepted)
    }
}

/// A core that answers every APDU with `6D 00` (only the personality's ATR matters here).
struct PCSCFreeT4TCore: VirtualAPDUResponder {
    mutating func respond(to apdu: [UInt8]) -> [UInt8] { [0x6D, 0x00] }
}

/// PC/SC part 3 v2.01.09 §3.2.2.1 pseudo-APDUs on the storage-card personality, each on a fresh
/// NTAG213 (NFCTags' core, factory image, UID 04 11 22 33 44 55 66; 45 pages: CC E1 10 12 00,
/// Lock Control TLV, empty NDEF, dynamic lock 00 00 00 BD at page 28h, CFG 04 00 00 FF /
/// 00 05 00 00, PWD reads as 00). Answers written by hand from part 3's rules.
@Suite("PC/SC part 3 pseudo-APDUs of the storage-card personality")
struct PCSCPart3StorageCardTests {
    static let uid = "04 11 22 33 44 55 66"
    static func card() throws -> StorageCardPersonality<NTAG21xCore> {
        let uid = [UInt8](hex: Self.uid)!
        return StorageCardPersonality(
            core: try NTAG21xCore(variant: .ntag213, pages: NTAG21xCore.factoryPages(variant: .ntag213, uid: uid)))
    }

    static let table: [(String, String, String)] = [
        // GET DATA (§3.2.2.1.3): Le 00 or exact → UID 90 00; shorter → 6C 07; longer → UID 62 82.
        ("GET DATA Le 00", "FF CA 00 00 00", "\(uid) 90 00"),
        ("GET DATA Le exact", "FF CA 00 00 07", "\(uid) 90 00"),
        ("GET DATA Le short", "FF CA 00 00 04", "6C 07"),
        ("GET DATA Le long", "FF CA 00 00 08", "\(uid) 62 82"),
        ("GET DATA historical bytes of a storage card", "FF CA 01 00 00", "6A 81"),
        ("GET DATA P2 01", "FF CA 00 01 00", "6A 81"),
        ("GET DATA without Le", "FF CA 00 00", "67 00"),
        ("GET DATA with data", "FF CA 00 00 01 00 00", "67 00"),
        // READ BINARY (§3.2.2.1.8).
        ("READ BINARY 4 bytes of the CC", "FF B0 00 03 04", "E1 10 12 00 90 00"),
        ("READ BINARY 16 bytes", "FF B0 00 03 10", "E1 10 12 00 01 03 A0 0C 34 03 00 FE 00 00 00 00 90 00"),
        (
            "READ BINARY 20 bytes from 2 READs", "FF B0 00 02 14",
            "44 48 00 00 E1 10 12 00 01 03 A0 0C 34 03 00 FE 00 00 00 00 90 00"
        ),
        ("READ BINARY past the end: up to it, 62 82", "FF B0 00 2A 10", "00 05 00 00 00 00 00 00 00 00 00 00 62 82"),
        (
            "READ BINARY Le 00 near the end", "FF B0 00 28 00",
            "00 00 00 BD 04 00 00 FF 00 05 00 00 00 00 00 00 00 00 00 00 62 82"
        ),
        ("READ BINARY from past the end", "FF B0 00 2D 04", "6A 82"),
        ("READ BINARY P1 01", "FF B0 01 00 04", "6A 82"),
        ("READ BINARY without Le", "FF B0 00 04", "67 00"),
        ("READ BINARY with data", "FF B0 00 04 01 00 10", "67 00"),
        // UPDATE BINARY (§3.2.2.1.9).
        ("UPDATE BINARY one page", "FF D6 00 04 04 DE AD BE EF", "90 00"),
        ("UPDATE BINARY two pages", "FF D6 00 06 08 01 02 03 04 05 06 07 08", "90 00"),
        ("UPDATE BINARY the read-only UID page", "FF D6 00 00 04 01 02 03 04", "63 00"),
        ("UPDATE BINARY runs past the end", "FF D6 00 2C 08 00 00 00 00 01 02 03 04", "62 82"),
        ("UPDATE BINARY past the end", "FF D6 00 2D 04 01 02 03 04", "6A 82"),
        ("UPDATE BINARY 3 bytes", "FF D6 00 04 03 01 02 03", "67 00"),
        ("UPDATE BINARY with Le", "FF D6 00 04 04 01 02 03 04 00", "67 00"),
        ("UPDATE BINARY Lc 5, 4 bytes", "FF D6 00 04 05 01 02 03 04", "67 00"),
        // LOAD KEYS (§3.2.2.1.4).
        ("LOAD KEYS volatile card key 00", "FF 82 00 00 06 FF FF FF FF FF FF", "90 00"),
        ("LOAD KEYS key number 02", "FF 82 00 02 06 FF FF FF FF FF FF", "69 88"),
        ("LOAD KEYS reader key", "FF 82 80 00 06 FF FF FF FF FF FF", "69 83"),
        ("LOAD KEYS secured", "FF 82 40 00 06 FF FF FF FF FF FF", "69 85"),
        ("LOAD KEYS non-volatile", "FF 82 20 00 06 FF FF FF FF FF FF", "69 87"),
        ("LOAD KEYS 4-byte key", "FF 82 00 00 04 FF FF FF FF", "69 89"),
        ("LOAD KEYS without data", "FF 82 00 00", "67 00"),
        // GENERAL AUTHENTICATE (§3.2.2.1.6): no MIFARE Classic authentication on a Type 2 tag.
        ("GENERAL AUTHENTICATE key A", "FF 86 00 00 05 01 00 04 60 00", "69 83"),
        ("GENERAL AUTHENTICATE key type 62", "FF 86 00 00 05 01 00 04 62 00", "69 86"),
        ("GENERAL AUTHENTICATE key number 05", "FF 86 00 00 05 01 00 04 60 05", "69 88"),
        ("GENERAL AUTHENTICATE 4 bytes", "FF 86 00 00 04 01 00 04 60", "67 00"),
        // Everything else.
        ("unknown FF instruction", "FF 42 00 00 00", "6D 00"),
        ("an ISO SELECT to a storage card", "00 A4 04 00 07 D2 76 00 00 85 01 01 00", "6E 00"),
        ("one byte", "FF", "67 00"),
    ]

    @Test("Lc/Le and status words per instruction", arguments: table)
    func pseudoAPDU(name: String, apdu: String, answer: String) throws {
        var card = try Self.card()
        #expect(card.respond(to: [UInt8](hex: apdu)!) == [UInt8](hex: answer)!, "\(name)")
    }

    @Test(
        "UPDATE BINARY lands in the Type 2 core exactly like a reader's WRITE (lock bytes and CC ORed, CC then locked, page 0 refused)"
    )
    func updateBinaryIsWrite() throws {
        let writes: [(page: UInt8, data: String)] = [
            (4, "DE AD BE EF"), (3, "00 00 00 0F"), (2, "00 00 0F 00"), (3, "00 00 00 F0"), (0, "01 02 03 04"),
            (40, "01 00 00 00"), (5, "AA BB CC DD"),
        ]
        var viaPCSC = try Self.card()
        var direct = try Self.card().core
        for w in writes {
            let data = [UInt8](hex: w.data)!
            let sw = viaPCSC.respond(to: [0xFF, 0xD6, 0x00, w.page, 0x04] + data)
            let frame = direct.respond(to: [0xA2, w.page] + data)
            #expect(sw == (frame == .ack ? [0x90, 0x00] : [0x63, 0x00]), "page \(w.page)")
            if frame != .ack {  // a NAK leaves the tag idle: the reader re-selects it
                viaPCSC.reset()
                direct.reactivate()
            }
        }
        #expect(viaPCSC.core.pages == direct.pages)
        #expect(direct.pages[2] == [UInt8](hex: "44 48 0F 00"))
        #expect(direct.pages[3] == [UInt8](hex: "E1 10 12 0F"))
    }

    @Test("GET DATA in front of an ISO-DEP card: the UID or the ATS's historical bytes, part 3's Le rules")
    func isoDEPGetData() {
        var card = ReaderAnsweredGetData(
            core: PCSCFreeT4TCore(), uid: [0x08, 0x01, 0x02, 0x03], historicalBytes: [0x80, 0x71])
        #expect(card.respond(to: [UInt8](hex: "FF CA 00 00 00")!) == [UInt8](hex: "08 01 02 03 90 00"))
        #expect(card.respond(to: [UInt8](hex: "FF CA 00 00 02")!) == [UInt8](hex: "6C 04"))
        #expect(card.respond(to: [UInt8](hex: "FF CA 00 00 05")!) == [UInt8](hex: "08 01 02 03 62 82"))
        #expect(card.respond(to: [UInt8](hex: "FF CA 01 00 00")!) == [UInt8](hex: "80 71 90 00"))
        #expect(card.respond(to: [UInt8](hex: "FF CA 02 00 00")!) == [UInt8](hex: "6A 81"))
    }
}
