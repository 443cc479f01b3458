import Foundation
import NFCBenchKit
import NFCFiles

/// One `nfcbench` command: its words, its option table, its help, and what it runs.
///
/// A command declares each option once (``OptionSpec``); its usage line, `--help`, "did you
/// mean", shell completion and man page come from the table, and ``OptionParser`` checks argv
/// against it before `run` sees the ``ParsedOptions``: parse, then run, each testable alone.
struct Command: Sendable {
    /// The words that name it, e.g. `["tag", "show"]`.
    var path: [String]
    /// One line for the command list.
    var abstract: String
    /// Its options, `--quiet` included (every command takes it).
    var options: [OptionSpec]
    var positionals: [PositionalSpec]
    /// A second usage form, for a command whose options go in two shapes.
    var alternateUsage: String?
    /// What the command does, printed by `--help` before its options; built when printed, so
    /// that listing the commands at start costs nothing.
    var discussion: String { discussionBody() }
    /// Printed after the options (a model table, exit statuses).
    var footer: String { footerBody() }
    private var discussionBody: @Sendable () -> String
    private var footerBody: @Sendable () -> String
    /// Whether the command gives `--quiet` a meaning of its own (the virtual devices print
    /// their start line): the shared gate in ``Output`` is then left open.
    var handlesQuiet: Bool
    /// Checks between options that the table can't say (`--lock` needs its confirmation):
    /// usage errors, thrown before anything runs.
    var validate: @Sendable (ParsedOptions) throws(CLIError) -> Void
    /// Runs with the parsed words; returns the exit status.
    var run: @Sendable (ParsedOptions) async throws -> Int32
    /// The same without `await`, for a command that never waits: it then runs before Swift's
    /// concurrency runtime has started a thread, so the process starts and exits sooner.
    var runNow: (@Sendable (ParsedOptions) throws -> Int32)?

    init(
        path: [String], abstract: String, options: [OptionSpec] = [], positionals: [PositionalSpec] = [],
        alternateUsage: String? = nil, discussion: @autoclosure @escaping @Sendable () -> String = "",
        footer: @autoclosure @escaping @Sendable () -> String = "",
        validate: @escaping @Sendable (ParsedOptions) throws(CLIError) -> Void = { _ throws(CLIError) in },
        run: @escaping @Sendable (ParsedOptions) async throws -> Int32,
        runNow: (@Sendable (ParsedOptions) throws -> Int32)? = nil
    ) {
        self.path = path
        self.abstract = abstract
        handlesQuiet = options.contains { $0.name == "quiet" }
        self.options = handlesQuiet ? options : options + [OutputOptions.quiet]
        self.positionals = positionals
        self.alternateUsage = alternateUsage
        self.discussionBody = discussion
        self.footerBody = footer
        self.validate = validate
        self.run = run
        self.runNow = runNow
    }

    var name: String { path.joined(separator: " ") }

    /// Checks `words` (after the command's name) against the tables, then ``validate``.
    func parse(_ words: [String], environment: [String: String] = [:]) throws(CLIError) -> ParsedOptions {
        let parsed = try OptionParser.parse(words, options: options, positionals: positionals, environment: environment)
        try validate(parsed)
        return parsed
    }

    /// The usage line after `nfcbench `: required options first, then the others, then the
    /// positional words.
    var usage: String {
        var parts = [name]
        let shown = options.filter { !$0.hidden }
        for o in shown where o.required && o.group == .device { parts.append(o.synopsis) }
        for o in shown where o.required && o.group != .device { parts.append(o.synopsis) }
        for o in shown where !o.required { parts.append("[\(o.synopsis)]") }
        for p in positionals {
            let name = p.repeats ? p.name + "…" : p.name
            parts.append(p.optional ? "[\(name)]" : name)
        }
        return parts.joined(separator: " ") + (alternateUsage.map { "\n       nfcbench \($0)" } ?? "")
    }

    /// The options' part of `--help`, one heading per group.
    var optionsHelp: String {
        let shown = options.filter { !$0.hidden }
        let width = min(26, (shown.map { $0.synopsis.count }.max() ?? 0) + 2)
        var s = ""
        if !positionals.isEmpty {
            s += "ARGUMENTS:\n"
            for p in positionals { s += Self.helpRow(p.name, p.help, width: width) }
            s += "\n"
        }
        for group in OptionSpec.Group.allCases {
            let rows = shown.filter { $0.group == group }
            guard !rows.isEmpty else { continue }
            s += "\(group.rawValue):\n"
            for o in rows {
                var help = o.help
                var notes: [String] = []
                if let d = o.defaultText { notes.append("default: \(d)") }
                if let e = o.environment { notes.append("or $\(e)") }
                if !o.aliases.isEmpty { notes.append("also " + o.aliases.map { "--" + $0 }.joined(separator: ", ")) }
                if let c = o.short { notes.append("also -\(c)") }
                if !notes.isEmpty { help += (help.contains("\n") ? "\n(" : " (") + notes.joined(separator: "; ") + ")" }
                s += Self.helpRow(o.synopsis, help, width: width)
            }
            s += "\n"
        }
        return s
    }

    static func helpRow(_ left: String, _ help: String, width: Int) -> String {
        let pad = String(repeating: " ", count: width + 2)
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var s = "  " + left
        if left.count + 2 > width {
            s += "\n" + pad
        } else {
            s += String(repeating: " ", count: width - left.count)
        }
        s += lines.first ?? ""
        for l in lines.dropFirst() { s += "\n" + pad + l }
        return s + "\n"
    }

    func helpText() -> String {
        var s = "OVERVIEW: \(abstract)\n\nUSAGE: nfcbench \(usage)\n"
        if !discussion.isEmpty { s += "\n" + discussion.trimmingTrailingNewlines() + "\n" }
        s += "\n" + optionsHelp.trimmingTrailingNewlines() + "\n"
        if !footer.isEmpty { s += "\n" + footer.trimmingTrailingNewlines() + "\n" }
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

    static func resolve(_ argv: [String]) -> Resolution {
        switch interpret(argv, environment: ProcessInfo.processInfo.environment) {
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

    /// What every command shares before it runs: `--quiet`'s gate.
    static func prepare(_ command: Command, _ parsed: ParsedOptions) {
        Output.quiet = !command.handlesQuiet && parsed.flag("quiet") && !parsed.flag("json")
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
