// What a reader learns while activating an ISO/IEC 14443-A target (ISO/IEC 14443-3 §6.5,
// NFC Forum Digital Protocol §4.6–4.8), and the UID bytes a Type 2 tag keeps in pages 0–2.

/// A bad activation value: the field and what is wrong with it.
public enum ISO14443AActivationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The UID is not 4, 7 or 10 bytes long (ISO/IEC 14443-3 §6.5.4: single, double, triple size).
    case uidLength(Int)
    /// ATQA (SENS_RES) is not exactly 2 bytes.
    case atqaLength(Int)
    /// Type 2 pages 0–2 hold fewer than 12 bytes.
    case type2HeaderLength(Int)

    public var description: String {
        switch self {
        case .uidLength(let n): "UID must be 4, 7 or 10 bytes, got \(n)"
        case .atqaLength(let n): "ATQA must be 2 bytes, got \(n)"
        case .type2HeaderLength(let n): "Type 2 pages 0-2 need 12 bytes, got \(n)"
        }
    }
}

/// The UID size an ATQA announces (ISO/IEC 14443-3 §6.5.2.1, ATQA bits b8–b7 of the first byte).
public enum ISO14443UIDSize: Int, Sendable, Hashable {
    /// 4 bytes, one cascade level.
    case single = 4
    /// 7 bytes, two cascade levels.
    case double = 7
    /// 10 bytes, three cascade levels.
    case triple = 10

    /// Cascade levels a reader runs for this size (1, 2 or 3).
    public var cascadeLevels: Int {
        switch self {
        case .single: 1
        case .double: 2
        case .triple: 3
        }
    }
}

/// An ISO/IEC 14443-A target as activated: UID, ATQA (SENS_RES), SAK (SEL_RES) and, for
/// ISO-DEP targets, the ATS.
///
/// `atqa` is kept **in wire order** (the byte received first is `atqa[0]`, ISO/IEC 14443-3
/// transmits the LSB first): an NTAG21x answers `44 00`, a DESFire EV1 `44 03`. Tools that
/// print ATQA as a 16-bit number show these reversed (`0x0044`).
public struct ISO14443AActivation: Sendable, Hashable {
    /// The complete UID (4, 7 or 10 bytes), cascade tags removed.
    public let uid: [UInt8]
    /// SENS_RES, 2 bytes, wire order.
    public let atqa: [UInt8]
    /// SEL_RES of the last cascade level.
    public let sak: UInt8
    /// The Answer To Select (ISO/IEC 14443-4 §5.2) including its length byte TL, when the
    /// target was activated as ISO-DEP; `nil` otherwise.
    public let ats: [UInt8]?

    /// Validates the lengths; throws ``ISO14443AActivationError``.
    public init(uid: [UInt8], atqa: [UInt8], sak: UInt8, ats: [UInt8]? = nil) throws(ISO14443AActivationError) {
        guard [4, 7, 10].contains(uid.count) else { throw .uidLength(uid.count) }
        guard atqa.count == 2 else { throw .atqaLength(atqa.count) }
        self.uid = uid
        self.atqa = atqa
        self.sak = sak
        self.ats = ats
    }

    /// ATQA as people read it: most significant byte first, as libnfc's `nfc-list` prints it
    /// (`ATQA (SENS_RES): 00  44` for an NTAG21x's wire `44 00`); the one form every line for a
    /// person shows (tag files, traces and JSON keep the wire order).
    public static func atqaText(_ wireOrder: [UInt8], separator: String = " ") -> String {
        wireOrder.reversed().hexString(separator: separator)
    }

    /// This activation's ATQA as people read it (``atqaText(_:separator:)``).
    public var atqaText: String { Self.atqaText(atqa) }

    /// The UID size announced by ATQA bits b8–b7 (`00` single, `01` double, `10` triple;
    /// `11` is RFU → `nil`). ISO/IEC 14443-3 §6.5.2.1.
    public var announcedUIDSize: ISO14443UIDSize? {
        switch atqa[0] >> 6 {
        case 0: .single
        case 1: .double
        case 2: .triple
        default: nil
        }
    }

    /// The size of ``uid`` itself.
    public var uidSize: ISO14443UIDSize {
        ISO14443UIDSize(rawValue: uid.count) ?? .single
    }

    /// Cascade levels the reader ran to get ``uid`` (1, 2 or 3).
    public var cascadeLevels: Int { uidSize.cascadeLevels }

    /// ATQA announces the same UID size as ``uid`` has.
    public var atqaMatchesUID: Bool { announcedUIDSize == uidSize }

    /// SAK bit 6 (`0x20`): the target is ISO/IEC 14443-4 compliant (ISO-DEP, a Type 4A tag
    /// or a phone's HCE). NFC Forum Digital §4.8.2.
    public var supportsISODEP: Bool { sak & 0x20 != 0 }
    /// SAK bit 7 (`0x40`): the target supports NFC-DEP (peer-to-peer).
    public var supportsNFCDEP: Bool { sak & 0x40 != 0 }
    /// SAK bits 6 and 7 both clear: the NFC Forum Type 2 Tag platform (NTAG, Ultralight).
    /// MIFARE Classic (SAK `08`, `18`) also lands here; it is not NFC Forum compliant.
    public var isType2Platform: Bool { sak & 0x60 == 0 }

