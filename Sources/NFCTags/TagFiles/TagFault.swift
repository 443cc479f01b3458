/// A scheduled failure of a tag, as tag files and scenarios declare it (`faults` in
/// `hardware/tags/FORMAT.md`).
///
/// Faults live on the card side, in one wrapper around the emulation core
/// (``FaultyType2Core``, ``FaultyType4Core``) that the in-process simulator, the vpcd card
/// and the virtual PN532 all use, so a faulty tag fails the same way on every device.
/// Readers send different command sequences for the same read (a PC/SC reader asks for the
/// UID with `FF CA`, which its firmware turns into a READ; libnfc does not), so the
/// device-independent triggers name what the tag is doing — "lost while page 8 is read",
/// "lost after the CC read", "lost on the first write" — rather than counting commands.
/// Each fires at most once per load of the tag file (``FaultPlan``): a tag pulled from the
/// field is whole again when it comes back.
public struct TagFault: Sendable, Hashable {
    /// How the tag fails.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// The tag leaves the field: it answers nothing from then on, and the reader sees it gone.
        case tagLost = "tag_lost"
        /// The tag does not answer this one command.
        case noAnswer = "no_answer"
        /// The answer arrives damaged (one byte short for a Type 2 READ; first byte inverted for an APDU).
        case corruptReply = "corrupt_reply"
    }

    /// When the fault fires.
    public enum Trigger: Sendable, Hashable {
        /// On the first Type 2 READ or FAST_READ whose pages include this page (JSON
        /// `"when": "page_read", "page": N`). Pages 0–3 are also read by readers' presence
        /// checks and UID requests (READ 0), whose timing differs by reader: a
        /// device-independent fault names a page from 4 on.
        case pageRead(Int)
        /// On the first Type 4 READ BINARY of the NDEF file whose bytes include this offset
        /// (`"when": "ndef_file_read", "offset": N`).
        case ndefFileRead(offset: Int)
        /// On the command after the capability container was read: a READ or FAST_READ whose
        /// pages include page 3 (Type 2), a READ BINARY of the CC file `E103` (Type 4)
        /// (`"when": "after_cc_read"`). A PC/SC reader's UID request (`FF CA`, a READ 0 on the
        /// tag) counts, so behind PC/SC the fault hits the read procedure's first command
        /// rather than its second: the session sees the same failed read. GET_VERSION does not
        /// count (the read procedure may send one after the CC to decide on FAST_READ): the
        /// fault waits for the next command that reads or writes.
        case afterCCRead
        /// On the first write: WRITE / COMPATIBILITY_WRITE (Type 2) or UPDATE BINARY (Type 4)
        /// (`"when": "first_write"`).
        case firstWrite
        /// On the first FeliCa Check (Read Without Encryption) or ISO 15693 READ SINGLE /
        /// READ MULTIPLE whose blocks include this block (`"when": "block_read", "block": N`).
        /// Block 0 is the Type 3 attribute block and the Type 5 CC, which every read starts
        /// with: a device-independent fault names a block from 1 on.
        case blockRead(Int)
        /// After this many tag-level commands were answered (`"after_commands": N`). Command
        /// sequences differ by reader, so this one is device-dependent: prefer the others.
        case afterCommands(Int)
    }

    public let trigger: Trigger
    public let kind: Kind

    public init(_ trigger: Trigger, kind: Kind) {
        self.trigger = trigger
        self.kind = kind
    }

    /// A fault after `afterCommands` answered commands (device-dependent; see ``Trigger``).
    public init(afterCommands: Int, kind: Kind) {
        self.init(.afterCommands(afterCommands), kind: kind)
    }

    /// The error a reader-side transport raises when it meets this fault.
    public var error: TagCommunicationError {
        switch kind {
        case .tagLost: .tagLost
        case .noAnswer: .noResponse
        case .corruptReply: .malformedResponse("corrupted reply (scheduled fault)")
        }
    }

    /// The JSON object's fields, in the order tag files write them.
    public var jsonFields: [(String, String)] {
        var out: [(String, String)] = []
        switch trigger {
        case .pageRead(let p): out += [("when", "\"page_read\""), ("page", "\(p)")]
        case .ndefFileRead(let o): out += [("when", "\"ndef_file_read\""), ("offset", "\(o)")]
        case .afterCCRead: out += [("when", "\"after_cc_read\"")]
        case .firstWrite: out += [("when", "\"first_write\"")]
        case .blockRead(let b): out += [("when", "\"block_read\""), ("block", "\(b)")]
        case .afterCommands(let n): out += [("after_commands", "\(n)")]
        }
        out.append(("kind", "\"\(kind.rawValue)\""))
        return out
    }

    /// One line for people: "tag_lost while page 8 is read".
    public var summary: String {
        let when =
            switch trigger {
            case .pageRead(let p): "while page \(p) is read"
            case .ndefFileRead(let o): "while NDEF file byte \(o) is read"
            case .afterCCRead: "after the CC read"
            case .firstWrite: "on the first write"
            case .blockRead(let b): "while block \(b) is read"
            case .afterCommands(let n): "after \(n) commands"
            }
        return "\(kind.rawValue) \(when)"
    }
}

