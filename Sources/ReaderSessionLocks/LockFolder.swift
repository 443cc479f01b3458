import Foundation
import Glibc
public import NFCTrace
public import ReaderSession
import Synchronization

/// The cross-process half of the session arbiter (``/ReaderSession/CrossProcessLocks``) as
/// files in one private folder: advisory `flock(2)` lock files, so a session in another
/// process is refused (203), first-come queue tickets, and the thermal model's heat files.
///
/// Every lease locks its reader's file (`sim:desk` → `sim_desk-<fnv1a64>.lock`, exclusive;
/// removed when the lease ends, see "lock files' lifecycle" below) and `host.lock`: shared for
/// a per-reader arbiter, exclusive for a host-wide one. The folder is the `directory` argument,
/// else `$NFCBENCH_LOCK_DIR`, else `$XDG_RUNTIME_DIR/nfcbench`, else `/tmp/nfcbench-<euid>`.
/// Everything that keeps a file there goes through ``prepare(_:)`` first: the folder is used
/// only when it is a directory (not a link) owned by the effective user and writable by no one
/// else (``/NFCTrace/PrivateFolder``; made 0700 when missing), so another local user can't hold
/// every reader's lock or point lock names elsewhere; lock files are opened with `O_NOFOLLOW`.
/// Locks are per open file description, so two arbiters in one process exclude each other too.
///
/// A queued waiter (``enqueue(_:poll:attempt:onGranted:)``) holds a numbered ticket in
/// `<lock name>.queue/` with `flock`, so waiters are served in first-in, first-out order across
/// processes and a dead waiter's ticket is seen and dropped: `flock` alone does not wake
/// waiters in order. The thermal model's state lives beside the locks (``heatFilePath(forLockName:)``).
///
/// The `nfcbench` command and NFCBenchKit install one
/// (``/ReaderSession/SessionArbiter/installCrossProcessLocks(_:)``) before they open a reader.
public final class LockFolder: CrossProcessLocks {
    /// The folder the files live in (checked on each use, not at creation).
    public let directory: String

    /// - Parameter directory: where the files live; `nil` = ``defaultDirectory()``, read now.
    public init(directory: String? = nil) {
        self.directory = directory ?? Self.defaultDirectory()
    }

