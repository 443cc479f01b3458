public import NFCBase
import Synchronization

/// The package's ``/NFCBase/ManualClock`` that also tells a test when a timer is armed on it:
/// ``armed(at:)`` returns once something scheduled a timer for that deadline, so a test moves
/// virtual time on only after the code under test waits (a `firstTarget` timeout), with no
/// polling and no real-time wait. Time is the manual clock's: drive it with ``manual``.
public final class ArmingClock: ReaderSessionClock {
    /// The clock itself: `advance(by:)`, `pendingTimers`.
    public let manual: ManualClock
    private struct State {
        var deadlines: [Duration] = []
        var waiters: [(deadline: Duration, k: CheckedContinuation<Void, Never>)] = []
    }
    private let state = Mutex(State())

    public init(_ manual: ManualClock = ManualClock()) { self.manual = manual }

    public var now: Duration { manual.now }

    /// Every deadline armed so far, in arming order (cancelled or fired ones too).
    public var deadlines: [Duration] { state.withLock { $0.deadlines } }

    public func schedule(at deadline: Duration, _ action: @escaping @Sendable () -> Void) -> ReaderSessionTimer {
        let timer = manual.schedule(at: deadline, action)
        let due = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.deadlines.append(deadline)
            let due = s.waiters.filter { $0.deadline == deadline }.map(\.k)
            s.waiters.removeAll { $0.deadline == deadline }
            return due
        }
        for k in due { k.resume() }
        return timer
    }

    /// Returns once a timer was armed for `deadline` (at once if one already was). Bound the
    /// test with a `.timeLimit`: code that never arms it leaves this waiting.
    public func armed(at deadline: Duration) async {
        await withCheckedContinuation { (k: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s in
                if s.deadlines.contains(deadline) { return true }
                s.waiters.append((deadline, k))
                return false
            }
            if now { k.resume() }
        }
    }
}
