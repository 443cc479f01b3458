/// The Core NFC reader-session rules as a pure value: inputs in, effects out.
///
/// Overview: one machine per session. The runtime feeds it one `mutating` call per input
/// (the app's API calls, the user's actions, the backend's detections, the timer) and
/// performs the returned ``Effect`` values in order. The machine reads no clock: time is a
/// `Duration` on the runtime's clock, passed to ``begin(at:admission:)`` and
/// ``timeLimitReached(at:)``. Whether another session is active, and the thermal model's
/// verdict, arrive as the ``SessionAdmission`` input to `begin`.
///
/// Rules (Core NFC `NFCReaderSession.h`, `NFCNDEFReaderSession.h`, `NFCTagReaderSession.h`):
/// - a begun session ends after its time limit (60 s unless throttled) with 201;
/// - a `begin` while another session is active is refused with 203, and such a session gets
///   only `didInvalidateWithError`; a started one gets `didBecomeActive` first;
/// - Done → 200; `invalidate()` → 200; `invalidate(errorMessage:)` → 200 with the message;
///   leaving the foreground (or the reader vanishing) → 202;
/// - read-only NDEF mode reports only well-formed non-empty messages, keeps polling past
///   empty and non-NDEF tags, reads each presentation once, ignores `restartPolling()`,
///   and with `invalidateAfterFirstRead` ends with 204 after delivering the first message;
/// - read-write and tag modes deliver tag objects (several together), never end with 204,
///   and `restartPolling()` bumps the generation so every earlier tag object fails with
///   104; operations after invalidation fail with 103; a tag that leaves mid-operation
///   fails it with 100 and the session stays valid; `readNDEF` of an empty tag → 403;
/// - an invalidated session is over: `begin`, `restartPolling()` and `alertMessage` do
///   nothing; `didInvalidateWithError` comes exactly once and last.
public struct ReaderSessionMachine: Sendable, Hashable {
    /// The session's state; each case carries only what is valid in it.
    public enum State: Sendable, Hashable {
        /// Created, `begin()` not called yet.
        case notStarted
        /// Begun and polling until `deadline`.
        case active(Active)
        /// Over, with the code `didInvalidateWithError` carried.
        case invalidated(NFCReaderError.Code)
    }

    /// The data of an active session.
    public struct Active: Sendable, Hashable {
        /// When the time limit ends the session (runtime clock).
        public var deadline: Duration
        /// Polling generation; bumped by `restartPolling()` in tag-delivering modes.
        public var generation: UInt32
        /// Targets in the field in this generation and what the session did with them.
        public var present: [DetectedTargetID: TargetStatus]
    }

    /// What the session made of a target in the field.
    public enum TargetStatus: Sendable, Hashable {
        /// Read-only mode: its NDEF read is under way.
        case reading
        /// Read-only mode: its message was delivered; not read again in this presentation.
        case reported
        /// Read-only mode: empty, not NDEF, malformed or unreadable; polling goes on.
        case skipped
        /// Tag modes: delivered to the delegate as a tag object.
        case delivered
    }

    /// What the runtime must do, in order.
    public enum Effect: Sendable, Hashable {
        /// Start RF polling on the backend (`ReaderBackend.events`).
        case startPolling
        /// Stop RF polling (cancel the event stream): field off.
        case stopPolling
        /// Ask the backend to discover again (`ReaderBackend.restartPolling()`).
        case restartPolling
        /// Arm the session timer; call ``timeLimitReached(at:)`` at `deadline`.
        case armTimeLimit(deadline: Duration)
        /// Disarm the session timer.
        case cancelTimeLimit
        /// Release the reader (arbiter lease, file lock) and tell the thermal model the
        /// field went off.
        case releaseReader
        /// Read-only mode: read this target's NDEF message, then call
        /// ``ndefReadFinished(target:outcome:)``.
        case readNDEF(DetectedTargetID)
        /// Delegate: `readerSessionDidBecomeActive(_:)`.
        case didBecomeActive
        /// Delegate: `readerSession(_:didDetectNDEFs:)`.
        case didDetectNDEFs([NDEFMessageBytes])
        /// Delegate: `readerSession(_:didDetect:)` / `tagReaderSession(_:didDetect:)`.
        case didDetectTags([TagHandle])
        /// The sheet's text changes (`alertMessage` set while valid).
        case showAlertMessage(String)
        /// Run the app's tag operation, then call ``tagOperationFinished(_:on:result:)``.
        case performTagOperation(TagOperationID, TagHandle)
        /// Complete the app's tag operation successfully.
        case completeTagOperation(TagOperationID)
        /// Complete the app's tag operation with this error.
        case failTagOperation(TagOperationID, NFCReaderError.Code)
        /// Delegate: `readerSession(_:didInvalidateWithError:)`; `errorMessage` is what
        /// `invalidate(errorMessage:)` shows on the sheet.
        case didInvalidate(NFCReaderError.Code, errorMessage: String?)
    }

