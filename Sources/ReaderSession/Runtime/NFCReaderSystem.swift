import Synchronization

/// The environment sessions run against: the reader backend, the clock, the arbiter, the
/// thermal model, the NDEF procedures and the trace observer. The host (the bench CLI, a
/// test, a conformance harness) creates one and installs it with ``install(_:)``; app code
/// then calls the Core NFC initialisers unchanged. Tests pass a system to the sessions'
/// `system:` initialisers instead, so suites running in parallel do not share one.
///
/// The thermal model is one per system (one phone, one NFC subsystem).
public final class NFCReaderSystem: Sendable {
    public let backend: any ReaderBackend
    public let clock: any ReaderSessionClock
    public let arbiter: SessionArbiter
    public let procedures: any NDEFTagProcedures
    let observer: @Sendable (SessionTraceRecord) -> Void
    private let thermal: Mutex<ThermalModel>
    private let active = Mutex<[UInt64: ReaderSessionRuntime]>([:])
    private let counter = Atomic<UInt64>(0)

    /// - Parameters:
    ///   - backend: the reader.
    ///   - clock: real time by default; a ``ManualClock`` for virtual time.
    ///   - arbiter: ``SessionArbiter/shared`` by default (per reader, lock files).
    ///   - thermal: the thermal model with its documented defaults; ``ThermalModel/disabled`` to switch it off.
    ///   - procedures: how NDEF is read and written over a tag connection.
    ///   - observer: receives every trace record, on the session's queue or its I/O queue
    ///     (frames); must be quick and thread-safe.
    public init(
        backend: any ReaderBackend,
        clock: any ReaderSessionClock = ContinuousReaderClock(),
        arbiter: SessionArbiter = .shared,
        thermal: ThermalModel = ThermalModel(),
        procedures: any NDEFTagProcedures = NFCForumNDEFProcedures(),
        observer: @escaping @Sendable (SessionTraceRecord) -> Void = { _ in }
    ) {
        self.backend = backend
        self.clock = clock
        self.arbiter = arbiter
        self.thermal = Mutex(thermal)
        self.procedures = procedures
        self.observer = observer
    }

    private static let installed = Mutex<NFCReaderSystem?>(nil)

    /// The system sessions created without `system:` use; `nil` until a host installs one
    /// (then `readingAvailable` is false and `begin()` ends with 1 `readerErrorUnsupportedFeature`).
    public static var current: NFCReaderSystem? { installed.withLock { $0 } }

    /// Makes `system` the current one (`nil` removes it).
    public static func install(_ system: NFCReaderSystem?) { installed.withLock { $0 = system } }

    /// The thermal model's state now.
    public var thermalModel: ThermalModel { thermal.withLock { $0 } }

    /// Heat (field-seconds) now.
    public var heat: Double {
        let now = clock.now
        return thermal.withLock { $0.heat(at: now) }
    }

    /// Sessions currently active in this system.
    public var activeSessionCount: Int { active.withLock { $0.count } }

    /// The user tapped Done on the sheet (Ctrl-C on the bench): every active session ends with 200.
    public func userTappedDone() {
        for r in active.withLock({ Array($0.values) }) { r.userCanceled() }
    }

    /// The app left the foreground (Ctrl-Z on the bench): every active session ends with 202.
    public func appDidEnterBackground() {
        for r in active.withLock({ Array($0.values) }) { r.backgrounded() }
    }

    // MARK: Internal

    func nextSessionNumber() -> UInt64 { counter.add(1, ordering: .relaxed).newValue }

    func thermalBegin(at now: Duration) -> (ThermalModel.Decision, heat: Double) {
        thermal.withLock { t in
            let d = t.beginRequested(at: now)
            return (d, t.heat(at: now))
        }
    }

    func thermalFieldOn(at now: Duration) { thermal.withLock { $0.fieldOn(at: now) } }

    func thermalFieldOff(at now: Duration) -> (heat: Double, next: ThermalModel.Decision) {
        thermal.withLock { t in
            t.fieldOff(at: now)
            return (t.heat(at: now), t.decision(at: now))
        }
    }

    func register(_ r: ReaderSessionRuntime) { active.withLock { $0[r.number] = r } }
    func unregister(_ r: ReaderSessionRuntime) { _ = active.withLock { $0.removeValue(forKey: r.number) } }
}
