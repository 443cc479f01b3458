import Dispatch
import Synchronization

/// The environment sessions run against: the reader backend, the clock, the arbiter, the
/// thermal model, the NDEF procedures and the trace observer. The host (the bench CLI, a
/// test, a conformance harness) creates one and installs it with ``install(_:)``; app code
/// then calls the Core NFC initialisers unchanged. Tests pass a system to the sessions'
/// `system:` initialisers instead, so suites running in parallel do not share one.
///
/// The thermal model is one per system (one phone, one NFC subsystem); with an arbiter that has
/// cross-process locks its state is kept where they keep it (``SessionArbiter/thermalStore(for:)``:
/// the lock folder's heat file beside the reader's lock), so heat follows the lock scope across
/// processes. The choices Core NFC leaves open (busy
/// policy, quick restarts, the app in the background, connections, ISO 7816 selection) are
/// the ``model``.
public final class NFCReaderSystem: Sendable {
    /// The app's state as UIKit names it: `begin()` and sessions depend on it.
    public enum AppState: String, Sendable, Hashable {
        /// Foreground and active.
        case foreground
        /// Foreground, not active (a banner, Control Center, the NFC sheet itself): sessions
        /// go on and may begin (assumed).
        case inactive
        /// In the background: sessions end with 202 (documented), `begin()` follows
        /// ``ReaderSystemModel/backgroundBegin``.
        case background
    }

    public let backend: any ReaderBackend
    public let clock: any ReaderSessionClock
    public let arbiter: SessionArbiter
    public let procedures: any NDEFTagProcedures
    /// The model's choices (busy policy, quick restarts, background begin, limits).
    public let model: ReaderSystemModel
    let observer: @Sendable (SessionTraceRecord) -> Void
    let callObserver: @Sendable (SessionCallRecord) -> Void
    let work: PendingWork
    private let thermal: Mutex<ThermalModel>
    private let thermalStore: (any ThermalStateStore)?
    private let active = Mutex<[UInt64: ReaderSessionRuntime]>([:])
    private let counter = Atomic<UInt64>(0)
    private let appStateBox = Mutex(AppState.foreground)
    /// When the last session that had a sheet ended (the quick-restart window's start).
    private let lastSheetEnd = Mutex<Duration?>(nil)
    /// A scripted system ending waiting for the next `begin()`.
    private let refuseNextBegin = Mutex<NFCReaderError.Code?>(nil)
    private let busyPolicyBox: Mutex<ReaderSystemModel.BusyPolicy>
    private let appBox = Mutex("app")

    /// - Parameters:
    ///   - backend: the reader.
    ///   - clock: real time by default; a ``/NFCBase/ManualClock`` for virtual time.
    ///   - arbiter: ``SessionArbiter/shared`` by default (per reader, with the cross-process
    ///     locks the host installed: the lock folder's files under `nfcbench` and NFCBenchKit).
    ///   - thermal: the thermal model with its documented defaults; ``ThermalModel/disabled`` to switch it off.
    ///   - model: the choices Core NFC leaves open and the numbers Apple does not publish,
    ///     each with its source (``ReaderSystemModel``).
    ///   - procedures: how NDEF is read and written over a tag connection.
    ///   - observer: receives every trace record, on the session's queue or its I/O queue
    ///     (frames); must be quick and thread-safe.
    ///   - callObserver: receives every call the app makes on a session or tag object,
    ///     including the ones Core NFC ignores (`begin()` on a used session,
    ///     `restartPolling()` after the end), before the call takes effect; same rules as
    ///     `observer`. For conformance harnesses.
    ///   - executor: runs the asynchronous hand-offs (delegate calls, backend events, tag
    ///     I/O); `nil`: `queue.async` on each one's queue. A virtual-time host takes them
    ///     over to run them itself, in order, without a thread hop (``ReaderSessionExecutor``).
    public init(
        backend: any ReaderBackend,
        clock: any ReaderSessionClock = ContinuousReaderClock(),
        arbiter: SessionArbiter = .shared,
        thermal: ThermalModel = ThermalModel(),
        model: ReaderSystemModel = .default,
        procedures: any NDEFTagProcedures = NFCForumNDEFProcedures(),
        observer: @escaping @Sendable (SessionTraceRecord) -> Void = { _ in },
        callObserver: @escaping @Sendable (SessionCallRecord) -> Void = { _ in },
        executor: (any ReaderSessionExecutor)? = nil
    ) {
        self.work = PendingWork(executor: executor)
        self.backend = backend
        self.clock = clock
        self.arbiter = arbiter
        self.thermal = Mutex(thermal)
        self.model = model
        self.busyPolicyBox = Mutex(model.busyPolicy)
        self.thermalStore = thermal.parameters.enabled ? arbiter.thermalStore(for: backend.identifier) : nil
        self.procedures = procedures
        self.observer = observer
        self.callObserver = callObserver
    }