    /// The kind of session (fixed at creation).
    public let kind: ReaderSessionKind
    /// The current state.
    public private(set) var state: State = .notStarted

    public init(kind: ReaderSessionKind) {
        self.kind = kind
    }

    /// Core NFC `isReady`: true while the session is active.
    public var isReady: Bool {
        if case .active = state { true } else { false }
    }

    /// The code of the ending, once invalidated.
    public var invalidationCode: NFCReaderError.Code? {
        if case .invalidated(let code) = state { code } else { nil }
    }

    // MARK: Inputs

    /// The app calls `begin()` at `now`. Starts the session when `admission` grants it,
    /// otherwise ends it at once with only `didInvalidate` (203 busy or throttled, or the
    /// refusal's code). Does nothing on a session that already began or ended.
    public mutating func begin(at now: Duration, admission: SessionAdmission) -> [Effect] {
        switch state {
        case .notStarted:
            switch admission {
            case .granted(let limit):
                let deadline = now + limit
                state = .active(Active(deadline: deadline, generation: 0, present: [:]))
                return [.startPolling, .armTimeLimit(deadline: deadline), .didBecomeActive]
            case .anotherSessionActive, .thermallyThrottled:
                state = .invalidated(.readerSessionInvalidationErrorSystemIsBusy)
                return [.didInvalidate(.readerSessionInvalidationErrorSystemIsBusy, errorMessage: nil)]
            case .refused(let code):
                state = .invalidated(code)
                return [.didInvalidate(code, errorMessage: nil)]
            }
        case .active, .invalidated:
            return []
        }
    }

    /// Convenience for ``begin(at:admission:)``: busy when `anotherSessionActive`, else a
    /// session of `timeLimit` (60 s by default).
    public mutating func begin(
        at now: Duration, anotherSessionActive: Bool, timeLimit: Duration = .seconds(60)
    ) -> [Effect] {
        begin(at: now, admission: anotherSessionActive ? .anotherSessionActive : .granted(timeLimit: timeLimit))
    }

    /// The session timer fired at `now`. Ends an active session with 201 when its deadline
    /// has passed; a stale timer (deadline not reached) does nothing.
    public mutating func timeLimitReached(at now: Duration) -> [Effect] {
        switch state {
        case .active(let a) where now >= a.deadline:
            state = .invalidated(.readerSessionInvalidationErrorSessionTimeout)
            return [
                .stopPolling, .releaseReader,
                .didInvalidate(.readerSessionInvalidationErrorSessionTimeout, errorMessage: nil),
            ]
        case .active, .notStarted, .invalidated:
            return []
        }
    }

    /// The user tapped Done (Ctrl-C on the bench) → 200.
    public mutating func userCanceled() -> [Effect] {
        end(.readerSessionInvalidationErrorUserCanceled, errorMessage: nil)
    }

    /// The app called `invalidate()` (`errorMessage == nil`) or `invalidate(errorMessage:)`
    /// → 200, the message shown on the sheet. Nothing happens before `begin` or after the end.
    public mutating func invalidate(errorMessage: String? = nil) -> [Effect] {
        end(.readerSessionInvalidationErrorUserCanceled, errorMessage: errorMessage)
    }

    /// The app left the foreground (Ctrl-Z on the bench) → 202. The session is over.
    public mutating func backgrounded() -> [Effect] {
        end(.readerSessionInvalidationErrorSessionTerminatedUnexpectedly, errorMessage: nil)
    }

    /// The reader went away (unplugged, service stopped) → 202.
    public mutating func readerFailed() -> [Effect] {
        end(.readerSessionInvalidationErrorSessionTerminatedUnexpectedly, errorMessage: nil)
    }

    /// The app set `alertMessage`. Shown while the session is valid; before `begin` the
    /// runtime keeps it for the sheet; after the end it is ignored.
    public mutating func alertMessageChanged(_ message: String) -> [Effect] {
        switch state {
        case .active: [.showAlertMessage(message)]
        case .notStarted, .invalidated: []
        }
    }

