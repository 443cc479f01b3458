public import NFCTags

// The NFCTags emulation cores in the virtual PN532's field: a tag behaves the same here as
// in the in-process simulator, because it is the same core.

extension NTAG21xCore: PN532Type2Responder {}
extension Type4NDEFApplication: PN532APDUResponder {}

/// The fault wrapper every device shares (tag files' `faults`, `hardware/tags/FORMAT.md`).
/// Over the air: `tag_lost` makes the tag leave the field (silent, and no activation finds
/// it: libnfc's presence check fails); `no_answer` swallows one frame (status `01`,
/// timeout); `corrupt_reply` answers a READ one byte short.
extension FaultyType2Core: PN532Type2Responder {}

/// The FeliCa core behind the shared fault wrapper: `tag_lost` makes the card leave the
/// field (silent to Polling too).
extension FaultyFeliCaCore: PN532FeliCaResponder {}

/// The T4T application behind the shared fault wrapper: silence is an empty answer (the
/// PN532 reports a timeout); `tag_lost` makes the card leave the field.
extension FaultyType4Core: PN532APDUResponder {
    public mutating func respond(to apdu: [UInt8]) -> [UInt8] {
        switch respond(to: apdu) as FaultyAPDUAnswer {
        case .response(let r): r
        case .silent: []
        }
    }
}

extension PN532Card {
    /// The card a tag file describes (our JSON, Flipper `.nfc`, Proxmark3 JSON; see
    /// `TagFile.load(path:)`): a Type 2 file becomes an `NTAG21xCore`, a Type 4 file a
    /// `Type4NDEFApplication`, each behind the fault wrapper every device shares, a MIFARE Classic file a card
    /// that answers only activation. UID (the pages' for a Type 2 file,
    /// `TagFile.readerActivation`), ATQA (wire order), SAK and ATS come from the file.
    /// Throws `TagFileError` when the image or the Type 4 contents cannot be emulated
    /// (`TagFile.makeEmulationCore()`, the check `tag show` runs).
    public init(tagFile file: TagFile) throws(TagFileError) {
        let a = file.readerActivation
        switch try file.makeEmulationCore() {
        case .type4(let app):
            // Both the tag file and PN532Card hold the ATS with its TL byte.
            let ats = a.ats ?? [0x05, 0x75, 0x77, 0x80, 0x02]
            self.init(
                uid: a.uid, atqa: a.atqa, sak: a.sak, ats: ats,
                function: .isoDEP(FaultyType4Core(core: app, faults: file.faults)))
        case .type2(let core):
            self.init(
                uid: a.uid, atqa: a.atqa, sak: a.sak, function: .type2(FaultyType2Core(core: core, faults: file.faults))
            )
        case .sensedOnly:
            self.init(uid: a.uid, atqa: a.atqa, sak: a.sak, function: .type2(UnauthenticatedClassic()))
        case .feliCa(let core):
            self.init(
                uid: core.systems.first?.idm ?? [], atqa: [], sak: 0,
                function: .felica(FaultyFeliCaCore(core: core, faults: file.faults)))
        case .iso15693:
            // PN532 data sheet: reader/writer for ISO 14443A/B and FeliCa only; no ISO 15693.
            throw TagFileError(
                .unsupported, field: "type",
                "a PN532 cannot reach ISO 15693 tags (\(file.type.rawValue)): use sim: or the vpcd card")
        }
    }

    /// The Type 2 core answering this card's frames, if it is one (with its writes).
    public var ntag21xCore: NTAG21xCore? {
        switch function {
        case .type2(let r as NTAG21xCore): r
        case .type2(let r as FaultyType2Core): r.core
        default: nil
        }
    }

    /// The same card entering the field again: a `tag_lost` card is back, its memory as it
    /// left, the tag file's faults that fired spent and the others armed (once per load of the
    /// file: `hardware/tags/FORMAT.md`, Faults), as on every device.
    public mutating func enterField() {
        switch function {
        case .type2(var r as FaultyType2Core):
            r.enterField()
            function = .type2(r)
        case .isoDEP(var r as FaultyType4Core):
            r.enterField()
            function = .isoDEP(r)
        case .felica(var r as FaultyFeliCaCore):
            r.enterField()
            function = .felica(r)
        case .felica:
            break
        case .type2(var r):
            r.wakeUp()
            function = .type2(r)
        case .isoDEP:
            break
        }
        isoDEPLink = ISODEPCardLink(ats: ats)
    }

    /// The Type 4 NDEF application answering this card's APDUs, if it is one.
    public var type4Application: Type4NDEFApplication? {
        switch function {
        case .isoDEP(let r as Type4NDEFApplication): r
        case .isoDEP(let r as FaultyType4Core): r.core
        default: nil
        }
    }

    /// `file` with this card's current memory (Type 2 pages, or the Type 4 NDEF file):
    /// what a virtual tag holds after a reader wrote to it.
    public func updating(_ file: TagFile) -> TagFile {
        file.withMemory(type2: ntag21xCore, type4: type4Application).withMemory(feliCa: feliCaCore, iso15693: nil)
    }

    /// The FeliCa core answering this card's frames, if it is one (with its writes).
    public var feliCaCore: FeliCaCore? {
        if case .felica(let r as FaultyFeliCaCore) = function { return r.core }
        return nil
    }
}

/// A MIFARE Classic card seen by a reader that does not authenticate: it answers
/// anticollision and SELECT (the chip does that from the card's activation data), and stays
/// silent to every command that is not part of the MIFARE authentication (assumed: the
/// MF1S50 datasheet has commands NAKed or ignored before authentication; silence is what a
/// reader sees as "no answer"). libnfc's presence check for SAK 08 re-selects by UID
/// (pn53x.c `pn53x_ISO14443A_MFC_is_present`), which needs no answer from here.
struct UnauthenticatedClassic: PN532Type2Responder {
    mutating func respond(to frame: [UInt8]) -> Type2Answer { .silent }
    mutating func halt() {}
    mutating func wakeUp() {}
}

extension VirtualPN532 {
    /// A tag file's card on a fresh virtual PN532 at `ptyPath` (nil: no link, the pty's own
    /// path only): the one way the `virtual pn532`
    /// command, `check equivalence`, the demo and the tests start one, so a tag file plays the
    /// same on all of them (its faults once per run, `hardware/tags/FORMAT.md`). The card is
    /// loaded (``load(_:)``) and, with `present`, put in the field; ``presentAgain()`` and
    /// ``remove()`` move it afterwards, always the same tag.
    /// - Throws: ``/NFCTags/TagFileError`` when the file can't be emulated, else what
    ///   ``start(ptyPath:chip:timing:)`` throws (``VirtualPN532Error``).
    public static func start(
        tagFile file: TagFile, ptyPath: String?, timing: PN532LinkTiming = .none, present: Bool = true
    ) throws -> VirtualPN532 {
        let card = try PN532Card(tagFile: file)
        let device = try start(ptyPath: ptyPath, timing: timing)
        device.load(card)
        if present { device.presentAgain() }
        return device
    }
}
