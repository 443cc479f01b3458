import Dispatch
import ReaderSession
import ReaderSessionConformance
import Synchronization
import Testing

/// A small app under test built on `NFCTagReaderSession`: begins on Scan and otherwise does
/// what its switches say, so each test shows one rule being judged.
private final class TinyApp: NSObject, ConformanceApp, NFCTagReaderSessionDelegate, @unchecked Sendable {
    struct Habits: OptionSet {
        let rawValue: Int
        static let beginsAtLaunch = Habits(rawValue: 1)
        static let restartsFourSecondsAfterTimeout = Habits(rawValue: 2)
        static let touchesEndedSession = Habits(rawValue: 4)
        static let beginsOnReturn = Habits(rawValue: 8)
        static let reusesTagsAfterRestart = Habits(rawValue: 16)
    }

    let env: ConformanceEnvironment
    let habits: Habits
    let queue = DispatchQueue(label: "tiny-app")
    private var session: NFCTagReaderSession?
    private var endings: [Int] = []
    private var restarted = false

    init(_ env: ConformanceEnvironment, _ habits: Habits = []) {
        self.env = env
        self.habits = habits
        super.init()
        if habits.contains(.beginsAtLaunch) { queue.sync { start() } }
    }

    private func start() {
        // Core NFC's initialiser, against the system the harness installed as current.
        session = NFCTagReaderSession(pollingOption: .iso14443, delegate: self, queue: queue)
        session?.alertMessage = "Hold your iPhone near the tag."
        session?.begin()
    }

    func scanTapped(_ request: ScanRequest) { queue.sync { if session?.isReady != true { start() } } }
    func didEnterBackground() {}
    func willEnterForeground() { queue.sync { if habits.contains(.beginsOnReturn) { start() } } }

    func tagReaderSession(_ session: NFCTagReaderSession, didDetect tags: [NFCTag]) {
        guard habits.contains(.reusesTagsAfterRestart), !restarted, let first = tags.first else {
            session.invalidate()
            return
        }
        restarted = true
        session.restartPolling()
        session.connect(to: first) { _ in }
    }

    func tagReaderSession(_ session: NFCTagReaderSession, didInvalidateWithError error: any Error) {
        let code = (error as? NFCReaderError)?.code
        if habits.contains(.touchesEndedSession) {
            session.restartPolling()
            session.alertMessage = "Try again"
        }
        if code == .readerSessionInvalidationErrorSessionTimeout, habits.contains(.restartsFourSecondsAfterTimeout) {
            // Past the quick-restart window (3 s), so each restart really starts.
            env.asyncAfter(.seconds(4), on: queue) { self.start() }
        }
    }
}

private func run(_ json: String, _ habits: TinyApp.Habits = []) async throws -> ConformanceResult {
    let s = try scenario(json)
    // The settle timeout guards against runaway apps in real time; none of these apps runs
    // away, so a generous one keeps a loaded 2-core test machine from cutting a run short.
    return await ConformanceHarness(settleTimeout: .seconds(60)).run(s) { env in TinyApp(env, habits) }
}

private let scanThenTimeout = """
    {"format": "nfcbench-conformance", "version": 1, "duration_ms": 180000, "thermal": false,
     "steps": [{"at_ms": 0, "user": "scan"}], "expect_endings": [201]}
    """

@Suite("Conformance harness judging in-test apps")
struct ConformanceHarnessTests {
    @Test(
        "A session begun on Scan and left to time out passes; the session list shows the user action, the 60 s limit and 201"
    )
    func passes() async throws {
        let r = try await run(scanThenTimeout)
        #expect(r.verdict == .pass)
        #expect(r.breaches.isEmpty)
        #expect(r.sessions.count == 1)
        #expect(r.sessions.first?.userAction == "scan")
        #expect(r.sessions.first?.timeLimit == .seconds(60))
        #expect(r.sessions.first?.endedAt == .seconds(60))
        #expect(r.sessions.first?.ending == .readerSessionInvalidationErrorSessionTimeout)
        #expect(r.sheets == 1)
        #expect(r.sheetsPerMinute == 1.0 / 3.0)
    }

