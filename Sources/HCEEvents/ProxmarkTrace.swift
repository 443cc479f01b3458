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

    /// CRC_A of ISO/IEC 14443-3 (NFCTags' ``/NFCTags/iso14443CRCA(_:)``).
    public static func crcA(_ data: some Sequence<UInt8>) -> [UInt8] { iso14443CRCA(data) }

    /// `frame` without its CRC when the CRC is valid; nil otherwise.
    static func payload(_ frame: [UInt8]) -> [UInt8]? {
        guard frame.count >= 3 else { return nil }
        let body = Array(frame.dropLast(2))
        return crcA(body) == Array(frame.suffix(2)) ? body : nil
    }

    /// CRC_B of ISO/IEC 14443-3 Annex B (ISO/IEC 13239 CRC-16: polynomial 1021 reflected,
    /// preset FFFF, inverted), least significant byte first (`05 00 08` → `39 73`).
    public static func crcB(_ data: some Sequence<UInt8>) -> [UInt8] {
        var crc: UInt16 = 0xFFFF
        for byte in data {
            crc ^= UInt16(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0x8408 : crc >> 1 }
        }
        crc = ~crc
        return [UInt8(crc & 0xFF), UInt8(crc >> 8)]
    }

    /// `frame` without its CRC_B when it is valid; nil otherwise.
    static func payloadB(_ frame: [UInt8]) -> [UInt8]? {
        guard frame.count >= 3 else { return nil }
        let body = Array(frame.dropLast(2))
        return crcB(body) == Array(frame.suffix(2)) ? body : nil
    }

    /// The CRC of a FeliCa frame (JIS X 6319-4: CRC-16 CCITT, polynomial 1021, preset 0000,
    /// most significant byte first), over the length byte and the data.
    public static func crcF(_ data: some Sequence<UInt8>) -> [UInt8] {
        var crc: UInt16 = 0
        for byte in data {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        }
        return [UInt8(crc >> 8), UInt8(crc & 0xFF)]
    }

    /// A FeliCa frame (`LEN` counting itself, command code, …, CRC), sync `B2 4D` allowed in
    /// front, as its `LEN`…data without the CRC; nil when it is not one.
    static func payloadF(_ frame: [UInt8]) -> [UInt8]? {
        let f = frame.starts(with: [0xB2, 0x4D]) ? Array(frame.dropFirst(2)) : frame
        guard f.count >= 4, Int(f[0]) == f.count - 2 else { return nil }
        let body = Array(f.dropLast(2))
        return crcF(body) == Array(f.suffix(2)) ? body : nil
    }

    /// Why `answer` to `command` is not an ISO/IEC 7816-4 response, or nil when it is one:
    /// a response ends with SW1 SW2, SW1 being `6X` (X ≠ 0) or `9X` (§5.6), to a command that
    /// is a command APDU (§5.2: a 4-byte header, Lc/Le consistent with the body; CLA ≠ `FF`,
    /// INS not `6X`/`9X`, §5.4). Native commands of cards such as DESFire (`5A`, `0A`, `BD`…)
    /// answer a status byte first (and a MAC last), which is no status word.
    public static func notISO7816Response(_ answer: [UInt8], to command: [UInt8]) -> String? {
        guard answer.count >= 2 else { return "\(answer.count) byte(s), no room for SW1 SW2" }
        let sw1 = answer[answer.count - 2]
        guard (0x61...0x6F).contains(sw1) || (0x90...0x9F).contains(sw1) else {
            return "its last two bytes \(Array(answer.suffix(2)).hexString()) are no status word (SW1 must be 6X or 9X)"
        }
        guard (try? CommandAPDU(bytes: command)) != nil, command[0] != 0xFF, command[1] & 0xF0 != 0x60,
            command[1] & 0xF0 != 0x90
        else { return "the command \(command.prefix(8).hexString()) is not an ISO 7816-4 command APDU" }
        return nil
    }
}

