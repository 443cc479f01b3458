import Foundation

/// A thread of its own that runs the jobs of the tasks that prefer it
/// (`Task(executorPreference:)`, `withTaskExecutorPreference`), one at a time, until
/// ``stop()``: work that must go on while the cooperative pool is busy (a virtual card's
/// app answering a reader within the frame waiting time) does not wait for a pool thread.
///
/// A job enqueued after ``stop()`` runs on the global concurrent executor instead, so a task
/// that still prefers this executor then is never stranded.
// unchecked: `jobs` and `stopped` are guarded by `condition`
public final class JobThread: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []  // guarded by `condition`
    private var stopped = false  // guarded by `condition`

    /// Starts the thread; `name` names it in the kernel (``ThreadName``: `top -H`, gdb, up to
    /// 15 bytes).
    /// `standsInForHardware`: the thread plays hardware of its own that answers within a
    /// deadline whatever the host is doing (a phone's contactless stack answering a reader),
    /// so it asks to be real-time (``ThreadPriority/raiseCallingThread()``); only for jobs
    /// that take microseconds.
    public init(name: String, standsInForHardware: Bool = false) {
        let thread = Thread { [self] in
            ThreadName.setCallingThread(name)
            if standsInForHardware { ThreadPriority.raiseCallingThread() }
            loop()
        }
        thread.name = name
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        condition.lock()
        if stopped {
            condition.unlock()
            globalConcurrentExecutor.enqueue(job)
            return
        }
        jobs.append(UnownedJob(job))
        condition.unlock()
        // Signalled after the unlock: a real-time thread (`standsInForHardware`) woken while
        // the lock is still held runs at once, finds the lock taken and waits for this thread,
        // an ordinary one that a loaded host may not run again for tens of milliseconds
        // (priority inversion). `loop` checks `jobs` under the lock, so no signal is lost.
        condition.signal()
    }

    /// Ends the thread once the jobs queued are run.
    public func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
