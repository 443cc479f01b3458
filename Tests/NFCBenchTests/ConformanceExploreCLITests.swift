import Foundation
import NFCTrace
import Testing

/// `nfcbench conformance --explore`: each faulty reference app's rule found, shrunk and saved
/// through the built binary; the saved file replays through `--suite`, and the planted bug and
/// the text output, in this process (``InProcessCLI/run(_:environment:)``).
@Suite("nfcbench conformance --explore")
struct ConformanceExploreCLITests {
    private func array(_ v: JSONValue?) -> [JSONValue] {
        if case .array(let a)? = v { a } else { [] }
    }

    private func lines(_ r: NFCBench.Result) throws -> [JSONValue] {
        try r.stdoutLines.map { try JSONValue(parsing: $0) }
    }

    /// Fixed runs, no budget: the same runs on every machine, however loaded. With seed 1 the
    /// random runs meet each app's rule by run 68 (restartonreturn's: a Scan, the background
    /// and a return).
    @Test(
        "Each faulty app's rule is found and shrunk to at most 5 steps; the saved file replays with the same rule",
        arguments: [
            ("autorestart", "no-auto-restart-after-timeout"),
            ("busyloop", "no-retry-loop-on-busy"),
            ("staletag", "no-stale-tag-after-restartPolling"),
            ("restartonreturn", "restart-on-return-needs-user"),
        ])
    func faulty(app: String, rule: String) async throws {
        let folder = try TestFolder("explore-\(app)")
        defer { folder.remove() }
        let r = try await NFCBench.run(
            [
                "conformance", "--explore", "--app", app, "--seed", "1", "--depth", "0", "--runs", "100", "--save",
                folder.path, "--json",
            ], timeout: .seconds(120))
        #expect(r.status == 1, "stderr: \(r.stderr)")
        let all = try lines(r)
        let summary = try #require(all.last)
        #expect(summary["summary"] == .bool(true))
        #expect(summary["seed"]?.intValue == 1)
        #expect(summary["runs"]?.intValue == 100)
        #expect(array(summary["rules_breached"]).contains(.string(rule)))
        // One line per rule, each checked on every run.
        let rows = all.filter { $0["rule"] != nil }
        #expect(rows.count == 8)  // the seven rules of the seed table and reads-a-presented-tag
        #expect(rows.allSatisfy { $0["runs"] == summary["runs"] })
        let row = try #require(rows.first { $0["rule"]?.stringValue == rule })
        let steps = try #require(row["smallest_steps"]?.intValue)
        #expect(steps >= 1 && steps <= 5)
        let file = try #require(row["counterexample"]?["file"]?.stringValue)
        #expect(file == folder.file("explored-\(app)-\(rule).json"))
        // The replay's trace: every step, then the breach.
        let replay = all.filter { $0["replay"]?.stringValue == rule }
        #expect(replay.filter { $0["step"] != nil }.count == Int(steps))
        #expect(replay.contains { $0["breach"]?.stringValue == rule })
        // Replayed by the harness as any scenario folder: the same verdict and rule.
        let again = await InProcessCLI.run(["conformance", "--suite", folder.path, "--app", app, "--json"])
        #expect(again.status == 1, "stderr: \(again.stderr)")
        let verdicts = try lines(again).dropLast()
        let line = try #require(
            verdicts.first { $0["scenario"]?.stringValue == "explored-\(app)-\(rule)" })
        #expect(line["verdict"]?.stringValue == "breach")
        #expect(array(line["breaches"]).first?["rule"]?.stringValue == rule)
    }

    @Test(
        "The planted bug (resumeinterrupted: a new session when Done ends a read) passes the shipped suite; the explorer finds it"
    )
    func plantedBug() async throws {
        let shipped = await InProcessCLI.run(["conformance", "--app", "resumeinterrupted"])
        #expect(shipped.status == 0, "the shipped scenarios catch it: \(shipped.stdout)")
        let r = await InProcessCLI.run([
            "conformance", "--explore", "--app", "resumeinterrupted", "--seed", "1", "--depth", "0", "--runs", "2300",
            "--json",
        ])
        #expect(r.status == 1, "stderr: \(r.stderr)")
        let all = try lines(r)
        let summary = try #require(all.last)
        #expect(array(summary["rules_breached"]).contains(.string("no-begin-without-user-action")))
        // Shrunk to: a tag in the field, a Scan that reads it slowly, Done while it reads.
        let row = try #require(all.first { $0["rule"]?.stringValue == "no-begin-without-user-action" })
        #expect((row["smallest_steps"]?.intValue ?? 99) <= 5)
    }

    @Test("A duration without its unit is a usage error (64): --budget 5 once ran 5 ms and passed a faulty app")
    func bareBudget() async throws {
        let r = InProcessCLI.mistake(["conformance", "--explore", "--app", "busyloop", "--budget", "5"])
        #expect(r?.hasPrefix("--budget needs a unit: 5ms or 5s") == true, "\(String(describing: r))")
        #expect(
            InProcessCLI.mistake(["walk", "--wake-latency", "4"])?.hasPrefix("--wake-latency needs a unit") == true)
    }

    @Test("Text output: the table, the counterexample's steps and replay; --budget and the other flags need --explore")
    func textAndUsage() async throws {
        let r = await InProcessCLI.run([
            "conformance", "--explore", "--app", "autorestart", "--depth", "1", "--runs", "0",
        ])
        #expect(r.status == 1)
        #expect(r.stdout.contains("RULE"))
        #expect(r.stdout.contains("no-auto-restart-after-timeout"))
        #expect(r.stdout.contains("COUNTEREXAMPLE no-auto-restart-after-timeout"))
        #expect(r.stdout.contains(#"{"at_ms": 0, "user": "scan"}"#))
        #expect(r.stdout.contains("BREACH"))
        #expect(r.stdout.contains("exhaustive: depth 1, 60 sequences"))
        #expect(InProcessCLI.mistake(["conformance", "--budget", "10s"]) == "--budget goes with --explore")
        let clean = await InProcessCLI.run(
            ["conformance", "--explore", "--app", "reference", "--depth", "1", "--runs", "200", "--budget", "30s"])
        #expect(clean.status == 0, "\(clean.stdout)")
    }
}