    /// Asynchronous hand-offs started and not yet finished: delegate calls queued on a
    /// session's queue, backend events on their way to the machine, tag I/O. A host driving
    /// a ``/NFCBase/ManualClock`` waits for 0 (with its backend idle) before moving time on, so what
    /// happens at one instant has happened before the next. Work the app starts on its own
    /// queues is not counted.
    public var pendingWork: Int { work.count }

    private static let installed = Mutex<NFCReaderSystem?>(nil)

    /// A host run's system in scope (`withCurrent(_:_:)`): task-local, and for
    /// synchronous work on a thread without a task, that thread's for the call.
    @TaskLocal private static var scoped: NFCReaderSystem?

    /// The system sessions created without `system:` use: the one in scope on this task or
    /// thread (`withCurrent(_:_:)`), else the one installed (``install(_:)``);
    /// `nil` when neither (then `readingAvailable` is false and `begin()` ends with 1
    /// `readerErrorUnsupportedFeature`).
    public static var current: NFCReaderSystem? { scoped ?? installed.withLock { $0 } }

    /// Makes `system` the current one process-wide (`nil` removes it); a system in scope
    /// (`withCurrent(_:_:)`) comes first where there is one.
    public static func install(_ system: NFCReaderSystem?) { installed.withLock { $0 = system } }

    /// Runs `body` with `system` as ``current`` for the code it runs synchronously and the
    /// tasks it starts with `Task {}` (a task-local value; `Task.detached`, another thread, a
    /// queue's `async` block do not see it), without changing what ``install(_:)`` installed:
    /// two hosts in one process (two conformance runs side by side) each see their own, and
    /// Core NFC's initialisers, which take no system, find it.
    public static func withCurrent<R>(_ system: NFCReaderSystem?, _ body: () throws -> R) rethrows -> R {
        try $scoped.withValue(system) { try body() }
    }

    /// The asynchronous form of `withCurrent(_:_:)`: `system` is current on this task
    /// across its suspensions, and in the tasks it starts with `Task {}`.
    public static func withCurrent<R>(
        _ system: NFCReaderSystem?, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> R
    ) async rethrows -> R {
        try await $scoped.withValue(system, operation: body, isolation: isolation)
    }

    /// The thermal model's state now (with the heat kept in the lock folder, when there is one).
    public var thermalModel: ThermalModel { withThermal(at: clock.now) { $0 } }

    /// Heat (field-seconds) now, including what earlier processes left in the lock folder.
    public var heat: Double {
        let now = clock.now
        return withThermal(at: now) { $0.heat(at: now) }
    }

    /// Every number and rule this system plays by, with its source: the trace header's
    /// model block (``ModelFact``, `traceHeaderBlock`).
    public var modelFacts: [ModelFact] {
        var m = model
        m.busyPolicy = busyPolicy
        return m.facts(thermal: thermal.withLock { $0.parameters })
    }

    /// What a `begin()` gets while another session is active now (the model's, unless
    /// changed with ``setBusyPolicy(_:)``).
    public var busyPolicy: ReaderSystemModel.BusyPolicy { busyPolicyBox.withLock { $0 } }

