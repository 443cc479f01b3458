import Dispatch
import NFCTags
import Synchronization

/// A tag object delivered by the runtime: its handle, what activation told, and for a tag
/// session's ISO-DEP target the application selected on it (`NFCISO7816Tag.initialSelectedAID`;
/// `nil`: delivered as `NFCMiFareTag`).
struct DeliveredTag: Sendable {
    let handle: TagHandle
    let target: DetectedTarget
    var initialSelectedAID: String? = nil
    /// FeliCa: the system the session's Polling selected (2 bytes) and that system's IDm.
    var feliCaSystem: (code: [UInt8], idm: [UInt8])? = nil
}

/// What the runtime tells the API layer (which calls the delegate on its queue).
enum RuntimeEvent: Sendable {
    case didBecomeActive
    case didDetectNDEFs([NDEFMessageBytes])
    case didDetectTags([DeliveredTag])
    case didInvalidate(NFCReaderError)
}

/// Interprets one ``ReaderSessionMachine``: feeds it inputs and performs its effects.
///
/// Concurrency: all machine state is confined to the serial `queue`; app calls and timers
/// enter with `queue.sync` (so `begin()` has taken effect when it returns), backend events
/// and I/O completions with `queue.async`. Blocking transports run on the serial `io`
/// queue, never on the Swift concurrency pool. Events leave through `sink`, called on
/// `queue` in effect order.
// unchecked: its vars are confined to the serial `queue` (entered by queue.sync or system.work.async(on: queue))
final class ReaderSessionRuntime: @unchecked Sendable {
    let kind: ReaderSessionKind
    let number: UInt64
    let system: NFCReaderSystem
    /// The app this session belongs to (``NFCReaderSystem/asApp(_:_:)``): a `begin()` while
    /// a session of the same app is active kicks it out (``ReaderSystemModel/SameAppBegin``).
    let app: String
    /// The session's delegate queue is `DispatchQueue.main` (for the call observer).
    let delegateQueueIsMain: Bool
    private let queue: DispatchQueue
    private let io: DispatchQueue
    private let readyMirror = Atomic<Bool>(false)

    // Confined to `queue`.
    private var sink: (@Sendable (RuntimeEvent) -> Void)?
    private var keepAlive: AnyObject?
    private var machine: ReaderSessionMachine
    private var lease: ReaderLease?
    private var timer: ReaderSessionTimer?
    private var pollTask: Task<Void, Never>?
    /// Where `pollTask` follows the backend's stream: a thread of its own, as Core NFC's own
    /// delivery does not wait for the app's Swift concurrency pool (a `Task {}` there does not
    /// inherit its caller's executor preference, and a busy pool held detections back).
    private var pollThread: JobThread?
    private var subscription: (any ReaderBackendSubscription)?
    private var targets: [DetectedTargetID: DetectedTarget] = [:]
    private var pending: [TagOperationID: PendingOperation] = [:]
    private var origin: Duration = .zero
    private var nextOperation: UInt64 = 0
    private var ticket: ReaderQueueTicket?
    private var fieldIsOn = false
    /// The AIDs an `NFCTagReaderSession` SELECTs on ISO-DEP targets (empty: none; the tag is
    /// then an `NFCMiFareTag`); set by the API from its configuration.
    private var selectIdentifiers: [String] = []
    /// What each target's selection found (tag sessions).
    private var selectedAID: [DetectedTargetID: String] = [:]
    /// The FeliCa system codes an `NFCTagReaderSession` polls, in order (the Info.plist's
    /// valid ones narrowed by the session's configuration).
    private var feliCaSystemCodes: [String] = []
    /// What each FeliCa target's Polling selected: the system code and its IDm.
    private var selectedSystem: [DetectedTargetID: (code: [UInt8], idm: [UInt8])] = [:]

    private struct PendingOperation {
        let run: @Sendable (TagConnection) throws -> Void
        let finish: @Sendable (NFCReaderError?) -> Void
        let kind: ReaderSessionMachine.OperationKind
        var detail: String?
        /// The operation's own error, when it failed: given to the app as it is when the
        /// machine fails the operation with its code (it may carry userInfo, e.g. ISO 15693's
        /// NFCISO15693TagResponseErrorKey).
        var error: NFCReaderError?
    }

