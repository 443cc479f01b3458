import Dispatch
import Foundation
import NFCTags
import ReaderSession
import Testing

@testable import ReaderSessionConformance

/// A small app for the explorer: begins on Scan (a read-only NDEF session that ends after
/// the first read) and otherwise does what its habits say.
private final class ExploredApp: NSObject, ConformanceApp, NFCNDEFReaderSessionDelegate, @unchecked Sendable {
    struct Habits: OptionSet {
        let rawValue: Int
        static let restartsAfterTimeout = Habits(rawValue: 1)
        static let beginsOnReturn = Habits(rawValue: 2)
        /// Ignores Scan: no `begin()` at all (what an app waiting on real time looks like).
        static let ignoresScan = Habits(rawValue: 4)
    }

    let habits: Habits
    let queue = DispatchQueue(label: "explored-app")
    private var session: NFCNDEFReaderSession?
    private var lastEnding: NFCReaderError.Code?

    init(_ habits: Habits) { self.habits = habits }

    private func start() {
        let s = NFCNDEFReaderSession(delegate: self, queue: queue, invalidateAfterFirstRead: true)
        session = s
        s.begin()
    }

    func scanTapped(_ request: ScanRequest) {
        guard !habits.contains(.ignoresScan) else { return }
        queue.sync { if session?.isReady != true { start() } }
    }
    func didEnterBackground() {}
    func willEnterForeground() {
        queue.sync {
            if habits.contains(.beginsOnReturn),
                lastEnding == .readerSessionInvalidationErrorSessionTerminatedUnexpectedly
            {
                start()
            }
        }
    }

    func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
        guard session === self.session else { return }
        lastEnding = (error as? NFCReaderError)?.code
        self.session = nil
        if lastEnding == .readerSessionInvalidationErrorSessionTimeout, habits.contains(.restartsAfterTimeout) {
            start()
        }
    }
}

private func explorer(seed: UInt64 = 1, runs: Int, depth: Int) throws -> ConformanceExplorer {
    try ConformanceExplorer(tagDirectories: shippedTagDirectories, seed: seed, runs: runs, depth: depth)
}

/// An explorer over the user's actions only, for exhaustive phases a test can afford.
private func userExplorer(depth: Int) throws -> ConformanceExplorer {
    var e = try explorer(runs: 0, depth: depth)
    e.alphabet = ConformanceExplorer.Alphabet(
        actions: [.scan(.readOnly), .done, .background, .foreground], timings: [.after(.zero), .after(.seconds(1))],
        exhaustiveTimings: [.after(.zero), .after(.seconds(1))])
    return e
}

private func app(_ habits: ExploredApp.Habits) -> ConformanceHarness.AppFactory {
    { _ in ExploredApp(habits) }
}

@Suite("Conformance explorer")
struct ConformanceExplorerTests {
    @Test("A restart after a timeout is found in the exhaustive phase and shrunk to one Scan, cut at the breach (60 s)")
    func findsAndShrinks() async throws {
        let r = try await explorer(runs: 20, depth: 1).explore(app: app(.restartsAfterTimeout))
        #expect(!r.passed)
        let c = try #require(r.rules.first { $0.rule == .noAutoRestartAfterTimeout }?.counterexample)
        #expect(c.phase == .exhaustive)
        #expect(c.moves == [ConformanceExplorer.Move(.scan(.readOnly), .after(.zero))])
        #expect(c.scenario.steps.count == 1)
        #expect(c.scenario.duration == .seconds(60))
        #expect(c.result.verdict == .breach)
        #expect(c.result.rulesBreached == [.noAutoRestartAfterTimeout])
        // The replay shows the step, the timeout and the breach, in time order.
        #expect(c.replay.map(\.time) == c.replay.map(\.time).sorted())
        #expect(c.replay.contains { if case .step(0, _) = $0.entry { true } else { false } })
        #expect(c.replay.contains { if case .breach(let b) = $0.entry { b.time == .seconds(60) } else { false } })
        // Other rules: checked on every run, not broken.
        #expect(r.rules.allSatisfy { $0.runs == r.runs })
        #expect(r.rules.filter { $0.breaches > 0 }.map(\.rule) == [.noAutoRestartAfterTimeout])
    }

