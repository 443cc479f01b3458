import Foundation
import NFCTrace
import ReaderSession
import Testing

/// `nfcbench conformance`: the built-in suite end to end through the built binary; the faulty
/// apps, another suite, errors and --thermal in this process (``InProcessCLI/run(_:environment:)``).
@Suite("nfcbench conformance")
struct ConformanceCLITests {
    static func array(_ v: JSONValue?) -> [JSONValue] {
        if case .array(let a)? = v { a } else { [] }
    }

    private func summary(_ r: NFCBench.Result) throws -> JSONValue {
        guard let last = r.stdoutLines.last else { throw ConformanceCLIFailure("no output; stderr: \(r.stderr)") }
        return try JSONValue(parsing: last)
    }

    @Test(
        "The reference app passes every built-in scenario (at least 40, one per issue-11 item among them): exit 0, a table row each"
    )
    func reference() async throws {
        let r = try await NFCBench.run(["conformance"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let rows = r.stdoutLines.filter { $0.contains(" pass ") }
        #expect(rows.count >= 40)
        #expect(!r.stdout.contains(" breach "))
        #expect(!r.stdout.contains(" inconclusive "))
        for scenario in [
            "foreground-begin-in-background", "connect-second-tag-ends-first", "mifare-commands-reach-the-tag",
            "iso7816-select-identifiers", "busy-queue-waits-for-the-reader", "quick-rebegin-within-3s",
            "tag-connection-limit", "202-system-terminates", "203-wait-for-the-other-session",
            "app-timer-on-virtual-clock", "background-read-universal-link", "background-read-waits-for-session",
        ] {
            #expect(rows.contains { $0.hasPrefix(scenario + " ") }, "\(scenario) does not pass")
        }
        #expect(r.stdout.contains("thermal-back-to-back-until-refused"))
        // Sessions 3 s after each timeout (past the quick-restart window) shrink with heat until refused.
        #expect(r.stdout.contains("60 s, 45.4 s, 34.7 s, 26.8 s, 21.1 s, 16.9 s, refused"))
    }

    @Test(
        "Each faulty app is caught with its rule and exits 1",
        arguments: [
            ("autorestart", "no-auto-restart-after-timeout"),
            ("busyloop", "no-retry-loop-on-busy"),
            ("staletag", "no-stale-tag-after-restartPolling"),
            ("restartonreturn", "restart-on-return-needs-user"),
            ("rescanbackground", "no-begin-without-user-action"),
        ])
    func faulty(app: String, rule: String) async throws {
        let r = await InProcessCLI.run(["conformance", "--app", app, "--json"])
        #expect(r.status == 1, "stderr: \(r.stderr)")
        let s = try summary(r)
        #expect(s["summary"] == .bool(true))
        #expect(s["app"]?.stringValue == app)
        #expect(s["rules_breached"] == .array([.string(rule)]))
        #expect((s["breach"]?.intValue ?? 0) >= 1)
        // One JSON line per scenario plus the summary; each breach names its rule, time and what the app did.
        let lines = try r.stdoutLines.dropLast().map { try JSONValue(parsing: $0) }
        #expect(Int64(lines.count) == s["scenarios"]?.intValue)
        let breached = lines.filter { $0["verdict"]?.stringValue == "breach" }
        #expect(!breached.isEmpty)
        for line in breached {
            let b = try #require(Self.array(line["breaches"]).first, "breach without details: \(line.serialized)")
            #expect(b["rule"]?.stringValue == rule)
            #expect(b["t_ms"]?.intValue != nil)
            #expect(b["what"]?.stringValue?.isEmpty == false)
        }
    }

    @Test(
        "The waypoints app (the article's background reading) passes every built-in scenario; background-read-universal-link among them"
    )
    func waypoints() async throws {
        let r = await InProcessCLI.run(["conformance", "--app", "waypoints", "--json"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let lines = try r.stdoutLines.dropLast().map { try JSONValue(parsing: $0) }
        for name in ["background-read-universal-link", "background-read-waits-for-session"] {
            let line = lines.first { $0["scenario"]?.stringValue == name }
            #expect(line?["verdict"]?.stringValue == "pass", "\(name): \(line?.serialized ?? "missing")")
            let events = Self.array(line?["background"])
            #expect(!events.isEmpty, "\(name): no background events")
            #expect(events.contains { $0["event"]?.stringValue == "userActivityDelivered" })
        }
    }

    @Test("--suite DIR runs another folder; tags are found in DIR/tags, then the shipped ones")
    func otherSuite() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "nfcbench-conf-suite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try #"""
        {"format": "nfcbench-conformance", "version": 1, "duration_ms": 5000,
         "steps": [{"at_ms": 0, "user": "scan"}, {"at_ms": 1000, "present": "ntag213-text"}], "expect_endings": [204]}
        """#.write(to: dir.appendingPathComponent("one-read.json"), atomically: true, encoding: .utf8)
        let r = await InProcessCLI.run(["conformance", "--suite", dir.path, "--json"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.stdoutLines.count == 2)
        let line = try JSONValue(parsing: r.stdoutLines[0])
        #expect(line["scenario"]?.stringValue == "one-read")
        #expect(line["verdict"]?.stringValue == "pass")
    }

    @Test("A malformed scenario exits 65 naming file and field; an unknown app exits 64")
    func errors() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "nfcbench-conf-bad-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try
            #"{"format": "nfcbench-conformance", "version": 1, "duration_ms": 5000, "steps": [{"at_ms": 0, "user": "wave"}]}"#
            .write(to: dir.appendingPathComponent("bad.json"), atomically: true, encoding: .utf8)
        let bad = await InProcessCLI.run(["conformance", "--suite", dir.path])
        #expect(bad.status == 65)
        #expect(bad.stderr.contains("bad.json: field steps[0].user: "))
        #expect(InProcessCLI.mistake(["conformance", "--app", "nosuchapp"])?.contains("reference") == true)
    }

    @Test("--thermal prints the limits after 0 s, 3 s and 30 s gaps, shrinking with less rest")
    func thermal() async throws {
        let r = await InProcessCLI.run(["conformance", "--thermal", "--json"])
        #expect(r.status == 0)
        let all = try r.stdoutLines.map { try JSONValue(parsing: $0) }
        let rows = all.filter { $0["gap_ms"] != nil }
        let limits = rows.compactMap { $0["time_limit_ms"]?.intValue }
        // The last line is the model with every parameter's source.
        #expect(all.last?["model"]?["quick_restart_window_s"]?["source"]?.stringValue == "reported")
        #expect(
            all.last?["background_reading"]?["background_reading_session_rule"]?["source"]?.stringValue == "documented")
        #expect(rows.prefix(3).compactMap { $0["gap_ms"]?.intValue } == [0, 3000, 30000])
        #expect(limits.count == rows.count)
        #expect(limits == limits.sorted())
        #expect(limits.allSatisfy { $0 <= 60000 && $0 >= 15000 })
    }
}

struct ConformanceCLIFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}