    init(kind: ReaderSessionKind, system: NFCReaderSystem, delegateQueueIsMain: Bool = false) {
        self.kind = kind
        self.system = system
        self.delegateQueueIsMain = delegateQueueIsMain
        self.number = system.nextSessionNumber()
        self.app = system.appForNewSessions
        self.machine = ReaderSessionMachine(kind: kind, tagConnectionLimit: system.model.tagConnectionLimit)
        self.queue = DispatchQueue(label: "nfcbench.session.\(number)")
        self.io = DispatchQueue(label: "nfcbench.session.\(number).io")
    }

    // The last reference is gone: nothing else can touch `pollThread`.
    deinit { pollThread?.stop() }

    /// Tag sessions: the ISO 7816 applications to SELECT on ISO-DEP targets from the next
    /// polling on (`NFCTagReaderSession.Configuration.iso7816SelectIdentifiers`, narrowed
    /// against the app's Info.plist list by the model).
    func configureSelection(_ sessionList: [String]) {
        let list = system.model.selectIdentifiers(narrowedTo: sessionList)
        queue.sync { selectIdentifiers = list }
    }

    /// Tag sessions: the FeliCa system codes to poll from the next polling on
    /// (`Configuration.feliCaSystemCodes`, narrowed against the Info.plist's list).
    func configureFeliCaSystemCodes(_ sessionList: [String]) {
        let list = system.model.feliCaSystemCodes(narrowedTo: sessionList)
        queue.sync { feliCaSystemCodes = list }
    }

    /// The system codes the session polls now (``configureFeliCaSystemCodes(_:)``).
    var polledFeliCaSystemCodes: [String] { queue.sync { feliCaSystemCodes } }

    /// The connected tag object's handle, while the session is active.
    var connectedHandle: TagHandle? { queue.sync { machine.connected } }

    /// Sets where events go and what to keep alive while the session is active.
    func attach(owner: AnyObject, sink: @escaping @Sendable (RuntimeEvent) -> Void) {
        queue.sync {
            self.keepAlive = owner
            self.sink = sink
        }
    }

    var isReady: Bool { readyMirror.load(ordering: .acquiring) }

    /// True while `handle` is current and its target is in the field.
    func isAvailable(_ handle: TagHandle) -> Bool {
        queue.sync {
            guard case .active(let a) = machine.state else { return false }
            return a.generation == handle.generation && a.present[handle.target] != nil
        }
    }

    // MARK: Inputs from the app, the user and the system

    func begin(alertMessage: String) {
        let fromHost = HostWork.isActive
        queue.sync {
            noteCall(.begin, fromHost: fromHost)
            switch machine.state {
            case .invalidated(let code):
                // Core NFC ignores it on paper; apps in the field get the old ending again (reported).
                guard system.model.invalidatedBegin == .endingRepeated else { return }
                trace(.endingRepeated(code))
                sink?(.didInvalidate(NFCReaderError(code, detail: "begin() on a session that already ended")))
                return
            case .notStarted:
                break
            case .queued, .dormant, .active, .closing:
                return
            }
            let now = system.clock.now
            origin = now
            trace(.sessionBegan(kind: kind, reader: system.backend.identifier))
            if !alertMessage.isEmpty { pendingAlert = alertMessage }
            let (appState, scripted) = system.beginConditions()
            if let scripted {
                trace(.systemEnded(scripted))
                return apply(machine.begin(at: now, admission: .refused(scripted)))
            }
            if case .tag(let options) = kind, options.contains(.iso14443) {
                let dropped = system.model.invalidSelectIdentifiers
                if !dropped.isEmpty { trace(.selectIdentifiersDropped(dropped)) }
            }
            if let (code, reason) = system.model.declarationRefusal(for: kind) {
                trace(.refusedByModel(code, reason: reason))
                return apply(machine.begin(at: now, admission: .refused(code)))
            }
            if appState == .background {
                switch system.model.backgroundBegin {
                case .ignored:
                    trace(.beginIgnored("the app is in the background: no sheet, no callback, no error"))
                    return apply(machine.begin(at: now, admission: .dormant(timeLimit: nil)))
                case .terminated:
                    return apply(
                        machine.begin(
                            at: now, admission: .refused(.readerSessionInvalidationErrorSessionTerminatedUnexpectedly)))
                case .starts:
                    break
                }
            }
            if system.model.sameAppBegin == .kickOut {
                for other in system.activeSessions(ofApp: app) where other !== self {
                    other.kickedOut(by: number)
                }
            }
            switch system.arbiter.acquire(reader: system.backend.identifier) {
            case .busy:
                if system.busyPolicy == .queue {
                    system.register(self)
                    trace(.queued)
                    return apply(machine.begin(at: now, admission: .queued))
                }
                apply(machine.begin(at: now, admission: .anotherSessionActive))
            case .failed(let why):
                trace(.readerLockFailed(why))
                apply(machine.begin(at: now, admission: .refused(.readerErrorUnsupportedFeature)))
            case .acquired(let l):
                admit(l, at: now, fromQueue: false)
            }
        }
    }

