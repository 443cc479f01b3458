// A FeliCa card's command set as a reader meets it (JIS X 6319-4; Sony's FeliCa card user's
// manual command codes as nfcpy and libnfc use them): Polling, Request Service, Request
// Response, Read / Write Without Encryption (NFC Forum Type 3 Tag's Check and Update) and
// Request System Code. The same core answers in the in-process simulator, on the virtual
// PN532 and behind the vpcd card.

/// A FeliCa card: one or more systems, each with its IDm, services and blocks.
///
/// Frames in and out start with LEN (which counts itself); `nil` is silence, what a real
/// card does for a Polling of a system it lacks, an IDm that is not its own, or a command it
/// does not know. Service codes are little-endian on the wire (`0B 00` is service 000B);
/// system codes big-endian (`12 FC`).
public struct FeliCaCore: Sendable, Hashable {
    /// One service of a system. Its attribute (the low 6 bits of the code, JIS X 6319-4
    /// §5.3 / Sony user's manual §2.3.1) decides access: bit 0 set = no key needed
    /// (`…09`, `…0B`, `…0D`, `…0F`), bit 1 set = read-only (`…0B`, `…0F`).
    public struct Service: Sendable, Hashable {
        public var code: UInt16
        public init(code: UInt16) { self.code = code }
        /// Readable without authentication.
        public var readableWithoutKey: Bool { code & 0x01 != 0 }
        /// Writable without authentication (random or cyclic read/write service, no key).
        public var writableWithoutKey: Bool { code & 0x01 != 0 && code & 0x02 == 0 && code & 0x30 != 0x10 }
    }

    /// One system: its code, its IDm (the upper nibble of IDm[0] is the system number), its
    /// services and the blocks (16 bytes each) they reach. Every service of a system reaches
    /// the same blocks here, as on a FeliCa Lite-S, whose services 000B (read) and 0009
    /// (read/write) are two views of one memory (assumed for multi-service Standard cards,
    /// which this bench models with one block area per system).
    public struct System: Sendable, Hashable {
        public var code: UInt16
        public var idm: [UInt8]
        public var services: [Service]
        public var blocks: [[UInt8]]
        public init(code: UInt16, idm: [UInt8], services: [Service], blocks: [[UInt8]]) {
            self.code = code
            self.idm = idm
            self.services = services
            self.blocks = blocks
        }
    }

    /// The Polling answer's PMm (IC code in bytes 0–1, timing parameters in 2–7).
    public var pmm: [UInt8]
    public var systems: [System]
    /// Most blocks one Read Without Encryption (Check) may name (FeliCa Lite-S: 4).
    public var maximumReadBlocks: Int
    /// Most blocks one Write Without Encryption (Update) may name (FeliCa Lite-S: 1).
    public var maximumWriteBlocks: Int
    /// Whether the card answers Request Response (04). libnfc notes its presence check "does
    /// not work on Felica Lite cards"; a card that does not answer looks gone to it.
    public var answersRequestResponse: Bool
    /// The system the last successful Polling selected (index into ``systems``).
    public private(set) var current: Int = 0

    public init(
        pmm: [UInt8], systems: [System], maximumReadBlocks: Int = 4, maximumWriteBlocks: Int = 1,
        answersRequestResponse: Bool = true
    ) {
        self.pmm = pmm
        self.systems = systems
        self.maximumReadBlocks = maximumReadBlocks
        self.maximumWriteBlocks = maximumWriteBlocks
        self.answersRequestResponse = answersRequestResponse
    }

    /// The IDm a card shows for system number `n`: IDm[0]'s upper 4 bits are the system
    /// number (East Wind EWTJ680H manual p. 58), the rest is the card's.
    public static func idm(_ base: [UInt8], system n: Int) -> [UInt8] {
        guard !base.isEmpty else { return base }
        var out = base
        out[0] = base[0] & 0x0F | UInt8(n & 0x0F) << 4
        return out
    }

    /// IDm of the current system.
    public var currentIDm: [UInt8] { systems.isEmpty ? [] : systems[current].idm }

    /// The Polling response (SENSF_RES without LEN): `01 IDm PMm [RD]` for the first system
    /// matching `systemCode` (`FF` in either byte matches any), or `nil`: no system matches.
    /// `requestCode` 1 adds the system code, 2 the communication performance `00 83` (212
    /// and 424 kbit/s, assumed).
    public mutating func poll(systemCode: [UInt8], requestCode: UInt8) -> [UInt8]? {
        guard systemCode.count == 2 else { return nil }
        guard
            let i = systems.firstIndex(where: {
                (systemCode[0] == 0xFF || systemCode[0] == UInt8($0.code >> 8))
                    && (systemCode[1] == 0xFF || systemCode[1] == UInt8($0.code & 0xFF))
            })
        else { return nil }
        current = i
        var out: [UInt8] = [0x01] + systems[i].idm + pmm
        switch requestCode {
        case 0x01: out += [UInt8(systems[i].code >> 8), UInt8(systems[i].code & 0xFF)]
        case 0x02: out += [0x00, 0x83]
        default: break
        }
        return out
    }

