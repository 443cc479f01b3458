import Dispatch
import Synchronization

/// Where the runtime reads time and arms timers. `now` is a monotonic `Duration` since the
/// clock's own origin (not wall time).
public protocol ReaderSessionClock: AnyObject, Sendable {
    /// Monotonic time since this clock's origin.
    var now: Duration { get }
    /// Runs `action` once, at or after `deadline` (same time base as ``now``), unless the
    /// returned timer is cancelled first. The action runs on no particular thread.
    func schedule(at deadline: Duration, _ action: @escaping @Sendable () -> Void) -> ReaderSessionTimer
}

/// A timer armed on a ``ReaderSessionClock``; `cancel()` is idempotent.
public final class ReaderSessionTimer: Sendable {
    private let onCancel: Mutex<(@Sendable () -> Void)?>
    public init(onCancel: @escaping @Sendable () -> Void) { self.onCancel = Mutex(onCancel) }
    /// Disarms the timer; its action will not run (if it has not started yet).
    public func cancel() {
        let c = onCancel.withLock { c in
            defer { c = nil }
            return c
        }
        c?()
    }
}

/// The real clock: Swift's `ContinuousClock` (CLOCK_BOOTTIME on Linux, so it counts
/// suspended time), timers on a Dispatch queue.
public final class ContinuousReaderClock: ReaderSessionClock {
    private let origin = ContinuousClock.now
    private let queue = DispatchQueue(label: "nfcbench.reader-clock")
    public init() {}
    public var now: Duration { ContinuousClock.now - origin }

    public func schedule(at deadline: Duration, _ action: @escaping @Sendable () -> Void) -> ReaderSessionTimer {
        let cancelled = Atomic<Bool>(false)
        let flag = Box(cancelled: cancelled)
        let delay = max(.zero, deadline - now)
        let c = delay.components
        let ns = c.seconds * 1_000_000_000 + c.attoseconds / 1_000_000_000
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: ns))) {
            if !flag.cancelled.load(ordering: .acquiring) { action() }
        }
        return ReaderSessionTimer { flag.cancelled.store(true, ordering: .releasing) }
    }
}

private final class Box: Sendable {
    let cancelled: Atomic<Bool>
    init(cancelled: consuming Atomic<Bool>) { self.cancelled = cancelled }
}

/// A clock for tests and simulations: time starts at zero and moves only on
/// ``advance(by:)``, which runs the due timers in deadline order (ties in arming order)
/// on the caller's thread, each seeing `now` equal to its deadline.
public final class ManualClock: ReaderSessionClock {
    private struct Entry {
        let deadline: Duration
        let seq: UInt64
        let action: @Sendable () -> Void
    }
    private struct State {
        var now: Duration = .zero
        var seq: UInt64 = 0
        var entries: [UInt64: Entry] = [:]
    }
    private let state = Mutex(State())

    public init() {}

    public var now: Duration { state.withLock { $0.now } }

    /// Timers armed and not yet fired or cancelled.
    public var pendingTimers: Int { state.withLock { $0.entries.count } }

    public func schedule(at deadline: Duration, _ action: @escaping @Sendable () -> Void) -> ReaderSessionTimer {
        let seq = state.withLock { s in
            s.seq += 1
            s.entries[s.seq] = Entry(deadline: deadline, seq: s.seq, action: action)
            return s.seq
        }
        return ReaderSessionTimer { [weak self] in
            _ = self?.state.withLock { $0.entries.removeValue(forKey: seq) }
        }
    }

    /// Moves time forward by `d` (negative values count as zero), firing every timer whose
    /// deadline is reached, earliest first.
    public func advance(by d: Duration) {
        let target = state.withLock { $0.now + max(.zero, d) }
        while fireNext(upTo: target) {}
    }

    /// The earliest armed deadline, if any (never earlier than `now`): lets a driver step
    /// from event to event instead of jumping over the reactions to one.
    public var nextDeadline: Duration? {
        state.withLock { s in s.entries.values.map(\.deadline).min().map { max($0, s.now) } }
    }

    /// Every armed deadline, earliest first (never earlier than `now`): what is due to
    /// happen, for a driver that compares situations ("the same timers, as far ahead").
    public var armedDeadlines: [Duration] {
        state.withLock { s in s.entries.values.map { max($0.deadline, s.now) }.sorted() }
    }

    /// Fires the earliest timer due at or before `limit` (time moves to its deadline) and
    /// returns true; otherwise moves time to `limit` and returns false.
    @discardableResult
    public func fireNext(upTo limit: Duration) -> Bool {
        let entry: Entry? = state.withLock { s in
            guard
                let e = s.entries.values.filter({ $0.deadline <= limit })
                    .min(by: { ($0.deadline, $0.seq) < ($1.deadline, $1.seq) })
            else {
                s.now = max(s.now, limit)
                return nil
            }
            s.entries[e.seq] = nil
            s.now = max(s.now, e.deadline)
            return e
        }
        guard let entry else { return false }
        entry.action()
        return true
    }
}
