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
    /// a CC of the file's mapping version (1.0, 2.0 or 3.0). It sits behind the shared fault
    /// wrapper (`FaultyType2Core`, `FaultyType4Core`) with the file's `faults`; see
    /// ``TagFileCardPersonality`` for how each fault shows through a PC/SC reader.
    /// - Throws: ``VirtualCardTagFileError`` with `makeEmulationCore()`'s reason when the
    ///   file's contents can't be served.
    public func makeVirtualCardPersonality() throws(VirtualCardTagFileError) -> any VirtualCardPersonality {
        let core: EmulationCore
        do { core = try makeEmulationCore() } catch { throw VirtualCardTagFileError(error.description) }
        switch core {
        case .type4(let app):
            return TagFileCardPersonality(
                type4: app, uid: readerActivation.uid, historicalBytes: Self.historicalBytes(ats: activation.ats),
                faults: faults)
        case .type2(let image):
            // Card name per PC/SC part 3 (Supplement, card names): Ultralight C `00 3A`, else Ultralight `00 03`.
            let name: PCSCCardName = type == .ultralightC ? .mifareUltralightC : .mifareUltralight
            return TagFileCardPersonality(
                type2: image, atr: ATR.storageCard(standard: .iso14443APart3, cardName: name).bytes, faults: faults)
        case .sensedOnly:
            return SensedOnlyPersonality(cardName: .mifareClassic1K, uid: activation.uid)
        case .feliCa(let core):
            return FeliCaPersonality(core: core, faults: faults)
        case .iso15693(let core):
            // Card names per PC/SC part 3's supplement: 00 14 ICODE SLI, 00 13 LRI512 (ST).
            let name = PCSCCardName(rawValue: type == .st25tv ? 0x0013 : 0x0014)
            return ISO15693Personality(core: core, cardName: name, faults: faults)
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

/// A tag file's card on vpcd: its emulation core behind the fault wrapper every device
/// shares (`FaultyType2Core`, `FaultyType4Core`; `faults` in `hardware/tags/FORMAT.md`),
/// inside the reader's personality (``StorageCardPersonality`` for Type 2,
/// ``ISO14443Part4Personality`` with the reader's GET DATA for Type 4).
///
/// How each fault shows through a PC/SC reader:
/// - `tag_lost`: the card leaves the field. The vpcd card closes its connection instead of
///   answering (``hasLeftField``), so that `SCardTransmit` returns 0 bytes, pcscd reports the
///   card removed at its next poll, and the card stays out until ``VirtualCard/present()``.
/// - `no_answer`, Type 2: the reader answers `63 00` to READ BINARY / UPDATE BINARY (PC/SC
///   2.02 part 3 §3.2.2.1.8–9, "no information given": what readers send when the tag did
///   not answer; documented), and the Generic Error Status `64 01` in a Transparent Exchange.
/// - `no_answer`, ISO-DEP: a vpcd card cannot stay silent (vpcd has no timeout: a card that
///   never answers blocks pcscd's reader until it leaves), and vpcd has no way to report a
///   transport error. The card answers `63 00`, as ACR122U-family readers answer an exchange
///   whose card timed out (ACR122U API, "63 00: the operation failed"; reported). CCID
///   readers fail the `SCardTransmit` instead (`SCARD_E_NOT_TRANSACTED`), which vpcd cannot
///   show. So Core NFC sees a status word here where the simulator shows no response.
/// - `corrupt_reply`: corrupt bytes. Type 2: the READ's answer comes one byte short, so the
///   READ BINARY's 16 bytes are shifted; ISO-DEP: the response APDU's first byte is inverted.
///
/// Each time the card enters the field (connects to vpcd) it is the same tag again: its
/// memory as it left, its faults that fired spent and the others armed (once per load of
/// the file, ``/NFCTags/FaultPlan``), as on every device.
public struct TagFileCardPersonality: VirtualCardPersonality {
    private enum Inner: Sendable {
        case type2(StorageCardPersonality<FaultyType2Core>)
        case type4(ISO14443Part4Personality<ReaderAnsweredGetData<VPCDFaultyType4Core>>)
    }
    private var inner: Inner
    /// The tag file's faults (each fires at most once while this card lives).
    public let faults: [TagFault]

    /// A Type 2 image behind a storage-card ATR (by default MIFARE Ultralight's).
    public init(
        type2 core: NTAG21xCore,
        atr: [UInt8] = ATR.storageCard(standard: .iso14443APart3, cardName: .mifareUltralight).bytes,
        faults: [TagFault]
    ) {
        self.faults = faults
        inner = .type2(StorageCardPersonality(core: FaultyType2Core(core: core, faults: faults), atr: atr))
    }

    /// A T4T NDEF application behind an ISO/IEC 14443-4 ATR with `historicalBytes`; the reader
    /// answers GET DATA (`FF CA`) with `uid` (P1 `00`) or `historicalBytes` (P1 `01`).
    public init(type4 app: Type4NDEFApplication, uid: [UInt8], historicalBytes: [UInt8], faults: [TagFault]) {
        self.faults = faults
        inner = .type4(
            ISO14443Part4Personality(
                core: ReaderAnsweredGetData(
                    core: VPCDFaultyType4Core(FaultyType4Core(core: app, faults: faults)), uid: uid,
                    historicalBytes: historicalBytes),
                historicalBytes: historicalBytes))
    }

    public var atr: [UInt8] {
        switch inner {
        case .type2(let p): p.atr
        case .type4(let p): p.atr
        }
    }

    public mutating func respond(to apdu: [UInt8]) -> [UInt8] {
        switch inner {
        case .type2(var p):
            defer { inner = .type2(p) }
            return p.respond(to: apdu)
        case .type4(var p):
            defer { inner = .type4(p) }
            return p.respond(to: apdu)
        }
    }

    public mutating func reset() {
        switch inner {
        case .type2(var p):
            p.reset()
            inner = .type2(p)
        case .type4(var p):
            p.reset()
            inner = .type4(p)
        }
    }

    /// A `tag_lost` fault fired.
    public var hasLeftField: Bool {
        switch inner {
        case .type2(let p): p.core.isGone
        case .type4(let p): p.core.core.faulty.isGone
        }
    }

    /// The same tag enters the field again (``/NFCTags/FaultyType2Core/enterField(adding:)``):
    /// back if a `tag_lost` took it out, its memory as it is, the faults that fired spent.
    public mutating func enteredField() {
        switch inner {
        case .type2(var p):
            p.core.enterField()
            inner = .type2(p)
        case .type4(var p):
            p.core.core.faulty.enterField()
            inner = .type4(p)
        }
    }

    /// The Type 2 memory as it is now (after the reader's writes), for a Type 2 card.
    public var type2Core: NTAG21xCore? {
        if case .type2(let p) = inner { return p.core.core }
        return nil
    }

    /// The T4T NDEF application as it is now, for a Type 4 card.
    public var type4Application: Type4NDEFApplication? {
        if case .type4(let p) = inner { return p.core.core.faulty.core }
        return nil
    }
}

/// The Type 2 fault wrapper answers a ``StorageCardPersonality``'s frames: silence (a
/// `no_answer` or a tag gone) becomes the reader's `63 00`.
extension FaultyType2Core: VirtualType2Responder {}

/// The T4T fault wrapper as a vpcd card's APDU responder: silence (`no_answer`) becomes
/// `63 00` (see ``TagFileCardPersonality``); a card gone answers the same while the vpcd
/// card closes its connection.
public struct VPCDFaultyType4Core: VirtualAPDUResponder {
    public var faulty: FaultyType4Core
    public init(_ faulty: FaultyType4Core) { self.faulty = faulty }

    public mutating func respond(to apdu: [UInt8]) -> [UInt8] {
        switch faulty.respond(to: apdu) as FaultyAPDUAnswer {
        case .response(let r): r
        case .silent: [0x63, 0x00]
        }
    }

    public mutating func reset() { faulty.deselect() }
}
