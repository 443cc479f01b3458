import FoundationEssentials
public import NFCTags
public import ReaderSession
import Synchronization

/// The one reader frontend: discovery (``DiscoveryMachine``), classification, restart and
/// loss over any thin ``/NFCBase/NFCDevice``, as the session runtime's ``/ReaderSession/ReaderBackend``.
///
/// Two ways to drive a device, one machine (see README.md beside this file):
/// - **Hardware** (libnfc, PC/SC): the device gets one thread of its own, which opens it,
///   senses, checks presence every ``/NFCBase/NFCDeviceTraits/presenceInterval`` on the injected
///   clock, and runs every exchange (``withTag(_:_:)`` hands the body to that thread and
///   waits). Every C call of the device happens on that thread; only ``/NFCBase/NFCDevice/cancel()``
///   (`nfc_abort_command`, `SCardCancel`) comes from another. ``close()`` ends the thread
///   and closes the device before it returns, so nothing calls the C library at exit.
/// - **In-memory** devices (``/NFCBase/NFCDeviceTraits/reportsFieldChanges``: the simulator, the
///   conformance reader, tests' fakes): no thread; the device reports each field change,
///   the frontend senses at once on the reporting thread, and exchanges run on the caller's.
///
/// Polling streams: each ``events(_:)`` call opens one; the first opened starts discovery
/// (the device is opened then, after the session took the reader's lock, so a refused
/// session sends nothing), the last closed stops it and the field is forgotten. A stream
/// hands its events over one at a time and knows when one is still on its way
/// (``isIdle(ended:)``), which a virtual-time harness waits for.
public final class ReaderFrontend: ReaderBackend, Sendable {
    /// Tunables.
    public struct Configuration: Sendable {
        /// The longest a hardware device blocks in one ``/NFCBase/NFCDevice/sense(_:timeout:)`` (a
        /// cancellation lost in a race costs at most this). Default 500 ms.
        public var senseSlice: Duration = .milliseconds(500)
        /// Presence checks of hardware devices; `nil` = the device's own
        /// ``/NFCBase/NFCDeviceTraits/presenceInterval``.
        public var presenceInterval: Duration? = nil
        public init(senseSlice: Duration = .milliseconds(500), presenceInterval: Duration? = nil) {
            self.senseSlice = senseSlice
            self.presenceInterval = presenceInterval
        }
    }

    /// The reader's name (its lock name): the device's name.
    public let identifier: String
    public let configuration: Configuration
    private let clock: any ReaderSessionClock
    private let opener: @Sendable () throws(NFCDeviceError) -> any NFCDevice
    private let streamOwner: @Sendable () -> UInt64?
    private let state = Mutex(State())
    private let worker = Mutex<DeviceThread?>(nil)

    private struct Stream {
        var buffer: [ReaderBackendEvent] = []
        var waiter: CheckedContinuation<ReaderBackendEvent?, any Error>?
        /// A pushed stream's handler (``subscribe(_:_:)``): events go to it, never to the buffer.
        var push: (@Sendable (Result<ReaderBackendEvent?, any Error>) -> Void)?
        /// An event was handed to the consumer, which has not asked for the next one yet.
        var handed = false
        var owner: UInt64?
        var failure: NFCDeviceError?
        /// Sealed (``sealStream(_:)``): nothing published from now on reaches it, and it ends
        /// once what it holds is read.
        var sealed = false
    }

    private struct State {
        var machine = DiscoveryMachine()
        var device: (any NFCDevice)?
        var failure: NFCDeviceError?
        var streams: [UInt64: Stream] = [:]
        var nextStream: UInt64 = 1
        /// What the first polling stream asked for (empty until then: nothing senses before).
        var technologies: Set<NFCTechnology> = []
        var published: UInt64 = 0
        var restartPending = false
        var closed = false
    }

