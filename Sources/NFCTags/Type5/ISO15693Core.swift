// An ISO/IEC 15693 vicinity tag's command set (ISO/IEC 15693-3 §10; the codes as AOSP
// system/nfc tags_defs.h and rw_i93.c use them): Inventory, Stay Quiet, Read / Write / Lock
// Single Block, Read / Write Multiple Blocks, Select, Reset To Ready, Write / Lock AFI and
// DSFID, Get System Information, Get Multiple Block Security Status and the extended
// (16-bit block number) forms. The same core answers in the in-process simulator and behind
// the vpcd card (a PN532 cannot reach ISO 15693).

/// An ISO 15693 tag: UID, DSFID, AFI, IC reference, blocks of `blockSize` bytes, lock bits.
///
/// Requests are `flags command [UID LSB first] parameters` (no CRC); responses `00 data`
/// or `01 error`; `nil` is silence (an addressed request for another UID, a tag that is
/// quiet, a Select-flag request to a tag not selected). Error codes (ISO/IEC 15693-3
/// table 7): 01 not supported, 02 not recognised, 03 option not supported, 0F unknown,
/// 10 block not available, 11 already locked, 12 locked (write refused), 13 programming
/// failed, 14 lock failed.
public struct ISO15693Core: Sendable, Hashable {
    /// The UID, big-endian (`E0` first), as Core NFC's `identifier` and `tag show` print it.
    public var uid: [UInt8]
    public var dsfid: UInt8
    public var afi: UInt8
    public var icReference: UInt8
    public var blockSize: Int
    public var blocks: [[UInt8]]
    public var lockedBlocks: Set<Int>
    public var afiLocked = false
    public var dsfidLocked = false

    enum State: Sendable, Hashable { case ready, quiet, selected }
    private(set) var state = State.ready

    public init(
        uid: [UInt8], dsfid: UInt8 = 0, afi: UInt8 = 0, icReference: UInt8 = 0, blockSize: Int, blocks: [[UInt8]],
        lockedBlocks: Set<Int> = []
    ) {
        self.uid = uid
        self.dsfid = dsfid
        self.afi = afi
        self.icReference = icReference
        self.blockSize = blockSize
        self.blocks = blocks
        self.lockedBlocks = lockedBlocks
    }

    /// The IC manufacturer code (ISO/IEC 7816-6): UID byte 1 (`04` NXP, `02` ST).
    public var icManufacturerCode: UInt8 { uid.count == 8 ? uid[1] : 0 }
    /// The UID as the air carries it (LSB first).
    public var uidOnAir: [UInt8] { uid.reversed() }

    /// The tag enters the field again: Ready.
    public mutating func powerOn() { state = .ready }

