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
///   nothing; `didInvalidateWithError` comes exactly once and last (the runtime may repeat
///   the old ending on a re-`begin()`, ``ReaderSystemModel/InvalidatedBegin``).
///
/// Beyond those, with the choices of ``ReaderSystemModel``: a session may wait ``State/queued``
/// for the reader (busy policy `queue`) or sit ``State/dormant(deadline:)`` (begun in the
/// background, or a quick restart that never becomes active); one tag at a time is
/// connected (connecting to another ends the first's connection, documented), and a
/// connection older than the tag connection limit fails with 100 (reported); an
/// `NFCTagReaderSession` delivers an ISO-DEP target only after an ISO 7816 application was
/// selected on it (``Effect/selectApplication(_:)``).
public struct ReaderSessionMachine: Sendable, Hashable {
    /// The session's state; each case carries only what is valid in it.
    public enum State: Sendable, Hashable {
        /// Created, `begin()` not called yet.
        case notStarted
        /// Begun while another session held the reader, under the busy policy `queue`:
        /// waiting in the system's first-in, first-out queue; no callback yet.
        case queued
        /// Begun, but it never became active and gets no callback: begun in the background
        /// (`deadline` nil) or a quick restart that never becomes active (ended with 201 at
        /// `deadline`). `invalidate()` ends it with 200.
        case dormant(deadline: Duration?)
        /// Begun and polling until `deadline`.
        case active(Active)
        /// The app called `invalidate()` and the system is tearing the session down: polling
        /// has stopped and nothing is delivered, operations fail with 103, the sheet (and the
        /// reader) stay until `until`, when `didInvalidateWithError` brings `code`
        /// (``ReaderSystemModel/invalidationDelay``, reported).
        case closing(code: NFCReaderError.Code, errorMessage: String?, until: Duration)
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
        /// The connected tag object and when it was connected (Core NFC: one at a time).
        public var connected: Connection? = nil
    }

    /// A connected tag object.
    public struct Connection: Sendable, Hashable {
        public var handle: TagHandle
        public var since: Duration
    }

    /// Why a tag's connection ended while the session went on.
    public enum ConnectionEnd: String, Sendable, Hashable {
        /// The app connected to another tag (documented: `connect(to:)`).
        case anotherTagConnected
        /// `restartPolling()` (documented: `connect(to:)`).
        case restartPolling
        /// Older than the tag connection limit (reported: okadan/flutter-nfc-manager#35).
        case connectionLimit
        /// The tag left the field or stopped answering.
        case tagLost
    }

    /// What a tag operation needs from the connection.
    public enum OperationKind: Sendable, Hashable {
        /// `connect(to:)`: connects the tag, ending another tag's connection.
        case connect
        /// An operation on a connected tag (NDEF, commands): 104 unless this tag is connected.
        case needsConnection
        /// No connection rule (the caller checks it).
        case unchecked
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
        /// Tag session: an ISO 7816 application is being selected before delivery.
        case selecting
        /// Tag session: no application could be selected; in the field, never delivered.
        case notDelivered
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
        /// The session is closing: call ``closingEnded(at:)`` at `deadline`.
        case armClosing(deadline: Duration)
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
        /// Wait in the reader's queue (busy policy `queue`); `begin` comes when it is granted.
        case enqueue
        /// Leave the reader's queue.
        case leaveQueue
        /// Tag session: SELECT the app's ISO 7816 applications on this target in order, then
        /// call ``applicationSelected(target:aid:)``.
        case selectApplication(DetectedTargetID)
        /// A tag's connection ended while the session goes on (for the trace).
        case connectionEnded(TagHandle, ConnectionEnd)
        /// Delegate: `readerSession(_:didInvalidateWithError:)`; `errorMessage` is what
        /// `invalidate(errorMessage:)` shows on the sheet.
        case didInvalidate(NFCReaderError.Code, errorMessage: String?)
    }

    /// The kind of session (fixed at creation).
    public let kind: ReaderSessionKind
    /// An operation on a tag connected longer than this fails with 100 (`nil`: no limit).
    public let tagConnectionLimit: Duration?
    /// The current state.
    public private(set) var state: State = .notStarted

    public init(kind: ReaderSessionKind, tagConnectionLimit: Duration? = nil) {
        self.kind = kind
        self.tagConnectionLimit = tagConnectionLimit
    }