    private var pendingAlert: String?

    /// The reader is this session's (on `queue`): the quick-restart rule, then the thermal
    /// model, decide how it begins. A session granted from the queue meets no quick-restart
    /// window (the system hands the reader over itself; assumed).
    private func admit(_ l: ReaderLease, at now: Duration, fromQueue: Bool) {
        var penalty = 0.0
        if !fromQueue, let since = system.quickRestart(at: now) {
            let outcome = system.model.quickRestartOutcome
            trace(.quickRestart(sinceLastEnd: since, outcome: outcome))
            switch outcome {
            case .systemIsBusy:
                l.release()
                return apply(machine.begin(at: now, admission: .anotherSessionActive))
            case .neverActive:
                lease = l
                system.register(self)
                let limit: Duration? =
                    if case .granted(let t) = system.thermalModel.decision(at: now) { t } else { nil }
                return apply(
                    machine.begin(at: now, admission: .dormant(timeLimit: limit ?? system.model.quickRestartWindow)))
            case .shorterLimit:
                penalty = system.model.quickRestartPenalty
            }
        }
        let (decision, heat) = system.thermalBegin(at: now, penalty: penalty)
        let admission: SessionAdmission
        switch decision {
        case .granted(let limit):
            lease = l
            admission = .granted(timeLimit: limit)
            trace(.thermal(heat: heat, timeLimit: limit, enabled: system.thermalEnabled))
            system.thermalFieldOn(at: now)
            fieldIsOn = true
            system.register(self)
            readyMirror.store(true, ordering: .releasing)
            if let a = pendingAlert { trace(.alertMessage(a)) }
        case .refused:
            l.release()
            admission = .thermallyThrottled
            trace(.thermal(heat: heat, timeLimit: nil, enabled: system.thermalEnabled))
        }
        apply(machine.begin(at: now, admission: admission))
    }

    /// The arbiter handed the reader to this queued session (any thread).
    private func grantedFromQueue(_ l: ReaderLease) {
        system.work.async(on: queue) { [self] in
            guard case .queued = machine.state else { return l.release() }
            ticket = nil
            admit(l, at: system.clock.now, fromQueue: true)
        }
    }

    /// Begins a session refused before reaching the reader (no system installed).
    func refuse(_ code: NFCReaderError.Code) {
        queue.sync {
            origin = system.clock.now
            apply(machine.begin(at: origin, admission: .refused(code)))
        }
    }

    func invalidate(errorMessage: String?) {
        let fromHost = HostWork.isActive
        queue.sync {
            noteCall(.invalidate(errorMessage: errorMessage), fromHost: fromHost)
            let delay = system.model.invalidationDelay
            let effects = machine.invalidate(errorMessage: errorMessage, delay: delay, at: system.clock.now)
            if case .closing = machine.state { trace(.closing(delay: delay)) }
            apply(effects)
        }
    }

    /// A session of the same app began while this one was active: this one ends with 202
    /// (``ReaderSystemModel/SameAppBegin/kickOut``, reported).
    func kickedOut(by session: UInt64) {
        queue.sync {
            guard machine.isReady else { return }
            trace(.kickedOut(bySession: session))
            apply(machine.systemTerminated())
        }
    }
    func userCanceled() { queue.sync { apply(machine.userCanceled()) } }
    func backgrounded() { queue.sync { apply(machine.backgrounded()) } }
    func systemTerminated() {
        queue.sync {
            if machine.invalidationCode == nil, machine.state != .notStarted {
                if case .closing = machine.state { return }
                trace(.systemEnded(.readerSessionInvalidationErrorSessionTerminatedUnexpectedly))
            }
            apply(machine.systemTerminated())
        }
    }
    func alertMessageChanged(_ m: String) {
        let fromHost = HostWork.isActive
        queue.sync {
            noteCall(.alertMessage(m), fromHost: fromHost)
            if case .notStarted = machine.state { pendingAlert = m.isEmpty ? nil : m }
            apply(machine.alertMessageChanged(m))
        }
    }

    /// Runs `work` on `queue` later, counted in the system's pending work.
    func deliverAsync(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        system.work.async(on: queue, work)
    }

