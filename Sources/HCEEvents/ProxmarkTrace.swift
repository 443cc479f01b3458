import NFCTags

/// A Proxmark3 `.trace` file (ISO/IEC 14443 A sniff or reader log): records of
/// `u32 timestamp, u16 duration, u16 length|0x8000 when from the tag, bytes, parity
/// (ceil(length/8) bytes)`, little-endian, no header (proxmark3 `doc/trace_notes.md`).
public struct ProxmarkTrace: Sendable, Equatable {
    public struct Frame: Sendable, Equatable {
        /// Start of the frame in carrier periods (1/13.56 MHz).
        public var timestamp: UInt32
        public var duration: UInt16
        public var fromTag: Bool
        /// The bytes as captured, CRC included when the frame had one.
        public var bytes: [UInt8]
    }

    public enum Error: Swift.Error, Equatable, CustomStringConvertible {
        /// A record header or its bytes run past the end of the file.
        case truncatedRecord(offset: Int)
        case empty
        public var description: String {
            switch self {
            case .truncatedRecord(let o): "record at byte \(o) runs past the end of the file"
            case .empty: "no frames"
            }
        }
    }

    public var frames: [Frame]

    /// Parses the records of `bytes`. Throws ``Error``.
    public init(bytes: [UInt8]) throws(Error) {
        var frames: [Frame] = []
        var i = 0
        while i < bytes.count {
            guard bytes.count - i >= 8 else { throw .truncatedRecord(offset: i) }
            let ts =
                UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
            let dur = UInt16(bytes[i + 4]) | UInt16(bytes[i + 5]) << 8
            let lenField = UInt16(bytes[i + 6]) | UInt16(bytes[i + 7]) << 8
            let n = Int(lenField & 0x7FFF)
            let parity = (n + 7) / 8
            guard bytes.count - i - 8 >= n + parity else { throw .truncatedRecord(offset: i) }
            frames.append(
                Frame(
                    timestamp: ts, duration: dur, fromTag: lenField & 0x8000 != 0,
                    bytes: Array(bytes[(i + 8)..<(i + 8 + n)])))
            i += 8 + n + parity
        }
        guard !frames.isEmpty else { throw .empty }
        self.frames = frames
    }

    /// Carrier periods → µs (fc = 13.56 MHz), rounded to the nearest µs.
    public static func microseconds(carrierPeriods: Int64) -> Int64 {
        (carrierPeriods * 100 + 678) / 1356
    }

    /// CRC_A of ISO/IEC 14443-3 (NFCTags' ``iso14443CRCA(_:)``).
    public static func crcA(_ data: some Sequence<UInt8>) -> [UInt8] { iso14443CRCA(data) }

    /// `frame` without its CRC when the CRC is valid; nil otherwise.
    static func payload(_ frame: [UInt8]) -> [UInt8]? {
        guard frame.count >= 3 else { return nil }
        let body = Array(frame.dropLast(2))
        return crcA(body) == Array(frame.suffix(2)) ? body : nil
    }
}

/// Turns a trace into a ``ReaderProfile``: reader→card frames, ISO/IEC 14443-4 I-blocks
/// unwrapped into APDUs (PCB, optional CID and NAD, chaining), the card's status word as
/// the expected one, times from the timestamps, RATS/ATS and an ECP frame noted.
public enum ProxmarkProfileImporter {
    public struct Report: Sendable, Equatable {
        public var profile: ReaderProfile
        /// Frames with a bad CRC or too short to be blocks, skipped (count).
        public var damagedFrames: Int
        /// R(NAK) retransmission requests, S(WTX) and S(DESELECT) blocks seen.
        public var rNAKs: Int
        public var wtxRequests: Int
        public var deselects: Int
        /// RATS seen after the first one (the reader activated again).
        public var reactivations: Int
    }

