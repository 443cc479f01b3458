import Foundation
import Testing

/// `nfcbench bench fuzz` and `bench ndef-fuzz` as commands (the 10⁶-input runs are benchmarks,
/// run in a release build; these check the commands themselves with a few inputs each).
@Suite("bench fuzz and bench ndef-fuzz")
struct FuzzCLITests {
    static let targets = [
        "tag-json", "tag-flipper", "tag-proxmark3", "proxmark-trace", "scenario", "conformance", "profile", "ndef",
        "pn532", "vpcd", "type2-reader", "type4-reader",
    ]

    @Test("--target all runs every target the issue names, each with seeds that parse (some inputs accepted)")
    func everyTarget() async throws {
        let r = try await NFCBench.run(["bench", "fuzz", "--target", "all", "--count", "300", "--seed", "5"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        for t in Self.targets {
            let head = try #require(r.stdoutLines.firstIndex { $0.hasPrefix("fuzz \(t) seed 5: 300 inputs") }, "\(t)")
            let counts = r.stdoutLines[head + 1]
            #expect(counts.hasPrefix("  0 crashes, 0 hangs, 0 findings; accepted "), "\(t): \(counts)")
            #expect(!counts.contains("accepted 0,"), "\(t) reaches past the parser's first check: \(counts)")
            #expect(r.stdoutLines[head + 2].hasPrefix("  memory: RSS "))
        }
    }

    @Test("Input I is made from the seed and I alone: --from I --count 1 --show prints the input of a longer run")
    func reproducible() async throws {
        let run = try await NFCBench.run(
            ["bench", "fuzz", "--target", "type4-reader", "--count", "20", "--seed", "9", "--show"])
        let alone = try await NFCBench.run(
            ["bench", "fuzz", "--target", "type4-reader", "--from", "13", "--count", "1", "--seed", "9", "--show"])
        let line = try #require(alone.stderr.split(separator: "\n").first { $0.hasPrefix("input #13 ") })
        #expect(run.stderr.split(separator: "\n").contains(line), "\(line)")
        let hex = try #require(line.split(separator: " ").last)
        let given = try await NFCBench.run([
            "bench", "fuzz", "--target", "type4-reader", "--input", String(hex), "--show",
        ])
        #expect(given.stderr.contains(String(hex)))
        #expect(given.status == 0)
    }

    @Test("An unknown target is a usage error naming the targets; bench ndef-fuzz still runs")
    func usageAndNDEFFuzz() async throws {
        let bad = InProcessCLI.mistake(["bench", "fuzz", "--target", "nope"])
        #expect(bad?.contains("tag-json, tag-flipper") == true, "\(String(describing: bad))")
        let ndef = try await NFCBench.run(["bench", "ndef-fuzz", "--count", "2000", "--seed", "1"])
        #expect(ndef.status == 0)
        #expect(ndef.stdout.hasPrefix("ndef-fuzz seed 1: 2,000 messages"), "\(ndef.stdout)")
    }
}
