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