    // MARK: Type 2 tag UID pages

    /// The cascade tag that precedes the first 3 UID bytes of a 7-byte UID (ISO/IEC 14443-3 §6.5.4).
    public static let cascadeTag: UInt8 = 0x88

    /// BCC0 of a 7-byte-UID Type 2 tag (page 0 byte 3): `CT 88 ⊕ UID0 ⊕ UID1 ⊕ UID2`
    /// (NTAG213/215/216 datasheet §8.5.1). `uid` must hold at least 3 bytes.
    public static func bcc0(uid: [UInt8]) -> UInt8 {
        uid.prefix(3).reduce(cascadeTag, ^)
    }

    /// BCC1 of a 7-byte-UID Type 2 tag (page 2 byte 0): `UID3 ⊕ UID4 ⊕ UID5 ⊕ UID6`.
    public static func bcc1(uid: [UInt8]) -> UInt8 {
        uid.dropFirst(3).prefix(4).reduce(0, ^)
    }

    /// Pages 0–2 (12 bytes) of a Type 2 tag for a 7-byte UID: `UID0 UID1 UID2 BCC0`,
    /// `UID3 UID4 UID5 UID6`, `BCC1 internal lock0 lock1`. NXP tags ship with internal
    /// byte `48` and lock bytes `00 00`.
    public static func type2UIDPages(uid: [UInt8], internalByte: UInt8 = 0x48, lock: (UInt8, UInt8) = (0, 0))
        throws(ISO14443AActivationError) -> [UInt8]
    {
        guard uid.count == 7 else { throw .uidLength(uid.count) }
        return [
            uid[0], uid[1], uid[2], bcc0(uid: uid), uid[3], uid[4], uid[5], uid[6],
            bcc1(uid: uid), internalByte, lock.0, lock.1,
        ]
    }

    /// The UID stored in Type 2 pages 0–2 (bytes 0–2 and 4–7), with both check bytes.
    public struct Type2UID: Sendable, Hashable {
        /// The 7 UID bytes.
        public let uid: [UInt8]
        /// BCC0 as stored (page 0 byte 3) and as computed.
        public let storedBCC0: UInt8, expectedBCC0: UInt8
        /// BCC1 as stored (page 2 byte 0) and as computed.
        public let storedBCC1: UInt8, expectedBCC1: UInt8
        /// Both check bytes match.
        public var checkBytesValid: Bool { storedBCC0 == expectedBCC0 && storedBCC1 == expectedBCC1 }
    }

    /// Reads the UID and check bytes out of pages 0–2 (the first 12 bytes of `header`).
    public static func type2UID(fromPages header: [UInt8]) throws(ISO14443AActivationError) -> Type2UID {
        guard header.count >= 12 else { throw .type2HeaderLength(header.count) }
        let uid = Array(header[0..<3]) + Array(header[4..<8])
        return Type2UID(
            uid: uid, storedBCC0: header[3], expectedBCC0: bcc0(uid: uid),
            storedBCC1: header[8], expectedBCC1: bcc1(uid: uid))
    }
}

extension ISO14443AActivation: CustomStringConvertible {
    public var description: String {
        var s = "UID \(uid.hexString(separator: " ")), ATQA \(atqaText), SAK \([sak].hexString())"
        if let ats { s += ", ATS \(ats.hexString(separator: " "))" }
        return s
    }
}

extension ISO14443AActivation {
    /// One cascade level of anticollision and SELECT (ISO/IEC 14443-3 §6.5.3–6.5.4): the
    /// SEL code (`93`, `95`, `97`), the UID CLn (the cascade tag `88` and 3 UID bytes on a
    /// level that is not the last, else 4 UID bytes) and its BCC (XOR of the four).
    public struct CascadeLevel: Sendable, Hashable {
        public var sel: UInt8
        public var uidPart: [UInt8]
        public var bcc: UInt8 { uidPart.reduce(0, ^) }
        /// What the card answers to anticollision (`SEL 20`): UID CLn and BCC.
        public var anticollisionAnswer: [UInt8] { uidPart + [bcc] }
        /// The SELECT frame (`SEL 70 UID CLn BCC`, CRC_A not included).
        public var select: [UInt8] { [sel, 0x70] + uidPart + [bcc] }
    }

    /// The cascade levels a reader runs for `uid` (4, 7 or 10 bytes; any other length is
    /// taken as its first 4 bytes, one level).
    public static func cascadeLevels(uid: [UInt8]) -> [CascadeLevel] {
        switch uid.count {
        case 7:
            [
                CascadeLevel(sel: 0x93, uidPart: [0x88] + uid[0..<3]),
                CascadeLevel(sel: 0x95, uidPart: Array(uid[3..<7])),
            ]
        case 10:
            [
                CascadeLevel(sel: 0x93, uidPart: [0x88] + uid[0..<3]),
                CascadeLevel(sel: 0x95, uidPart: [0x88] + uid[3..<6]),
                CascadeLevel(sel: 0x97, uidPart: Array(uid[6..<10])),
            ]
        default: [CascadeLevel(sel: 0x93, uidPart: Array(uid.prefix(4)))]
        }
    }
}
