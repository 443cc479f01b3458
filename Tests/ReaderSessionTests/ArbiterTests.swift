import Foundation
import NFCBenchTestSupport
import NFCTags
import NFCTrace
import ReaderSession
import ReaderSessionLocks
import Testing

/// A fresh lock directory per test, removed afterwards.
private func withLockDirectory(_ body: (String) throws -> Void) rethrows {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-locks-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try body(dir)
}

private func isBusy(_ a: SessionArbiter.Acquisition) -> Bool {
    if case .busy = a { true } else { false }
}

private func lease(_ a: SessionArbiter.Acquisition) -> ReaderLease? {
    if case .acquired(let l) = a { l } else { nil }
}

@Suite("Session arbiter and advisory file lock")
struct ArbiterTests {
    @Test("Two arbiters on one lock directory exclude each other through flock (separate descriptors)")
    func twoArbiters() throws {
        try withLockDirectory { dir in
            let a = SessionArbiter(lockDirectory: dir)
            let b = SessionArbiter(lockDirectory: dir)
            let held = try #require(lease(a.acquire(reader: "sim:desk")))
            #expect(isBusy(b.acquire(reader: "sim:desk")))
            #expect(FileManager.default.fileExists(atPath: dir + "/" + a.lockName(for: "sim:desk") + ".lock"))
            held.release()
            let again = try #require(lease(b.acquire(reader: "sim:desk")))
            #expect(isBusy(a.acquire(reader: "sim:desk")))
            again.release()
        }
    }

    @Test("A lock file planted as a link is not followed (O_NOFOLLOW): the acquisition fails, its target is never made")
    func plantedLink() throws {
        try withLockDirectory { dir in
            try SessionArbiter.prepareLockDirectory(dir)
            let target = dir + "/elsewhere"
            try FileManager.default.createSymbolicLink(atPath: dir + "/host.lock", withDestinationPath: target)
            let a = SessionArbiter(lockDirectory: dir)
            let why = try #require(
                matched { if case .failed(let why) = a.acquire(reader: "sim:desk") { why } else { nil } },
                "a link as the host lock must not be followed")
            #expect(why.contains("host.lock"), "\(why)")
            #expect(!FileManager.default.fileExists(atPath: target))
        }
    }

    @Test("The lock folder is made 0700 and checked before any lock file: a link or a world-writable folder is refused")
    func lockFolderRule() throws {
        try withLockDirectory { dir in
            let made = try SessionArbiter.prepareLockDirectory(dir + "/nested/locks")
            var st = stat()
            #expect(lstat(made, &st) == 0 && st.st_mode & 0o7777 == 0o700)
            let link = dir + "/link"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: made)
            #expect(throws: PrivateFolderError.self) { try SessionArbiter.prepareLockDirectory(link) }
            let why = try #require(
                matched {
                    if case .failed(let why) = SessionArbiter(lockDirectory: link).acquire(reader: "sim:desk") {
                        why
                    } else {
                        nil
                    }
                }, "a linked lock folder must be refused")
            #expect(why == "lock folder \(link) is a symbolic link, not a folder")
            #expect(chmod(made, 0o777) == 0)
            #expect(throws: PrivateFolderError.self) { try SessionArbiter.prepareLockDirectory(made) }
            #expect(try FileManager.default.contentsOfDirectory(atPath: made).isEmpty)
        }
    }

    @Test("One arbiter refuses a second session on the same reader")
    func sameArbiter() throws {
        try withLockDirectory { dir in
            let a = SessionArbiter(lockDirectory: dir)
            let held = try #require(lease(a.acquire(reader: "pcsc:ACS ACR122U 00 00")))
            #expect(isBusy(a.acquire(reader: "pcsc:ACS ACR122U 00 00")))
            held.release()
            held.release()  // idempotent
            #expect(lease(a.acquire(reader: "pcsc:ACS ACR122U 00 00")) != nil)
        }
    }

    @Test("Per-reader locks let two readers run at once; a host-wide lock does not")
    func scopes() throws {
        try withLockDirectory { dir in
            let perReader = SessionArbiter(scope: .perReader, lockDirectory: dir)
            let x = try #require(lease(perReader.acquire(reader: "sim:a")))
            let y = try #require(lease(perReader.acquire(reader: "sim:b")))
            x.release()
            y.release()
            let host = SessionArbiter(scope: .hostWide, lockDirectory: dir)
            let h = try #require(lease(host.acquire(reader: "sim:a")))
            #expect(isBusy(SessionArbiter(scope: .hostWide, lockDirectory: dir).acquire(reader: "sim:b")))
            h.release()
        }
    }

    @Test("Lock names are file-safe and distinct for readers that sanitise alike")
    func lockNames() {
        let a = SessionArbiter(fileLocks: false)
        let n1 = a.lockName(for: "pn532_uart:/dev/ttyUSB0")
        let n2 = a.lockName(for: "pn532_uart_/dev/ttyUSB0")
        #expect(!n1.contains("/") && !n1.contains(":"))
        #expect(n1 != n2)
        #expect(SessionArbiter(scope: .hostWide, fileLocks: false).lockName(for: "anything") == "host")
    }

    @Test("An in-process arbiter without files still refuses a second session")
    func inProcess() throws {
        let a = SessionArbiter(fileLocks: false)
        #expect(a.lockDirectory == nil)
        let l = try #require(lease(a.acquire(reader: "sim:x")))
        #expect(isBusy(a.acquire(reader: "sim:x")))
        l.release()
    }

    @Test("Sessions on two systems sharing a lock directory: the second gets 203")
    func acrossSystems() async throws {
        try await withLockDirectoryAsync { dir in
            let backend = FakeBackend(identifier: "sim:shared-\(UUID().uuidString.prefix(6))")
            let clock = ManualClock()
            let s1 = NFCReaderSystem(
                backend: backend, clock: clock, arbiter: SessionArbiter(lockDirectory: dir), thermal: .disabled)
            let s2 = NFCReaderSystem(
                backend: backend, clock: clock, arbiter: SessionArbiter(lockDirectory: dir), thermal: .disabled)
            let d = Delegate()
            let a = NFCNDEFReaderSession(delegate: d, queue: nil, invalidateAfterFirstRead: false, system: s1)
            let b = NFCNDEFReaderSession(delegate: d, queue: nil, invalidateAfterFirstRead: false, system: s2)
            var ia = a.events.makeAsyncIterator()
            var ib = b.events.makeAsyncIterator()
            a.begin()
            try #require(
                await matchesAsync { if case .didBecomeActive = await ia.next() { true } else { false } },
                "first did not start")
            b.begin()
            let e = try #require(
                await matchedAsync { if case .didInvalidate(let e) = await ib.next() { e } else { nil } },
                "second was not refused")
            #expect(e.code == .readerSessionInvalidationErrorSystemIsBusy)
            a.invalidate()
            _ = await ia.next()
        }
    }
}

private final class Delegate: NSObject, NFCNDEFReaderSessionDelegate, @unchecked Sendable {
    func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {}
}

private func withLockDirectoryAsync(_ body: (String) async throws -> Void) async rethrows {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-locks-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try await body(dir)
}
