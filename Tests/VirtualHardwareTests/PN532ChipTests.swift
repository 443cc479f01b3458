import NFCTags
import Testing
import VirtualHardware

/// A host frame as libnfc writes it.
private func hostFrame(_ command: [UInt8]) -> [UInt8] {
    PN532FrameEncoder.informationFrame(tfi: 0xD4, payload: command)
}

/// Splits the chip's output into frames, dropping the leading ACK; returns the response payloads.
func responses(_ bytes: [UInt8]) -> [[UInt8]] {
    var rest = bytes[...]
    var out: [[UInt8]] = []
    while rest.count >= 6 {
        if Array(rest.prefix(6)) == PN532FrameEncoder.ack {
            rest = rest.dropFirst(6)
            continue
        }
        if Array(rest.prefix(8)) == PN532FrameEncoder.errorFrame {
            out.append([0x7F])
            rest = rest.dropFirst(8)
            continue
        }
        let len = Int(rest[rest.startIndex + 3])
        let start = rest.startIndex + 5
        guard rest.count >= len + 7 else { break }
        out.append(Array(rest[(start + 1)..<(start + len)]))  // after TFI
        rest = rest.dropFirst(len + 7)
    }
    return out
}

@Suite("PN532 frame codec")
struct PN532FrameCodecTests {
    @Test("Encodes normal frames with LCS and DCS (UM0701 §6.2.1.1)")
    func normalFrame() {
        #expect(
            PN532FrameEncoder.informationFrame(payload: [0x15]) == [
                0x00, 0x00, 0xFF, 0x02, 0xFE, 0xD5, 0x15, 0x16, 0x00,
            ])
        #expect(hostFrame([0x14, 0x01]) == [0x00, 0x00, 0xFF, 0x03, 0xFD, 0xD4, 0x14, 0x01, 0x17, 0x00])
    }

    @Test("Encodes an extended frame above 255 bytes")
    func extendedFrame() {
        let frame = PN532FrameEncoder.informationFrame(payload: [UInt8](repeating: 0x41, count: 300))
        #expect(Array(frame.prefix(8)) == [0x00, 0x00, 0xFF, 0xFF, 0xFF, 0x01, 0x2D, 0xD2])
        // libnfc's 262-byte APDU: LEN 0x0109 = TFI + 40 01 + 262 bytes.
        let apdu: [UInt8] = [0x40, 0x01] + [UInt8](repeating: 0x41, count: 262)
        let wire = hostFrame(apdu)
        #expect(Array(wire.prefix(10)) == [0x00, 0x00, 0xFF, 0xFF, 0xFF, 0x01, 0x09, 0xF6, 0xD4, 0x40])
        var parser = PN532FrameParser()
        parser.append(wire)
        #expect(parser.next() == .command(apdu))
        // Above the firmware limit: refused.
        parser.append(hostFrame([UInt8](repeating: 0x41, count: 300)))
        if case .malformed? = parser.next() {} else { Issue.record("a 301-byte frame must be refused") }
    }

    @Test("Skips the wake-up preamble and decodes frames fed a byte at a time")
    func dripFed() {
        var parser = PN532FrameParser()
        let wire: [UInt8] =
            [0x55, 0x55] + [UInt8](repeating: 0, count: 14) + hostFrame([0x14, 0x01]) + PN532FrameEncoder.ack
        var frames: [PN532HostFrame] = []
        for b in wire {
            parser.append([b])
            while let f = parser.next() { frames.append(f) }
        }
        #expect(frames == [.command([0x14, 0x01]), .ack])
    }

    @Test("Every strict prefix of a frame yields nothing yet")
    func prefixes() {
        let frame = hostFrame([0x4A, 0x01, 0x00])
        for n in 0..<frame.count - 1 {
            var parser = PN532FrameParser()
            parser.append(frame.prefix(n))
            #expect(parser.next() == nil, "prefix \(n)")
        }
    }

    @Test("Bad LCS, bad DCS and a wrong TFI are malformed, and the stream recovers")
    func malformed() {
        var bad = hostFrame([0x02])
        bad[4] ^= 1
        var badDCS = hostFrame([0x02])
        badDCS[badDCS.count - 2] ^= 1
        let wrongTFI = PN532FrameEncoder.informationFrame(tfi: 0xD5, payload: [0x02])
        var parser = PN532FrameParser()
        parser.append(bad + badDCS + wrongTFI + hostFrame([0x02]) + [0x00, 0x00, 0xFF, 0xFF, 0x00, 0x00])
        var frames: [PN532HostFrame] = []
        while let f = parser.next() { frames.append(f) }
        #expect(frames.count == 5)
        #expect(frames.prefix(3).allSatisfy { if case .malformed = $0 { true } else { false } })
        #expect(Array(frames.suffix(2)) == [.command([0x02]), .nack])
    }

    @Test("CRC_A matches ISO/IEC 14443-3 (GET_VERSION 60 → F8 32, READ 30 00 → 02 A8)")
    func crcA() {
        #expect(iso14443CRCA([0x60]) == [0xF8, 0x32])
        #expect(iso14443CRCA([0x30, 0x00]) == [0x02, 0xA8])
    }
}

