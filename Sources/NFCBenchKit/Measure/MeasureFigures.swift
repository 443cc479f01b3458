public import NFCTrace

extension BenchMeasure {
    /// A measurement's figures, as `measure` records them (`measured`) and prints them with
    /// `--json`: `count`, `min_us`, `median_us`, `p99_us`, `max_us` (microseconds, to the
    /// nanosecond), `per_second` (samples per second of the samples' summed time, to a tenth),
    /// `total_us` (the whole measurement); `timed` (what the clock is read around) when given;
    /// `interrupted` (`cut`: why there are fewer than `requested`) and `requested`; with `tries`
    /// (a person's), each try, `presence`, `includes_person` and, for the probe,
    /// `probe_interval_ms`. Also returns `per_second` unrounded.
    public static func figures(
        _ stats: TimingStatistics, samples: [Duration], total: Duration, requested: Int, cut: String?,
        timed: String?, tries: [PresenceTry], presence: String, probeInterval: Duration?
    ) -> (figures: JSONObject, perSecond: Double) {
        let busy = samples.reduce(Duration.zero, +)
        let perSecond = Double(samples.count) / max(1e-9, TimingStatistics.microseconds(busy) / 1e6)
        var figures: JSONObject = [
            "count": .int(Int64(stats.count)),
            "min_us": .double(roundedMicroseconds(stats.min)),
            "median_us": .double(roundedMicroseconds(stats.median)),
            "p99_us": .double(roundedMicroseconds(stats.p99)),
            "max_us": .double(roundedMicroseconds(stats.max)),
            "per_second": .double((perSecond * 10).rounded() / 10),
            "total_us": .double(roundedMicroseconds(total)),
        ]
        if let timed { figures["timed"] = .string(timed) }
        if let cut {
            figures["interrupted"] = .string(cut)
            figures["requested"] = .int(Int64(requested))
        }
        if !tries.isEmpty {
            figures["tries"] = .array(tries.map { .object($0.json) })
            figures["presence"] = .string(presence)
            figures["includes_person"] = .bool(tries.contains { $0.includesPerson })
            if presence == "probe", let probeInterval {
                figures["probe_interval_ms"] = .double(TimingStatistics.microseconds(probeInterval) / 1000)
            }
        }
        return (figures, perSecond)
    }

    /// `measure --json`'s one object: `measure` (what), `device`, the ``figures(_:samples:total:requested:cut:timed:tries:presence:probeInterval:)``,
    /// and `presence_interval_ms`, the reader's presence interval in use (whole milliseconds;
    /// null when it has none).
    public static func jsonReport(
        what: String, device: String, figures: JSONObject, presenceInterval: Duration?
    ) -> JSONObject {
        var out: JSONObject = ["measure": .string(what), "device": .string(device)]
        for e in figures.entries { out[e.key] = e.value }
        let presence = presenceInterval.map { Int64(TimingStatistics.microseconds($0) / 1000) }
        out["presence_interval_ms"] = presence.map { .int($0) } ?? .null
        return out
    }
}
