import NFCTags

/// Whether a session plays the iPhone's Type 2 discovery before it reports a Type 2 tag
/// (``ReaderSystemModel/type2Probe``).
public enum Type2ProbeModel: String, Sendable, Hashable, CaseIterable {
    /// No frame before the tag is reported: the model before this parameter existed, the
    /// library's default, and what `check equivalence` runs.
    case off
    /// The frames and timings of the public trace (``Type2DiscoveryProbe``): the default of
    /// `nfcbench session` and the conformance harness.
    case iphone
}

/// What the iPhone's Type 2 discovery probe found on one tag.
public struct Type2ProbeReport: Sendable, Hashable {
    /// One step of the probe: what was sent and how the tag answered.
    public struct Exchange: Sendable, Hashable {
        /// The step's name: `READ 02`, `1A 00`, `HLTA`, `WUPA + select`, `GET_VERSION`,
        /// `REQA + anticollision`.
        public var step: String
        /// The frame as the trace has it (CRC_A excluded); `52` for WUPA + select by UID
        /// and `26` for REQA + anticollision, which the device's reselect carries.
        public var frame: [UInt8]
        /// The answer, classified the same way on every device: `16 bytes`, `none` (a NAK or
        /// silence: a PC/SC Transparent Exchange shows a NAK as no answer), `ACK`,
        /// `reselected`, or the wrong answer's bytes.
        public var answer: String
    }

    /// How the probe ended.
    public enum Outcome: Sendable, Hashable {
        /// Every step got an answer the phone takes: the tag is reported.
        case passed
        /// A step got an answer the phone does not take: the tag is never reported, as on an
        /// iPhone ("unreadable"). The text says which step and what came back.
        case unreadable(String)
        /// The reader cannot send one of the probe's frames (a PC/SC reader without a
        /// transparent exchange): the tag is reported as without the probe.
        case skipped(String)
        /// The tag left the field during the probe.
        case lost
    }

    public var exchanges: [Exchange]
    public var outcome: Outcome
    /// The probe's time by the model (the trace's timings), from its first frame to its
    /// last: the tag is reported no sooner than this after the probe began.
    public var duration: Duration

    /// The tag gave no answer where the phone needs one (it left, or went mute): a read
    /// fails with 100 then, as a lost tag's.
    public var endedInSilence: Bool { !delivers && exchanges.last?.answer == "none" }

    /// Whether the session reports the tag.
    public var delivers: Bool {
        switch outcome {
        case .passed, .skipped: true
        case .unreadable, .lost: false
        }
    }

    /// `passed`, `unreadable`, `skipped` or `lost`.
    public var outcomeName: String {
        switch outcome {
        case .passed: "passed"
        case .unreadable: "unreadable"
        case .skipped: "skipped"
        case .lost: "lost"
        }
    }

    /// Why the tag was not reported, or why the probe was skipped; `nil` when it passed.
    public var reason: String? {
        switch outcome {
        case .passed: nil
        case .unreadable(let why), .skipped(let why): why
        case .lost: "the tag left the field during the probe"
        }
    }
}

/// The iPhone's Type 2 discovery, as one public trace shows it: proxmark3
/// `traces/hf_14a_mfu-sim.trace` (RfidResearchGroup/proxmark3), whose README says only
/// "Trace seen from a Proxmark3 simulating a MFU"; that the reader is an iPhone is inferred
/// from its polling frames (reported-inferred). Per tap, after REQA and full anticollision:
///
/// `READ 02` → `1A 00` (left unanswered; HLTA ≈ 301 ms later) → HLTA → WUPA and select by
/// full UID (`93 70`/`95 70`, no anticollision) → GET_VERSION `60` → REQA and full
/// anticollision → `READ 02` → `1A 00` (≈ 302 ms) → HLTA → WUPA + select → `READ 03` → HLTA →
/// WUPA + select → `READ 02` → `READ 04` ×3 → `READ 08 0C 10 14` → HLTA: 0.692 s from the
/// first `READ 02` to the last HLTA, each step's time taken from the trace.
///
/// The last `READ`s cover the NDEF message the trace's tag held (TLV `03 43` from page 4:
/// pages 4–21); here they go, 4 pages at a time from page 8, as far as the NDEF TLV at page 4
/// reaches, within the CC's data area (assumed: one trace, one tag). After the last HLTA the
/// tag is selected again (REQA + anticollision, untimed) so the app finds it active.
///
/// Frames a device cannot send at the frame layer are its primitives (documented in
/// `docs/model.md`): WUPA + select and REQA + anticollision are the device's reselect by UID
/// (``/NFCBase/Type2TagTransport/reactivate()``: the simulator's core, libnfc's
/// `nfc_initiator_select_passive_target`, PC/SC `SCardReconnect` with a reset); HLTA and
/// `1A 00` go raw (``/NFCBase/Type2TagTransport/transceive(_:)``: the simulator's core, libnfc's
/// raw exchange, a PC/SC reader's transparent exchange).
///
/// What the phone takes (assumed where the trace shows one tag only): `READ` answered with 16
/// bytes; `1A 00` answered with nothing (silence, as in the trace, or a NAK, what an NTAG21x
/// gives) or with an Ultralight C's first AUTHENTICATE answer (`AF` and 8 bytes); HLTA
/// unanswered; the reselects answered; GET_VERSION anything (a plain Ultralight is silent).
/// Anything else makes the tag "unreadable": never reported.
public enum Type2DiscoveryProbe {
    /// One step of the probe.
    public enum Step: Sendable, Hashable {
        case read(UInt8)
        /// `1A 00`: an Ultralight C's AUTHENTICATE, first part.
        case authenticate
        /// HLTA `50 00`.
        case halt
        /// WUPA and select by the full UID (no anticollision): the device's reselect.
        case wakeUpAndSelect
        /// GET_VERSION `60`.
        case getVersion
        /// REQA and full anticollision: the device's reselect.
        case requestAndAnticollision
        /// `READ` of the NDEF message, 4 pages at a time from page 8 (expanded per tag).
        case readNDEF
    }

