import Dispatch
import FoundationEssentials
import NFCBase
import NFCTags
public import ReaderSession
import Synchronization

/// Follows one backend's event stream and lets a bench command wait for the next
/// detection or loss, with a deadline; timestamps are taken when the event arrives.
public final class BackendWatcher: Sendable {
    public struct Stamped: Sendable {
        public var event: ReaderBackendEvent
        public var at: ContinuousClock.Instant
    }
    private let state = Mutex<(events: [Stamped], error: (any Error)?, finished: Bool)>(([], nil, false))
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// Where the stream is followed: a thread of its own, so an event's arrival time is taken
    /// when the reader reports it, not when a thread of the shared cooperative pool is free
    /// (a `Task {}` does not inherit its caller's executor preference; in a test process full of
    /// tests, the pool's queue held a poll's detection for 30 s).
    private let thread = JobThread(name: "nfcbench.watch")
    public let backend: any ReaderBackend

    /// Follows `backend`; `onEvent` sees each event as it arrives (the bench's trace).
    public init(_ backend: any ReaderBackend, onEvent: (@Sendable (ReaderBackendEvent) -> Void)? = nil) {
        self.backend = backend
        // Every family the bench reads, as an NDEF reader session polls (Core NFC's NDEF
        // sessions read Types 1-5): ISO 14443, FeliCa and ISO 15693.
        let stream = backend.events([.iso14443, .iso18092, .iso15693])
        let t = Task(executorPreference: thread) { [self] in
            do {
                for try await e in stream {
                    let at = ContinuousClock.now
                    onEvent?(e)
                    self.state.withLock { $0.events.append(Stamped(event: e, at: at)) }
                }
                self.state.withLock { $0.finished = true }
            } catch {
                self.state.withLock {
                    $0.error = error
                    $0.finished = true
                }
            }
        }
        task.withLock { $0 = t }
    }

    /// Stops following the stream: its task is cancelled and the thread ends once its queued
    /// jobs have run (what the cancelled task still does runs on the global executor).
    public func stop() {
        task.withLock { $0?.cancel() }
        thread.stop()
    }

    public var count: Int { state.withLock { $0.events.count } }

    /// Waits for the first event at index ≥ `from` that `match` accepts; throws the stream's
    /// error if it ended, `BenchError.unavailable` on timeout, `CancellationError` as soon as
    /// `interrupted` says so (a signal stopped the command).
    public func next<T>(
        from index: Int, timeout: Duration, what: String, interrupted: InterruptFlag? = nil,
        _ match: (ReaderBackendEvent) -> T?
    ) async throws
        -> (T, ContinuousClock.Instant, Int)
    {
        let deadline = ContinuousClock.now + timeout
        while true {
            if interrupted?.isSet == true { throw CancellationError() }
            let (events, error, finished) = state.withLock { ($0.events, $0.error, $0.finished) }
            for i in index..<max(index, events.count) {
                if let v = match(events[i].event) { return (v, events[i].at, i + 1) }
            }
            if let error { throw BenchError.unavailable("the reader failed: \(error)") }
            if finished { throw BenchError.failure("the reader stopped polling") }
            if ContinuousClock.now >= deadline { throw BenchError.unavailable("no \(what) within \(timeout)") }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    public static func detected(_ e: ReaderBackendEvent) -> DetectedTarget? {
        if case .detected(let t) = e { return t.first }
        return nil
    }

    public static func lost(_ e: ReaderBackendEvent) -> DetectedTargetID? {
        if case .lost(let id) = e { return id }
        return nil
    }
}

/// A flag one thread sets and another polls: a signal's handler stops a bench loop
/// (``BackendWatcher/next(from:timeout:what:interrupted:_:)``, the measurement loops) with it.
public final class InterruptFlag: Sendable {
    private let value = Atomic<Bool>(false)
    public init() {}
    /// Whether ``set()`` was called.
    public var isSet: Bool { value.load(ordering: .acquiring) }
    public func set() { value.store(true, ordering: .releasing) }
}
