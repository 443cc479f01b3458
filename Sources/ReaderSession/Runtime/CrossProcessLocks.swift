/// The cross-process half of a ``SessionArbiter``: reader locks that other processes see, a
/// first-come queue shared with their waiters, and the thermal state kept between processes.
///
/// ReaderSession keeps no files of its own (it is pure): a host that opens real readers
/// installs an implementation with ``SessionArbiter/installCrossProcessLocks(_:)``. The
/// `nfcbench` command and NFCBenchKit install `ReaderSessionLocks.LockFolder` (`flock(2)`
/// lock files, queue tickets and heat files in a private folder); without one, an arbiter
/// excludes the sessions of its own process only.
///
/// Implementations are thread-safe and never call back into the arbiter while holding a lock
/// of their own.
public protocol CrossProcessLocks: Sendable {
    /// Takes the reader's lock (exclusive) and the host's lock (exclusive when `hostWide`, else
    /// shared) without waiting. `reader` is the reader's own lock name
    /// (``SessionArbiter/readerLockName(for:)``, the same under either scope).
    func lock(reader: String, hostWide: Bool) -> CrossProcessLockAttempt

    /// Waits for the lock named `key` (``SessionArbiter/lockName(for:)``) in first-in, first-out
    /// order with every other process's waiters: whenever this waiter is first, at most every
    /// `poll`, it calls `attempt`, until `attempt` gives a lease, which goes to `onGranted` (on
    /// another thread) unless the ticket was cancelled first (the lease is then released).
    func enqueue(
        _ key: String, poll: Duration, attempt: @escaping @Sendable () -> ReaderLease?,
        onGranted: @escaping @Sendable (ReaderLease) -> Void
    ) -> ReaderQueueTicket

    /// Where the thermal model's state for the lock named `key` is kept between processes
    /// (so heat follows the lock scope); `nil` keeps it in this process only.
    func thermalStore(_ key: String) -> (any ThermalStateStore)?
}

/// The answer of ``CrossProcessLocks/lock(reader:hostWide:)``.
public enum CrossProcessLockAttempt: Sendable {
    /// Both locks are held until `release` is called (once).
    case locked(release: @Sendable () -> Void)
    /// Another process (or another arbiter of this one) holds one of them.
    case busy
    /// The locks could not be taken at all; the text says why (a refused lock folder, errno).
    case failed(String)
}

/// The thermal model's state as one process leaves it for the next
/// (``CrossProcessLocks/thermalStore(_:)``).
public struct SavedThermalState: Sendable, Equatable {
    /// Heat in field-seconds at ``bootNanoseconds``.
    public var heat: Double
    /// Whether the field was on then (a process that ended mid-session).
    public var fieldOn: Bool
    /// The instant of the save on the store's boot clock (``ThermalStateStore/bootNanoseconds()``).
    public var bootNanoseconds: UInt64

    public init(heat: Double, fieldOn: Bool, bootNanoseconds: UInt64) {
        self.heat = heat
        self.fieldOn = fieldOn
        self.bootNanoseconds = bootNanoseconds
    }
}

/// Keeps one reader's thermal state between processes.
public protocol ThermalStateStore: Sendable {
    /// Reads the saved state (nil when there is none), lets `body` change it, and keeps what
    /// `body` leaves; the read, `body` and the write are one step no other process interleaves
    /// with. A store that can't be used runs `body` on nil and keeps nothing.
    func update<R>(_ body: (inout SavedThermalState?) -> R) -> R

    /// Now on the clock saved states are stamped with: system-wide, counting suspended time and
    /// restarting at boot (`CLOCK_BOOTTIME`), so a saved instant later than now means a reboot.
    func bootNanoseconds() -> UInt64
}