    /// A frontend over a device opened on first use (hardware: on its own thread).
    /// - Parameters:
    ///   - identifier: the device's name, e.g. `"pn532_uart:/dev/ttyUSB0"`.
    ///   - clock: paces presence checks (a ``/NFCBase/ManualClock`` in tests).
    ///   - configuration: the tunables (``Configuration``); the defaults suit hardware.
    ///   - streamOwner: names who opens a polling stream (the session whose `begin()` is
    ///     starting to poll), for ``isIdle(ended:)``.
    ///   - open: opens the device; its error ends every polling stream.
    public init(
        identifier: String, clock: any ReaderSessionClock = ContinuousReaderClock(),
        configuration: Configuration = Configuration(), streamOwner: @escaping @Sendable () -> UInt64? = { nil },
        open: @escaping @Sendable () throws(NFCDeviceError) -> any NFCDevice
    ) {
        self.identifier = identifier
        self.clock = clock
        self.configuration = configuration
        self.streamOwner = streamOwner
        self.opener = open
    }

    /// A frontend over a device that is already open (an in-memory device, or one a test opened).
    public convenience init(
        device: any NFCDevice, clock: any ReaderSessionClock = ContinuousReaderClock(),
        configuration: Configuration = Configuration(), streamOwner: @escaping @Sendable () -> UInt64? = { nil }
    ) {
        self.init(
            identifier: device.name, clock: clock, configuration: configuration, streamOwner: streamOwner,
            open: { device })
        state.withLock { $0.device = device }
        if device.traits.reportsFieldChanges {
            device.observeField { [weak self] in self?.resense() }
        }
    }

    deinit { close() }

    // MARK: Reading the state

    /// The device, once opened.
    public var device: (any NFCDevice)? { state.withLock { $0.device } }

    /// How often the tag's presence is checked while it is in the field: the configuration's
    /// ``Configuration/presenceInterval``, else the device's
    /// (``/NFCBase/NFCDeviceTraits/presenceInterval``: 250 ms for PC/SC, 100 ms for libnfc).
    /// `nil` while no device is open and none was configured.
    public var presenceInterval: Duration? { configuration.presenceInterval ?? device?.traits.presenceInterval }

    /// Targets in the field now (while polling), oldest first.
    public var targets: [DiscoveryMachine.Entry] { state.withLock { $0.machine.targets } }

    /// The current target behind `id` (nil when stale or gone).
    public func target(_ id: DetectedTargetID) -> DiscoveryMachine.Entry? { state.withLock { $0.machine.target(id) } }

    /// Events published so far (detections and losses).
    public var eventCount: UInt64 { state.withLock { $0.published } }

    /// True when no polling event is waiting for, or being taken by, a stream still in use
    /// (streams opened by sessions in `ended` no longer count).
    public func isIdle(ended: Set<UInt64> = []) -> Bool {
        state.withLock { s in
            s.streams.values.allSatisfy { st in
                (!st.handed && st.buffer.isEmpty) || st.owner.map { ended.contains($0) } == true
            }
        }
    }

    // MARK: ReaderBackend

    public func events(_ options: NFCPollingOption) -> AsyncThrowingStream<ReaderBackendEvent, any Error> {
        let id = openStream(options, push: nil)
        return AsyncThrowingStream(unfolding: { [weak self] in try await self?.next(id) })
    }

    /// In-memory devices push their events (``/ReaderSession/ReaderBackend/subscribe(_:_:)``): each one
    /// reaches `handler` on the thread that changed the field, so a session needs no task.
    /// Hardware devices offer the stream only (nil).
    public func subscribe(
        _ options: NFCPollingOption, _ handler: @escaping @Sendable (Result<ReaderBackendEvent?, any Error>) -> Void
    ) -> (any ReaderBackendSubscription)? {
        guard let device = state.withLock({ $0.device }), device.traits.reportsFieldChanges else { return nil }
        let id = openStream(options, push: handler)
        return PushedStream { [weak self] in self?.closeStream(id) }
    }

    /// Opens a polling stream (the first starts discovery); a later one starts with the
    /// targets in the field now. A pushed stream gets them at once.
    private func openStream(
        _ options: NFCPollingOption, push: (@Sendable (Result<ReaderBackendEvent?, any Error>) -> Void)?
    ) -> UInt64 {
        let owner = streamOwner()
        let wanted = Self.technologies(options)
        let (id, first, failure, device, initial) = state.withLock { s in
            let id = s.nextStream
            s.nextStream += 1
            var stream = Stream(owner: owner)
            stream.push = push
            stream.failure = s.failure
            let first = s.streams.isEmpty
            var initial: [ReaderBackendEvent] = []
            if first {
                s.technologies = wanted
                s.machine.pollingStarted()
            } else {
                let present = s.machine.targets.map(\.detectedTarget)
                if !present.isEmpty { initial.append(.detected(present)) }
            }
            if push == nil {
                stream.buffer = initial
                initial = []
            }
            s.streams[id] = stream
            return (id, first, s.failure, s.device, initial)
        }
        if let push {
            if let failure { push(.failure(FrontendError.device(failure))) }
            for e in initial { push(.success(e)) }
        }
        if first && failure == nil {
            if let device, device.traits.reportsFieldChanges {
                device.fieldOn()
                resense()
            } else {
                startThread()?.wake()
            }
        }
        return id
    }

