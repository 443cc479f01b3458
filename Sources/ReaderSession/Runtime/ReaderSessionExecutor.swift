public import Dispatch

/// Where a system's asynchronous hand-offs run: delegate calls on the delegate's queue,
/// backend events and completions on a session's queue, tag I/O on its I/O queue. Each
/// `work` must run on `queue` (serially with the queue's other work), after the call
/// returns and in the order handed over for one queue. The default is `queue.async(work)`.
/// A virtual-time host (ReaderSessionConformance's harness) keeps them in one first-in,
/// first-out list and runs them itself with `queue.sync(work)` on its own thread, so a
/// scenario runs without a thread hop and in one order. ``EmbeddedReaderSessionExecutor`` is
/// that for tests: it runs the hand-offs when the test says (`run()`, `advanceTime(by:)`).
public protocol ReaderSessionExecutor: Sendable {
    func async(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void)
}
