// An emulation core for NXP NTAG213/215/216 and MIFARE Ultralight / Ultralight C /
// Ultralight EV1: one command frame in (CRC excluded), one answer out, following
// NTAG213/215/216 datasheet Rev 3.2 §9–§10, MF0ULX1 Rev 3.2 §9–§10, MF0ICU1 Rev 3.9 §9 and
// MF0ICU2 Rev 3.3 §7.5 and §9.

/// A bad memory image handed to ``NTAG21xCore``.
public struct NTAG21xCoreError: Error, Sendable, Hashable, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}

/// The tag side of an NTAG21x or Ultralight: memory image, access conditions, state.
///
/// Commands (first byte of the frame): READ `30`, FAST_READ `3A`, WRITE `A2`,
/// COMPATIBILITY_WRITE `A0` (two frames), GET_VERSION `60`, READ_SIG `3C`, PWD_AUTH `1B`,
/// READ_CNT `39`, HLTA `50 00`; Ultralight EV1 also INCR_CNT `A5` and CHECK_TEARING_EVENT `3E`.
/// An invalid address, a malformed frame of a known command, or a locked or protected page
/// answers NAK `0h` and the tag goes idle: every later frame is ``/NFCBase/Type2Answer/silent``
/// until ``wakeUp()`` or ``reactivate()``.
///
/// A command the chip does not implement gets what that chip's datasheet gives
/// (``Variant/unsupportedCommandAnswer``): NTAG21x and Ultralight EV1 answer NAK `0h` and go
/// idle; a plain Ultralight (MF0ICU1), which knows only READ, WRITE, COMPATIBILITY_WRITE
/// and HLTA, does not answer at all and goes idle. Readers rely on the difference: libnfc's
/// `nfc-mfultralight` and nfcpy take any answer to GET_VERSION for an EV1 or NTAG (nfcpy
/// takes NAK `0h` for an NTAG203), and silence for a plain Ultralight (NXP AN10833).
///
/// Ultralight C (MF0ICU2): READ reaches pages `00h`–`2Bh` (the key pages never read),
/// AUTHENTICATE `1A 00` / `AF …` runs the 2K3DES exchange with the key in pages `2Ch`–`2Fh`,
/// AUTH0 (`2Ah`) and AUTH1 (`2Bh` bit 0) protect writes, or reads and writes, from AUTH0 on
/// until it succeeds; the counter in `29h` is one-way. Lock bytes 2–3 (`28h`) are stored
/// (bits only set) but the locks they put on pages `10h`–`2Fh` are not modelled.
public struct NTAG21xCore: Sendable {
    /// The emulated product.
    public enum Variant: String, Sendable, Hashable, CaseIterable {
        case ntag213, ntag215, ntag216
        /// MIFARE Ultralight MF0ICU1: 16 pages, no GET_VERSION, no configuration pages.
        case ultralight
        /// MIFARE Ultralight C MF0ICU2: 48 pages, 3DES AUTHENTICATE (`1A`), no GET_VERSION.
        case ultralightC
        /// Ultralight EV1, 20 pages (MF0UL11) and 41 pages (MF0UL21).
        case ultralightEV1MF0UL11, ultralightEV1MF0UL21

        /// The memory map.
        public var layout: Type2MemoryLayout {
            switch self {
            case .ntag213: .ntag213
            case .ntag215: .ntag215
            case .ntag216: .ntag216
            case .ultralight: .ultralight
            case .ultralightC: .ultralightC
            case .ultralightEV1MF0UL11: .ultralightEV1MF0UL11
            case .ultralightEV1MF0UL21: .ultralightEV1MF0UL21
            }
        }

        /// The GET_VERSION product, `nil` for a plain Ultralight and an Ultralight C.
        public var product: TagVersion.Product? {
            switch self {
            case .ntag213: .ntag213
            case .ntag215: .ntag215
            case .ntag216: .ntag216
            case .ultralight, .ultralightC: nil
            case .ultralightEV1MF0UL11: .ultralightEV1MF0UL11
            case .ultralightEV1MF0UL21: .ultralightEV1MF0UL21
            }
        }

        var isNTAG: Bool { self == .ntag213 || self == .ntag215 || self == .ntag216 }