    func restartPolling(selecting sessionList: [String]? = nil) {
        let fromHost = HostWork.isActive
        queue.sync {
            noteCall(.restartPolling, fromHost: fromHost)
            if let sessionList, machine.isReady {
                selectIdentifiers = system.model.selectIdentifiers(narrowedTo: sessionList)
            }
            let effects = machine.restartPolling()
            if case .active(let a) = machine.state, !effects.isEmpty {
                trace(.restartPolling(generation: a.generation))
            }
            apply(effects)
        }
    }

    /// Runs `body` on the tag's connection on the I/O queue, if the machine allows it;
    /// `completion` is called on the session queue with the value or the Core NFC error.
    func perform<R: Sendable>(
        _ name: String, on handle: TagHandle, kind opKind: ReaderSessionMachine.OperationKind = .needsConnection,
        _ body: @escaping @Sendable (TagConnection, any NDEFTagProcedures) throws -> R,
        completion: @escaping @Sendable (Result<R, NFCReaderError>) -> Void
    ) {
        let box = Mutex<R?>(nil)
        let procedures = system.procedures
        let fromHost = HostWork.isActive
        queue.sync {
            nextOperation += 1
            let op = TagOperationID(nextOperation)
            pending[op] = PendingOperation(
                run: { c in
                    let v = try body(c, procedures)
                    box.withLock { $0 = v }
                },
                finish: { error in
                    if let error { return completion(.failure(error)) }
                    if let v = box.withLock({ $0.take() }) {
                        completion(.success(v))
                    } else {
                        completion(.failure(NFCReaderError(.readerTransceiveErrorTagResponseError)))
                    }
                }, kind: opKind)
            noteCall(.tagOperation(name: name, handle), fromHost: fromHost)
            trace(.tagOperation(op, name: name, handle))
            apply(machine.tagOperationRequested(op, on: handle, kind: opKind, at: system.clock.now))
        }
    }

    // MARK: Effects

    private func apply(_ effects: [ReaderSessionMachine.Effect]) {
        for effect in effects {
            switch effect {
            case .startPolling: startPolling()
            case .stopPolling:
                for t in probeTimers { t.cancel() }
                probeTimers = []
                pollTask?.cancel()
                pollTask = nil
                pollThread?.stop()
                pollThread = nil
                subscription?.cancel()
                subscription = nil
            case .restartPolling: system.backend.restartPolling()
            case .armTimeLimit(let deadline):
                timer = system.clock.schedule(at: deadline) { [weak self] in
                    guard let self else { return }
                    self.queue.sync { self.apply(self.machine.timeLimitReached(at: self.system.clock.now)) }
                }
            case .armClosing(let deadline):
                // Closing: no longer ready (Core NFC's isReady is false once invalidate() ran).
                readyMirror.store(false, ordering: .releasing)
                timer = system.clock.schedule(at: deadline) { [weak self] in
                    guard let self else { return }
                    self.queue.sync { self.apply(self.machine.closingEnded(at: self.system.clock.now)) }
                }
            case .cancelTimeLimit:
                timer?.cancel()
                timer = nil
            case .releaseReader:
                lease?.release()
                lease = nil
                if fieldIsOn {
                    fieldIsOn = false
                    let now = system.clock.now
                    system.sheetEnded(at: now)
                    let (heat, next) = system.thermalFieldOff(at: now)
                    let limit: Duration? = if case .granted(let l) = next { l } else { nil }
                    trace(.thermalAfter(heat: heat, nextTimeLimit: limit, enabled: system.thermalEnabled))
                }
            case .enqueue:
                let reader = system.backend.identifier
                ticket = system.arbiter.enqueue(reader: reader) { [weak self] lease in
                    guard let self else { return lease.release() }
                    self.grantedFromQueue(lease)
                }
            case .leaveQueue:
                ticket?.cancel()
                ticket = nil
            case .selectApplication(let id): selectApplication(id)
            case .connectionEnded(let handle, let why): trace(.connectionEnded(handle, why))
            case .readNDEF(let id): readNDEF(id)
            case .didBecomeActive:
                trace(.didBecomeActive)
                sink?(.didBecomeActive)
            case .didDetectNDEFs(let messages):
                trace(.didDetectNDEFs(messages))
                sink?(.didDetectNDEFs(messages))
            case .didDetectTags(let handles):
                trace(.didDetectTags(handles))
                let tags = handles.compactMap { h in
                    targets[h.target].map {
                        DeliveredTag(
                            handle: h, target: $0, initialSelectedAID: selectedAID[h.target],
                            feliCaSystem: selectedSystem[h.target])
                    }
                }
                sink?(.didDetectTags(tags))
            case .showAlertMessage(let m): trace(.alertMessage(m))
            case .performTagOperation(let op, let handle): performOperation(op, handle)
            case .completeTagOperation(let op):
                trace(.tagOperationEnded(op, nil))
                pending.removeValue(forKey: op)?.finish(nil)
            case .failTagOperation(let op, let code):
                trace(.tagOperationEnded(op, code))
                if let p = pending.removeValue(forKey: op) {
                    p.finish(p.error.flatMap { $0.code == code ? $0 : nil } ?? NFCReaderError(code, detail: p.detail))
                }
            case .didInvalidate(let code, let message):
                readyMirror.store(false, ordering: .releasing)
                trace(.didInvalidateWithError(code, errorMessage: message))
                system.unregister(self)
                sink?(.didInvalidate(NFCReaderError(code, detail: message)))
                // The sink stays (a re-begin may repeat the ending); the session is no longer kept alive.
                keepAlive = nil
            }
        }
    }

