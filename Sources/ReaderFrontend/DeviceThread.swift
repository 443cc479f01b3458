import Foundation
import NFCBase
import NFCTags
import Synchronization

/// The one thread a hardware device's C calls run on (see README.md beside this file).
///
/// Other threads talk to it in three ways: ``run(_:)`` hands it an exchange and waits for
/// the result (a blocking wait: callers are the session's I/O queue or a bench thread, never
/// Swift's cooperative pool); ``wake()`` ends its current wait, and — while it is inside a
/// ``blocking(_:)`` call — asks the device to cancel that call (``onWake``); ``stopAndJoin()``
/// ends it and waits until it has returned (and closed its device).
final class DeviceThread: @unchecked Sendable {
    private let condition = NSCondition()
    private let clock: any ReaderSessionClock
    private let name: String
    // Guarded by `condition`.
    private var jobs: [() -> Void] = []
    private var woken = false
    private var stopping = false
    private var inBlockingCall = false
    private var finished = false
    private var cancelHook: (@Sendable () -> Void)?

    init(name: String, clock: any ReaderSessionClock) {
        self.name = name
        self.clock = clock
    }

    /// Called by ``wake()`` while the thread is inside ``blocking(_:)``: cancels the call.
    var onWake: (@Sendable () -> Void)? {
        get { locked { cancelHook } }
        set { locked { cancelHook = newValue } }
    }

    var isStopping: Bool { locked { stopping } }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    func start(_ main: @escaping @Sendable () -> Void) {
        let t = Thread { [self] in
            main()
            let leftover: [() -> Void] = locked {
                finished = true
                defer { jobs = [] }
                return jobs
            }
            // Exchanges handed over after the end still get an answer (the tag is gone).
            for job in leftover { job() }
            locked { condition.broadcast() }
        }
        t.name = name
        t.start()
    }

    /// Runs `job` on the thread and waits for it.
    func run<R>(_ job: ExchangeJob<R>) {
        let done = DispatchSemaphore(value: 0)
        let accepted: Bool = locked {
            guard !finished else { return false }
            jobs.append {
                job.finish(
                    failing: self.isStopping || self.locked({ self.finished }) ? TagCommunicationError.tagLost : nil)
                done.signal()
            }
            return true
        }
        guard accepted else {
            job.finish(failing: TagCommunicationError.tagLost)
            return
        }
        wake()
        done.wait()
    }

    /// Runs the exchanges handed over so far (on the thread).
    func runJobs() {
        while true {
            let next: (() -> Void)? = locked { jobs.isEmpty ? nil : jobs.removeFirst() }
            guard let next else { return }
            next()
        }
    }

    /// Ends the thread's current wait; cancels a blocking device call in progress.
    func wake() {
        let hook: (@Sendable () -> Void)? = locked {
            woken = true
            condition.broadcast()
            return inBlockingCall ? cancelHook : nil
        }
        hook?()
    }

    /// Waits (on the thread) until `deadline` on the clock (`nil`: no deadline) or a wake.
    func wait(until deadline: Duration?) {
        var timer: ReaderSessionTimer?
        if let deadline {
            timer = clock.schedule(at: deadline) { [weak self] in self?.wake() }
        }
        condition.lock()
        while !woken && !stopping && jobs.isEmpty { condition.wait() }
        woken = false
        condition.unlock()
        timer?.cancel()
    }

    /// Runs a blocking device call (on the thread) that ``wake()`` may cancel; answers
    /// `fallback` without calling when a wake, a job or a stop is already pending.
    func blocking<T>(_ call: () -> T, orIfWoken fallback: T) -> T {
        let go: Bool = locked {
            if woken || stopping || !jobs.isEmpty {
                woken = false
                return false
            }
            inBlockingCall = true
            return true
        }
        guard go else { return fallback }
        defer { locked { inBlockingCall = false } }
        return call()
    }

    /// Stops the thread and waits until it has returned.
    func stopAndJoin() {
        let hook: (@Sendable () -> Void)? = locked {
            stopping = true
            condition.broadcast()
            return inBlockingCall ? cancelHook : nil
        }
        hook?()
        condition.lock()
        while !finished { condition.wait() }
        condition.unlock()
    }
}
