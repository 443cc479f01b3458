import Foundation
import Glibc
import Synchronization

/// Marks the work a host started on a thread (a delegate call the runtime delivers, a timer
/// a harness fires, a user action it injects), so an observer can tell an app's call made
/// from that work from a call made from somewhere the host never started: a real-time
/// timer (`DispatchQueue.asyncAfter`, `Task.sleep` on the continuous clock), the main
/// queue, a hop to a queue of the app's own. ``SessionCallRecord/fromHostWork`` carries it.
///
/// A per-thread counter (`pthread_key_t`); `queue.sync` runs on the caller's thread, so a
/// mark survives an app's hop onto its own serial queue with `sync`, not with `async`.
public enum HostWork {
    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k, nil)
        return k
    }()

    /// True inside ``run(_:)`` on this thread, or in the main queue's work while a host has
    /// claimed the main queue (``claimMainQueue(_:)``).
    public static var isActive: Bool {
        pthread_getspecific(key) != nil || (mainClaims.load(ordering: .relaxed) > 0 && onMainQueue)
    }

    /// Marks the main queue, so its blocks are known by their queue, not their thread: on Linux,
    /// once the main thread calls `dispatchMain()` (an `async` main, as `swift test` has) it
    /// exits and a worker thread runs the main queue, where `Thread.isMainThread` is false.
    private static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let k = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: k, value: true)
        return k
    }()

    /// True on the main thread or in a main-queue block (whichever thread runs it).
    static var onMainQueue: Bool { Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) == true }

    private static let mainClaims = Atomic<Int>(0)

    /// While `true`, work on the main queue counts as the host's: a harness that drives an
    /// app and waits for the main queue after every event it injects (so `DispatchQueue.main`
    /// blocks the app enqueued in answer run then, at the event's instant) claims it for its
    /// run. Claims nest; each `true` needs its `false`.
    public static func claimMainQueue(_ claim: Bool) {
        mainClaims.add(claim ? 1 : -1, ordering: .relaxed)
    }

    /// Runs `body` marked as the host's work on this thread.
    public static func run<T>(_ body: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(key)
        let depth = Int(bitPattern: previous) + 1
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: depth))
        defer { pthread_setspecific(key, previous) }
        return try body()
    }
}
