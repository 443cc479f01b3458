import Glibc
import Synchronization

/// Decides whether a session may take a reader: a table of this process's leases, plus the
/// host's cross-process locks (``CrossProcessLocks``) when it installed them, so a second
/// session in this process or in another process is refused (Core NFC: one active reader
/// session, else 203 `SystemIsBusy`).
///
/// Every session takes its reader (`sim:desk` → lock name `sim_desk-<fnv1a64>`) and the host:
/// shared under ``Scope/perReader`` (default), exclusive under ``Scope/hostWide``, which mimics
/// one phone with one NFC subsystem. So a host-wide session excludes every other session on
/// the host, and per-reader sessions exclude each other only on the same reader.
///
/// ReaderSession does no file I/O: the cross-process half is the host's. The `nfcbench`
/// command and NFCBenchKit install `ReaderSessionLocks.LockFolder` (`flock(2)` lock files,
/// first-come queue tickets and heat files in a private folder,
/// `$NFCBENCH_LOCK_DIR` by default) before they open a reader; ``shared`` and arbiters made
/// without `crossProcessLocks:` use what is installed then. Without it an arbiter excludes the
/// sessions of this process only, as the conformance harness wants (`fileLocks: false`).
///
/// Under the busy policy `queue` (``ReaderSystemModel/BusyPolicy``) a refused session waits
/// with ``enqueue(reader:poll:onGranted:)``: in first-in, first-out order, across processes
/// through the cross-process locks' queue.
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
        /// The lock could not be taken; the text says why (a refused lock folder, errno).
        case failed(String)
    }

    public let scope: Scope
    /// The cross-process locks taken after this process's own table; `nil`: this process only.
    public let crossProcessLocks: (any CrossProcessLocks)?
    /// The lock names held here (a few at most; an array, not a set: a command's first lock
    /// then needs no run-time conformance lookup, which scans every conformance in the program).
    private let held = Mutex<[String]>([])
    /// In-process arbiters: waiters per lock key, in arrival order.
    private let waiters = Mutex<[String: [(id: UInt64, grant: @Sendable (ReaderLease) -> Void)]]>([:])
    private let nextWaiter = Atomic<UInt64>(0)

    /// - Parameters:
    ///   - scope: per reader (default) or host-wide.
    ///   - crossProcessLocks: the locks other processes see; by default the ones the host
    ///     installed (``installedCrossProcessLocks``), none when it installed none.
    public init(
        scope: Scope = .perReader,
        crossProcessLocks: (any CrossProcessLocks)? = SessionArbiter.installedCrossProcessLocks
    ) {
        self.scope = scope
        self.crossProcessLocks = crossProcessLocks
    }

    /// `fileLocks: false`: an in-process arbiter (for simulations and harnesses); `true`: with
    /// the host's installed cross-process locks, as ``init(scope:crossProcessLocks:)`` by default.
    public convenience init(scope: Scope = .perReader, fileLocks: Bool) {
        self.init(scope: scope, crossProcessLocks: fileLocks ? Self.installedCrossProcessLocks : nil)
    }

    private struct Installed: Sendable {
        var locks: (any CrossProcessLocks)?
        var shared: SessionArbiter?
    }
    private static let installed = Mutex(Installed())

    /// The process-wide arbiter (per-reader scope, the installed cross-process locks).
    public static var shared: SessionArbiter {
        installed.withLock { s in
            if let a = s.shared { return a }
            let a = SessionArbiter(scope: .perReader, crossProcessLocks: s.locks)
            s.shared = a
            return a
        }
    }

    /// The cross-process locks the host installed (``installCrossProcessLocks(_:)``), if any.
    public static var installedCrossProcessLocks: (any CrossProcessLocks)? { installed.withLock { $0.locks } }

    /// Makes `locks` the cross-process locks of ``shared`` and of arbiters made from now on
    /// without `crossProcessLocks:` (`nil` removes them). A host installs them once, before it
    /// opens a reader; arbiters made before keep what they had.
    public static func installCrossProcessLocks(_ locks: (any CrossProcessLocks)?) {
        installed.withLock { $0 = Installed(locks: locks, shared: nil) }
    }

    /// Installs `make()` unless some cross-process locks are installed already, and returns
    /// the installed ones (what a library that opens real readers calls: a host's own choice stays).
    @discardableResult
    public static func installCrossProcessLocksIfNone(_ make: () -> any CrossProcessLocks) -> any CrossProcessLocks {
        installed.withLock { s in
            if let l = s.locks { return l }
            let l = make()
            s = Installed(locks: l, shared: nil)
            return l
        }
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

    /// The lock key for a reader identifier under this arbiter's scope: `host` host-wide, else
    /// ``readerLockName(for:)``.
    public func lockName(for reader: String) -> String {
        switch scope {
        case .hostWide: "host"
        case .perReader: Self.readerLockName(for: reader)
        }
    }

    /// The reader's own lock name under either scope: its identifier's letters, digits, `.` and
    /// `-` (others become `_`, 64 at most), a dash and the 16-digit FNV-1a 64 of the identifier
    /// (with its pcscd instance, `$NFCBENCH_PCSC_INSTANCE`): `sim:desk` → `sim_desk-<fnv1a64>`.
    public static func readerLockName(for reader: String) -> String {
        var stem = ""
        for u in reader.unicodeScalars.prefix(64) {
            let ok =
                (u >= "a" && u <= "z") || (u >= "A" && u <= "Z") || (u >= "0" && u <= "9")
                || u == "." || u == "-"
            stem.unicodeScalars.append(ok ? u : "_")
        }
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in (reader + pcscInstance(of: reader)).utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        let hex = String(h, radix: 16)
        return stem + "-" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Where the thermal model's state for `reader` is kept between processes: the
    /// cross-process locks' store for its lock name (so heat follows the lock scope); `nil`
    /// for an in-process arbiter (heat then stays in its ``NFCReaderSystem``).
    public func thermalStore(for reader: String) -> (any ThermalStateStore)? {
        crossProcessLocks?.thermalStore(lockName(for: reader))
    }

    /// Tries to take `reader` without waiting: this process's table first, then (with
    /// cross-process locks) the reader's lock, exclusive, and the host's, shared or exclusive by scope.
    public func acquire(reader: String) -> Acquisition {
        let key = lockName(for: reader)
        let inserted = held.withLock { h in
            guard !h.contains(key) else { return false }
            h.append(key)
            return true
        }
        guard inserted else { return .busy }
        let free: @Sendable () -> Void = { [self] in released(key) }
        guard let crossProcessLocks else { return .acquired(ReaderLease(onRelease: free)) }
        switch crossProcessLocks.lock(reader: Self.readerLockName(for: reader), hostWide: scope == .hostWide) {
        case .locked(let unlock):
            return .acquired(
                ReaderLease {
                    unlock()
                    free()
                })
        case .busy:
            free()
            return .busy
        case .failed(let why):
            free()
            return .failed(why)
        }
    }

    /// Waits for `reader` in first-in, first-out order and calls `onGranted` (on another
    /// thread) with the lease once it is this waiter's turn and the reader is free. An
    /// in-process arbiter hands the reader over the moment the holder releases it; with
    /// cross-process locks the waiter takes its place in their queue
    /// (``CrossProcessLocks/enqueue(_:poll:attempt:onGranted:)``), which tries every `poll`.
    public func enqueue(
        reader: String, poll: Duration = .milliseconds(20), onGranted: @escaping @Sendable (ReaderLease) -> Void
    ) -> ReaderQueueTicket {
        let key = lockName(for: reader)
        guard let crossProcessLocks else {
            let id = nextWaiter.add(1, ordering: .relaxed).newValue
            waiters.withLock { $0[key, default: []].append((id, onGranted)) }
            let ticket = ReaderQueueTicket { [self] in
                waiters.withLock { w in w[key]?.removeAll { $0.id == id } }
            }
            // The reader may have been released between the refusal and now.
            if held.withLock({ !$0.contains(key) }) { released(key, freeFirst: false) }
            return ticket
        }
        return crossProcessLocks.enqueue(
            key, poll: poll,
            attempt: { [self] in
                if case .acquired(let lease) = acquire(reader: reader) { lease } else { nil }
            }, onGranted: onGranted)
    }

    /// A lease on `key` ended (or the reader may be free): an in-process arbiter hands it to
    /// its first waiter.
    private func released(_ key: String, freeFirst: Bool = true) {
        let next: (ReaderLease, @Sendable (ReaderLease) -> Void)? = held.withLock { h in
            if freeFirst { h.removeAll { $0 == key } }
            guard crossProcessLocks == nil, !h.contains(key) else { return nil }
            guard
                let w = waiters.withLock({ w -> (id: UInt64, grant: @Sendable (ReaderLease) -> Void)? in
                    guard var list = w[key], !list.isEmpty else { return nil }
                    let first = list.removeFirst()
                    w[key] = list
                    return first
                })
            else { return nil }
            h.append(key)
            return (ReaderLease(onRelease: { [self] in released(key) }), w.grant)
        }
        if let (lease, grant) = next { grant(lease) }
    }
}

/// A held reader: releasing it (or dropping it) lets go of its locks (the cross-process ones
/// first) and frees the arbiter's entry. `release()` is idempotent.
public final class ReaderLease: Sendable {
    private let onRelease: RunOnce

    /// A lease that runs `onRelease` once, on the first ``release()`` or when it is dropped.
    public init(onRelease: @escaping @Sendable () -> Void) { self.onRelease = RunOnce(onRelease) }

    /// Lets go of the reader (idempotent).
    public func release() { onRelease.run() }

    deinit { release() }
}

/// A place in a reader's queue (``SessionArbiter/enqueue(reader:poll:onGranted:)``);
/// `cancel()` leaves it (idempotent). A grant already under way may still arrive.
public final class ReaderQueueTicket: Sendable {
    private let onCancel: RunOnce
    /// A ticket that runs `onCancel` once, on the first ``cancel()``.
    public init(onCancel: @escaping @Sendable () -> Void) { self.onCancel = RunOnce(onCancel) }
    public func cancel() { onCancel.run() }
}

/// A closure run at most once, from whichever thread asks first.
private final class RunOnce: Sendable {
    private let body: Mutex<(@Sendable () -> Void)?>
    init(_ body: @escaping @Sendable () -> Void) { self.body = Mutex(body) }
    func run() {
        let b = body.withLock { b in
            defer { b = nil }
            return b
        }
        b?()
    }
}
