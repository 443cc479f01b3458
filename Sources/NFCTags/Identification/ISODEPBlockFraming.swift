/// ISO/IEC 14443-4 half-duplex block framing (§7.5) for one activated card: the blocks an
/// APDU exchange takes on the air when a device hands over whole APDUs (a PN53x runs T=CL
/// itself; PC/SC hides it). No CID, no NAD; CRC not included.
///
/// - The PCD block number starts at 0 (rule A) and toggles on each I-block or R(ACK)
///   carrying it (rule B); the PICC answers with the block number it received (rules C–E).
/// - An INF longer than FSC − 3 (reader to card) or FSD − 3 (card to reader) is chained
///   (PCB bit 5), each link acknowledged with R(ACK) (§7.5.2).
///
/// FSC comes from the ATS's T0 (FSCI, low nibble), FSD from the RATS parameter (FSDI, high
/// nibble), both through Table 1 (codes above 8 are taken as 256 bytes).
public struct ISODEPBlockFraming: Sendable, Equatable {
    /// One block on the air.
    public struct Block: Sendable, Equatable {
        /// Reader (PCD) to card (PICC)?
        public var fromReader: Bool
        /// PCB and INF.
        public var bytes: [UInt8]
        public init(fromReader: Bool, bytes: [UInt8]) {
            self.fromReader = fromReader
            self.bytes = bytes
        }
    }

    /// Whether an activation (RATS/ATS) or an exchange has happened since ``init()``.
    public private(set) var active: Bool
    private var block: UInt8 = 0
    /// Frame size for proximity card, bytes.
    public private(set) var fsc = 256
    /// Frame size for proximity coupling device, bytes.
    public private(set) var fsd = 256

    /// Before any activation (no RATS seen): frame sizes 256.
    public init() { active = false }

    /// After RATS `rats` (`E0 <FSDI CID>`) answered with `ats` (TL T0 …).
    public init(ats: [UInt8], rats: [UInt8]) {
        active = true
        if ats.count >= 2, Int(ats[0]) >= 2 { fsc = Self.frameSize(ats[1] & 0x0F) }
        if rats.count >= 2 { fsd = Self.frameSize(rats[1] >> 4) }
    }

    /// ISO/IEC 14443-4 Table 1: FSDI/FSCI to bytes.
    public static func frameSize(_ code: UInt8) -> Int {
        let sizes = [16, 24, 32, 40, 48, 64, 96, 128, 256]
        return Int(code) < sizes.count ? sizes[Int(code)] : 256
    }

    /// The blocks of one exchange: the command's I-block(s), then the answer's (none when
    /// `response` is nil or empty: the card stayed silent).
    public mutating func exchange(_ command: [UInt8], _ response: [UInt8]?) -> [Block] {
        active = true
        var out: [Block] = []
        let up = Self.chunks(command, max(1, fsc - 3))
        for (i, chunk) in up.enumerated() {
            let last = i == up.count - 1
            out.append(Block(fromReader: true, bytes: [0x02 | (last ? 0 : 0x10) | block] + chunk))
            if !last {
                out.append(Block(fromReader: false, bytes: [0xA2 | block]))
                block ^= 1
            }
        }
        guard let response, !response.isEmpty else { return out }
        let down = Self.chunks(response, max(1, fsd - 3))
        for (i, chunk) in down.enumerated() {
            let last = i == down.count - 1
            out.append(Block(fromReader: false, bytes: [0x02 | (last ? 0 : 0x10) | block] + chunk))
            block ^= 1
            if !last { out.append(Block(fromReader: true, bytes: [0xA2 | block])) }
        }
        return out
    }

    static func chunks(_ b: [UInt8], _ size: Int) -> [[UInt8]] {
        guard !b.isEmpty else { return [[]] }
        return stride(from: 0, to: b.count, by: size).map { Array(b[$0..<min(b.count, $0 + size)]) }
    }
}
