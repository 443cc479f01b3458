// Writing a tag file (a dump or a backup) back onto a Type 2 tag, as `nfc-mfultralight w`,
// Proxmark3's `hf mfu restore` and tagtool's `load` do, but safely: only the pages that
// differ, in an order that never leaves a reader a half-written message or a locked page in
// the way, and never the one-time-programmable, lock or configuration pages unless asked.

/// The pages a restore writes, in order, and the pages it leaves, each with why.
///
/// Page kinds (NTAG213/215/216 data sheet §8.5, MF0ULX1 §8.5, MF0ICU1 §8.5, MF0ICU2 §7.5):
/// pages 0–1 and byte 0–1 of page 2 are the UID and its check bytes (read-only); page 2's
/// bytes 2–3 the static lock bits and page 3 the CC (both one-time programmable: bits can be
/// set, never cleared); the dynamic lock page (Ultralight C: 28h, its counter 29h); the
/// configuration pages (CFG0, CFG1; Ultralight C: AUTH0/AUTH1 at 2Ah–2Bh); PWD and PACK,
/// which read as 00 on every tag and are never written back; the user pages.
///
/// The order: when the data changes and the tag holds an NDEF TLV where the file has one, its
/// length is set to 0 first (a reader in between sees an empty message, as `write` does);
/// then the user pages that differ, the page(s) of the file's NDEF length last among them;
/// then configuration (after the data: AUTH0 could protect it), the CC, and the lock pages
/// last (lock bits would stop the writes before them).
public struct Type2RestorePlan: Sendable, Hashable {
    /// What a page is to a restore.
    public enum PageKind: String, Sendable, Hashable {
        case uid, data
        case capabilityContainer = "cc"
        case lock, configuration, password
    }

    /// One WRITE (4 bytes to a page).
    public struct Write: Sendable, Hashable {
        public var page: Int
        public var bytes: [UInt8]
        public var kind: PageKind
        /// Why it is here (`"user data"`, `"NDEF length 0 first"`…).
        public var note: String
        /// The bytes a read-back must show (page 2: only bytes 2–3 are the file's).
        public func matches(_ readBack: [UInt8]) -> Bool {
            kind == .lock && page == 2 ? Array(readBack[2..<4]) == Array(bytes[2..<4]) : readBack == bytes
        }
    }

    /// A page that differs and is not written.
    public struct Skip: Sendable, Hashable {
        public var page: Int
        public var kind: PageKind
        public var why: String
    }

    public var writes: [Write]
    public var skipped: [Skip]

    /// What may be written besides user data.
    public struct Options: Sendable, Hashable {
        /// Static and dynamic lock bits and the CC (one-time programmable).
        public var includeLockBits = false
        /// CFG0/CFG1 (Ultralight C: AUTH0/AUTH1).
        public var includeConfig = false
        /// Restore onto a tag whose UID differs from the file's.
        public var anyUID = false
        public init(includeLockBits: Bool = false, includeConfig: Bool = false, anyUID: Bool = false) {
            self.includeLockBits = includeLockBits
            self.includeConfig = includeConfig
            self.anyUID = anyUID
        }
    }

