import Dispatch
import NFCTags
import Synchronization

/// A tag object delivered by the runtime: its handle and what activation told.
struct DeliveredTag: Sendable {
    let handle: TagHandle
    let target: DetectedTarget
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
final class ReaderSessionRuntime: @unchecked Sendable {
    let kind: ReaderSessionKind
    let number: UInt64
    let system: NFCReaderSystem
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
    private var targets: [DetectedTargetID: DetectedTarget] = [:]
    private var pending: [TagOperationID: PendingOperation] = [:]
    private var origin: Duration = .zero
    private var nextOperation: UInt64 = 0

    private struct PendingOperation {
        let run: @Sendable (TagConnection) throws -> Void
        let finish: @Sendable (NFCReaderError?) -> Void
        var detail: String?
    }

    init(kind: ReaderSessionKind, system: NFCReaderSystem) {
        self.kind = kind
        self.system = system
        self.number = system.nextSessionNumber()
        self.machine = ReaderSessionMachine(kind: kind)
        self.queue = DispatchQueue(label: "nfcbench.session.\(number)")
        self.io = DispatchQueue(label: "nfcbench.session.\(number).io")
    }

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
        queue.sync {
            noteCall(.begin)
            guard case .notStarted = machine.state else { return }
            let now = system.clock.now
            origin = now
            trace(.sessionBegan(kind: kind, reader: system.backend.identifier))
            let admission: SessionAdmission
            switch system.arbiter.acquire(reader: system.backend.identifier) {
            case .busy:
                admission = .anotherSessionActive
            case .failed(let why):
                admission = .refused(.readerErrorUnsupportedFeature)
                trace(.readerLockFailed(why))
            case .acquired(let l):
                let (decision, heat) = system.thermalBegin(at: now)
                switch decision {
                case .granted(let limit):
                    lease = l
                    admission = .granted(timeLimit: limit)
                    trace(.thermal(heat: heat, timeLimit: limit))
                case .refused:
                    l.release()
                    admission = .thermallyThrottled
                    trace(.thermal(heat: heat, timeLimit: nil))
                }
            }
            if case .granted = admission {
                system.thermalFieldOn(at: now)
                system.register(self)
                readyMirror.store(true, ordering: .releasing)
                if !alertMessage.isEmpty { trace(.alertMessage(alertMessage)) }
            }
            apply(machine.begin(at: now, admission: admission))
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
        queue.sync {
            noteCall(.invalidate(errorMessage: errorMessage))
            apply(machine.invalidate(errorMessage: errorMessage))
        }
    }
    func userCanceled() { queue.sync { apply(machine.userCanceled()) } }
    func backgrounded() { queue.sync { apply(machine.backgrounded()) } }
    func alertMessageChanged(_ m: String) {
        queue.sync {
            noteCall(.alertMessage(m))
            apply(machine.alertMessageChanged(m))
        }
    }

    /// Reports a tag-object call that failed before reaching the machine (not connected).
    func tagCallRefused(_ name: String, on handle: TagHandle) {
        queue.sync { noteCall(.tagOperation(name: name, handle)) }
    }

    /// Runs `work` on `queue` later, counted in the system's pending work.
    func deliverAsync(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        system.work.async(on: queue, work)
    }

