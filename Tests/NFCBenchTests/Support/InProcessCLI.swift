import Foundation
import NFCBase
import NFCBenchKit
import NFCFiles

@testable import nfcbench

/// The command line in this process: what `nfcbench` would do with `argv` before it runs
/// anything (``CLI/interpret(_:environment:)``), for tests of usage mistakes that need no process,
/// and (``run(_:environment:)``) a command run here with its output captured, for commands
/// whose logic is the point rather than the process boundary.
enum InProcessCLI {
    /// The usage mistake `argv` makes (what `nfcbench` prints after `error: `; it exits 64), or
    /// nil when `argv` runs a command or prints text.
    static func mistake(_ argv: [String], environment: [String: String] = [:]) -> String? {
        if case .mistake(let message, _) = CLI.interpret(argv, environment: environment) { return message }
        return nil
    }

    /// The text `argv` prints on stdout without running a command (help, version), or nil.
    static func text(_ argv: [String], environment: [String: String] = [:]) -> String? {
        if case .text(let t) = CLI.interpret(argv, environment: environment) { return t }
        return nil
    }

    /// The parsed options `argv` runs its command with, or nil when it is text or a mistake.
    static func parsed(_ argv: [String], environment: [String: String] = [:]) -> (Command, ParsedOptions)? {
        if case .run(let c, let p) = CLI.interpret(argv, environment: environment) { return (c, p) }
        return nil
    }

    /// Runs `nfcbench argv…` in this process the way `main` does (``CLI/resolve(_:environment:)``,
    /// then the command), its stdout and stderr captured (``BenchOutput/capture``), and returns
    /// what a spawned run returns. For a command's own logic: those that read and write files
    /// (tag show, trace show|diff|plot|export, profile import, conformance, the phone model's
    /// walk, help and usage errors), and on `sim:` what a command reports at its end from its
    /// task (`--json` objects, `--dry-run` plans, errors).
    ///
    /// An output file named `-` (`--trace -`, `--backup -`, `--pcapng -`) opened in the task is
    /// captured with stdout (``/NFCFiles/StandardOutput/redirect``).
    ///
    /// What it does not cover, so those keep a process test: lines written from a thread outside
    /// the task (a session's delegate lines, an exchange's text lines: they reach this process's
    /// stdout), signals, the environment (commands read
    /// this process's; `environment` only feeds the parser, for `NFCBENCH_DEVICE`), cross-process
    /// reader locks (installed by `main` only), a real-time wait that a loaded test process can
    /// overrun, and the status of an output that fails at the end (74: the list of output
    /// failures is process-wide).
    static func run(_ argv: [String], environment: [String: String] = ProcessInfo.processInfo.environment)
        async -> NFCBench.Result
    {
        let capture = BenchOutput.Capture()
        // The command's work goes to a thread of its own, as it would in its own process: a
        // long conformance run never holds the cooperative pool the other tests share.
        let thread = JobThread(name: "nfcbench.cli")
        defer { thread.stop() }
        let status: Int32 = await withTaskExecutorPreference(thread) {
            // A file on a descriptor (`--trace -`) goes into the capture as the lines do.
            let redirect: @Sendable (Int32, [UInt8]) -> Void = { fd, bytes in
                BenchOutput.$capture.withValue(capture) { BenchOutput.bytes(bytes, fd: fd) }
            }
            return await StandardOutput.$redirect.withValue(redirect) {
                await BenchOutput.$capture.withValue(capture) {
                    switch CLI.resolve(argv, environment: environment) {
                    case .done(let status): return status
                    case .run(let command, let parsed):
                        CLI.prepare(command, parsed)
                        do {
                            return try await command.run(parsed)
                        } catch {
                            return CLI.outcome(command) { () throws -> Int32 in throw error }
                        }
                    }
                }
            }
        }
        return NFCBench.Result(status: status, stdout: capture.stdout, stderr: capture.stderr)
    }
}
