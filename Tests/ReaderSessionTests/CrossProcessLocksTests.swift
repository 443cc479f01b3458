import NFCBenchTestSupport
import ReaderSession
import Synchronization
import Testing

/// Another process's view of the readers, in memory: what ``CrossProcessLocks`` sees and answers.
private final class FakeHostLocks: CrossProcessLocks {
    struct State {
        var held: [String: Int] = [:]
        var calls: [String] = []
        var refuse: String? = nil
        var stores: [String] = []
    }
    let state = Mutex(State())

    func lock(reader: String, hostWide: Bool) -> CrossProcessLockAttempt {
        state.withLock { s in
            s.calls.append("lock \(reader) hostWide=\(hostWide)")
            if let why = s.refuse { return .failed(why) }
            guard s.held[reader, default: 0] == 0 else { return .busy }
            s.held[reader, default: 0] += 1
            return .locked(release: { [self] in
                state.withLock { s in
                    s.held[reader, default: 0] -= 1
                    s.calls.append("unlock \(reader)")
                }
            })
        }
    }

    func enqueue(
        _ key: String, poll: Duration, attempt: @escaping @Sendable () -> ReaderLease?,
        onGranted: @escaping @Sendable (ReaderLease) -> Void
    ) -> ReaderQueueTicket {
        state.withLock { $0.calls.append("enqueue \(key)") }
        if let lease = attempt() { onGranted(lease) }
        return ReaderQueueTicket {}
    }

    func thermalStore(_ key: String) -> (any ThermalStateStore)? {
        state.withLock { $0.stores.append(key) }
        return nil
    }
}

@Suite("Session arbiter over the host's cross-process locks (no files: ReaderSession is pure)")
struct CrossProcessLocksTests {
    @Test("The arbiter takes its own table first, then the host's locks by the reader's own lock name")
    func locksByReaderName() throws {
        let host = FakeHostLocks()
        let a = SessionArbiter(scope: .perReader, crossProcessLocks: host)
        let lease = try #require(
            matched { if case .acquired(let lease) = a.acquire(reader: "sim:desk") { lease } else { nil } },
            "not acquired")
        let name = SessionArbiter.readerLockName(for: "sim:desk")
        #expect(host.state.withLock { $0.calls } == ["lock \(name) hostWide=false"])
        // This process's table refuses before the host's locks are asked again.
        try #require(
            matches { if case .busy = a.acquire(reader: "sim:desk") { true } else { false } },
            "a second lease in this process")
        #expect(host.state.withLock { $0.calls.count } == 1)
        lease.release()
        lease.release()
        #expect(host.state.withLock { $0.calls } == ["lock \(name) hostWide=false", "unlock \(name)"])
        try #require(
            matches { if case .acquired = a.acquire(reader: "sim:desk") { true } else { false } },
            "the released reader is not free again")
    }

    @Test("Busy or failed in another process: the arbiter says so and keeps no entry of its own")
    func refusals() throws {
        let host = FakeHostLocks()
        let name = SessionArbiter.readerLockName(for: "pcsc:R")
        host.state.withLock { $0.held[name] = 1 }
        let a = SessionArbiter(scope: .hostWide, crossProcessLocks: host)
        try #require(
            matches { if case .busy = a.acquire(reader: "pcsc:R") { true } else { false } },
            "another process holds the reader: busy")
        #expect(host.state.withLock { $0.calls } == ["lock \(name) hostWide=true"])
        host.state.withLock {
            $0.held[name] = 0
            $0.refuse = "lock folder /x: not a directory"
        }
        let why = try #require(
            matched { if case .failed(let why) = a.acquire(reader: "pcsc:R") { why } else { nil } },
            "a refused lock folder is a failure, not busy")
        #expect(why == "lock folder /x: not a directory")
        host.state.withLock { $0.refuse = nil }
        try #require(
            matches { if case .acquired = a.acquire(reader: "pcsc:R") { true } else { false } },
            "the refusals left an entry behind")
    }

    @Test("Heat follows the lock scope: the store is asked by the arbiter's lock name (host when host-wide)")
    func thermalStoreByScope() {
        let host = FakeHostLocks()
        _ = SessionArbiter(scope: .perReader, crossProcessLocks: host).thermalStore(for: "sim:a")
        _ = SessionArbiter(scope: .hostWide, crossProcessLocks: host).thermalStore(for: "sim:a")
        #expect(host.state.withLock { $0.stores } == [SessionArbiter.readerLockName(for: "sim:a"), "host"])
        #expect(SessionArbiter(fileLocks: false).thermalStore(for: "sim:a") == nil)
    }

    @Test("A queued session waits in the host's queue, under the arbiter's lock name")
    func queueThroughHost() {
        let host = FakeHostLocks()
        let a = SessionArbiter(scope: .hostWide, crossProcessLocks: host)
        let granted = Mutex(false)
        _ = a.enqueue(reader: "sim:q") { lease in
            granted.withLock { $0 = true }
            lease.release()
        }
        #expect(granted.withLock { $0 })
        #expect(host.state.withLock { $0.calls.first } == "enqueue host")
    }

    @Test(
        "What a host installs is what shared and new arbiters use; arbiters made before keep theirs; IfNone keeps a host's choice"
    )
    func installation() {
        let before = SessionArbiter.installedCrossProcessLocks
        defer { SessionArbiter.installCrossProcessLocks(before) }
        SessionArbiter.installCrossProcessLocks(nil)
        let early = SessionArbiter()
        #expect(early.crossProcessLocks == nil)
        #expect(SessionArbiter.shared.crossProcessLocks == nil)
        let host = FakeHostLocks()
        SessionArbiter.installCrossProcessLocks(host)
        #expect(SessionArbiter.shared.crossProcessLocks as? FakeHostLocks === host)
        #expect(SessionArbiter(scope: .hostWide).crossProcessLocks as? FakeHostLocks === host)
        #expect(SessionArbiter(fileLocks: true).crossProcessLocks as? FakeHostLocks === host)
        #expect(SessionArbiter(fileLocks: false).crossProcessLocks == nil)
        #expect(early.crossProcessLocks == nil)
        let kept = SessionArbiter.installCrossProcessLocksIfNone { FakeHostLocks() }
        #expect(kept as? FakeHostLocks === host)
    }
}