    @Test("The saved counterexample reads back equal and replays with the same verdict and rule")
    func savedReplays() async throws {
        let r = try await userExplorer(depth: 3).explore(app: app(.beginsOnReturn))
        let c = try #require(r.counterexamples.first { $0.rule == .restartOnReturnNeedsUser })
        let text = c.scenario.fileText
        let back = try scenario(text, name: c.scenario.name)
        #expect(back == c.scenario)
        let replay = await ConformanceHarness().run(back) { _ in ExploredApp(.beginsOnReturn) }
        #expect(replay.verdict == .breach)
        #expect(replay.rulesBreached == [.restartOnReturnNeedsUser])
    }

    @Test("A shrunk counterexample is 1-minimal: without any one of its steps the rule holds")
    func oneMinimal() async throws {
        let e = try userExplorer(depth: 3)
        let r = await e.explore(app: app(.beginsOnReturn))
        let c = try #require(r.counterexamples.first { $0.rule == .restartOnReturnNeedsUser })
        // Scan, leave the foreground, return.
        #expect(c.moves.map(\.action) == [.scan(.readOnly), .background, .foreground])
        for i in c.moves.indices {
            var fewer = c.moves
            fewer.remove(at: i)
            let result = await ConformanceHarness().run(e.scenario(fewer)) { _ in ExploredApp(.beginsOnReturn) }
            #expect(!result.rulesBreached.contains(.restartOnReturnNeedsUser), "still breaks without step \(i)")
        }
    }

    @Test("A correct app passes every run; the exhaustive phase reports sequences and merged states")
    func correctAppPasses() async throws {
        let r = try await explorer(runs: 150, depth: 2).explore(app: app([]))
        #expect(r.passed, "\(r.counterexamples.map(\.scenario.fileText)) \(r.inconclusive?.notes ?? [])")
        #expect(r.passes == r.runs)
        #expect(r.randomRuns == 150)
        #expect(r.exhaustiveComplete)
        #expect(r.exhaustiveStates > 0 && r.exhaustiveStates < r.exhaustiveSequences)
        #expect(r.counterexamples.isEmpty)
    }

    @Test("Inconclusive runs are counted apart: neither breach nor pass, the first kept with its notes")
    func inconclusiveApart() async throws {
        let r = try await explorer(runs: 60, depth: 1).explore(app: app(.ignoresScan))
        #expect(r.inconclusiveRuns > 0)
        #expect(r.breachRuns == 0)
        #expect(r.passes + r.inconclusiveRuns == r.runs)
        #expect(!r.passed)
        let first = try #require(r.inconclusive)
        #expect(first.notes.contains { $0.contains("brought no begin()") })
        #expect(r.counterexamples.isEmpty)
    }

    @Test("Same seed, same runs: two explorations agree run for run; another seed draws other moves")
    func sameSeedSameRuns() async throws {
        let a = try await explorer(seed: 7, runs: 80, depth: 0).explore(app: app(.restartsAfterTimeout))
        let b = try await explorer(seed: 7, runs: 80, depth: 0).explore(app: app(.restartsAfterTimeout))
        #expect(a.passes == b.passes && a.breachRuns == b.breachRuns)
        let ca = try #require(a.counterexamples.first)
        let cb = try #require(b.counterexamples.first)
        #expect(ca.foundAtRun == cb.foundAtRun)
        #expect(ca.original == cb.original)
        #expect(ca.moves == cb.moves)
        var r1 = SplitMix64(seed: 7)
        var r2 = SplitMix64(seed: 8)
        let e = try explorer(runs: 0, depth: 0)
        #expect((0..<5).map { _ in e.randomMoves(&r1) } != (0..<5).map { _ in e.randomMoves(&r2) })
    }

    @Test("SplitMix64 gives the published sequence (seed 1234567), so runs are the same on every machine")
    func generator() {
        var g = SplitMix64(seed: 1_234_567)
        #expect(
            [g.next(), g.next(), g.next()] == [
                6_457_827_717_110_365_317, 3_203_168_211_198_807_973, 9_817_491_932_198_370_423,
            ])
    }

    @Test("Generated scenarios are valid files: at_ms until the first after_end_ms, then after_ms; tags by reference")
    func generatedScenarioShape() throws {
        let e = try explorer(runs: 0, depth: 0)
        let s = e.scenario([
            .init(.present(.pair), .after(.milliseconds(1500))), .init(.scan(.twoTags), .after(.zero)),
            .init(.scan(.readOnly), .afterEnd(.milliseconds(3001))), .init(.remove(.pair), .after(.milliseconds(250))),
            .init(.remove(.ndef), .after(.zero)),  // nothing of that kind in the field: left out
            .init(.heat(fieldSeconds: 200), .after(.zero)),
        ])
        #expect(s.steps.count == 5)
        #expect(
            s.steps.map(\.when) == [
                .at(.milliseconds(1500)), .at(.milliseconds(1500)), .afterSessionEnd(.milliseconds(3001)),
                .afterPrevious(.milliseconds(250)), .afterPrevious(.zero),
            ])
        #expect(Set(s.tags.keys) == ["waypoint-1", "waypoint-2"])
        let back = try scenario(s.fileText, name: s.name)
        #expect(back == s)
        #expect(s.fileText.contains(#"{"after_ms": 250, "remove": "pair-2"}"#))
    }
}

