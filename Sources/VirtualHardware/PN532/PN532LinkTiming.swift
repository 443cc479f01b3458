// The link-timing model of the virtual PN532 (`nfcbench virtual pn532 --timing real`): how
// long a real PN532 on a UART, with a tag 106 kbit/s away, takes for what the virtual one
// does at once. Every constant says where it comes from (documented, reported or assumed).
// A constant changes only with a better source, never to move a measured ratio.

/// The constants of the link-timing model, each with its source.
public enum PN532LinkConstants {
    // MARK: Host link (UART)

    /// Bit times per byte on the host link: a start bit, 8 data bits, no parity, 1 stop bit
    /// (8N1). Documented: libnfc 1.8.0 `libnfc/buses/uart.c` `uart_open` sets
    /// `c_cflag = CS8 | CLOCAL | CREAD` (8 data bits, no `PARENB`, no `CSTOPB`), and the
    /// PN532's HSU frames bytes the same way (UM0701-02 §6, host interfaces).
    public static let uartBitsPerByte = 10

    /// The host link's speed until SetSerialBaudRate changes it. Documented: libnfc 1.8.0
    /// `libnfc/drivers/pn532_uart.c` `PN532_UART_DEFAULT_SPEED` = 115 200; UM0701-02 §7.2.9
    /// (SetSerialBaudRate: the chip starts at 115 200 baud).
    public static let defaultBaudRate = 115_200

    /// What the PN532's firmware spends on one command besides the wire and the air: from
    /// the command's last byte to its ACK, and from the end of the RF exchange to the
    /// response. Assumed: zero. UM0701-02 publishes no handling time, so the model counts
    /// only the UART and the RF link; that favours tools that send many small commands
    /// (every round trip is as cheap as it can be), never one that sends few.
    public static let commandHandling: Duration = .zero

    // MARK: RF link, ISO/IEC 14443 type A at 106 kbit/s

    /// The carrier frequency fc, 13.56 MHz. Documented: ISO/IEC 14443-2 §6 (fc = 13.56 MHz ± 7 kHz).
    public static let carrierHz = 13_560_000

    /// Carrier cycles per bit at 106 kbit/s: the bit duration is 128/fc ≈ 9.44 µs.
    /// Documented: ISO/IEC 14443-2 §8 (type A signal interface: bit rate fc/128 both ways).
    public static let cyclesPerBit = 128

    /// Bits per byte of a standard frame: 8 data bits and an odd parity bit. Documented:
    /// ISO/IEC 14443-3 §6, frame formats (standard frame).
    public static let bitsPerFrameByte = 9

    /// A PCD (reader) frame's start and end: S (1 bit) and E (logic 0 followed by no
    /// modulation, 2 bit durations). Documented: ISO/IEC 14443-2 §8 (Modified Miller
    /// sequences) and ISO/IEC 14443-3 §6, frame formats; checked against the NTAG213/215/216 data sheet
    /// Rev. 3.2 §10.2, Figure "READ command": the 4-byte READ takes 368 µs = 39 bits.
    public static let pcdFrameOverheadBits = 3

    /// A PICC (tag) frame's start and end: S (1 bit) and E (no subcarrier for 1 bit duration).
    /// Documented: ISO/IEC 14443-2 §8 (Manchester coding, E) and ISO/IEC 14443-3 §6; checked against the
    /// same figure: the 18-byte READ answer takes 1548 µs = 164 bits.
    public static let piccFrameOverheadBits = 2

    /// A short frame (REQA `26`, WUPA `52`): S, 7 data bits, E. Documented: ISO/IEC 14443-3 §6, frame formats (short frame).
    public static let shortFrameBits = 10

    /// A 4-bit ACK or NAK: S, 4 bits, E. Documented: NTAG213/215/216 data sheet Rev. 3.2
    /// §10.4, Figure "WRITE command": the ACK takes 57 µs = 6 bits.
    public static let fourBitAnswerBits = 6

