import Foundation
import NFCBase
import NFCBenchTestSupport

/// Runs the built `nfcbench` binary (never `swift run`: SwiftPM's lock and rebuilds).
///
/// The binary sits beside the test bundle in `.build/<triple>/debug/`.
enum NFCBench {
    struct Result: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
        var stdoutLines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) }
    }

    /// The package root (the support module's ``TestPaths``).
    static var packageRoot: URL { TestPaths.packageRoot }

    static var binary: URL {
        var dir = Bundle.main.bundleURL
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("nfcbench")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir.deleteLastPathComponent()
        }
        return packageRoot.appendingPathComponent(".build/debug/nfcbench")
    }

    /// Starts `nfcbench args…` and returns the running process with pipes for its output.
    static func start(
        _ args: [String], environment: [String: String] = [:],
        onExit: (@Sendable () -> Void)? = nil
    ) throws -> (Process, Pipe, Pipe) {
        try start(executable: binary, args, environment: environment, onExit: onExit)
    }

    /// Starts `executable args…` (a script around nfcbench, say) the same way.
    static func start(
        executable: URL, _ args: [String], environment: [String: String] = [:],
        onExit: (@Sendable () -> Void)? = nil
    ) throws -> (Process, Pipe, Pipe) {
        let p = Process()
        p.executableURL = executable
        p.arguments = args
        p.environment = TestTraces.childEnvironment(environment)
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        if let onExit { p.terminationHandler = { _ in onExit() } }
        try p.run()
        return (p, out, err)
    }

    /// Runs `blocking` on a thread of its own and awaits it, so tests that wait for a
    /// process never block the cooperative pool (2 threads on this machine): a blocked pool
    /// would stall every async test running beside them.
    /// (The support module's ``NFCBenchTestSupport/offPool(_:)``, under the name this target's tests use.)
    static func offPool<T: Sendable>(_ blocking: @escaping @Sendable () throws -> T) async throws -> T {
        try await NFCBenchTestSupport.offPool(blocking)
    }

    /// Runs `nfcbench args…` to completion (killed after `timeout`), off the cooperative pool.
    static func run(_ args: [String], environment: [String: String] = [:], timeout: Duration = .seconds(60))
        async throws -> Result
    {
        try await offPool { try runBlocking(args, environment: environment, timeout: timeout) }
    }

    static func runBlocking(_ args: [String], environment: [String: String], timeout: Duration) throws -> Result {
        try runBlockingExecutable(binary.path, args, environment: environment, timeout: timeout)
    }

    /// ``runBlocking(_:environment:timeout:)`` for any executable (call it through ``offPool(_:)``).
    static func runBlockingExecutable(
        _ executable: String, _ args: [String], environment: [String: String], timeout: Duration
    ) throws -> Result {
        let exited = DispatchSemaphore(value: 0)
        let (p, out, err) = try start(
            executable: URL(fileURLWithPath: executable), args, environment: environment, onExit: { exited.signal() })
        // The queue keeps a cancelled work item until its deadline (minutes away): it holds the
        // process weakly, so the process and its pipes' descriptors go when the run ends. (Held
        // strongly, every run's two pipes stayed open for its whole timeout: ~800 descriptors in a
        // parallel suite, and an in-process libnfc then met a descriptor past FD_SETSIZE in its
        // select(), which aborts the test process.)
        let killer = DispatchWorkItem { [weak p] in if let p, p.isRunning { p.terminate() } }
        let c = timeout.components
        DispatchQueue.global().asyncAfter(
            deadline: .now() + .milliseconds(Int(c.seconds * 1000 + c.attoseconds / 1_000_000_000_000_000)),
            execute: killer)
        // Read both pipes fully before waiting so a chatty child never blocks on a full pipe.
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data()
        nonisolated(unsafe) var errData = Data()
        group.enter()
        OffPool.detach(name: "nfcbench.test.pipe") {
            outData = out.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        group.enter()
        OffPool.detach(name: "nfcbench.test.pipe") {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        group.wait()
        exited.wait()  // Process.waitUntilExit polls a run loop in ~1 s steps on Linux
        killer.cancel()
        try? out.fileHandleForReading.close()
        try? err.fileHandleForReading.close()
        return Result(
            status: p.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }
}

extension NFCBench {
    /// Runs `nfcbench args…` with posix_spawn and waitpid (no Foundation run-loop polling
    /// between exit and notice), output to a file, and returns the wall time from spawn to
    /// reaped exit: for tests that bound how fast a process ends.
    static func runTimed(_ args: [String], environment: [String: String] = [:]) async throws -> TimedResult {
        try await offPool { try runTimedBlocking(args, environment: environment) }
    }

    struct TimedResult: Sendable {
        var status: Int32
        var stdout: String
        var elapsed: Duration
    }

    static func runTimedBlocking(_ args: [String], environment: [String: String]) throws -> TimedResult {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-timed-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let env = TestTraces.childEnvironment(environment)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, out.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let argv = ([binary.path] + args).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for a in argv { free(a) }
            for e in envp { free(e) }
        }
        var pid: pid_t = 0
        let start = ContinuousClock.now
        let rc = posix_spawn(&pid, binary.path, &actions, nil, argv, envp)
        guard rc == 0 else { throw CocoaError(.executableLoad) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let elapsed = ContinuousClock.now - start
        let text = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
        let code: Int32 = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return TimedResult(status: code, stdout: text, elapsed: elapsed)
    }
}
