// ISO/IEC 7816-3:2006 §8.2 Answer-to-Reset structure, and the ATRs a PC/SC reader builds for
// contactless cards (PC/SC Specification Part 3, §3.1.3.2.3 and its Supplemental Document).

/// Why bytes are not a well-formed ATR (ISO/IEC 7816-3 §8.2). Compares by ``code`` only.
public struct ATRError: Error, Hashable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// Fewer than 2 bytes (TS and T0).
        case tooShort
        /// TS is neither `3B` (direct convention) nor `3F` (inverse convention).
        case invalidTS
        /// The interface bytes, historical bytes or TCK announced are not all there.
        case truncated
        /// Bytes left after the last announced one.
        case trailingBytes
        /// More than 33 bytes (ISO/IEC 7816-3 §8.2.1; pcsc-lite `MAX_ATR_SIZE`).
        case tooLong
        /// The exclusive-or of T0 … TCK is not zero (§8.2.5).
        case checksumMismatch
        /// More than 15 historical bytes asked of a builder (T0's K is 4 bits).
        case historicalBytesTooLong
    }

    public let code: Code
    public let reason: String
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }
    public static func == (a: ATRError, b: ATRError) -> Bool { a.code == b.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
    public var description: String { "ATR error \(code): \(reason)" }
}

/// An Answer-to-Reset split into its ISO/IEC 7816-3 §8.2 fields, with the PC/SC Part 3
/// reading of contactless cards (``contactless``).
///
/// A PC/SC reader has no real ATR for a contactless card; it builds one: storage cards
/// (MIFARE, Type 2 tags, FeliCa…) get `3B 8F 80 01 80 4F 0C A0 00 00 03 06 SS NN NN 00 00 00 00 TCK`,
/// ISO/IEC 14443-4 cards `3B 8n 80 01 <historical bytes> TCK` where the historical bytes are
/// the ATS historical bytes (Type A) or the ATQB application data, protocol info and MBLI (Type B).
public struct ATR: Sendable, Hashable, CustomStringConvertible {
    /// TS: how the card encodes bits (§8.1). Bytes here are already decoded.
    public enum Convention: UInt8, Sendable, Hashable {
        case direct = 0x3B
        case inverse = 0x3F
    }

    /// One group of interface bytes TAi TBi TCi TDi (§8.2.3); absent bytes are `nil`.
    public struct InterfaceGroup: Sendable, Hashable {
        public var ta: UInt8?
        public var tb: UInt8?
        public var tc: UInt8?
        public var td: UInt8?
        public init(ta: UInt8? = nil, tb: UInt8? = nil, tc: UInt8? = nil, td: UInt8? = nil) {
            self.ta = ta
            self.tb = tb
            self.tc = tc
            self.td = td
        }
        /// The protocol type T announced by TDi's low nibble, `nil` when TDi is absent.
        public var protocolType: UInt8? { td.map { $0 & 0x0F } }
    }

    /// The whole ATR, TS through TCK.
    public let bytes: [UInt8]
    public let convention: Convention
    /// Groups 1, 2, … as announced by T0 and each TDi.
    public let interfaceGroups: [InterfaceGroup]
    /// T1 … TK (K = T0's low nibble), 0–15 bytes.
    public let historicalBytes: [UInt8]
    /// The check byte, present unless only T=0 is indicated (§8.2.5).
    public let tck: UInt8?

