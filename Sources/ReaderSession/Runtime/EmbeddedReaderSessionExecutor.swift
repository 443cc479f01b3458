public import Dispatch
import Foundation
import Synchronization

/// A ``ReaderSessionExecutor`` that runs nothing by itself: the runtime's hand-offs (delegate
/// calls, backend events, tag I/O completions) wait in one first-in, first-out list until the
/// caller runs them with ``run(limit:)``, and time moves only when the caller moves it with
/// ``advanceTime(by:)``. The shape of swift-nio's `EmbeddedEventLoop`: a test drives it and
/// asserts, and never polls "has it settled yet".
///
/// Give it to a system together with its clock:
///
/// ```swift
/// let loop = EmbeddedReaderSessionExecutor()
/// let system = NFCReaderSystem(backend: reader, clock: loop.clock, executor: loop)
/// session.begin()
/// loop.run()                          // didBecomeActive has been delivered
/// loop.advanceTime(by: .seconds(60))  // the time limit fired, and its 201 was delivered
/// ```
///
/// What it guarantees:
/// - **Order.** Jobs run in the order they were handed over, whatever queue each names; a job
///   handed over while ``run(limit:)`` runs runs in the same call, after the ones before it.
/// - **Queues.** Each job runs on its queue (`queue.sync` from the calling thread), so it is
///   serial with anything else on that queue and `dispatchPrecondition(.onQueue(q))` holds.
///   A job for `DispatchQueue.main` runs inline when ``run(limit:)`` is called on the main thread,
///   else with `DispatchQueue.main.sync` (the main thread must then run the main queue, as it
///   does under `swift test`).
/// - **Time.** ``advanceTime(by:)`` first runs the jobs waiting, then fires the clock's due
///   timers one at a time in deadline order (ties in arming order), each seeing `now` equal to
///   its deadline, and runs what each one set off before the next fires. No job ever runs on a
///   thread of its own, and nothing here waits in real time.
///
/// The system must read events pushed by its backend for the whole session to run here:
/// the runtime subscribes (``ReaderBackend/subscribe(_:_:)``) whenever a system has an
/// executor, and an in-memory device (``/NFCBase/NFCDeviceTraits/reportsFieldChanges``)
/// behind a `ReaderFrontend` pushes each field change on the thread that made it. A backend
/// that offers only the stream delivers its events from a task, which this executor does not
/// drive. For tests and virtual-time hosts; production systems keep `nil` (dispatch queues).
///
/// Call ``run(limit:)`` and ``advanceTime(by:)`` from one thread at a time, never from inside a job.
public final class EmbeddedReaderSessionExecutor: ReaderSessionExecutor {
    private struct Job {
        let queue: DispatchQueue
        let work: @Sendable () -> Void
    }

    /// The virtual clock this executor moves (give the same one to the system).
    public let clock: ManualClock
    private let jobs = Mutex<[Job]>([])
    private let running = Atomic<Bool>(false)
    private let total = Atomic<Int>(0)

    /// - Parameter clock: the system's virtual clock; a fresh ``/NFCBase/ManualClock`` (time zero) by default.
    public init(clock: ManualClock = ManualClock()) { self.clock = clock }

    /// Keeps `work` for ``run(limit:)``; returns at once. Any thread.
    public func async(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        jobs.withLock { $0.append(Job(queue: queue, work: work)) }
    }

    /// Jobs handed over and not yet run.
    public var pendingJobs: Int { jobs.withLock { $0.count } }

    /// True when no job waits (timers may still be armed: ``/NFCBase/ManualClock/pendingTimers``).
    public var isIdle: Bool { pendingJobs == 0 }

    /// Jobs run since this executor was made.
    public var jobsRun: Int { total.load(ordering: .relaxed) }

    /// Runs the jobs waiting now, in order, and those they hand over, until none is left.
    /// Returns how many ran. Time does not move.
    /// - Parameter limit: stops after this many jobs (a loop that takes no virtual time); the
    ///   rest stay waiting.
    @discardableResult
    public func run(limit: Int = .max) -> Int {
        var ran = 0
        while ran < limit {
            let n = runWaiting(limit: limit - ran)
            if n == 0 { break }
            ran += n
        }
        return ran
    }

    /// Runs only the jobs waiting when it is called (one round: what they hand over waits for
    /// the next call), at most `limit` of them; returns how many ran.
    @discardableResult
    public func runWaiting(limit: Int = .max) -> Int {
        let batch: [Job] = jobs.withLock { list in
            let n = min(limit, list.count)
            defer { list.removeFirst(n) }
            return Array(list.prefix(n))
        }
        guard !batch.isEmpty else { return 0 }
        precondition(
            !running.exchange(true, ordering: .acquiring),
            "EmbeddedReaderSessionExecutor.run() called from inside a job")
        defer { running.store(false, ordering: .releasing) }
        for job in batch {
            // On the main queue already (on Linux a worker thread may run it): `main.sync` would deadlock.
            if job.queue.label == DispatchQueue.main.label, HostWork.onMainQueue {
                job.work()
            } else {
                job.queue.sync(execute: job.work)
            }
        }
        total.add(batch.count, ordering: .relaxed)
        return batch.count
    }

    /// Moves virtual time forward by `delta` (negative counts as zero): runs the jobs waiting,
    /// then fires each timer due by the new time in deadline order, running what it set off
    /// before the next one fires; time ends at `now + delta`. Returns the jobs run.
    @discardableResult
    public func advanceTime(by delta: Duration) -> Int {
        advanceTime(to: clock.now + max(.zero, delta))
    }

    /// As ``advanceTime(by:)``, to the instant `deadline` on the clock (nothing moves back).
    @discardableResult
    public func advanceTime(to deadline: Duration) -> Int {
        var ran = run()
        while clock.fireNext(upTo: deadline) { ran += run() }
        return ran + run()
    }
}