    /// The frame delay time from PCD to PICC is (n × 128 + 84)/fc when the PCD's last bit is
    /// 1 and (n × 128 + 20)/fc when it is 0, n = 9 for REQA, WUPA, ANTICOLLISION and SELECT
    /// and the least n for other commands. Documented: ISO/IEC 14443-3 §6, frame delay time PCD to PICC; NTAG21x
    /// answers READ, FAST_READ and GET_VERSION with n = 9 (data sheet §9.2 and §10, "TACK/NAK
    /// min n=9"). Assumed: every tag in the model answers at this least delay (a real ISO-DEP
    /// card computing its answer takes longer, within the FWT its ATS announces).
    public static let frameDelayN = 9
    public static let frameDelayLastBitOneCycles = 84
    public static let frameDelayLastBitZeroCycles = 20

    /// The least frame delay time from PICC to PCD, 1172/fc ≈ 86 µs: the reader's next frame
    /// comes no sooner. Documented: ISO/IEC 14443-3 §6, frame delay time PICC to PCD.
    public static let piccToPCDCycles = 1172

    /// A PICC accepts a request within 5 ms of entering an unmodulated field, so an
    /// activation starts no sooner after the field comes on. Documented: ISO/IEC 14443-3 §5
    /// (initial dialogue: "within 5 ms").
    public static let fieldOnGuard: Duration = .milliseconds(5)

    /// How long the chip waits for a tag that does not answer, by RFConfiguration item 2's
    /// fRetryTimeout code: `00` no wait, n → 100 µs × 2ⁿ⁻¹ (`0A` = 51.2 ms, the power-on value;
    /// `10` = 3.28 s). Documented: UM0701-02 §7.3.1 (RFConfiguration, CfgItem 2, timeout table).
    public static func retryTimeout(code: UInt8) -> Duration {
        guard code > 0 else { return .zero }
        return .microseconds(100 << Int(min(code, 0x10) - 1))
    }

    /// A REQA nobody answers: the short frame, then the frame delay (n = 9, REQA ends with a
    /// 0 bit) and the time a 2-byte ATQA would take, after which the reader knows none came.
    /// Derived from the documented constants above (ISO/IEC 14443-3 §6: the ATQA comes at
    /// exactly that delay); the PN532's own listening window is not published.
    public static var unansweredRequest: Duration {
        PN532LinkTime.rfBits(shortFrameBits)
            + PN532LinkTime.cycles(frameDelayN * cyclesPerBit + frameDelayLastBitZeroCycles)
            + PN532LinkTime.piccFrame(bytes: 2)
    }

    // MARK: Tags

    /// The EEPROM programming time of an NTAG21x or Ultralight page: a WRITE (and the second
    /// part of a COMPATIBILITY_WRITE) is ACKed when it has passed. Documented: NTAG213/215/216
    /// data sheet Rev. 3.2 §14, Table "EEPROM characteristics" (t_cy, write time, 4.1 ms),
    /// within §10.4's "WRITE timing" (ACK at most TTimeOut = 10 ms after the command).
    public static let tagWriteTime: Duration = .microseconds(4100)
}

/// Durations on the two links, from ``PN532LinkConstants``: pure arithmetic, no clock.
public enum PN532LinkTime {
    /// `bits` bit durations at 106 kbit/s (128/fc each).
    public static func rfBits(_ bits: Int) -> Duration {
        cycles(bits * PN532LinkConstants.cyclesPerBit)
    }

    /// `n` cycles of the 13.56 MHz carrier.
    public static func cycles(_ n: Int) -> Duration {
        .nanoseconds(Int64(n) * 1_000_000_000 / Int64(PN532LinkConstants.carrierHz))
    }

    /// A reader's standard frame of `bytes` bytes on the air (CRC_A included when sent).
    public static func pcdFrame(bytes: Int) -> Duration {
        rfBits(PN532LinkConstants.pcdFrameOverheadBits + PN532LinkConstants.bitsPerFrameByte * bytes)
    }

    /// A tag's standard frame of `bytes` bytes on the air (CRC_A included).
    public static func piccFrame(bytes: Int) -> Duration {
        rfBits(PN532LinkConstants.piccFrameOverheadBits + PN532LinkConstants.bitsPerFrameByte * bytes)
    }