    /// Parses and checks an ATR.
    /// - Throws: ``ATRError`` (`.tooShort`, `.invalidTS`, `.truncated`, `.trailingBytes`,
    ///   `.tooLong`, `.checksumMismatch`).
    public init(bytes: [UInt8]) throws(ATRError) {
        guard bytes.count >= 2 else { throw ATRError(.tooShort, "an ATR has at least TS and T0") }
        guard bytes.count <= 33 else { throw ATRError(.tooLong, "\(bytes.count) bytes; at most 33") }
        guard let convention = Convention(rawValue: bytes[0]) else {
            throw ATRError(.invalidTS, "TS \(bytes[0..<1].hexString()) is neither 3B nor 3F")
        }
        var i = 1
        let t0 = bytes[i]
        i += 1
        let k = Int(t0 & 0x0F)
        var y = t0 >> 4
        var groups: [InterfaceGroup] = []
        var needsTCK = false
        func next(_ what: String) throws(ATRError) -> UInt8 {
            guard i < bytes.count else {
                throw ATRError(.truncated, "\(what) announced but the ATR ends at \(bytes.count) bytes")
            }
            defer { i += 1 }
            return bytes[i]
        }
        while true {
            let n = groups.count + 1
            var g = InterfaceGroup()
            if y & 0x1 != 0 { g.ta = try next("TA\(n)") }
            if y & 0x2 != 0 { g.tb = try next("TB\(n)") }
            if y & 0x4 != 0 { g.tc = try next("TC\(n)") }
            if y & 0x8 != 0 { g.td = try next("TD\(n)") }
            groups.append(g)
            guard let td = g.td else { break }
            if td & 0x0F != 0 { needsTCK = true }
            y = td >> 4
        }
        guard bytes.count >= i + k else {
            throw ATRError(.truncated, "\(k) historical bytes announced, \(bytes.count - i) left")
        }
        let historical = Array(bytes[i..<(i + k)])
        i += k
        var tck: UInt8? = nil
        if needsTCK {
            tck = try next("TCK")
            let x = bytes[1...].reduce(0, ^)
            guard x == 0 else {
                throw ATRError(
                    .checksumMismatch,
                    "TCK \(bytes[(i - 1)..<i].hexString()) leaves XOR \([x].hexString()), not 00")
            }
        }
        guard i == bytes.count else {
            throw ATRError(.trailingBytes, "\(bytes.count - i) byte(s) after the last announced one")
        }
        self.bytes = bytes
        self.convention = convention
        interfaceGroups = groups
        historicalBytes = historical
        self.tck = tck
    }

    /// The protocol types offered, in order (`[0]` when no TD1: T=0 implied), without repeats.
    public var protocols: [UInt8] {
        var out: [UInt8] = []
        for g in interfaceGroups { if let t = g.protocolType, !out.contains(t), t != 15 { out.append(t) } }
        return out.isEmpty ? [0] : out
    }

    /// What a PC/SC Part 3 reader says about the contactless card behind this ATR, or `nil`
    /// when the ATR is not in the Part 3 contactless form `3B 8n 80 01 … TCK`.
    public var contactless: PCSCContactlessCard? {
        guard convention == .direct, bytes[1] & 0xF0 == 0x80, interfaceGroups.count == 3,
            interfaceGroups[0] == InterfaceGroup(td: 0x80),
            interfaceGroups[1] == InterfaceGroup(td: 0x01),
            interfaceGroups[2] == InterfaceGroup(), tck != nil
        else { return nil }
        let h = historicalBytes
        if h.count == 15, Array(h[0..<8]) == Self.storagePrefix {
            return .storageCard(
                standard: PCSCStandard(rawValue: h[8]),
                cardName: PCSCCardName(rawValue: UInt16(h[9]) << 8 | UInt16(h[10])))
        }
        return .iso14443_4(historicalBytes: h)
    }

    /// The Part 3 storage-card ATR `3B 8F 80 01 80 4F 0C A0 00 00 03 06 SS NN NN 00 00 00 00 TCK`
    /// (20 bytes), as a PC/SC reader reports a MIFARE, Type 2 or FeliCa card.
    public static func storageCard(standard: PCSCStandard, cardName: PCSCCardName) -> ATR {
        let hist =
            storagePrefix + [
                standard.rawValue, UInt8(cardName.rawValue >> 8),
                UInt8(cardName.rawValue & 0xFF), 0, 0, 0, 0,
            ]
        return ATR(validated: contactlessBytes(hist))
    }

    /// The Part 3 ISO/IEC 14443-4 ATR `3B 8n 80 01 <historical bytes> TCK`.
    /// - Parameter historicalBytes: the ATS historical bytes (Type A) or ATQB application
    ///   data + protocol info + MBLI (Type B), 0–15 bytes.
    /// - Throws: ``ATRError/Code/historicalBytesTooLong`` beyond 15 bytes.
    public static func iso14443_4(historicalBytes: [UInt8]) throws(ATRError) -> ATR {
        guard historicalBytes.count <= 15 else {
            throw ATRError(.historicalBytesTooLong, "\(historicalBytes.count) bytes; T0 holds at most 15")
        }
        return ATR(validated: contactlessBytes(historicalBytes))
    }

    public var description: String { bytes.hexString(separator: " ") }

