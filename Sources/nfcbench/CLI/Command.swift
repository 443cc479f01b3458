import NFCBenchKit
import NFCFiles

/// One `nfcbench` command: its words, its help, and what it runs.
struct Command: Sendable {
    /// The words that name it, e.g. `["tag", "show"]`.
    var path: [String]
    /// One line for the command list.
    var abstract: String
    /// The usage line(s) after `nfcbench `, e.g. `tag show FILE [--json]`.
    var usage: String
    /// Options and details, printed by `--help`: built when printed, so that listing the
    /// commands at start costs nothing.
    var help: String { helpBody() }
    private var helpBody: @Sendable () -> String
    /// Runs with the words after `path`; returns the exit status.
    var run: @Sendable (inout Arguments) async throws -> Int32
    /// The same without `await`, for a command that never waits: it then runs before Swift's
    /// concurrency runtime has started a thread, so the process starts and exits sooner.
    var runNow: (@Sendable (inout Arguments) throws -> Int32)?

    init(
        path: [String], abstract: String, usage: String, help: @autoclosure @escaping @Sendable () -> String,
        run: @escaping @Sendable (inout Arguments) async throws -> Int32,
        runNow: (@Sendable (inout Arguments) throws -> Int32)? = nil
    ) {
        self.path = path
        self.abstract = abstract
        self.usage = usage
        self.helpBody = help
        self.run = run
        self.runNow = runNow
    }

    var name: String { path.joined(separator: " ") }

    /// Every `--option` its usage line and help name.
    var documentedOptions: Set<String> {
        var names: Set<String> = []
        let text = usage + "\n" + help
        var rest = text[...]
        while let r = rest.range(of: "--") {
            let name = rest[r.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "-" }
            if let first = name.first, first.isLetter { names.insert("--" + name) }
            rest = rest[r.upperBound...]
        }
        // Every command with a trace takes --no-trace (Traces.Options).
        if names.contains("--trace") { names.insert("--no-trace") }
        return names
    }

    /// A usage message for `word`, a `--option` this command does not take, with the
    /// documented option it most likely meant.
    func unknownOption(_ word: String) -> String {
        let name = String(word.prefix { $0 != "=" })
        let near = documentedOptions.map { ($0, editDistance($0, name)) }.filter { $0.1 <= 2 }
            .min { ($0.1, $0.0) < ($1.1, $1.0) }
        return "unknown option '\(name)'" + (near.map { " (did you mean \($0.0)?)" } ?? "")
    }

    func helpText() -> String {
        var s = "OVERVIEW: \(abstract)\n\nUSAGE: nfcbench \(usage)\n"
        if !help.isEmpty { s += "\n" + help.trimmingTrailingNewlines() + "\n" }
        return s
    }
}

extension String {
    func trimmingTrailingNewlines() -> String {
        var s = self
        while s.last == "\n" { s.removeLast() }
        return s
    }
}

enum CLI {
    static let version = "0.1.0"

    /// What `argv` asks for: an exit status already (help, version, a usage error), or a
    /// command to run with its arguments.
    enum Resolution {
        case done(Int32)
        case run(Command, Arguments)
    }

    /// Runs `argv` (without the program name) and returns the exit status.
    static func main(_ argv: [String]) async -> Int32 {
        switch resolve(argv) {
        case .done(let status): return status
        case .run(let command, var args): return await run(command, &args)
        }
    }

    /// Runs `argv` at once when nothing in it awaits (help, version, usage errors and the
    /// commands with ``Command/runNow``); `nil` when it needs ``main(_:)``.
    static func mainNow(_ argv: [String]) -> Int32? {
        switch resolve(argv) {
        case .done(let status): return status
        case .run(let command, var args):
            guard let now = command.runNow else { return nil }
            return outcome(command, { args.unconsumed }) { () throws -> Int32 in try now(&args) }
        }
    }

    static func resolve(_ argv: [String]) -> Resolution {
        let commands = Registry.commands
        if argv.isEmpty {
            return .done(usageError("missing command", help: overview(commands)))
        }
        if argv == ["--help"] || argv == ["-h"] || argv == ["help"] {
            Output.out(overview(commands))
            return .done(0)
        }
        if argv == ["--version"] {
            Output.out(VersionText.text())
            return .done(0)
        }
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
                if rest.first == "--help" || rest.first == "-h" {
                    Output.out(groupOverview(words[0], group))
                    return .done(0)
                }
                if rest.isEmpty {
                    return .done(
                        usageError("'nfcbench \(words[0])' needs a command", help: groupOverview(words[0], group)))
                }
                return .done(
                    usageError(
                        "unknown command 'nfcbench \(words[0]) \(rest.first!)'", help: groupOverview(words[0], group)))
            }
            return .done(usageError("unknown command '\(words[0])'", help: overview(commands)))
        }
        var args = Arguments(words.dropFirst(command.path.count))
        if args.flag("help", short: "h") {
            Output.out(command.helpText())
            return .done(0)
        }
        return .run(command, args)
    }

    static func run(_ command: Command, _ args: inout Arguments) async -> Int32 {
        do {
            return finished(try await command.run(&args))
        } catch {
            return outcome(command, { args.unconsumed }) { () throws -> Int32 in throw error }
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

    /// `body`'s exit status, or its error reported the way every command reports one;
    /// `unconsumed` gives what the command left of its arguments, asked after `body` ran (an
    /// unknown option is named first).
    static func outcome(_ command: Command, _ unconsumed: () -> [String], _ body: () throws -> Int32) -> Int32 {
        do {
            return finished(try body())
        } catch let error as CLIError {
            if case .usage(var message) = error {
                // An option the command does not know is the first thing to say, before what
                // the command missed because of it (`session --bogus`: not "--device is required").
                let documented = command.documentedOptions
                if let word = unconsumed().first(where: {
                    $0.hasPrefix("--") && $0 != "--" && !documented.contains(String($0.prefix { $0 != "=" }))
                }) {
                    message = command.unknownOption(word)
                } else if message.hasPrefix("unknown option '"),
                    let word = message.split(separator: "'").dropFirst().first
                {
                    message = command.unknownOption(String(word))
                }
                return usageError(
                    message, help: "USAGE: nfcbench \(command.usage)\nSee 'nfcbench \(command.name) --help'.")
            }
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
