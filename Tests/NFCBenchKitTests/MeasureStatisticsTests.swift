import Foundation
import Testing

@testable import NFCBenchKit

@Suite("Timing statistics for nfcbench measure (pure)")
struct MeasureStatisticsTests {
    @Test(
        "measure's figures: rounded microseconds, the rate over the samples' own time, a cut run's reason and request")
    func figures() throws {
        let samples: [Duration] = [.microseconds(1000), .microseconds(3000), .nanoseconds(2_000_400)]
        let stats = try #require(TimingStatistics(samples))
        let (f, perSecond) = BenchMeasure.figures(
            stats, samples: samples, total: .seconds(1), requested: 10, cut: "stopped by SIGINT", timed: "transport",
            tries: [], presence: "events", probeInterval: .milliseconds(100))
        #expect(
            f.keys == [
                "count", "min_us", "median_us", "p99_us", "max_us", "per_second", "total_us", "timed", "interrupted",
                "requested",
            ])
        #expect(f["median_us"] == .double(2000.4))
        #expect(f["per_second"] == .double(500))
        #expect(abs(perSecond - 3 / 0.0060004) < 1e-6)
        #expect(f["total_us"] == .double(1_000_000))
        #expect(f["interrupted"]?.stringValue == "stopped by SIGINT")
        #expect(f["requested"]?.intValue == 10)

        let person = PresenceTry(index: 0, promptAt: 1000, probeLostAt: 1200, eventAt: 1250)
        let (p, _) = BenchMeasure.figures(
            stats, samples: samples, total: .seconds(1), requested: 3, cut: nil, timed: nil, tries: [person],
            presence: "probe", probeInterval: .milliseconds(100))
        #expect(p["interrupted"] == nil)
        #expect(p["includes_person"] == .bool(false))
        #expect(p["probe_interval_ms"] == .double(100))
        let out = BenchMeasure.jsonReport(what: "removal", device: "sim:x", figures: p, presenceInterval: nil)
        #expect(out.keys.prefix(2) == ["measure", "device"])
        #expect(out["presence_interval_ms"] == .null)
        #expect(out["count"]?.intValue == 3)
    }

    @Test("Nearest-rank median and p99 are samples; min and max are the extremes, whatever the order")
    func statistics() throws {
        let samples: [Duration] = (1...100).reversed().map { .microseconds($0) }
        let s = try #require(TimingStatistics(samples))
        #expect(s.count == 100)
        #expect(s.min == .microseconds(1))
        #expect(s.max == .microseconds(100))
        #expect(s.median == .microseconds(50))
        #expect(s.p99 == .microseconds(99))
    }

    @Test("One sample is every figure; no sample is nil; an outlier moves only p99 and max")
    func edges() throws {
        let one = try #require(TimingStatistics([.milliseconds(3)]))
        #expect([one.min, one.median, one.p99, one.max] == Array(repeating: .milliseconds(3), count: 4))
        #expect(TimingStatistics([]) == nil)
        let s = try #require(TimingStatistics(Array(repeating: .microseconds(150), count: 99) + [.seconds(2)]))
        #expect(s.median == .microseconds(150))
        #expect(s.p99 == .microseconds(150))
        #expect(s.max == .seconds(2))
        let t = try #require(
            TimingStatistics(Array(repeating: .microseconds(150), count: 98) + [.seconds(2), .seconds(3)]))
        #expect(t.p99 == .seconds(2))
    }

    @Test("The text line shows three significant digits, in µs below 1 ms and ms above")
    func text() throws {
        let s = try #require(TimingStatistics([.microseconds(150), .milliseconds(12)]))
        #expect(s.text == "min 150 µs  median 150 µs  p99 12 ms  max 12 ms  (n=2)")
    }

    @Test("Device strings: pcsc:, sim: and libnfc connstrings resolve to one identity; junk is a usage error")
    func devices() throws {
        #expect(try DeviceFactory.resolve("pcsc:Virtual PCD 00 00").identifier == "pcsc:Virtual PCD 00 00")
        #expect(try DeviceFactory.resolve("sim:tap-uri").identifier == "sim:tap-uri")
        #expect(throws: BenchError.self) { try DeviceFactory.resolve("sim:") }
        #expect(throws: BenchError.self) { try DeviceFactory.resolve("bogus") }
        #expect(throws: BenchError.self) { try DeviceFactory.resolve("pn533_usb:") }
        let missing = "/nonexistent-\(getpid())"
        #expect(
            throws: BenchError.unavailable(
                "\(missing) does not exist (is the reader plugged in? 'nfcbench doctor' checks the bench)")
        ) {
            try DeviceFactory.resolve("pn532_uart:\(missing)")
        }
        // Two names for one serial device are one reader (one lock).
        let folder = NSTemporaryDirectory() + "nfcbench-link-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let link = folder + "/tty"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/dev/null")
        #expect(try DeviceFactory.resolve("pn532_uart:\(link)").identifier == "pn532_uart:/dev/null")
    }
}

@Suite("bench all's CPU placements")
struct BenchPlacementTests {
    @Test("A Cpus_allowed_list reads as its CPUs in order: ranges, single CPUs and both")
    func allowedList() {
        #expect(OneCPU.cpus(in: "0-1") == [0, 1])
        #expect(OneCPU.cpus(in: "0") == [0])
        #expect(OneCPU.cpus(in: "0-3,6,8-9") == [0, 1, 2, 3, 6, 8, 9])
        #expect(OneCPU.cpus(in: "3,1") == [3, 1])
        #expect(OneCPU.cpus(in: "") == [])
    }

    @Test("apart puts the client on the second allowed CPU and pcscd and the card on the first; none with one CPU")
    func apart() throws {
        let one = OneCPU(cpu: "2", clientCPU: "2", allowed: "2,5-6", processes: [10, 11])
        #expect(one.client == ["taskset", "-c", "2"])
        let apart = try #require(one.apart)
        #expect(apart.client == ["taskset", "-c", "5"])
        #expect(apart.cpu == "2" && apart.processes == [10, 11] && apart.allowed == "2,5-6")
        #expect(OneCPU(cpu: "0", clientCPU: "0", allowed: "0", processes: []).apart == nil)
    }

    @Test("bench all's ratio never reads as the goal's bound beside a mark that says otherwise")
    func ratioAtBound() {
        func row(_ ratio: Double, goal: String = "≥ 0.98", met: Bool?) -> BenchAll.Row {
            BenchAll.Row(
                name: "measure apdu", unit: "APDU/s", ours: 1, theirs: 1, theirsName: nil, ratio: ratio, runs: 7,
                goal: goal, met: met)
        }
        // 0.976 rounds to the bound 0.98 but misses it: three decimals.
        #expect(BenchAll.ratioText(row(0.976, met: false)) == "0.976")
        #expect(BenchAll.ratioText(row(0.9804, met: true)) == "0.980")
        #expect(BenchAll.ratioText(row(0.98, met: true)) == "0.98")
        #expect(BenchAll.ratioText(row(0.95, met: false)) == "0.95")
        #expect(BenchAll.ratioText(row(1.104, goal: "≤ 1.10", met: false)) == "1.104")
        // No goal, no mark: two decimals whatever the value.
        #expect(BenchAll.ratioText(row(0.976, goal: "", met: nil)) == "0.98")
        let table = BenchAll.table([row(0.976, met: false)])
        #expect(table.contains("0.976   7     ≥ 0.98 ✗"), "\(table)")
    }
}