    /// The connected tag object, while the session is active.
    public var connected: TagHandle? {
        if case .active(let a) = state { a.connected?.handle } else { nil }
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
        case .notStarted, .queued:
            let leave: [Effect] = state == .queued ? [.leaveQueue] : []
            switch admission {
            case .queued:
                guard state == .notStarted else { return [] }
                state = .queued
                return [.enqueue]
            case .dormant(let limit):
                let deadline = limit.map { now + $0 }
                state = .dormant(deadline: deadline)
                return leave + (deadline.map { [.armTimeLimit(deadline: $0)] } ?? [])
            case .granted(let limit):
                let deadline = now + limit
                state = .active(Active(deadline: deadline, generation: 0, present: [:]))
                return leave + [.startPolling, .armTimeLimit(deadline: deadline), .didBecomeActive]
            case .anotherSessionActive, .thermallyThrottled:
                state = .invalidated(.readerSessionInvalidationErrorSystemIsBusy)
                return leave + [.didInvalidate(.readerSessionInvalidationErrorSystemIsBusy, errorMessage: nil)]
            case .refused(let code):
                state = .invalidated(code)
                return leave + [.didInvalidate(code, errorMessage: nil)]
            }
        case .dormant, .active, .closing, .invalidated:
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
        case .dormant(let deadline?) where now >= deadline:
            state = .invalidated(.readerSessionInvalidationErrorSessionTimeout)
            return [.releaseReader, .didInvalidate(.readerSessionInvalidationErrorSessionTimeout, errorMessage: nil)]
        case .active, .dormant, .queued, .notStarted, .closing, .invalidated:
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
        end(.readerSessionInvalidationErrorUserCanceled, errorMessage: errorMessage, alsoWaiting: true)
    }

    /// As ``invalidate(errorMessage:)``, with the system's turnover: an active session stops
    /// at once and is ``State/closing(code:errorMessage:until:)`` for `delay` from `now`,
    /// then ``closingEnded(at:)`` delivers the ending. A zero `delay`, or a session that is
    /// not active, ends as ``invalidate(errorMessage:)`` does.
    public mutating func invalidate(errorMessage: String?, delay: Duration, at now: Duration) -> [Effect] {
        guard delay > .zero, case .active = state else { return invalidate(errorMessage: errorMessage) }
        let until = now + delay
        state = .closing(code: .readerSessionInvalidationErrorUserCanceled, errorMessage: errorMessage, until: until)
        return [.cancelTimeLimit, .stopPolling, .armClosing(deadline: until)]
    }

    /// The closing timer fired at `now`: a closing session's ending is delivered (the reader
    /// is released, `didInvalidateWithError` with its code). A stale timer does nothing.
    public mutating func closingEnded(at now: Duration) -> [Effect] {
        guard case .closing(let code, let message, let until) = state, now >= until else { return [] }
        state = .invalidated(code)
        return [.releaseReader, .didInvalidate(code, errorMessage: message)]
    }

    /// The app left the foreground (Ctrl-Z on the bench) → 202. The session is over; a
    /// queued session and one that never became active end too. A session begun in the
    /// background (dormant without a deadline) stays as it is.
    public mutating func backgrounded() -> [Effect] {
        if case .dormant(nil) = state { return [] }
        return end(
            .readerSessionInvalidationErrorSessionTerminatedUnexpectedly, errorMessage: nil, alsoWaiting: true)
    }