    @Test(
        "A scenario's declarations reach the app: no TAG entitlement → 2, NFC radio off → 6, ineligible → 7, access not accepted → 8"
    )
    func declarations() async throws {
        for (extra, code) in [
            (#""entitlement": ["NDEF"]"#, 2), (#""nfc": "radio-disabled""#, 6), (#""nfc": "ineligible""#, 7),
            (#""nfc": "access-not-accepted""#, 8),
        ] {
            let json =
                #"{"format": "nfcbench-conformance", "version": 1, "duration_ms": 10000, "thermal": false, "#
                + extra + #", "steps": [{"at_ms": 0, "user": "scan"}], "expect_endings": ["# + "\(code)]}"
            let r = try await run(json)
            #expect(r.verdict == .pass, "\(extra): \(r.breaches.map(\.what)) \(r.notes)")
            #expect(r.sessions.map(\.ending?.rawValue) == [code], "\(extra)")
        }
    }

    @Test("A restart four seconds after a timeout is caught as no-auto-restart-after-timeout at 64 s, once per restart")
    func autoRestart() async throws {
        let r = try await run(scanThenTimeout, .restartsFourSecondsAfterTimeout)
        #expect(r.verdict == .breach)
        #expect(r.rulesBreached == [.noAutoRestartAfterTimeout])
        #expect(r.breaches.map(\.time) == [.seconds(64), .seconds(128)])
        #expect(r.breaches.first?.session == 2)
        #expect(r.breaches.first?.scenario == "test")
        #expect(r.breaches.first?.what.contains("201") == true)
        #expect(r.sheets == 3)
        #expect(r.sheetsPerMinute == 1.0)
    }

    @Test("A session begun at launch is caught as no-begin-without-user-action at 0 s")
    func beginAtLaunch() async throws {
        let r = try await run(scanThenTimeout, .beginsAtLaunch)
        #expect(r.rulesBreached == [.noBeginWithoutUserAction])
        #expect(r.breaches.first?.time == .zero)
        // The Scan tap at 0 s meets a sheet already up and begins nothing.
        #expect(r.sessions.count == 1)
    }

    @Test("restartPolling() and alertMessage on an ended session are caught as no-calls-after-invalidation")
    func callsAfterEnd() async throws {
        let r = try await run(scanThenTimeout, .touchesEndedSession)
        #expect(r.rulesBreached == [.noCallsAfterInvalidation])
        #expect(r.breaches.count == 2)
        #expect(r.breaches.allSatisfy { $0.time == .seconds(60) })
        #expect(r.breaches.first?.what.contains("restartPolling()") == true)
    }

    @Test("A begin in willEnterForeground after 202 is caught as restart-on-return-needs-user")
    func restartOnReturn() async throws {
        let r = try await run(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 20000,
             "steps": [{"at_ms": 0, "user": "scan"}, {"at_ms": 2000, "user": "background"}, {"at_ms": 5000, "user": "foreground"}],
             "expect_endings": [202]}
            """, .beginsOnReturn)
        #expect(r.rulesBreached == [.restartOnReturnNeedsUser])
        #expect(r.breaches.first?.time == .seconds(5))
        #expect(r.sessions.map(\.ending) == [.readerSessionInvalidationErrorSessionTerminatedUnexpectedly, nil])
    }

    @Test("Using a tag object delivered before restartPolling() is caught as no-stale-tag-after-restartPolling")
    func staleTag() async throws {
        let r = try await run(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 20000,
             "steps": [{"at_ms": 0, "user": "scan"}, {"at_ms": 1000, "present": "ntag215-uri"}]}
            """, .reusesTagsAfterRestart)
        #expect(r.rulesBreached == [.noStaleTagAfterRestartPolling])
        // Presented at 1 s, reported after the iPhone's Type 2 discovery (0.683299 s for this tag).
        #expect(r.breaches.first?.time == .seconds(1) + .microseconds(683_299))
        #expect(r.breaches.first?.what.contains("connect") == true)
    }

    @Test(
        "The iPhone's Type 2 discovery in virtual time: a tag that ACKs 1A 00 is never delivered; the next tag is, 0.683299 s after it arrives"
    )
    func type2Probe() async throws {
        let r = try await run(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 20000,
             "steps": [{"at_ms": 0, "user": "scan"}, {"at_ms": 1000, "present": "ntag215-probe-ack"},
                       {"at_ms": 3000, "present": "ntag215-uri"}],
             "expect_endings": [200]}
            """)
        #expect(r.verdict == .pass, "\(r.breaches) \(r.notes)")
        #expect(r.sessions.first?.ending == .readerSessionInvalidationErrorUserCanceled)
        // The app invalidates on didDetect: at 3 s + the probe (0.683299 s), its ending 2.5 s later.
        #expect(r.sessions.first?.endedAt == .seconds(3) + .microseconds(683_299) + .milliseconds(2500))
    }

    @Test("Another app's session makes the app's begin fail with 203 and is not judged itself")
    func otherApp() async throws {
        let r = try await run(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 20000,
             "steps": [{"at_ms": 0, "other_app_session_ms": 5000}, {"at_ms": 1000, "user": "scan"}], "expect_endings": [203]}
            """)
        #expect(r.verdict == .pass)
        #expect(r.sessions.count == 1)
        #expect(r.sessions.first?.ending == .readerSessionInvalidationErrorSystemIsBusy)
        #expect(r.sessions.first?.becameActive == false)
        #expect(r.sheets == 0)
    }

