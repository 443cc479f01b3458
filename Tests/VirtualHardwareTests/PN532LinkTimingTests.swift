import NFCTags
import Testing
import VirtualHardware

/// The model's frame times against the figures the NTAG213/215/216 data sheet prints
/// (Rev. 3.2 §10.2 and §10.4 figures, given to the microsecond).
@Suite("PN532 link-timing constants (pure)")
struct PN532LinkTimingConstantsTests {
    static func micros(_ d: Duration) -> Double {
        Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12
    }

    @Test("READ: 4-byte command 368 µs, 18-byte answer 1548 µs (data sheet Figure 'READ command')")
    func readFrames() {
        #expect(abs(Self.micros(PN532LinkTime.pcdFrame(bytes: 4)) - 368) < 1)
        #expect(abs(Self.micros(PN532LinkTime.piccFrame(bytes: 18)) - 1548) < 1)
    }

    @Test("WRITE: 8-byte command 708 µs, 4-bit ACK 57 µs (data sheet Figure 'WRITE command')")
    func writeFrames() {
        #expect(abs(Self.micros(PN532LinkTime.pcdFrame(bytes: 8)) - 708) < 1)
        #expect(abs(Self.micros(PN532LinkTime.rfBits(PN532LinkConstants.fourBitAnswerBits)) - 57) < 1)
    }

    @Test("FDT PCD to PICC with n = 9: 1236/fc after a last bit 1, 1172/fc after a 0")
    func frameDelay() {
        // CRC_A byte 0x00 has an even number of ones: its odd parity bit is 1.
        #expect(abs(Self.micros(PN532LinkTime.frameDelay(afterLastByte: 0x00)) - 1236e6 / 13.56e6) < 0.01)
        #expect(abs(Self.micros(PN532LinkTime.frameDelay(afterLastByte: 0x01)) - 1172e6 / 13.56e6) < 0.01)
    }

    @Test("UART 8N1 at 115 200 baud: 86.8 µs a byte")
    func uartByte() {
        #expect(abs(Self.micros(PN532LinkTime.uart(bytes: 1, baud: PN532LinkConstants.defaultBaudRate)) - 86.8) < 0.1)
    }
}

/// What the chip reports for its air time, and the schedule's arithmetic, on a virtual clock.
@Suite("PN532 link-timing model (pure)")
struct PN532LinkScheduleTests {
    static func frame(_ payload: [UInt8]) -> [UInt8] {
        PN532FrameEncoder.informationFrame(tfi: 0xD4, payload: payload)
    }

    static func selectedNTAG() throws -> PN532Chip {
        var chip = PN532Chip()
        _ = chip.present(
            PN532Card(
                uid: [0x04, 0xA2, 0x3B, 0x91, 0x5C, 0x6E, 0x80], atqa: [0x44, 0x00], sak: 0x00,
                function: .type2(
                    try NTAG21xCore(
                        variant: .ntag215,
                        pages: NTAG21xCore.factoryPages(
                            variant: .ntag215, uid: [0x04, 0xA2, 0x3B, 0x91, 0x5C, 0x6E, 0x80]))
                )))
        _ = chip.receive(frame([0x4A, 0x01, 0x00]))
        return chip
    }

    @Test(
        "InDataExchange READ: ACK with no air time, then the response after the 4-byte command, FDT and 18-byte answer")
    func readAirTime() throws {
        var chip = try Self.selectedNTAG()
        let out = chip.receiveTimed(Self.frame([0x40, 0x01, 0x30, 0x04]))
        #expect(out.count == 2)
        #expect(out[0].isAcknowledgement && out[0].air.rf == .zero)
        let command: [UInt8] = [0x30, 0x04] + iso14443CRCA([0x30, 0x04])
        let expected =
            PN532LinkTime.pcdFrame(bytes: 4) + PN532LinkTime.frameDelay(afterLastByte: command[3])
            + PN532LinkTime.piccFrame(bytes: 18)
        #expect(out[1].air.rf == expected)
    }

    @Test("WRITE is ACKed after the tag's 4.1 ms write time, not at the least frame delay")
    func writeAirTime() throws {
        var chip = try Self.selectedNTAG()
        let out = chip.receiveTimed(Self.frame([0x40, 0x01, 0xA2, 0x04, 1, 2, 3, 4]))
        #expect(
            out.last?.air.rf
                == PN532LinkTime.pcdFrame(bytes: 8) + PN532LinkConstants.tagWriteTime
                + PN532LinkTime.rfBits(PN532LinkConstants.fourBitAnswerBits))
    }

    @Test("The schedule: host bytes at 8N1, the ACK as soon as the frame is in, the response after the air time")
    func schedule() throws {
        let t0 = ContinuousClock.now
        var s = PN532LinkSchedule(now: t0)
        let baud = 115_200
        let inDone = s.received(12, at: t0, baud: baud)
        #expect(inDone == t0 + PN532LinkTime.uart(bytes: 12, baud: baud))
        let ack = PN532ChipOutput(bytes: PN532FrameEncoder.ack, isAcknowledgement: true, air: .init())
        #expect(s.due(ack, commandAt: inDone, baud: baud) == inDone + PN532LinkTime.uart(bytes: 6, baud: baud))
        var air = PN532CommandAirTime()
        air.rf = .milliseconds(2)
        let response = PN532ChipOutput(bytes: Array(repeating: 0, count: 26), isAcknowledgement: false, air: air)
        // The response waits for the air (2 ms), which outlasts the ACK's 0.52 ms on the line.
        #expect(
            s.due(response, commandAt: inDone, baud: baud)
                == inDone + .milliseconds(2) + PN532LinkTime.uart(bytes: 26, baud: baud))
    }

    @Test("An activation waits for the 5 ms field-on guard after the field came on")
    func fieldGuard() {
        let t0 = ContinuousClock.now
        var s = PN532LinkSchedule(now: t0)
        var on = PN532CommandAirTime()
        on.fieldSwitchedOn = true
        _ = s.due(PN532ChipOutput(bytes: [0], isAcknowledgement: false, air: on), commandAt: t0, baud: 115_200)
        var activation = PN532CommandAirTime()
        activation.activates = true
        let due = s.due(
            PN532ChipOutput(bytes: [0], isAcknowledgement: false, air: activation), commandAt: t0 + .milliseconds(1),
            baud: 115_200)
        #expect(due == t0 + PN532LinkConstants.fieldOnGuard + PN532LinkTime.uart(bytes: 1, baud: 115_200))
    }
}