        /// How the chip answers a frame whose command code it does not implement.
        public enum UnsupportedCommandAnswer: Sendable, Hashable {
            /// A 4-bit NAK with this value, then IDLE.
            case nak(UInt8)
            /// No answer at all (the reader times out), then IDLE.
            case silence
        }

        /// What this chip does with a command it does not implement, and the state it goes to
        /// (IDLE, or HALT when it was woken from HALT: the core reports idle either way).
        ///
        /// - NTAG213/215/216 (datasheet Rev 3.2, "ACTIVE state": any other data received is
        ///   interpreted as an error and the IC returns to IDLE or HALT; "NTAG ACK and NAK":
        ///   NAK `0h`): NAK `0h`. Documented (state) and reported (the answer): nfcpy 1.0's
        ///   `tt2_nxp.activate` reads an NTAG203's answer to the GET_VERSION it lacks as NAK `0h`.
        /// - Ultralight EV1 MF0UL11/MF0UL21 (MF0ULX1 Rev 3.2, same "ACTIVE state" text and
        ///   ACK/NAK table): as NTAG21x, from the same NXP command interpreter. Assumed.
        /// - Ultralight MF0ICU1 (Rev 3.9, state diagram remark: "the command interpreter returns
        ///   to the Idle state if an unexpected command is received"; its NAKs are defined for
        ///   READ/WRITE arguments and transmission errors only): no answer. Documented by NXP
        ///   AN10833 (MIFARE type identification), which tells Ultralight and Ultralight C
        ///   from EV1 and NTAG by their silence to GET_VERSION, as nfcpy's `tt2_nxp.activate`
        ///   (timeout: MIFARE Ultralight) and libnfc's `nfc-mfultralight` (no answer: 16 pages) do.
        /// - Ultralight C MF0ICU2 (Rev 3.3, §7.2 state diagram remark: "In each state the command
        ///   interpreter returns to the Idle state if an unexpected command is received"; its
        ///   NAKs, Table 15, answer errors of the commands it has): no answer, as MF0ICU1,
        ///   whose first 512 bits it mirrors (§7.5.2). AN10833 tells it apart by AUTHENTICATE.
        public var unsupportedCommandAnswer: UnsupportedCommandAnswer {
            switch self {
            case .ultralight, .ultralightC: .silence
            case .ntag213, .ntag215, .ntag216, .ultralightEV1MF0UL11, .ultralightEV1MF0UL21: .nak(0x0)
            }
        }
    }

    /// The ISO/IEC 14443-3 state as far as commands see it.
    public enum State: Sendable, Hashable {
        /// Selected (ACTIVE or AUTHENTICATED); frames are processed.
        case active
        /// After a NAK: silent until WUPA/REQA (``wakeUp()``).
        case idle
        /// After HLTA: silent until WUPA (``wakeUp()``).
        case halted
    }

    public let variant: Variant
    /// The 32-byte ECC originality signature READ_SIG returns.
    public var signature: [UInt8]
    /// NTAG: the 24-bit NFC counter (`NFC_CNT`); Ultralight EV1: counter 0. Other EV1 counters in ``counters``.
    public var counters: [UInt32] = [0, 0, 0]
    public private(set) var state: State = .active
    /// PWD_AUTH succeeded since the last activation.
    public private(set) var isAuthenticated = false

    private var memory: [UInt8]
    private var pendingCompatibilityWrite: Int?
    /// Ultralight C: the key in force since the last activation (MF0ICU2 §7.5.7: a new key
    /// counts after an RF reset or a re-activation) and a started AUTHENTICATE.
    private var activeKey: TDEA?
    private var authentication: (rndB: [UInt8], challenge: [UInt8])?
    private var randomState: UInt64 = 0x9E37_79B9_7F4A_7C15
    /// Frames this tag answers its own way (a tag file's `answers`, ``Type2FrameAnswer``):
    /// checked before the datasheet's command set while the tag is selected.
    public var frameAnswers: [Type2FrameAnswer] = []
    private var failedAuthentications = 0
    private var counterCountedThisActivation = false