    /// Changes the busy policy for the `begin()` calls that follow (a harness's scripted change).
    public func setBusyPolicy(_ policy: ReaderSystemModel.BusyPolicy) { busyPolicyBox.withLock { $0 = policy } }

    /// The app the sessions created now belong to (``asApp(_:_:)``): `"app"` unless a host
    /// creates another app's sessions.
    public var appForNewSessions: String { appBox.withLock { $0 } }

    /// Runs `body` (which creates sessions) as the app named `app`: a host that plays
    /// another app (a conformance run's other app) creates its sessions inside. A `begin()`
    /// kicks out only the same app's active session (``ReaderSystemModel/SameAppBegin``);
    /// another app's session meets the busy policy.
    public func asApp<R>(_ app: String, _ body: () throws -> R) rethrows -> R {
        let old = appBox.withLock { a in
            defer { a = app }
            return a
        }
        defer { appBox.withLock { $0 = old } }
        return try body()
    }

    /// Sessions currently active (polling, with a sheet) in this system.
    public var activeSessionCount: Int { active.withLock { $0.values.filter(\.isReady).count } }

    /// True while any app's reader session is in progress: begun and not yet ended (active,
    /// queued, never active, or closing with its sheet up). Background tag reading waits for
    /// none (``BackgroundTagReading``).
    public var sessionInProgress: Bool { active.withLock { !$0.isEmpty } }

    /// The app's state now.
    public var appState: AppState { appStateBox.withLock { $0 } }

    /// The user tapped Done on the sheet (Ctrl-C on the bench): every active session ends with 200.
    public func userTappedDone() {
        for r in active.withLock({ Array($0.values) }) { r.userCanceled() }
    }

    /// The app left the foreground (Ctrl-Z on the bench): the app is in the background and
    /// every session ends with 202 (documented), a queued one too.
    public func appDidEnterBackground() {
        appStateBox.withLock { $0 = .background }
        for r in active.withLock({ Array($0.values) }) { r.backgrounded() }
    }

    /// UIKit `sceneWillResignActive`: in the foreground but not active; sessions go on.
    public func appWillResignActive() { appStateBox.withLock { $0 = .inactive } }

    /// UIKit `sceneDidBecomeActive`: in the foreground and active.
    public func appDidBecomeActive() { appStateBox.withLock { $0 = .foreground } }

    /// Sets the app's state (``appDidEnterBackground()`` ends sessions; this only records
    /// the state when it is not `.background`).
    public func setAppState(_ state: AppState) {
        if state == .background { return appDidEnterBackground() }
        appStateBox.withLock { $0 = state }
    }

    /// The system ends every session now with 202 `readerSessionInvalidationErrorSessionTerminatedUnexpectedly`,
    /// whatever the app does (a harness's scripted ending): active, queued and dormant ones.
    public func terminateSessions() {
        for r in active.withLock({ Array($0.values) }) { r.systemTerminated() }
    }

    /// The next `begin()` on this system ends at once with 202 (a harness's scripted ending
    /// at `begin()`, as apps meet it right after a cancel and a quick toggle).
    public func terminateNextBegin() {
        refuseNextBegin.withLock { $0 = .readerSessionInvalidationErrorSessionTerminatedUnexpectedly }
    }

    /// `fieldSeconds` of heat reach the thermal model now, as if the field had been on that
    /// long for work this system did not run (a harness's scripted `"system": "heat"`); the
    /// heat then cools as ``ThermalModel`` says. Nothing when the model is switched off.
    public func addHeat(_ fieldSeconds: Double) {
        let now = clock.now
        withThermal(at: now) { $0.addHeat(fieldSeconds, at: now) }
    }

    // MARK: Internal

    func nextSessionNumber() -> UInt64 { counter.add(1, ordering: .relaxed).newValue }

    var thermalEnabled: Bool { thermal.withLock { $0.parameters.enabled } }

    func thermalBegin(at now: Duration, penalty: Double) -> (ThermalModel.Decision, heat: Double) {
        withThermal(at: now) { t in
            let d = t.beginRequested(at: now, penalty: penalty)
            return (d, t.heat(at: now))
        }
    }

