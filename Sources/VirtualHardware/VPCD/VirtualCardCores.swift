public import NFCTags

// The NFCTags emulation cores behind the vpcd card: the same cores the in-process
// simulator and the virtual PN532 use, so a tag file behaves the same on every transport.

/// The NTAG21x / Ultralight core answers Type 2 frames (READ, WRITE, GET_VERSION, …) for a
/// ``StorageCardPersonality``; a reader's reset re-activates it (WUPA + select).
extension NTAG21xCore: VirtualType2Responder {}

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
    /// readers report NTAG21x) for Type 2 files.
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
                core: ReaderAnsweredGetData(core: app, uid: activation.uid),
                historicalBytes: Self.historicalBytes(ats: activation.ats))
        case .type2(let image):
            return StorageCardPersonality(core: image)
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
/// `FF CA 00 00 Le` (§3.2.2.1.3) with the UID and `90 00` (`6C xx` when Le is too short,
/// `6A 81` for other P1/P2). Every other APDU goes to the card's core unchanged.
public struct ReaderAnsweredGetData<Core: VirtualAPDUResponder>: VirtualAPDUResponder {
    public var core: Core
    public let uid: [UInt8]
    public init(core: Core, uid: [UInt8]) {
        self.core = core
        self.uid = uid
    }

    public mutating func respond(to apdu: [UInt8]) -> [UInt8] {
        guard apdu.count >= 2, apdu[0] == 0xFF, apdu[1] == 0xCA else { return core.respond(to: apdu) }
        guard apdu.count == 5 else { return [0x67, 0x00] }
        guard apdu[2] == 0x00, apdu[3] == 0x00 else { return [0x6A, 0x81] }
        let le = Int(apdu[4])
        if le != 0 && le < uid.count { return [0x6C, UInt8(uid.count)] }
        return uid + [0x90, 0x00]
    }

    public mutating func reset() { core.reset() }
}