    private func startPolling() {
        let options: NFCPollingOption =
            switch kind {
            case .tag(let o): o
            case .ndef, .ndefReadWrite: [.iso14443, .iso15693, .iso18092]
            }
        // Under a virtual-time host's executor, a backend that pushes its events (an
        // in-memory device) needs no task: the host runs every hand-off on one thread, in
        // order. Elsewhere (hardware, the simulator in real time) events come through the
        // stream, whose buffer keeps their order whatever thread changed the field.
        let pushed =
            system.work.hasExecutor
            ? system.backend.subscribe(options) { [weak self] result in
                guard let self else { return }
                switch result {
                case .success(let event?): self.system.work.async(on: self.queue) { self.backendEvent(event) }
                case .success(nil): self.failFromBackend("the reader's event stream ended")
                case .failure(let error): self.failFromBackend("\(error)")
                }
            } : nil
        if let pushed {
            subscription = pushed
            return
        }
        let stream = system.backend.events(options)
        pollThread?.stop()  // a stream followed before (not ended by .stopPolling)
        let thread = JobThread(name: "nfcbench.poll")
        pollThread = thread
        pollTask = Task(executorPreference: thread) { [weak self] in
            do {
                for try await event in stream {
                    guard let self else { return }
                    self.system.work.async(on: self.queue) { self.backendEvent(event) }
                }
                if Task.isCancelled { return }
                self?.failFromBackend("the reader's event stream ended")
            } catch {
                if Task.isCancelled { return }
                self?.failFromBackend("\(error)")
            }
        }
    }

    /// The reader is gone: its error goes to the trace (what a person must fix), then the
    /// machine ends the session.
    private func failFromBackend(_ why: String) {
        system.work.async(on: queue) {
            if self.machine.isReady { self.trace(.readerFailed(why)) }
            self.apply(self.machine.readerFailed())
        }
    }

    private func backendEvent(_ event: ReaderBackendEvent) {
        guard machine.isReady else { return }
        switch event {
        case .detected(let found):
            for t in found { targets[t.id] = t }
            trace(.detected(found))
            guard system.model.hasUsageDescription else {
                return trace(
                    .detectionWithheld(found.map(\.id), reason: "the app's Info.plist has no NFCReaderUsageDescription")
                )
            }
            var selecting: Set<DetectedTargetID> =
                if case .tag = kind, !selectIdentifiers.isEmpty {
                    Set(found.filter { $0.kind == .type4 }.map(\.id))
                } else { [] }
            // FeliCa in a tag session: delivered only for a listed system (NFCFeliCaTag.h).
            if case .tag = kind { selecting.formUnion(found.filter { $0.kind == .felica }.map(\.id)) }
            // The iPhone's Type 2 discovery before a Type 2 tag is reported (Type2DiscoveryProbe).
            if system.model.type2Probe == .iphone { selecting.formUnion(found.filter { $0.kind == .type2 }.map(\.id)) }
            // Type 2 targets found together are probed together and reported together.
            probeBatch = []
            apply(machine.targetsDetected(found.map(\.id), selecting: selecting))
            if let batch = probeBatch, !batch.isEmpty { probeType2(batch) }
            probeBatch = nil
        case .lost(let id):
            trace(.lost(id))
            apply(machine.targetLost(id))
        }
    }