@Suite("Conformance scenario writer and the new steps")
struct ConformanceScenarioWriterTests {
    @Test("Every shipped scenario written by the one writer reads back equal")
    func roundTrip() throws {
        let suite = try ConformanceScenario.loadSuite(
            directory: conformanceSuiteDirectory, tagDirectories: shippedTagDirectories)
        #expect(suite.count >= 40)
        for s in suite {
            let back = try scenario(s.fileText, name: "other")
            #expect(back == s, "\(s.name)")
        }
    }

    @Test("A step is one line: milliseconds to the µs, options beyond their defaults only")
    func stepLines() throws {
        let s = try scenario(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 90000.5,
             "steps": [{"at_ms": 0.25, "user": "scan", "read_write": true},
                       {"after_ms": 1000, "system": "heat", "field_seconds": 12.5},
                       {"after_end_ms": 0, "user": "scan", "commands": ["3004"], "command_interval_ms": 10}]}
            """)
        #expect(s.stepJSON(0) == #"{"at_ms": 0.25, "user": "scan", "read_write": true}"#)
        #expect(s.stepJSON(1) == #"{"after_ms": 1000, "system": "heat", "field_seconds": 12.5}"#)
        #expect(
            s.stepJSON(2)
                == #"{"after_end_ms": 0, "user": "scan", "session": "tag", "commands": ["3004"], "command_interval_ms": 10}"#
        )
        #expect(s.fileText.contains("\"duration_ms\": 90000.5,\n"))
    }

    @Test(
        "200 field-seconds of heat make the next begin() meet the thermal model's refusal (203); thermal off: nothing")
    func heat() async throws {
        let steps = """
            "steps": [{"at_ms": 0, "system": "heat", "field_seconds": 200}, {"at_ms": 1000, "user": "scan"}]
            """
        let hot = await ConformanceHarness().run(
            try scenario(#"{"format": "nfcbench-conformance", "version": 1, "duration_ms": 5000, \#(steps)}"#)
        ) { _ in ExploredApp([]) }
        #expect(hot.sessions.first?.refusedByThermalModel == true)
        #expect(hot.sessions.first?.ending == .readerSessionInvalidationErrorSystemIsBusy)
        let off = await ConformanceHarness().run(
            try scenario(
                #"{"format": "nfcbench-conformance", "version": 1, "duration_ms": 5000, "thermal": false, \#(steps)}"#)
        ) { _ in ExploredApp([]) }
        #expect(off.sessions.first?.becameActive == true)
    }

    @Test("after_ms counts from the previous step's instant, an after_end_ms step's included")
    func afterPrevious() async throws {
        let r = await ConformanceHarness().run(
            try scenario(
                """
                {"format": "nfcbench-conformance", "version": 1, "duration_ms": 100000, "thermal": false,
                 "steps": [{"at_ms": 0, "user": "scan"}, {"after_end_ms": 4000, "user": "scan"}, {"after_ms": 2000, "user": "done"}]}
                """)
        ) { _ in ExploredApp([]) }
        #expect(r.sessions.map(\.begunAt) == [.zero, .seconds(64)])
        #expect(r.sessions.last?.endedAt == .seconds(66))
        #expect(r.sessions.last?.ending == .readerSessionInvalidationErrorUserCanceled)
    }

    @Test("field_seconds only with heat, policy only with busy-policy: both refused elsewhere")
    func misplacedOptions() {
        for bad in [
            #"{"at_ms": 0, "system": "terminate", "field_seconds": 5}"#,
            #"{"at_ms": 0, "system": "heat", "field_seconds": 5, "policy": "queue"}"#,
            #"{"at_ms": 0, "user": "done", "field_seconds": 5}"#, #"{"at_ms": 0, "system": "heat"}"#,
            #"{"at_ms": 0, "after_ms": 5, "user": "done"}"#,
        ] {
            #expect(throws: DataFileError.self) {
                try scenario(
                    #"{"format": "nfcbench-conformance", "version": 1, "duration_ms": 5000, "steps": [\#(bad)]}"#)
            }
        }
    }
}

@Suite("Core NFC's promise, judged on the system's side")
struct OneInvalidationTests {
    @Test("A second didInvalidateWithError or a callback after it breaks one-didInvalidateWithError-last")
    func afterEnd() {
        let clock = ConformanceClock()
        let recorder = ConformanceRecorder(scenario: "t", clock: clock, userActionWindow: .seconds(2))
        recorder.userAction(.scan(ScanRequest()))
        recorder.call(SessionCallRecord(session: 1, call: .begin, state: .notStarted))
        for event: SessionTraceEvent in [
            .sessionBegan(kind: .ndef(invalidateAfterFirstRead: true), reader: "r"), .didBecomeActive,
            .didInvalidateWithError(.readerSessionInvalidationErrorUserCanceled, errorMessage: nil),
            .endingRepeated(.readerSessionInvalidationErrorUserCanceled),
            .didDetectNDEFs([]),
            .didInvalidateWithError(.readerSessionInvalidationErrorSessionTimeout, errorMessage: nil),
        ] {
            recorder.trace(SessionTraceRecord(tMicroseconds: 0, session: 1, event: event))
        }
        let r = recorder.result(
            description: "", duration: .seconds(1),
            scenario: ConformanceScenario(name: "t", duration: .seconds(1), steps: []))
        #expect(r.rulesBreached == [.oneDidInvalidateWithErrorLast])
        #expect(r.breaches.count == 2)
        #expect(r.breaches.first?.what.contains("didDetectNDEFs") == true)
        #expect(r.breaches.last?.what.contains("a second didInvalidateWithError (201") == true)
        // The first ending stands.
        #expect(r.sessions.first?.ending == .readerSessionInvalidationErrorUserCanceled)
    }

    @Test(
        "The reports: one JSON line per rule, the replay's lines, a summary; the text names the counterexample, where it was saved and its replay"
    )
    func reports() async throws {
        let r = try await explorer(runs: 20, depth: 1).explore(app: app(.restartsAfterTimeout))
        let rule = ConformanceRule.noAutoRestartAfterTimeout
        let c = try #require(r.counterexamples.first { $0.rule == rule })
        let lines = ConformanceReports.jsonLines(r, app: "restarts", budget: nil, saved: [:])
        #expect(lines.count == r.rules.count + r.counterexamples.map(\.replay.count).reduce(0, +) + 1)
        let ruleLine = try #require(lines.first { $0["rule"]?.stringValue == rule.rawValue })
        #expect(ruleLine["smallest_steps"]?.intValue == 1)
        #expect(ruleLine["counterexample"]?["file"] == .null)
        #expect(ruleLine["counterexample"]?["duration_ms"] == .double(60_000))
        #expect(lines.contains { $0["replay"]?.stringValue == rule.rawValue && $0["breach"] != nil })
        let summary = try #require(lines.last)
        #expect(summary["summary"] == .bool(true))
        #expect(summary["runs"]?.intValue == Int64(r.runs))
        #expect(summary["rules_breached"] == .array([.string(rule.rawValue)]))
        #expect(summary["budget_ms"] == .null)

        let text = ConformanceReports.text(
            r, app: "restarts", budget: .seconds(2), saved: [rule: "saved/explored-restarts.json"])
        #expect(text.hasPrefix("nfcbench conformance --explore: app 'restarts', seed 1, depth 1, budget 2.000 s\n"))
        #expect(text.contains("COUNTEREXAMPLE \(rule.rawValue): "))
        #expect(
            text.contains(
                "  saved: saved/explored-restarts.json (replay: nfcbench conformance --suite saved --app restarts)"))
        #expect(text.contains("  BREACH    \(rule.rawValue): "))

        let line = ConformanceReports.jsonLine(c.result)
        #expect(line["verdict"]?.stringValue == "breach")
        #expect(line["rules"] == .array([.string(rule.rawValue)]))
        var firstBreachMs: Int64? = nil
        if case .array(let a)? = line["breaches"] { firstBreachMs = a.first?["t_ms"]?.intValue }
        #expect(firstBreachMs == 60_000)
        let suite = ConformanceReports.summaryJSON(
            [c.result], app: "restarts", suite: "builtin", wall: .milliseconds(1500))
        #expect(suite["breach"]?.intValue == 1)
        #expect(suite["pass"]?.intValue == 0)
        #expect(suite["wall_ms"] == .double(1500))
    }
}
