public import Foundation

/// Child processes started with a clean slate: an empty signal mask and default actions.
///
/// nfcbench's threads block the signals of its policy (``BenchSignals``), and `posix_spawn`
/// passes the calling thread's mask on: a child started without resetting it (the demo's
/// `with-pcscd` and its pcscd, through Foundation's `Process`) ignored SIGTERM and SIGINT,
/// so pcscd outlived a Ctrl-C until a SIGKILL 5 s later. Here `posix_spawn` gets
/// `POSIX_SPAWN_SETSIGMASK` (empty) and `POSIX_SPAWN_SETSIGDEF` (the job-control and
/// termination signals back to their defaults). The wait runs on a thread of its own.
public enum ChildProcess {
    /// How the child ended: its exit code, or 128 + the signal that killed it (`signal` set).
    public struct Exit: Sendable {
        public var status: Int32
        public var signal: Int32?
    }

    /// Where the child's standard input comes from.
    public enum Input: Sendable {
        /// `/dev/null`.
        case null
        /// A pipe this process keeps open and never writes: the child reads end-of-file when
        /// this process is gone, even after a SIGKILL (the demo's inner process watches it).
        case parentLifetime
    }

    /// Runs `path args…` to its end. `onStart` gets the pid first (to forward signals);
    /// with `onStderrLine`, the child's standard error comes through a pipe, line by line,
    /// as it is written; without, the child shares this process's. Standard output is shared.
    public static func run(
        _ path: String, _ args: [String], environment: [String: String], input: Input = .null,
        newProcessGroup: Bool = false, onStart: @escaping @Sendable (pid_t) -> Void = { _ in },
        onStderrLine: (@Sendable (String) -> Void)? = nil
    ) async throws(BenchError) -> Exit {
        let result: Result<Exit, BenchError> = await withCheckedContinuation { k in
            let t = Thread {
                k.resume(
                    returning: Result {
                        () throws(BenchError) -> Exit in
                        try runBlocking(
                            path, args, environment: environment, input: input, newProcessGroup: newProcessGroup,
                            onStart: onStart, onStderrLine: onStderrLine)
                    })
            }
            t.name = "nfcbench.child"
            t.start()
        }
        return try result.get()
    }

    /// The signals a child gets back at their default action.
    public static let defaulted: [Int32] = [
        SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGTSTP, SIGCONT, SIGTTIN, SIGTTOU, SIGPIPE,
    ]

    /// `posix_spawn` attributes for a clean slate: `POSIX_SPAWN_SETSIGMASK` (empty),
    /// `POSIX_SPAWN_SETSIGDEF` (``defaulted``), and a process group of its own when asked.
    /// The caller destroys them (`posix_spawnattr_destroy`).
    public static func cleanSlate(newProcessGroup: Bool = false) -> posix_spawnattr_t {
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for sig in defaulted { sigaddset(&defaults, sig) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if newProcessGroup {
            flags |= POSIX_SPAWN_SETPGROUP
            posix_spawnattr_setpgroup(&attr, 0)
        }
        posix_spawnattr_setflags(&attr, Int16(flags))
        return attr
    }

    private static func runBlocking(
        _ path: String, _ args: [String], environment: [String: String], input: Input, newProcessGroup: Bool,
        onStart: @Sendable (pid_t) -> Void, onStderrLine: (@Sendable (String) -> Void)?
    ) throws(BenchError) -> Exit {
        var attr = cleanSlate(newProcessGroup: newProcessGroup)
        defer { posix_spawnattr_destroy(&attr) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var stdinPipe: [Int32] = [-1, -1]
        var stderrPipe: [Int32] = [-1, -1]
        defer {
            for fd in stdinPipe + stderrPipe where fd >= 0 { close(fd) }
        }
        switch input {
        case .null:
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        case .parentLifetime:
            guard makePipe(&stdinPipe) else { throw .failure("pipe: \(String(cString: strerror(errno)))") }
            posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        }
        if onStderrLine != nil {
            guard makePipe(&stderrPipe) else {
                throw .failure("pipe: \(String(cString: strerror(errno)))")
            }
            posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)
        }
        let argv = ([path] + args).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for a in argv { free(a) }
            for e in envp { free(e) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attr, argv, envp)
        guard rc == 0 else { throw .unavailable("cannot start \(path): \(String(cString: strerror(rc)))") }
        // The child's ends are the child's now.
        if stdinPipe[0] >= 0 {
            close(stdinPipe[0])
            stdinPipe[0] = -1
        }
        if stderrPipe[1] >= 0 {
            close(stderrPipe[1])
            stderrPipe[1] = -1
        }
        onStart(pid)
        if let onStderrLine, stderrPipe[0] >= 0 { relayLines(stderrPipe[0], to: onStderrLine) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let termSignal = status & 0x7f
        if termSignal == 0 { return Exit(status: (status >> 8) & 0xff, signal: nil) }
        return Exit(status: 128 + termSignal, signal: termSignal)
    }

    /// `pipe(2)` with both ends close-on-exec (other children never inherit them).
    private static func makePipe(_ fds: inout [Int32]) -> Bool {
        guard pipe(&fds) == 0 else { return false }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return true
    }

    /// Reads `fd` to its end and hands over each line (the last one even without a newline).
    private static func relayLines(_ fd: Int32, to body: @Sendable (String) -> Void) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            pending.append(contentsOf: buffer[0..<n])
            while let nl = pending.firstIndex(of: 0x0A) {
                body(String(decoding: pending[..<nl], as: UTF8.self))
                pending.removeSubrange(...nl)
            }
        }
        if !pending.isEmpty { body(String(decoding: pending, as: UTF8.self)) }
    }
}
