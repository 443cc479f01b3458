import Foundation
import ReaderSessionLocks
import Synchronization

/// The one signal policy of every nfcbench command (README "Signals").
///
/// ``install()`` runs first in `main`: it blocks SIGINT, SIGTERM, SIGHUP, SIGTSTP, SIGCONT and
/// SIGPIPE in the main thread, so every thread made afterwards has them blocked too (libdispatch's
/// workers block them anyway); the command then runs in a task and the main thread takes the
/// signals with `sigwaitinfo(2)` (``takeSignals()``).
/// A signal goes to every handler registered with ``handle(_:)`` (a session, the demo, a
/// virtual device); with none, the default runs: SIGINT, SIGTERM and SIGHUP remove what the
/// process made (``atDeath(_:)``: temporary links; held reader locks), then the process dies
/// by that signal; SIGTSTP stops the process; SIGCONT does nothing more.
///
/// Why not Dispatch signal sources: on Linux they install a handler that blocks the signal only
/// in the thread it lands on and re-sends it, leave that handler behind when cancelled (a later
/// Ctrl-C then goes nowhere), and a stop signal still pending when SIGCONT arrives is
/// discarded by the kernel (signal(7)): so SIGCONT is taken too, and a session that sees it
/// knows it was stopped. A SIGHUP ignored by whoever started the process (`nohup`) stays ignored.
///
/// SIGPIPE: a write to a pipe nobody reads any more (`nfcbench session --json | head -2`)
/// raises it in the writing thread, where it is blocked, so the write fails with `EPIPE`;
/// ``BenchOutput`` then sends SIGPIPE to the process once (``outputClosed()``), and it is handled as
/// SIGTERM is: a session ends with 202 and a complete trace, its lock file removed, instead of
/// the process dying mid-write with its lock file left behind.
///
/// Children never inherit the blocked mask: ``ChildProcess`` starts them with an empty mask and
/// default actions.
public enum BenchSignals {
    /// The signals nfcbench takes (before `nohup`'s SIGHUP is left out).
    public static let policy: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGTSTP, SIGCONT, SIGPIPE]

    private struct Registry {
        public var next: UInt64 = 0
        public var handlers: [(id: UInt64, body: @Sendable (Int32) -> Void)] = []
        public var cleanups: [(id: UInt64, body: @Sendable () -> Void)] = []
    }
    private static let registry = Mutex(Registry())
    private static let installed = Atomic<Bool>(false)

    /// The signals taken (the policy's, less an ignored SIGHUP).
    private static let taken = Mutex(sigset_t())

    /// Blocks the policy's signals in this (the main) thread, so every thread made afterwards
    /// has them blocked too. Call once, first thing, then ``takeSignals()``.
    public static func install() {
        guard !installed.exchange(true, ordering: .relaxed) else { return }
        var set = sigset_t()
        sigemptyset(&set)
        for sig in policy {
            var old = sigaction()
            sigaction(sig, nil, &old)
            // A SIGHUP ignored by whoever started us (`nohup`: SIG_IGN, 1) stays ignored.
            if sig == SIGHUP, unsafeBitCast(old.__sigaction_handler.sa_handler, to: Int.self) == 1 { continue }
            signal(sig, SIG_DFL)  // blocked and taken by sigwaitinfo: the default never runs
            sigaddset(&set, sig)
        }
        pthread_sigmask(SIG_SETMASK, &set, nil)
        taken.withLock { $0 = set }
    }

    /// Takes the signals with `sigwaitinfo(2)` and hands each over (``deliver(_:)``), forever:
    /// the main thread's work once the command runs in a task.
    public static func takeSignals() -> Never {
        var wanted = taken.withLock { $0 }
        while true {
            var info = siginfo_t()
            let sig = sigwaitinfo(&wanted, &info)
            if sig > 0 { deliver(sig) }
        }
    }

    /// A registration; `cancel()` ends it (idempotent).
    public final class Registration: Sendable {
        private let onCancel: Mutex<(@Sendable () -> Void)?>
        public init(_ onCancel: @escaping @Sendable () -> Void) { self.onCancel = Mutex(onCancel) }
        public func cancel() {
            let c = onCancel.withLock { c in
                defer { c = nil }
                return c
            }
            c?()
        }
        deinit { cancel() }
    }

    /// Calls `handler` (on the signal thread; keep it short) for every policy signal until
    /// cancelled. While any handler is registered, the defaults do not run.
    public static func handle(_ handler: @escaping @Sendable (Int32) -> Void) -> Registration {
        let id = registry.withLock { r in
            r.next += 1
            r.handlers.append((r.next, handler))
            return r.next
        }
        return Registration { registry.withLock { $0.handlers.removeAll { $0.id == id } } }
    }

    /// Runs `body` if the process dies by a signal's default (SIGINT, SIGTERM, SIGHUP with no
    /// handler), newest first: for what a process made and must not leave behind (a pty's link).
    public static func atDeath(_ body: @escaping @Sendable () -> Void) -> Registration {
        let id = registry.withLock { r in
            r.next += 1
            r.cleanups.append((r.next, body))
            return r.next
        }
        return Registration { registry.withLock { $0.cleanups.removeAll { $0.id == id } } }
    }

    /// Removes the symbolic link `link` if the process dies by a signal while it still points
    /// to `target` (a virtual PN532's link to its pty).
    public static func removeAtDeath(link: String, to target: String) -> Registration {
        atDeath {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = buffer.withUnsafeMutableBytes { readlink(link, $0.baseAddress!, $0.count) }
            if n > 0, String(decoding: buffer[0..<n], as: UTF8.self) == target { unlink(link) }
        }
    }

    /// Hands `sig` to the handlers, or runs its default; a SIGPIPE after the first is dropped
    /// (``SignalGate``).
    public static func deliver(_ sig: Int32) {
        guard gate.withLock({ $0.admits(sig) }) else { return }
        let handlers = registry.withLock { $0.handlers.map(\.body) }
        if handlers.isEmpty {
            runDefault(sig)
        } else {
            for h in handlers { h(sig) }
        }
    }

    private static let gate = Mutex(SignalGate())

    /// True for the signals that stop a command that is not a session (SIGINT, SIGTERM, SIGHUP,
    /// and SIGPIPE: its output's reader is gone).
    public static func stops(_ sig: Int32) -> Bool {
        sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGPIPE
    }

    private static let outputGone = Atomic<Bool>(false)

    /// Standard output or error is a pipe nobody reads any more (a write failed with `EPIPE`):
    /// sends SIGPIPE to the process, once, so the signal thread hands it over as any other.
    public static func outputClosed() {
        guard installed.load(ordering: .relaxed), !outputGone.exchange(true, ordering: .relaxed) else { return }
        kill(getpid(), SIGPIPE)
    }

    /// Watches standard output, when it is a pipe or a socket, for its reader going away
    /// (`poll(2)` reports `POLLERR` on a pipe's write end once the read end is closed), and
    /// then does what a failed write does (``outputClosed()``): SIGPIPE, handled as the policy
    /// says. Without it a session whose reader left (`session --json | head -2`) would hold its
    /// reader until its next line, up to its time limit (coreutils' `tail -f` watches the same
    /// way). A thread of its own, off Swift's pool; `cancel()` ends it.
    public static func watchOutputReader(fd: Int32 = 1) -> Registration {
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFIFO || (st.st_mode & S_IFMT) == S_IFSOCK else {
            return Registration {}
        }
        var wake: [Int32] = [-1, -1]
        guard pipe(&wake) == 0 else { return Registration {} }
        let (wakeRead, wakeWrite) = (wake[0], wake[1])
        for end in wake { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }  // not for children
        let thread = Thread {
            var fds = [pollfd(fd: fd, events: 0, revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            while true {
                let n = poll(&fds, 2, -1)
                if n < 0 && errno == EINTR { continue }
                if n < 0 || fds[1].revents != 0 { break }
                if fds[0].revents & Int16(POLLERR | POLLHUP) != 0 {
                    outputClosed()
                    break
                }
            }
            close(wakeRead)
        }
        thread.name = "nfcbench output watch"
        thread.start()
        return Registration {
            var one: UInt8 = 1
            _ = write(wakeWrite, &one, 1)
            close(wakeWrite)
        }
    }

    /// What a policy signal does when nothing handles it.
    public static func runDefault(_ sig: Int32) {
        switch sig {
        case SIGINT, SIGTERM, SIGHUP, SIGPIPE: die(by: sig)
        case SIGTSTP: kill(getpid(), SIGSTOP)
        default: break
        }
    }

    /// Removes what the process made (``atDeath(_:)``, held reader locks), then dies by `sig`
    /// (its default action, so the parent sees the signal in the wait status).
    public static func die(by sig: Int32) -> Never {
        let cleanups = registry.withLock { r in
            defer { r.cleanups.removeAll() }
            return r.cleanups.map(\.body)
        }
        for c in cleanups.reversed() { c() }
        LockFolder.removeHeldLockFilesBeforeExit()
        signal(sig, SIG_DFL)
        var one = sigset_t()
        sigemptyset(&one)
        sigaddset(&one, sig)
        raise(sig)
        pthread_sigmask(SIG_UNBLOCK, &one, nil)
        _exit(128 + sig)
    }

    /// `SIGINT`, `SIGTERM`… for messages.
    public static func name(_ sig: Int32) -> String {
        switch sig {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        case SIGTSTP: "SIGTSTP"
        case SIGCONT: "SIGCONT"
        case SIGPIPE: "SIGPIPE"
        case SIGQUIT: "SIGQUIT"
        case SIGKILL: "SIGKILL"
        default: "signal \(sig)"
        }
    }

    /// Stops this process the way a terminal's Ctrl-Z would, but only when it runs in the
    /// foreground process group of its controlling terminal (otherwise there is nobody to
    /// resume it, so it keeps running).
    public static func stopIfForegroundOfTerminal() {
        for fd in [Int32(0), 1, 2] where isatty(fd) == 1 {
            if tcgetpgrp(fd) == getpgrp() {
                raise(SIGSTOP)
            }
            return
        }
    }
}

/// Which taken signals ``BenchSignals/deliver(_:)`` hands over: all of them, except a SIGPIPE
/// after the first.
///
/// SIGPIPE says the output's reader is gone, and that happens once. A later one changes
/// nothing and must not kill the process: a handler that writes a line onto the closed pipe
/// (a session's `signal` record under `--json`) raises SIGPIPE in the signal thread itself,
/// which takes it on its next wait, when the session that handled the first may be over and
/// its handler gone; its default would then kill the process by SIGPIPE (exit 141) instead of
/// letting it end with the session's own status (12).
public struct SignalGate: Sendable {
    private var pipeTaken = false
    public init() {}
    /// Whether `sig` is handed over; a SIGPIPE is, once.
    public mutating func admits(_ sig: Int32) -> Bool {
        guard sig == SIGPIPE else { return true }
        defer { pipeTaken = true }
        return !pipeTaken
    }
}