    /// The trace's steps, each with the time from its start to the next step's start in µs
    /// (carrier periods ÷ 13.56). ``Step/readNDEF`` stands for the message's reads (4 in the
    /// trace, ``ndefReadMicroseconds`` each).
    public static let steps: [(step: Step, microseconds: Int64)] = [
        (.read(0x02), 3158), (.authenticate, 300_894), (.halt, 3507), (.wakeUpAndSelect, 5070),
        (.getVersion, 17624), (.requestAndAnticollision, 7203), (.read(0x02), 2942), (.authenticate, 301_681),
        (.halt, 4415), (.wakeUpAndSelect, 5279), (.read(0x03), 3940), (.halt, 2794), (.wakeUpAndSelect, 4655),
        (.read(0x02), 3066), (.read(0x04), 3006), (.read(0x04), 2925), (.read(0x04), 3003), (.readNDEF, 0),
        (.halt, 0),
    ]
    /// One `READ` of the NDEF message and the gap to the next frame (the trace's 3045,
    /// 3040 and 3043 µs, rounded to their mean).
    public static let ndefReadMicroseconds: Int64 = 3043
    /// From the last `READ` to the closing HLTA (the trace: 8137 µs after `READ 14`'s start,
    /// against 3043 between reads).
    public static let lastReadToHaltMicroseconds: Int64 = 8137 - 3043
    /// The pages the trace's `READ`s of the message started at: 08, 0C, 10, 14.
    public static let traceNDEFReads = 4

    /// The probe's time on the trace's tag: 692.428 ms (the trace: 692.427).
    public static var traceDuration: Duration { duration(ndefReads: traceNDEFReads) }

    /// The probe's modelled time for a tag whose message takes `ndefReads` READs.
    public static func duration(ndefReads: Int) -> Duration {
        let fixed = steps.reduce(Int64(0)) { $0 + $1.microseconds }
        return .microseconds(fixed + Int64(ndefReads) * ndefReadMicroseconds + lastReadToHaltMicroseconds)
    }

    /// The pages the message's READs start at: from page 8, 4 at a time, while the NDEF TLV
    /// found in pages 4–7 (`page4`, 16 bytes) reaches, within the data area the CC (`cc`,
    /// page 3) announces. None when no NDEF TLV starts in those 16 bytes.
    public static func ndefReadPages(cc: [UInt8], page4: [UInt8]) -> [UInt8] {
        guard cc.count >= 3, cc[0] == 0xE1, page4.count >= 16 else { return [] }
        let lastDataPage = 3 + Int(cc[2]) * 2
        var i = 0
        var end: Int?
        while i < 16 {
            let t = page4[i]
            if t == 0x00 {
                i += 1
                continue
            }
            guard i + 1 < 16 else { break }
            var length = Int(page4[i + 1])
            var header = 2
            if length == 0xFF {
                guard i + 3 < 16 else { break }
                length = Int(page4[i + 2]) << 8 | Int(page4[i + 3])
                header = 4
            }
            if t == 0x03 {
                end = i + header + length  // bytes from page 4, exclusive
                break
            }
            if t == 0xFE { break }
            i += header + length
        }
        guard let end, end > 16 else { return [] }
        let lastPage = min(lastDataPage, 4 + (end - 1) / 4)
        return Array(stride(from: 8, through: lastPage, by: 4)).filter { $0 <= 0xFF }.map { UInt8($0) }
    }

