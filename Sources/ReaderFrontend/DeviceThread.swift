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
/// ends it and waits until it has returned (and closed its device). What it is doing — running,
/// inside a blocking call, stopping, finished — and the jobs handed over are one
/// ``DeviceThreadMachine`` under the lock; its actions are performed outside the lock.
// unchecked: `machine` and `cancelHook` are guarded by `condition` (an NSCondition: waits need it); the rest are lets
final class DeviceThread: @unchecked Sendable {
    private let condition = NSCondition()
    private let clock: any ReaderSessionClock
    private let name: String
    // Guarded by `condition`.
    private var machine = DeviceThreadMachine<() -> Void>()
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

    var isStopping: Bool { locked { machine.isStoppingOrFinished } }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    /// Feeds the machine `input` under the lock, then performs its actions outside it, in
    /// order; returns whether it said to make the blocking call.
    @discardableResult
    private func transition(_ input: DeviceThreadMachine<() -> Void>.Input) -> Bool {
        let (actions, hook) = locked { (machine.apply(input), cancelHook) }
        var call = false
        for action in actions {
            switch action {
            case .signal: locked { condition.broadcast() }
            case .cancelCall: hook?()
            case .run(let job): job()
            case .makeCall: call = true
            case .skipCall: call = false
            }
        }
        return call
    }

    func start(_ main: @escaping @Sendable () -> Void) {
        let t = Thread { [self] in
            main()
            // Exchanges handed over after the end still get an answer (the tag is gone).
            transition(.mainReturned)
        }
        t.name = name
        t.start()
    }

    /// Runs `job` on the thread and waits for it.
    func run<R>(_ job: ExchangeJob<R>) {
        let done = DispatchSemaphore(value: 0)
        transition(
            .submit {
                job.finish(failing: self.isStopping ? TagCommunicationError.tagLost : nil)
                done.signal()
            })
        done.wait()
    }

    /// Runs the exchanges handed over so far (on the thread).
    func runJobs() {
        while true {
            let next: (() -> Void)? = locked {
                guard case .run(let job)? = machine.apply(.takeJob).first else { return nil }
                return job
            }
            guard let next else { return }
            next()
        }
    }

    /// Ends the thread's current wait; cancels a blocking device call in progress.
    func wake() { transition(.wake) }

    /// Waits (on the thread) until `deadline` on the clock (`nil`: no deadline) or a wake.
    func wait(until deadline: Duration?) {
        var timer: ReaderSessionTimer?
        if let deadline {
            timer = clock.schedule(at: deadline) { [weak self] in self?.wake() }
        }
        condition.lock()
        while machine.keepsWaiting { condition.wait() }
        _ = machine.apply(.waitEnded)
        condition.unlock()
        timer?.cancel()
    }

    /// Runs a blocking device call (on the thread) that ``wake()`` may cancel; answers
    /// `fallback` without calling when a wake, a job or a stop is already pending.
    func blocking<T>(_ call: () -> T, orIfWoken fallback: T) -> T {
        guard transition(.callRequested) else { return fallback }
        defer { transition(.callReturned) }
        return call()
    }

    /// Stops the thread and waits until it has returned.
    func stopAndJoin() {
        transition(.stop)
        condition.lock()
        while !machine.isFinished { condition.wait() }
        condition.unlock()
    }
}
