import Foundation

/// One `nfcbench` command: its words, its option table, its help, and what it runs.
///
/// A command declares each option once (``OptionSpec``); its usage line, `--help`, "did you
/// mean", shell completion and man page come from the table, and ``OptionParser`` checks argv
/// against it before `run` sees the ``ParsedOptions``: parse, then run, each testable alone.
public struct Command: Sendable {
    /// The words that name it, e.g. `["tag", "show"]`.
    public var path: [String]
    /// One line for the command list.
    public var abstract: String
    /// Its options, `--quiet` included (every command takes it).
    public var options: [OptionSpec]
    public var positionals: [PositionalSpec]
    /// A second usage form, for a command whose options go in two shapes.
    public var alternateUsage: String?
    /// What the command does, printed by `--help` before its options; built when printed, so
    /// that listing the commands at start costs nothing.
    public var discussion: String { discussionBody() }
    /// Printed after the options (a model table, exit statuses).
    public var footer: String { footerBody() }
    private var discussionBody: @Sendable () -> String
    private var footerBody: @Sendable () -> String
    /// Whether the command declares `--quiet` itself (none does: every command takes the shared
    /// ``OutputOptions/quiet``, whose gate in ``BenchOutput`` drops every line but errors and
    /// what `--json` or `-` asks for); the gate is then left to the command.
    public var handlesQuiet: Bool
    /// Checks between options that the table can't say (`--lock` needs its confirmation):
    /// usage errors, thrown before anything runs.
    public var validate: @Sendable (ParsedOptions) throws(BenchError) -> Void
    /// Runs with the parsed words; returns the exit status.
    public var run: @Sendable (ParsedOptions) async throws -> Int32
    /// The same without `await`, for a command that never waits: it then runs before Swift's
    /// concurrency runtime has started a thread, so the process starts and exits sooner.
    public var runNow: (@Sendable (ParsedOptions) throws -> Int32)?

    public init(
        path: [String], abstract: String, options: [OptionSpec] = [], positionals: [PositionalSpec] = [],
        alternateUsage: String? = nil, discussion: @autoclosure @escaping @Sendable () -> String = "",
        footer: @autoclosure @escaping @Sendable () -> String = "",
        validate: @escaping @Sendable (ParsedOptions) throws(BenchError) -> Void = { _ throws(BenchError) in },
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

    public var name: String { path.joined(separator: " ") }

    /// Checks `words` (after the command's name) against the tables, then ``validate``.
    public func parse(_ words: [String], environment: [String: String] = [:]) throws(BenchError) -> ParsedOptions {
        let parsed = try OptionParser.parse(words, options: options, positionals: positionals, environment: environment)
        try validate(parsed)
        return parsed
    }

    /// The usage line after `nfcbench `: required options first, then the others, then the
    /// positional words.
    public var usage: String {
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
    public var optionsHelp: String {
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

    public static func helpRow(_ left: String, _ help: String, width: Int) -> String {
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

    public func helpText() -> String {
        var s = "OVERVIEW: \(abstract)\n\nUSAGE: nfcbench \(usage)\n"
        if !discussion.isEmpty { s += "\n" + discussion.trimmingTrailingNewlines() + "\n" }
        s += "\n" + optionsHelp.trimmingTrailingNewlines() + "\n"
        if !footer.isEmpty { s += "\n" + footer.trimmingTrailingNewlines() + "\n" }
        return s
    }
}

extension String {
    public func trimmingTrailingNewlines() -> String {
        var s = self
        while s.last == "\n" { s.removeLast() }
        return s
    }
}

/// The shared output group's options: `--json` (each command says what it prints) and `--quiet`.
public enum OutputOptions {
    /// `--json`, with what the command prints.
    public static func json(_ what: String) -> OptionSpec {
        OptionSpec("json", .flag, help: what, group: .output, standardOutput: .whenGiven)
    }

    public static let quiet = OptionSpec(
        "quiet", .flag,
        help: "print nothing but errors and what --json or - asks for; the exit status says how it ended",
        group: .output, short: "q")
}
