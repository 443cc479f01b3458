/// One thing a session did or saw, for the always-on trace and `--json` output.
/// The lead's writer turns these into JSON Lines (`t_us`, `event`, `code`, `reason`).
public enum SessionTraceEvent: Sendable, Hashable {
    /// `begin()` was called: the session's kind and reader; `t_us` 0 is this instant.
    case sessionBegan(kind: ReaderSessionKind, reader: String)
    /// The reader's lock file could not be used (errno text); the begin was refused with 1.
    case readerLockFailed(String)
    /// The reader failed while the session polled (could not be opened, was unplugged): its
    /// error, as the backend's event stream ended with it. The session then ends (202).
    case readerFailed(String)
    /// The thermal model at begin: heat in field-seconds and the time limit granted to this
    /// session (`nil` when refused). `enabled` false: the model is switched off and the limit
    /// is the fixed base limit.
    case thermal(heat: Double, timeLimit: Duration?, enabled: Bool)
    /// The thermal model at the end: heat now and the limit a session begun now would get
    /// (`nil`: it would be refused). A prediction, not this session's limit.
    case thermalAfter(heat: Double, nextTimeLimit: Duration?, enabled: Bool)
    /// The reader was busy and the busy policy is `queue`: the session waits for it.
    case queued
    /// `begin()` did nothing (Core NFC reports nothing either); the reason in words.
    case beginIgnored(String)
    /// `begin()` came this soon after the end of a session that had a sheet: a quick
    /// restart, with the model's outcome (`systemIsBusy`, `neverActive`, `shorterLimit`).
    case quickRestart(sinceLastEnd: Duration, outcome: ReaderSystemModel.QuickRestartOutcome)
    /// `begin()` on a session that already ended: its ending is delivered again (reported).
    case endingRepeated(NFCReaderError.Code)
    /// The system ended the session (a scripted ending).
    case systemEnded(NFCReaderError.Code)
    /// `begin()` was refused because of the app's declarations (entitlement, Info.plist) or
    /// the phone's NFC conditions (``ReaderSystemModel``): the code and why.
    case refusedByModel(NFCReaderError.Code, reason: String)
    /// Entries of the Info.plist select-identifiers list that are not valid AIDs: dropped.
    case selectIdentifiersDropped([String])
    /// A session of the same app began while this one was active: this one ends with 202.
    case kickedOut(bySession: UInt64)
    /// The app called `invalidate()`: the session stopped and is closing; its ending comes
    /// after `delay` (``ReaderSystemModel/invalidationDelay``).
    case closing(delay: Duration)
    /// Targets detected but not delivered, and why (no `NFCReaderUsageDescription`).
    case detectionWithheld([DetectedTargetID], reason: String)
    /// Tag session: the ISO 7816 applications were SELECTed on a target in order; `selected`
    /// is the first that answered (the tag is delivered with it as `initialSelectedAID`),
    /// `nil` when none did (the tag is not delivered).
    case applicationSelection(DetectedTargetID, tried: [String], selected: String?)
    /// Tag session: Polling with the FeliCa system codes in order on a target; `selected` is
    /// the first that answered (the tag is delivered with it as `currentSystemCode`), `nil`
    /// when none did (the tag is not delivered).
    case systemCodeSelection(DetectedTargetID, tried: [String], selected: String?)
    /// The iPhone's Type 2 discovery probe ran on a target (``Type2DiscoveryProbe``): its
    /// steps and outcome; an unreadable or lost tag is not reported.
    case type2Probe(DetectedTargetID, Type2ProbeReport)
    /// A tag's connection ended while the session went on.
    case connectionEnded(TagHandle, ReaderSessionMachine.ConnectionEnd)
    /// Delegate `readerSessionDidBecomeActive(_:)`.
    case didBecomeActive
    /// The backend found targets.
    case detected([DetectedTarget])
    /// A target left the field.
    case lost(DetectedTargetID)
    /// Read-only mode read a target's NDEF area.
    case ndefRead(DetectedTargetID, NDEFReadOutcome)
    /// Delegate `readerSession(_:didDetectNDEFs:)`, with the message bytes.
    case didDetectNDEFs([NDEFMessageBytes])
    /// Delegate `readerSession(_:didDetect:)` with these tag objects.
    case didDetectTags([TagHandle])
    /// `restartPolling()` took effect; the new generation.
    case restartPolling(generation: UInt32)
    /// `alertMessage` changed (the sheet's text).
    case alertMessage(String)
    /// The app started an operation on a tag object (`connect`, `readNDEF`, `sendCommand`...).
    case tagOperation(TagOperationID, name: String, TagHandle)
    /// The operation ended; `nil` = success.
    case tagOperationEnded(TagOperationID, NFCReaderError.Code?)
    /// One exchange on the wire as the transport saw it (command and answer).
    case frame(DetectedTargetID, command: [UInt8], response: [UInt8]?)
    /// Delegate `readerSession(_:didInvalidateWithError:)`.
    case didInvalidateWithError(NFCReaderError.Code, errorMessage: String?)

