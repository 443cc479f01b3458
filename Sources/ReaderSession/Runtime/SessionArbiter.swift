import Glibc
import Synchronization

/// Decides whether a session may take a reader: a process-wide table plus an advisory
/// `flock(2)` lock file, so a second session in this process or in another process is
/// refused (Core NFC: one active reader session, else 203 `SystemIsBusy`).
///
/// Scope ``Scope/perReader`` (default) names the lock after the reader identifier
/// (`sim:desk` → `sim_desk-<fnv1a64>.lock`); ``Scope/hostWide`` uses one `host.lock`,
/// mimicking one phone with one NFC subsystem. The directory is the `lockDirectory`
/// argument, else `$NFCBENCH_LOCK_DIR`, else `$XDG_RUNTIME_DIR/nfcbench`, else
/// `/tmp/nfcbench-<uid>`; it is created with mode 0700. Locks are per open file
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
        return "/tmp/nfcbench-\(getuid())"
    }

    /// The lock key (file stem) for a reader identifier under this arbiter's scope.
    public func lockName(for reader: String) -> String {
        switch scope {
        case .hostWide: return "host"
        case .perReader:
            var stem = ""
            for u in reader.unicodeScalars.prefix(64) {
                let ok = (u >= "a" && u <= "z") || (u >= "A" && u <= "Z") || (u >= "0" && u <= "9")
                    || u == "." || u == "-"
                stem.unicodeScalars.append(ok ? u : "_")
            }
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            for b in reader.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
            let hex = String(h, radix: 16)
            return stem + "-" + String(repeating: "0", count: 16 - hex.count) + hex
        }
    }

    /// Tries to take `reader` without waiting. Wraps `open(2)` + `flock(LOCK_EX|LOCK_NB)`.
    public func acquire(reader: String) -> Acquisition {
        let key = lockName(for: reader)
        let inserted = held.withLock { $0.insert(key).inserted }
        guard inserted else { return .busy }
        guard let dir = lockDirectory else {
            return .acquired(ReaderLease(fd: -1) { [self] in _ = held.withLock { $0.remove(key) } })
        }
        if mkdir(dir, 0o700) != 0 && errno != EEXIST {
            let e = errno
            _ = held.withLock { $0.remove(key) }
            return .failed("mkdir \(dir): \(String(cString: strerror(e)))")
        }
        let path = dir + "/" + key + ".lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let e = errno
            _ = held.withLock { $0.remove(key) }
            return .failed("open \(path): \(String(cString: strerror(e)))")
        }
        var rc: Int32
        repeat { rc = flock(fd, LOCK_EX | LOCK_NB) } while rc != 0 && errno == EINTR
        if rc != 0 {
            let e = errno
            close(fd)
            _ = held.withLock { $0.remove(key) }
            return e == EWOULDBLOCK ? .busy : .failed("flock \(path): \(String(cString: strerror(e)))")
        }
        return .acquired(ReaderLease(fd: fd) { [self] in _ = held.withLock { $0.remove(key) } })
    }
}

/// A held reader: releasing it (or dropping it) unlocks and closes the lock file and frees
/// the arbiter's entry. `release()` is idempotent.
public final class ReaderLease: Sendable {
    private let state: Mutex<(fd: Int32, onRelease: (@Sendable () -> Void)?)>

    init(fd: Int32, onRelease: @escaping @Sendable () -> Void) {
        state = Mutex((fd, onRelease))
    }

    /// Unlocks (`flock(LOCK_UN)`), closes the lock file and frees the arbiter entry.
    public func release() {
        let (fd, cb) = state.withLock { s in
            defer { s = (-1, nil) }
            return s
        }
        if fd >= 0 {
            _ = flock(fd, LOCK_UN)
            close(fd)
        }
        cb?()
    }

    deinit { release() }
}