    private func readNDEF(_ id: DetectedTargetID) {
        let backend = system.backend
        let procedures = system.procedures
        let recorder = frameRecorder(id)
        let probing = system.model.type2Probe == .iphone && targets[id]?.kind == .type2
        let start = system.clock.now
        system.work.async(on: io) { [self] in
            let outcome: NDEFReadOutcome
            let probe = Mutex<Type2ProbeReport?>(nil)
            do {
                outcome = try backend.withTag(id) { c in
                    let traced = Self.traced(c, recorder)
                    if probing, case .type2(let t) = traced {
                        let report = Type2DiscoveryProbe.run(on: t)
                        probe.withLock { $0 = report }
                        // Unreadable on an iPhone: the message is never delivered.
                        if !report.delivers {
                            return .failed(
                                report.endedInSilence
                                    ? .readerTransceiveErrorTagConnectionLost : .readerTransceiveErrorTagResponseError)
                        }
                    }
                    return try procedures.readNDEF(traced)
                }
            } catch {
                outcome = .failed(Self.classify(error).code)
            }
            let report = probe.withLock { $0 }
            afterProbe(report.map { [(id, $0)] } ?? [], start + (report?.duration ?? .zero)) { [self] in
                trace(.ndefRead(id, outcome))
                apply(machine.ndefReadFinished(target: id, outcome: outcome))
            }
        }
    }

    /// Type 2 targets found together while ``probeType2(_:)``'s batch is collected.
    private var probeBatch: [DetectedTargetID]?
    /// The probes' delivery timers, disarmed when polling stops (the session's end).
    private var probeTimers: [ReaderSessionTimer] = []

    /// Runs the iPhone's Type 2 discovery probe on each of `ids` in turn, then, no sooner
    /// than the probes' modelled time after they began, reports together the tags that
    /// passed; one the probe found unreadable is never reported (Type2DiscoveryProbe).
    private func probeType2(_ ids: [DetectedTargetID]) {
        let backend = system.backend
        let recorders = ids.map { frameRecorder($0) }
        let start = system.clock.now
        system.work.async(on: io) { [self] in
            var reports: [(DetectedTargetID, Type2ProbeReport)] = []
            for (id, recorder) in zip(ids, recorders) {
                do {
                    reports.append(
                        (
                            id,
                            try backend.withTag(id) { c in
                                guard case .type2(let t) = Self.traced(c, recorder) else {
                                    return Type2ProbeReport(
                                        exchanges: [], outcome: .skipped("not a Type 2 connection"), duration: .zero)
                                }
                                return Type2DiscoveryProbe.run(on: t)
                            }
                        ))
                } catch {
                    reports.append((id, Type2ProbeReport(exchanges: [], outcome: .lost, duration: .zero)))
                }
            }
            let done = reports
            let total = done.reduce(Duration.zero) { $0 + $1.1.duration }
            afterProbe(done, start + total) { [self] in
                var effects: [ReaderSessionMachine.Effect] = []
                for (id, r) in done { effects += machine.applicationSelected(target: id, aid: r.delivers ? "" : nil) }
                let handles = effects.flatMap { e -> [TagHandle] in if case .didDetectTags(let h) = e { h } else { [] }
                }
                if !handles.isEmpty { apply([.didDetectTags(handles)]) }
                for (id, r) in done where r.outcome == .lost { apply(machine.targetLost(id)) }
            }
        }
    }

    /// On `queue`: at `due` (virtual time under the harness), or now when that is past,
    /// traces the probes' reports and runs `then`.
    private func afterProbe(
        _ reports: [(DetectedTargetID, Type2ProbeReport)], _ due: Duration, _ then: @escaping @Sendable () -> Void
    ) {
        system.work.async(on: queue) { [self] in
            guard machine.isReady else { return }
            let finish: @Sendable () -> Void = { [self] in
                guard machine.isReady else { return }
                for (id, report) in reports { trace(.type2Probe(id, report)) }
                then()
            }
            guard due > system.clock.now else { return finish() }
            probeTimers.append(system.clock.schedule(at: due) { [weak self] in self?.queue.sync { finish() } })
        }
    }

    /// SELECTs each of the session's ISO 7816 applications on `id`, in order, until one
    /// answers `90 00` or `61 XX` (ISO/IEC 7816-4 §5.6), then tells the machine which.
    private func selectApplication(_ id: DetectedTargetID) {
        if targets[id]?.kind == .felica { return selectSystem(id) }
        if targets[id]?.kind == .type2 {
            if probeBatch != nil { probeBatch?.append(id) } else { probeType2([id]) }
            return
        }
        let backend = system.backend
        let recorder = frameRecorder(id)
        let aids = selectIdentifiers
        system.work.async(on: io) { [self] in
            let found: (selected: String?, lost: Bool)
            do {
                let aid = try backend.withTag(id) { c -> String? in
                    guard case .iso7816(let t) = Self.traced(c, recorder) else { return nil }
                    return try Self.firstSelectable(aids, t)
                }
                found = (aid, false)
            } catch {
                found = (nil, Self.classify(error).code == .readerTransceiveErrorTagConnectionLost)
            }
            system.work.async(on: queue) { [self] in
                guard machine.isReady else { return }
                trace(.applicationSelection(id, tried: aids, selected: found.selected))
                if let selected = found.selected { selectedAID[id] = selected }
                apply(machine.applicationSelected(target: id, aid: found.selected))
                if found.lost { apply(machine.targetLost(id)) }
            }
        }
    }

