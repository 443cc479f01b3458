public import Foundation

/// One child process for `nfcbench bench all`, started with `posix_spawn` and reaped with
/// `wait4`: the wall time from just before the spawn to the reaping, and the CPU time the
/// kernel accounted to it. Blocking: call it from a bench thread, never Swift's pool.
public struct BenchSpawn: Sendable {
    public struct Outcome: Sendable {
        public var status: Int32
        public var wall: Duration
        /// User + system time of the process (its rusage).
        public var cpu: Duration
        /// What it wrote to stdout, when asked for.
        public var output: String
        /// The last line it wrote to stderr (why a child failed, for the bench's message).
        public var lastError: String = ""
    }

    /// A started child, for those that run beside the bench (virtual devices, idle sessions).
    public struct Running: Sendable {
        public let pid: pid_t
        public let started: ContinuousClock.Instant
        public let outputPath: String?
        public let errorPath: String

        /// SIGINT (or `signal`), then the outcome.
        public func stop(_ signal: Int32 = SIGINT) -> Outcome {
            kill(pid, signal)
            return BenchSpawn.reap(self)
        }
    }

    /// Runs `argv` (a path or a name on `PATH`) to its end.
    public static func run(
        _ argv: [String], environment: [String: String] = [:], captureOutput: Bool = false, in directory: String
    ) throws(BenchError) -> Outcome {
        reap(try start(argv, environment: environment, captureOutput: captureOutput, in: directory))
    }

    /// Starts `argv` with the bench's environment plus `environment`; stdin from /dev/null,
    /// stdout to /dev/null unless `captureOutput` (a file in `directory`), stderr to a file in
    /// `directory` whose last line ``reap(_:)`` keeps.
    public static func start(
        _ argv: [String], environment: [String: String] = [:], captureOutput: Bool = false, in directory: String
    ) throws(BenchError) -> Running {
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        let outputPath = captureOutput ? "\(directory)/out-\(UInt64.random(in: 0...UInt64.max)).txt" : nil
        let errorPath = "\(directory)/err-\(UInt64.random(in: 0...UInt64.max)).txt"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in cArgs { free(p) }
            for p in cEnv { free(p) }
        }
        // A clean slate, as every child of nfcbench gets (``ChildProcess``): the bench's threads
        // block the policy's signals, and a child started with them blocked could not be
        // stopped by Ctrl-C, and the C side of a comparison ran under a mask no shell gives it.
        var attr = ChildProcess.cleanSlate()
        defer { posix_spawnattr_destroy(&attr) }
        var pid: pid_t = 0
        let started = ContinuousClock.now
        let rc = posix_spawnp(&pid, argv[0], &actions, &attr, cArgs, cEnv)
        guard rc == 0 else { throw .unavailable("cannot start \(argv[0]): \(String(cString: strerror(rc)))") }
        return Running(pid: pid, started: started, outputPath: outputPath, errorPath: errorPath)
    }

    public static func reap(_ r: Running) -> Outcome {
        var status: Int32 = 0
        var usage = rusage()
        while wait4(r.pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let wall = ContinuousClock.now - r.started
        func d(_ t: timeval) -> Duration { .seconds(t.tv_sec) + .microseconds(t.tv_usec) }
        let exited = status & 0x7F == 0
        var output = ""
        if let path = r.outputPath {
            output = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            unlink(path)
        }
        let errors = (try? String(contentsOfFile: r.errorPath, encoding: .utf8)) ?? ""
        unlink(r.errorPath)
        return Outcome(
            status: exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F), wall: wall,
            cpu: d(usage.ru_utime) + d(usage.ru_stime), output: output,
            lastError: errors.split(separator: "\n").last.map(String.init) ?? "")
    }

    /// CLOCK_MONOTONIC now, in nanoseconds (what the exec probe compares with).
    public static func monotonicNanoseconds() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
    }
}