    /// Imports `trace`. `source` goes into the profile's `source` field.
    public static func profile(from trace: ProxmarkTrace, name: String, source: String) -> Report {
        let t0 = Int64(trace.frames[0].timestamp)
        func us(_ ts: UInt32) -> Duration {
            .microseconds(ProxmarkTrace.microseconds(carrierPeriods: Int64(ts) - t0))
        }
        var ecp: [UInt8]?
        var rats: [UInt8]?
        var ats: [UInt8]?
        var activation: Duration?
        var steps: [ReaderProfile.Step] = []
        var damaged = 0
        var naks = 0
        var wtx = 0
        var deselects = 0
        var reactivations = 0
        var readerChain: [UInt8] = []
        var readerChainStart: UInt32?
        var cardChain: [UInt8] = []
        var awaitingAnswer = false
        var expectingATS = false
        var lastEnd: UInt32 = trace.frames[0].timestamp

        for f in trace.frames {
            lastEnd = max(lastEnd, f.timestamp &+ UInt32(f.duration))
            let b = f.bytes
            if !f.fromTag {
                // Polling and anticollision (REQA 26, WUPA 52, SEL 93/95/97 20/70) and HLTA.
                if b.count <= 2, let first = b.first, [0x26, 0x52, 0x93, 0x95, 0x97].contains(first) { continue }
                guard let p = ProxmarkTrace.payload(b) else {
                    damaged += 1
                    continue
                }
                guard let pcb = p.first else {
                    damaged += 1
                    continue
                }
                if pcb == 0x6A {  // Apple ECP (proprietary polling frame)
                    if ecp == nil { ecp = p }
                    continue
                }
                if [0x93, 0x95, 0x97].contains(pcb) || (pcb == 0x50 && p.count == 2) { continue }
                if pcb == 0xE0 && p.count == 2 {  // RATS
                    if rats == nil {
                        rats = p
                        activation = us(f.timestamp)
                    } else {
                        reactivations += 1
                    }
                    expectingATS = true
                    continue
                }
                if pcb & 0xF0 == 0xD0 { continue }  // PPS request (PPSS = Dx)
                let hasCID = pcb & 0x08 != 0
                let hasNAD = pcb & 0x04 != 0
                let header = 1 + (hasCID ? 1 : 0)
                if pcb & 0xE2 == 0x02 {  // I-block
                    let inf = Array(p.dropFirst(header + (hasNAD ? 1 : 0)))
                    if readerChainStart == nil { readerChainStart = f.timestamp }
                    readerChain += inf
                    if pcb & 0x10 == 0 {
                        steps.append(ReaderProfile.Step(offset: us(readerChainStart!), apdu: readerChain))
                        readerChain = []
                        readerChainStart = nil
                        cardChain = []
                        awaitingAnswer = true
                    }
                } else if pcb & 0xE6 == 0xA2 {  // R-block
                    if pcb & 0x10 != 0 { naks += 1 }
                } else if pcb & 0xC7 == 0xC2 {  // S-block
                    if pcb & 0x30 == 0x00 { deselects += 1 }
                } else {
                    damaged += 1
                }
            } else {
                if expectingATS {
                    if let p = ProxmarkTrace.payload(b), ats == nil { ats = p }
                    expectingATS = false
                    continue
                }
                guard let p = ProxmarkTrace.payload(b), let pcb = p.first else { continue }
                let hasCID = pcb & 0x08 != 0
                let hasNAD = pcb & 0x04 != 0
                if pcb & 0xE2 == 0x02, awaitingAnswer {
                    cardChain += p.dropFirst(1 + (hasCID ? 1 : 0) + (hasNAD ? 1 : 0))
                    if pcb & 0x10 == 0 {
                        if cardChain.count >= 2, !steps.isEmpty {
                            steps[steps.count - 1].expectedStatusWords = [Array(cardChain.suffix(2)).hexString()]
                        }
                        cardChain = []
                        awaitingAnswer = false
                    }
                } else if pcb & 0xC7 == 0xC2 && pcb & 0x30 == 0x30 {
                    wtx += 1
                }
            }
        }
        var notes: [String] = []
        notes.append("imported by 'nfcbench profile import'; expect_sw is what the card answered in the trace")
        let unanswered = steps.filter { $0.expectedStatusWords.isEmpty }.count
        if unanswered > 0 { notes.append("\(unanswered) command(s) got no answer in the trace") }
        if naks > 0 { notes.append("\(naks) R(NAK)") }
        if wtx > 0 { notes.append("\(wtx) S(WTX) request(s) from the card") }
        if deselects > 0 { notes.append("\(deselects) S(DESELECT)") }
        if reactivations > 0 { notes.append("reader activated again \(reactivations) time(s) later (not replayed)") }
        if damaged > 0 { notes.append("\(damaged) damaged frame(s) skipped (bad CRC or short)") }
        let profile = ReaderProfile(
            name: name, category: "imported",
            description: "Reader side of a Proxmark3 trace",
            technology: .iso14443A, reachesISODEP: rats != nil, ecp: ecp, rats: rats, ats: ats,
            activationOffset: activation ?? .zero, steps: rats != nil ? steps : [],
            fieldOffOffset: .microseconds(ProxmarkTrace.microseconds(carrierPeriods: Int64(lastEnd) - t0)),
            source: source, note: notes.joined(separator: "; "))
        return Report(
            profile: profile, damagedFrames: damaged, rNAKs: naks, wtxRequests: wtx,
            deselects: deselects, reactivations: reactivations)
    }
}
