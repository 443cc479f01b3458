import Glibc
public import NFCTrace
import Synchronization

/// Decides whether a session may take a reader: a process-wide table plus an advisory
/// `flock(2)` lock file, so a second session in this process or in another process is
/// refused (Core NFC: one active reader session, else 203 `SystemIsBusy`).
///
/// Every session locks its reader's file (`sim:desk` → `sim_desk-<fnv1a64>.lock`,
/// exclusive) and `host.lock`: shared under ``Scope/perReader`` (default), exclusive under
/// ``Scope/hostWide``, which mimics one phone with one NFC subsystem. So a host-wide session
/// excludes every other session on the host, and per-reader sessions exclude each other
/// only on the same reader. The directory is the `lockDirectory`
/// argument, else `$NFCBENCH_LOCK_DIR`, else `$XDG_RUNTIME_DIR/nfcbench`, else
/// `/tmp/nfcbench-<euid>`. Everything that keeps a file there goes through
/// ``prepareLockDirectory(_:)`` first: the folder is used only when it is a directory (not a
/// link) owned by the effective user and writable by no one else (``PrivateFolder``; made
/// 0700 when missing), so another local user can't hold every reader's lock or point lock
/// names elsewhere; lock files are opened with `O_NOFOLLOW`. Locks are per open file
/// description, so two arbiters in one process exclude each other too.
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
    private let held = Mutex<Set<String>>([])

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
    /// ``PrivateFolder`` rule. Returns the folder. Throws ``PrivateFolderError`` naming the
    /// folder and what is wrong (a command exits 69 on it).
    @discardableResult
    public static func prepareLockDirectory(_ directory: String? = nil) throws(PrivateFolderError) -> String {
        try PrivateFolder.prepare(directory ?? defaultLockDirectory(), createParents: true)
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
            for b in reader.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
            let hex = String(h, radix: 16)
            return stem + "-" + String(repeating: "0", count: 16 - hex.count) + hex
        }
    }

    /// Tries to take `reader` without waiting. Checks the lock folder
    /// (``prepareLockDirectory(_:)``), then wraps `open(2)` (`O_NOFOLLOW`) + `flock(LOCK_NB)`
    /// on the host lock (shared or exclusive by scope), then on the reader's lock (exclusive).
    public func acquire(reader: String) -> Acquisition {
        let key = lockName(for: reader)
        let inserted = held.withLock { $0.insert(key).inserted }
        guard inserted else { return .busy }
        let free: @Sendable () -> Void = { [self] in _ = held.withLock { $0.remove(key) } }
        guard let dir = lockDirectory else { return .acquired(ReaderLease(fds: [], onRelease: free)) }
        do { try Self.prepareLockDirectory(dir) } catch {
            free()
            return .failed("lock folder \(error)")
        }
        var fds: [Int32] = []
        let locks = [
            ("host", scope == .hostWide),
            (SessionArbiter(scope: .perReader, fileLocks: false).lockName(for: reader), true),
        ]
        for (stem, exclusive) in locks {
            let (fd, refusal) = Self.lock(dir + "/" + stem + ".lock", exclusive: exclusive)
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
        return .acquired(ReaderLease(fds: fds, onRelease: free))
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

    init(fds: [Int32], onRelease: @escaping @Sendable () -> Void) {
        state = Mutex((fds, onRelease))
    }

    /// Unlocks (`flock(LOCK_UN)`), closes the lock files and frees the arbiter entry.
    public func release() {
        let (fds, cb) = state.withLock { s in
            defer { s = ([], nil) }
            return s
        }
        for fd in fds {
            _ = flock(fd, LOCK_UN)
            close(fd)
        }
        cb?()
    }

    deinit { release() }
}
