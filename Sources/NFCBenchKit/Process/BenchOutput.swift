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
public enum BenchOutput {
    private static let quietState = Mutex(false)
    /// Set once by the command line before a command runs (`--quiet` without `--json`).
    public static var quiet: Bool {
        get { quietState.withLock { $0 } }
        set { quietState.withLock { $0 = newValue } }
    }

    public static func out(_ text: String) {
        if quiet { return }
        write(1, text.hasSuffix("\n") ? text : text + "\n")
    }
    public static func err(_ text: String) {
        if quiet && !text.hasPrefix("error:") && !text.hasPrefix("warning:") { return }
        write(2, text.hasSuffix("\n") ? text : text + "\n")
    }
    /// Writes without adding a newline (status lines).
    public static func raw(_ text: String, fd: Int32 = 1) { write(fd, text) }
    /// Writes bytes as they are (a pcapng or a tag file on `-`).
    public static func bytes(_ bytes: [UInt8], fd: Int32 = 1) {
        // Nobody reads this pipe any more: end the command as SIGPIPE would, cleanly.
        if StandardOutput.write(fd, bytes) == EPIPE { BenchSignals.outputClosed() }
    }

    public static var stdoutIsTerminal: Bool { isatty(1) == 1 }

    private static func write(_ fd: Int32, _ text: String) { bytes(Array(text.utf8), fd: fd) }
}
