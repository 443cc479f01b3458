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
}

/// Waits (real time, bounded) until the system has no hand-off in flight.
private func settled(_ system: NFCReaderSystem) async -> Bool {
    await poll(timeout: .seconds(2), every: .milliseconds(1)) { system.pendingWork == 0 }
}

@Suite("Call observer and pending work (hooks for conformance harnesses)")
struct SessionCallObserverTests {
    @Test(
        "Calls Core NFC ignores are reported with the state they met: begin again, restartPolling, alertMessage after the end"
    )
    func ignoredCalls() async throws {
        let log = CallLog()
        let clock = ManualClock()
        let backend = FakeBackend()
        let system = NFCReaderSystem(
            backend: backend, clock: clock, arbiter: SessionArbiter(fileLocks: false), thermal: .disabled,
            callObserver: { log.record($0) })
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
        #expect(await settled(system))
    }

    @Test("A tag operation is reported with the generation its tag object came from; pendingWork drains to 0")
    func tagOperationGeneration() async throws {
        let log = CallLog()
        let clock = ManualClock()
        let backend = FakeBackend()
        let system = NFCReaderSystem(
            backend: backend, clock: clock, arbiter: SessionArbiter(fileLocks: false), thermal: .disabled,
            callObserver: { log.record($0) })
        let d = QuietRWDelegate()
        let s = NFCNDEFReaderSession(delegate: d, queue: nil, invalidateAfterFirstRead: false, system: system)
        var events = s.events.makeAsyncIterator()
        s.begin()
        _ = await events.next()  // didBecomeActive
        backend.present([(1, MemoryType2Tag(ndef: uriMessage))])
        _ = await events.next()  // didDetectTags
        guard let tag = d.tags.withLock({ $0.first }) else {
            Issue.record("no tag delivered")
            return
        }
        s.restartPolling()
        _ = await events.next()  // the same tag again, generation 1
        await #expect(throws: NFCReaderError.self) { try await s.connect(to: tag) }
        let op = log.all.first { if case .tagOperation = $0.call { true } else { false } }
        guard case .tagOperation(let name, let handle)? = op?.call else {
            Issue.record("no tag operation reported")
            return
        }
        #expect(name == "connect")
        #expect(handle.generation == 0)
        #expect(op?.state == .active(generation: 1))
        s.invalidate()
        _ = await events.next()
        #expect(await settled(system))
        #expect(system.pendingWork == 0)
    }
}