private struct EchoType2: PN532Type2Responder {
    mutating func respond(to frame: [UInt8]) -> Type2Answer {
        switch frame.first {
        case 0x60: .data([0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x11, 0x03])
        case 0xA2: .ack
        case 0x30: .data([UInt8](repeating: 0xAB, count: 16))
        default: .nak(0x0)
        }
    }
    mutating func halt() {}
    mutating func wakeUp() {}
}

@Suite("PN532 command dispatcher")
struct PN532ChipTests {
    private func card() -> PN532Card {
        PN532Card(uid: [0x04, 1, 2, 3, 4, 5, 6], atqa: [0x44, 0x00], sak: 0, function: .type2(EchoType2()))
    }

    @Test("ACK then answer for Diagnose, GetFirmwareVersion, SAMConfiguration")
    func basics() {
        var chip = PN532Chip()
        let out = chip.receive(hostFrame([0x00, 0x00, 0x6C, 0x69, 0x62, 0x6E, 0x66, 0x63]))
        #expect(Array(out.prefix(6)) == PN532FrameEncoder.ack)
        #expect(responses(out) == [[0x01, 0x00, 0x6C, 0x69, 0x62, 0x6E, 0x66, 0x63]])
        #expect(responses(chip.receive(hostFrame([0x02]))) == [[0x03, 0x32, 0x01, 0x06, 0x07]])
        #expect(responses(chip.receive(hostFrame([0x14, 0x01]))) == [[0x15]])
    }

    @Test("An unknown command gets ACK and the error frame")
    func unknownCommand() {
        var chip = PN532Chip()
        #expect(chip.receive(hostFrame([0x58])) == PN532FrameEncoder.ack + PN532FrameEncoder.errorFrame)
    }

