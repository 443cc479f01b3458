public import Foundation
import NFCHardware
import Synchronization

/// A private pcscd for a command that needs the vpcd reader: `nfcbench demo`, `bench all` and
/// `check equivalence` run themselves again inside `scripts/with-pcscd` (its own mount and
/// network namespace, with the vpcd reader) when no running pcscd offers one.
public enum PrivatePCSCD {
    /// The environment variable that tells the demo it runs inside its own private pcscd.
    public static let innerMarker = "NFCBENCH_DEMO_BENCH"

    /// True when a pcscd answers and lists the vpcd reader "Virtual PCD 00 00".
    public static func vpcdReaderAvailable() -> Bool {
        guard let ctx = try? PCSCContext(), let readers = try? ctx.readers() else { return false }
        return readers.contains("Virtual PCD 00 00")
    }

    public enum PrivateRun {
        /// The demo ran inside its private pcscd and exited with this status.
        case ran(Int32)
        /// No private pcscd can be had here; with-pcscd's reason.
        case unavailable(String)
    }

    /// Runs this same command inside `with-pcscd` (its own process group, default signal
    /// masks, standard input a pipe that closes when this process ends), forwarding every
    /// signal to it and relaying its standard error as it comes, except with-pcscd's own
    /// complaints, which say why the private bench is missing (exit 69).
    public static func runUnderPrivatePCSCD(environment extra: [String: String] = [:]) async throws(BenchError)
        -> PrivateRun
    {
        guard let script = BenchData.withPCSCDScript() else {
            return .unavailable("scripts/with-pcscd is not beside the bench data (not a clone)")
        }
        var env = ProcessInfo.processInfo.environment
        env.merge(extra) { _, new in new }
        env["PCSCD_LOG"] = "/dev/null"
        env[innerMarker] = "private-pcscd"
        let forward = SignalForwarder()
        let signals = BenchSignals.handle { sig in forward.send(sig) }
        defer { signals.cancel() }
        let complaints = Mutex<[String]>([])
        let exit = try await ChildProcess.run(
            "/bin/bash", [script, BenchData.executablePath()] + Array(CommandLine.arguments.dropFirst()),
            environment: env, input: .parentLifetime, newProcessGroup: true, onStart: { forward.started($0) },
            onStderrLine: { line in
                if line.hasPrefix("with-pcscd: ") {
                    complaints.withLock { $0.append(String(line.dropFirst("with-pcscd: ".count))) }
                } else {
                    BenchOutput.err(line)
                }
            })
        let why = complaints.withLock { $0 }
        if exit.status == 69, !why.isEmpty { return .unavailable(why.joined(separator: "; ")) }
        if forward.forwardedStop { BenchSignals.stopIfForegroundOfTerminal() }
        return .ran(exit.status)
    }

    /// The inner demo (inside with-pcscd) ends as if hung up when the outer one is gone:
    /// its standard input is a pipe the outer holds, which reads end-of-file then.
    public static func endWhenParentIsGone() {
        let t = Thread {
            var byte: UInt8 = 0
            while true {
                let n = read(0, &byte, 1)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
            }
            kill(getpid(), SIGHUP)
        }
        t.name = "nfcbench.demo.parent"
        t.start()
    }
}

/// Forwards signals to a child once its pid is known (those that came before, then).
public final class SignalForwarder: Sendable {
    private let state = Mutex<(pid: pid_t, pending: [Int32], stop: Bool)>((0, [], false))

    public init() {}

    public func send(_ sig: Int32) {
        let pid = state.withLock { s -> pid_t in
            if sig == SIGTSTP { s.stop = true }
            if s.pid == 0 { s.pending.append(sig) }
            return s.pid
        }
        if pid > 0 { kill(pid, sig) }
    }

    public func started(_ pid: pid_t) {
        let pending = state.withLock { s -> [Int32] in
            s.pid = pid
            defer { s.pending = [] }
            return s.pending
        }
        for sig in pending { kill(pid, sig) }
    }

    /// True when a SIGTSTP was forwarded: this process stops too once the child has ended.
    public var forwardedStop: Bool { state.withLock { $0.stop } }
}
