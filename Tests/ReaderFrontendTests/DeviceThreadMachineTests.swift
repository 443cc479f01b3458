import ReaderFrontend
import Testing

/// The device thread's rules alone: inputs in, state and actions out (an `Int` stands for a job).
@Suite("Device thread machine")
struct DeviceThreadMachineTests {
    typealias Machine = DeviceThreadMachine<Int>

    @Test("A new thread runs with nothing pending: its wait goes on")
    func fresh() {
        let m = Machine()
        #expect(m.state == .running(wakePending: false))
        #expect(m.keepsWaiting)
        #expect(!m.isStoppingOrFinished)
    }

    @Test("A wake is kept until the thread's wait takes it")
    func wakeKept() {
        var m = Machine()
        #expect(m.apply(.wake) == [.signal])
        #expect(m.state == .running(wakePending: true))
        #expect(!m.keepsWaiting)
        #expect(m.apply(.waitEnded).isEmpty)
        #expect(m.state == .running(wakePending: false))
        #expect(m.keepsWaiting)
    }

    @Test("A job handed over wakes the thread; the thread takes jobs oldest first")
    func jobs() {
        var m = Machine()
        #expect(m.apply(.submit(1)) == [.signal])
        #expect(m.apply(.submit(2)) == [.signal])
        #expect(m.jobs == [1, 2])
        _ = m.apply(.waitEnded)
        #expect(!m.keepsWaiting, "a job is waiting")
        #expect(m.apply(.takeJob) == [.run(1)])
        #expect(m.apply(.takeJob) == [.run(2)])
        #expect(m.apply(.takeJob).isEmpty)
        #expect(m.keepsWaiting)
    }

    @Test("A blocking call goes ahead when nothing is pending; a wake inside it cancels it")
    func blockingCall() {
        var m = Machine()
        #expect(m.apply(.callRequested) == [.makeCall])
        #expect(m.state == .inBlockingCall(wakePending: false))
        #expect(m.apply(.wake) == [.signal, .cancelCall])
        #expect(m.apply(.submit(7)) == [.signal, .cancelCall], "a job handed over cancels it too")
        #expect(m.apply(.callReturned).isEmpty)
        #expect(m.state == .running(wakePending: true), "the wake is still there for the next wait")
        #expect(!m.keepsWaiting)
    }

    @Test("A pending wake or job skips the blocking call, and the wake is taken")
    func skippedCall() {
        var woken = Machine()
        _ = woken.apply(.wake)
        #expect(woken.apply(.callRequested) == [.skipCall])
        #expect(woken.state == .running(wakePending: false))
        #expect(woken.apply(.callRequested) == [.makeCall], "taken once")
        var job = Machine()
        _ = job.apply(.submit(1))
        _ = job.apply(.waitEnded)
        #expect(job.apply(.callRequested) == [.skipCall])
        #expect(job.jobs == [1], "the job stays for runJobs")
    }

    @Test("A stop is final: waits return, calls are skipped; inside a call it cancels the call")
    func stop() {
        var m = Machine()
        #expect(m.apply(.stop) == [.signal])
        #expect(m.state == .stopping(inBlockingCall: false))
        #expect(m.isStoppingOrFinished)
        #expect(!m.keepsWaiting)
        _ = m.apply(.waitEnded)
        #expect(m.state == .stopping(inBlockingCall: false), "a wait does not undo a stop")
        #expect(m.apply(.callRequested) == [.skipCall])
        #expect(m.apply(.wake) == [.signal])
        var inCall = Machine()
        _ = inCall.apply(.callRequested)
        #expect(inCall.apply(.stop) == [.signal, .cancelCall])
        #expect(inCall.state == .stopping(inBlockingCall: true))
        #expect(inCall.apply(.wake) == [.signal, .cancelCall])
        _ = inCall.apply(.callReturned)
        #expect(inCall.state == .stopping(inBlockingCall: false))
        #expect(inCall.apply(.wake) == [.signal], "no call left to cancel")
    }

    @Test("When main returns, the jobs left run (and fail there); later jobs run at once")
    func finished() {
        var m = Machine()
        _ = m.apply(.submit(1))
        _ = m.apply(.submit(2))
        #expect(m.apply(.mainReturned) == [.run(1), .run(2), .signal])
        #expect(m.isFinished)
        #expect(m.isStoppingOrFinished)
        #expect(m.jobs.isEmpty)
        #expect(m.apply(.submit(3)) == [.run(3)])
        #expect(m.jobs.isEmpty)
        #expect(m.apply(.stop) == [.signal])
        #expect(m.state == .finished)
    }
}