    /// The name for the JSON `event` field: the Core NFC delegate method where there is
    /// one, otherwise a short noun.
    public var name: String {
        switch self {
        case .sessionBegan: "begin"
        case .readerLockFailed: "readerLockFailed"
        case .readerFailed: "readerFailed"
        case .thermal: "thermal"
        case .thermalAfter: "thermal"
        case .queued: "queued"
        case .beginIgnored: "beginIgnored"
        case .quickRestart: "quickRestart"
        case .endingRepeated: "endingRepeated"
        case .systemEnded: "systemEnded"
        case .refusedByModel: "refusedByModel"
        case .selectIdentifiersDropped: "selectIdentifiersDropped"
        case .kickedOut: "kickedOut"
        case .closing: "closing"
        case .detectionWithheld: "detectionWithheld"
        case .applicationSelection(_, _, let selected): selected == nil ? "iso7816SelectFailed" : "iso7816Selected"
        case .systemCodeSelection(_, _, let selected): selected == nil ? "felicaPollingFailed" : "felicaSystemSelected"
        case .type2Probe(_, let r):
            "type2Probe"
                + (r.outcome == .passed
                    ? "Passed" : r.delivers ? "Skipped" : r.outcome == .lost ? "Lost" : "Unreadable")
        case .connectionEnded: "connectionEnded"
        case .didBecomeActive: "readerSessionDidBecomeActive"
        case .detected: "detected"
        case .lost: "lost"
        case .ndefRead: "ndefRead"
        case .didDetectNDEFs: "didDetectNDEFs"
        case .didDetectTags: "didDetectTags"
        case .restartPolling: "restartPolling"
        case .alertMessage: "alertMessage"
        case .tagOperation: "tagOperation"
        case .tagOperationEnded: "tagOperationEnded"
        case .frame: "frame"
        case .didInvalidateWithError: "didInvalidateWithError"
        }
    }

    /// The error code carried, if any (JSON `code`; `reason` is `code.name`).
    public var code: NFCReaderError.Code? {
        switch self {
        case .didInvalidateWithError(let c, _): c
        case .tagOperationEnded(_, let c): c
        case .refusedByModel(let c, _): c
        case .ndefRead(_, .failed(let c)): c
        default: nil
        }
    }
}

/// A trace event with its time and session.
public struct SessionTraceRecord: Sendable, Hashable {
    /// Microseconds since the session's `begin()` on the runtime clock (monotonic).
    public let tMicroseconds: Int64
    /// The session's number within its ``NFCReaderSystem`` (1, 2, ...).
    public let session: UInt64
    public let event: SessionTraceEvent

    public init(tMicroseconds: Int64, session: UInt64, event: SessionTraceEvent) {
        self.tMicroseconds = tMicroseconds
        self.session = session
        self.event = event
    }
}

/// A call the app made on a session or one of its tag objects, as the system saw it before
/// the call took effect (or was ignored, as Core NFC ignores `begin()` on a used session
/// and `restartPolling()` after the end). Reported to ``NFCReaderSystem``'s `callObserver`.
public struct SessionCallRecord: Sendable, Hashable {
    /// The API call (Core NFC names).
    public enum Call: Sendable, Hashable {
        /// `begin()`.
        case begin
        /// `invalidate()` (`nil`) or `invalidate(errorMessage:)`.
        case invalidate(errorMessage: String?)
        /// `restartPolling()`.
        case restartPolling
        /// `alertMessage` set.
        case alertMessage(String)
        /// An operation on a tag object (`connect`, `readNDEF`, `sendCommand`...), with the
        /// handle it was delivered with.
        case tagOperation(name: String, TagHandle)
    }

    /// The session's state when the call arrived.
    public enum State: Sendable, Hashable {
        /// `begin()` not called yet.
        case notStarted
        /// Waiting for the reader (busy policy `queue`) or begun without becoming active.
        case waiting
        /// Active, in this polling generation (``TagHandle/generation``).
        case active(generation: UInt32)
        /// Over, with the code it ended with.
        case invalidated(NFCReaderError.Code)
    }

    /// The session's number within its ``NFCReaderSystem`` (as in ``SessionTraceRecord``).
    public let session: UInt64
    public let call: Call
    public let state: State
    /// True when the call came from work the host started on this thread (``HostWork``):
    /// a delegate call or completion the runtime delivered, or a harness's timer or user
    /// action. False: from a real-time timer, the main queue or an async hop of the app's.
    public let fromHostWork: Bool
    /// True when the session's delegate queue is `DispatchQueue.main`.
    public let delegateQueueIsMain: Bool

    public init(
        session: UInt64, call: Call, state: State, fromHostWork: Bool = true, delegateQueueIsMain: Bool = false
    ) {
        self.session = session
        self.call = call
        self.state = state
        self.fromHostWork = fromHostWork
        self.delegateQueueIsMain = delegateQueueIsMain
    }
}
