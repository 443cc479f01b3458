import ReaderSession
import Synchronization

/// Watches one scenario run: the app's calls (``SessionCallRecord``), the sessions' trace
/// and the user actions the harness injected, and judges each call as it arrives.
/// Thread-safe: the observers are called on the sessions' queues.
final class ConformanceRecorder: Sendable {
    private struct Session {
        var summary: ConformanceSessionSummary
        var generation: UInt32 = 0
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
    }

    private let scenario: String
    private let clock: ConformanceClock
    private let window: Duration
    private let state = Mutex(State())
    /// Breaches kept per scenario (a retry loop makes hundreds; the count is kept).
    static let maximumBreachesKept = 50

    init(scenario: String, clock: ConformanceClock, userActionWindow: Duration) {
        self.scenario = scenario
        self.clock = clock
        self.window = userActionWindow
    }

    // MARK: What the harness tells

    func userAction(_ a: ConformanceScenario.UserAction) {
        let now = clock.now
        state.withLock { s in
            switch a {
            case .scan:
                s.credit = Credit(action: "scan", at: now)
                s.lastUserAction = ("scan", now)
            case .done:
                s.credit = nil
                s.lastUserAction = ("done", now)
            case .background:
                s.credit = nil
                s.lastUserAction = ("background", now)
            case .foreground:
                s.credit = nil
                s.lastUserAction = ("foreground", now)
            }
        }
    }

    /// The next `begin()` on a fresh session is the other app's.
    func expectForeignBegin() { state.withLock { $0.foreignPending += 1 } }

    func note(_ text: String) { state.withLock { $0.notes.append(text) } }

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
            switch (r.call, r.state) {
            case (.begin, .notStarted):
                s.begins += 1
                var summary = ConformanceSessionSummary(
                    number: r.session, begunAt: now, userAction: nil, becameActive: false,
                    timeLimit: nil, endedAt: nil, ending: nil, errorMessage: nil)
                if let c = s.credit, now - c.at <= window {
                    summary.userAction = c.action
                    s.credit = nil
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
            case .sessionBegan: s.lastBegun = r.session
            case .didInvalidateWithError: s.ended.insert(r.session)
            default: break
            }
            guard !s.frozen, !s.foreign.contains(r.session), s.sessions[r.session] != nil else { return }
            switch r.event {
            case .thermal(_, let limit):
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
                s.sessions[r.session]?.summary.endedAt = now
                s.sessions[r.session]?.summary.ending = code
                s.sessions[r.session]?.summary.errorMessage = message
                s.lastEnding = (code, now)
            case .restartPolling(let g):
                s.sessions[r.session]?.generation = g
            default:
                break
            }
        }
    }

    // MARK: Result

    func result(description: String, duration: Duration, scenario sc: ConformanceScenario) -> ConformanceResult {
        state.withLock { s in
            let sessions = s.sessions.values.map(\.summary).sorted { $0.number < $1.number }
            var notes = s.notes
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
                sheets: s.sheets, alertMessages: s.alertMessages, duration: duration, notes: notes)
        }
    }

    // MARK: Implementation

    private func breach(_ s: inout State, _ rule: ConformanceRule, _ t: Duration, _ session: UInt64, _ what: String) {
        s.breachCount += 1
        if s.breaches.count < Self.maximumBreachesKept {
            s.breaches.append(ConformanceBreach(rule: rule, scenario: scenario, time: t, session: session, what: what))
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
