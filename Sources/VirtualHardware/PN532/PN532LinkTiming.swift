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