    /// Category indicator `80`, application identifier tag `4F`, length `0C`, RID
    /// `A0 00 00 03 06` (PC/SC Workgroup).
    static let storagePrefix: [UInt8] = [0x80, 0x4F, 0x0C, 0xA0, 0x00, 0x00, 0x03, 0x06]

    private static func contactlessBytes(_ hist: [UInt8]) -> [UInt8] {
        var b: [UInt8] = [0x3B, 0x80 | UInt8(hist.count), 0x80, 0x01] + hist
        b.append(b[1...].reduce(0, ^))
        return b
    }

    private init(validated bytes: [UInt8]) {
        self.bytes = bytes
        convention = .direct
        interfaceGroups = [InterfaceGroup(td: 0x80), InterfaceGroup(td: 0x01), InterfaceGroup()]
        historicalBytes = Array(bytes[4..<(bytes.count - 1)])
        tck = bytes.last
    }
}

/// A contactless card as a PC/SC Part 3 ATR describes it.
public enum PCSCContactlessCard: Sendable, Hashable {
    /// A memory card the reader drives with storage-card pseudo-APDUs (`FF B0`, `FF D6`…).
    case storageCard(standard: PCSCStandard, cardName: PCSCCardName)
    /// An ISO/IEC 14443-4 (ISO-DEP) card taking APDUs; the ATS or ATQB historical bytes.
    case iso14443_4(historicalBytes: [UInt8])
}

/// The "standard" byte SS of a Part 3 storage-card ATR: which air interface and layer the
/// reader used (PC/SC Part 3 Supplemental Document, table 3). Open: unknown values keep
/// their raw value.
public struct PCSCStandard: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let noInformation = PCSCStandard(rawValue: 0x00)
    public static let iso14443APart1 = PCSCStandard(rawValue: 0x01)
    public static let iso14443APart2 = PCSCStandard(rawValue: 0x02)
    /// ISO/IEC 14443-3 Type A: MIFARE Classic, Ultralight, NTAG (Type 2 tags).
    public static let iso14443APart3 = PCSCStandard(rawValue: 0x03)
    public static let iso14443BPart1 = PCSCStandard(rawValue: 0x05)
    public static let iso14443BPart2 = PCSCStandard(rawValue: 0x06)
    public static let iso14443BPart3 = PCSCStandard(rawValue: 0x07)
    public static let iso15693Part1 = PCSCStandard(rawValue: 0x09)
    public static let iso15693Part2 = PCSCStandard(rawValue: 0x0A)
    public static let iso15693Part3 = PCSCStandard(rawValue: 0x0B)
    public static let iso15693Part4 = PCSCStandard(rawValue: 0x0C)
    public static let contactI2C = PCSCStandard(rawValue: 0x0D)
    public static let contactExtendedI2C = PCSCStandard(rawValue: 0x0E)
    public static let contact2WBP = PCSCStandard(rawValue: 0x0F)
    public static let contact3WBP = PCSCStandard(rawValue: 0x10)
    /// FeliCa (JIS X 6319-4), e.g. Suica: `… 03 06 11 00 3B …`.
    public static let felica = PCSCStandard(rawValue: 0x11)
    public static let lowFrequency = PCSCStandard(rawValue: 0x40)

    public var name: String {
        switch rawValue {
        case 0x00: "no information given"
        case 0x01: "ISO 14443 A, part 1"
        case 0x02: "ISO 14443 A, part 2"
        case 0x03: "ISO 14443 A, part 3"
        case 0x05: "ISO 14443 B, part 1"
        case 0x06: "ISO 14443 B, part 2"
        case 0x07: "ISO 14443 B, part 3"
        case 0x09: "ISO 15693, part 1"
        case 0x0A: "ISO 15693, part 2"
        case 0x0B: "ISO 15693, part 3"
        case 0x0C: "ISO 15693, part 4"
        case 0x0D: "contact (7816-10) I2C"
        case 0x0E: "contact (7816-10) extended I2C"
        case 0x0F: "contact (7816-10) 2WBP"
        case 0x10: "contact (7816-10) 3WBP"
        case 0x11: "FeliCa"
        case 0x40: "low frequency contactless"
        default: "RFU (\([rawValue].hexString()))"
        }
    }
    public var description: String { name }
}

