import Dispatch
import Foundation
import Glibc
public import NFCTrace
import Synchronization

/// Decides whether a session may take a reader: a process-wide table plus an advisory
/// `flock(2)` lock file, so a second session in this process or in another process is
/// refused (Core NFC: one active reader session, else 203 `SystemIsBusy`).
///
/// Every session locks its reader's file (`sim:desk` → `sim_desk-<fnv1a64>.lock`,
/// exclusive; removed when the lease ends, see "lock files' lifecycle" below) and `host.lock`: shared under ``Scope/perReader`` (default), exclusive under
/// ``Scope/hostWide``, which mimics one phone with one NFC subsystem. So a host-wide session
/// excludes every other session on the host, and per-reader sessions exclude each other
/// only on the same reader. The directory is the `lockDirectory`
/// argument, else `$NFCBENCH_LOCK_DIR`, else `$XDG_RUNTIME_DIR/nfcbench`, else
/// `/tmp/nfcbench-<euid>`. Everything that keeps a file there goes through
/// ``prepareLockDirectory(_:)`` first: the folder is used only when it is a directory (not a
/// link) owned by the effective user and writable by no one else (``/NFCTrace/PrivateFolder``; made
/// 0700 when missing), so another local user can't hold every reader's lock or point lock
/// names elsewhere; lock files are opened with `O_NOFOLLOW`. Locks are per open file
/// description, so two arbiters in one process exclude each other too.
///
/// Under the busy policy `queue` (``ReaderSystemModel/BusyPolicy``) a refused session waits
/// with ``enqueue(reader:poll:onGranted:)``: in first-in, first-out order across processes, by
/// numbered tickets in `<lock name>.queue/` (each held with `flock` by its waiter, so a
/// dead waiter's ticket is seen and dropped): `flock` alone does not wake waiters in order.
/// The thermal model's state lives beside the locks (``heatFilePath(for:)``).
public final class SessionArbiter: Sendable {
    /// What a lock covers.
    public enum Scope: Sendable, Hashable {
        case perReader
        case hostWide
    }

    /// The answer to ``acquire(reader:)``.
    public enum Acquisition: Sendable {
        /// The reader is ours until the lease is released.
        case acquired(ReaderLease)
        /// Another session (here or in another process) holds it.
        case busy
        /// The lock file could not be opened or locked; the text says why (errno).
        case failed(String)
    }

    public let scope: Scope
    /// The lock directory, or `nil` for an in-process arbiter without file locks.
    public let lockDirectory: String?
    /// The lock names held here (a few at most; an array, not a set: a command's first lock
    /// then needs no run-time conformance lookup, which scans every conformance in the program).
    private let held = Mutex<[String]>([])
    /// In-process arbiters: waiters per lock key, in arrival order.
    private let waiters = Mutex<[String: [(id: UInt64, grant: @Sendable (ReaderLease) -> Void)]]>([:])
    private let nextWaiter = Atomic<UInt64>(0)

    /// - Parameters:
    ///   - scope: per reader (default) or host-wide.
    ///   - lockDirectory: where lock files live; `nil` = the default chain above.
    ///   - fileLocks: false for an in-process arbiter only (no files; for simulations).
    public init(scope: Scope = .perReader, lockDirectory: String? = nil, fileLocks: Bool = true) {
        self.scope = scope
        self.lockDirectory = fileLocks ? (lockDirectory ?? Self.defaultLockDirectory()) : nil
    }

    /// The process-wide arbiter (per-reader scope, default lock directory).
    public static let shared = SessionArbiter()