    /// Opens a hardware device now, on its own thread, without polling yet: a bench command
    /// calls it once it holds the reader's lock, so the device's open (libnfc's `nfc_open`
    /// waits 50 ms in `uart_flush_input` for a PN532 on a UART) runs while the command makes
    /// its trace. An error opening reaches the first polling stream, as it would have at
    /// ``events(_:)``. In-memory devices are open already: nothing to do. Idempotent.
    public func open() {
        if let device = state.withLock({ $0.device }), device.traits.reportsFieldChanges { return }
        _ = startThread()
    }

    public func restartPolling() {
        let device = state.withLock { s in
            s.restartPending = true
            return s.device
        }
        if let device, device.traits.reportsFieldChanges {
            handleRestart(device)
        } else {
            worker.withLock { $0 }?.wake()
        }
    }

    /// Runs `body` with a connection to target `id`: on the device's thread for hardware
    /// (the caller waits; never call it from Swift's cooperative pool), on the caller's for
    /// in-memory devices.
    /// - Throws: `TagCommunicationError.tagLost` when `id` is stale or gone;
    ///   `.readerFailure` for a target this package does not read (MIFARE Classic, FeliCa…);
    ///   whatever `body` throws.
    public func withTag<R>(_ id: DetectedTargetID, _ body: (TagConnection) throws -> R) throws -> R {
        guard let device = state.withLock({ $0.device }) else { throw TagCommunicationError.tagLost }
        if device.traits.reportsFieldChanges { return try exchange(device, id, body) }
        guard let thread = worker.withLock({ $0 }) else { throw TagCommunicationError.tagLost }
        return try withoutActuallyEscaping(body) { body in
            let job = ExchangeJob { [self] in try self.exchange(device, id, body) }
            thread.run(job)
            return try job.result!.get()
        }
    }

    /// Stops polling and closes the device (on its own thread for hardware) before returning.
    /// Idempotent; later streams end at once.
    public func close() {
        let (streams, device) = state.withLock { s -> ([Receiver], (any NFCDevice)?) in
            guard !s.closed else { return ([], nil) }
            s.closed = true
            s.machine.pollingStopped()
            let receivers = s.streams.values.compactMap { st in
                st.push.map(Receiver.push) ?? st.waiter.map(Receiver.waiter)
            }
            s.streams = [:]
            return (receivers, s.device)
        }
        deliver(streams.map { ($0, .success(nil)) })
        if let thread = worker.withLock({ w in
            defer { w = nil }
            return w
        }) {
            thread.stopAndJoin()
        } else if let device, device.traits.reportsFieldChanges {
            device.observeField(nil)
            device.close()
        }
    }

    // MARK: Bench use

    /// Waits up to `timeout` for a target of any family the bench reads (polling ISO 14443,
    /// FeliCa and ISO 15693, as an NDEF reader session does), and returns it. The stream stays
    /// open, so the target stays current, until ``close()``.
    ///
    /// The timeout runs on the frontend's clock from the call: real time by default, virtual
    /// time on a ``/NFCBase/ManualClock`` (it fires when the clock is advanced to it, never
    /// before, and never in real time).
    public func firstTarget(timeout: Duration) async throws -> DetectedTarget {
        try await firstTarget(timeout: timeout, polling: [.iso14443, .iso18092, .iso15693])
    }

    /// As ``firstTarget(timeout:)``, polling `options` only.
    public func firstTarget(timeout: Duration, polling options: NFCPollingOption) async throws -> DetectedTarget {
        let id = openStream(options, push: nil)
        // Armed before the first suspension, so the deadline counts from the call. At the
        // deadline the stream is sealed on the clock's thread: what was published before it is
        // still read, nothing after it, so a virtual clock moved past both a detection and the
        // deadline in one step gives the answer of their order in time, not of task scheduling.
        let expiry = clock.schedule(at: clock.now + timeout) { [weak self] in self?.sealStream(id) }
        defer { expiry.cancel() }
        while let event = try await next(id) {
            if case .detected(let found) = event, let first = found.first { return first }
        }
        try Task.checkCancellation()
        throw FrontendError.noTarget(identifier, timeout)
    }