    /// Why a file can't be restored onto a tag at all.
    public struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
    }

    /// The plan for writing `file` onto the tag now holding `current` (a snapshot of it, as
    /// `dump` reads it). Throws ``Refusal`` for a file of another type or size, a Type 4 file,
    /// or another UID (unless ``Options/anyUID``).
    public init(file: TagFile, current: TagFile, options: Options = Options()) throws(Refusal) {
        guard file.type.isType2 else {
            throw Refusal(description: "the file is a \(file.type.rawValue) tag: restore writes Type 2 pages")
        }
        guard file.type == current.type, file.pages.count == current.pages.count else {
            throw Refusal(
                description:
                    "the file is a \(file.type.rawValue) of \(file.pages.count) pages; the tag is a \(current.type.rawValue) of \(current.pages.count) pages: a dump goes back only onto a tag of its own type and size"
            )
        }
        let fileUID = file.activation.uid
        let tagUID = current.activation.uid
        if fileUID != tagUID && !options.anyUID {
            throw Refusal(
                description:
                    "the file is of the tag with UID \(fileUID.hexString()); this tag's UID is \(tagUID.hexString()) (add --any-uid to restore its content onto another tag)"
            )
        }
        let kinds = Self.kinds(file.type, pageCount: file.pages.count)
        let unread = Set(file.unreadPages)
        var data: [Write] = []
        var config: [Write] = []
        var cc: [Write] = []
        var locks: [Write] = []
        var skipped: [Skip] = []
        for p in 0..<file.pages.count {
            let want = file.pages[p]
            let have = current.pages[p]
            let kind = kinds(p)
            let differs = p == 2 ? Array(want[2..<4]) != Array(have[2..<4]) : want != have
            guard differs else { continue }
            if unread.contains(p) {
                skipped.append(Skip(page: p, kind: kind, why: "not read into the file (its bytes are placeholders)"))
                continue
            }
            switch kind {
            case .uid:
                skipped.append(Skip(page: p, kind: kind, why: "UID page: fixed at the factory"))
            case .password:
                skipped.append(Skip(page: p, kind: kind, why: "PWD/PACK read as 00 on every tag: never restored"))
            case .data:
                data.append(Write(page: p, bytes: want, kind: kind, note: "user data"))
            case .configuration:
                if options.includeConfig {
                    config.append(Write(page: p, bytes: want, kind: kind, note: "configuration (--include-config)"))
                } else {
                    skipped.append(
                        Skip(page: p, kind: kind, why: "configuration page: left as it is (--include-config writes it)")
                    )
                }
            case .capabilityContainer, .lock:
                let bytes = p == 2 ? Array(have[0..<2]) + Array(want[2..<4]) : want
                let range = p == 2 ? 2..<4 : 0..<4
                let cleared = range.contains { have[$0] & ~want[$0] != 0 }
                let what = kind == .lock ? "lock page" : "CC (one-time programmable)"
                if cleared {
                    skipped.append(
                        Skip(
                            page: p, kind: kind,
                            why:
                                "\(what): the tag has bits set that the file has not (\(have.hexString(separator: " ")) vs \(want.hexString(separator: " "))); one-time-programmable bits can't be cleared"
                        ))
                } else if !options.includeLockBits {
                    skipped.append(
                        Skip(
                            page: p, kind: kind, why: "\(what): left as it is (--include-lock-bits writes it, for good)"
                        ))
                } else {
                    let w = Write(
                        page: p, bytes: bytes, kind: kind, note: "\(what) (--include-lock-bits: irreversible)")
                    if kind == .lock { locks.append(w) } else { cc.append(w) }
                }
            }
        }
        // The NDEF length last among the data pages, and 0 first when the tag has a message there.
        var first: [Write] = []
        let fileLengthPages = Set((Self.ndefLength(file.pages)?.lengthAddresses ?? []).map { $0 / 4 })
        // Only when pages besides the length's change: a lone length write is atomic already.
        if data.contains(where: { !fileLengthPages.contains($0.page) }), let fileTLV = Self.ndefLength(file.pages),
            let tagTLV = Self.ndefLength(current.pages),
            fileTLV.address == tagTLV.address, tagTLV.length != 0
        {
            var zeroed = current.pages
            for a in tagTLV.lengthAddresses { zeroed[a / 4][a % 4] = 0 }
            if tagTLV.lengthAddresses.count == 3 {
                zeroed[tagTLV.lengthAddresses[0] / 4][tagTLV.lengthAddresses[0] % 4] = 0xFF
            }
            for p in Set(tagTLV.lengthAddresses.map { $0 / 4 }).sorted() where kinds(p) == .data {
                first.append(Write(page: p, bytes: zeroed[p], kind: .data, note: "NDEF length 0 first"))
                // A length the file shares with the tag is no differing page, but zeroed it must
                // be written back: without this the tag was left with NDEF length 0 (an empty
                // message), and the read-back, which checks each page's last write, agreed.
                if !data.contains(where: { $0.page == p }) {
                    data.append(Write(page: p, bytes: file.pages[p], kind: .data, note: "NDEF length back"))
                }
            }
        }
        if let fileTLV = Self.ndefLength(file.pages) {
            let lengthPages = Set(fileTLV.lengthAddresses.map { $0 / 4 })
            data = data.filter { !lengthPages.contains($0.page) } + data.filter { lengthPages.contains($0.page) }
        }
        // A zeroing write the final data write repeats exactly is no step of its own.
        first = first.filter { z in !data.contains { $0.page == z.page && $0.bytes == z.bytes } }
        writes =
            first + data + config + cc
            + locks.sorted { ($0.page == 2 ? 1 : 0, $0.page) < ($1.page == 2 ? 1 : 0, $1.page) }
        self.skipped = skipped
    }

    /// What page `p` is on a tag of `type` with `pageCount` pages.
    public static func kinds(_ type: TagFile.TagType, pageCount: Int) -> (Int) -> PageKind {
        let layout: Type2MemoryLayout? =
            switch type {
            case .ntag213: .ntag213
            case .ntag215: .ntag215
            case .ntag216: .ntag216
            case .ultralight: .ultralight
            case .ultralightC: .ultralightC
            case .ultralightEV1: pageCount > 20 ? .ultralightEV1MF0UL21 : .ultralightEV1MF0UL11
            case .type4, .mifareClassic1K, .feliCaLiteS, .feliCaStandard, .icodeSLIX, .st25tv: nil
            }
        return { p in
            switch p {
            case 0, 1: return .uid
            case 2: return .lock
            case 3: return .capabilityContainer
            default: break
            }
            if type == .ultralightC {
                switch p {
                case 0x28, 0x29: return .lock  // lock bytes 2–3; the 16-bit one-way counter
                case 0x2A, 0x2B: return .configuration  // AUTH0, AUTH1
                case 0x2C...: return .password  // the 3DES key, never readable
                default: return .data
                }
            }
            guard let layout else { return .data }
            if p == layout.dynamicLockPage { return .lock }
            if let cfg = layout.configurationPage {
                if p == cfg || p == cfg + 1 { return .configuration }
                if p >= cfg + 2 { return .password }
            }
            return p <= layout.lastUserPage ? .data : .configuration
        }
    }

    /// The NDEF TLV in `pages` (NFC Forum T2T §2.3: NULL, Lock and Memory Control TLVs before
    /// it): its address and the addresses of its length field, and the length.
    static func ndefLength(_ pages: [[UInt8]]) -> (address: Int, lengthAddresses: [Int], length: Int)? {
        let bytes = pages.flatMap { $0 }
        var i = 16
        while i + 1 < bytes.count {
            switch bytes[i] {
            case 0x00: i += 1
            case 0xFE: return nil
            case 0x03:
                if bytes[i + 1] == 0xFF, i + 3 < bytes.count {
                    return (i, [i + 1, i + 2, i + 3], Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]))
                }
                return (i, [i + 1], Int(bytes[i + 1]))
            default:
                let l = Int(bytes[i + 1])
                if l == 0xFF {
                    guard i + 3 < bytes.count else { return nil }
                    i += 4 + (Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]))
                } else {
                    i += 2 + l
                }
            }
        }
        return nil
    }
}