    /// Polling (`06 00 SC SC 01 00`) with each of the session's FeliCa system codes in order
    /// on `id` until one answers, then tells the machine which (the tag is delivered with
    /// it as `currentSystemCode`, and the answer's IDm as `currentIDm`), or that none did.
    private func selectSystem(_ id: DetectedTargetID) {
        let backend = system.backend
        let recorder = frameRecorder(id)
        let codes = feliCaSystemCodes
        system.work.async(on: io) { [self] in
            var found: (code: [UInt8], idm: [UInt8])?
            var lost = false
            do {
                found = try backend.withTag(id) { c -> (code: [UInt8], idm: [UInt8])? in
                    guard case .felica(let t) = Self.traced(c, recorder) else { return nil }
                    return try Self.firstPolled(codes, t)
                }
            } catch {
                lost = Self.classify(error).code == .readerTransceiveErrorTagConnectionLost
            }
            let result = found
            let gone = lost
            system.work.async(on: queue) { [self] in
                guard machine.isReady else { return }
                trace(.systemCodeSelection(id, tried: codes, selected: result.map { $0.code.hexString() }))
                if let result { selectedSystem[id] = result }
                apply(machine.applicationSelected(target: id, aid: result.map { $0.code.hexString() }))
                if gone { apply(machine.targetLost(id)) }
            }
        }
    }

    /// Polling of each system code in order (Request Code 01, one time slot); the first
    /// whose answer is a Polling response gives the code and the answer's IDm. Silence is
    /// "not this system".
    static func firstPolled(_ codes: [String], _ t: any FeliCaTransport) throws -> (code: [UInt8], idm: [UInt8])? {
        for code in codes {
            guard let sc = [UInt8](hex: code), sc.count == 2 else { continue }
            let r: [UInt8]
            do { r = try t.exchange([0x06, 0x00, sc[0], sc[1], 0x01, 0x00]) } catch TagCommunicationError.noResponse {
                continue
            }
            if r.count >= 18, r[1] == 0x01 { return (sc, Array(r[2..<10])) }
        }
        return nil
    }

    /// SELECT by DF name (`00 A4 04 00 Lc AID 00`) of each AID in order; the first answered
    /// `90 00` or `61 XX`.
    static func firstSelectable(_ aids: [String], _ t: any APDUTransport) throws -> String? {
        for aid in aids {
            guard let bytes = [UInt8](hex: aid) else { continue }
            let command: [UInt8] = [0x00, 0xA4, 0x04, 0x00, UInt8(bytes.count)] + bytes + [0x00]
            let r = try t.transmit(command)
            guard r.count >= 2 else { continue }
            let sw1 = r[r.count - 2]
            let sw2 = r[r.count - 1]
            if (sw1 == 0x90 && sw2 == 0x00) || sw1 == 0x61 { return aid }
        }
        return nil
    }

    private func performOperation(_ op: TagOperationID, _ handle: TagHandle) {
        guard let p = pending[op] else { return }
        let backend = system.backend
        let recorder = frameRecorder(handle.target)
        system.work.async(on: io) { [self] in
            let result: TagOperationResult
            let detail: String?
            var failure: NFCReaderError? = nil
            do {
                try backend.withTag(handle.target) { c in try p.run(Self.traced(c, recorder)) }
                (result, detail) = (.success, nil)
            } catch {
                let e = Self.classify(error)
                result = e.code == .ndefReaderSessionErrorZeroLengthMessage ? .emptyNDEFMessage : .failed(e.code)
                detail = e.detail
                failure = e
            }
            let failed = failure
            system.work.async(on: queue) { [self] in
                pending[op]?.detail = detail
                pending[op]?.error = failed
                apply(
                    machine.tagOperationFinished(
                        op, on: handle, result: result, kind: p.kind, at: system.clock.now))
            }
        }
    }

    // MARK: Trace

