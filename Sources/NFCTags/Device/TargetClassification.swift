/// What a sensed target is, decided once for every device by ``TargetClassification``.
public enum TargetFamily: String, Sendable, Hashable, CaseIterable {
    /// NFC Forum Type 2 Tag platform (MIFARE Ultralight, NTAG21x): Type 2 commands.
    case type2
    /// ISO-DEP (ISO/IEC 14443-4): APDUs; an NFC Forum Type 4 Tag when it holds the NDEF application.
    case isoDEP
    /// MIFARE Classic or Mini (Crypto-1 sectors); not an NFC Forum tag platform.
    case mifareClassic
    /// MIFARE Plus in security level 2; not an NFC Forum tag platform.
    case mifarePlusSL2
    /// NFC-DEP (ISO/IEC 18092) peer, e.g. a phone in peer-to-peer mode.
    case nfcDEP
    /// FeliCa (NFC Forum Type 3 Tag platform): JIS X 6319-4 commands.
    case felica
    /// ISO/IEC 15693 vicinity card (NFC Forum Type 5 Tag platform): ISO/IEC 15693-3 requests.
    case iso15693
    /// Anything else.
    case other

    /// How commands reach it, when this package reads it.
    public var tagProtocol: TagProtocol? {
        switch self {
        case .type2: .type2
        case .isoDEP: .isoDEP
        case .felica: .felica
        case .iso15693: .iso15693
        default: nil
        }
    }
}

/// A classification and the rule that made it, with the rule's source.
public struct TargetClassification: Sendable, Hashable {
    public var family: TargetFamily
    /// The rule that decided, e.g. `"SAK b6 (0x20) set: ISO-DEP"`.
    public var rule: String
    /// The document the rule comes from.
    public var source: String

    public init(family: TargetFamily, rule: String, source: String) {
        self.family = family
        self.rule = rule
        self.source = source
    }

    /// Classifies a sensed target, the same way whatever the device.
    ///
    /// ISO/IEC 14443-A targets by SAK, in this order:
    /// 1. b6 (`0x20`) set → ISO-DEP (ISO/IEC 14443-3 §6.5.3.4; NFC Forum Digital 2.0
    ///    §4.8.2). First, because SAK `28`/`38` are ISO-DEP cards that also emulate MIFARE
    ///    Classic, and Core NFC talks ISO-DEP to them.
    /// 2. `0x08` set (`08`, `09`, `18`, `88`…) → MIFARE Classic / Mini; `10`, `11` → MIFARE
    ///    Plus SL2 (NXP AN10833 "MIFARE type identification procedure" §3, table 4). None is a
    ///    Type 2 tag, though b7b6 = 00 alone would call them so.
    /// 3. b7b6 = `00` → Type 2 Tag platform; b7 (`0x40`) → NFC-DEP (NFC Forum Digital 2.0
    ///    §4.8.2, table 22).
    /// 4. Anything else → other.
    ///
    /// Without SAK (a PC/SC reader) the ATR decides (PC/SC 2.02 part 3 §3.1.3.2.3): a
    /// storage card named MIFARE Ultralight / Ultralight C / Ultralight EV1 → Type 2 (NTAG21x
    /// reports as Ultralight); MIFARE Classic 1K/4K, Mini → MIFARE Classic; MIFARE Plus SL2 →
    /// MIFARE Plus SL2; FeliCa → FeliCa; the ISO/IEC 14443-4 ATR (`3B 8n 80 01 …`) → ISO-DEP.
    /// ISO/IEC 14443-B targets that answered ATTRIB are ISO-DEP (ISO/IEC 14443-4 §4);
    /// FeliCa targets are FeliCa.
    public static func classify(_ target: SensedTarget) -> TargetClassification {
        switch target.technology {
        case .iso14443B:
            return .init(family: .isoDEP, rule: "ISO 14443-B: ISO-DEP", source: "ISO/IEC 14443-4 §4")
        case .felica:
            return .init(family: .felica, rule: "NFC-F: FeliCa", source: "JIS X 6319-4")
        case .iso15693:
            return .init(family: .iso15693, rule: "NFC-V: ISO 15693", source: "ISO/IEC 15693-3")
        case .iso14443A:
            break
        }
        if let sak = target.sak { return classify(sak: sak) }
        if let atr = target.atr { return classify(atr: atr) }
        return .init(family: .other, rule: "no SAK and no ATR", source: "")
    }

    /// The SAK rules (see ``classify(_:)``).
    public static func classify(sak: UInt8) -> TargetClassification {
        let hex = [sak].hexString()
        if sak & 0x20 != 0 {
            return .init(
                family: .isoDEP, rule: "SAK \(hex): b6 (0x20) set, ISO-DEP",
                source: "ISO/IEC 14443-3 §6.5.3.4; NFC Forum Digital 2.0 §4.8.2")
        }
        if sak & 0x08 != 0 {
            return .init(
                family: .mifareClassic, rule: "SAK \(hex): 0x08 set, MIFARE Classic/Mini",
                source: "NXP AN10833 §3 (table 4)")
        }
        if sak == 0x10 || sak == 0x11 {
            return .init(
                family: .mifarePlusSL2, rule: "SAK \(hex): MIFARE Plus SL2", source: "NXP AN10833 §3 (table 4)")
        }
        if sak & 0x60 == 0x00 {
            return .init(
                family: .type2, rule: "SAK \(hex): b7b6 = 00, Type 2 Tag platform",
                source: "NFC Forum Digital 2.0 §4.8.2 (table 22)")
        }
        if sak & 0x60 == 0x40 {
            return .init(
                family: .nfcDEP, rule: "SAK \(hex): b7b6 = 10, NFC-DEP",
                source: "NFC Forum Digital 2.0 §4.8.2 (table 22)")
        }
        return .init(family: .other, rule: "SAK \(hex): no rule applies", source: "")
    }

    /// The ATR rules (see ``classify(_:)``).
    public static func classify(atr bytes: [UInt8]) -> TargetClassification {
        let source = "PC/SC 2.02 part 3 §3.1.3.2.3"
        switch (try? ATR(bytes: bytes))?.contactless {
        case .iso14443_4?:
            return .init(family: .isoDEP, rule: "ATR: ISO/IEC 14443-4 card", source: source)
        case .storageCard(let standard, let name)?:
            let family: TargetFamily
            switch name {
            case .mifareUltralight, .mifareUltralightC, .mifareUltralightEV1:
                family = standard == .iso14443APart3 ? .type2 : .other
            case .mifareClassic1K, .mifareClassic4K, .mifareMini: family = .mifareClassic
            case .mifarePlusSL2_2K, .mifarePlusSL2_4K: family = .mifarePlusSL2
            case .felica: family = .felica
            default:
                switch standard.rawValue {
                case 0x09...0x0C: family = .iso15693
                case 0x11: family = .felica
                default: family = .other
                }
            }
            return .init(family: family, rule: "ATR: storage card \(name.name) (\(standard.name))", source: source)
        case nil:
            return .init(family: .other, rule: "ATR not in the PC/SC part 3 contactless form", source: source)
        }
    }
}