    /// The lock directory chosen from the environment (see the type's documentation).
    public static func defaultLockDirectory() -> String {
        if let d = getenv("NFCBENCH_LOCK_DIR").map({ String(cString: $0) }), !d.isEmpty { return d }
        if let x = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), !x.isEmpty { return x + "/nfcbench" }
        return "/tmp/nfcbench-\(geteuid())"
    }

    /// The one check of the lock folder, which every user of it calls before touching a file
    /// there (the arbiter's lock files, anything else kept beside them): `directory`, else
    /// ``defaultLockDirectory()``, made (0700, missing parents too) when missing and checked by the
    /// ``/NFCTrace/PrivateFolder`` rule. Returns the folder. Throws ``/NFCTrace/PrivateFolderError`` naming the
    /// folder and what is wrong (a command exits 69 on it).
    @discardableResult
    public static func prepareLockDirectory(_ directory: String? = nil) throws(PrivateFolderError) -> String {
        try PrivateFolder.prepare(directory ?? defaultLockDirectory(), createParents: true)
    }

    /// `@<instance>` for a `pcsc:` reader when `$NFCBENCH_PCSC_INSTANCE` names the pcscd that
    /// serves it, else "". A PC/SC reader's name is unique only within its pcscd: every private
    /// pcscd (`scripts/with-pcscd`, which exports a fresh instance, and so the demo) calls its
    /// vpcd reader "Virtual PCD 00 00", and two private benches must not refuse each other.
    /// libnfc devices and the system pcscd's readers keep host-wide names.
    static func pcscInstance(of reader: String) -> String {
        guard reader.hasPrefix("pcsc:"), let v = getenv("NFCBENCH_PCSC_INSTANCE"), v.pointee != 0 else { return "" }
        return "@" + String(cString: v)
    }

    /// The lock key (file stem) for a reader identifier under this arbiter's scope.
    public func lockName(for reader: String) -> String {
        switch scope {
        case .hostWide: return "host"
        case .perReader:
            var stem = ""
            for u in reader.unicodeScalars.prefix(64) {
                let ok =
                    (u >= "a" && u <= "z") || (u >= "A" && u <= "Z") || (u >= "0" && u <= "9")
                    || u == "." || u == "-"
                stem.unicodeScalars.append(ok ? u : "_")
            }
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            for b in (reader + Self.pcscInstance(of: reader)).utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
            let hex = String(h, radix: 16)
            return stem + "-" + String(repeating: "0", count: 16 - hex.count) + hex
        }
    }

    /// Where the thermal model's state for `reader` is kept between processes: beside its
    /// lock, `<lock folder>/<lock name>.heat` (so heat follows the lock scope); `nil` for an
    /// in-process arbiter (heat then stays in its ``NFCReaderSystem``).
    public func heatFilePath(for reader: String) -> String? {
        guard let dir = lockDirectory else { return nil }
        guard (try? Self.prepareLockDirectory(dir)) != nil else { return nil }
        return dir + "/" + lockName(for: reader) + ".heat"
    }

    /// Tries to take `reader` without waiting. Checks the lock folder
    /// (``prepareLockDirectory(_:)``), then wraps `open(2)` (`O_NOFOLLOW`) + `flock(LOCK_NB)`
    /// on the host lock (shared or exclusive by scope), then on the reader's lock (exclusive).
    public func acquire(reader: String) -> Acquisition {
        let key = lockName(for: reader)
        let inserted = held.withLock { h in
            guard !h.contains(key) else { return false }
            h.append(key)
            return true
        }
        guard inserted else { return .busy }
        let free: @Sendable () -> Void = { [self] in released(key) }
        guard let dir = lockDirectory else { return .acquired(ReaderLease(fds: [], onRelease: free)) }
        do { try Self.prepareLockDirectory(dir) } catch {
            free()
            return .failed("lock folder \(error)")
        }
        var fds: [Int32] = []
        let readerLock = dir + "/" + SessionArbiter(scope: .perReader, fileLocks: false).lockName(for: reader) + ".lock"
        let locks = [(dir + "/host.lock", scope == .hostWide), (readerLock, true)]
        for (path, exclusive) in locks {
            let (fd, refusal) = Self.lockLinked(path, exclusive: exclusive)
            guard let fd else {
                for fd in fds {
                    _ = flock(fd, LOCK_UN)
                    close(fd)
                }
                free()
                return refusal ?? .busy
            }
            fds.append(fd)
        }
        return .acquired(ReaderLease(fds: fds, removing: [(fds[1], readerLock)], onRelease: free))
    }

    // MARK: lock files' lifecycle
    //
    // One lock file per reader, named by the reader (``lockName(for:)``; a pty by the device it
    // resolves to), there only while the reader is held: a lease removes its reader's file as it
    // releases it, while it still holds the lock, and a process dying by a signal's default removes
    // those it holds (``removeHeldLockFilesBeforeExit()``). A file left by a process killed with
    // SIGKILL is removed by the next lease on that reader. `host.lock` is one file and stays.
    // Unlinking races with `open` + `flock` in another process, so a lock is only taken once the
    // locked file is still the one at its path (``isStillLinked(_:_:)``).

    /// ``lock(_:exclusive:)`` until the locked file is the one linked at `path`: a holder that
    /// released and removed it between this `open` and this `flock` leaves a lock on a file no
    /// one else can open; then the new file is tried.
    private static func lockLinked(_ path: String, exclusive: Bool) -> (Int32?, Acquisition?) {
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

    /// Waits for `reader` in first-in, first-out order and calls `onGranted` (on another
    /// thread) with the lease once it is this waiter's turn and the reader is free. An
    /// in-process arbiter hands the reader over the moment the holder releases it; a
    /// file-lock arbiter takes a numbered ticket in `<lock name>.queue/` and checks every
    /// `poll` whether its ticket is the first live one and the locks can be taken.
    public func enqueue(
        reader: String, poll: Duration = .milliseconds(20), onGranted: @escaping @Sendable (ReaderLease) -> Void
    ) -> ReaderQueueTicket {
        let key = lockName(for: reader)
        guard let dir = lockDirectory else {
            let id = nextWaiter.add(1, ordering: .relaxed).newValue
            waiters.withLock { $0[key, default: []].append((id, onGranted)) }
            let ticket = ReaderQueueTicket { [self] in
                waiters.withLock { w in w[key]?.removeAll { $0.id == id } }
            }
            // The reader may have been released between the refusal and now.
            if held.withLock({ !$0.contains(key) }) { released(key, freeFirst: false) }
            return ticket
        }
        let waiter = FileQueueWaiter(
            arbiter: self, reader: reader, folder: dir + "/" + key + ".queue", poll: poll, onGranted: onGranted)
        waiter.start()
        return ReaderQueueTicket { waiter.cancel() }
    }

    /// A lease on `key` ended (or the reader may be free): an in-process arbiter hands it to
    /// its first waiter.
    private func released(_ key: String, freeFirst: Bool = true) {
        let next: (ReaderLease, @Sendable (ReaderLease) -> Void)? = held.withLock { h in
            if freeFirst { h.removeAll { $0 == key } }
            guard lockDirectory == nil, !h.contains(key) else { return nil }
            guard
                let w = waiters.withLock({ w -> (id: UInt64, grant: @Sendable (ReaderLease) -> Void)? in
                    guard var list = w[key], !list.isEmpty else { return nil }
                    let first = list.removeFirst()
                    w[key] = list
                    return first
                })
            else { return nil }
            h.append(key)
            return (ReaderLease(fds: [], onRelease: { [self] in released(key) }), w.grant)
        }
        if let (lease, grant) = next { grant(lease) }
    }

    /// A locked file descriptor, or why not (`.busy` or `.failed`).
    private static func lock(_ path: String, exclusive: Bool) -> (Int32?, Acquisition?) {
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

/// A held reader: releasing it (or dropping it) unlocks and closes the lock file and frees
/// the arbiter's entry. `release()` is idempotent.
public final class ReaderLease: Sendable {
    private let state: Mutex<(fds: [Int32], onRelease: (@Sendable () -> Void)?)>

    /// - Parameter removing: the lock files (by descriptor) the release removes: the reader's own.
    init(fds: [Int32], removing: [(Int32, String)] = [], onRelease: @escaping @Sendable () -> Void) {
        state = Mutex((fds, onRelease))
        if !removing.isEmpty {
            SessionArbiter.heldLockFiles.withLock { held in
                for (fd, path) in removing {
                    held.removeAll { $0.fd == fd }
                    held.append((fd, path))
                }
            }
        }
    }

    /// Removes the reader's lock file (still holding it), unlocks (`flock(LOCK_UN)`), closes
    /// the lock files and frees the arbiter entry.
    public func release() {
        let (fds, cb) = state.withLock { s in
            defer { s = ([], nil) }
            return s
        }
        for fd in fds {
            if let path = SessionArbiter.heldLockFiles.withLock({ held -> String? in
                guard let i = held.firstIndex(where: { $0.fd == fd }) else { return nil }
                return held.remove(at: i).path
            }),
                SessionArbiter.isStillLinked(fd, path)
            {
                unlink(path)
            }
            _ = flock(fd, LOCK_UN)
            close(fd)
        }
        cb?()
    }

    deinit { release() }
}

/// A place in a reader's queue (``SessionArbiter/enqueue(reader:poll:onGranted:)``);
/// `cancel()` leaves it (idempotent). A grant already under way may still arrive.
public final class ReaderQueueTicket: Sendable {
    private let onCancel: Mutex<(@Sendable () -> Void)?>
    init(onCancel: @escaping @Sendable () -> Void) { self.onCancel = Mutex(onCancel) }
    public func cancel() {
        let c = onCancel.withLock { c in
            defer { c = nil }
            return c
        }
        c?()
    }
}

/// One waiter of a file-lock arbiter's queue, on a thread of its own (it blocks between
/// checks). Its ticket is `<queue folder>/<20-digit number>-<pid>`, held with `flock` while
/// it waits; numbers come from `<queue folder>/next` under `flock`. A ticket whose `flock`
/// can be taken belongs to a waiter that died: whoever sees it removes it.
private final class FileQueueWaiter: @unchecked Sendable {
    let arbiter: SessionArbiter
    let reader: String
    let folder: String
    let poll: Duration
    let onGranted: @Sendable (ReaderLease) -> Void
    private let stop = DispatchSemaphore(value: 0)
    private let cancelled = Atomic<Bool>(false)

    init(
        arbiter: SessionArbiter, reader: String, folder: String, poll: Duration,
        onGranted: @escaping @Sendable (ReaderLease) -> Void
    ) {
        self.arbiter = arbiter
        self.reader = reader
        self.folder = folder
        self.poll = poll
        self.onGranted = onGranted
    }

    func start() {
        let t = Thread { [self] in run() }
        t.name = "nfcbench.reader-queue"
        t.start()
    }

    func cancel() {
        cancelled.store(true, ordering: .releasing)
        stop.signal()
    }

    private func run() {
        guard mkdir(folder, 0o700) == 0 || errno == EEXIST, let number = takeNumber() else { return }
        let name = String(repeating: "0", count: max(0, 20 - String(number).count)) + "\(number)-\(getpid())"
        let path = folder + "/" + name
        // Locked before it has its name, so no one takes a fresh ticket for a dead one.
        let fd = open(path + ".new", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        _ = flock(fd, LOCK_EX)
        guard rename(path + ".new", path) == 0 else {
            unlink(path + ".new")
            close(fd)
            return
        }
        defer {
            unlink(path)
            _ = flock(fd, LOCK_UN)
            close(fd)
        }
        let ns = poll.components.seconds * 1_000_000_000 + poll.components.attoseconds / 1_000_000_000
        while !cancelled.load(ordering: .acquiring) {
            if isFirst(name), case .acquired(let lease) = arbiter.acquire(reader: reader) {
                if cancelled.load(ordering: .acquiring) {
                    lease.release()
                } else {
                    onGranted(lease)
                }
                return
            }
            _ = stop.wait(timeout: .now() + .nanoseconds(Int(max(1_000_000, ns))))
        }
    }

    /// The next ticket number, from `next` under an exclusive `flock`.
    private func takeNumber() -> UInt64? {
        let fd = open(folder + "/next", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        _ = flock(fd, LOCK_EX)
        defer { _ = flock(fd, LOCK_UN) }
        var buf = [UInt8](repeating: 0, count: 32)
        let n = pread(fd, &buf, buf.count, 0)
        let current =
            n > 0
            ? UInt64(String(decoding: buf[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
            : 0
        let text = Array("\(current + 1)\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return current
    }

    /// True when no live ticket is ahead of `name`; stale tickets ahead are removed.
    private func isFirst(_ name: String) -> Bool {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return false }
        for other in entries.filter({ $0 != "next" && !$0.hasSuffix(".new") && $0 < name }).sorted() {
            let path = folder + "/" + other
            let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                unlink(path)  // its waiter is gone
                _ = flock(fd, LOCK_UN)
                continue
            }
            return false
        }
        return true
    }
}