    /// A tag holding `pages` (each 4 bytes, exactly ``Type2MemoryLayout/totalPages`` of them).
    /// Throws ``NTAG21xCoreError`` on a wrong page count or page size, or a signature that is not 32 bytes.
    public init(variant: Variant, pages: [[UInt8]], signature: [UInt8] = [UInt8](repeating: 0, count: 32))
        throws(NTAG21xCoreError)
    {
        let total = variant.layout.totalPages
        guard pages.count == total else {
            throw NTAG21xCoreError(reason: "\(variant.rawValue) has \(total) pages, image has \(pages.count)")
        }
        if let bad = pages.firstIndex(where: { $0.count != 4 }) {
            throw NTAG21xCoreError(reason: "page \(bad) has \(pages[bad].count) bytes, expected 4")
        }
        guard signature.count == 32 else {
            throw NTAG21xCoreError(reason: "signature must be 32 bytes, got \(signature.count)")
        }
        self.variant = variant
        self.memory = pages.flatMap { $0 }
        self.signature = signature
        // RndB comes from a generator seeded by the UID: reproducible runs, different tags differ.
        for b in memory.prefix(8) { randomState = (randomState ^ UInt64(b)) &* 0x1000_0000_01B3 }
        loadKey()
    }

    /// A factory-fresh image: UID pages with valid BCCs, internal byte `48`, locks `00 00`;
    /// CC `E1 10 <size> 00` and an empty NDEF message (`03 00 FE`; NTAG213 behind the Lock
    /// Control TLV `01 03 A0 0C 34` it ships with); configuration pages at datasheet defaults
    /// (dynamic lock `00 00 00 BD`, AUTH0 `FF`, ACCESS `00`, PWD `FF FF FF FF`, PACK `00 00`).
    /// `uid` must be 7 bytes.
    public static func factoryPages(variant: Variant, uid: [UInt8]) throws(ISO14443AActivationError) -> [[UInt8]] {
        let layout = variant.layout
        var m = [UInt8](repeating: 0, count: layout.totalPages * 4)
        m.replaceSubrange(0..<12, with: try ISO14443AActivation.type2UIDPages(uid: uid))
        m.replaceSubrange(12..<16, with: [0xE1, 0x10, layout.ccSizeByte, 0x00])
        let ndef: [UInt8] =
            variant == .ntag213 ? [0x01, 0x03, 0xA0, 0x0C, 0x34, 0x03, 0x00, 0xFE] : [0x03, 0x00, 0xFE]
        m.replaceSubrange(16..<(16 + ndef.count), with: ndef)
        if let p = layout.dynamicLockPage { m[p * 4 + 3] = 0xBD }
        if variant == .ultralightC {  // MF0ICU2 Table 13: AUTH0 30h (no protection), key "BREAKMEIFYOUCAN!"
            m[0x2A * 4] = 0x30
            m.replaceSubrange((0x2C * 4)..<(0x30 * 4), with: Array("BREAKMEIFYOUCAN!".utf8))
        }
        if let c = layout.configurationPage {
            m.replaceSubrange(
                (c * 4)..<(c * 4 + 16),
                with: [
                    variant.isNTAG ? 0x04 : 0x00, 0x00, 0x00, 0xFF,  // CFG0: MIRROR/MOD, RFUI, MIRROR_PAGE, AUTH0
                    0x00, 0x05, 0x00, 0x00,  // CFG1: ACCESS, RFUI/VCTID, RFUI, RFUI
                    0xFF, 0xFF, 0xFF, 0xFF,  // PWD
                    0x00, 0x00, 0x00, 0x00,  // PACK, RFUI
                ])
        }
        return stride(from: 0, to: m.count, by: 4).map { Array(m[$0..<($0 + 4)]) }
    }

    /// The memory image, one 4-byte array per page, as written (PWD and PACK included).
    public var pages: [[UInt8]] {
        stride(from: 0, to: memory.count, by: 4).map { Array(memory[$0..<($0 + 4)]) }
    }

    /// UID, ATQA `44 00` and SAK `00` as an NTAG21x/Ultralight answers anticollision.
    public var activation: ISO14443AActivation? {
        let uid = Array(memory[0..<3]) + Array(memory[4..<8])
        return try? ISO14443AActivation(uid: uid, atqa: [0x44, 0x00], sak: 0x00)
    }

    // MARK: State changes

