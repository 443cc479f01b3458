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
