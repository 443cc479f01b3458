import Foundation
import NFCBenchKit
import NFCFiles

enum CLI {
    static let version = BenchVersion.version

    /// What `argv` asks for, decided without running anything: text for stdout (help,
    /// version), a usage mistake (its message and the help to show; exit 64), or a command
    /// with its parsed options.
    enum Interpretation {
        case text(String)
        case mistake(String, help: String)
        case run(Command, ParsedOptions)
    }

    /// Runs `argv` (without the program name) and returns the exit status.
    static func main(_ argv: [String]) async -> Int32 {
        switch resolve(argv) {
        case .done(let status): return status
        case .run(let command, let parsed): return await run(command, parsed)
        }
    }

    enum Resolution {
        case done(Int32)
        case run(Command, ParsedOptions)
    }

    /// Runs `argv` at once when nothing in it awaits (help, version, usage errors and the
    /// commands with ``Command/runNow``); `nil` when it needs ``main(_:)``.
    static func mainNow(_ argv: [String]) -> Int32? {
        switch resolve(argv) {
        case .done(let status): return status
        case .run(let command, let parsed):
            guard let now = command.runNow else { return nil }
            prepare(command, parsed)
            return outcome(command) { () throws -> Int32 in try now(parsed) }
        }
    }

    static func resolve(
        _ argv: [String], environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Resolution {
        switch interpret(argv, environment: environment) {
        case .text(let t):
            Output.out(t)
            return .done(0)
        case .mistake(let message, let help): return .done(usageError(message, help: help))
        case .run(let c, let p): return .run(c, p)
        }
    }

    /// The pure half of the command line: argv (and the environment, for `NFCBENCH_DEVICE`)
    /// to what it asks for. Tests call this without a process.
    static func interpret(_ argv: [String], environment: [String: String] = [:]) -> Interpretation {
        let commands = Registry.commands
        if argv.isEmpty { return .mistake("missing command", help: overview(commands)) }
        if argv == ["--help"] || argv == ["-h"] || argv == ["help"] { return .text(overview(commands)) }
        if argv == ["--version"] { return .text(VersionText.text()) }
        var words = argv
        if words.first == "help" {
            words.removeFirst()
            words.append("--help")
        }
        // Longest command path that matches the leading words.
        let match =
            commands
            .filter { $0.path.count <= words.count && Array(words.prefix($0.path.count)) == $0.path }
            .max { $0.path.count < $1.path.count }
        guard let command = match else {
            let group = commands.filter { $0.path.first == words.first }
            if !group.isEmpty {
                let rest = words.dropFirst()
                if rest.first == "--help" || rest.first == "-h" { return .text(groupOverview(words[0], group)) }
                guard let sub = rest.first else {
                    return .mistake("'nfcbench \(words[0])' needs a command", help: groupOverview(words[0], group))
                }
                let near = OptionParser.nearest(sub, among: group.compactMap { $0.path.dropFirst().first })
                return .mistake(
                    "unknown command 'nfcbench \(words[0]) \(sub)'" + (near.map { " (did you mean '\($0)'?)" } ?? ""),
                    help: groupOverview(words[0], group))
            }
            let names = Array(Set(commands.map { $0.path[0] })).sorted()
            let near = words[0].hasPrefix("-") ? nil : OptionParser.nearest(words[0], among: names)
            return .mistake(
                "unknown command '\(words[0])'" + (near.map { " (did you mean '\($0)'?)" } ?? ""),
                help: overview(commands))
        }
        let rest = Array(words.dropFirst(command.path.count))
        let options = rest.prefix { $0 != "--" }
        if options.contains("--help") || options.contains("-h") { return .text(command.helpText()) }
        do {
            return .run(command, try command.parse(rest, environment: environment))
        } catch {
            return .mistake(error.message, help: usageHelp(command))
        }
    }

    /// The help a usage mistake ends with.
    static func usageHelp(_ command: Command) -> String {
        "USAGE: nfcbench \(command.usage)\nSee 'nfcbench \(command.name) --help'."
    }

    /// What every command shares before it runs: `--quiet`'s gate, and its text lines on
    /// stderr when an output file is standard output (`--trace -`: stdout is that file alone).
    static func prepare(_ command: Command, _ parsed: ParsedOptions) {
        Output.quiet = !command.handlesQuiet && parsed.flag("quiet") && !parsed.flag("json")
        Output.linesOnStandardError = OptionParser.standardOutputFile(parsed.given, options: command.options) != nil
    }

    static func run(_ command: Command, _ parsed: ParsedOptions) async -> Int32 {
        prepare(command, parsed)
        do {
            return finished(try await command.run(parsed))
        } catch {
            return outcome(command) { () throws -> Int32 in throw error }
        }
    }

    /// A command's status once its outputs are checked to the end: 74, each failure named,
    /// when a trace, an export or standard output could not be written whole (a full disk),
    /// whatever the command found; its own status otherwise.
    static func finished(_ status: Int32) -> Int32 {
        StandardOutput.finish()
        let failures = OutputFailures.all
        guard !failures.isEmpty else { return status }
        for f in failures where f.path != "standard error" {
            // Standard error may be the failed one: try it all the same.
            _ = StandardOutput.write(2, Array("error: \(f.description)\n".utf8))
        }
        return 74
    }

    /// `body`'s exit status, or its error reported the way every command reports one.
    static func outcome(_ command: Command, _ body: () throws -> Int32) -> Int32 {
        do {
            return finished(try body())
        } catch let error as CLIError {
            if case .usage(let message) = error { return usageError(message, help: usageHelp(command)) }
            Output.err("error: \(error.message)")
            // A file the command named that failed part way was said above; other failures too.
            let other = OutputFailures.all.filter { !error.message.contains($0.description) }
            for f in other { Output.err("error: \(f.description)") }
            return error.exitCode
        } catch {
            Output.err("error: \(error)")
            return 1
        }
    }

    static func usageError(_ message: String, help: String) -> Int32 {
        Output.err("error: \(message)\n\(help.trimmingTrailingNewlines())")
        return 64
    }

    static func overview(_ commands: [Command]) -> String {
        var s = """
            OVERVIEW: nfcbench \(version): an NFC reader-session and HCE reader-event harness on libnfc and PC/SC

            USAGE: nfcbench <command> [options]
                   nfcbench <command> --help
                   nfcbench --version

            COMMANDS:

            """
        let width = (commands.map(\.name.count).max() ?? 0) + 2
        for c in commands {
            s += "  " + c.name.padding(toLength: width, withPad: " ", startingAt: 0) + c.abstract + "\n"
        }
        return s
    }

    static func groupOverview(_ group: String, _ commands: [Command]) -> String {
        var s = "USAGE:\n"
        for c in commands { s += "  nfcbench \(c.usage)\n" }
        s += "\nSee 'nfcbench \(group) <command> --help'.\n"
        return s
    }
}