    /// HLTA: the tag stops answering until ``wakeUp()``.
    public mutating func halt() {
        state = .halted
        pendingCompatibilityWrite = nil
    }

    /// WUPA + anticollision + select: back to ACTIVE from idle or halted; authentication is lost.
    public mutating func wakeUp() {
        state = .active
        isAuthenticated = false
        pendingCompatibilityWrite = nil
        counterCountedThisActivation = false
        authentication = nil
        loadKey()
    }

    /// Ultralight C: the 3DES key from pages `2Ch`–`2Fh`, each half stored byte-reversed
    /// (MF0ICU2 §7.5.7, Table 11: key bytes 00…07 read 07 06 05 04 / 03 02 01 00).
    private mutating func loadKey() {
        guard variant == .ultralightC else { return }
        let stored = Array(memory[(0x2C * 4)..<(0x30 * 4)])
        activeKey = TDEA(key: Array(stored[0..<8].reversed()) + Array(stored[8..<16].reversed()))
    }

    /// What a reader does after a NAK (``/NFCBase/Type2TagTransport/reactivate()``): same as ``wakeUp()``.
    public mutating func reactivate() { wakeUp() }

    // MARK: Commands

    /// Processes one command frame (without CRC) and returns the tag's answer.
    public mutating func respond(to frame: [UInt8]) -> Type2Answer {
        guard state == .active else { return .silent }
        if let declared = frameAnswers.first(where: { $0.frame == frame }) { return declared.answer }
        if let page = pendingCompatibilityWrite {
            pendingCompatibilityWrite = nil
            guard frame.count == 16 else { return nak() }
            return write(page: page, data: Array(frame[0..<4]))
        }
        if let started = authentication {
            authentication = nil
            if frame.first == 0xAF { return authenticateSecondPart(frame, started) }
        }
        guard let command = frame.first else { return unsupported() }
        let ev1 = variant != .ultralight && variant != .ultralightC
        let ultralightEV1 = variant == .ultralightEV1MF0UL11 || variant == .ultralightEV1MF0UL21
        switch command {
        case 0x30:
            guard frame.count == 2 else { return nak() }
            return read(from: Int(frame[1]))
        case 0x3A where ev1:
            guard frame.count == 3 else { return nak() }
            return fastRead(from: Int(frame[1]), to: Int(frame[2]))
        case 0xA2:
            guard frame.count == 6 else { return nak() }
            return write(page: Int(frame[1]), data: Array(frame[2..<6]))
        case 0xA0:
            guard frame.count == 2, writeCheck(page: Int(frame[1])) else { return nak() }
            pendingCompatibilityWrite = Int(frame[1])
            return .ack
        case 0x60 where ev1:
            guard frame.count == 1, let product = variant.product else { return nak() }
            return .data(TagVersion.answer(for: product).bytes)
        case 0x3C where ev1:
            guard frame.count == 2, frame[1] == 0x00 else { return nak() }
            return .data(signature)
        case 0x1B where ev1:
            guard frame.count == 5 else { return nak() }
            return passwordAuthenticate(Array(frame[1..<5]))
        case 0x39 where ev1:
            guard frame.count == 2 else { return nak() }
            return readCounter(Int(frame[1]))
        case 0xA5 where ultralightEV1:  // INCR_CNT (MF0ULX1 §9.7): counter + 24-bit value, LSB first
            guard frame.count == 6, frame[1] < 3 else { return nak() }
            let add = UInt32(frame[2]) | UInt32(frame[3]) << 8 | UInt32(frame[4]) << 16
            guard counters[Int(frame[1])] + add <= 0xFF_FFFF else { return nak() }
            counters[Int(frame[1])] += add
            return .ack
        case 0x3E where ultralightEV1:  // CHECK_TEARING_EVENT (MF0ULX1 §9.8): BDh = no tearing
            guard frame.count == 2, frame[1] < 3 else { return nak() }
            return .data([0xBD])
        case 0x1A where variant == .ultralightC:  // AUTHENTICATE part 1 (MF0ICU2 §7.5.5, Figure 8)
            guard frame.count == 2, frame[1] == 0x00, let key = activeKey else { return nak() }
            let rndB = nextRandomBlock()
            let challenge = key.encrypt(rndB, iv: [UInt8](repeating: 0, count: 8))
            authentication = (rndB, challenge)
            return .data([0xAF] + challenge)
        case 0x50:
            guard frame.count == 2, frame[1] == 0x00 else { return nak() }
            halt()
            return .silent
        default:
            return unsupported()
        }
    }

