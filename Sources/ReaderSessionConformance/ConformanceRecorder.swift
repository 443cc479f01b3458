import NFCTrace
import ReaderSession
import Synchronization

/// Watches one scenario run: the app's calls (``/ReaderSession/SessionCallRecord``), the sessions' trace
/// and the user actions the harness injected, and judges each call as it arrives.
/// Thread-safe: the observers are called on the sessions' queues.
final class ConformanceRecorder: Sendable {
    private struct Session {
        var summary: ConformanceSessionSummary
        var generation: UInt32 = 0
        /// `didDetect…` deliveries so far.
        var deliveries = 0
        /// Tags (one presentation each) delivered as tag objects that the app has not answered
        /// yet, with when they were first delivered; and those it answered (a tag operation
        /// on one of its tag objects, or restartPolling / invalidate while it was waiting).
        /// For ``ConformanceRule/readsPresentedTag``.
        /// Keyed by the tag's UID (a tag rediscovered after restartPolling is a new target
        /// but the same tag), its target number when no UID was seen.
        var unanswered: [[UInt8]: Duration] = [:]
        var answered: Set<[UInt8]> = []
        /// The UIDs of the targets detected in this session.
        var uids: [DetectedTargetID: [UInt8]] = [:]

        func tag(_ id: DetectedTargetID) -> [UInt8] {
            uids[id] ?? Array("#\(id.rawValue)".utf8)
        }

        mutating func answerAll() {
            answered.formUnion(unanswered.keys)
            unanswered = [:]
        }
    }

    private struct Credit {
        var action: String
        var at: Duration
    }

    private struct State {
        var sessions: [UInt64: Session] = [:]
        var foreign: Set<UInt64> = []
        var foreignPending = 0
        var credit: Credit?
        var lastEnding: (code: NFCReaderError.Code, at: Duration)?
        var lastUserAction: (action: String, at: Duration)?
        var breaches: [ConformanceBreach] = []
        var breachCount = 0
        var notes: [String] = []
        var sheets = 0
        var alertMessages = 0
        var begins = 0
        var frozen = false
        /// Every session (the app's and others') by the latest `begin` trace, and the ended ones.
        var lastBegun: UInt64?
        var ended: Set<UInt64> = []
        /// Other apps' sessions that are active now.
        var foreignActive: Set<UInt64> = []
        /// After a 203: one begin for the user's standing request may still come.
        var busyRetryArmed = false
        /// Begins without a user action after a 203, for the loop limit.
        var unaskedAfterBusy: [Duration] = []
        /// A Scan that has not brought a begin yet, and whether a session was open at the time.
        var pendingScan: (at: Duration, sessionOpen: Bool)?
        /// Notes already given, so each kind is said once.
        var said: Set<String> = []
        /// The app's sessions' trace records, for the expected events (kept only when the
        /// scenario expects events).
        var appRecords: [JSONObject] = []
        /// A `terminate-next-begin` that no `begin()` has met yet.
        var terminatePending = false
        /// When the last session (any app's) that had a sheet ended.
        var lastSheetEnd: Duration?
        /// What background tag reading did (``ConformanceBackgroundEvent``).
        var background: [ConformanceBackgroundEvent] = []
        /// The replay's lines, when asked for.
        var timeline: [ConformanceReplayLine]?
    }

    private let scenario: String
    private let clock: ConformanceClock
    private let window: Duration
    private let busyRetryLimit: Int
    private let busyRetryWindow: Duration
    private let state: Mutex<State>
    private let keepRecords: Bool
    /// Breaches kept per scenario (a retry loop makes hundreds; the count is kept).
    static let maximumBreachesKept = 50

    init(
        scenario: String, clock: ConformanceClock, userActionWindow: Duration, busyRetryLimit: Int = 3,
        busyRetryWindow: Duration = .seconds(10), keepRecords: Bool = true, timeline: Bool = false
    ) {
        var initial = State()
        if timeline { initial.timeline = [] }
        self.state = Mutex(initial)
        self.keepRecords = keepRecords
        self.scenario = scenario
        self.clock = clock
        self.window = userActionWindow
        self.busyRetryLimit = busyRetryLimit
        self.busyRetryWindow = busyRetryWindow
    }

