public import NFCTags

// The NFCTags emulation cores in the virtual PN532's field: a tag behaves the same here as
// in the in-process simulator, because it is the same core.

extension NTAG21xCore: PN532Type2Responder {}
extension Type4NDEFApplication: PN532APDUResponder {}

/// A Type 2 core with a tag file's fault schedule (`faults`, `hardware/tags/FORMAT.md`):
/// after `afterCommands` answered frames the next frame fails once with the fault's kind.
/// Over the air: `tag_lost` makes the tag silent until it is presented again (the reader
/// times out, libnfc says `NFC_ERFTRANS`, presence checks fail); `no_answer` swallows one
/// frame; `corrupt_reply` answers a READ with 15 bytes instead of 16.
public struct PN532FaultyType2Responder: PN532Type2Responder {
    public private(set) var core: NTAG21xCore
    public let faults: [TagFault]
    /// Frames answered so far (the count the faults refer to).
    public private(set) var commands = 0
    private var fired: Set<Int> = []
    /// `true` once a `tag_lost` fault fired: the tag has left.
    public private(set) var gone = false

    public init(core: NTAG21xCore, faults: [TagFault]) {
        self.core = core
        self.faults = faults
    }

    public mutating func respond(to frame: [UInt8]) -> Type2Answer {
        if gone { return .silent }
        if let i = faults.indices.first(where: { !fired.contains($0) && faults[$0].afterCommands == commands }) {
            fired.insert(i)
            commands += 1
            switch faults[i].kind {
            case .tagLost:
                gone = true
                return .silent
            case .noAnswer:
                return .silent
            case .corruptReply:
                if case .data(let d) = core.respond(to: frame), !d.isEmpty { return .data(Array(d.dropLast())) }
                return .silent
            }
        }
        commands += 1
        return core.respond(to: frame)
    }

    public mutating func halt() { core.halt() }
    public mutating func wakeUp() { core.wakeUp() }
}

extension PN532Card {
    /// The card a tag file describes (our JSON, Flipper `.nfc`, Proxmark3 JSON; see
    /// `TagFile.load(path:)`): a Type 2 file becomes an `NTAG21xCore` (behind
    /// ``PN532FaultyType2Responder`` when the file schedules faults), a Type 4 file a
    /// `Type4NDEFApplication`. UID, ATQA (wire order), SAK and ATS come from the file.
    /// Throws `TagFileError` when the image or the Type 4 contents cannot be emulated.
    public init(tagFile file: TagFile) throws(TagFileError) {
        let a = file.activation
        if file.type4 != nil {
            // Both the tag file and PN532Card hold the ATS with its TL byte.
            let ats = a.ats ?? [0x05, 0x75, 0x77, 0x80, 0x02]
            self.init(uid: a.uid, atqa: a.atqa, sak: a.sak, ats: ats, function: .isoDEP(try file.makeType4Core()))
            return
        }
        let core = try file.makeCore()
        let function: Function =
            file.faults.isEmpty
            ? .type2(core) : .type2(PN532FaultyType2Responder(core: core, faults: file.faults))
        self.init(uid: a.uid, atqa: a.atqa, sak: a.sak, function: function)
    }

    /// The Type 2 core answering this card's frames, if it is one (with its writes).
    public var ntag21xCore: NTAG21xCore? {
        switch function {
        case .type2(let r as NTAG21xCore): r
        case .type2(let r as PN532FaultyType2Responder): r.core
        default: nil
        }
    }

    /// The Type 4 NDEF application answering this card's APDUs, if it is one.
    public var type4Application: Type4NDEFApplication? {
        if case .isoDEP(let r as Type4NDEFApplication) = function { return r }
        return nil
    }

    /// `file` with this card's current memory (Type 2 pages, or the Type 4 NDEF file):
    /// what a virtual tag holds after a reader wrote to it.
    public func updating(_ file: TagFile) -> TagFile {
        var out = file
        if let core = ntag21xCore {
            out.pages = core.pages
            // A page a reader changed is known now; the others stay unknown.
            out.unreadPages = file.unreadPages.filter {
                core.pages.indices.contains($0) && core.pages[$0] == file.pages[$0]
            }
        }
        if let app = type4Application, var t4 = out.type4 {
            t4.ndefFile = app.ndefFile
            out.type4 = t4
        }
        return out
    }
}
