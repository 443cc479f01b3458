import Foundation
import Glibc
import Synchronization

/// Scheduling for a thread that stands in for hardware of its own (a virtual PN532's chip, a
/// phone's contactless stack): such hardware answers within its deadline whatever its host is
/// doing, but the thread shares the host's CPUs with everything else on it.
///
/// Nice alone does not keep it on time: where the kernel groups threads by session
/// (autogroup, Linux's default, `sched(7)`) a thread's nice weighs only against threads of its
/// own session, and every other busy session still takes its turn first. Measured on a 2-core
/// host under 26 busy sessions (issue 35): a nice -10 chip thread waited up to 100 ms from its
/// wake-up to running, and one a real-time policy scheduled waited at most 10 ms.
public enum ThreadPriority {
    /// How the calling thread is scheduled after ``raiseCallingThread()``.
    public enum Outcome: Sendable, Equatable {
        /// SCHED_FIFO, priority 1.
        case realTime
        /// The normal policy at nice -10 (the real-time policy was refused).
        case niceMinus10
        /// Both were refused: the thread keeps what it had (best effort).
        case unchanged
    }

    /// Asks for SCHED_FIFO at the lowest real-time priority, 1: a real-time thread runs as
    /// soon as it is woken, before every ordinary one. Only for a thread that sleeps but for
    /// the microseconds each of its answers takes (a busy one would starve its host; Linux
    /// still keeps 5 % of each CPU for ordinary threads, `sched_rt_runtime_us`). That needs
    /// CAP_SYS_NICE (root) or an RLIMIT_RTPRIO of 1 or more; when refused it asks for nice -10
    /// (CAP_SYS_NICE or RLIMIT_NICE), and when that is refused too the thread keeps its
    /// priority.
    @discardableResult
    public static func raiseCallingThread() -> Outcome {
        // pid 0 is the calling thread: Linux schedules threads, not processes (sched(7)).
        var realTime = sched_param(sched_priority: 1)
        if sched_setscheduler(0, SCHED_FIFO, &realTime) == 0 { return .realTime }
        // who 0 is the calling thread: Linux keeps nice per thread (setpriority(2), BUGS).
        if setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, -10) == 0 { return .niceMinus10 }
        return .unchanged
    }

    /// Whether this process may make a thread real-time: tried on a thread of its own, which
    /// then ends (so no thread of the caller's changes). For a test to know whether a deadline
    /// a stand-in thread missed is the host's doing (a refused request: best effort). Blocks
    /// until that thread has tried (microseconds; off the cooperative pool all the same).
    public static func realTimeIsGranted() -> Bool {
        let probe = Probe()
        let thread = Thread { [probe] in
            probe.outcome.withLock { $0 = raiseCallingThread() }
            probe.ended.signal()
        }
        thread.start()
        probe.ended.wait()
        return probe.outcome.withLock { $0 } == .realTime
    }

    private final class Probe: Sendable {
        let outcome = Mutex<Outcome?>(nil)
        let ended = DispatchSemaphore(value: 0)
    }
}
