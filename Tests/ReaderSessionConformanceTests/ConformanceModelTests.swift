import Dispatch
import Foundation
import NFCTags
import ReaderSession
import ReaderSessionConformance
import Synchronization
import Testing

/// An app that answers a 203 its own way (after `retryAfter`, once or in a loop), or waits
/// on real time, or puts its delegate on the main queue: one habit per test.
private final class HabitApp: NSObject, ConformanceApp, NFCNDEFReaderSessionDelegate, @unchecked Sendable {
    enum Habit {
        case retryOnceAfter(Duration)
        case retryEvery(Duration)
        case realTimeScan
        case mainQueueDelegate
    }
    let env: ConformanceEnvironment
    let habit: Habit
    let queue = DispatchQueue(label: "habit-app")
    private var session: NFCNDEFReaderSession?
    private var retried = false

    init(_ env: ConformanceEnvironment, _ habit: Habit) {
        self.env = env
        self.habit = habit
    }

    private func start() {
        let q: DispatchQueue = if case .mainQueueDelegate = habit { .main } else { queue }
        let s = NFCNDEFReaderSession(delegate: self, queue: q, invalidateAfterFirstRead: true)
        session = s
        s.begin()
    }

    func scanTapped(_ request: ScanRequest) {
        if case .realTimeScan = habit {
            // Waits on real time: the harness never sees it (the app is gone long before).
            let app = WeakApp(self)
            DispatchQueue.global().asyncAfter(deadline: .now() + 30) { app.value?.queue.async { app.value?.start() } }
            return
        }
        queue.sync { start() }
    }
    func didEnterBackground() {}
    func willEnterForeground() {}

    func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
        guard (error as? NFCReaderError)?.code == .readerSessionInvalidationErrorSystemIsBusy else { return }
        switch habit {
        case .retryOnceAfter(let d) where !retried:
            retried = true
            env.asyncAfter(d, on: queue) { self.start() }
        case .retryEvery(let d):
            env.asyncAfter(d, on: queue) { self.start() }
        default:
            break
        }
    }
}

private final class WeakApp: @unchecked Sendable {
    weak var value: HabitApp?
    init(_ v: HabitApp) { value = v }
}

private func run(_ json: String, _ habit: HabitApp.Habit) async throws -> ConformanceResult {
    let s = try scenario(json)
    return await ConformanceHarness(settleTimeout: .seconds(60)).run(s) { env in HabitApp(env, habit) }
}

/// Another app reads from 0 to 5 s; the user taps Scan at 1 s (203).
private let busyFiveSeconds = """
    {"format": "nfcbench-conformance", "version": 1, "duration_ms": 30000,
     "steps": [{"at_ms": 0, "other_app_session_ms": 5000}, {"at_ms": 1000, "user": "scan"}],
     "expect_endings": [203]}
    """

@Suite("Conformance: the 203 rule as the seed words it, apps the harness cannot judge, expected events")
struct ConformanceModelTests {
    @Test(
        "After 203, one begin() for the user's standing request once the other session ended (and its sheet closed) passes"
    )
    func oneRetryAfterTheEnd() async throws {
        // The other app invalidates at 5 s; its ending comes 2.5 s later (the turnover,
        // ReaderSystemModel.invalidationDelay) and the quick-restart window runs 3 s from there.
        let r = try await run(busyFiveSeconds, .retryOnceAfter(.seconds(11)))  // at 12 s
        #expect(r.verdict == .pass, "\(r.breaches.map(\.what)) \(r.notes)")
        #expect(r.sessions.count == 2)
        #expect(r.sessions.last?.userAction == "retry after 203")
        #expect(r.sessions.last?.becameActive == true)
    }

    @Test("A begin() while the other session is still active breaches no-retry-loop-on-busy")
    func retryWhileActive() async throws {
        let r = try await run(busyFiveSeconds, .retryOnceAfter(.seconds(1)))  // at 2 s
        #expect(r.verdict == .breach)
        #expect(r.rulesBreached == [.noRetryLoopOnBusy])
        #expect(r.breaches.first?.what.contains("still active") == true)
    }

