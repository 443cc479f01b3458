import NFCTags
import Testing
import VirtualHardware

/// nfcpy 1.0.4's PN532 driver tests (`tests/test_clf_pn532.py`, `tests/base_clf_pn53x.py` in
/// its PyPI sdist) feed the driver the answers a real chip gives to each command frame. Here
/// the frames go to the virtual chip, in the order nfcpy's driver sends them, and its answers
/// are compared with those, our own transcription of the frames. Where nfcpy's test answers a
/// register read from a mock (`reg_rsp('00 00 00')`), the virtual chip's answer is checked
/// against the state the commands before it left instead (README.md beside `PN532Chip`).
@Suite("nfcpy's PN532 driver-test frames against the virtual chip")
struct PN532NfcpyFramesTests {
    /// Sends one command (the payload after TFI `D4`) and returns the response payload after
    /// TFI `D5` (`[0x7F]` for the error frame), normal or extended frame.
    static func send(_ chip: inout PN532Chip, _ command: [UInt8]) -> [UInt8] {
        let out = chip.receive(PN532FrameEncoder.informationFrame(tfi: 0xD4, payload: command))
        return response(out)
    }

    static func hex(_ s: String) -> [UInt8] { [UInt8](hex: s.replacingOccurrences(of: " ", with: "")) ?? [] }

    static func response(_ bytes: [UInt8]) -> [UInt8] {
        var rest = bytes[...]
        if Array(rest.prefix(6)) == PN532FrameEncoder.ack { rest = rest.dropFirst(6) }
        if Array(rest.prefix(8)) == PN532FrameEncoder.errorFrame { return [0x7F] }
        let b = Array(rest)
        guard b.count >= 7, b[0] == 0x00, b[1] == 0x00, b[2] == 0xFF else { return [] }
        if b[3] == 0xFF && b[4] == 0xFF {
            let len = Int(b[5]) << 8 | Int(b[6])
            guard b.count >= 8 + len else { return [] }
            return Array(b[9..<(8 + len)])
        }
        let len = Int(b[3])
        guard b.count >= 5 + len else { return [] }
        return Array(b[6..<(5 + len)])
    }

    static let uid: [UInt8] = [0x04, 0x16, 0xC6, 0xC2, 0xD7, 0x38, 0x81]

    /// The chip after nfcpy's `pn532.init` and `Device.__init__` (TestDevice's fixture).
    static func initialized() throws -> PN532Chip {
        var chip = PN532Chip()
        #expect(send(&chip, [0x02]) == hex("03 32010607"), "GetFirmwareVersion")
        #expect(send(&chip, hex("14 010000")) == [0x15], "SAMConfiguration")
        // Diagnose line test: the longest command frame, echoed (an extended frame back).
        let line: [UInt8] = [0x00, 0x00] + (0..<262).map { UInt8($0 & 0xFF) }
        #expect(send(&chip, line) == [0x01] + Array(line.dropFirst()), "Diagnose NumTst 00 echoes")
        #expect(send(&chip, [0x02]) == hex("03 32010607"))
        #expect(send(&chip, hex("12 00")) == [0x13], "SetParameters")
        for rf in [
            "32 02000b0a", "32 0400", "32 05010001", "32 0a59f43f114d85616f266287", "32 0b69ff3f114185616f",
            "32 0cff0485", "32 0d85158a8508b28501da", "32 0102",
        ] {
            #expect(send(&chip, hex(rf)) == [0x33], "RFConfiguration \(rf)")
        }
        return chip
    }

    @Test("init: GetFirmwareVersion, SAMConfiguration, the line test, SetParameters, RFConfiguration")
    func initSequence() throws {
        _ = try Self.initialized()
    }