extension TagFault: Codable {
    enum CodingKeys: String, CodingKey {
        case when, page, offset, kind, block
        case afterCommands = "after_commands"
    }

    /// Reads a fault by the data files' rule (``DataFile``): `kind` one of the ``Kind``
    /// names; either `after_commands` (a whole number from 0 to 10^9) or `when` with its
    /// `page` (0…255) or `offset` (0…2^31 − 1).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        kind = try c.decodeChoice(Kind.self, forKey: .kind)
        if c.contains(.afterCommands) {
            guard !c.contains(.when) else {
                throw c.dataError(.when, "give either \"when\" or \"after_commands\", not both")
            }
            trigger = .afterCommands(try c.decodeWholeNumber(.afterCommands, in: 0...1_000_000_000))
            return
        }
        guard c.contains(.when) else {
            throw c.dataError(
                .when,
                "missing (required): a fault needs \"when\" (page_read, ndef_file_read, after_cc_read, first_write, block_read) or \"after_commands\"",
                code: .missingField)
        }
        switch try c.decode(String.self, forKey: .when) {
        case "page_read": trigger = .pageRead(try c.decodeWholeNumber(.page, in: 0...255))
        case "ndef_file_read": trigger = .ndefFileRead(offset: try c.decodeWholeNumber(.offset, in: 0...Int(Int32.max)))
        case "after_cc_read": trigger = .afterCCRead
        case "first_write": trigger = .firstWrite
        case "block_read": trigger = .blockRead(try c.decodeWholeNumber(.block, in: 0...65535))
        case let other:
            throw c.dataError(
                .when,
                "expected one of page_read, ndef_file_read, after_cc_read, first_write, block_read, found \"\(other)\"")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch trigger {
        case .pageRead(let p):
            try c.encode("page_read", forKey: .when)
            try c.encode(p, forKey: .page)
        case .ndefFileRead(let o):
            try c.encode("ndef_file_read", forKey: .when)
            try c.encode(o, forKey: .offset)
        case .afterCCRead: try c.encode("after_cc_read", forKey: .when)
        case .firstWrite: try c.encode("first_write", forKey: .when)
        case .blockRead(let b):
            try c.encode("block_read", forKey: .when)
            try c.encode(b, forKey: .block)
        case .afterCommands(let n): try c.encode(n, forKey: .afterCommands)
        }
        try c.encode(kind, forKey: .kind)
    }
}

/// The schedule of a tag's faults: which fault, if any, hits the next command.
///
/// Pure and device-independent: it reads the tag-level commands (Type 2 frames, or APDUs to
/// the T4T NDEF application) the core receives, whatever reader sent them.
///
/// The rule every device plays by (`hardware/tags/FORMAT.md`, section Faults): a tag's own
/// faults (its file's) fire at most once per load of the file, however often the tag enters
/// the field; ``enterField(adding:)`` starts a new presentation with the fired ones spent and
/// the others still armed. A presentation's own faults (a scenario step's) belong to that
/// presentation only.
public struct FaultPlan: Sendable, Hashable {
    /// The tag's faults, then the current presentation's.
    public private(set) var faults: [TagFault]
    private var fired: [Bool]
    /// How many of ``faults`` (from the first) are the tag's own.
    private let tagFaultCount: Int
    private var commands = 0
    private var ccWasRead = false
    /// Type 4: the file selected last (`E103` = CC), `nil` when none.
    private var selectedFile: UInt16?

    /// A plan for a tag with `faults` (its file's) on its first presentation, which adds
    /// `presentation` (a scenario step's faults).
    public init(_ faults: [TagFault], presentation: [TagFault] = []) {
        self.faults = faults + presentation
        self.tagFaultCount = faults.count
        self.fired = Array(repeating: false, count: faults.count + presentation.count)
    }