    // MARK: What the harness tells

    func userAction(_ a: ConformanceScenario.UserAction) {
        let now = clock.now
        state.withLock { s in
            checkPendingScan(&s)
            switch a {
            case .scan:
                s.credit = Credit(action: "scan", at: now)
                s.lastUserAction = ("scan", now)
                let open = s.sessions.values.contains { $0.summary.endedAt == nil }
                s.pendingScan = (now, open)
            case .done:
                s.credit = nil
                s.lastUserAction = ("done", now)
            case .background:
                s.credit = nil
                s.lastUserAction = ("background", now)
            case .foreground:
                s.credit = nil
                s.lastUserAction = ("foreground", now)
            case .inactive:
                s.lastUserAction = ("inactive", now)
            case .tapNotification:
                s.credit = nil
                s.lastUserAction = ("tap-notification", now)
            }
        }
    }

    /// The system acted on its own (a scripted ending, a policy change).
    func systemAction(_ a: ConformanceScenario.SystemAction) {
        let now = clock.now
        state.withLock { s in
            if case .terminate = a { s.credit = nil }
            if case .terminateNextBegin = a { s.terminatePending = true }
            s.lastUserAction = s.lastUserAction ?? ("nothing", now)
        }
    }

    /// A Scan that brought no `begin()` while no session of the app was open: the app may
    /// wait on real time, which the harness cannot see.
    private func checkPendingScan(_ s: inout State) {
        guard let p = s.pendingScan else { return }
        s.pendingScan = nil
        guard !p.sessionOpen else { return }
        say(
            &s, "scan-without-begin",
            "Scan at \(format(p.at)) brought no begin() while no session was up: an app that waits on real time (DispatchQueue.asyncAfter, Task.sleep on the continuous clock) never gets there in virtual time; use ConformanceEnvironment.asyncAfter"
        )
    }

    private func say(_ s: inout State, _ kind: String, _ text: String) {
        guard s.said.insert(kind).inserted else { return }
        s.notes.append(text)
    }

    /// The next `begin()` on a fresh session is the other app's.
    func expectForeignBegin() { state.withLock { $0.foreignPending += 1 } }

    func note(_ text: String) { state.withLock { $0.notes.append(text) } }

    /// Background tag reading did something; `expect_events` can name it.
    func background(_ e: ConformanceBackgroundEvent) {
        state.withLock { s in
            guard !s.frozen else { return }
            s.background.append(e)
            if keepRecords { s.appRecords.append(e.json) }
        }
    }

    /// Stops recording (the run is over; whatever the app does next is not judged).
    func freeze() { state.withLock { $0.frozen = true } }

    var appBegins: Int { state.withLock { $0.begins } }

    var appSessionActive: Bool {
        state.withLock { s in s.sessions.values.contains { $0.summary.endedAt == nil && $0.summary.becameActive } }
    }

    var lastAppEnd: Duration? { state.withLock { $0.lastEnding?.at } }

    // MARK: Observers

