import Foundation
import NFCFiles
import Synchronization

/// Plain writes to stdout and stderr (unbuffered, so lines interleave correctly with
/// subprocesses and survive a SIGKILL), every one checked (``StandardOutput``): a full disk
/// under `> file` makes the command end with 74, never success and an empty file.
///
/// `--quiet` (every command, ``OutputOptions``): the lines a command prints for a person
/// (``out(_:)``, and ``err(_:)`` other than `error:` and `warning:` lines) are dropped; what
/// `--json` or `-` asks for, errors and the exit status are not.
enum Output {
    private static let quietState = Mutex(false)
    /// Set once by the command line before a command runs (`--quiet` without `--json`).
    static var quiet: Bool {
        get { quietState.withLock { $0 } }
        set { quietState.withLock { $0 = newValue } }
    }

    static func out(_ text: String) {
        if quiet { return }
        write(1, text.hasSuffix("\n") ? text : text + "\n")
    }
    static func err(_ text: String) {
        if quiet && !text.hasPrefix("error:") && !text.hasPrefix("warning:") { return }
        write(2, text.hasSuffix("\n") ? text : text + "\n")
    }
    /// Writes without adding a newline (status lines).
    static func raw(_ text: String, fd: Int32 = 1) { write(fd, text) }
    /// Writes bytes as they are (a pcapng or a tag file on `-`).
    static func bytes(_ bytes: [UInt8], fd: Int32 = 1) {
        // Nobody reads this pipe any more: end the command as SIGPIPE would, cleanly.
        if StandardOutput.write(fd, bytes) == EPIPE { Signals.outputClosed() }
    }

    static var stdoutIsTerminal: Bool { isatty(1) == 1 }

    private static func write(_ fd: Int32, _ text: String) { bytes(Array(text.utf8), fd: fd) }
}

/// Output files a command was told to write (`--out`, `--backup`, `--svg`, `--pcapng`, `--save`),
/// checked before anything is read or sent, so a typo in a folder name costs nothing; written
/// by ``/NFCFiles/OutputFile``'s rules.
enum Outputs {
    /// `path` planned for writing (``/NFCFiles/OutputFile/plan(_:label:mode:followLinks:)``);
    /// throws can't-create (73) naming `option path` (or `label`).
    static func plan(_ path: String, option: String, label: String? = nil) throws(CLIError) -> OutputFile {
        do { return try OutputFile.plan(path, label: label ?? "\(option) \(path)") } catch { throw CLIError(error) }
    }

    /// Refuses (64) an output that is the same file as an input or another output, before
    /// anything is read or sent (``/NFCFiles/SameFile``).
    static func refuseSameFiles(outputs: [NamedFile], inputs: [NamedFile] = []) throws(CLIError) {
        do { try SameFile.refuse(outputs: outputs, inputs: inputs) } catch { throw CLIError(error) }
    }
}

/// The output group every command shares: `--json` on each that reports a result, `--quiet`
/// on every one.
enum OutputOptions {
    /// `--json`, with what the command prints.
    static func json(_ what: String) -> OptionSpec {
        OptionSpec("json", .flag, help: what, group: .output)
    }

    static let quiet = OptionSpec(
        "quiet", .flag,
        help: "print nothing but errors and what --json or - asks for; the exit status says how it ended",
        group: .output, short: "q")
}