    // MARK: Machine actions

    private static func technologies(_ options: NFCPollingOption) -> Set<NFCTechnology> {
        var out: Set<NFCTechnology> = []
        if options.contains(.iso14443) || options.isEmpty { out.formUnion([.iso14443A, .iso14443B]) }
        if options.contains(.iso18092) { out.insert(.felica) }
        if options.contains(.iso15693) { out.insert(.iso15693) }
        return out
    }

    /// The targets of the technologies polled for: a reader that polls by its own settings
    /// (a PC/SC reader reports a FeliCa card whatever the session asked for) does not deliver
    /// a FeliCa card to an `.iso14443`-only session (Core NFC: the polling options decide).
    static func polled(_ field: [SensedTarget], _ technologies: Set<NFCTechnology>) -> [SensedTarget] {
        field.filter { technologies.contains($0.technology) }
    }

    /// In-memory devices: sense now and publish what changed.
    private func resense() {
        let waiters: [Delivery] = state.withLock { s in
            guard let device = s.device, s.machine.isPolling, s.failure == nil else { return [] }
            switch Result(catching: { () throws(NFCDeviceError) in try device.sense(s.technologies, timeout: .zero) }) {
            case .success(let field): return publish(s.machine.sensed(Self.polled(field, s.technologies)), in: &s)
            case .failure(let error): return fail(error, in: &s)
            }
        }
        deliver(waiters)
    }

    private func handleRestart(_ device: any NFCDevice) {
        let pending: [SensedTarget] = state.withLock { s in
            guard s.restartPending else { return [] }
            s.restartPending = false
            for case .reactivate(let targets) in s.machine.restartRequested() { return targets }
            return []
        }
        guard !pending.isEmpty else { return }
        var failed: Set<UInt64> = []
        for t in pending {
            do { try device.reactivate(t) } catch { failed.insert(t.presentation) }
        }
        let waiters = state.withLock { s in publish(s.machine.reactivated(pending, failed: failed), in: &s) }
        deliver(waiters)
    }

    private func exchange<R>(_ device: any NFCDevice, _ id: DetectedTargetID, _ body: (TagConnection) throws -> R)
        throws -> R
    {
        guard let entry = state.withLock({ $0.machine.target(id) }) else { throw TagCommunicationError.tagLost }
        guard let proto = entry.classification.family.tagProtocol else {
            throw TagCommunicationError.readerFailure(
                "\(identifier): \(entry.classification.family.rawValue) target (\(entry.classification.rule)) is not read here"
            )
        }
        let watch = TagLossWatch()
        defer {
            device.release(entry.sensed)
            let check = state.withLock { $0.machine.exchangeEnded(id, tagLost: watch.tagLost) }
            if check.contains(.checkPresence) {
                if device.traits.reportsFieldChanges { resense() } else { checkPresence(device) }
            }
        }
        let connection = try device.connect(entry.sensed, as: proto)
        switch connection {
        case .type2(let t): return try body(.type2(watch.type2(t)))
        case .iso7816(let t): return try body(.iso7816(watch.apdu(t)))
        case .felica(let t): return try body(.felica(watch.feliCa(t)))
        case .iso15693(let t): return try body(.iso15693(watch.iso15693(t)))
        }
    }

    /// Who gets an event: a waiting stream's continuation or a pushed stream's handler.
    private enum Receiver {
        case waiter(CheckedContinuation<ReaderBackendEvent?, any Error>)
        case push(@Sendable (Result<ReaderBackendEvent?, any Error>) -> Void)
    }

    private typealias Delivery = (Receiver, Result<ReaderBackendEvent?, any Error>)