    @Test("Diagnose answers per test number: ROM 00, RAM 00 (OK), the line test keeps echoing")
    func diagnose() throws {
        var chip = PN532Chip()
        #expect(Self.send(&chip, [0x00, 0x01]) == [0x01, 0x00], "ROM test: OK")
        #expect(Self.send(&chip, [0x00, 0x02]) == [0x01, 0x00], "RAM test: OK")
        #expect(
            Self.send(&chip, Self.hex("00 00 6C69626E6663")) == Self.hex("01 00 6C69626E6663"), "libnfc's line test")
        #expect(Self.send(&chip, [0x00, 0x07, 0x00]) == [0x01, 0x00], "antenna self-test: OK")
        #expect(Self.send(&chip, [0x00, 0x06]) == [0x01, 0x01], "card presence, no target: timeout")
        #expect(Self.send(&chip, [0x00, 0x05, 0x00, 0x00, 0x00]) == [0x7F], "echo back: not modelled")
    }

    @Test("sense_tta with no target: InListPassiveTarget 4B 00, then CIU_FIFOData reads 26 (the REQA)")
    func senseTTANoTarget() throws {
        var chip = try Self.initialized()
        #expect(Self.send(&chip, Self.hex("4A 0100")) == Self.hex("4B 00"))
        #expect(Self.send(&chip, Self.hex("06 6339")) == Self.hex("07 26"))
    }

    @Test("sense_tta on a Type 2 tag, then READ 0 through InCommunicateThru with the CRC nfcpy checks")
    func senseTTAThenRead() throws {
        var chip = try Self.initialized()
        var pages = PN532TestNTAG215.image(uid: Self.uid)
        pages[4] = [0x03, 0x00, 0xFE, 0x00]
        let card = PN532Card(
            uid: Self.uid, atqa: [0x44, 0x00], sak: 0x00, function: .type2(try PN532TestNTAG215.core(pages: pages)))
        _ = chip.present(card)
        #expect(Self.send(&chip, Self.hex("4A 0100")) == Self.hex("4B 01 01 0044 00 07") + Self.uid)
        // nfcpy clears RxMode's CRC bit for a Type 2 tag: the chip left it on (SELECT had CRC_A).
        let rxMode = Self.send(&chip, Self.hex("06 6303"))
        #expect(rxMode.count == 2 && rxMode[1] & 0x80 != 0, "\(rxMode)")
        #expect(Self.send(&chip, [0x08, 0x63, 0x03, rxMode[1] & 0x7F]) == [0x09])
        // send_cmd_recv_rsp: TxMode/RxMode/TxAuto read back as the chip's state has them.
        let modes = Self.send(&chip, Self.hex("06 6302 6303 6305"))
        #expect(modes.count == 4 && modes[1] & 0x80 != 0 && modes[2] & 0x80 == 0, "TxCRC on, RxCRC off: \(modes)")
        #expect(Self.send(&chip, [0x08, 0x63, 0x02, modes[1], 0x63, 0x03, modes[2], 0x63, 0x05, 0x40]) == [0x09])
        #expect(Self.send(&chip, Self.hex("32 020a0b0f")) == [0x33])
        let read = Self.send(&chip, Self.hex("42 3000"))
        try #require(read.count == 2 + 16 + 2, "\(read)")
        #expect(read[0] == 0x43 && read[1] == 0x00)
        let data = Array(read[2..<18])
        #expect(data == Array(pages[0...3].joined()))
        #expect(Array(read.suffix(2)) == iso14443CRCA(data), "RxCRC off: the tag's CRC_A comes along, and it checks")
    }

    @Test("CIU_TxControl reads the RF field: 80 off, 83 on (nfcpy's sense_ttf then sends no RFConfiguration)")
    func txControl() throws {
        var chip = try Self.initialized()
        #expect(Self.send(&chip, Self.hex("32 0101")) == [0x33])
        let on = Self.send(&chip, Self.hex("06 6304"))
        #expect(on == [0x07, 0x83], "field on")
        #expect(Self.send(&chip, Self.hex("4A 010100ffff0100")) == Self.hex("4B 00"), "no FeliCa card")
        // nfcpy's 'disable output on TX1/TX2': writing 80 switches the field off.
        #expect(Self.send(&chip, Self.hex("08 6304 80")) == [0x09])
        #expect(Self.send(&chip, Self.hex("06 6304")) == [0x07, 0x80])
        #expect(!chip.rfFieldOn)
    }

    @Test("close: an ACK cancels, SetSerialBaudRate 10 04 answers 11, PowerDown 16 B0 00 answers 17 00")
    func close() throws {
        var chip = try Self.initialized()
        #expect(chip.receive(PN532FrameEncoder.ack).isEmpty, "a host ACK is answered with nothing")
        #expect(Self.send(&chip, Self.hex("10 04")) == [0x11])
        _ = chip.receive(PN532FrameEncoder.ack)
        #expect(Self.send(&chip, Self.hex("16 b000")) == Self.hex("17 00"))
        #expect(chip.powerMode == .powerDown)
    }

    @Test("GetGeneralStatus reports the field and the target (nfcpy reads Err, Field, NbTg)")
    func generalStatus() throws {
        var chip = try Self.initialized()
        _ = chip.present(try PN532TestCards.ntag215())
        _ = Self.send(&chip, Self.hex("4A 0100"))
        let status = Self.send(&chip, [0x04])
        #expect(Array(status.prefix(4)) == [0x05, 0x00, 0x01, 0x01], "no error, field on, one target: \(status)")
    }
}