    @Test("The register file stores writes and answers multi-address reads in order")
    func registers() {
        var chip = PN532Chip()
        _ = chip.receive(hostFrame([0x08, 0x63, 0x02, 0x80, 0x63, 0x3E, 0x11, 0xFF, 0x01, 0x22]))
        #expect(
            responses(chip.receive(hostFrame([0x06, 0x63, 0x3E, 0x63, 0x02, 0x63, 0x01]))) == [
                [0x07, 0x11, 0x80, 0x00]
            ])
        #expect(chip.register(0x6302) == 0x80)
    }

    @Test("With CRC off in TxMode/RxMode the host's CRC is checked and the tag's CRC comes back")
    func crcBits() {
        var chip = PN532Chip()
        _ = chip.present(card())
        _ = chip.receive(hostFrame([0x4A, 0x01, 0x00]))
        // CRC off (nfc-mfultralight's GET_VERSION): 42 60 F8 32
        _ = chip.receive(hostFrame([0x08, 0x63, 0x02, 0x00, 0x63, 0x03, 0x00]))
        let version: [UInt8] = [0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x11, 0x03]
        #expect(
            responses(chip.receive(hostFrame([0x42, 0x60, 0xF8, 0x32]))) == [
                [0x43, 0x00] + version + iso14443CRCA(version)
            ])
        // A wrong CRC from the host: the tag stays silent.
        #expect(responses(chip.receive(hostFrame([0x42, 0x60, 0x00, 0x00]))) == [[0x43, 0x01]])
        // A 4-bit ACK to WRITE comes back as one byte.
        let write: [UInt8] = [0xA2, 0x04, 1, 2, 3, 4]
        #expect(responses(chip.receive(hostFrame([0x42] + write + iso14443CRCA(write)))) == [[0x43, 0x00, 0x0A]])
        // CRC on again: the chip appends and strips it.
        _ = chip.receive(hostFrame([0x08, 0x63, 0x02, 0x80, 0x63, 0x03, 0x80]))
        #expect(responses(chip.receive(hostFrame([0x42, 0x60]))) == [[0x43, 0x00] + version])
    }

    @Test("No card: InListPassiveTarget answers NbTg 0 at once; probes of absent types get status 01")
    func noCard() {
        var chip = PN532Chip()
        #expect(responses(chip.receive(hostFrame([0x4A, 0x01, 0x00]))) == [[0x4B, 0x00]])
        _ = chip.receive(hostFrame([0x08, 0x63, 0x02, 0x83, 0x63, 0x03, 0x83]))
        #expect(responses(chip.receive(hostFrame([0x42, 0x01, 0x0B, 0x3F, 0x80]))) == [[0x43, 0x01]])
        #expect(responses(chip.receive(hostFrame([0x40, 0x01, 0x30, 0x00]))) == [[0x41, 0x01]])
    }

    @Test("An endless InAutoPoll waits for a card; a host ACK drops it silently")
    func endlessPoll() {
        var chip = PN532Chip()
        #expect(chip.receive(hostFrame([0x60, 0xFF, 0x02, 0x20, 0x10])) == PN532FrameEncoder.ack)
        let answer = responses(chip.present(card()))
        #expect(answer == [[0x61, 0x01, 0x10, 0x0C, 0x01, 0x00, 0x44, 0x00, 0x07, 0x04, 1, 2, 3, 4, 5, 6]])
        var idle = PN532Chip()
        _ = idle.receive(hostFrame([0x60, 0xFF, 0x02, 0x10]))
        #expect(idle.receive(PN532FrameEncoder.ack).isEmpty)
        #expect(idle.present(card()).isEmpty)
    }

    @Test("A host ACK after a command aborts it: its answer is never sent, the next command gets its own (UM §6.2.1.3)")
    func ackAbortsTheRunningCommand() {
        var chip = PN532Chip()
        _ = chip.present(card())
        _ = chip.receive(hostFrame([0x4A, 0x01, 0x00]))
        // A READ and the host's abort in one write: the chip's ACK of the READ, and nothing more.
        #expect(chip.receive(hostFrame([0x40, 0x01, 0x30, 0x04]) + PN532FrameEncoder.ack) == PN532FrameEncoder.ack)
        #expect(chip.aborts == 1)
        #expect(responses(chip.receive(hostFrame([0x02]))).map(\.first) == [0x03])
    }

    @Test(
        "A command written after another whose answer is not out yet cancels that answer (the host gave up and flushes); the first still ran"
    )
    func newCommandSupersedesUnsentAnswers() throws {
        var chip = PN532Chip()
        let file = try TagFile.load(path: TagFileToDeviceTests.tagsDirectory + "/ntag215-uri.json")
        _ = chip.present(try PN532Card(tagFile: file))
        _ = chip.receive(hostFrame([0x4A, 0x01, 0x00]))
        // A WRITE of page 4 and then GetFirmwareVersion in one write: one ACK and the firmware's answer.
        let out = chip.receive(hostFrame([0x40, 0x01, 0xA2, 0x04, 0xDE, 0xAD, 0xBE, 0xEF]) + hostFrame([0x02]))
        #expect(responses(out).map(\.first) == [0x03])
        #expect(Array(out.prefix(6)) == PN532FrameEncoder.ack)
        #expect(Array(out.dropFirst(6).prefix(6)) != PN532FrameEncoder.ack, "one ACK, the WRITE's is gone")
        #expect(chip.commandsTaken >= 3)
        // The WRITE reached the tag all the same, as it would have on a chip that answered in time.
        let read = responses(chip.receive(hostFrame([0x40, 0x01, 0x30, 0x04]))).first ?? []
        #expect(Array(read.dropFirst(2).prefix(4)) == [0xDE, 0xAD, 0xBE, 0xEF], "\(read)")
    }

    @Test(
        "A finite InAutoPoll polls PollNr × Period × 150 ms per type (UM0701-02 §7.3.13), then answers no target; a card first ends it"
    )
    func finitePoll() {
        var chip = PN532Chip()
        #expect(chip.receive(hostFrame([0x60, 0x02, 0x01, 0x20, 0x10])) == PN532FrameEncoder.ack)
        let poll = chip.finitePoll
        #expect(poll?.duration == .milliseconds(600), "2 polls × 150 ms × 2 types")
        #expect(responses(chip.pollTimeElapsed(serial: poll?.serial ?? -1)) == [[0x61, 0x00]])
        #expect(chip.finitePoll == nil)
        let twice = chip.pollTimeElapsed(serial: poll?.serial ?? -1)
        #expect(twice.isEmpty, "answered once")
        _ = chip.receive(hostFrame([0x60, 0x01, 0x01, 0x10]))
        let second = chip.finitePoll
        #expect(second != nil && second?.serial != poll?.serial)
        let found = responses(chip.present(card())).first ?? []
        #expect(Array(found.prefix(3)) == [0x61, 0x01, 0x10])
        let late = chip.pollTimeElapsed(serial: second?.serial ?? -1)
        #expect(late.isEmpty, "the card ended that poll")
        _ = chip.receive(hostFrame([0x60, 0x01, 0x01, 0x10]))
        #expect(chip.finitePoll == nil, "a card in the field answers at once")
    }

    @Test("Status bytes never carry bit 7 (NAD) or bit 6 (MI)")
    func statusBits() {
        var chip = PN532Chip()
        _ = chip.present(card())
        let commands: [[UInt8]] = [
            [0x4A, 0x01, 0x00], [0x40, 0x01, 0x30, 0x00], [0x40, 0x01, 0x99], [0x40, 0x02, 0x30],
            [0x42, 0x30, 0x00], [0x44, 0x00], [0x40, 0x01, 0x30, 0x00], [0x52, 0x00], [0x86], [0x8E, 0x90, 0x00],
            [0x16, 0xF0],
        ]
        for command in commands {
            for r in responses(chip.receive(hostFrame(command)))
            where r.count > 1 && [0x41, 0x43, 0x45, 0x53, 0x87, 0x8F, 0x17].contains(r[0]) {
                #expect(r[1] & 0xC0 == 0, "\(command) → \(r)")
            }
        }
    }

    @Test("Target mode: RATS releases TgInitAsTarget, TgGetData feeds the script, then status 29")
    func targetMode() {
        var chip = PN532Chip()
        let initAsTarget: [UInt8] = [0x8C, 0x05, 0x04, 0x00, 0x00, 0xB0, 0x0B, 0x20] + [UInt8](repeating: 0, count: 30)
        #expect(chip.receive(hostFrame(initAsTarget)) == PN532FrameEncoder.ack)
        #expect(
            responses(
                chip.startReader(
                    PN532ReaderScript(steps: [
                        .init(command: [0x00, 0xB0, 0x00, 0x00, 0x02], expectedResponse: [0x00, 0x10, 0x90, 0x00])
                    ]))) == [[0x8D, 0x08, 0xE0, 0x80]])
        #expect(responses(chip.receive(hostFrame([0x86]))) == [[0x87, 0x00, 0x00, 0xB0, 0x00, 0x00, 0x02]])
        #expect(responses(chip.receive(hostFrame([0x8E, 0x00, 0x10, 0x90, 0x00]))) == [[0x8F, 0x00]])
        #expect(responses(chip.receive(hostFrame([0x86]))) == [[0x87, 0x29]])
        #expect(chip.readerExchanges.map(\.matched) == [true])
        #expect(chip.readerFinished)
    }
}

