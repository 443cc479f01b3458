/// The rules of a device's thread (`DeviceThread`, internal) as a pure value: inputs in,
/// actions out (the house style, as ``DiscoveryMachine`` is). The thread holds one under its
/// lock and performs the actions outside it; `Job` is what other threads hand over (the
/// thread's exchanges; the tests use plain values).
///
/// Rules:
/// - While it runs, a wake (``Input/wake``, or a job handed over) is kept until the thread
///   takes it: its next wait returns at once, or its next blocking call is skipped.
/// - A wake or a stop while the thread is inside a blocking device call also cancels that
///   call (``Action/cancelCall``).
/// - A stop is final: waits return and blocking calls are skipped from then on.
/// - Once the thread's main function returned, the jobs left are run (each sees the thread
///   gone and fails), and a job handed over after that is run at once by the caller.
public struct DeviceThreadMachine<Job> {
    /// The thread's state; each case carries only what is valid in it.
    public enum State: Sendable, Hashable {
        /// Running its own code or waiting; `wakePending`: a wake came that the thread has
        /// not taken yet.
        case running(wakePending: Bool)
        /// Inside a blocking device call that a wake cancels; `wakePending` as in ``running(wakePending:)``.
        case inBlockingCall(wakePending: Bool)
        /// Asked to stop: it returns at its next check; `inBlockingCall` until the call it is
        /// inside returns.
        case stopping(inBlockingCall: Bool)
        /// Its main function returned.
        case finished
    }

    /// What happens to the thread.
    public enum Input {
        /// Another thread hands over a job (and wakes the thread to run it).
        case submit(Job)
        /// Another thread (or a timer) ends the thread's current wait.
        case wake
        /// The owner asks the thread to stop.
        case stop
        /// The thread asks for the next job.
        case takeJob
        /// The thread's wait returned: it has taken the wake.
        case waitEnded
        /// The thread is about to make a blocking device call.
        case callRequested
        /// The blocking call returned.
        case callReturned
        /// The thread's main function returned.
        case mainReturned
    }

    /// What the thread (or the caller) does, in order.
    public enum Action {
        /// Wake whoever waits on the lock's condition to look again.
        case signal
        /// Cancel the blocking device call in progress (the device's cancel hook).
        case cancelCall
        /// Run this job now (it sees the thread's state when it runs).
        case run(Job)
        /// Make the blocking call.
        case makeCall
        /// Do not call: answer the fallback (a wake, a job or a stop is pending).
        case skipCall
    }

    public private(set) var state: State = .running(wakePending: false)
    /// Jobs handed over and not taken yet, oldest first.
    public private(set) var jobs: [Job] = []

    public init() {}

    /// Whether the thread's wait goes on: no wake, no job, no stop.
    public var keepsWaiting: Bool { state == .running(wakePending: false) && jobs.isEmpty }

    /// Whether the thread is asked to stop (or has returned): jobs fail.
    public var isStoppingOrFinished: Bool {
        switch state {
        case .stopping, .finished: true
        case .running, .inBlockingCall: false
        }
    }

    public var isFinished: Bool { state == .finished }

    /// One input: the state moves; the actions are for the caller to perform, in order.
    public mutating func apply(_ input: Input) -> [Action] {
        switch input {
        case .submit(let job):
            if state == .finished { return [.run(job)] }
            jobs.append(job)
            return wake()
        case .wake:
            return wake()
        case .stop:
            switch state {
            case .running:
                state = .stopping(inBlockingCall: false)
                return [.signal]
            case .inBlockingCall, .stopping(inBlockingCall: true):
                state = .stopping(inBlockingCall: true)
                return [.signal, .cancelCall]
            case .stopping(inBlockingCall: false), .finished:
                return [.signal]
            }
        case .takeJob:
            guard !jobs.isEmpty else { return [] }
            return [.run(jobs.removeFirst())]
        case .waitEnded:
            if case .running = state { state = .running(wakePending: false) }
            return []
        case .callRequested:
            guard case .running(let woken) = state, !woken, jobs.isEmpty else {
                if case .running = state { state = .running(wakePending: false) }
                return [.skipCall]
            }
            state = .inBlockingCall(wakePending: false)
            return [.makeCall]
        case .callReturned:
            switch state {
            case .inBlockingCall(let woken): state = .running(wakePending: woken)
            case .stopping(inBlockingCall: true): state = .stopping(inBlockingCall: false)
            case .running, .stopping(inBlockingCall: false), .finished: break
            }
            return []
        case .mainReturned:
            state = .finished
            defer { jobs = [] }
            return jobs.map { .run($0) } + [.signal]
        }
    }

    private mutating func wake() -> [Action] {
        switch state {
        case .running:
            state = .running(wakePending: true)
            return [.signal]
        case .inBlockingCall:
            state = .inBlockingCall(wakePending: true)
            return [.signal, .cancelCall]
        case .stopping(let inCall):
            return inCall ? [.signal, .cancelCall] : [.signal]
        case .finished:
            return [.signal]
        }
    }
}

extension DeviceThreadMachine: Sendable where Job: Sendable {}
extension DeviceThreadMachine.Input: Sendable where Job: Sendable {}
extension DeviceThreadMachine.Action: Sendable where Job: Sendable {}
extension DeviceThreadMachine.Action: Equatable where Job: Equatable {}