    /// Answers one request; `nil` is silence.
    public mutating func respond(to request: [UInt8]) -> [UInt8]? {
        guard request.count >= 2 else { return nil }
        let flags = request[0]
        let cmd = request[1]
        if flags & 0x04 != 0 {
            // Inventory (flags b3): 01 with mask length; one slot or 16, answered in slot 0.
            guard cmd == 0x01, state != .quiet else { return nil }
            var i = 2
            if flags & 0x10 != 0 {
                guard request.count > i, request[i] == afi || request[i] == 0 else { return nil }
                i += 1
            }
            guard request.count > i else { return nil }
            let maskBits = Int(request[i])
            let mask = Array(request.dropFirst(i + 1))
            guard maskBits <= 64, mask.count == (maskBits + 7) / 8 else { return nil }
            var v: UInt64 = 0
            for (k, b) in uidOnAir.enumerated() { v |= UInt64(b) << (8 * k) }
            var m: UInt64 = 0
            for (k, b) in mask.enumerated() { m |= UInt64(b) << (8 * k) }
            if maskBits > 0 {
                let bits: UInt64 = maskBits == 64 ? ~0 : (1 << UInt64(maskBits)) - 1
                guard v & bits == m & bits else { return nil }
            }
            return [0x00, dsfid] + uidOnAir
        }
        var p = Array(request.dropFirst(2))
        let addressed = flags & 0x20 != 0
        if addressed {
            guard p.count >= 8, Array(p.prefix(8)) == uidOnAir else { return nil }
            p.removeFirst(8)
        } else if flags & 0x10 != 0 {
            guard state == .selected else { return nil }
        } else if state == .quiet {
            return nil
        }
        let option = flags & 0x40 != 0
        switch cmd {
        case 0x02:
            guard addressed else { return nil }
            state = .quiet
            return nil
        case 0x20, 0x30:
            let (b, n) = blockNumber(p, extended: cmd == 0x30)
            guard let b, p.count == n else { return Self.error(0x0F) }
            guard b < blocks.count else { return Self.error(0x10) }
            return [0x00] + (option ? [security(b)] : []) + blocks[b]
        case 0x21, 0x31:
            let (b, n) = blockNumber(p, extended: cmd == 0x31)
            guard let b, p.count == n + blockSize else { return Self.error(0x0F) }
            guard b < blocks.count else { return Self.error(0x10) }
            guard !lockedBlocks.contains(b) else { return Self.error(0x12) }
            blocks[b] = Array(p.suffix(blockSize))
            return [0x00]
        case 0x22, 0x32:
            let (b, n) = blockNumber(p, extended: cmd == 0x32)
            guard let b, p.count == n else { return Self.error(0x0F) }
            guard b < blocks.count else { return Self.error(0x10) }
            guard !lockedBlocks.contains(b) else { return Self.error(0x11) }
            lockedBlocks.insert(b)
            return [0x00]
        case 0x23, 0x33, 0x2C, 0x3C:
            let extended = cmd == 0x33 || cmd == 0x3C
            let (first, n) = blockNumber(p, extended: extended)
            guard let first, p.count == 2 * n else { return Self.error(0x0F) }
            let count = (extended ? Int(p[2]) | Int(p[3]) << 8 : Int(p[1])) + 1
            guard first + count <= blocks.count else { return Self.error(0x10) }
            var out: [UInt8] = [0x00]
            for b in first..<(first + count) {
                if cmd == 0x2C || cmd == 0x3C {
                    out.append(security(b))
                } else {
                    out += (option ? [security(b)] : []) + blocks[b]
                }
            }
            return out
        case 0x24, 0x34:
            let extended = cmd == 0x34
            let (first, n) = blockNumber(p, extended: extended)
            guard let first, p.count >= 2 * n else { return Self.error(0x0F) }
            let count = (extended ? Int(p[2]) | Int(p[3]) << 8 : Int(p[1])) + 1
            guard p.count == 2 * n + count * blockSize else { return Self.error(0x0F) }
            guard first + count <= blocks.count else { return Self.error(0x10) }
            guard !(first..<(first + count)).contains(where: lockedBlocks.contains) else { return Self.error(0x12) }
            for k in 0..<count {
                let at = 2 * n + k * blockSize
                blocks[first + k] = Array(p[at..<(at + blockSize)])
            }
            return [0x00]
        case 0x25:
            guard addressed else { return Self.error(0x0F) }
            state = .selected
            return [0x00]
        case 0x26:
            state = .ready
            return [0x00]
        case 0x27, 0x29:
            guard p.count == 1 else { return Self.error(0x0F) }
            if cmd == 0x27 {
                guard !afiLocked else { return Self.error(0x12) }
                afi = p[0]
            } else {
                guard !dsfidLocked else { return Self.error(0x12) }
                dsfid = p[0]
            }
            return [0x00]
        case 0x28, 0x2A:
            if cmd == 0x28 {
                guard !afiLocked else { return Self.error(0x11) }
                afiLocked = true
            } else {
                guard !dsfidLocked else { return Self.error(0x11) }
                dsfidLocked = true
            }
            return [0x00]
        case 0x2B:
            guard p.isEmpty else { return Self.error(0x0F) }
            return [0x00, 0x0F] + uidOnAir + [
                dsfid, afi, UInt8((blocks.count - 1) & 0xFF), UInt8((blockSize - 1) & 0x1F),
            ]
                + [icReference]
        default:
            return Self.error(0x01)
        }
    }

    /// The block number in `p` (1 byte, or 2 little-endian for the extended commands) and
    /// how many bytes it took.
    private func blockNumber(_ p: [UInt8], extended: Bool) -> (Int?, Int) {
        if extended { return (p.count >= 2 ? Int(p[0]) | Int(p[1]) << 8 : nil, 2) }
        return (p.first.map(Int.init), 1)
    }

    private func security(_ b: Int) -> UInt8 { lockedBlocks.contains(b) ? 0x01 : 0x00 }

    static func error(_ code: UInt8) -> [UInt8] { [0x01, code] }
}