    /// Plays the probe on `t` (a selected Type 2 tag) and says what it found.
    public static func run(on t: any Type2TagTransport) -> Type2ProbeReport {
        var exchanges: [Type2ProbeReport.Exchange] = []
        var cc: [UInt8] = []
        var page4: [UInt8] = []
        var elapsed: Int64 = 0
        func end(_ outcome: Type2ProbeReport.Outcome) -> Type2ProbeReport {
            let time: Duration = if case .skipped = outcome { .zero } else { .microseconds(elapsed) }
            return Type2ProbeReport(exchanges: exchanges, outcome: outcome, duration: time)
        }
        func name(_ a: Type2Answer) -> String {
            switch a {
            case .data(let d) where d.count == 16: "16 bytes"
            case .data(let d) where d.count == 9 && d[0] == 0xAF: "AF + 8 bytes"
            case .data(let d): d.hexString(separator: " ")
            case .ack: "ACK"
            case .nak, .silent: "none"
            }
        }
        /// A raw frame; `nil` answer: the probe ends with the outcome returned.
        func send(_ step: String, _ frame: [UInt8]) -> (Type2Answer?, Type2ProbeReport.Outcome?) {
            do {
                let a = try t.transceive(frame)
                exchanges.append(.init(step: step, frame: frame, answer: name(a)))
                return (a, nil)
            } catch TagCommunicationError.unsupportedCommand(let f) {
                return (
                    nil,
                    .skipped(
                        "the reader cannot send \(f.hexString(separator: " ")) raw (no transparent exchange): the probe was skipped"
                    )
                )
            } catch {
                // A tag that left, or a reader that heard nothing: no answer, as the phone
                // sees it (devices report a tag's leaving differently: the simulator as
                // lost, libnfc as silence, PC/SC by the card's state).
                exchanges.append(.init(step: step, frame: frame, answer: "none"))
                return (.silent, nil)
            }
        }
        func reselect(_ step: String, _ frame: [UInt8]) -> Type2ProbeReport.Outcome? {
            do {
                try t.reactivate()
                exchanges.append(.init(step: step, frame: frame, answer: "reselected"))
                return nil
            } catch {
                exchanges.append(.init(step: step, frame: frame, answer: "none"))
                return .unreadable("\(step): no answer")
            }
        }
        func read(_ page: UInt8) -> ([UInt8]?, Type2ProbeReport.Outcome?) {
            let step = "READ " + [page].hexString()
            let (a, stop) = send(step, [0x30, page])
            if let stop { return (nil, stop) }
            guard case .data(let d)? = a, d.count == 16 else {
                return (nil, .unreadable("\(step) answered \(a.map(name) ?? "nothing"), not 16 bytes"))
            }
            return (d, nil)
        }

        for (step, microseconds) in steps {
            defer { elapsed += microseconds }
            switch step {
            case .read(let page):
                let (d, stop) = read(page)
                if let stop { return end(stop) }
                if page == 0x03, let d { cc = Array(d.prefix(4)) }
                if page == 0x04, let d { page4 = d }
            case .authenticate:
                let (a, stop) = send("1A 00", [0x1A, 0x00])
                if let stop { return end(stop) }
                switch a {
                case .silent?, .nak?: break
                case .data(let d)? where d.count == 9 && d[0] == 0xAF: break
                case let other?:
                    return end(
                        .unreadable(
                            "1A 00 answered \(name(other)); the phone takes no answer, a NAK, or an Ultralight C's AF and 8 bytes"
                        ))
                case nil: break
                }
            case .halt:
                let (a, stop) = send("HLTA", [0x50, 0x00])
                if let stop { return end(stop) }
                switch a {
                case .silent?, .nak?, nil: break
                case let other?: return end(.unreadable("HLTA answered \(name(other)); a halted tag answers nothing"))
                }
            case .wakeUpAndSelect:
                if let stop = reselect("WUPA + select", [0x52]) { return end(stop) }
            case .requestAndAnticollision:
                if let stop = reselect("REQA + anticollision", [0x26]) { return end(stop) }
            case .getVersion:
                let (_, stop) = send("GET_VERSION", [0x60])
                if let stop { return end(stop) }
            case .readNDEF:
                for page in ndefReadPages(cc: cc, page4: page4) {
                    let (_, stop) = read(page)
                    elapsed += ndefReadMicroseconds
                    if let stop { return end(stop) }
                }
                elapsed += lastReadToHaltMicroseconds
            }
        }
        // Selected again for the app (untimed).
        if let stop = reselect("REQA + anticollision", [0x26]) { return end(stop) }
        return end(.passed)
    }
}

