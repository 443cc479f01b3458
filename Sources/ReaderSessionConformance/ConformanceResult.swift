public import ReaderSession

/// A rule of the seed article's "Handling the endings" table, as the harness judges it
/// from the API calls it observes.
public enum ConformanceRule: String, Sendable, Hashable, CaseIterable, Codable {
    /// A session begins only when the user asked (a Scan tap just before).
    case noBeginWithoutUserAction = "no-begin-without-user-action"
    /// After 201 (`readerSessionInvalidationErrorSessionTimeout`): tell the user, offer to
    /// start again; do not start it for them.
    case noAutoRestartAfterTimeout = "no-auto-restart-after-timeout"
    /// After 203 (`readerSessionInvalidationErrorSystemIsBusy`): wait; do not retry in a loop.
    case noRetryLoopOnBusy = "no-retry-loop-on-busy"
    /// After 202 (`readerSessionInvalidationErrorSessionTerminatedUnexpectedly`): start again
    /// when the user returns *and asks*.
    case restartOnReturnNeedsUser = "restart-on-return-needs-user"
    /// After `restartPolling()` tag objects from before are invalid: drop them.
    case noStaleTagAfterRestartPolling = "no-stale-tag-after-restartPolling"
    /// An invalidated session cannot be reused: no `begin()`, `restartPolling()`,
    /// `alertMessage` or tag operation on it (a repeated `invalidate()` is harmless and allowed).
    case noCallsAfterInvalidation = "no-calls-after-invalidation"
    /// Core NFC's promise to the app, checked on the system's side: a begun session's
    /// `didInvalidateWithError` comes exactly once and last; no `didBecomeActive` or
    /// `didDetect…` after it (the old ending repeated on a `begin()` of an ended session,
    /// reported, is the app's own breach of ``noCallsAfterInvalidation`` and not counted).
    /// A breach is a fault of the session model under the app, not of the app.
    case oneDidInvalidateWithErrorLast = "one-didInvalidateWithError-last"
    /// A tag delivered to the app's session (`didDetect` with tag objects: a read-write NDEF
    /// or tag session) gets an answer before the session ends: a connect, read, write or
    /// command on one of its tags, `restartPolling()` or `invalidate()`. An app that lets the
    /// session run out with the tag in the field did nothing the user can see; on an iPhone
    /// the sheet just waits. (Read-only NDEF sessions read the tag themselves.) Never a pass:
    /// a breach.
    case readsPresentedTag = "reads-a-presented-tag"

    /// One line: what the rule asks.
    public var summary: String {
        switch self {
        case .noBeginWithoutUserAction: "a session begins only on a user action"
        case .noAutoRestartAfterTimeout: "after 201 (timeout) tell the user and let them start again"
        case .noRetryLoopOnBusy: "after 203 (system busy) wait; no retry loop"
        case .restartOnReturnNeedsUser: "after 202 (left the foreground) start again only when the user asks"
        case .noStaleTagAfterRestartPolling: "after restartPolling() drop every earlier tag object"
        case .noCallsAfterInvalidation:
            "an invalidated session is over: no begin, restartPolling, alertMessage or tag call"
        case .oneDidInvalidateWithErrorLast:
            "(the system's promise) didInvalidateWithError once per session, last: no callback after it"
        case .readsPresentedTag:
            "a delivered tag is connected to, read, written or sent a command (or the app ends or restarts the session)"
        }
    }
}

/// One breach: the rule, where, when, and what the app did.
public struct ConformanceBreach: Sendable, Hashable {
    public var rule: ConformanceRule
    public var scenario: String
    /// Virtual time since the scenario's start.
    public var time: Duration
    /// The app's session the call was made on (its number within the run).
    public var session: UInt64
    /// What the app did, e.g. "begin() 0.000 s after its session ended with 201 (sessionTimeout), no user action".
    public var what: String
}

/// One session of the app under test, as the harness saw it.
public struct ConformanceSessionSummary: Sendable, Hashable {
    public var number: UInt64
    /// When `begin()` was called (virtual time).
    public var begunAt: Duration
    /// The user action that asked for it (`"scan"`), or nil when none did.
    public var userAction: String?
    /// True when it became active (a sheet was presented).
    public var becameActive: Bool
    /// The time limit the thermal model granted (nil when refused or never begun).
    public var timeLimit: Duration?
    /// True when the thermal model refused the start (203 "temporarily unavailable"),
    /// false when it started or another session held the reader (203 busy).
    public var refusedByThermalModel: Bool = false
    /// When and how it ended (nil: still active when the scenario ended).
    public var endedAt: Duration?
    public var ending: NFCReaderError.Code?
    /// `invalidate(errorMessage:)`'s message.
    public var errorMessage: String?
}

/// The outcome of one scenario for one app.
public struct ConformanceResult: Sendable, Hashable {
    public enum Verdict: String, Sendable, Hashable {
        /// No breach, and the scenario reached the endings it exists to test.
        case pass
        /// At least one breach.
        case breach
        /// No breach, but the scenario did not reach what it tests (see ``notes``).
        case inconclusive
    }

    public var scenario: String
    public var description: String
    public var verdict: Verdict
    public var breaches: [ConformanceBreach]
    public var sessions: [ConformanceSessionSummary]
    /// Sheets presented (sessions that became active); VoiceOver announces each one.
    public var sheets: Int
    /// `alertMessage` changes while a sheet was up.
    public var alertMessages: Int
    /// The scenario's virtual length.
    public var duration: Duration
    /// Harness remarks: unmet expectations, a run that did not settle, a runaway app.
    public var notes: [String]
    /// What background tag reading did (scenarios with `background_reading`), in order.
    public var background: [ConformanceBackgroundEvent] = []

    /// Sheets per minute of virtual time, over the scenario's length (at least one minute,
    /// so a short scenario with one sheet reads 1, not 6).
    public var sheetsPerMinute: Double {
        let minutes = max(
            1.0, Double(duration.components.seconds) / 60 + Double(duration.components.attoseconds) / 6e19)
        return Double(sheets) / minutes
    }

    /// The rules breached, each once, in first-breach order.
    public var rulesBreached: [ConformanceRule] {
        var seen: [ConformanceRule] = []
        for b in breaches where !seen.contains(b.rule) { seen.append(b.rule) }
        return seen
    }
}

/// One line of a scenario's replay, in virtual time: a step the harness played, a trace
/// record of one of the app's sessions, or a breach as it was judged. The explorer shows a
/// counterexample's replay with these (``ConformanceExploration/Counterexample/replay``).
public struct ConformanceReplayLine: Sendable, Hashable {
    public enum Entry: Sendable, Hashable {
        /// Step `index` (0-based) of the scenario, as its file writes it
        /// (``ConformanceScenario/stepJSON(_:)``).
        case step(index: Int, text: String)
        /// A trace record of one of the app's sessions (other apps' are left out).
        case record(SessionTraceRecord)
        /// A rule breached at this instant.
        case breach(ConformanceBreach)
    }

    /// Virtual time since the scenario's start.
    public var time: Duration
    public var entry: Entry

    public init(time: Duration, entry: Entry) {
        self.time = time
        self.entry = entry
    }
}