/// What nfcpy 1.0's `pn532` driver needs from the chip beyond libnfc: SetSerialBaudRate, the
/// CIU left at 106 kbps type A with CRC after InListPassiveTarget, and ISO-DEP run by the host
/// through InCommunicateThru when SetParameters leaves fAutomaticRATS off. Values by hand
/// from UM0701-02 and ISO/IEC 14443-4:2016 §7.5.4.
@Suite("PN532 chip for a host that runs ISO-DEP itself (nfcpy)")
struct PN532HostISODEPTests {
    /// An ISO-DEP card with FSCI 2 (FSC 32 bytes) answering `90 00` to SELECT, `6D 00` else.
    func isoDEPChip(fsci: UInt8 = 0x02) -> PN532Chip {
        var chip = PN532Chip()
        _ = chip.present(
            PN532Card(
                uid: [0x04, 0xA1, 0xB2, 0xC3], atqa: [0x04, 0x00], sak: 0x20,
                ats: [0x05, 0x70 | fsci, 0x77, 0x80, 0x02], function: .isoDEP(PN532TestAPDUCard())))
        return chip
    }

    func thru(_ chip: inout PN532Chip, _ frame: [UInt8]) -> [UInt8] {
        responses(chip.receive(hostFrame([0x42] + frame))).first ?? []
    }