    func call(_ r: SessionCallRecord) {
        let now = clock.now
        state.withLock { s in
            guard !s.frozen else { return }
            if case .begin = r.call, case .notStarted = r.state, s.foreignPending > 0, s.sessions[r.session] == nil {
                s.foreignPending -= 1
                s.foreign.insert(r.session)
                return
            }
            guard !s.foreign.contains(r.session) else { return }
            if !r.fromHostWork {
                say(
                    &s, "unattributed-\(Self.callName(r.call))",
                    "\(Self.callName(r.call)) at \(format(now)) came from work the harness did not start (a real-time timer such as DispatchQueue.asyncAfter, a RunLoop timer or Task.sleep on the continuous clock, a Task {} on the global executor, or an async hop to a queue of the app's own): the harness cannot place it in virtual time; use ConformanceEnvironment.asyncAfter and async(on:)"
                )
            }
            switch r.call {
            case .tagOperation(_, let h):
                if let tag = s.sessions[r.session]?.tag(h.target) {
                    s.sessions[r.session]?.answered.insert(tag)
                    s.sessions[r.session]?.unanswered[tag] = nil
                }
            case .restartPolling, .invalidate: s.sessions[r.session]?.answerAll()
            case .begin, .alertMessage: break
            }
            switch (r.call, r.state) {
            case (.begin, .notStarted):
                s.begins += 1
                var summary = ConformanceSessionSummary(
                    number: r.session, begunAt: now, userAction: nil, becameActive: false,
                    timeLimit: nil, endedAt: nil, ending: nil, errorMessage: nil)
                if let c = s.credit, now - c.at <= window {
                    summary.userAction = c.action
                    s.credit = nil
                    s.pendingScan = nil
                } else if s.lastEnding?.code == .readerSessionInvalidationErrorSystemIsBusy {
                    judgeBeginAfterBusy(&s, r.session, now, &summary)
                } else {
                    let (rule, why) = Self.unaskedBegin(s.lastEnding, s.lastUserAction, now: now)
                    breach(&s, rule, now, r.session, why)
                }
                s.sessions[r.session] = Session(summary: summary)
            case (.begin, .invalidated(let c)):
                breach(
                    &s, .noCallsAfterInvalidation, now, r.session,
                    "begin() again on a session that ended with \(Self.name(c)); a new session needs a new object")
            case (.restartPolling, .invalidated(let c)):
                breach(
                    &s, .noCallsAfterInvalidation, now, r.session,
                    "restartPolling() on a session that ended with \(Self.name(c))")
            case (.alertMessage(let m), .invalidated(let c)):
                breach(
                    &s, .noCallsAfterInvalidation, now, r.session,
                    "set alertMessage \"\(m)\" on a session that ended with \(Self.name(c))")
            case (.tagOperation(let name, let h), .invalidated(let c)):
                breach(
                    &s, .noCallsAfterInvalidation, now, r.session,
                    "\(name) on tag \(h) of a session that ended with \(Self.name(c))")
            case (.tagOperation(let name, let h), .active(let g)) where h.generation < g:
                breach(
                    &s, .noStaleTagAfterRestartPolling, now, r.session,
                    "\(name) on tag \(h), delivered before restartPolling() (now generation \(g))")
            default:
                break
            }
        }
    }

    /// The session whose `begin()` is running (its polling starts inside it).
    var lastBegun: UInt64? { state.withLock { $0.lastBegun } }
    /// Sessions (any app's) that have ended.
    var endedSessions: Set<UInt64> { state.withLock { $0.ended } }