    /// The system ended the session (a harness's scripted ending) → 202, whatever state it
    /// had begun into.
    public mutating func systemTerminated() -> [Effect] {
        end(.readerSessionInvalidationErrorSessionTerminatedUnexpectedly, errorMessage: nil, alsoWaiting: true)
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
        case .notStarted, .queued, .dormant, .closing, .invalidated: []
        }
    }

    /// The backend reports targets in the field (one polling result, possibly several).
    /// Read-only mode reads each new one's NDEF; tag modes deliver the new ones together.
    public mutating func targetsDetected(_ targets: [DetectedTargetID]) -> [Effect] {
        targetsDetected(targets, selecting: [])
    }

    /// As ``targetsDetected(_:)``; in tag modes the targets in `selecting` (ISO-DEP targets
    /// of an `NFCTagReaderSession` with ISO 7816 applications to select) are delivered only
    /// after ``applicationSelected(target:aid:)`` reports an application; the others are
    /// delivered together at once.
    public mutating func targetsDetected(_ targets: [DetectedTargetID], selecting: Set<DetectedTargetID>) -> [Effect] {
        guard case .active(var a) = state else { return [] }
        var fresh: [DetectedTargetID] = []
        for t in targets where a.present[t] == nil && !fresh.contains(t) { fresh.append(t) }
        guard !fresh.isEmpty else { return [] }
        if kind.deliversTags {
            let now = fresh.filter { !selecting.contains($0) }
            let later = fresh.filter { selecting.contains($0) }
            for t in now { a.present[t] = .delivered }
            for t in later { a.present[t] = .selecting }
            state = .active(a)
            var effects: [Effect] = []
            if !now.isEmpty {
                effects.append(.didDetectTags(now.map { TagHandle(target: $0, generation: a.generation) }))
            }
            return effects + later.map { .selectApplication($0) }
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
        var effects: [Effect] = []
        if let c = a.connected, c.handle.target == target {
            a.connected = nil
            effects.append(.connectionEnded(c.handle, .tagLost))
        }
        state = .active(a)
        return effects
    }

    /// Tag session: the selection asked by ``Effect/selectApplication(_:)`` ended: `aid` is
    /// the application selected (the tag is delivered), `nil` when none answered (it is
    /// not delivered and stays in the field; polling goes on).
    public mutating func applicationSelected(target: DetectedTargetID, aid: String?) -> [Effect] {
        guard case .active(var a) = state, a.present[target] == .selecting else { return [] }
        a.present[target] = aid == nil ? .notDelivered : .delivered
        state = .active(a)
        return aid == nil ? [] : [.didDetectTags([TagHandle(target: target, generation: a.generation)])]
    }

    /// Read-only mode: the NDEF read asked by ``Effect/readNDEF(_:)`` ended.
    /// A well-formed message is delivered (then 204 when `invalidateAfterFirstRead`), a
    /// message of one empty record (`D0 00 00`) too, as `readNDEF` returns it (reported:
    /// Exxili/capacitor-nfc#25, an NTAG215's readNDEF on iOS 26.3 gave one record with an
    /// empty type and payload; that `didDetectNDEFs` delivers the same message is assumed).
    /// An empty NDEF TLV (NLEN 0), a malformed message or a failed read keeps the session
    /// polling.
    public mutating func ndefReadFinished(target: DetectedTargetID, outcome: NDEFReadOutcome) -> [Effect] {
        guard case .active(var a) = state, case .ndef(let once) = kind, a.present[target] == .reading else {
            return []
        }
        if case .message(let m) = outcome, m.isWellFormed {
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
        let ended = a.connected.map { Effect.connectionEnded($0.handle, .restartPolling) }
        a.generation &+= 1
        a.present = [:]
        a.connected = nil
        state = .active(a)
        return (ended.map { [$0] } ?? []) + [.restartPolling]
    }

    /// The app started operation `op` (connect, NDEF query/read/write, a command) on the
    /// tag object `handle`. Performed only when the handle is current and its target is
    /// still here: stale → 104, gone → 100, session over → 103.
    public mutating func tagOperationRequested(_ op: TagOperationID, on handle: TagHandle) -> [Effect] {
        tagOperationRequested(op, on: handle, kind: .unchecked, at: .zero)
    }

    /// As ``tagOperationRequested(_:on:)``, with the connection rules: `.connect` ends another
    /// tag's connection (documented); `.needsConnection` fails with 104 unless `handle` is
    /// the connected tag, and with 100 when the connection is older than
    /// ``tagConnectionLimit`` at `now` (reported), which ends it.
    public mutating func tagOperationRequested(
        _ op: TagOperationID, on handle: TagHandle, kind opKind: OperationKind, at now: Duration
    ) -> [Effect] {
        switch state {
        case .notStarted, .queued, .dormant:
            return [.failTagOperation(op, .readerTransceiveErrorTagNotConnected)]
        case .invalidated, .closing:
            return [.failTagOperation(op, .readerTransceiveErrorSessionInvalidated)]
        case .active(var a):
            guard kind.deliversTags else { return [.failTagOperation(op, .readerErrorUnsupportedFeature)] }
            guard handle.generation == a.generation else {
                return [.failTagOperation(op, .readerTransceiveErrorTagNotConnected)]
            }
            guard a.present[handle.target] != nil else {
                return [.failTagOperation(op, .readerTransceiveErrorTagConnectionLost)]
            }
            switch opKind {
            case .unchecked:
                return [.performTagOperation(op, handle)]
            case .connect:
                var effects: [Effect] = []
                if let c = a.connected, c.handle != handle {
                    a.connected = nil
                    state = .active(a)
                    effects.append(.connectionEnded(c.handle, .anotherTagConnected))
                }
                return effects + [.performTagOperation(op, handle)]
            case .needsConnection:
                guard let c = a.connected, c.handle == handle else {
                    return [.failTagOperation(op, .readerTransceiveErrorTagNotConnected)]
                }
                if let limit = tagConnectionLimit, now - c.since >= limit {
                    a.connected = nil
                    a.present[handle.target] = nil
                    state = .active(a)
                    return [
                        .connectionEnded(handle, .connectionLimit),
                        .failTagOperation(op, .readerTransceiveErrorTagConnectionLost),
                    ]
                }
                return [.performTagOperation(op, handle)]
            }
        }
    }

    /// The operation asked by ``Effect/performTagOperation(_:_:)`` ended. A tag lost
    /// mid-operation (100) is forgotten, the session stays valid; an empty NDEF read → 403;
    /// an operation that outlived the session → 103, its generation → 104.
    public mutating func tagOperationFinished(
        _ op: TagOperationID, on handle: TagHandle, result: TagOperationResult
    ) -> [Effect] {
        tagOperationFinished(op, on: handle, result: result, kind: .unchecked, at: .zero)
    }

    /// As ``tagOperationFinished(_:on:result:)``; a successful `.connect` makes `handle` the
    /// connected tag from `now`.
    public mutating func tagOperationFinished(
        _ op: TagOperationID, on handle: TagHandle, result: TagOperationResult, kind opKind: OperationKind,
        at now: Duration
    ) -> [Effect] {
        switch state {
        case .notStarted, .queued, .dormant:
            return [.failTagOperation(op, .readerTransceiveErrorTagNotConnected)]
        case .invalidated, .closing:
            return [.failTagOperation(op, .readerTransceiveErrorSessionInvalidated)]
        case .active(var a):
            guard handle.generation == a.generation else {
                return [.failTagOperation(op, .readerTransceiveErrorTagNotConnected)]
            }
            switch result {
            case .success:
                if opKind == .connect, a.present[handle.target] != nil {
                    a.connected = Connection(handle: handle, since: now)
                    state = .active(a)
                }
                return [.completeTagOperation(op)]
            case .emptyNDEFMessage:
                return [.failTagOperation(op, .ndefReaderSessionErrorZeroLengthMessage)]
            case .failed(let code):
                var effects: [Effect] = []
                if code == .readerTransceiveErrorTagConnectionLost {
                    a.present[handle.target] = nil
                    if let c = a.connected, c.handle.target == handle.target {
                        a.connected = nil
                        effects.append(.connectionEnded(c.handle, .tagLost))
                    }
                    state = .active(a)
                }
                return effects + [.failTagOperation(op, code)]
            }
        }
    }

    // MARK: Implementation

    /// Ends an active session; with `alsoWaiting`, a queued or dormant one too.
    private mutating func end(_ code: NFCReaderError.Code, errorMessage: String?, alsoWaiting: Bool = false)
        -> [Effect]
    {
        switch state {
        case .active:
            state = .invalidated(code)
            return [.cancelTimeLimit, .stopPolling, .releaseReader, .didInvalidate(code, errorMessage: errorMessage)]
        case .queued where alsoWaiting:
            state = .invalidated(code)
            return [.leaveQueue, .didInvalidate(code, errorMessage: errorMessage)]
        case .dormant where alsoWaiting:
            state = .invalidated(code)
            return [.cancelTimeLimit, .releaseReader, .didInvalidate(code, errorMessage: errorMessage)]
        case .notStarted, .invalidated, .queued, .dormant, .closing:
            return []
        }
    }
}
