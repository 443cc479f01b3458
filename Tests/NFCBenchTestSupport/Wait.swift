public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// The real-time waits of the test suite. Tests wait on real parts (pcscd, a pty, a child
// process, a C library's thread) through these, never with a sleep of their own: a wait polls
// its condition and returns as soon as it holds (it never sleeps through the whole timeout when
// the condition is met), and fails with a message naming what it waited for when the deadline
// passes. The sleep sites of Tests are here (see `issues show 35`).

/// A wait's deadline passed before its condition held (or, for ``holds(for:every:_:fileID:line:invariant:)``,
/// an invariant broke): thrown, so the test fails with this message.
public struct WaitFailed: Error, CustomStringConvertible {
    public let description: String

    /// For a wait of a test's own (a line a process should have printed by a deadline).
    public init(description: String) { self.description = description }
}

/// Polls `condition` every `every` (after a `Task.yield()`) until it holds or `timeout` of real
/// time has passed; true when it held. For `#expect(await poll { … })`.
public func poll(
    timeout: Duration = .seconds(5), every: Duration = .milliseconds(5), until condition: () throws -> Bool
) async rethrows -> Bool {
    let end = ContinuousClock.now + timeout
    while true {
        if try condition() { return true }
        if ContinuousClock.now >= end { return false }
        await Task.yield()
        try? await Task.sleep(for: every)
    }
}

/// Waits until `condition` holds; throws ``WaitFailed`` ("timed out after 5 s waiting for
/// `what`") when it does not within `timeout`.
public func wait(
    for what: @autoclosure () -> String, timeout: Duration = .seconds(5), every: Duration = .milliseconds(5),
    fileID: String = #fileID, line: Int = #line, until condition: () throws -> Bool
) async throws {
    guard try await poll(timeout: timeout, every: every, until: condition) else {
        throw WaitFailed(description: "\(fileID):\(line): timed out after \(timeout) waiting for \(what())")
    }
}

/// Checks that `invariant` keeps holding for the whole `window` (the window is what the test
/// asserts: "ten presence checks later it is still one detection"); throws ``WaitFailed`` as
/// soon as it breaks, naming `what`.
public func holds(
    for window: Duration, every: Duration = .milliseconds(5), _ what: @autoclosure () -> String,
    fileID: String = #fileID, line: Int = #line, invariant: () throws -> Bool
) async throws {
    if try await poll(timeout: window, every: every, until: { try !invariant() }) {
        throw WaitFailed(description: "\(fileID):\(line): \(what()) broke within \(window)")
    }
}

/// ``poll(timeout:every:until:)`` on a thread the caller owns (inside ``offPool(_:)``, a
/// virtual device's thread): blocks that thread, never a task.
public func pollBlocking(
    timeout: Duration = .seconds(5), every: Duration = .milliseconds(5), until condition: () throws -> Bool
) rethrows -> Bool {
    let end = ContinuousClock.now + timeout
    let micros = useconds_t(
        max(1, every.components.seconds * 1_000_000 + every.components.attoseconds / 1_000_000_000_000))
    while true {
        if try condition() { return true }
        if ContinuousClock.now >= end { return false }
        usleep(micros)
    }
}

/// ``wait(for:timeout:every:fileID:line:until:)`` on a thread the caller owns.
public func waitBlocking(
    for what: @autoclosure () -> String, timeout: Duration = .seconds(5), every: Duration = .milliseconds(5),
    fileID: String = #fileID, line: Int = #line, until condition: () throws -> Bool
) throws {
    guard try pollBlocking(timeout: timeout, every: every, until: condition) else {
        throw WaitFailed(description: "\(fileID):\(line): timed out after \(timeout) waiting for \(what())")
    }
}

/// Waits until the symbolic link `path` exists (a virtual PN532's `--pty` link, made once its
/// pty is open); throws ``WaitFailed`` naming it otherwise.
public func waitForLink(
    _ path: String, timeout: Duration = .seconds(5), fileID: String = #fileID, line: Int = #line
) async throws {
    try await wait(for: "the link \(path)", timeout: timeout, fileID: fileID, line: line) {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil
    }
}

/// A fixed pause of real time, for a state no test can observe: a call that must have started
/// waiting inside a C library or another process (pcscd's status wait, libnfc's poll on the
/// wire) before it is cancelled. `because` says what the pause gives time for; each caller is
/// listed in the issue 35 note.
public func pause(_ duration: Duration, because: String) async {
    try? await Task.sleep(for: duration)
}