    func trace(_ r: SessionTraceRecord) {
        let now = clock.now
        state.withLock { s in
            switch r.event {
            case .sessionBegan:
                s.lastBegun = r.session
                s.terminatePending = false
            case .didInvalidateWithError:
                s.ended.insert(r.session)
                if s.foreignActive.remove(r.session) != nil || s.sessions[r.session]?.summary.becameActive == true {
                    s.lastSheetEnd = now
                }
            case .didBecomeActive where s.foreign.contains(r.session):
                s.foreignActive.insert(r.session)
            default: break
            }
            guard !s.frozen, !s.foreign.contains(r.session), s.sessions[r.session] != nil else { return }
            if keepRecords { s.appRecords.append(r.json()) }
            s.timeline?.append(ConformanceReplayLine(time: now, entry: .record(r)))
            if let ended = s.sessions[r.session]?.summary.endedAt {
                checkAfterEnd(&s, r, ended: ended, now: now)
                return
            }
            switch r.event {
            case .thermal(_, let limit, _):
                if s.sessions[r.session]?.summary.becameActive == false, s.sessions[r.session]?.summary.endedAt == nil {
                    s.sessions[r.session]?.summary.timeLimit = limit
                    s.sessions[r.session]?.summary.refusedByThermalModel = limit == nil
                }
            case .didBecomeActive:
                s.sessions[r.session]?.summary.becameActive = true
                s.sheets += 1
            case .alertMessage:
                if s.sessions[r.session]?.summary.becameActive == true { s.alertMessages += 1 }
            case .didInvalidateWithError(let code, let message):
                if let waiting = s.sessions[r.session]?.unanswered, let since = waiting.values.min(), now > since {
                    breach(
                        &s, .readsPresentedTag, now, r.session,
                        "\(waiting.count) tag(s) delivered from \(format(since)) on got no connect, read, write or command, and the app neither restarted polling nor invalidated; the session ended \(format(now - since)) later with \(Self.name(code))"
                    )
                }
                s.sessions[r.session]?.answerAll()
                s.sessions[r.session]?.summary.endedAt = now
                s.sessions[r.session]?.summary.ending = code
                s.sessions[r.session]?.summary.errorMessage = message
                s.lastEnding = (code, now)
                if code == .readerSessionInvalidationErrorSystemIsBusy { s.busyRetryArmed = true }
            case .restartPolling(let g):
                s.sessions[r.session]?.generation = g
            case .didDetectNDEFs:
                s.sessions[r.session]?.deliveries += 1
            case .didDetectTags(let handles):
                s.sessions[r.session]?.deliveries += 1
                for h in handles {
                    guard let tag = s.sessions[r.session]?.tag(h.target),
                        s.sessions[r.session]?.answered.contains(tag) == false,
                        s.sessions[r.session]?.unanswered[tag] == nil
                    else { continue }
                    s.sessions[r.session]?.unanswered[tag] = now
                }
            case .detected(let targets):
                for t in targets { s.sessions[r.session]?.uids[t.id] = t.uid }
            default:
                break
            }
        }
    }

    // MARK: Result

    func result(description: String, duration: Duration, scenario sc: ConformanceScenario) -> ConformanceResult {
        state.withLock { s in
            checkPendingScan(&s)
            let sessions = s.sessions.values.map(\.summary).sorted { $0.number < $1.number }
            var notes = s.notes
            for e in sc.expectEvents where !s.appRecords.contains(where: { Self.matches($0, e) }) {
                notes.append(
                    "no session of the app showed the event \(e), which this scenario tests (an app that waits on real time never gets there in virtual time)"
                )
            }
            let endings = Set(sessions.compactMap { $0.ending?.rawValue })
            for e in sc.expectEndings where !endings.contains(e) {
                notes.append(
                    "no session of the app ended with \(e) (\(NFCReaderError.Code(rawValue: e).map(Self.name) ?? "unknown code")), which this scenario tests"
                )
            }
            if sc.expectErrorMessage && !sessions.contains(where: { $0.errorMessage != nil }) {
                notes.append("no session ended through invalidate(errorMessage:), which this scenario tests")
            }
            if s.breachCount > s.breaches.count {
                notes.append("\(s.breachCount) breaches, the first \(s.breaches.count) kept")
            }
            let verdict: ConformanceResult.Verdict =
                s.breachCount > 0 ? .breach : (notes.isEmpty ? .pass : .inconclusive)
            return ConformanceResult(
                scenario: scenario, description: description, verdict: verdict, breaches: s.breaches,
                sessions: sessions,
                sheets: s.sheets, alertMessages: s.alertMessages, duration: duration, notes: notes,
                background: s.background)
        }
    }

    // MARK: Implementation