    /// The backend reports targets in the field (one polling result, possibly several).
    /// Read-only mode reads each new one's NDEF; tag modes deliver the new ones together.
    public mutating func targetsDetected(_ targets: [DetectedTargetID]) -> [Effect] {
        guard case .active(var a) = state else { return [] }
        var fresh: [DetectedTargetID] = []
        for t in targets where a.present[t] == nil && !fresh.contains(t) { fresh.append(t) }
        guard !fresh.isEmpty else { return [] }
        if kind.deliversTags {
            for t in fresh { a.present[t] = .delivered }
            state = .active(a)
            return [.didDetectTags(fresh.map { TagHandle(target: $0, generation: a.generation) })]
        } else {
            for t in fresh { a.present[t] = .reading }
            state = .active(a)
            return fresh.map { .readNDEF($0) }
        }
    }

    /// The backend reports that a target left the field. Read-only mode simply polls on.
    public mutating func targetLost(_ target: DetectedTargetID) -> [Effect] {
        guard case .active(var a) = state else { return [] }
        a.present[target] = nil
        state = .active(a)
        return []
    }

    /// Read-only mode: the NDEF read asked by ``Effect/readNDEF(_:)`` ended.
    /// A well-formed non-empty message is delivered (then 204 when `invalidateAfterFirstRead`);
    /// anything else keeps the session polling.
    public mutating func ndefReadFinished(target: DetectedTargetID, outcome: NDEFReadOutcome) -> [Effect] {
        guard case .active(var a) = state, case .ndef(let once) = kind, a.present[target] == .reading else {
            return []
        }
        if case .message(let m) = outcome, m.isWellFormedNonEmpty {
            a.present[target] = .reported
            state = .active(a)
            var effects: [Effect] = [.didDetectNDEFs([m])]
            if once { effects += end(.readerSessionInvalidationErrorFirstNDEFTagRead, errorMessage: nil) }
            return effects
        }
        a.present[target] = .skipped
        state = .active(a)
        return []
    }

    /// The app called `restartPolling()`. Tag modes: a new generation (earlier tag objects
    /// become stale) and the backend discovers again. Read-only mode and an ended session:
    /// no effect.
    public mutating func restartPolling() -> [Effect] {
        guard case .active(var a) = state, kind.deliversTags else { return [] }
        a.generation &+= 1
        a.present = [:]
        state = .active(a)
        return [.restartPolling]
    }

    /// The app started operation `op` (connect, NDEF query/read/write, a command) on the
    /// tag object `handle`. Performed only when the handle is current and its target is
    /// still here: stale → 104, gone → 100, session over → 103.
    public mutating func tagOperationRequested(_ op: TagOperationID, on handle: TagHandle) -> [Effect] {
        switch state {
        case .notStarted:
            return [.failTagOperation(op, .readerTransceiveErrorTagNotConnected)]
        case .invalidated:
            return [.failTagOperation(op, .readerTransceiveErrorSessionInvalidated)]
        case .active(let a):
            guard kind.deliversTags else { return [.failTagOperation(op, .readerErrorUnsupportedFeature)] }
            guard handle.generation == a.generation else {
                return [.failTagOperation(op, .readerTransceiveErrorTagNotConnected)]
            }
            guard a.present[handle.target] != nil else {
                return [.failTagOperation(op, .readerTransceiveErrorTagConnectionLost)]
            }
            return [.performTagOperation(op, handle)]
        }
    }

    /// The operation asked by ``Effect/performTagOperation(_:_:)`` ended. A tag lost
    /// mid-operation (100) is forgotten, the session stays valid; an empty NDEF read → 403;
    /// an operation that outlived the session → 103, its generation → 104.
    public mutating func tagOperationFinished(
        _ op: TagOperationID, on handle: TagHandle, result: TagOperationResult
    ) -> [Effect] {
        switch state {
        case .notStarted:
            return [.failTagOperation(op, .readerTransceiveErrorTagNotConnected)]
        case .invalidated:
            return [.failTagOperation(op, .readerTransceiveErrorSessionInvalidated)]
        case .active(var a):
            guard handle.generation == a.generation else {
                return [.failTagOperation(op, .readerTransceiveErrorTagNotConnected)]
            }
            switch result {
            case .success:
                return [.completeTagOperation(op)]
            case .emptyNDEFMessage:
                return [.failTagOperation(op, .ndefReaderSessionErrorZeroLengthMessage)]
            case .failed(let code):
                if code == .readerTransceiveErrorTagConnectionLost {
                    a.present[handle.target] = nil
                    state = .active(a)
                }
                return [.failTagOperation(op, code)]
            }
        }
    }

    // MARK: Implementation

    private mutating func end(_ code: NFCReaderError.Code, errorMessage: String?) -> [Effect] {
        switch state {
        case .active:
            state = .invalidated(code)
            return [.cancelTimeLimit, .stopPolling, .releaseReader, .didInvalidate(code, errorMessage: errorMessage)]
        case .notStarted, .invalidated:
            return []
        }
    }
}