    /// Buffers the reports of `actions` in every stream; returns the waiters to resume.
    private func publish(_ actions: [DiscoveryMachine.Action], in s: inout State) -> [Delivery] {
        var out: [Delivery] = []
        for case .report(let event) in actions {
            s.published += 1
            for id in s.streams.keys where s.streams[id]?.sealed == false {
                if let p = s.streams[id]?.push {
                    out.append((.push(p), .success(event)))
                } else if let w = s.streams[id]?.waiter {
                    s.streams[id]?.waiter = nil
                    s.streams[id]?.handed = true
                    out.append((.waiter(w), .success(event)))
                } else {
                    s.streams[id]?.buffer.append(event)
                }
            }
        }
        return out
    }

    /// The device failed: every stream ends with the error after its buffered events.
    private func fail(_ error: NFCDeviceError, in s: inout State) -> [Delivery] {
        s.failure = error
        var out: [Delivery] = []
        for id in s.streams.keys where s.streams[id]?.sealed == false {
            s.streams[id]?.failure = error
            if let p = s.streams[id]?.push {
                // Nothing after the error: the stream's later events stay in its buffer, unread.
                s.streams[id]?.push = nil
                out.append((.push(p), .failure(FrontendError.device(error))))
            } else if let w = s.streams[id]?.waiter {
                s.streams[id]?.waiter = nil
                out.append((.waiter(w), .failure(FrontendError.device(error))))
            }
        }
        return out
    }

    private func deliver(_ deliveries: [Delivery]) {
        for (receiver, r) in deliveries {
            switch receiver {
            case .waiter(let w): w.resume(with: r)
            case .push(let p): p(r)
            }
        }
    }

    private func next(_ id: UInt64) async throws -> ReaderBackendEvent? {
        if Task.isCancelled {
            closeStream(id)
            return nil
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (k: CheckedContinuation<ReaderBackendEvent?, any Error>) in
                let (now, ended) = state.withLock { s -> (Result<ReaderBackendEvent?, any Error>?, Bool) in
                    guard var st = s.streams[id] else { return (.success(nil), false) }
                    st.handed = false
                    if !st.buffer.isEmpty {
                        let e = st.buffer.removeFirst()
                        st.handed = true
                        s.streams[id] = st
                        return (.success(e), false)
                    }
                    if let f = st.failure {
                        s.streams[id] = nil
                        return (.failure(FrontendError.device(f)), false)
                    }
                    s.streams[id] = st
                    if st.sealed { return (.success(nil), true) }
                    s.streams[id]?.waiter = k
                    return (nil, false)
                }
                if ended { closeStream(id) }
                if let now { k.resume(with: now) }
            }
        } onCancel: {
            closeStream(id)
        }
    }

    /// Seals stream `id` (``firstTarget(timeout:polling:)``'s deadline): what was published
    /// to it before stays readable, nothing published later reaches it, and it closes once
    /// read to the end (at once when its reader is waiting for the next event).
    private func sealStream(_ id: UInt64) {
        let waiting = state.withLock { s -> Bool in
            guard s.streams[id] != nil else { return false }
            s.streams[id]?.sealed = true
            return s.streams[id]?.waiter != nil
        }
        if waiting { closeStream(id) }
    }

    private func closeStream(_ id: UInt64) {
        let (w, last) = state.withLock { s -> (CheckedContinuation<ReaderBackendEvent?, any Error>?, Bool) in
            guard let st = s.streams.removeValue(forKey: id) else { return (nil, false) }
            let last = s.streams.isEmpty
            if last { s.machine.pollingStopped() }
            return (st.waiter, last)
        }
        w?.resume(returning: nil)
        guard last else { return }
        if let device = state.withLock({ $0.device }), device.traits.reportsFieldChanges {
            device.fieldOff()
        } else {
            worker.withLock { $0 }?.wake()
        }
    }

    // MARK: The device thread (hardware)

    /// Starts the device's thread if it is not running.
    private func startThread() -> DeviceThread? {
        worker.withLock { w in
            if let w { return w }
            guard !state.withLock({ $0.closed }) else { return nil }
            let t = DeviceThread(name: "nfcbench.device \(identifier)", clock: clock)
            w = t
            t.start { [self] in threadMain(t) }
            return t
        }
    }

    private enum Step {
        case stop
        case idle
        case sense(Set<NFCTechnology>)
        case watch([SensedTarget])
    }

    private func nextStep(_ thread: DeviceThread) -> Step {
        if thread.isStopping { return .stop }
        return state.withLock { s in
            if s.closed { return .stop }
            guard s.machine.isPolling, s.failure == nil else { return .idle }
            let field = s.machine.targets.map(\.sensed)
            return field.isEmpty ? .sense(s.technologies) : .watch(field)
        }
    }

    private func threadMain(_ thread: DeviceThread) {
        let device: any NFCDevice
        do {
            device = try opener()
        } catch {
            deliver(state.withLock { s in fail(error, in: &s) })
            return
        }
        state.withLock { $0.device = device }
        thread.onWake = { device.cancel() }
        defer { device.close() }
        let interval = configuration.presenceInterval ?? device.traits.presenceInterval
        var fieldIsOn = false
        while true {
            thread.runJobs()
            if state.withLock({ $0.restartPending }) { handleRestart(device) }
            let step = nextStep(thread)
            switch step {
            case .stop, .idle:
                if fieldIsOn {
                    device.fieldOff()
                    fieldIsOn = false
                }
            case .sense, .watch:
                if !fieldIsOn {
                    device.fieldOn()
                    fieldIsOn = true
                }
            }
            switch step {
            case .stop:
                return
            case .idle:
                thread.wait(until: nil)
            case .sense(let technologies):
                let result = thread.blocking(
                    {
                        Result { () throws(NFCDeviceError) in
                            try device.sense(technologies, timeout: configuration.senseSlice)
                        }
                    }, orIfWoken: .success([]))
                thread.runJobs()
                let waiters: [Delivery] = state.withLock { s in
                    guard s.machine.isPolling else { return [] }
                    switch result {
                    case .success(let field):
                        return publish(s.machine.sensed(Self.polled(field, s.technologies)), in: &s)
                    case .failure(let e): return fail(e, in: &s)
                    }
                }
                deliver(waiters)
            case .watch:
                thread.wait(until: clock.now + interval)
                thread.runJobs()
                checkPresence(device)
            }
        }
    }

    /// Hardware: asks the device which targets are still present and publishes losses.
    private func checkPresence(_ device: any NFCDevice) {
        let field = state.withLock { $0.machine.isPolling ? $0.machine.targets.map(\.sensed) : [] }
        guard !field.isEmpty else { return }
        var present: [SensedTarget] = []
        var failure: NFCDeviceError?
        for t in field {
            do {
                if try device.isPresent(t) { present.append(t) }
            } catch {
                failure = error
            }
        }
        let waiters: [Delivery] = state.withLock { s in
            if let failure { return fail(failure, in: &s) }
            // Only targets this check looked at can be lost (polling may have restarted since).
            let looked = Set(field.map(\.presentation))
            let others = s.machine.targets.map(\.sensed).filter { !looked.contains($0.presentation) }
            return publish(s.machine.sensed(present + others), in: &s)
        }
        deliver(waiters)
    }
}

