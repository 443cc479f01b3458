public import NFCTags

/// The rules a PC/SC 2.01.09 part 3 reader follows for the pseudo-APDUs it answers itself
/// (class `FF`), shared by the vpcd personalities: the Lc/Le shape each instruction takes,
/// and GET DATA's Le rule. Status words as part 3 §3.2.2.1 lists them per instruction.
public enum PCSCPart3 {
    /// `90 00`.
    public static let success: [UInt8] = [0x90, 0x00]
    /// `62 82`: end of data (or memory) reached before Le bytes (GET DATA, READ BINARY,
    /// UPDATE BINARY).
    public static let endReached: [UInt8] = [0x62, 0x82]
    /// `63 00`: no information given (the tag NAKed or did not answer: the reader cannot tell why).
    public static let noInformation: [UInt8] = [0x63, 0x00]
    /// `65 81`: memory failure, unsuccessful writing (UPDATE BINARY).
    public static let memoryFailure: [UInt8] = [0x65, 0x81]
    /// `67 00`: wrong length (Lc or the APDU's shape).
    public static let wrongLength: [UInt8] = [0x67, 0x00]
    /// `6A 81`: function not supported (P1/P2 the reader does not know).
    public static let functionNotSupported: [UInt8] = [0x6A, 0x81]
    /// `6A 82`: addressed block or byte does not exist (READ/UPDATE BINARY).
    public static let blockDoesNotExist: [UInt8] = [0x6A, 0x82]
    /// `6D 00`: instruction not supported.
    public static let instructionNotSupported: [UInt8] = [0x6D, 0x00]
    /// `6E 00`: class not supported (ISO/IEC 7816-4 §5.6: a command a storage card cannot take).
    public static let classNotSupported: [UInt8] = [0x6E, 0x00]

    /// An APDU's shape (ISO/IEC 7816-4 §5.2), `nil` when the lengths are inconsistent.
    static func parse(_ apdu: [UInt8]) -> CommandAPDU? { try? CommandAPDU(bytes: apdu) }

    /// Data of a known length answered to a case 2 command (GET DATA, §3.2.2.1.3):
    /// Le `00` or the exact length → the data + `90 00`; Le shorter → `6C <length>` (the
    /// exact length, no data); Le longer → the data + `62 82`.
    public static func answer(_ data: [UInt8], leByte: UInt8) -> [UInt8] {
        if leByte == 0 || Int(leByte) == data.count { return data + success }
        if Int(leByte) < data.count { return [0x6C, UInt8(truncatingIfNeeded: data.count)] }
        return data + endReached
    }

    /// GET DATA `FF CA P1 00 Le` (§3.2.2.1.3): P1 `00` the UID, `01` the historical bytes of
    /// the ATS (`6A 81` when the card has none: a storage card); P2 ≠ `00` or another P1 →
    /// `6A 81`; not case 2 → `67 00`.
    public static func getData(_ apdu: [UInt8], uid: [UInt8], historicalBytes: [UInt8]?) -> [UInt8] {
        guard apdu.count == 5 else { return wrongLength }
        guard apdu[3] == 0x00 else { return functionNotSupported }
        switch apdu[2] {
        case 0x00: return answer(uid, leByte: apdu[4])
        case 0x01:
            guard let historicalBytes, !historicalBytes.isEmpty else { return functionNotSupported }
            return answer(historicalBytes, leByte: apdu[4])
        default: return functionNotSupported
        }
    }
}

/// A card a PC/SC reader senses but this package does not read (MIFARE Classic 1K: the
/// ATR's card name `00 01`, PC/SC part 3 supplement). The reader answers GET DATA with the
/// UID itself (§3.2.2.1.3); every storage-card command needs a MIFARE authentication first
/// (`FF 86`, with keys this package does not hold), so READ/UPDATE BINARY answer `69 82`,
/// security status not satisfied (§3.2.2.1.8, table of READ BINARY status words). Assumed
/// from part 3's status words; a real reader's firmware may answer `63 00` instead.
public struct SensedOnlyPersonality: VirtualCardPersonality {
    public let atr: [UInt8]
    public let uid: [UInt8]

    public init(cardName: PCSCCardName, uid: [UInt8]) {
        self.atr = ATR.storageCard(standard: .iso14443APart3, cardName: cardName).bytes
        self.uid = uid
    }

    public mutating func respond(to apdu: [UInt8]) -> [UInt8] {
        guard let c = PCSCPart3.parse(apdu) else { return PCSCPart3.wrongLength }
        guard c.cla == 0xFF else { return PCSCPart3.classNotSupported }
        switch c.ins {
        case 0xCA:
            guard c.p1 == 0x00, c.p2 == 0x00 else { return PCSCPart3.functionNotSupported }
            return PCSCPart3.answer(uid, leByte: apdu.count == 5 ? apdu[4] : 0)
        case 0xB0, 0xD6: return [0x69, 0x82]
        default: return PCSCPart3.instructionNotSupported
        }
    }

    public mutating func reset() {}
}