    /// Whether every fault has fired.
    public var isSpent: Bool { !fired.contains(false) }

    /// The tag's own faults that have fired.
    public var firedTagFaults: [TagFault] {
        (0..<tagFaultCount).filter { fired[$0] }.map { faults[$0] }
    }

    /// The tag enters the field again (a new presentation): the tag's faults that fired stay
    /// spent and the others stay armed; the last presentation's own faults are dropped and
    /// `presentation` added; what a trigger remembers of the last presentation (the CC read,
    /// the file selected, the command count) starts afresh, as the reader's procedure does.
    public mutating func enterField(adding presentation: [TagFault] = []) {
        faults = Array(faults.prefix(tagFaultCount)) + presentation
        fired = Array(fired.prefix(tagFaultCount)) + Array(repeating: false, count: presentation.count)
        commands = 0
        ccWasRead = false
        selectedFile = nil
    }

    private enum Command {
        case read(pages: ClosedRange<Int>)
        case readCC
        case readNDEF(ClosedRange<Int>)
        /// A FeliCa Check or an ISO 15693 READ of these blocks.
        case readBlocks([Int])
        case write
        /// GET_VERSION: identification, not part of a read (``TagFault/Trigger/afterCCRead``).
        case identify
        case other
    }

    /// The fault hitting this Type 2 frame (CRC excluded), if any; it is then spent.
    public mutating func check(type2 frame: [UInt8]) -> TagFault.Kind? {
        guard let op = frame.first else { return check(.other) }
        switch op {
        case 0x30 where frame.count >= 2:
            let s = Int(frame[1])
            return check(.read(pages: s...(s + 3)))
        case 0x3A where frame.count >= 3 && frame[2] >= frame[1]:
            return check(.read(pages: Int(frame[1])...Int(frame[2])))
        case 0xA2, 0xA0:
            return check(.write)
        case 0x60:
            return check(.identify)
        default:
            return check(.other)
        }
    }

    /// The fault hitting this command APDU to a T4T NDEF application, if any; it is then spent.
    public mutating func check(apdu: [UInt8]) -> TagFault.Kind? {
        guard apdu.count >= 4 else { return check(.other) }
        let (ins, p1, p2) = (apdu[1], apdu[2], apdu[3])
        switch ins {
        case 0xA4:
            // SELECT by file identifier (P1 00): remember the file; by name: no file selected.
            if p1 == 0x00, apdu.count >= 7, apdu[4] == 2 {
                selectedFile = UInt16(apdu[5]) << 8 | UInt16(apdu[6])
            } else {
                selectedFile = nil
            }
            return check(.other)
        case 0xB0, 0xB1:
            let offset = ins == 0xB0 ? Int(p1 & 0x7F) << 8 | Int(p2) : 0
            let length = apdu.count == 5 ? (apdu[4] == 0 ? 256 : Int(apdu[4])) : 1
            if selectedFile == 0xE103 { return check(.readCC) }
            return check(.readNDEF(offset...(offset + max(length, 1) - 1)))
        case 0xD6, 0xD7:
            return check(.write)
        default:
            return check(.other)
        }
    }

    /// The fault hitting this FeliCa command frame (LEN first), if any; it is then spent.
    public mutating func check(feliCa frame: [UInt8]) -> TagFault.Kind? {
        guard frame.count >= 2 else { return check(.other) }
        switch frame[1] {
        case 0x06:
            // LEN 06 IDm(8) m SCL(2m) n BL…
            var blocks: [Int] = []
            if frame.count > 10 {
                var i = 11 + 2 * Int(frame[10])
                if i < frame.count {
                    let n = Int(frame[i])
                    i += 1
                    for _ in 0..<n where i + 1 < frame.count {
                        if frame[i] & 0x80 != 0 {
                            blocks.append(Int(frame[i + 1]))
                            i += 2
                        } else if i + 2 < frame.count {
                            blocks.append(Int(frame[i + 1]) | Int(frame[i + 2]) << 8)
                            i += 3
                        } else {
                            break
                        }
                    }
                }
            }
            return check(.readBlocks(blocks))
        case 0x08: return check(.write)
        default: return check(.other)
        }
    }