    @Test("A scenario that never reaches the ending it tests is inconclusive, with a note")
    func inconclusive() async throws {
        let r = try await run(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 10000,
             "steps": [{"at_ms": 0, "user": "scan"}], "expect_endings": [204]}
            """)
        #expect(r.verdict == .inconclusive)
        #expect(r.notes.contains { $0.contains("204") })
    }

    @Test(
        "after_end_ms steps wait for the session's end: sessions 3 s apart shrink under the thermal model, then 203 from the model"
    )
    func thermalBackToBack() async throws {
        let scans = Array(repeating: #"{"after_end_ms": 3000, "user": "scan"}"#, count: 7).joined(separator: ", ")
        let r = try await run(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 600000,
             "steps": [{"at_ms": 0, "user": "scan"}, \(scans)], "expect_endings": [201, 203]}
            """)
        #expect(r.verdict == .pass)
        let limits = r.sessions.compactMap(\.timeLimit)
        #expect(limits.first == .seconds(60))
        #expect(zip(limits, limits.dropFirst().prefix(4)).allSatisfy { $0 > $1 })
        #expect(r.sessions.dropFirst().first?.begunAt == .seconds(63))
        #expect(r.sessions.contains { $0.refusedByThermalModel })
    }

    @Test("A Scan the instant a session timed out meets the quick-restart window: 203, not the thermal model's")
    func quickRestart() async throws {
        let r = try await run(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 100000,
             "steps": [{"at_ms": 0, "user": "scan"}, {"after_end_ms": 0, "user": "scan"}], "expect_endings": [201, 203],
             "expect_events": [{"event": "quickRestart", "outcome": "systemIsBusy"}]}
            """)
        #expect(r.verdict == .pass)
        #expect(
            r.sessions.map(\.ending) == [
                .readerSessionInvalidationErrorSessionTimeout, .readerSessionInvalidationErrorSystemIsBusy,
            ])
        #expect(r.sessions.last?.refusedByThermalModel == false)
    }

    @Test("The same scenario gives the same result every run")
    func deterministic() async throws {
        var seen: [ConformanceResult] = []
        for _ in 0..<5 { seen.append(try await run(scanThenTimeout, .restartsFourSecondsAfterTimeout)) }
        #expect(Set(seen).count == 1)
    }
}

@Suite("Conformance clock")
struct ConformanceClockTests {
    @Test("fireNext fires one timer at a time in deadline order (ties in arming order) and moves time to it")
    func order() {
        let clock = ConformanceClock()
        let fired = Mutex<[String]>([])
        _ = clock.schedule(at: .seconds(2)) { fired.withLock { $0.append("b") } }
        _ = clock.schedule(at: .seconds(1)) { fired.withLock { $0.append("a") } }
        _ = clock.schedule(at: .seconds(2)) { fired.withLock { $0.append("c") } }
        let cancelled = clock.schedule(at: .milliseconds(1500)) { fired.withLock { $0.append("x") } }
        cancelled.cancel()
        #expect(clock.nextDeadline == .seconds(1))
        #expect(clock.fireNext(upTo: .seconds(10)))
        #expect(clock.now == .seconds(1))
        #expect(clock.fireNext(upTo: .seconds(10)))
        #expect(clock.fireNext(upTo: .seconds(10)))
        #expect(fired.withLock { $0 } == ["a", "b", "c"])
        #expect(!clock.fireNext(upTo: .seconds(10)))
        #expect(clock.now == .seconds(10))
        #expect(clock.nextDeadline == nil)
    }
}
