import Dispatch
import Foundation
import ReaderSession
import Synchronization
import Testing

/// What ran, in order.
private final class Order: Sendable {
    private let log = Mutex<[String]>([])
    func add(_ s: String) { log.withLock { $0.append(s) } }
    var all: [String] { log.withLock { $0 } }
}

/// An NDEF delegate that logs what it gets.
private final class Ends: NSObject, NFCNDEFReaderSessionDelegate, Sendable {
    private let entries = Mutex<[String]>([])
    var log: [String] { entries.withLock { $0 } }
    func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession) { entries.withLock { $0.append("active") } }
    func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
        entries.withLock { $0.append("end:\((error as? NFCReaderError)?.code.rawValue ?? -1)") }
    }
}

@Suite("EmbeddedReaderSessionExecutor: hand-offs run when the test says, in order, on their queues")
struct EmbeddedExecutorTests {
    @Test("Nothing runs until run(); then every job in hand-over order, those they hand over too, each on its queue")
    func runsInOrder() {
        let loop = EmbeddedReaderSessionExecutor()
        let order = Order()
        let a = DispatchQueue(label: "a")
        let b = DispatchQueue(label: "b")
        loop.async(on: a) {
            dispatchPrecondition(condition: .onQueue(a))
            order.add("a1")
            loop.async(on: b) { order.add("b2") }
        }
        loop.async(on: b) {
            dispatchPrecondition(condition: .onQueue(b))
            order.add("b1")
        }
        #expect(order.all.isEmpty)
        #expect(loop.pendingJobs == 2 && !loop.isIdle)
        #expect(loop.run() == 3)
        #expect(order.all == ["a1", "b1", "b2"])
        #expect(loop.isIdle && loop.jobsRun == 3)
        #expect(loop.run() == 0)
    }

    @Test("runWaiting() runs one round; run(limit:) stops a loop that takes no time and leaves the rest")
    func rounds() {
        let loop = EmbeddedReaderSessionExecutor()
        let q = DispatchQueue(label: "q")
        let count = Atomic<Int>(0)
        @Sendable func again() {
            count.add(1, ordering: .relaxed)
            loop.async(on: q, again)
        }
        loop.async(on: q, again)
        #expect(loop.runWaiting() == 1)
        #expect(loop.pendingJobs == 1)
        #expect(loop.run(limit: 10) == 10)
        #expect(count.load(ordering: .relaxed) == 11)
        #expect(loop.pendingJobs == 1)
    }

    @Test(
        "advanceTime fires due timers in deadline order (ties in arming order), each at its instant, with its work run before the next"
    )
    func timers() {
        let loop = EmbeddedReaderSessionExecutor()
        let clock = loop.clock
        let order = Order()
        let q = DispatchQueue(label: "q")
        _ = clock.schedule(at: .seconds(2)) { order.add("t2@\(clock.now)") }
        _ = clock.schedule(at: .seconds(1)) {
            order.add("t1@\(clock.now)")
            loop.async(on: q) { order.add("work of t1@\(clock.now)") }
        }
        _ = clock.schedule(at: .seconds(1)) { order.add("t1'@\(clock.now)") }
        let late = clock.schedule(at: .seconds(3)) { order.add("t3") }
        loop.async(on: q) { order.add("waiting@\(clock.now)") }
        loop.advanceTime(by: .milliseconds(2500))
        #expect(
            order.all == [
                "waiting@0.0 seconds", "t1@1.0 seconds", "work of t1@1.0 seconds", "t1'@1.0 seconds",
                "t2@2.0 seconds",
            ])
        #expect(clock.now == .milliseconds(2500))
        late.cancel()
        loop.advanceTime(by: .seconds(10))
        #expect(order.all.count == 5)
        #expect(clock.pendingTimers == 0)
    }

    @Test("A session on the executor: begin() delivers nothing until run(); the time limit ends it at 60 s, not before")
    func session() throws {
        let loop = EmbeddedReaderSessionExecutor()
        let system = NFCReaderSystem(
            backend: FakeBackend(), clock: loop.clock, arbiter: SessionArbiter(fileLocks: false), thermal: .disabled,
            model: .oneRule(), executor: loop)
        let d = Ends()
        let s = NFCNDEFReaderSession(delegate: d, queue: nil, invalidateAfterFirstRead: false, system: system)
        s.begin()
        #expect(d.log.isEmpty)
        loop.run()
        #expect(d.log == ["active"])
        loop.advanceTime(by: .milliseconds(59_999))
        #expect(d.log == ["active"])
        loop.advanceTime(by: .milliseconds(1))
        #expect(d.log == ["active", "end:201"])
        #expect(system.pendingWork == 0 && loop.isIdle)
    }
}