/// A restore that stopped part way: how many of the plan's writes reached the tag, and why.
public struct Type2RestoreStopped: Error, Sendable, CustomStringConvertible {
    /// The writes of the plan that were sent and acknowledged, in order.
    public var written: Int
    /// A signal asked for the stop (its name), or nil when the tag failed.
    public var stoppedBy: String?
    public var cause: String
    public var description: String { cause }
}

extension Type2RestorePlan {
    /// Sends the writes in order (WRITE `A2`, or the carrier's own: PC/SC UPDATE BINARY
    /// `FF D6`). `stop` is checked before each write.
    public func apply(_ transport: any Type2TagTransport, stop: StopRequest? = nil) throws(Type2RestoreStopped) {
        for (i, w) in writes.enumerated() {
            if let why = stop?.requested {
                throw Type2RestoreStopped(written: i, stoppedBy: why, cause: "stopped by \(why) before page \(w.page)")
            }
            do { try transport.write(page: UInt8(w.page), data: w.bytes) } catch {
                throw Type2RestoreStopped(written: i, stoppedBy: nil, cause: "page \(w.page): \(error)")
            }
        }
    }

    /// Reads every written page back (READ `30`) and returns the pages that do not hold
    /// what was last written to them.
    public func verify(_ transport: any Type2TagTransport) throws -> [Int] {
        var differing: [Int] = []
        var last: [Int: Write] = [:]
        for w in writes { last[w.page] = w }
        for w in last.values.sorted(by: { $0.page < $1.page }) {
            let back = Array(try transport.read(page: UInt8(w.page)).prefix(4))
            if back.count < 4 || !w.matches(back) { differing.append(w.page) }
        }
        return differing
    }
}