    /// Tells the system's call observer about an app call (on `queue`); `fromHost`: the
    /// caller's thread was in ``HostWork`` when it called.
    private func noteCall(_ call: SessionCallRecord.Call, fromHost: Bool) {
        let state: SessionCallRecord.State =
            switch machine.state {
            case .notStarted: .notStarted
            case .queued, .dormant: .waiting
            case .active(let a): .active(generation: a.generation)
            case .closing(let c, _, _): .invalidated(c)
            case .invalidated(let c): .invalidated(c)
            }
        system.callObserver(
            SessionCallRecord(
                session: number, call: call, state: state, fromHostWork: fromHost,
                delegateQueueIsMain: delegateQueueIsMain))
    }

    private func trace(_ event: SessionTraceEvent) {
        system.observer(
            SessionTraceRecord(tMicroseconds: Self.micros(system.clock.now - origin), session: number, event: event))
    }

    private func frameRecorder(_ id: DetectedTargetID) -> @Sendable ([UInt8], [UInt8]?) -> Void {
        let clock = system.clock
        let origin = self.origin
        let number = self.number
        let observer = system.observer
        return { command, response in
            observer(
                SessionTraceRecord(
                    tMicroseconds: Self.micros(clock.now - origin), session: number,
                    event: .frame(id, command: command, response: response)))
        }
    }

    static func micros(_ d: Duration) -> Int64 {
        let c = d.components
        return c.seconds &* 1_000_000 &+ c.attoseconds / 1_000_000_000_000
    }

    static func classify(_ error: any Error) -> NFCReaderError {
        switch error {
        case let e as NFCReaderError: e
        case let e as TagCommunicationError: NFCReaderError(e)
        default: NFCReaderError(.readerTransceiveErrorTagResponseError, detail: "\(error)")
        }
    }

    static func traced(_ c: TagConnection, _ record: @escaping @Sendable ([UInt8], [UInt8]?) -> Void) -> TagConnection {
        c.traced(record)
    }
}

/// Records each Type 2 command as its frame (`30 pp`, `A2 pp d0..d3`, `60`) and answer.
struct TracingType2Transport: Type2TagTransport {
    let base: any Type2TagTransport
    let record: @Sendable ([UInt8], [UInt8]?) -> Void

    private func exchange<R>(_ frame: [UInt8], _ answer: (R) -> [UInt8]?, _ body: () throws -> R) throws -> R {
        do {
            let r = try body()
            record(frame, answer(r))
            return r
        } catch {
            record(frame, nil)
            throw error
        }
    }

    func read(page: UInt8) throws -> [UInt8] { try exchange([0x30, page], { $0 }) { try base.read(page: page) } }
    func write(page: UInt8, data: [UInt8]) throws {
        try exchange([0xA2, page] + data, { [0x0A] }) { try base.write(page: page, data: data) }
    }
    func getVersion() throws -> [UInt8]? { try exchange([0x60], { $0 }) { try base.getVersion() } }
    func reactivate() throws { try base.reactivate() }
    func fastRead(from first: UInt8, to last: UInt8) throws -> [UInt8] {
        try exchange([0x3A, first, last], { $0 }) { try base.fastRead(from: first, to: last) }
    }
    var fastReadPageLimit: Int { base.fastReadPageLimit }
    func transceive(_ frame: [UInt8]) throws -> Type2Answer {
        try exchange(
            frame,
            {
                switch $0 {
                case .data(let d): d
                case .ack: [0x0A]
                case .nak(let v): [v]
                case .silent: nil
                }
            }
        ) { try base.transceive(frame) }
    }
}

extension TracingType2Transport: ReaderAPDUCarrier {
    /// The base's reader APDUs, recorded like every frame; `.unsupportedCommand` when the base
    /// takes none.
    func transmitReaderAPDU(_ apdu: [UInt8]) throws -> [UInt8] {
        guard let carrier = base as? any ReaderAPDUCarrier else { throw TagCommunicationError.unsupportedCommand(apdu) }
        do {
            let r = try carrier.transmitReaderAPDU(apdu)
            record(apdu, r)
            return r
        } catch {
            record(apdu, nil)
            throw error
        }
    }
}

/// Records each command APDU and response APDU.
struct TracingAPDUTransport: APDUTransport {
    let base: any APDUTransport
    let record: @Sendable ([UInt8], [UInt8]?) -> Void
    var maximumResponseLength: Int { base.maximumResponseLength }
    func transmit(_ command: [UInt8]) throws -> [UInt8] {
        do {
            let r = try base.transmit(command)
            record(command, r)
            return r
        } catch {
            record(command, nil)
            throw error
        }
    }
}
