import FoundationEssentials

/// min / median / p99 / max of a set of durations: pure, for `nfcbench measure`.
///
/// Percentiles use the nearest-rank method (the ⌈p·n⌉-th smallest sample), so every
/// figure is a measured sample; the median of an even count is the lower middle sample.
public struct TimingStatistics: Sendable, Equatable {
    public var count: Int
    public var min: Duration
    public var median: Duration
    public var p99: Duration
    public var max: Duration

    /// `nil` for no samples.
    public init?(_ samples: [Duration]) {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        count = sorted.count
        min = sorted[0]
        max = sorted[sorted.count - 1]
        median = Self.nearestRank(sorted, 0.5)
        p99 = Self.nearestRank(sorted, 0.99)
    }

    /// The ⌈p·n⌉-th smallest (1-based) of `sorted`, p in 0…1.
    public static func nearestRank(_ sorted: [Duration], _ p: Double) -> Duration {
        let rank = Swift.max(1, Swift.min(sorted.count, Int((p * Double(sorted.count)).rounded(.up))))
        return sorted[rank - 1]
    }

    public static func microseconds(_ d: Duration) -> Double {
        Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12
    }

    /// `min 120 µs  median 150 µs  p99 410 µs  max 1.2 ms  (n=100)`: three significant digits
    /// (`Figures/duration(_:)`).
    public var text: String {
        let f = Figures.duration
        return "min \(f(min))  median \(f(median))  p99 \(f(p99))  max \(f(max))  (n=\(Figures.grouped(count)))"
    }
}