    /// AUTHENTICATE part 2: `AF` + ek(RndA ‖ RndB') chained on the challenge; RndB' must be
    /// RndB rotated left by one byte. Answers `00` + ek(RndA') chained on the last block
    /// received, or NAK (MF0ICU2 §7.5.5: the 2K3DES CBC exchange).
    private mutating func authenticateSecondPart(
        _ frame: [UInt8], _ started: (rndB: [UInt8], challenge: [UInt8])
    ) -> Type2Answer {
        guard frame.count == 17, let key = activeKey else { return nak() }
        let token = Array(frame[1..<17])
        let plain = key.decrypt(token, iv: started.challenge)
        let rndA = Array(plain[0..<8])
        guard Array(plain[8..<16]) == Array(started.rndB[1...]) + [started.rndB[0]] else { return nak() }
        isAuthenticated = true
        return .data([0x00] + key.encrypt(Array(rndA[1...]) + [rndA[0]], iv: Array(token[8..<16])))
    }

    /// Eight bytes of a 64-bit xorshift generator (RndB only has to differ run to run of a session).
    private mutating func nextRandomBlock() -> [UInt8] {
        randomState ^= randomState << 13
        randomState ^= randomState >> 7
        randomState ^= randomState << 17
        return (0..<8).map { UInt8(truncatingIfNeeded: randomState >> (8 * UInt64($0))) }
    }

    /// A command code this chip does not implement: ``Variant/unsupportedCommandAnswer``.
    private mutating func unsupported() -> Type2Answer {
        switch variant.unsupportedCommandAnswer {
        case .nak(let value): return nak(value)
        case .silence:
            state = .idle
            pendingCompatibilityWrite = nil
            return .silent
        }
    }

    private mutating func nak(_ code: UInt8 = 0x0) -> Type2Answer {
        state = .idle
        pendingCompatibilityWrite = nil
        return .nak(code)
    }

    private var layout: Type2MemoryLayout { variant.layout }
    private var totalPages: Int { layout.totalPages }
    /// The pages READ reaches: all of them, but an Ultralight C's key pages (`00h`–`2Bh` only).
    private var readablePages: Int { variant == .ultralightC ? 0x2C : totalPages }
    private var auth0: Int {
        if variant == .ultralightC { return Int(memory[0x2A * 4]) }  // AUTH0, 03h–30h
        return layout.configurationPage.map { Int(memory[$0 * 4 + 3]) } ?? Int.max
    }
    private var access: UInt8 { layout.accessPage.map { memory[$0 * 4] } ?? 0 }
    /// Protected reads (NTAG/EV1 PROT, Ultralight C AUTH1 bit 0 = 0) without authentication:
    /// reads from AUTH0 on are refused.
    private var readBarrier: Int {
        let protected = variant == .ultralightC ? memory[0x2B * 4] & 0x01 == 0 : access & 0x80 != 0
        return protected && !isAuthenticated ? auth0 : Int.max
    }

    private func readable(_ page: Int) -> [UInt8] {
        if page == layout.passwordPage || page == layout.packPage { return [0, 0, 0, 0] }
        return Array(memory[(page * 4)..<(page * 4 + 4)])
    }

    private mutating func countRead() {
        guard variant.isNTAG, !counterCountedThisActivation, access & 0x10 != 0 else { return }
        counterCountedThisActivation = true
        if counters[0] < 0xFF_FFFF { counters[0] += 1 }
    }

    /// READ: 4 pages from `start`, rolling over to page 0 past the last page, or past
    /// AUTH0 − 1 while read protection is in force.
    private mutating func read(from start: Int) -> Type2Answer {
        let end = min(readablePages, readBarrier)
        guard start < end else { return nak() }
        countRead()
        var out: [UInt8] = []
        for i in 0..<4 { out += readable((start + i) % end) }
        return .data(out)
    }

