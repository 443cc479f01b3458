/// One thing a session did or saw, for the always-on trace and `--json` output.
/// The lead's writer turns these into JSON Lines (`t_us`, `event`, `code`, `reason`).
public enum SessionTraceEvent: Sendable, Hashable {
    /// `begin()` was called: the session's kind and reader; `t_us` 0 is this instant.
    case sessionBegan(kind: ReaderSessionKind, reader: String)
    /// The reader's lock file could not be used (errno text); the begin was refused with 1.
    case readerLockFailed(String)
    /// The thermal model at begin: heat in field-seconds and the granted time limit
    /// (`nil` when refused); also at the end, with the limit a begin would now get.
    case thermal(heat: Double, timeLimit: Duration?)
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
        case .thermal: "thermal"
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
