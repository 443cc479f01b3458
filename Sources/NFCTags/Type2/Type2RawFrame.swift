// Raw ISO/IEC 14443-3 frames to a Type 2 tag (`nfcbench raw`), as Proxmark3's `hf 14a raw`
// sends them: the frame without CRC_A, the CRC added on the way (by the reader chip or the
// carrier), the answer named: data, ACK, a 4-bit NAK with its meaning, or silence.

/// What a raw frame is and what its answer means.
public enum Type2RawFrame {
    /// The commands that change a Type 2 tag (NTAG21x data sheet §10, MF0ULX1 §9, MF0ICU2 §7.5):
    /// sending one needs the user's leave. `nil` for a command that only reads.
    public static func changesTag(_ frame: [UInt8]) -> String? {
        switch frame.first {
        case 0xA2?: "WRITE (A2) writes a page"
        case 0xA0?: "COMPATIBILITY_WRITE (A0) writes a page"
        case 0xA9?: "WRITE_SIG (A9) writes the originality signature"
        case 0xAC?: "LOCK_SIG (AC) locks the originality signature"
        case 0xA5?: "INCR_CNT (A5) increments a one-way counter"
        case 0x1B?: "PWD_AUTH (1B) opens the password-protected pages to writes (and counts failures)"
        default: nil
        }
    }

    /// The command's name, when it is one of the Type 2 / NTAG21x / Ultralight commands.
    public static func name(_ frame: [UInt8]) -> String? {
        switch frame.first {
        case 0x30?: "READ"
        case 0x3A?: "FAST_READ"
        case 0x60?: "GET_VERSION"
        case 0x3C?: "READ_SIG"
        case 0x39?: "READ_CNT"
        case 0x3E?: "CHECK_TEARING_EVENT"
        case 0x4B?: "VCSL"
        case 0x1A?: "AUTHENTICATE"
        case 0x50?: "HLTA"
        case 0xC2?: "SECTOR_SELECT"
        case 0xA2?: "WRITE"
        case 0xA0?: "COMPATIBILITY_WRITE"
        case 0xA9?: "WRITE_SIG"
        case 0xAC?: "LOCK_SIG"
        case 0xA5?: "INCR_CNT"
        case 0x1B?: "PWD_AUTH"
        default: nil
        }
    }

    /// The meaning of a 4-bit NAK (NTAG21x data sheet §9.3, MF0ULX1 §8.3).
    public static func nakMeaning(_ v: UInt8) -> String {
        switch v {
        case 0x0: "invalid argument (an invalid page address)"
        case 0x1: "parity or CRC error"
        case 0x4: "invalid authentication counter overflow"
        case 0x5: "EEPROM write error"
        default: "NAK value \(String(v, radix: 16, uppercase: true))"
        }
    }

    /// The answer as a word and its bytes for a person: `ACK`, `NAK 0x0 (invalid argument…)`,
    /// `no answer (timeout)`, or the data with the CRC_A it came with.
    public static func describe(_ answer: Type2Answer) -> String {
        switch answer {
        case .ack: "ACK (A)"
        case .nak(let v): "NAK \(String(v, radix: 16, uppercase: true)) (\(nakMeaning(v)))"
        case .silent: "no answer (timeout: the tag stayed silent; it is now idle or halted)"
        case .data(let d): "\(d.hexString(separator: " ")) [CRC \(iso14443CRCA(d).hexString(separator: " "))]"
        }
    }
}