/// The card name NN NN of a Part 3 storage-card ATR (PC/SC Part 3 Supplemental Document,
/// table 4). Open: unknown values keep their raw value. Note that an NTAG21x reports
/// `0003` (Ultralight) too; GET_VERSION or the CC tells them apart.
public struct PCSCCardName: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let notGiven = PCSCCardName(rawValue: 0x0000)
    public static let mifareClassic1K = PCSCCardName(rawValue: 0x0001)
    public static let mifareClassic4K = PCSCCardName(rawValue: 0x0002)
    /// MIFARE Ultralight, and every Type 2 tag a reader can't tell from it (NTAG21x).
    public static let mifareUltralight = PCSCCardName(rawValue: 0x0003)
    public static let mifareMini = PCSCCardName(rawValue: 0x0026)
    public static let jewel = PCSCCardName(rawValue: 0x002F)
    public static let topaz = PCSCCardName(rawValue: 0x0030)
    public static let mifarePlusSL1_2K = PCSCCardName(rawValue: 0x0036)
    public static let mifarePlusSL1_4K = PCSCCardName(rawValue: 0x0037)
    public static let mifarePlusSL2_2K = PCSCCardName(rawValue: 0x0038)
    public static let mifarePlusSL2_4K = PCSCCardName(rawValue: 0x0039)
    public static let mifareUltralightC = PCSCCardName(rawValue: 0x003A)
    public static let felica = PCSCCardName(rawValue: 0x003B)
    public static let mifareUltralightEV1 = PCSCCardName(rawValue: 0x003D)

    public var name: String {
        rawValue == 0
            ? "not given"
            : Self.names[rawValue] ?? "unknown card name \([UInt8(rawValue >> 8), UInt8(rawValue & 0xFF)].hexString())"
    }
    public var description: String { name }

    private static let names: [UInt16: String] = [
        0x0001: "MIFARE Classic 1K", 0x0002: "MIFARE Classic 4K", 0x0003: "MIFARE Ultralight",
        0x0004: "SLE55R_XXXX", 0x0006: "SR176", 0x0007: "SRI X4K", 0x0008: "AT88RF020",
        0x0009: "AT88SC0204CRF", 0x000A: "AT88SC0808CRF", 0x000B: "AT88SC1616CRF",
        0x000C: "AT88SC3216CRF", 0x000D: "AT88SC6416CRF", 0x000E: "SRF55V10P",
        0x000F: "SRF55V02P", 0x0010: "SRF55V10S", 0x0011: "SRF55V02S", 0x0012: "TAG_IT",
        0x0013: "LRI512", 0x0014: "ICODE SLI", 0x0015: "TEMPSENS", 0x0016: "I.CODE1",
        0x0017: "PicoPass 2K", 0x0018: "PicoPass 2KS", 0x0019: "PicoPass 16K",
        0x001A: "PicoPass 16Ks", 0x001B: "PicoPass 16K(8x2)", 0x001C: "PicoPass 16KS(8x2)",
        0x001D: "PicoPass 32KS(16+16)", 0x001E: "PicoPass 32KS(16+8x2)",
        0x001F: "PicoPass 32KS(8x2+16)", 0x0020: "PicoPass 32KS(8x2+8x2)", 0x0021: "LRI64",
        0x0022: "I.CODE UID", 0x0023: "I.CODE EPC", 0x0024: "LRI12", 0x0025: "LRI128",
        0x0026: "MIFARE Mini", 0x0027: "my-d move (SLE 66R01P)", 0x0028: "my-d NFC (SLE 66RxxP)",
        0x0029: "my-d proximity 2 (SLE 66RxxS)", 0x002A: "my-d proximity enhanced (SLE 55RxxE)",
        0x002B: "my-d light (SRF 55V01P)", 0x002C: "PJM Stack Tag (SRF 66V10ST)",
        0x002D: "PJM Item Tag (SRF 66V10IT)", 0x002E: "PJM Light (SRF 66V01ST)",
        0x002F: "Jewel", 0x0030: "Topaz NFC Tag", 0x0031: "AT88SC0104CRF",
        0x0032: "AT88SC0404CRF", 0x0033: "AT88RF01C", 0x0034: "AT88RF04C", 0x0035: "i-Code SL2",
        0x0036: "MIFARE Plus SL1 2K", 0x0037: "MIFARE Plus SL1 4K", 0x0038: "MIFARE Plus SL2 2K",
        0x0039: "MIFARE Plus SL2 4K", 0x003A: "MIFARE Ultralight C", 0x003B: "FeliCa",
        0x003C: "Melexis Sensor Tag (MLX90129)", 0x003D: "MIFARE Ultralight EV1",
    ]
}