    /// FAST_READ: pages `start...end`; NAK when start > end, end is past the last page, or the range enters read protection.
    private mutating func fastRead(from start: Int, to end: Int) -> Type2Answer {
        guard start <= end, end < totalPages, end < readBarrier else { return nak() }
        countRead()
        return .data((start...end).flatMap { readable($0) })
    }

    /// The checks WRITE and COMPATIBILITY_WRITE share: address, AUTH0, lock bits, CFGLCK.
    private func writeCheck(page: Int) -> Bool {
        guard page >= 2, page < totalPages else { return false }
        if page >= auth0 && !isAuthenticated { return false }
        let lock0 = memory[10]
        let lock1 = memory[11]
        switch page {
        case 2: return true
        case 3: return lock0 & 0x08 == 0
        case 4..<8: return lock0 & (1 << UInt8(page)) == 0
        case 8..<16: return lock1 & (1 << UInt8(page - 8)) == 0
        default: break
        }
        if let c = layout.configurationPage, page == c || page == c + 1 {
            return access & 0x40 == 0  // CFGLCK
        }
        if let d = layout.dynamicLockPage, page <= layout.lastUserPage, page >= 16 {
            let bit = (page - 16) / max(layout.pagesPerDynamicLockBit, 1)
            return memory[d * 4 + bit / 8] & (1 << UInt8(bit % 8)) == 0
        }
        return true
    }

    private mutating func write(page: Int, data: [UInt8]) -> Type2Answer {
        guard writeCheck(page: page) else { return nak() }
        let base = page * 4
        switch page {
        case 2:  // bytes 0-1 (BCC1, internal) are read-only; lock bits can only be set
            memory[base + 2] |= data[2]
            memory[base + 3] |= data[3]
        case 0x28 where variant == .ultralightC:  // lock bytes 2-3: bits can only be set
            memory[base] |= data[0]
            memory[base + 1] |= data[1]
        case 0x29 where variant == .ultralightC:  // the 16-bit one-way counter (§7.5.11)
            return writeCounter(data)
        case 3:  // the CC is one-time programmable: bits can only be set
            for i in 0..<4 { memory[base + i] |= data[i] }
        case layout.dynamicLockPage:
            for i in 0..<3 { memory[base + i] |= data[i] }
        default:
            memory.replaceSubrange(base..<(base + 4), with: data)
        }
        return .ack
    }

    /// Ultralight C counter (MF0ICU2 §7.5.11): the first WRITE sets any value 0001h–FFFFh,
    /// later ones add the low nibble of byte 0 (1–F); no overflow past FFFFh. Byte 0 is the
    /// low byte (assumed: the datasheet names the bytes, not their order).
    private mutating func writeCounter(_ data: [UInt8]) -> Type2Answer {
        let base = 0x29 * 4
        let current = Int(memory[base]) | Int(memory[base + 1]) << 8
        let next: Int
        if current == 0 {
            next = Int(data[0]) | Int(data[1]) << 8
        } else {
            next = current + Int(data[0] & 0x0F)
        }
        guard next != current, next <= 0xFFFF else { return nak() }
        memory[base] = UInt8(next & 0xFF)
        memory[base + 1] = UInt8(next >> 8)
        return .ack
    }

    private mutating func passwordAuthenticate(_ password: [UInt8]) -> Type2Answer {
        guard let pwd = layout.passwordPage, let pack = layout.packPage else { return nak() }
        let limit = Int(access & 0x07)
        if limit != 0 && failedAuthentications >= limit { return nak(0x4) }
        guard Array(memory[(pwd * 4)..<(pwd * 4 + 4)]) == password else {
            failedAuthentications += 1
            return nak()
        }
        failedAuthentications = 0
        isAuthenticated = true
        return .data(Array(memory[(pack * 4)..<(pack * 4 + 2)]))
    }

    private mutating func readCounter(_ address: Int) -> Type2Answer {
        let value: UInt32
        if variant.isNTAG {
            guard address == 2, access & 0x10 != 0 else { return nak() }
            if access & 0x08 != 0 && !isAuthenticated { return nak() }
            value = counters[0]
        } else {
            guard address < 3 else { return nak() }
            value = counters[address]
        }
        return .data([UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF)])
    }
}