    func thermalFieldOn(at now: Duration) { withThermal(at: now) { $0.fieldOn(at: now) } }

    func thermalFieldOff(at now: Duration) -> (heat: Double, next: ThermalModel.Decision) {
        withThermal(at: now) { t in
            t.fieldOff(at: now)
            return (t.heat(at: now), t.decision(at: now))
        }
    }

    /// Runs `body` on the thermal model, first taking up what the thermal store holds (the lock
    /// folder's heat file, written by this or an earlier process) and writing the result back.
    private func withThermal<R: Sendable>(at now: Duration, _ body: (inout ThermalModel) -> R) -> R {
        guard let thermalStore else { return thermal.withLock { t -> R in body(&t) } }
        // The store's lock is taken first, then the model's: the order is always the same.
        return thermalStore.update { saved -> R in
            thermal.withLock { t -> R in
                let bootNow = thermalStore.bootNanoseconds()
                if let s = saved, !t.isOn {
                    // A saved "on" with the field off here belongs to a process that ended
                    // mid-session (whoever calls this holds the reader's lock): off since then.
                    let age: Duration =
                        s.bootNanoseconds > bootNow
                        ? .seconds(86_400) : .nanoseconds(Int64(bootNow - s.bootNanoseconds))
                    t.restore(heat: s.heat, fieldOn: false, age: age, now: now)
                }
                let r = body(&t)
                let snap = t.snapshot(at: now)
                saved = SavedThermalState(heat: snap.heat, fieldOn: snap.fieldOn, bootNanoseconds: bootNow)
                return r
            }
        }
    }

    /// The app state and a scripted ending, as `begin()` meets them.
    func beginConditions() -> (state: AppState, scriptedEnding: NFCReaderError.Code?) {
        let ending = refuseNextBegin.withLock { r in
            defer { r = nil }
            return r
        }
        return (appState, ending)
    }

    /// How long ago the last session with a sheet ended, when within the quick-restart window.
    func quickRestart(at now: Duration) -> Duration? {
        guard model.quickRestartWindow > .zero, let end = lastSheetEnd.withLock({ $0 }) else { return nil }
        let since = now - end
        return since >= .zero && since < model.quickRestartWindow ? since : nil
    }

    /// A session that had a sheet ended at `now`.
    func sheetEnded(at now: Duration) { lastSheetEnd.withLock { $0 = now } }

    /// Registers a session that has begun (active, queued or dormant) for system-wide events.
    func register(_ r: ReaderSessionRuntime) { active.withLock { $0[r.number] = r } }
    /// The active sessions (with a sheet) of `app`, oldest first.
    func activeSessions(ofApp app: String) -> [ReaderSessionRuntime] {
        active.withLock { Array($0.values) }.filter { $0.app == app && $0.isReady }.sorted { $0.number < $1.number }
    }
    func unregister(_ r: ReaderSessionRuntime) { _ = active.withLock { $0.removeValue(forKey: r.number) } }
}

/// Counts asynchronous hand-offs (see ``NFCReaderSystem/pendingWork``).
final class PendingWork: Sendable {
    private let counter = Atomic<Int>(0)
    private let executor: (any ReaderSessionExecutor)?
    var count: Int { counter.load(ordering: .acquiring) }

    init(executor: (any ReaderSessionExecutor)? = nil) { self.executor = executor }

    /// True when a host's executor runs the hand-offs (a virtual-time host, one thread).
    var hasExecutor: Bool { executor != nil }

    /// Runs `work` on `queue` asynchronously (through the executor), counted from now until
    /// it has returned, and marked as the host's work (``HostWork``).
    func async(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        counter.add(1, ordering: .acquiringAndReleasing)
        let job: @Sendable () -> Void = {
            HostWork.run { work() }
            self.counter.subtract(1, ordering: .acquiringAndReleasing)
        }
        if let executor { executor.async(on: queue, job) } else { queue.async(execute: job) }
    }
}