    /// The fault hitting this ISO 15693 request (flags first), if any; it is then spent.
    public mutating func check(iso15693 request: [UInt8]) -> TagFault.Kind? {
        guard request.count >= 2 else { return check(.other) }
        let flags = request[0]
        let p = Array(request.dropFirst(flags & 0x20 != 0 && flags & 0x04 == 0 ? 10 : 2))
        switch request[1] {
        case 0x20 where p.count >= 1: return check(.readBlocks([Int(p[0])]))
        case 0x30 where p.count >= 2: return check(.readBlocks([Int(p[0]) | Int(p[1]) << 8]))
        case 0x23 where p.count >= 2: return check(.readBlocks(Array(Int(p[0])...(Int(p[0]) + Int(p[1])))))
        case 0x33 where p.count >= 4:
            let first = Int(p[0]) | Int(p[1]) << 8
            return check(.readBlocks(Array(first...(first + (Int(p[2]) | Int(p[3]) << 8)))))
        case 0x21, 0x24, 0x31, 0x34: return check(.write)
        case 0x2B: return check(.identify)
        default: return check(.other)
        }
    }

    private mutating func check(_ command: Command) -> TagFault.Kind? {
        defer {
            commands += 1
            switch command {
            case .readCC: ccWasRead = true
            case .read(let pages) where pages.contains(3): ccWasRead = true
            case .readBlocks(let blocks) where blocks.contains(0): ccWasRead = true
            default: break
            }
        }
        let afterCC = ccWasRead
        for (i, fault) in faults.enumerated() where !fired[i] {
            let hit: Bool
            switch fault.trigger {
            case .afterCommands(let n): hit = n == commands
            case .afterCCRead:
                if case .identify = command { hit = false } else { hit = afterCC }
            case .firstWrite:
                if case .write = command { hit = true } else { hit = false }
            case .pageRead(let p):
                if case .read(let pages) = command { hit = pages.contains(p) } else { hit = false }
            case .ndefFileRead(let o):
                if case .readNDEF(let bytes) = command { hit = bytes.contains(o) } else { hit = false }
            case .blockRead(let b):
                if case .readBlocks(let blocks) = command { hit = blocks.contains(b) } else { hit = false }
            }
            if hit {
                fired[i] = true
                return fault.kind
            }
        }
        return nil
    }
}

/// A Type 2 emulation core behind a ``FaultPlan``: the one fault wrapper every device's
/// Type 2 card uses. A `tag_lost` fault makes the tag silent for good (``isGone``); the
/// device in front of it then reports the tag gone (the simulator and the vpcd card take it
/// out of the field; the virtual PN532's target stops answering, so presence checks fail).
public struct FaultyType2Core: Sendable {
    public private(set) var core: NTAG21xCore
    public private(set) var plan: FaultPlan
    /// A `tag_lost` fault fired: the tag has left the field.
    public private(set) var isGone = false

    /// `faults`: the tag's own (its file's); `presentation`: the first presentation's.
    public init(core: NTAG21xCore, faults: [TagFault] = [], presentation: [TagFault] = []) {
        self.core = core
        self.plan = FaultPlan(faults, presentation: presentation)
    }

    public mutating func respond(to frame: [UInt8]) -> Type2Answer {
        if isGone { return .silent }
        switch plan.check(type2: frame) {
        case .tagLost?:
            isGone = true
            return .silent
        case .noAnswer?:
            return .silent
        case .corruptReply?:
            if case .data(let d) = core.respond(to: frame), !d.isEmpty { return .data(Array(d.dropLast())) }
            return .silent
        case nil:
            return core.respond(to: frame)
        }
    }

    public mutating func halt() { core.halt() }
    public mutating func wakeUp() { core.wakeUp() }
    public mutating func reactivate() { core.reactivate() }

    /// The tag enters the field again (``FaultPlan/enterField(adding:)``): a tag that left by
    /// `tag_lost` is back and answers, its memory as it left; it powers up idle.
    public mutating func enterField(adding presentation: [TagFault] = []) {
        isGone = false
        plan.enterField(adding: presentation)
        core.wakeUp()
    }
}

/// What a ``FaultyType4Core`` made of one command APDU.
public enum FaultyAPDUAnswer: Sendable, Hashable {
    /// The response APDU (possibly corrupted by a fault).
    case response([UInt8])
    /// No answer (a `no_answer` fault, or the tag has left).
    case silent
}

