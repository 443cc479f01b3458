import Glibc
public import NFCTrace

/// One try of `measure detect|removal` with a person at the reader: when the prompt was
/// given, what an active presence probe saw (`--presence probe`) and when the reader's own
/// event came (pcscd's status change, libnfc's presence check, the simulator's field).
///
/// Times are on the wall clock (`CLOCK_REALTIME`, ms since 1970) so that another process
/// on the machine (a test that takes a virtual tag away, a lab's logger) can lay its own
/// events beside them; spans are in µs from the monotonic clock.
///
/// The figure of a removal with a probe is the reader's lag behind the probe (event − first
/// failed probe): the tag left between the last answered probe and the first failed one, so
/// the probe bounds the leaving within one probe interval and a lab sees how much later its
/// reader reports it. Without a probe, and for a detection, the figure runs from the prompt
/// and includes the person's hand (`includes_person`).
public struct PresenceTry: Sendable, Equatable {
    public var index: Int
    public var promptAt: Double
    /// The last probe the tag answered, before it left (removal with a probe).
    public var lastPresentAt: Double?
    /// The first probe the tag did not answer.
    public var probeLostAt: Double?
    /// The reader's own detection or loss.
    public var eventAt: Double

    public init(index: Int, promptAt: Double, lastPresentAt: Double? = nil, probeLostAt: Double? = nil, eventAt: Double)
    {
        self.index = index
        self.promptAt = promptAt
        self.lastPresentAt = lastPresentAt
        self.probeLostAt = probeLostAt
        self.eventAt = eventAt
    }

    /// The figure in µs: event − first failed probe, or event − prompt.
    public var figureMicroseconds: Double { (eventAt - (probeLostAt ?? promptAt)) * 1000 }

    /// Whether ``figureMicroseconds`` includes the person (no probe to bound the moment).
    public var includesPerson: Bool { probeLostAt == nil }

    public var json: JSONObject {
        var o: JSONObject = [
            "try": .int(Int64(index)), "prompt_unix_ms": .double(Self.round(promptAt)),
            "event_unix_ms": .double(Self.round(eventAt)),
        ]
        if let lastPresentAt { o["last_present_unix_ms"] = .double(Self.round(lastPresentAt)) }
        if let probeLostAt {
            o["probe_lost_unix_ms"] = .double(Self.round(probeLostAt))
            o["event_after_probe_ms"] = .double(Self.round(eventAt - probeLostAt))
        }
        o["figure_us"] = .double(Self.round(figureMicroseconds))
        o["includes_person"] = .bool(includesPerson)
        return o
    }

    /// Now on the wall clock, ms since 1970 (µs resolution).
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1_000_000
    }

    static func round(_ v: Double) -> Double { (v * 1000).rounded() / 1000 }
}

/// The harmless command `--presence probe` sends: READ of page 0 to a Type 2 tag, SELECT of
/// the NDEF Tag Application to an ISO-DEP tag (neither changes anything). True when the tag
/// answered.
public enum PresenceProbe {
    public static func answered(_ c: TagConnection) -> Bool {
        switch c {
        case .type2(let t): return (try? t.read(page: 0))?.count == 16
        case .iso7816(let t):
            let select: [UInt8] =
                [0x00, 0xA4, 0x04, 0x00, 0x07] + Type4NDEFApplication.version2ApplicationName + [0x00]
            guard let r = try? t.transmit(select) else { return false }
            return r.count >= 2
        case .felica(let t):
            // Polling for any system (LEN 06, 00, FFFF, RC 00, TSN 00): read-only; the answer
            // is LEN, 01, IDm, PMm (JIS X 6319-4).
            return ((try? t.exchange([0x06, 0x00, 0xFF, 0xFF, 0x00, 0x00]))?.count ?? 0) >= 18
        case .iso15693(let t):
            // READ SINGLE BLOCK 0, high data rate, not addressed: read-only (ISO/IEC 15693-3).
            return ((try? t.request([0x02, 0x20, 0x00]))?.first) == 0x00
        }
    }
}
