import Foundation
import NFCBenchTestSupport
import Testing

@testable import ReaderSession
@testable import ReaderSessionLocks

/// Lock files: one per reader, there only while it is held; taking a lock checks that the
/// locked file is still the one at its path (unlink and flock race).
@Suite("Reader lock files' lifecycle")
struct LockFileLifecycleTests {
    static func lockDirectory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-lockfiles-\(UUID().uuidString)").path
    }

    static func readerLocks(_ dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [])
            .filter { $0.hasSuffix(".lock") && $0 != "host.lock" }.sorted()
    }

    @Test("A reader's lock file exists while it is held and is removed when released; host.lock stays")
    func removedOnRelease() throws {
        let dir = Self.lockDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = SessionArbiter(lockDirectory: dir)
        for reader in ["pn532_uart:/dev/pts/3", "pn532_uart:/dev/pts/4", "sim:desk"] {
            let lease = try #require(
                matched { if case .acquired(let lease) = a.acquire(reader: reader) { lease } else { nil } },
                "not acquired")
            #expect(Self.readerLocks(dir) == [a.lockName(for: reader) + ".lock"])
            lease.release()
            #expect(Self.readerLocks(dir).isEmpty, "released: \(Self.readerLocks(dir))")
        }
        #expect(FileManager.default.fileExists(atPath: dir + "/host.lock"))
    }

    @Test(
        "A descriptor opened on a lock file before its holder removed it locks a file no one else sees: the check refuses it, the reader still excludes"
    )
    func unlinkRace() throws {
        let dir = Self.lockDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = SessionArbiter(lockDirectory: dir)
        let b = SessionArbiter(lockDirectory: dir)
        let path = dir + "/" + a.lockName(for: "sim:race") + ".lock"
        let first = try #require(
            matched { if case .acquired(let first) = a.acquire(reader: "sim:race") { first } else { nil } },
            "not acquired")
        // Another process's open(2), just before the holder lets go.
        let stale = open(path, O_RDWR | O_CLOEXEC)
        #expect(stale >= 0)
        defer { close(stale) }
        first.release()
        // Its flock now succeeds, on a file that is no longer linked: without the check, two
        // holders at once.
        #expect(flock(stale, LOCK_EX | LOCK_NB) == 0)
        #expect(!SessionArbiter.isStillLinked(stale, path))
        let second = try #require(
            matched { if case .acquired(let second) = b.acquire(reader: "sim:race") { second } else { nil } },
            "the reader is free: the new file is taken")
        #expect(SessionArbiter.isStillLinked(stale, path) == false)
        try #require(
            matches { if case .busy = a.acquire(reader: "sim:race") { true } else { false } },
            "the reader is held: busy")
        second.release()
        #expect(Self.readerLocks(dir).isEmpty)
    }

    @Test("A lock file left by a process that could not remove it is reused and removed by the next holder")
    func leftoverReused() throws {
        let dir = Self.lockDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = SessionArbiter(lockDirectory: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let path = dir + "/" + a.lockName(for: "sim:left") + ".lock"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let lease = try #require(
            matched { if case .acquired(let lease) = a.acquire(reader: "sim:left") { lease } else { nil } },
            "not acquired")
        lease.release()
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