    /// The lock folder chosen from the environment (see the type's documentation).
    public static func defaultDirectory() -> String {
        if let d = getenv("NFCBENCH_LOCK_DIR").map({ String(cString: $0) }), !d.isEmpty { return d }
        if let x = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), !x.isEmpty { return x + "/nfcbench" }
        return "/tmp/nfcbench-\(geteuid())"
    }

    /// The one check of the lock folder, which every user of it calls before touching a file
    /// there (the lock files, anything else kept beside them): `directory`, else
    /// ``defaultDirectory()``, made (0700, missing parents too) when missing and checked by the
    /// ``/NFCTrace/PrivateFolder`` rule. Returns the folder. Throws ``/NFCTrace/PrivateFolderError``
    /// naming the folder and what is wrong (a command exits 69 on it).
    @discardableResult
    public static func prepare(_ directory: String? = nil) throws(PrivateFolderError) -> String {
        try PrivateFolder.prepare(directory ?? defaultDirectory(), createParents: true)
    }

    /// Where the thermal model's state for the lock named `key` is kept between processes:
    /// `<folder>/<key>.heat`; `nil` when the folder is refused.
    public func heatFilePath(forLockName key: String) -> String? {
        guard (try? Self.prepare(directory)) != nil else { return nil }
        return directory + "/" + key + ".heat"
    }

    public func thermalStore(_ key: String) -> (any ThermalStateStore)? {
        heatFilePath(forLockName: key).map { HeatFile(path: $0) }
    }

    /// Checks the folder (``prepare(_:)``), then wraps `open(2)` (`O_NOFOLLOW`) +
    /// `flock(LOCK_NB)` on the host lock (shared or exclusive), then on the reader's lock (exclusive).
    public func lock(reader: String, hostWide: Bool) -> CrossProcessLockAttempt {
        do { try Self.prepare(directory) } catch { return .failed("lock folder \(error)") }
        var fds: [Int32] = []
        let readerLock = directory + "/" + reader + ".lock"
        let locks = [(directory + "/host.lock", hostWide), (readerLock, true)]
        for (path, exclusive) in locks {
            let (fd, refusal) = Self.lockLinked(path, exclusive: exclusive)
            guard let fd else {
                for fd in fds {
                    _ = flock(fd, LOCK_UN)
                    close(fd)
                }
                return refusal ?? .busy
            }
            fds.append(fd)
        }
        let held = HeldLocks(fds: fds, removing: (fds[1], readerLock))
        return .locked(release: { held.release() })
    }

    public func enqueue(
        _ key: String, poll: Duration, attempt: @escaping @Sendable () -> ReaderLease?,
        onGranted: @escaping @Sendable (ReaderLease) -> Void
    ) -> ReaderQueueTicket {
        let waiter = FileQueueWaiter(
            folder: directory + "/" + key + ".queue", poll: poll, attempt: attempt, onGranted: onGranted)
        waiter.start()
        return ReaderQueueTicket { waiter.cancel() }
    }

    // MARK: lock files' lifecycle
    //
    // One lock file per reader, named by the reader (``/ReaderSession/SessionArbiter/readerLockName(for:)``;
    // a pty by the device it resolves to), there only while the reader is held: a lease removes its
    // reader's file as it releases it, while it still holds the lock, and a process dying by a
    // signal's default removes those it holds (``removeHeldLockFilesBeforeExit()``). A file left by
    // a process killed with SIGKILL is removed by the next lease on that reader. `host.lock` is one
    // file and stays. Unlinking races with `open` + `flock` in another process, so a lock is only
    // taken once the locked file is still the one at its path (``isStillLinked(_:_:)``).

    /// ``lock(_:exclusive:)`` until the locked file is the one linked at `path`: a holder that
    /// released and removed it between this `open` and this `flock` leaves a lock on a file no
    /// one else can open; then the new file is tried.
    private static func lockLinked(_ path: String, exclusive: Bool) -> (Int32?, CrossProcessLockAttempt?) {
        for _ in 0..<32 {
            let (fd, refusal) = lock(path, exclusive: exclusive)
            guard let fd else { return (nil, refusal) }
            if isStillLinked(fd, path) { return (fd, nil) }
            _ = flock(fd, LOCK_UN)
            close(fd)
        }
        return (nil, .failed("\(path) keeps being removed while it is locked"))
    }

    /// True when `fd` is the file linked at `path` (same device and inode).
    static func isStillLinked(_ fd: Int32, _ path: String) -> Bool {
        var open = stat()
        var linked = stat()
        guard fstat(fd, &open) == 0, lstat(path, &linked) == 0 else { return false }
        return open.st_dev == linked.st_dev && open.st_ino == linked.st_ino
    }

    /// Lock files this process holds and removes when it lets them go (descriptor, path).
    static let heldLockFiles = Mutex<[(fd: Int32, path: String)]>([])

    /// Removes every reader lock file this process holds; for a process about to die by a
    /// signal (the locks themselves go with the process).
    public static func removeHeldLockFilesBeforeExit() {
        for (fd, path) in heldLockFiles.withLock({ $0 }) where isStillLinked(fd, path) { unlink(path) }
    }

    /// A locked file descriptor, or why not (`.busy` or `.failed`).
    private static func lock(_ path: String, exclusive: Bool) -> (Int32?, CrossProcessLockAttempt?) {
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return (nil, .failed("open \(path): \(String(cString: strerror(errno)))")) }
        var rc: Int32
        repeat { rc = flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) } while rc != 0 && errno == EINTR
        if rc != 0 {
            let e = errno
            close(fd)
            return (nil, e == EWOULDBLOCK ? .busy : .failed("flock \(path): \(String(cString: strerror(e)))"))
        }
        return (fd, nil)
    }
}

/// The lock files of one lease: releasing removes the reader's file (still holding it),
/// unlocks (`flock(LOCK_UN)`) and closes them. Idempotent.
private final class HeldLocks: Sendable {
    private let fds: Mutex<[Int32]>

    init(fds: [Int32], removing: (Int32, String)) {
        self.fds = Mutex(fds)
        LockFolder.heldLockFiles.withLock { held in
            held.removeAll { $0.fd == removing.0 }
            held.append((removing.0, removing.1))
        }
    }

    func release() {
        let fds = self.fds.withLock { f in
            defer { f = [] }
            return f
        }
        for fd in fds {
            if let path = LockFolder.heldLockFiles.withLock({ held -> String? in
                guard let i = held.firstIndex(where: { $0.fd == fd }) else { return nil }
                return held.remove(at: i).path
            }),
                LockFolder.isStillLinked(fd, path)
            {
                unlink(path)
            }
            _ = flock(fd, LOCK_UN)
            close(fd)
        }
    }
}