extension ReaderSystemModel {
    /// The rows of ``type2Probe`` in ``facts`` (and `docs/model.md`).
    static let type2ProbeFactKeys = [
        "type2_probe", "type2_probe_order", "type2_probe_duration_s", "type2_probe_1a00_wait_ms",
        "type2_probe_ndef_reads", "type2_probe_accepts", "type2_probe_device_primitives",
    ]

    /// ``type2Probe``'s numbers and rules with their sources.
    var type2ProbeFacts: [ModelFact] {
        let trace =
            "reported-inferred: proxmark3 traces/hf_14a_mfu-sim.trace (https://github.com/RfidResearchGroup/proxmark3), README: 'Trace seen from a Proxmark3 simulating a MFU'; the reader is taken for an iPhone from its polling frames"
        let covers =
            "one tap of one reader (inferred to be an iPhone) on one simulated NTAG-like tag, whose 1A 00 went unanswered"
        let order =
            "READ 02, 1A 00, HLTA, WUPA + select by UID, GET_VERSION, REQA + anticollision, READ 02, 1A 00, HLTA, WUPA + select, READ 03, HLTA, WUPA + select, READ 02, READ 04 x3, READ 08 0C 10 14, HLTA"
        return [
            ModelFact(
                key: "type2_probe", value: .text(type2Probe.rawValue), text: type2Probe.rawValue, source: .reported,
                reference: trace
                    + (type2Probe == .off
                        ? "; off: no frame before the tag is reported (the library's default; session --type2-probe off)"
                        : "; played before a Type 2 tag is reported (session --type2-probe off turns it off)"),
                covers: covers),
            ModelFact(
                key: "type2_probe_order", value: .text(order), text: order, source: .reported, reference: trace,
                covers: covers),
            ModelFact(
                key: "type2_probe_duration_s", value: .number(Self.seconds(Type2DiscoveryProbe.traceDuration)),
                text: Self.text(Type2DiscoveryProbe.traceDuration), source: .reported,
                reference: trace
                    + "; each step's time from the trace (carrier periods / 13.56 MHz), 0.692 s from the first READ 02 to the last HLTA; the tag is reported no sooner than this after the probe began (virtual time in the harness)",
                covers: covers + "; the fidelity review rounds it to about 0.6 s"),
            ModelFact(
                key: "type2_probe_1a00_wait_ms", value: .number(301), text: "301 ms (twice)", source: .reported,
                reference: trace
                    + "; HLTA follows the unanswered 1A 00 after 4.08 M carrier periods (300.9 ms, then 301.7 ms); played whatever the tag answers (assumed for a NAK)",
                covers: "a tag that stays silent to 1A 00; what the phone waits after a NAK is not shown"),
            ModelFact(
                key: "type2_probe_ndef_reads", value: .text("from page 8, 4 pages a READ, as far as the NDEF TLV"),
                text: "READ 08, 0C… as far as the NDEF TLV at page 4 reaches", source: .assumed,
                reference:
                    "the trace's READ 08 0C 10 14 cover exactly its tag's NDEF TLV (03 43 at page 4, CC E1 10 12); other lengths are assumed to be read the same way, within the CC's data area, 3.043 ms a READ",
                covers: "one tag's message length"),
            ModelFact(
                key: "type2_probe_accepts",
                value: .text(
                    "READ: 16 bytes; 1A 00: nothing, a NAK, or AF + 8 bytes; HLTA: nothing; reselect: answered; else unreadable"
                ),
                text: "READ 16 bytes; 1A 00 none/NAK/AF+8; HLTA none; else the tag is never reported",
                source: .assumed,
                reference:
                    "the trace shows only answers a phone took (its tag was silent to 1A 00); that other answers make a tag unreadable is assumed: the fidelity review of 2026-12-01 names tags that mishandle 1A 00, HLTA/WUPA or a bare select as unreadable on iPhone without a field report; a tag file declares a wrong answer with answers, a tag mute after HLTA fails the reselect",
                covers: "nobody says which wrong answers the phone refuses"),
            ModelFact(
                key: "type2_probe_device_primitives",
                value: .text(
                    "WUPA + select and REQA + anticollision are the device's reselect by UID; HLTA and 1A 00 go raw"),
                text: "reselect = device primitive; HLTA, 1A 00 raw; skipped without a transparent exchange",
                source: .assumed,
                reference:
                    "sim: the emulation core; libnfc: nfc_initiator_select_passive_target, raw exchange for HLTA and 1A 00; PC/SC: SCardReconnect (reset), the transparent exchange (FF C2, ACR122U direct transmit); a PC/SC reader without one: the trace says the probe was skipped and the tag is reported",
                covers: "how the bench carries the frames, not an iPhone fact"),
        ]
    }
}