    func restartPolling() {
        queue.sync {
            noteCall(.restartPolling)
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
        _ name: String, on handle: TagHandle,
        _ body: @escaping @Sendable (TagConnection, any NDEFTagProcedures) throws -> R,
        completion: @escaping @Sendable (Result<R, NFCReaderError>) -> Void
    ) {
        let box = Mutex<R?>(nil)
        let procedures = system.procedures
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
                })
            noteCall(.tagOperation(name: name, handle))
            trace(.tagOperation(op, name: name, handle))
            apply(machine.tagOperationRequested(op, on: handle))
        }
    }

    // MARK: Effects

    private func apply(_ effects: [ReaderSessionMachine.Effect]) {
        for effect in effects {
            switch effect {
            case .startPolling: startPolling()
            case .stopPolling:
                pollTask?.cancel()
                pollTask = nil
            case .restartPolling: system.backend.restartPolling()
            case .armTimeLimit(let deadline):
                timer = system.clock.schedule(at: deadline) { [weak self] in
                    guard let self else { return }
                    self.queue.sync { self.apply(self.machine.timeLimitReached(at: self.system.clock.now)) }
                }
            case .cancelTimeLimit:
                timer?.cancel()
                timer = nil
            case .releaseReader:
                lease?.release()
                lease = nil
                let (heat, next) = system.thermalFieldOff(at: system.clock.now)
                if case .granted(let l) = next {
                    trace(.thermal(heat: heat, timeLimit: l))
                } else {
                    trace(.thermal(heat: heat, timeLimit: nil))
                }
            case .readNDEF(let id): readNDEF(id)
            case .didBecomeActive:
                trace(.didBecomeActive)
                sink?(.didBecomeActive)
            case .didDetectNDEFs(let messages):
                trace(.didDetectNDEFs(messages))
                sink?(.didDetectNDEFs(messages))
            case .didDetectTags(let handles):
                trace(.didDetectTags(handles))
                let tags = handles.compactMap { h in targets[h.target].map { DeliveredTag(handle: h, target: $0) } }
                sink?(.didDetectTags(tags))
            case .showAlertMessage(let m): trace(.alertMessage(m))
            case .performTagOperation(let op, let handle): performOperation(op, handle)
            case .completeTagOperation(let op):
                trace(.tagOperationEnded(op, nil))
                pending.removeValue(forKey: op)?.finish(nil)
            case .failTagOperation(let op, let code):
                trace(.tagOperationEnded(op, code))
                if let p = pending.removeValue(forKey: op) { p.finish(NFCReaderError(code, detail: p.detail)) }
            case .didInvalidate(let code, let message):
                readyMirror.store(false, ordering: .releasing)
                trace(.didInvalidateWithError(code, errorMessage: message))
                system.unregister(self)
                sink?(.didInvalidate(NFCReaderError(code, detail: message)))
                sink = nil
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
        let stream = system.backend.events(options)
        pollTask = Task { [weak self] in
            do {
                for try await event in stream {
                    guard let self else { return }
                    self.system.work.async(on: self.queue) { self.backendEvent(event) }
                }
                if Task.isCancelled { return }
                self?.failFromBackend()
            } catch {
                if Task.isCancelled { return }
                self?.failFromBackend()
            }
        }
    }

    private func failFromBackend() { system.work.async(on: queue) { self.apply(self.machine.readerFailed()) } }

    private func backendEvent(_ event: ReaderBackendEvent) {
        guard machine.isReady else { return }
        switch event {
        case .detected(let found):
            for t in found { targets[t.id] = t }
            trace(.detected(found))
            apply(machine.targetsDetected(found.map(\.id)))
        case .lost(let id):
            trace(.lost(id))
            apply(machine.targetLost(id))
        }
    }

    private func readNDEF(_ id: DetectedTargetID) {
        let backend = system.backend
        let procedures = system.procedures
        let recorder = frameRecorder(id)
        system.work.async(on: io) { [self] in
            let outcome: NDEFReadOutcome
            do {
                outcome = try backend.withTag(id) { c in try procedures.readNDEF(Self.traced(c, recorder)) }
            } catch {
                outcome = .failed(Self.classify(error).code)
            }
            system.work.async(on: queue) { [self] in
                guard machine.isReady else { return }
                trace(.ndefRead(id, outcome))
                apply(machine.ndefReadFinished(target: id, outcome: outcome))
            }
        }
    }

    private func performOperation(_ op: TagOperationID, _ handle: TagHandle) {
        guard let p = pending[op] else { return }
        let backend = system.backend
        let recorder = frameRecorder(handle.target)
        system.work.async(on: io) { [self] in
            let result: TagOperationResult
            let detail: String?
            do {
                try backend.withTag(handle.target) { c in try p.run(Self.traced(c, recorder)) }
                (result, detail) = (.success, nil)
            } catch {
                let e = Self.classify(error)
                result = e.code == .ndefReaderSessionErrorZeroLengthMessage ? .emptyNDEFMessage : .failed(e.code)
                detail = e.detail
            }
            system.work.async(on: queue) { [self] in
                pending[op]?.detail = detail
                apply(machine.tagOperationFinished(op, on: handle, result: result))
            }
        }
    }

    // MARK: Trace

    /// Tells the system's call observer about an app call (on `queue`).
    private func noteCall(_ call: SessionCallRecord.Call) {
        let state: SessionCallRecord.State =
            switch machine.state {
            case .notStarted: .notStarted
            case .active(let a): .active(generation: a.generation)
            case .invalidated(let c): .invalidated(c)
            }
        system.callObserver(SessionCallRecord(session: number, call: call, state: state))
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
}

/// Records each command APDU and response APDU.
struct TracingAPDUTransport: APDUTransport {
    let base: any APDUTransport
    let record: @Sendable ([UInt8], [UInt8]?) -> Void
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