/// A T4T NDEF application behind a ``FaultPlan``: the one fault wrapper every device's
/// Type 4 card uses (see ``FaultyType2Core``).
public struct FaultyType4Core: Sendable {
    public private(set) var core: Type4NDEFApplication
    public private(set) var plan: FaultPlan
    /// A `tag_lost` fault fired: the tag has left the field.
    public private(set) var isGone = false

    /// `faults`: the tag's own (its file's); `presentation`: the first presentation's.
    public init(core: Type4NDEFApplication, faults: [TagFault] = [], presentation: [TagFault] = []) {
        self.core = core
        self.plan = FaultPlan(faults, presentation: presentation)
    }

    public mutating func respond(to apdu: [UInt8]) -> FaultyAPDUAnswer {
        if isGone { return .silent }
        switch plan.check(apdu: apdu) {
        case .tagLost?:
            isGone = true
            return .silent
        case .noAnswer?:
            return .silent
        case .corruptReply?:
            var r = core.respond(to: apdu)
            if !r.isEmpty { r[0] ^= 0xFF }
            return .response(r)
        case nil:
            return .response(core.respond(to: apdu))
        }
    }

    /// ISO/IEC 14443-4 deactivation (field reset, re-activation): the application is deselected.
    public mutating func deselect() { core.deselect() }

    /// The tag enters the field again (``FaultPlan/enterField(adding:)``): back and answering,
    /// its files as they were, no application selected.
    public mutating func enterField(adding presentation: [TagFault] = []) {
        isGone = false
        plan.enterField(adding: presentation)
        core.deselect()
    }
}

/// A FeliCa emulation core behind a ``FaultPlan`` (see ``FaultyType2Core``): `tag_lost`
/// makes the card silent for good, `no_answer` swallows one frame, `corrupt_reply` drops the
/// answer's last byte.
public struct FaultyFeliCaCore: Sendable {
    public private(set) var core: FeliCaCore
    public private(set) var plan: FaultPlan
    public private(set) var isGone = false

    public init(core: FeliCaCore, faults: [TagFault] = [], presentation: [TagFault] = []) {
        self.core = core
        self.plan = FaultPlan(faults, presentation: presentation)
    }

    /// The answer to one frame (LEN first), `nil` for silence.
    public mutating func respond(to frame: [UInt8]) -> [UInt8]? {
        if isGone { return nil }
        switch plan.check(feliCa: frame) {
        case .tagLost?:
            isGone = true
            return nil
        case .noAnswer?: return nil
        case .corruptReply?: return core.respond(to: frame).map { Array($0.dropLast()) }
        case nil: return core.respond(to: frame)
        }
    }

    /// Polling straight into the core (a reader's activation; no fault fires on it).
    public mutating func poll(systemCode: [UInt8], requestCode: UInt8) -> [UInt8]? {
        isGone ? nil : core.poll(systemCode: systemCode, requestCode: requestCode)
    }

    public mutating func enterField(adding presentation: [TagFault] = []) {
        isGone = false
        plan.enterField(adding: presentation)
    }
}

/// An ISO 15693 emulation core behind a ``FaultPlan`` (see ``FaultyFeliCaCore``).
public struct FaultyISO15693Core: Sendable {
    public private(set) var core: ISO15693Core
    public private(set) var plan: FaultPlan
    public private(set) var isGone = false

    public init(core: ISO15693Core, faults: [TagFault] = [], presentation: [TagFault] = []) {
        self.core = core
        self.plan = FaultPlan(faults, presentation: presentation)
    }

    /// The response to one request (flags first), `nil` for silence.
    public mutating func respond(to request: [UInt8]) -> [UInt8]? {
        if isGone { return nil }
        switch plan.check(iso15693: request) {
        case .tagLost?:
            isGone = true
            return nil
        case .noAnswer?: return nil
        case .corruptReply?: return core.respond(to: request).map { Array($0.dropLast()) }
        case nil: return core.respond(to: request)
        }
    }

    /// Inventory (one slot, no mask) straight into the core, as a reader's activation sends
    /// it: `00 DSFID UID(LSB first)`, `nil` when the tag is gone. No fault fires on it.
    public mutating func inventory() -> [UInt8]? {
        isGone ? nil : core.respond(to: [0x26, 0x01, 0x00])
    }

    /// Reset To Ready (a reader's re-activation), straight into the core.
    public mutating func resetToReady() { core.powerOn() }

    public mutating func enterField(adding presentation: [TagFault] = []) {
        isGone = false
        plan.enterField(adding: presentation)
        core.powerOn()
    }
}
