public import NFCTags

// The NFCTags emulation cores behind the vpcd card: the same cores the in-process
// simulator and the virtual PN532 use, so a tag file behaves the same on every transport.

/// The NTAG21x / Ultralight core answers Type 2 frames (READ, WRITE, GET_VERSION, …) for a
/// ``StorageCardPersonality``; a reader's reset re-activates it (WUPA + select).
extension NTAG21xCore: VirtualType2Responder {
    public var pageCount: Int? { variant.layout.totalPages }
}

/// The NFC Forum T4T NDEF application answers APDUs for an ``ISO14443Part4Personality``;
/// a power-up or reset deselects it (ISO/IEC 14443-4 DESELECT), the files stay.
extension Type4NDEFApplication: VirtualAPDUResponder {
    public mutating func reset() { deselect() }
}

/// Errors building a virtual card from a tag file.
public struct VirtualCardTagFileError: Error, Sendable, Hashable, CustomStringConvertible {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

extension TagFile {
    /// The vpcd personality for this tag file: a T4T NDEF application behind an ISO/IEC
    /// 14443-4 ATR (historical bytes from the file's ATS) for `type4`, or the Type 2 image
    /// behind a PC/SC part 3 storage-card ATR (card name MIFARE Ultralight `00 03`, as
    /// readers report NTAG21x; Ultralight C `00 3A`) for Type 2 files.
    /// The core is `TagFile.makeEmulationCore()`'s: the NDEF file served as stored, behind
    /// a CC of the file's mapping version (1.0, 2.0 or 3.0).
    /// - Throws: ``VirtualCardTagFileError`` with `makeEmulationCore()`'s reason when the
    ///   file's contents can't be served.
    public func makeVirtualCardPersonality() throws(VirtualCardTagFileError) -> any VirtualCardPersonality {
        let core: EmulationCore
        do { core = try makeEmulationCore() } catch { throw VirtualCardTagFileError(error.description) }
        switch core {
        case .type4(let app):
            return ISO14443Part4Personality(
                core: ReaderAnsweredGetData(
                    core: app, uid: activation.uid, historicalBytes: Self.historicalBytes(ats: activation.ats)),
                historicalBytes: Self.historicalBytes(ats: activation.ats))
        case .type2(let image):
            // Card name per PC/SC part 3 (Supplement, card names): Ultralight C `00 3A`, else Ultralight `00 03`.
            let name: PCSCCardName = type == .ultralightC ? .mifareUltralightC : .mifareUltralight
            return StorageCardPersonality(
                core: image, atr: ATR.storageCard(standard: .iso14443APart3, cardName: name).bytes)
        case .sensedOnly:
            return SensedOnlyPersonality(cardName: .mifareClassic1K, uid: activation.uid)
        }
    }

    /// The historical bytes of an ATS (ISO/IEC 14443-4 §5.2: TL, T0, then TA/TB/TC as T0's
    /// bits 5–7 announce them, then the historical bytes up to TL); `[]` for none or a
    /// malformed ATS.
    static func historicalBytes(ats: [UInt8]?) -> [UInt8] {
        guard let ats, ats.count >= 2 else { return [] }
        let length = min(Int(ats[0]), ats.count)
        let t0 = ats[1]
        let start = 2 + [0x10, 0x20, 0x40].filter { t0 & $0 != 0 }.count
        guard start < length else { return [] }
        return Array(ats[start..<length].prefix(15))
    }
}

/// What a PC/SC part 3 reader answers itself in front of an ISO-DEP card: GET DATA
/// `FF CA P1 00 Le` (§3.2.2.1.3, ``PCSCPart3/getData(_:uid:historicalBytes:)``: the UID or the
/// historical bytes, Le rules included). Every other APDU goes to the card's core unchanged.
public struct ReaderAnsweredGetData<Core: VirtualAPDUResponder>: VirtualAPDUResponder {
    public var core: Core
    public let uid: [UInt8]
    /// The ATS's historical bytes, GET DATA with P1 `01` (`6A 81` when empty).
    public let historicalBytes: [UInt8]
    public init(core: Core, uid: [UInt8], historicalBytes: [UInt8] = []) {
        self.core = core
        self.uid = uid
        self.historicalBytes = historicalBytes
    }

    public mutating func respond(to apdu: [UInt8]) -> [UInt8] {
        guard apdu.count >= 2, apdu[0] == 0xFF, apdu[1] == 0xCA else { return core.respond(to: apdu) }
        return PCSCPart3.getData(apdu, uid: uid, historicalBytes: historicalBytes)
    }

    public mutating func reset() { core.reset() }
}