/// Why a frontend could not deliver.
public enum FrontendError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The device failed (unplugged, service stopped, could not be opened).
    case device(NFCDeviceError)
    /// No target came within the time given.
    case noTarget(String, Duration)

    public var description: String {
        switch self {
        case .device(let e): e.description
        case .noTarget(let name, let d):
            "no tag on \(name) within \(Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18) s"
        }
    }
}

/// One exchange handed to the device thread; the caller waits for ``result``.
///
/// The body is dropped as soon as it has run (``finish(_:)``), before the caller is
/// released: it wraps a closure the caller lent through `withoutActuallyEscaping`, which
/// must not outlive the call.
// unchecked: one thread runs finish(), then DeviceThread.run's semaphore lets the caller (its only reader) see `result`
final class ExchangeJob<R>: @unchecked Sendable {
    private var body: (() throws -> R)?
    private(set) var result: Result<R, any Error>?
    init(_ body: @escaping () throws -> R) { self.body = body }

    /// Runs the body (or fails with `error` instead), then forgets it.
    func finish(failing error: (any Error)? = nil) {
        if let error {
            result = .failure(error)
        } else if let body {
            result = Result { try body() }
        }
        body = nil
    }
}

/// A pushed stream's end (``ReaderFrontend/subscribe(_:_:)``).
private final class PushedStream: ReaderBackendSubscription {
    private let onCancel: Mutex<(@Sendable () -> Void)?>
    init(_ onCancel: @escaping @Sendable () -> Void) { self.onCancel = Mutex(onCancel) }
    func cancel() {
        let c = onCancel.withLock { c in
            defer { c = nil }
            return c
        }
        c?()
    }
}