    @Test("More than 3 begins within 10 s without the user, each after the other ended, is a loop")
    func loop() async throws {
        // The other app's sheet closes at 5 s; its quick-restart window refuses until 8 s.
        let r = try await run(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 20000,
             "steps": [{"at_ms": 0, "other_app_session_ms": 5000}, {"at_ms": 5500, "user": "scan"}],
             "expect_endings": [203]}
            """, .retryEvery(.milliseconds(500)))
        #expect(r.verdict == .breach)
        #expect(r.rulesBreached == [.noRetryLoopOnBusy])
        #expect(r.breaches.contains { $0.what.contains("a retry loop") })
    }

    @Test("A delegate on DispatchQueue.main where the main queue runs (swift test): judged, at the events' instants")
    func mainQueue() async throws {
        let r = try await run(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 5000,
             "steps": [{"at_ms": 0, "user": "scan"}]}
            """, .mainQueueDelegate)
        #expect(r.verdict == .pass, "\(r.notes)")
        #expect(r.notes.isEmpty)
    }

    @Test(
        "A delegate on DispatchQueue.main where the main queue does not run (the CLI): inconclusive, with the reason, never a silent pass"
    )
    func mainQueueNotRun() async throws {
        var harness = ConformanceHarness(settleTimeout: .seconds(60))
        harness.waitsForMainQueue = false
        let s = try scenario(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 5000,
             "steps": [{"at_ms": 0, "user": "scan"}]}
            """)
        let r = await harness.run(s) { env in HabitApp(env, .mainQueueDelegate) }
        #expect(r.verdict == .inconclusive)
        #expect(r.notes.contains { $0.contains("DispatchQueue.main") })
    }

    @Test("An app that waits on real time before begin(): inconclusive, with the reason")
    func realTime() async throws {
        let r = try await run(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 5000,
             "steps": [{"at_ms": 0, "user": "scan"}]}
            """, .realTimeScan)
        #expect(r.verdict == .inconclusive)
        #expect(r.notes.contains { $0.contains("brought no begin()") && $0.contains("real time") })
    }

    @Test("An expected event the app's sessions never show makes the scenario inconclusive; a shown one passes")
    func expectedEvents() async throws {
        let missing = try await run(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 5000,
             "steps": [{"at_ms": 0, "user": "scan"}], "expect_events": [{"event": "queued"}]}
            """, .retryOnceAfter(.zero))
        #expect(missing.verdict == .inconclusive)
        #expect(missing.notes.contains { $0.contains("queued") })
        let shown = try await run(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 30000, "busy": "queue",
             "steps": [{"at_ms": 0, "other_app_session_ms": 5000}, {"at_ms": 1000, "user": "scan"}],
             "expect_events": [{"event": "queued"}, {"event": "didBecomeActive"}]}
            """, .retryOnceAfter(.zero))
        #expect(shown.verdict == .pass, "\(shown.notes)")
    }

    @Test("The new fields and actions parse: busy, select_identifiers, expect_events, system actions, scan options")
    func parses() throws {
        let s = try scenario(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 10000, "busy": "queue",
             "select_identifiers": ["a0000000041010", "D2760000850101"],
             "steps": [
               {"at_ms": 0, "user": "inactive"},
               {"at_ms": 1, "system": "terminate"},
               {"at_ms": 2, "system": "terminate-next-begin"},
               {"at_ms": 3, "system": "busy-policy", "policy": "refuse"},
               {"at_ms": 4, "user": "scan", "session": "tag", "commands": ["3A0407"], "read_all": true,
                "iso7816_select_identifiers": ["D2760000850101"], "command_interval_ms": 250}],
             "expect_events": [{"event": "tagOperationEnded", "code": 105}, {"event": "iso7816Selected", "aid": "D276"}]}
            """)
        #expect(s.busyPolicy == .queue)
        #expect(s.selectIdentifiers == ["A0000000041010", "D2760000850101"])
        #expect(
            s.steps.map(\.action) == [
                .user(.inactive), .system(.terminate), .system(.terminateNextBegin), .system(.busyPolicy(.refuse)),
                .user(
                    .scan(
                        ScanRequest(
                            tagCount: 1, readWrite: true, session: .tag, commands: [[0x3A, 0x04, 0x07]],
                            selectIdentifiers: ["D2760000850101"], readAll: true, commandInterval: .milliseconds(250)))),
            ])
        #expect(s.expectEvents.map(\.description) == ["tagOperationEnded (code 105)", "iso7816Selected (aid D276)"])
    }

    @Test(
        "Malformed new fields name the field",
        arguments: [
            (#""busy": "wait", "steps": []"#, "busy"),
            (#""select_identifiers": ["A000"], "steps": []"#, "select_identifiers[0]"),
            (#""steps": [{"at_ms": 0, "system": "reboot"}]"#, "steps[0].system"),
            (#""steps": [{"at_ms": 0, "system": "busy-policy"}]"#, "steps[0].policy"),
            (#""steps": [{"at_ms": 0, "user": "done", "policy": "queue"}]"#, "steps[0].policy"),
            (#""steps": [{"at_ms": 0, "user": "done", "commands": ["30"]}]"#, "steps[0].commands"),
            (#""steps": [{"at_ms": 0, "user": "scan", "commands": ["3Z"]}]"#, "steps[0].commands[0]"),
            (#""steps": [], "expect_events": [{"code": 1}]"#, "expect_events[0].event"),
        ])
    func malformed(fields: String, field: String) {
        let text = #"{"format": "nfcbench-conformance", "version": 1, "duration_ms": 1000, "# + fields + "}"
        #expect {
            _ = try scenario(text, name: "bad")
        } throws: { error in
            "\(error)".contains(field)
        }
    }
}