/// Holds the calling thread for `microseconds`: a test's stand-in for a slow part (a clock whose
/// reading takes 30 ms, a thread preempted between reading the clock and writing its line). It
/// is the behaviour under test, not a wait.
public func stall(microseconds: UInt32) {
    usleep(microseconds)
}

/// What `operation` returns, or nil when it has not returned within `limit` of real time (it
/// is then cancelled): the next event of a stream that may never come.
public func withTimeout<T: Sendable>(
    _ limit: Duration, _ operation: @escaping @Sendable () async throws -> T?
) async throws -> T? {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            await pause(limit, because: "the operation's time limit")
            return nil
        }
        defer { group.cancelAll() }
        return try await group.next() ?? nil
    }
}

/// How a child process ended: its exit code, or the signal that killed it.
public enum ProcessEnd: Sendable, Equatable, CustomStringConvertible {
    case exited(Int32)
    case signalled(Int32)

    /// The number `Process.terminationStatus` gives: the exit code, or the signal's number.
    public var status: Int32 {
        switch self {
        case .exited(let code): code
        case .signalled(let signal): signal
        }
    }

    public var description: String {
        switch self {
        case .exited(let code): "exit \(code)"
        case .signalled(let signal): "killed by signal \(signal)"
        }
    }
}

/// How `process` ended, once it has; nil when it still runs after `timeout` (the bound only
/// catches a hang).
///
/// The kernel is asked (`waitid` with `WNOWAIT`: the child is seen a zombie and left for
/// Foundation to reap), not `Process.isRunning`. On Linux, Foundation learns of an exit through
/// end of file on a socket pair whose second end each child inherits; that end has no
/// close-on-exec, and a child another thread starts meanwhile (Foundation's own close-all skips
/// descriptors opened after its scan; a plain `posix_spawn` closes none) inherits it too, so
/// `isRunning` stays true until that other child ends as well: seconds, in a suite that starts
/// children from many threads (issue 35 note). Once Foundation has reaped the child, its status
/// is Foundation's.
public func processEnd(of process: Process, timeout: Duration = .seconds(60)) async -> ProcessEnd? {
    var seen: ProcessEnd?
    _ = await poll(timeout: timeout, every: .milliseconds(10)) {
        seen = currentEnd(of: process)
        return seen != nil
    }
    return seen
}

/// ``processEnd(of:timeout:)`` on a thread the caller owns (inside ``offPool(_:)``).
public func processEndBlocking(of process: Process, timeout: Duration = .seconds(60)) -> ProcessEnd? {
    var seen: ProcessEnd?
    _ = pollBlocking(timeout: timeout, every: .milliseconds(10)) {
        seen = currentEnd(of: process)
        return seen != nil
    }
    return seen
}

/// ``processEnd(of:timeout:)``, throwing ``WaitFailed`` when `process` still runs after `timeout`.
public func waitForProcessEnd(
    of process: Process, timeout: Duration = .seconds(60), fileID: String = #fileID, line: Int = #line
) async throws -> ProcessEnd {
    guard let end = await processEnd(of: process, timeout: timeout) else {
        throw WaitFailed(
            description:
                "\(fileID):\(line): timed out after \(timeout) waiting for process \(process.processIdentifier) to end"
        )
    }
    return end
}

/// How `process` has ended, or nil while it runs.
private func currentEnd(of process: Process) -> ProcessEnd? {
    let pid = process.processIdentifier
    precondition(pid > 0, "the process was never started")
    var info = siginfo_t()
    if waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 {
        #if canImport(Glibc)
            let (who, status) = (info._sifields._sigchld.si_pid, info._sifields._sigchld.si_status)
        #else
            let (who, status) = (info.si_pid, info.si_status)
        #endif
        guard who == pid else { return nil }  // still running
        return info.si_code == CLD_EXITED ? .exited(status) : .signalled(status)
    }
    // ECHILD: Foundation has reaped it; its status is set just before `isRunning` goes false.
    guard !process.isRunning else { return nil }
    return process.terminationReason == .uncaughtSignal
        ? .signalled(process.terminationStatus) : .exited(process.terminationStatus)
}