    /// The frame delay time PCD → PICC after a frame whose last byte is `lastByte`: the last
    /// bit on the air is that byte's odd parity bit.
    public static func frameDelay(afterLastByte lastByte: UInt8) -> Duration {
        let parityBitIsOne = lastByte.nonzeroBitCount % 2 == 0
        let tail =
            parityBitIsOne
            ? PN532LinkConstants.frameDelayLastBitOneCycles : PN532LinkConstants.frameDelayLastBitZeroCycles
        return cycles(PN532LinkConstants.frameDelayN * PN532LinkConstants.cyclesPerBit + tail)
    }

    /// `bytes` bytes on the UART at `baud` (8N1).
    public static func uart(bytes: Int, baud: Int) -> Duration {
        .nanoseconds(Int64(bytes * PN532LinkConstants.uartBitsPerByte) * 1_000_000_000 / Int64(max(baud, 1)))
    }
}

/// What one host command made the chip do on the air: the figure the link-timing model adds
/// between the command's last byte and the response's first.
public struct PN532CommandAirTime: Sendable, Equatable {
    /// The RF exchange: reader frames, frame delay times, tag answers, a silent tag's wait,
    /// an EEPROM write.
    public var rf: Duration = .zero
    /// Reader frames sent so far for this command.
    public var frames = 0
    /// The command switched the RF field on (RFConfiguration, or an activation with it off).
    public var fieldSwitchedOn = false
    /// The command switched the RF field off.
    public var fieldSwitchedOff = false
    /// The command activates a tag: it starts no sooner than the field-on guard allows.
    public var activates = false

    public init() {}
}

/// Bytes the chip writes back to the host, with what their command did on the air.
public struct PN532ChipOutput: Sendable, Equatable {
    public var bytes: [UInt8]
    /// The ACK frame, sent as soon as the command frame is checked.
    public var isAcknowledgement: Bool
    public var air: PN532CommandAirTime

    public init(bytes: [UInt8], isAcknowledgement: Bool, air: PN532CommandAirTime) {
        self.bytes = bytes
        self.isAcknowledgement = isAcknowledgement
        self.air = air
    }
}

/// The virtual PN532's timing: `none` answers as fast as the pseudo-terminal carries bytes
/// (tests); `real` holds every byte and answer back as a real PN532 on a UART would
/// (``PN532LinkConstants``): each host byte takes its 8N1 time at the chip's baud rate, the
/// ACK and the response take theirs, and the response waits for the RF exchange.
public enum PN532LinkTiming: String, Sendable, CaseIterable {
    case none
    case real
}

/// The link-timing model's clock arithmetic for one chip: when each byte the chip writes
/// would have arrived at the host. Pure: instants in, instants out.
public struct PN532LinkSchedule: Sendable {
    /// When the host-to-chip line is free again (the chip has the last byte so far).
    public private(set) var inputFreeAt: ContinuousClock.Instant
    /// When the chip-to-host line is free again.
    public private(set) var outputFreeAt: ContinuousClock.Instant
    /// When the RF field last came on (`nil` while it is off).
    public private(set) var fieldOnAt: ContinuousClock.Instant?

    public init(now: ContinuousClock.Instant) {
        inputFreeAt = now
        outputFreeAt = now
    }

    /// `count` bytes from the host, written at `now` at `baud`: when the chip has the last one.
    public mutating func received(_ count: Int, at now: ContinuousClock.Instant, baud: Int) -> ContinuousClock.Instant {
        inputFreeAt = max(now, inputFreeAt) + PN532LinkTime.uart(bytes: count, baud: baud)
        return inputFreeAt
    }

    /// When the last byte of `output` reaches the host, its command complete at `commandAt`.
    public mutating func due(
        _ output: PN532ChipOutput, commandAt: ContinuousClock.Instant, baud: Int
    ) -> ContinuousClock.Instant {
        var ready = commandAt + PN532LinkConstants.commandHandling
        if !output.isAcknowledgement {
            var rfStart = ready
            if output.air.fieldSwitchedOn { fieldOnAt = rfStart }
            if output.air.activates, let on = fieldOnAt { rfStart = max(rfStart, on + PN532LinkConstants.fieldOnGuard) }
            if output.air.fieldSwitchedOff { fieldOnAt = nil }
            ready = rfStart + output.air.rf + PN532LinkConstants.commandHandling
        }
        outputFreeAt = max(ready, outputFreeAt) + PN532LinkTime.uart(bytes: output.bytes.count, baud: baud)
        return outputFreeAt
    }
}