/// Turns a trace into a ``ReaderProfile``: reader→card frames, ISO/IEC 14443-4 I-blocks
/// unwrapped into APDUs (PCB, optional CID and NAD, chaining), the card's status word as
/// the expected one, times from the timestamps, RATS/ATS and an ECP frame noted.
///
/// The technology is the one the frames show (ISO/IEC 14443-3): type A (REQA `26`, WUPA
/// `52`, anticollision, RATS, CRC_A), type B (REQB `05 xx 00` / WUPB `05 xx 08`, ATQB `50 …`,
/// ATTRIB `1D …`, HLTB, CRC_B) or FeliCa (JIS X 6319-4 frames: `LEN` + command + CRC, Polling
/// `00`). The technology the card was activated or answered with wins, else the first one
/// polled; a trace with none of them is refused (``Failure``). An answer that is not an
/// ISO/IEC 7816-4 response (``ProxmarkTrace/notISO7816Response(_:to:)``) gives no
/// `expect_sw`: the raw answer goes into the step's note.
public enum ProxmarkProfileImporter {
    /// Why a trace cannot become a profile.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    public struct Report: Sendable, Equatable {
        public var profile: ReaderProfile
        /// Answers that were not ISO/IEC 7816-4 responses, kept raw in their steps' notes.
        public var rawAnswers: Int = 0
        /// Frames with a bad CRC or too short to be blocks, skipped (count).
        public var damagedFrames: Int
        /// R(NAK) retransmission requests, S(WTX) and S(DESELECT) blocks seen.
        public var rNAKs: Int
        public var wtxRequests: Int
        public var deselects: Int
        /// RATS seen after the first one (the reader activated again).
        public var reactivations: Int
    }

    /// Imports `trace`. `source` goes into the profile's `source` field. Throws ``Failure``
    /// when no frame of ISO/IEC 14443 A or B or FeliCa is recognised.
    public static func profile(from trace: ProxmarkTrace, name: String, source: String) throws(Failure) -> Report {
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
        // Which technology the frames show: polled (in order), answered, activated.
        var polled: [ReaderTechnology] = []
        var polls: [ReaderTechnology: Int] = [:]
        var answered: ReaderTechnology?
        var attrib: [UInt8]?
        var atqb: [UInt8]?
        var feliCaCommands = 0
        var rawAnswers = 0
        var lastPoll: ReaderTechnology?
        func poll(_ t: ReaderTechnology) {
            if polls[t] == nil { polled.append(t) }
            polls[t, default: 0] += 1
            lastPoll = t
        }

        for f in trace.frames {
            lastEnd = max(lastEnd, f.timestamp &+ UInt32(f.duration))
            let b = f.bytes
            if !f.fromTag {
                // Polling and anticollision (REQA 26, WUPA 52, SEL 93/95/97 20/70) and HLTA.
                if b.count <= 2, let first = b.first, [0x26, 0x52, 0x93, 0x95, 0x97].contains(first) {
                    if b.count == 1 && (first == 0x26 || first == 0x52) { poll(.iso14443A) }
                    continue
                }
                if ProxmarkTrace.payload(b) == nil, let p = ProxmarkTrace.payloadB(b) {
                    // ISO/IEC 14443-3 type B: REQB/WUPB, Slot-MARKER, ATTRIB, HLTB.
                    if p.count == 3 && p[0] == 0x05 || p.count == 1 && p[0] & 0x0F == 0x05 {
                        poll(.iso14443B)
                        continue
                    }
                    if p[0] == 0x1D && p.count >= 9 {
                        if attrib == nil {
                            attrib = p
                            activation = us(f.timestamp)
                        } else {
                            reactivations += 1
                        }
                        lastPoll = .iso14443B
                        expectingATS = true
                        continue
                    }
                    if p[0] == 0x50 && p.count == 5 { continue }  // HLTB
                }
                if ProxmarkTrace.payload(b) == nil && ProxmarkTrace.payloadB(b) == nil,
                    let p = ProxmarkTrace.payloadF(b)
                {
                    if p[1] == 0x00 { poll(.felica) } else { feliCaCommands += 1 }
                    lastPoll = .felica
                    continue
                }
                guard let p = ProxmarkTrace.payload(b) ?? ProxmarkTrace.payloadB(b) else {
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
                    if attrib == nil, let p = ProxmarkTrace.payload(b), ats == nil { ats = p }
                    if attrib != nil, ProxmarkTrace.payloadB(b) != nil { answered = answered ?? .iso14443B }
                    expectingATS = false
                    continue
                }
                if b.count == 2, lastPoll == .iso14443A, answered == nil { answered = .iso14443A }  // ATQA
                if ProxmarkTrace.payload(b) == nil, let p = ProxmarkTrace.payloadB(b), p.first == 0x50, p.count == 12 {
                    if atqb == nil { atqb = p }
                    answered = answered ?? .iso14443B
                    continue
                }
                if ProxmarkTrace.payload(b) == nil && ProxmarkTrace.payloadB(b) == nil,
                    let p = ProxmarkTrace.payloadF(b)
                {
                    if p[1] == 0x01 { answered = answered ?? .felica }
                    continue
                }
                guard let p = ProxmarkTrace.payload(b) ?? ProxmarkTrace.payloadB(b), let pcb = p.first else { continue }
                let hasCID = pcb & 0x08 != 0
                let hasNAD = pcb & 0x04 != 0
                if pcb & 0xE2 == 0x02, awaitingAnswer {
                    cardChain += p.dropFirst(1 + (hasCID ? 1 : 0) + (hasNAD ? 1 : 0))
                    if pcb & 0x10 == 0, !steps.isEmpty {
                        let step = steps.count - 1
                        if let why = ProxmarkTrace.notISO7816Response(cardChain, to: steps[step].apdu) {
                            // Not a status word: keep what the card said, expect nothing.
                            steps[step].note =
                                "the card answered \(cardChain.hexString(separator: " ")) (\(cardChain.count) byte(s)), "
                                + "not an ISO 7816-4 response (\(why)): kept raw, no expect_sw"
                            rawAnswers += 1
                        } else {
                            steps[step].expectedStatusWords = [Array(cardChain.suffix(2)).hexString()]
                        }
                        cardChain = []
                        awaitingAnswer = false
                    }
                } else if pcb & 0xC7 == 0xC2 && pcb & 0x30 == 0x30 {
                    wtx += 1
                }
            }
        }
        // The technology: where ISO-DEP was reached, else what a card answered, else the first polled.
        let technology: ReaderTechnology
        if rats != nil {
            technology = .iso14443A
        } else if attrib != nil {
            technology = .iso14443B
        } else if let t = answered ?? polled.first {
            technology = t
        } else {
            throw Failure(
                reason: "no ISO/IEC 14443 A or B or FeliCa frame recognised (REQA/WUPA, REQB/WUPB, ATQB, ATTRIB, "
                    + "FeliCa Polling, RATS) in \(trace.frames.count) frame(s); \(damaged) damaged or unknown")
        }
        var notes: [String] = []
        notes.append("imported by 'nfcbench profile import'; expect_sw is what the card answered in the trace")
        let others = polled.filter { $0 != technology }.map { "\($0.rawValue) (\(polls[$0] ?? 0)×)" }
        if !others.isEmpty { notes.append("also polled with \(others.joined(separator: ", "))") }
        if let atqb { notes.append("ATQB \(atqb.hexString(separator: " "))") }
        if let attrib { notes.append("ATTRIB \(attrib.hexString(separator: " "))") }
        if feliCaCommands > 0 { notes.append("\(feliCaCommands) FeliCa command(s) after Polling (not replayed)") }
        if rawAnswers > 0 {
            notes.append(
                "\(rawAnswers) answer(s) are not ISO 7816-4 responses (native commands): kept raw in the step's note, no expect_sw"
            )
        }
        let unanswered = steps.filter { $0.expectedStatusWords.isEmpty }.count - rawAnswers
        if unanswered > 0 { notes.append("\(unanswered) command(s) got no answer in the trace") }
        if naks > 0 { notes.append("\(naks) R(NAK)") }
        if wtx > 0 { notes.append("\(wtx) S(WTX) request(s) from the card") }
        if deselects > 0 { notes.append("\(deselects) S(DESELECT)") }
        if reactivations > 0 { notes.append("reader activated again \(reactivations) time(s) later (not replayed)") }
        if damaged > 0 { notes.append("\(damaged) damaged frame(s) skipped (bad CRC or short)") }
        let profile = ReaderProfile(
            name: name, category: "imported",
            description: "Reader side of a Proxmark3 trace",
            technology: technology, reachesISODEP: rats != nil || attrib != nil, ecp: ecp, rats: rats, ats: ats,
            activationOffset: activation ?? .zero, steps: rats != nil || attrib != nil ? steps : [],
            fieldOffOffset: .microseconds(ProxmarkTrace.microseconds(carrierPeriods: Int64(lastEnd) - t0)),
            source: source, note: notes.joined(separator: "; "))
        return Report(
            profile: profile, rawAnswers: rawAnswers, damagedFrames: damaged, rNAKs: naks, wtxRequests: wtx,
            deselects: deselects, reactivations: reactivations)
    }
}
