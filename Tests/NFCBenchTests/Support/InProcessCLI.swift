@testable import nfcbench

/// The command line in this process: what `nfcbench` would do with `argv` before it runs
/// anything (``CLI/interpret(_:environment:)``), for tests of usage mistakes that need no process.
enum InProcessCLI {
    /// The usage mistake `argv` makes (what `nfcbench` prints after `error: `; it exits 64), or
    /// nil when `argv` runs a command or prints text.
    static func mistake(_ argv: [String], environment: [String: String] = [:]) -> String? {
        if case .mistake(let message, _) = CLI.interpret(argv, environment: environment) { return message }
        return nil
    }
}
