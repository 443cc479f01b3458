import Glibc

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

    /// True inside ``run(_:)`` on this thread.
    public static var isActive: Bool { pthread_getspecific(key) != nil }

    /// Runs `body` marked as the host's work on this thread.
    public static func run<T>(_ body: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(key)
        let depth = Int(bitPattern: previous) + 1
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: depth))
        defer { pthread_setspecific(key, previous) }
        return try body()
    }
}