    /// The 203 rule as the seed's table words it: "wait for it to end; do not retry in a
    /// loop". One begin for the user's standing request after the other session ended
    /// passes; a begin while another app's session is still active, or more than
    /// `busyRetryLimit` within `busyRetryWindow`, breaches it.
    private func judgeBeginAfterBusy(
        _ s: inout State, _ session: UInt64, _ now: Duration, _ summary: inout ConformanceSessionSummary
    ) {
        s.unaskedAfterBusy = s.unaskedAfterBusy.filter { now - $0 < busyRetryWindow } + [now]
        let since = s.lastEnding.map { format(now - $0.at) } ?? "?"
        if !s.foreignActive.isEmpty {
            breach(
                &s, .noRetryLoopOnBusy, now, session,
                "begin() \(since) after 203 (systemIsBusy) with no user action while the other session is still active: wait for it to end"
            )
        } else if s.unaskedAfterBusy.count > busyRetryLimit {
            breach(
                &s, .noRetryLoopOnBusy, now, session,
                "\(s.unaskedAfterBusy.count) begin() calls without a user action within \(format(busyRetryWindow)) after 203 (systemIsBusy): a retry loop"
            )
        } else if !s.busyRetryArmed {
            breach(
                &s, .noRetryLoopOnBusy, now, session,
                "a second begin() without a user action for one request after 203 (systemIsBusy)")
        } else {
            s.busyRetryArmed = false
            summary.userAction = "retry after 203"
        }
    }

    /// True when `record` is `expected`'s event with its fields (hex fields as prefixes).
    static func matches(_ record: JSONObject, _ expected: ConformanceScenario.ExpectedEvent) -> Bool {
        guard TraceRecord(json: record).kindName == expected.event else { return false }
        for (key, want) in expected.fields {
            guard let have = record[key] else { return false }
            switch (want, have) {
            case (.int(let w), .int(let h)): if w != h { return false }
            case (.int(let w), .double(let h)): if Double(w) != h { return false }
            case (.bool(let w), .bool(let h)): if w != h { return false }
            case (.string(let w), .string(let h)):
                if ["command", "response", "aid"].contains(key) {
                    if !h.uppercased().hasPrefix(w.uppercased()) { return false }
                } else if w != h {
                    return false
                }
            default: return false
            }
        }
        return true
    }

    static func callName(_ c: SessionCallRecord.Call) -> String {
        switch c {
        case .begin: "begin()"
        case .invalidate: "invalidate()"
        case .restartPolling: "restartPolling()"
        case .alertMessage: "alertMessage"
        case .tagOperation(let name, _): name
        }
    }

    private func breach(_ s: inout State, _ rule: ConformanceRule, _ t: Duration, _ session: UInt64, _ what: String) {
        s.breachCount += 1
        let b = ConformanceBreach(rule: rule, scenario: scenario, time: t, session: session, what: what)
        if s.breaches.count < Self.maximumBreachesKept { s.breaches.append(b) }
        s.timeline?.append(ConformanceReplayLine(time: t, entry: .breach(b)))
    }

    /// Core NFC's promise (``ConformanceRule/oneDidInvalidateWithErrorLast``): after a
    /// session's `didInvalidateWithError`, no second one and no other delegate callback.
    private func checkAfterEnd(_ s: inout State, _ r: SessionTraceRecord, ended: Duration, now: Duration) {
        let what: String
        switch r.event {
        case .didInvalidateWithError(let code, _): what = "a second didInvalidateWithError (\(Self.name(code)))"
        case .didBecomeActive: what = "readerSessionDidBecomeActive"
        case .didDetectNDEFs: what = "didDetectNDEFs"
        case .didDetectTags: what = "didDetect (tags)"
        default: return
        }
        breach(
            &s, .oneDidInvalidateWithErrorLast, now, r.session,
            "\(what) delivered \(format(now - ended)) after the session's didInvalidateWithError")
    }

    /// A step the harness played, for the replay's lines.
    func step(_ index: Int, _ text: String) {
        let now = clock.now
        state.withLock { $0.timeline?.append(ConformanceReplayLine(time: now, entry: .step(index: index, text: text))) }
    }

    /// The replay's lines so far (empty unless asked for).
    var timeline: [ConformanceReplayLine] { state.withLock { $0.timeline ?? [] } }

