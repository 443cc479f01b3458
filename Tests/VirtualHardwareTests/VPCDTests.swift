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

    @Test("GET DATA FF CA answers the 7-byte UID from pages 0-2")
    func uid() {
        var card = StorageCardPersonality(core: VPCDTestType2Core())
        #expect(card.respond(to: [0xFF, 0xCA, 0x00, 0x00, 0x00]) == [UInt8](hex: "04 11 22 33 44 55 66 90 00"))
        #expect(card.respond(to: [0xFF, 0xCA, 0x01, 0x00, 0x00]) == [0x6A, 0x81])
    }

    @Test("READ BINARY trims a READ to Le and chains READs past 16 bytes")
    func readBinary() {
        var card = StorageCardPersonality(core: VPCDTestType2Core())
        let r16 = card.respond(to: [0xFF, 0xB0, 0x00, 0x03, 0x10])
        #expect(r16 == [UInt8](hex: "E1 10 12 00 03 03 D0 00 00 FE 00 00 00 00 00 00 90 00"))
        #expect(card.respond(to: [0xFF, 0xB0, 0x00, 0x03, 0x04]) == [UInt8](hex: "E1 10 12 00 90 00"))
        let r20 = card.respond(to: [0xFF, 0xB0, 0x00, 0x00, 0x14])
        #expect(r20.count == 22 && r20.suffix(2) == [0x90, 0x00])
        #expect(Array(r20[16..<20]) == [UInt8](hex: "03 03 D0 00"), "bytes 16-19 come from a second READ at page 4")
    }

    @Test("UPDATE BINARY writes one page; a NAK answers 63 00; a wrong Lc 67 00")
    func updateBinary() {
        var card = StorageCardPersonality(core: VPCDTestType2Core())
        #expect(card.respond(to: [0xFF, 0xD6, 0x00, 0x04, 0x04, 0xDE, 0xAD, 0xBE, 0xEF]) == [0x90, 0x00])
        #expect(card.core.pages[4] == [0xDE, 0xAD, 0xBE, 0xEF])
        #expect(card.respond(to: [0xFF, 0xD6, 0x00, 0x02, 0x04, 1, 2, 3, 4]) == [0x63, 0x00])
        card.reset()
        #expect(card.respond(to: [0xFF, 0xD6, 0x00, 0x04, 0x03, 1, 2, 3]) == [0x67, 0x00])
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

    @Test("Anything else: 6D 00 for an unknown FF instruction, 6A 81 for ISO commands")
    func otherCommands() {
        var card = StorageCardPersonality(core: VPCDTestType2Core())
        #expect(card.respond(to: [0xFF, 0x42, 0x00, 0x00, 0x00]) == [0x6D, 0x00])
        #expect(card.respond(to: [UInt8](hex: "00 A4 04 00 07 D2 76 00 00 85 01 01 00")!) == [0x6A, 0x81])
        #expect(card.respond(to: [0xFF]) == [0x67, 0x00])
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
        let answers: [[UInt8]?] = try await onThread {
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
        let (eof, reconnected, answer): (Bool, Bool, [UInt8]?) = try await onThread {
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
        let (garbage, eof): ([UInt8]?, Bool) = try await onThread {
            guard server.accept() else { return (nil, false) }
            server.send([0x00, 0xA4, 0x04, 0x00])
            let g = server.receive()
            card.remove()
            return (g, server.sawEOF())
        }
        #expect(garbage == [0x12])
        #expect(eof, "remove() closed the connection")
        card.present()
        let back = try await onThread { server.accept() }
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
        try await Task.sleep(for: .milliseconds(30))
        #expect(!card.isConnected)
        let server = try VPCDTestServer(port: port)
        let accepted = try await onThread { server.accept() }
        #expect(accepted)
    }
}

/// A core that answers every APDU with `6D 00` (only the personality's ATR matters here).
struct PCSCFreeT4TCore: VirtualAPDUResponder {
    mutating func respond(to apdu: [UInt8]) -> [UInt8] { [0x6D, 0x00] }
}
