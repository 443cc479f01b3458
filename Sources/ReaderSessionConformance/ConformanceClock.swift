public import ReaderSession
import Synchronization

/// The harness's virtual clock: a ``ReaderSessionClock`` whose time moves only when the
/// harness steps it, one timer at a time, so that what a timer sets off (a delegate call,
/// an app's own timer) has settled before the next one fires. Time starts at zero.
///
/// Unlike ReaderSession's `ManualClock`, it tells the next deadline, which the harness
/// needs to step from event to event instead of jumping over the app's reactions.
public final class ConformanceClock: ReaderSessionClock {
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

    /// The earliest armed deadline, if any (never earlier than `now`).
    public var nextDeadline: Duration? {
        state.withLock { s in s.entries.values.map(\.deadline).min().map { max($0, s.now) } }
    }

    /// Fires the earliest timer due at or before `limit` (time moves to its deadline) and
    /// returns true; otherwise moves time to `limit` and returns false.
    @discardableResult
    public func fireNext(upTo limit: Duration) -> Bool {
        let entry: Entry? = state.withLock { s in
            guard let e = s.entries.values.filter({ $0.deadline <= limit })
                .min(by: { ($0.deadline, $0.seq) < ($1.deadline, $1.seq) }) else {
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