    /// Answers one command frame (LEN first); `nil` is silence.
    public mutating func respond(to frame: [UInt8]) -> [UInt8]? {
        guard frame.count >= 2, Int(frame[0]) == frame.count else { return nil }
        let cmd = frame[1]
        if cmd == 0x00 {
            guard frame.count == 6, let body = poll(systemCode: [frame[2], frame[3]], requestCode: frame[4]) else {
                return nil
            }
            return Self.framed(body)
        }
        guard frame.count >= 10, !systems.isEmpty else { return nil }
        let idm = Array(frame[2..<10])
        // A command for another system's IDm selects nothing here: the card answers for
        // the system its IDm names.
        guard let s = systems.firstIndex(where: { $0.idm == idm }) else { return nil }
        current = s
        let rest = Array(frame[10...])
        switch cmd {
        case 0x02: return requestService(s, rest).map { Self.framed([0x03] + idm + $0) }
        case 0x04:
            guard answersRequestResponse, rest.isEmpty else { return nil }
            return Self.framed([0x05] + idm + [0x00])
        case 0x06: return Self.framed([0x07] + idm + check(s, rest))
        case 0x08: return Self.framed([0x09] + idm + update(s, rest))
        case 0x0C:
            guard rest.isEmpty else { return nil }
            var out: [UInt8] = [0x0D] + idm + [UInt8(systems.count)]
            for sys in systems { out += [UInt8(sys.code >> 8), UInt8(sys.code & 0xFF)] }
            return Self.framed(out)
        default: return nil
        }
    }

    static func framed(_ body: [UInt8]) -> [UInt8] { [UInt8(body.count + 1)] + body }

    private func requestService(_ s: Int, _ p: [UInt8]) -> [UInt8]? {
        guard let n = p.first, (1...32).contains(n), p.count == 1 + 2 * Int(n) else { return nil }
        var out: [UInt8] = [n]
        for i in 0..<Int(n) {
            let code = UInt16(p[1 + 2 * i]) | UInt16(p[2 + 2 * i]) << 8
            // The system area (0000) and each service have key version 0000; unknown FFFF.
            let known = code == 0 || systems[s].services.contains { $0.code == code }
            out += known ? [0x00, 0x00] : [0xFF, 0xFF]
        }
        return out
    }

    /// A parsed service list and block list, or the status flags of the error.
    private func parseLists(_ p: [UInt8]) -> (
        services: [Service], blocks: [(service: Int, block: Int)], rest: ArraySlice<UInt8>
    )? {
        guard let m = p.first, (1...16).contains(m), p.count >= 1 + 2 * Int(m) + 1 else { return nil }
        var services: [Service] = []
        for i in 0..<Int(m) {
            services.append(Service(code: UInt16(p[1 + 2 * i]) | UInt16(p[2 + 2 * i]) << 8))
        }
        var i = 1 + 2 * Int(m)
        let n = Int(p[i])
        i += 1
        guard n >= 1 else { return nil }
        var blocks: [(Int, Int)] = []
        for _ in 0..<n {
            guard i < p.count else { return nil }
            let head = p[i]
            if head & 0x80 != 0 {
                guard i + 1 < p.count else { return nil }
                blocks.append((Int(head & 0x0F), Int(p[i + 1])))
                i += 2
            } else {
                guard i + 2 < p.count else { return nil }
                blocks.append((Int(head & 0x0F), Int(p[i + 1]) | Int(p[i + 2]) << 8))
                i += 3
            }
        }
        return (services, blocks, p[i...])
    }

    /// Read Without Encryption (06): `SF1 SF2 [n data]`. Errors in the status flags: SF1 `FF`
    /// with SF2 `A1` (number of services) or `A2` (number of blocks); SF1 a bit for the
    /// block-list position (`01` the first) with `A3` (service-list index), `A6` (service
    /// unknown or needs a key) or `A8` (block number).
    private func check(_ s: Int, _ p: [UInt8]) -> [UInt8] {
        guard let m = p.first, (1...16).contains(m) else { return [0xFF, 0xA1] }
        guard let lists = parseLists(p), lists.rest.isEmpty else {
            return [0xFF, 0xA2]
        }
        guard lists.blocks.count <= maximumReadBlocks else { return [0xFF, 0xA2] }
        var data: [UInt8] = []
        for (k, b) in lists.blocks.enumerated() {
            let flag = UInt8(1 << min(k, 7))
            guard b.service < lists.services.count else { return [flag, 0xA3] }
            let svc = lists.services[b.service]
            guard svc.readableWithoutKey, systems[s].services.contains(svc) else { return [flag, 0xA6] }
            guard b.block < systems[s].blocks.count else { return [flag, 0xA8] }
            data += systems[s].blocks[b.block]
        }
        return [0x00, 0x00, UInt8(lists.blocks.count)] + data
    }

    /// Write Without Encryption (08): `SF1 SF2`, errors as for ``check(_:_:)``.
    private mutating func update(_ s: Int, _ p: [UInt8]) -> [UInt8] {
        guard let m = p.first, (1...16).contains(m) else { return [0xFF, 0xA1] }
        guard let lists = parseLists(p),
            lists.rest.count == 16 * lists.blocks.count
        else { return [0xFF, 0xA2] }
        guard lists.blocks.count <= maximumWriteBlocks else { return [0xFF, 0xA2] }
        let data = Array(lists.rest)
        for (k, b) in lists.blocks.enumerated() {
            let flag = UInt8(1 << min(k, 7))
            guard b.service < lists.services.count else { return [flag, 0xA3] }
            let svc = lists.services[b.service]
            guard svc.writableWithoutKey, systems[s].services.contains(svc) else { return [flag, 0xA6] }
            guard b.block < systems[s].blocks.count else { return [flag, 0xA8] }
        }
        for (k, b) in lists.blocks.enumerated() {
            systems[s].blocks[b.block] = Array(data[(16 * k)..<(16 * k + 16)])
        }
        return [0x00, 0x00]
    }
}