    /// What the judging knows now that could change what comes next, for
    /// ``ConformanceExplorer``'s merging of equivalent states: no absolute time, no history
    /// beyond what the rules still look at.
    func situation(now: Duration, quickRestartWindow: Duration) -> RecorderSituation {
        state.withLock { s in
            let open = s.sessions.values.filter { $0.summary.endedAt == nil }.sorted {
                $0.summary.number < $1.summary.number
            }
            return RecorderSituation(
                openSessions: open.map {
                    RecorderSituation.OpenSession(
                        active: $0.summary.becameActive, generation: $0.generation, deliveries: min($0.deliveries, 3),
                        asked: $0.summary.userAction != nil, unanswered: $0.unanswered.values.min().map { now - $0 })
                },
                lastEnding: s.lastEnding?.code.rawValue,
                creditAge: s.credit.map { now - $0.at }.flatMap { $0 <= window ? $0 : nil },
                busyRetryArmed: s.busyRetryArmed,
                unaskedAfterBusy: s.unaskedAfterBusy.map { now - $0 }.filter { $0 < busyRetryWindow },
                foreignActive: s.foreignActive.count,
                pendingScan: s.pendingScan.map { !$0.sessionOpen } ?? false,
                terminatePending: s.terminatePending,
                sinceSheetEnd: s.lastSheetEnd.map { now - $0 }.flatMap { $0 < quickRestartWindow ? $0 : nil },
                breached: s.breachCount > 0)
        }
    }

    /// Which rule a begin nobody asked for breaks, from what came before it.
    private static func unaskedBegin(
        _ last: (code: NFCReaderError.Code, at: Duration)?, _ user: (action: String, at: Duration)?, now: Duration
    ) -> (ConformanceRule, String) {
        let userText =
            user.map { "; the user's last action was \($0.action) at \(format($0.at))" } ?? "; the user did nothing"
        guard let last else { return (.noBeginWithoutUserAction, "begin() with no user action\(userText)") }
        let after =
            "begin() \(format(now - last.at)) after a session ended with \(name(last.code)), no user action\(userText)"
        switch last.code {
        case .readerSessionInvalidationErrorSessionTimeout: return (.noAutoRestartAfterTimeout, after)
        case .readerSessionInvalidationErrorSystemIsBusy: return (.noRetryLoopOnBusy, after)
        case .readerSessionInvalidationErrorSessionTerminatedUnexpectedly: return (.restartOnReturnNeedsUser, after)
        default: return (.noBeginWithoutUserAction, after)
        }
    }

    static func name(_ c: NFCReaderError.Code) -> String { "\(c.rawValue) (\(c.shortName))" }
}

extension NFCReaderError.Code {
    /// The case name without Core NFC's long prefix: `sessionTimeout`, `systemIsBusy`...
    var shortName: String {
        let full = "\(self)"
        for p in ["readerSessionInvalidationError", "readerTransceiveError", "ndefReaderSessionError", "readerError"]
        where full.hasPrefix(p) {
            let rest = full.dropFirst(p.count)
            return rest.prefix(1).lowercased() + rest.dropFirst()
        }
        return full
    }
}

/// The recorder's part of a run's situation (``ConformanceRecorder/situation(now:quickRestartWindow:)``).
struct RecorderSituation: Hashable {
    struct OpenSession: Hashable {
        var active: Bool
        var generation: UInt32
        var deliveries: Int
        var asked: Bool
        /// How long delivered tags have waited for an answer (nil: none waiting).
        var unanswered: Duration?
    }
    var openSessions: [OpenSession]
    var lastEnding: Int?
    var creditAge: Duration?
    var busyRetryArmed: Bool
    var unaskedAfterBusy: [Duration]
    var foreignActive: Int
    var pendingScan: Bool
    var terminatePending: Bool
    var sinceSheetEnd: Duration?
    var breached: Bool
}
