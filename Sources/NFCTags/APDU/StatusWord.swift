// ISO/IEC 7816-4:2020 §5.6: the status bytes SW1 SW2 that end every response APDU.

/// The two status bytes SW1 SW2 ending a response APDU (ISO/IEC 7816-4:2020 §5.6, table 6).
///
/// An open set: any 16-bit value is representable; the common ones are named static
/// members, and ``name`` describes any value (families such as `61xx`, `6Cxx`, `63Cx`
/// included). `rawValue` is `SW1 << 8 | SW2`.
public struct StatusWord: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// The status word `sw1 sw2`.
    public init(sw1: UInt8, sw2: UInt8) { rawValue = UInt16(sw1) << 8 | UInt16(sw2) }

    public var sw1: UInt8 { UInt8(rawValue >> 8) }
    public var sw2: UInt8 { UInt8(rawValue & 0xFF) }
    /// The two bytes as they end a response APDU.
    public var bytes: [UInt8] { [sw1, sw2] }

    /// `9000`: normal processing, no further qualification.
    public static let success = StatusWord(rawValue: 0x9000)
    /// `6282`: end of file or record reached before reading Ne bytes (warning; data follow).
    public static let endOfFileReached = StatusWord(rawValue: 0x6282)
    /// `6700`: wrong length (Lc or Le inconsistent with the command, or a malformed APDU).
    public static let wrongLength = StatusWord(rawValue: 0x6700)
    /// `6981`: command incompatible with file structure.
    public static let incompatibleFileStructure = StatusWord(rawValue: 0x6981)
    /// `6982`: security status not satisfied (T4T: the file is read-only).
    public static let securityStatusNotSatisfied = StatusWord(rawValue: 0x6982)
    /// `6985`: conditions of use not satisfied.
    public static let conditionsNotSatisfied = StatusWord(rawValue: 0x6985)
    /// `6986`: command not allowed (no current EF).
    public static let commandNotAllowed = StatusWord(rawValue: 0x6986)
    /// `6A80`: incorrect parameters in the command data field.
    public static let wrongData = StatusWord(rawValue: 0x6A80)
    /// `6A81`: function not supported.
    public static let funcNotSupported = StatusWord(rawValue: 0x6A81)
    /// `6A82`: file or application not found.
    public static let fileNotFound = StatusWord(rawValue: 0x6A82)
    /// `6A84`: not enough memory space in the file.
    public static let notEnoughMemory = StatusWord(rawValue: 0x6A84)
    /// `6A86`: incorrect parameters P1-P2.
    public static let wrongParameters = StatusWord(rawValue: 0x6A86)
    /// `6A88`: referenced data or reference data not found.
    public static let referencedDataNotFound = StatusWord(rawValue: 0x6A88)
    /// `6B00`: wrong parameters P1-P2 (for READ/UPDATE BINARY: offset outside the EF).
    public static let wrongP1P2 = StatusWord(rawValue: 0x6B00)
    /// `6D00`: instruction code not supported or invalid.
    public static let insNotSupported = StatusWord(rawValue: 0x6D00)
    /// `6E00`: class not supported.
    public static let claNotSupported = StatusWord(rawValue: 0x6E00)
    /// `6F00`: no precise diagnosis.
    public static let noInformation = StatusWord(rawValue: 0x6F00)

    /// `61xx`: `available` more response bytes can be fetched with GET RESPONSE
    /// (`00` means 256 or more).
    public static func moreData(_ available: UInt8) -> StatusWord { StatusWord(sw1: 0x61, sw2: available) }
    /// `6Cxx`: wrong Le field; `exactLength` is the Ne the card can answer (`00` = 256).
    public static func wrongLe(_ exactLength: UInt8) -> StatusWord { StatusWord(sw1: 0x6C, sw2: exactLength) }
    /// `63Cx`: verification failed, `retries` (0–15) tries left.
    public static func verificationFailed(retries: UInt8) -> StatusWord {
        StatusWord(sw1: 0x63, sw2: 0xC0 | (retries & 0x0F))
    }

    /// `true` for `9000` only: the one status a command succeeded without qualification.
    /// (`61xx` also means "processed, more data waiting"; see ``isNormalProcessing``.)
    public var isSuccess: Bool { rawValue == 0x9000 }
    /// `true` for `9000` and `61xx` (ISO/IEC 7816-4 "normal processing").
    public var isNormalProcessing: Bool { isSuccess || sw1 == 0x61 }
    /// `true` for the warning families `62xx` and `63xx` (processing went on; data may follow).
    public var isWarning: Bool { sw1 == 0x62 || sw1 == 0x63 }

    /// The ISO/IEC 7816-4 meaning of this status word, or of its family when it is not
    /// one of the named values (`"6A99: wrong parameters P1-P2 (unknown qualifier)"` style).
    public var name: String {
        if let known = Self.names[rawValue] { return known }
        switch sw1 {
        case 0x61: return "more data available (\(sw2 == 0 ? "256 or more" : String(sw2)) bytes)"
        case 0x6C: return "wrong Le (exact length \(sw2 == 0 ? 256 : Int(sw2)))"
        case 0x63 where sw2 & 0xF0 == 0xC0: return "verification failed (\(sw2 & 0x0F) tries left)"
        case 0x62: return "warning, non-volatile memory unchanged"
        case 0x63: return "warning, non-volatile memory changed"
        case 0x64: return "execution error, non-volatile memory unchanged"
        case 0x65: return "execution error, non-volatile memory changed"
        case 0x66: return "security-related issue"
        case 0x68: return "functions in CLA not supported"
        case 0x69: return "command not allowed"
        case 0x6A: return "wrong parameters P1-P2"
        case 0x90...0x9F: return "proprietary status"
        default: return "unknown status"
        }
    }

    /// `"6A82 (file or application not found)"`.
    public var description: String { "\(bytes.hexString()) (\(name))" }

    private static let names: [UInt16: String] = [
        0x9000: "success",
        0x6200: "warning, no information given",
        0x6281: "part of returned data may be corrupted",
        0x6282: "end of file reached before reading Ne bytes",
        0x6283: "selected file deactivated",
        0x6284: "file control information not formatted",
        0x6300: "warning, no information given (memory changed)",
        0x6381: "file filled up by the last write",
        0x6400: "execution error",
        0x6581: "memory failure",
        0x6700: "wrong length",
        0x6800: "functions in CLA not supported",
        0x6881: "logical channel not supported",
        0x6882: "secure messaging not supported",
        0x6900: "command not allowed",
        0x6981: "command incompatible with file structure",
        0x6982: "security status not satisfied",
        0x6983: "authentication method blocked",
        0x6984: "reference data not usable",
        0x6985: "conditions of use not satisfied",
        0x6986: "command not allowed (no current EF)",
        0x6987: "expected secure messaging data objects missing",
        0x6988: "incorrect secure messaging data objects",
        0x6A80: "incorrect parameters in the command data field",
        0x6A81: "function not supported",
        0x6A82: "file or application not found",
        0x6A83: "record not found",
        0x6A84: "not enough memory space in the file",
        0x6A85: "Nc inconsistent with TLV structure",
        0x6A86: "incorrect parameters P1-P2",
        0x6A87: "Nc inconsistent with parameters P1-P2",
        0x6A88: "referenced data not found",
        0x6A89: "file already exists",
        0x6A8A: "DF name already exists",
        0x6B00: "wrong parameters P1-P2 (offset outside the EF)",
        0x6D00: "instruction not supported or invalid",
        0x6E00: "class not supported",
        0x6F00: "no precise diagnosis",
    ]
}