    @Test("SetSerialBaudRate answers at once and records the speed; a bad index is an error frame")
    func serialBaudRate() {
        var chip = PN532Chip()
        #expect(responses(chip.receive(hostFrame([0x10, 0x07]))) == [[0x11]])
        #expect(chip.serialBaudRate == 921_600)
        #expect(responses(chip.receive(hostFrame([0x10, 0x09]))) == [[0x7F]])
        #expect(responses(chip.receive(hostFrame([0x10, 0x04]))) == [[0x11]])
        #expect(chip.serialBaudRate == 115_200)
    }

    @Test(
        "InListPassiveTarget leaves TxMode/RxMode at 106 kbps type A with CRC; no answer leaves REQA (26) in the FIFO")
    func ciuAfterSelect() {
        var chip = PN532Chip()
        _ = chip.receive(hostFrame([0x08, 0x63, 0x02, 0x00, 0x63, 0x03, 0x00]))
        _ = chip.receive(hostFrame([0x4A, 0x01, 0x00]))
        #expect(chip.register(0x6302) == 0x80 && chip.register(0x6303) == 0x80)
        #expect(chip.register(0x6339) == 0x26)
    }

    @Test("AutoRATS off: no ATS in the target data; RATS, I-blocks, R(NAK) and DESELECT through InCommunicateThru")
    func hostRunsISODEP() {
        var chip = isoDEPChip()
        _ = chip.receive(hostFrame([0x12, 0x00]))  // SetParameters: fAutomaticRATS off
        #expect(
            responses(chip.receive(hostFrame([0x4A, 0x01, 0x00]))) == [
                [0x4B, 0x01, 0x01, 0x00, 0x04, 0x20, 0x04, 0x04, 0xA1, 0xB2, 0xC3]
            ])
        // Before RATS the card is at 14443-3 level: an I-block gets no answer.
        #expect(thru(&chip, [0x02, 0x00, 0xA4, 0x04, 0x00]) == [0x43, 0x01])
        _ = chip.receive(hostFrame([0x4A, 0x01, 0x00]))
        #expect(thru(&chip, [0xE0, 0x80]) == [0x43, 0x00, 0x05, 0x72, 0x77, 0x80, 0x02])
        // I(0) SELECT → I(0) 90 00 (the card's block number 1 toggles to 0: rule 10).
        #expect(thru(&chip, [0x02, 0x00, 0xA4, 0x04, 0x00, 0x00]) == [0x43, 0x00, 0x02, 0x90, 0x00])
        // R(NAK)(1), not the card's number: R(ACK)(0) (rule 12). R(NAK)(0): the last block again (rule 11).
        #expect(thru(&chip, [0xB3]) == [0x43, 0x00, 0xA2])
        #expect(thru(&chip, [0xB2]) == [0x43, 0x00, 0x02, 0x90, 0x00])
        // I(1) anything else → I(1) 6D 00.
        #expect(thru(&chip, [0x03, 0x80, 0x10, 0x00, 0x00]) == [0x43, 0x00, 0x03, 0x6D, 0x00])
        // S(DESELECT) is answered, then the card is silent.
        #expect(thru(&chip, [0xC2]) == [0x43, 0x00, 0xC2])
        #expect(thru(&chip, [0x02, 0x00, 0xA4, 0x04, 0x00, 0x00]) == [0x43, 0x01])
    }

    @Test("Chaining both ways at FSC 32 / FSD 32: R(ACK) to each chained I-block, the R-APDU in 29-byte parts")
    func chaining() {
        struct Echo: PN532APDUResponder {
            mutating func respond(to apdu: [UInt8]) -> [UInt8] { apdu + [0x90, 0x00] }
        }
        var chip = PN532Chip()
        _ = chip.present(
            PN532Card(
                uid: [0x04, 0xA1, 0xB2, 0xC3], atqa: [0x04, 0x00], sak: 0x20,
                ats: [0x05, 0x72, 0x77, 0x80, 0x02], function: .isoDEP(Echo())))
        _ = chip.receive(hostFrame([0x12, 0x00]))
        _ = chip.receive(hostFrame([0x4A, 0x01, 0x00]))
        _ = thru(&chip, [0xE0, 0x20])  // FSDI 2: the host takes 32-byte frames
        let apdu = [UInt8](0..<40)
        // PCD chaining: I(0)+chaining with 29 bytes → R(ACK)(0); I(1) with the last 11 → the answer.
        #expect(thru(&chip, [0x12] + apdu[0..<29]) == [0x43, 0x00, 0xA2])
        let first = thru(&chip, [0x03] + apdu[29...])
        // 42 answer bytes at FSD 32 (PCB + 29 + CRC): I(1)+chaining with 29, then I(0) with 13.
        #expect(first == [0x43, 0x00, 0x13] + apdu[0..<29])
        #expect(thru(&chip, [0xA2]) == [0x43, 0x00, 0x02] + apdu[29...] + [0x90, 0x00])
    }

    @Test("AutoRATS on (libnfc): the chip sends RATS and runs the blocks for InDataExchange, chaining at FSC")
    func chipRunsISODEP() {
        var chip = isoDEPChip(fsci: 0x00)  // FSC 16: 13 bytes per I-block
        _ = chip.receive(hostFrame([0x12, 0x10]))
        let listed = responses(chip.receive(hostFrame([0x4A, 0x01, 0x00]))).first ?? []
        #expect(listed.suffix(5) == [0x05, 0x70, 0x77, 0x80, 0x02])
        let select: [UInt8] = [0x00, 0xA4, 0x04, 0x00, 0x07, 0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01, 0x00]
        #expect(responses(chip.receive(hostFrame([0x40, 0x01] + select + select))) == [[0x41, 0x00, 0x90, 0x00]])
        #expect(responses(chip.receive(hostFrame([0x40, 0x01, 0x80, 0x10]))) == [[0x41, 0x00, 0x6D, 0x00]])
        // InDeselect sends S(DESELECT): the card is halted, InListPassiveTarget finds nobody.
        #expect(responses(chip.receive(hostFrame([0x44, 0x01]))) == [[0x45, 0x00]])
        #expect(responses(chip.receive(hostFrame([0x4A, 0x01, 0x00]))) == [[0x4B, 0x00]])
    }
}
