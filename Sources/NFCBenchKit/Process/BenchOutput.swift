import Foundation
import NFCFiles
import Synchronization

/// Plain writes to stdout and stderr (unbuffered, so lines interleave correctly with
/// subprocesses and survive a SIGKILL), every one checked (`StandardOutput`): a full disk
/// under `> file` makes the command end with 74, never success and an empty file.
///
/// `--quiet` (every command, `OutputOptions`): the lines a command prints for a person
/// (``out(_:)``, and ``err(_:)`` other than `error:` and `warning:` lines) are dropped; what
/// `--json` or `-` asks for, errors and the exit status are not.
///
/// An output file on standard output (`--trace -`, `--pcapng -`, `--backup -`, `--save -`;
/// ``linesOnStandardError``): those lines go to stderr instead, so stdout carries that file
/// alone (a trace piped to `jq` or `nfcbench trace show -` is JSON Lines throughout).
public enum BenchOutput {
    private static let quietState = Mutex(false)
    private static let linesOnStandardErrorState = Mutex(false)
    /// Set once by the command line before a command runs (`--quiet` without `--json`).
    public static var quiet: Bool {
        get { capture.map { $0.quiet } ?? quietState.withLock { $0 } }
        set {
            if let c = capture {
                c.quiet = newValue
            } else {
                quietState.withLock { $0 = newValue }
            }
        }
    }

    /// Set once by the command line before a command runs, when one of its output files is
    /// standard output (``/NFCBenchKit/OptionParser/standardOutputFile(_:options:)``): ``out(_:)``
    /// then writes on stderr, as `curl -o -` prints its progress there.
    public static var linesOnStandardError: Bool {
        get { capture.map { $0.linesOnStandardError } ?? linesOnStandardErrorState.withLock { $0 } }
        set {
            if let c = capture {
                c.linesOnStandardError = newValue
            } else {
                linesOnStandardErrorState.withLock { $0 = newValue }
            }
        }
    }

    /// Where this task's writes go instead of file descriptors 1 and 2, with its own `--quiet`
    /// gate: a command run inside a test process (nil: the real stdout and stderr). Writes from
    /// a thread outside the task (a device thread) still go to the descriptors.
    @TaskLocal public static var capture: Capture?

    /// What a command wrote to standard output and standard error while it ran in a capture.
    public final class Capture: Sendable {
        private let state = Mutex<(out: [UInt8], err: [UInt8], quiet: Bool, linesOnStandardError: Bool)>(
            ([], [], false, false))
        public init() {}
        public var stdout: String { String(decoding: state.withLock { $0.out }, as: UTF8.self) }
        public var stderr: String { String(decoding: state.withLock { $0.err }, as: UTF8.self) }
        var quiet: Bool {
            get { state.withLock { $0.quiet } }
            set { state.withLock { $0.quiet = newValue } }
        }
        var linesOnStandardError: Bool {
            get { state.withLock { $0.linesOnStandardError } }
            set { state.withLock { $0.linesOnStandardError = newValue } }
        }
        func append(_ fd: Int32, _ bytes: [UInt8]) {
            state.withLock { s in
                if fd == 2 { s.err += bytes } else { s.out += bytes }
            }
        }
    }

    public static func out(_ text: String) {
        if quiet { return }
        write(linesOnStandardError ? 2 : 1, text.hasSuffix("\n") ? text : text + "\n")
    }
    public static func err(_ text: String) {
        if quiet && !text.hasPrefix("error:") && !text.hasPrefix("warning:") { return }
        write(2, text.hasSuffix("\n") ? text : text + "\n")
    }
    /// Writes without adding a newline (status lines).
    public static func raw(_ text: String, fd: Int32 = 1) { write(fd, text) }
    /// Writes bytes as they are (a pcapng or a tag file on `-`).
    public static func bytes(_ bytes: [UInt8], fd: Int32 = 1) {
        if let c = capture {
            c.append(fd, bytes)
            return
        }
        // Nobody reads this pipe any more: end the command as SIGPIPE would, cleanly.
        if StandardOutput.write(fd, bytes) == EPIPE { BenchSignals.outputClosed() }
    }

    public static var stdoutIsTerminal: Bool { isatty(1) == 1 }

    private static func write(_ fd: Int32, _ text: String) { bytes(Array(text.utf8), fd: fd) }
}
