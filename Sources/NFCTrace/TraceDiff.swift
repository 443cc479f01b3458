/// The event-level difference of two traces: their records compared in order, headers
/// aside, times ignored unless asked (``Options/times``).
///
/// Each record becomes one comparable line (``line(_:options:)``: its JSON without the time keys);
/// the two line lists are aligned by their longest common subsequence, so an extra or a
/// missing event shows as one `+` or `-` line, not as every later line differing.
public struct TraceDiff: Sendable, Equatable {
    public struct Options: Sendable, Equatable {
        /// Compare the times too (`t_us`, `session_t_us`, every key ending in `_us`, and the
        /// thermal model's `heat`, which is field time, with the numbers derived from it:
        /// `time_limit_s`, `next_time_limit_s`, `time_to_cool_s`).
        public var times = false
        public init(times: Bool = false) { self.times = times }
    }

    /// One line of the difference: in both, only in the first (`-`) or only in the second (`+`).
    public enum Line: Sendable, Equatable {
        case same(String)
        case onlyInFirst(index: Int, String)
        case onlyInSecond(index: Int, String)
    }

    public let lines: [Line]
    /// Header values that differ (command, device, tool and library versions, model, setup).
    public let headerDifferences: [String]

    /// True when no event differs (header differences alone do not count).
    public var same: Bool { !lines.contains { if case .same = $0 { false } else { true } } }

    public init(_ a: TraceContents, _ b: TraceContents, options: Options = Options()) {
        let x = a.records.map { Self.line($0, options: options) }
        let y = b.records.map { Self.line($0, options: options) }
        lines = Self.align(x, y)
        var headers: [String] = []
        for key in ["command", "device", "tool", "libnfc", "pcsclite", "model", "setup"] {
            let u = a.header?[key]
            let v = b.header?[key]
            if u != v {
                headers.append(
                    "\(key): \(u.map { $0.serialized } ?? "(none)") ≠ \(v.map { $0.serialized } ?? "(none)")")
            }
        }
        headerDifferences = headers
    }

    /// The keys a comparison without times leaves out: times, the heat, and the limits and
    /// waits the thermal model derives from the heat (two runs of one session on a bench
    /// that was used in between differ only there).
    public static func isTimeKey(_ key: String) -> Bool {
        key == TraceRecord.Key.time || key.hasSuffix("_us") || heatKeys.contains(key)
    }

    /// The thermal model's heat and what it derives from it.
    public static let heatKeys: Set<String> = ["heat", "time_limit_s", "next_time_limit_s", "time_to_cool_s"]

    /// A record as one comparable line: its JSON with the time keys removed (at any depth)
    /// unless `options.times`.
    public static func line(_ r: TraceRecord, options: Options = Options()) -> String {
        options.times ? r.line : JSONValue.object(r.json).withoutTimes().serialized
    }

    /// The first difference as `event N: B ≠ A` (N from 1), or nil: the shape
    /// `check equivalence` reports.
    public static func firstDifference(_ a: [String], _ b: [String]) -> String? {
        for i in 0..<max(a.count, b.count) {
            let x = i < a.count ? a[i] : "(nothing)"
            let y = i < b.count ? b[i] : "(nothing)"
            if x != y { return "event \(i + 1): \(y) ≠ \(x)" }
        }
        return nil
    }

    /// Longest-common-subsequence alignment (O(n·m); traces of a few thousand events).
    static func align(_ x: [String], _ y: [String]) -> [Line] {
        let n = x.count
        let m = y.count
        var table = [[Int]](repeating: [Int](repeating: 0, count: m + 1), count: n + 1)
        if n > 0 && m > 0 {
            for i in stride(from: n - 1, through: 0, by: -1) {
                for j in stride(from: m - 1, through: 0, by: -1) {
                    table[i][j] = x[i] == y[j] ? table[i + 1][j + 1] + 1 : max(table[i + 1][j], table[i][j + 1])
                }
            }
        }
        var out: [Line] = []
        var i = 0
        var j = 0
        while i < n || j < m {
            if i < n, j < m, x[i] == y[j] {
                out.append(.same(x[i]))
                i += 1
                j += 1
            } else if j < m, i == n || table[i][j + 1] >= table[i + 1][j] {
                out.append(.onlyInSecond(index: j + 1, y[j]))
                j += 1
            } else {
                out.append(.onlyInFirst(index: i + 1, x[i]))
                i += 1
            }
        }
        return out
    }
}

extension JSONValue {
    func withoutTimes() -> JSONValue {
        switch self {
        case .object(let o):
            var out = JSONObject()
            for e in o.entries where !TraceDiff.isTimeKey(e.key) { out[e.key] = e.value.withoutTimes() }
            return .object(out)
        case .array(let a): return .array(a.map { $0.withoutTimes() })
        default: return self
        }
    }
}
