import Foundation

/// Blocking work (a process, a socket, a C call that waits, a semaphore) on a thread of its
/// own, awaited from async code.
///
/// On Linux, Swift's global executor and `DispatchQueue.global()` are one pool: libdispatch's
/// root queue, with as many workers as the machine has CPUs (2 on the bench's CI machine).
/// When every worker is blocked, libdispatch's workqueue monitor adds at most one worker a
/// second, and each new one can be taken by the next blocking job, so every task in the
/// process waits. A test run measured it: pipe readers queued with `DispatchQueue.global().async`
/// beside a test that blocked in `open(2)` of a FIFO held the pool for about 30 s, and a virtual
/// card whose app runs as a task answered vpcd's ATR request 30 s late. So neither a task nor a
/// `DispatchQueue.global()` block may wait: the wait goes here, or on a thread the caller owns.
public enum OffPool {
    /// Runs `body` on a new thread and returns what it returns (or throws what it throws).
    /// `name` names the thread (seen in a debugger's thread list).
    public static func run<T: Sendable>(
        name: String = "nfcbench.blocking", _ body: @escaping @Sendable () throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.name = name
            thread.start()
        }
    }

    /// ``run(name:_:)`` for work that cannot throw.
    public static func run<T: Sendable>(name: String = "nfcbench.blocking", _ body: @escaping @Sendable () -> T)
        async -> T
    {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = name
            thread.start()
        }
    }

    /// Starts `body` on a new thread and returns at once (a blocking loop that must not hold a
    /// worker of the shared pool: a pipe reader, a waiter on a semaphore).
    public static func detach(name: String = "nfcbench.blocking", _ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.name = name
        thread.start()
    }
}
