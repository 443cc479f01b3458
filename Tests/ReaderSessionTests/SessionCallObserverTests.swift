import Foundation
import NFCBenchTestSupport
import NFCTags
import ReaderSession
import Synchronization
import Testing

private final class CallLog: Sendable {
    private let records = Mutex<[SessionCallRecord]>([])
    func record(_ r: SessionCallRecord) { records.withLock { $0.append(r) } }
    var all: [SessionCallRecord] { records.withLock { $0 } }
}

private final class QuietRWDelegate: NSObject, NFCNDEFReaderSessionTagDelegate, @unchecked Sendable {
    let tags = Mutex<[any NFCNDEFTag]>([])
    func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [any NFCNDEFTag]) {
        self.tags.withLock { $0 += tags }
    }
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {}
    var first: (any NFCNDEFTag)? { tags.withLock { $0.first } }
    var count: Int { tags.withLock { $0.count } }
}

/// What a completion handler was called with (the test drives the executor, then reads it).
private final class Outcome: Sendable {
    private let box = Mutex<(called: Bool, error: String?)>((false, nil))
    func record(_ error: (any Error)?) { box.withLock { $0 = (true, error.map { "\($0)" }) } }
    var called: Bool { box.withLock { $0.called } }
    var error: String? { box.withLock { $0.error } }
}

@Suite("Call observer and pending work (hooks for conformance harnesses)")
struct SessionCallObserverTests {
    @Test(
        "Calls Core NFC ignores are reported with the state they met: begin again, restartPolling, alertMessage after the end"
    )
    func ignoredCalls() throws {
        let log = CallLog()
        let loop = EmbeddedReaderSessionExecutor()
        let backend = FakeBackend()
        let system = NFCReaderSystem(
            backend: backend, clock: loop.clock, arbiter: SessionArbiter(fileLocks: false), thermal: .disabled,
            callObserver: { log.record($0) }, executor: loop)
        let d = QuietRWDelegate()
        let s = NFCNDEFReaderSession(delegate: d, queue: nil, invalidateAfterFirstRead: false, system: system)
        s.begin()
        s.restartPolling()
        s.invalidate()
        s.begin()
        s.restartPolling()
        s.alertMessage = "too late"
        s.invalidate(errorMessage: "again")
        let calls = log.all
        #expect(
            calls.map(\.call) == [
                .begin, .restartPolling, .invalidate(errorMessage: nil), .begin, .restartPolling,
                .alertMessage("too late"),
                .invalidate(errorMessage: "again"),
            ])
        let ended = SessionCallRecord.State.invalidated(.readerSessionInvalidationErrorUserCanceled)
        #expect(
            calls.map(\.state) == [
                .notStarted, .active(generation: 0), .active(generation: 1), ended, ended, ended, ended,
            ])
        #expect(Set(calls.map(\.session)).count == 1)
        #expect(system.pendingWork > 0, "the delegate calls wait for the executor")
        #expect(loop.run() > 0)
        #expect(system.pendingWork == 0 && loop.isIdle)
    }

    @Test("A tag operation is reported with the generation its tag object came from; pendingWork drains to 0")
    func tagOperationGeneration() throws {
        let log = CallLog()
        let loop = EmbeddedReaderSessionExecutor()
        let backend = FakeBackend()
        let system = NFCReaderSystem(
            backend: backend, clock: loop.clock, arbiter: SessionArbiter(fileLocks: false), thermal: .disabled,
            callObserver: { log.record($0) }, executor: loop)
        let d = QuietRWDelegate()
        let s = NFCNDEFReaderSession(delegate: d, queue: nil, invalidateAfterFirstRead: false, system: system)
        s.begin()
        loop.run()  // didBecomeActive
        backend.present([(1, MemoryType2Tag(ndef: uriMessage))])
        loop.run()  // didDetectTags
        let delivered = d.first
        let tag = try #require(delivered, "no tag delivered")
        s.restartPolling()
        loop.run()  // the same tag again, generation 1
        #expect(d.count == 2)
        let connected = Outcome()
        s.connect(to: tag) { connected.record($0) }
        loop.run()
        #expect(connected.called)
        #expect(connected.error != nil, "a tag object of generation 0 after restartPolling()")
        let op = log.all.first { if case .tagOperation = $0.call { true } else { false } }
        let reported: (name: String, handle: TagHandle)? =
            if case .tagOperation(let n, let h)? = op?.call { (n, h) } else { nil }
        let (name, handle) = try #require(reported, "no tag operation reported")
        #expect(name == "connect")
        #expect(handle.generation == 0)
        #expect(op?.state == .active(generation: 1))
        s.invalidate()
        loop.run()
        #expect(system.pendingWork == 0 && loop.isIdle)
    }
}
