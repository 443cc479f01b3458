/// One option a command takes, declared once: its name (and older spellings that keep
/// working), what its value is, its default, its help and its group. Usage lines, `--help`,
/// "did you mean", shell completion and the man page are generated from these tables, and
/// ``OptionParser`` checks argv against them before a command runs.
public struct OptionSpec: Sendable {
    /// What the option's value is; each kind has one message for a value it refuses.
    public enum Kind: Sendable, Equatable {
        /// No value: present or not.
        case flag
        /// Any text (a path, a name, a spec).
        case text
        /// A whole number written in decimal digits within the range.
        case int(ClosedRange<Int>)
        /// A duration with a unit (`250us`, `500ms`, `2s`, `1m`, `1h`); a bare number is in
        /// `bare` (nil: a bare number other than 0 is refused, the unit must be written).
        case duration(bare: DurationUnit?, moreThanZero: Bool)
        /// One of these words.
        case choice([String])
        /// A comma-separated list (empty items dropped); with `of`, every item is one of these.
        case list(of: [String]?)
        /// Text that may be given more than once; the value is every one, in order (a `.list`).
        case repeated
    }

    /// Which shared group an option belongs to: `--help` lists each under its own heading.
    public enum Group: String, Sendable, CaseIterable {
        case device = "DEVICE"
        case command = "OPTIONS"
        case trace = "TRACE"
        case output = "OUTPUT"
    }

    public var name: String
    public var kind: Kind
    /// The value's placeholder in usage and help (`PATH`, `D`, `SPEC`); empty for a flag.
    public var value: String
    public var help: String
    public var group: Group
    /// Older spellings that keep working (`--wait` for `dump --timeout`, say); not in the usage.
    public var aliases: [String]
    /// A one-letter spelling (`-q`).
    public var short: Character?
    /// The value when the option is left out (shown in the help).
    public var defaultValue: OptionValue?
    /// An environment variable read when the option is left out (`NFCBENCH_DEVICE`).
    public var environment: String?
    /// A usage error when neither the option nor its environment variable gives it.
    public var required: Bool
    /// Left out of the usage line and help (still parsed and completed).
    public var hidden: Bool
    /// What the shells complete for the value.
    public var completion: Completion
    /// The durations a duration option takes (nil: any from 0).
    public var durationRange: ClosedRange<Duration>?
    /// Whether (and when) the option writes on standard output: two such options given at
    /// once are refused before anything runs (``OptionParser/standardOutputClash(_:options:)``).
    public var standardOutput: StandardOutputUse?

    /// When an option writes on standard output.
    public enum StandardOutputUse: Sendable, Equatable {
        /// An output file whose name may be `-` (or `/dev/stdout`): standard output then.
        case whenDash
        /// A flag whose output is printed there (`--json`).
        case whenGiven
    }

    public enum Completion: Sendable, Equatable {
        case none, file, directory, devices
        case words([String])
    }

    public init(
        _ name: String, _ kind: Kind = .text, value: String = "", help: String, group: Group = .command,
        aliases: [String] = [], short: Character? = nil, default defaultValue: OptionValue? = nil,
        environment: String? = nil, required: Bool = false, hidden: Bool = false, completion: Completion? = nil,
        in durationRange: ClosedRange<Duration>? = nil, standardOutput: StandardOutputUse? = nil
    ) {
        self.durationRange = durationRange
        self.standardOutput = standardOutput
        self.name = name
        self.kind = kind
        self.value = kind == .flag ? "" : (value.isEmpty ? Self.placeholder(kind) : value)
        self.help = help
        self.group = group
        self.aliases = aliases
        self.short = short
        self.defaultValue = defaultValue
        self.environment = environment
        self.required = required
        self.hidden = hidden
        switch (completion, kind) {
        case (let c?, _): self.completion = c
        case (nil, .choice(let words)): self.completion = .words(words)
        case (nil, .text) where ["PATH", "FILE", "OUT", "TRACE"].contains(self.value): self.completion = .file
        case (nil, .text) where self.value == "DIR": self.completion = .directory
        default: self.completion = .none
        }
    }

    public static func placeholder(_ kind: Kind) -> String {
        switch kind {
        case .flag: ""
        case .text: "VALUE"
        case .int: "N"
        case .duration: "DURATION"
        case .choice(let words): words.joined(separator: "|")
        case .list: "A,B,…"
        case .repeated: "VALUE"
        }
    }

    /// Every spelling, with its dashes.
    public var spellings: [String] {
        (["--" + name] + aliases.map { "--" + $0 }) + (short.map { ["-" + String($0)] } ?? [])
    }

    /// `--name VALUE` (or `--name`).
    public var synopsis: String { value.isEmpty ? "--\(name)" : "--\(name) \(value)" }

    /// The help's default, in the form the option is written (`10s`, `250ms`).
    public var defaultText: String? {
        switch defaultValue {
        case nil, .flag?: nil
        case .text(let t)?: t
        case .int(let n)?: String(n)
        case .duration(let d)?: Durations.text(d)
        case .list(let l)?: l.joined(separator: ",")
        }
    }
}

/// A positional word a command takes, in order.
public struct PositionalSpec: Sendable {
    public var name: String
    public var help: String
    public var optional = false
    public var completion: OptionSpec.Completion = .file
    /// The words it may be (nil: any).
    public var choices: [String]? = nil
    /// The message when it is left out (nil: "missing NAME").
    public var missing: String? = nil
    /// The last positional only: it takes every word left (`apdu HEX…`).
    public var repeats = false

    /// A positional word: `name` as usage and help show it, its help, and the rest as the
    /// properties above say.
    public init(
        name: String, help: String, optional: Bool = false, completion: OptionSpec.Completion = .file,
        choices: [String]? = nil, missing: String? = nil, repeats: Bool = false
    ) {
        self.name = name
        self.help = help
        self.optional = optional
        self.completion = completion
        self.choices = choices
        self.missing = missing
        self.repeats = repeats
    }
}

/// The unit a bare number is in, for a duration option.
public enum DurationUnit: String, Sendable, Equatable {
    case seconds, milliseconds
}

/// A parsed value, already checked against its option's kind.
public enum OptionValue: Sendable, Equatable {
    case flag
    case text(String)
    case int(Int)
    case duration(Duration)
    case list([String])
}

/// One duration syntax for every duration option: a decimal number and a unit.
public enum Durations {
    public static let units: [(suffix: String, microseconds: Double)] = [
        ("ms", 1000), ("us", 1), ("µs", 1), ("s", 1_000_000), ("m", 60_000_000), ("h", 3_600_000_000),
    ]

    /// `text` as a duration; `bare` is the unit of a bare number (nil: only 0 may be bare).
    /// nil when it is no duration (a bare number where a unit is needed gives `.needsUnit`).
    public static func parse(_ text: String, bare: DurationUnit?) -> Result<Duration, Refusal> {
        var number = text[...]
        var scale: Double?
        for u in units where number.hasSuffix(u.suffix) {
            number = number.dropLast(u.suffix.count)
            scale = u.microseconds
            break
        }
        guard let n = decimal(number) else { return .failure(.notADuration) }
        if scale == nil {
            switch bare {
            case .seconds?: scale = 1_000_000
            case .milliseconds?: scale = 1000
            case nil:
                guard n == 0 else { return .failure(.needsUnit) }
                scale = 1
            }
        }
        let us = n * scale!
        guard us <= 1e15 else { return .failure(.notADuration) }
        return .success(.microseconds(Int64(us.rounded())))
    }

    public enum Refusal: Error { case notADuration, needsUnit }

    /// A plain decimal number as people write one (`2`, `0.5`, `.5`, `2.`): digits and at
    /// most one point; no sign, hex (`0x10`), exponent, `inf` or `nan`.
    public static func decimal(_ s: some StringProtocol) -> Double? {
        guard s.contains(where: \.isNumber), s.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            s.filter({ $0 == "." }).count <= 1
        else { return nil }
        return Double(String(s))
    }

    /// `d` written the way the options take it: `10s`, `250ms`, `1.5s`, `100us`.
    public static func text(_ d: Duration) -> String {
        let us = d.components.seconds * 1_000_000 + d.components.attoseconds / 1_000_000_000_000
        if us == 0 { return "0s" }
        if us % 60_000_000 == 0 && us >= 60_000_000 { return "\(us / 60_000_000)m" }
        if us % 1_000_000 == 0 { return "\(us / 1_000_000)s" }
        if us % 1000 == 0 { return "\(us / 1000)ms" }
        return "\(us)us"
    }
}

/// What a command was given, checked against its tables: each option's value by its name
/// (given, from its environment variable, or its default) and the positional words.
public struct ParsedOptions: Sendable, Equatable {
    /// The options given on the command line or by their environment variable, by name.
    public var given: [String: OptionValue]
    public var positionals: [String]
    /// Every option the command declares, with its default.
    public var defaults: [String: OptionValue]
    public var declared: Set<String>

    public init(
        given: [String: OptionValue] = [:], positionals: [String] = [], defaults: [String: OptionValue] = [:],
        declared: Set<String> = []
    ) {
        self.given = given
        self.positionals = positionals
        self.defaults = defaults
        self.declared = declared
    }

    public func declares(_ name: String) -> Bool { declared.contains(name) }

    private func value(_ name: String) -> OptionValue? {
        assert(declared.contains(name), "--\(name) is not in the command's table")
        return given[name] ?? defaults[name]
    }

    /// Whether the option was given (or set by its environment variable), default aside.
    public func has(_ name: String) -> Bool { given[name] != nil }

    public func flag(_ name: String) -> Bool { declared.contains(name) && value(name) == .flag }

    public func string(_ name: String) -> String? {
        guard declared.contains(name), case .text(let t)? = value(name) else { return nil }
        return t
    }

    public func int(_ name: String) -> Int? {
        guard declared.contains(name), case .int(let n)? = value(name) else { return nil }
        return n
    }

    public func duration(_ name: String) -> Duration? {
        guard declared.contains(name), case .duration(let d)? = value(name) else { return nil }
        return d
    }

    public func list(_ name: String) -> [String]? {
        guard declared.contains(name), case .list(let l)? = value(name) else { return nil }
        return l
    }

    public func positional(_ index: Int) -> String? { index < positionals.count ? positionals[index] : nil }

    /// The first of `names` given as standard output (`--trace -`: its spelling and the name),
    /// for a command whose own result is printed there too (dump's tag file without `--out`).
    public func standardOutputFile(among names: [String]) -> (name: String, value: String)? {
        for n in names {
            if case .text(let t)? = given[n], OptionParser.standardOutputNames.contains(t) { return ("--\(n)", t) }
        }
        return nil
    }
}

/// argv against a command's tables: pure, so a test checks argv → ``ParsedOptions`` and
/// every mistake's message and exit code without a process.
///
/// Accepted forms: `--name value`, `--name=value`, `--flag`, `-h`, a short spelling, and `--`
/// (everything after it is positional). Refused, one message per kind: an unknown option
/// (with the nearest name), a missing value, a value of the wrong kind, a single-value
/// option or a flag given twice (only `.repeated` options repeat), a flag given a value, a
/// required option left out, too many or too few positional words, two outputs on standard
/// output (``standardOutputClash(_:options:)``).
public enum OptionParser {
    public static func parse(
        _ argv: [String], options: [OptionSpec], positionals: [PositionalSpec], environment: [String: String] = [:]
    ) throws(BenchError) -> ParsedOptions {
        var bySpelling: [String: OptionSpec] = [:]
        for o in options { for s in o.spellings { bySpelling[s] = o } }
        // First pass: the words, split into options (raw values) and positionals. An unknown
        // option is the first thing said, before what the command missed because of it.
        var raw: [(spec: OptionSpec, spelling: String, value: String?)] = []
        var words: [String] = []
        var i = 0
        var terminated = false
        var firstUnknown: String?
        while i < argv.count {
            let t = argv[i]
            i += 1
            if terminated || t == "-" || !t.hasPrefix("-") || isNegativeNumber(t) {
                words.append(t)
                continue
            }
            if t == "--" {
                terminated = true
                continue
            }
            let spelling = t.hasPrefix("--") ? String(t.prefix { $0 != "=" }) : t
            let inline: String? = t.hasPrefix("--") && t.contains("=") ? String(t.drop { $0 != "=" }.dropFirst()) : nil
            guard let spec = bySpelling[spelling] else {
                if firstUnknown == nil { firstUnknown = spelling }
                continue
            }
            if spec.kind == .flag {
                raw.append((spec, spelling, inline))
                continue
            }
            if let inline {
                raw.append((spec, spelling, inline))
            } else if i < argv.count, !argv[i].hasPrefix("--") {
                raw.append((spec, spelling, argv[i]))
                i += 1
            } else {
                raw.append((spec, spelling, nil))
            }
        }
        if let firstUnknown { throw .usage(unknownOption(firstUnknown, among: options)) }
        // Second pass: each value by its option's kind.
        var given: [String: OptionValue] = [:]
        var seen: [String: String] = [:]
        for (spec, spelling, text) in raw {
            if spec.kind == .flag && text != nil { throw .usage("\(spelling) takes no value") }
            if spec.kind != .flag && text == nil { throw .usage("\(spelling) needs a value") }
            if spec.kind == .repeated, let text {
                if case .list(let earlier)? = given[spec.name] {
                    given[spec.name] = .list(earlier + [text])
                } else {
                    given[spec.name] = .list([text])
                }
                continue
            }
            // Anything but a repeatable option, a flag included, is given once.
            if let earlier = seen[spec.name] { throw .usage(givenTwice(spelling, earlier)) }
            seen[spec.name] = spelling
            given[spec.name] = spec.kind == .flag ? .flag : try value(text ?? "", for: spec, spelling: spelling)
        }
        if let clash = standardOutputClash(given, options: options) { throw .usage(clash) }
        for spec in options where given[spec.name] == nil {
            if let env = spec.environment, let text = environment[env], !text.isEmpty {
                given[spec.name] = try value(text, for: spec, spelling: "$\(env)")
            } else if spec.required {
                throw .usage(requiredMessage(spec))
            }
        }
        let required = positionals.filter { !$0.optional }.count
        if words.count > positionals.count, positionals.last?.repeats != true {
            throw .usage("unexpected argument '\(words[positionals.count])'")
        }
        if words.count < required {
            let p = positionals[words.count]
            throw .usage(p.missing ?? "missing \(p.name)")
        }
        let each =
            positionals
            + Array(repeating: positionals.last, count: max(0, words.count - positionals.count))
            .compactMap { $0 }
        for (p, word) in zip(each, words) {
            if let choices = p.choices, !choices.contains(word) { throw .usage(notOneOf(p.name, choices, word)) }
        }
        var defaults: [String: OptionValue] = [:]
        for o in options { if let d = o.defaultValue { defaults[o.name] = d } }
        return ParsedOptions(
            given: given, positionals: words, defaults: defaults, declared: Set(options.map(\.name)))
    }

    /// The one message for an option given twice (a flag or a single value), under one
    /// spelling or two.
    public static func givenTwice(_ spelling: String, _ earlier: String) -> String {
        earlier == spelling
            ? "\(spelling) is given twice: give it once"
            : "\(spelling) and \(earlier) are the same option: give it once"
    }

    /// The names that are standard output itself (``/NFCFiles/OutputFile``'s rule).
    public static let standardOutputNames: Set<String> = ["-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"]

    /// The one message for a flag that prints on standard output (`--json`) given with an output
    /// file that is standard output too (`--trace -`): the two would be interleaved there. Nil
    /// when at most one writes there. Two output files that are both standard output are the
    /// same file, refused as such when the command plans its outputs (``/NFCFiles/SameFile``).
    public static func standardOutputClash(_ given: [String: OptionValue], options: [OptionSpec]) -> String? {
        let flag = options.first { $0.standardOutput == .whenGiven && given[$0.name] == .flag }.map { "--\($0.name)" }
        guard let flag, let file = standardOutputFile(given, options: options) else { return nil }
        return "\(flag) and \(file.name) \(file.value) both write to standard output: give \(file.name) a file name,"
            + " or leave out \(flag)"
    }

    /// The first output file given as standard output (`--trace -`: the option's spelling and
    /// the name), nil when none is: the command's text lines then go to stderr
    /// (``BenchOutput/linesOnStandardError``), so stdout holds that file alone.
    public static func standardOutputFile(_ given: [String: OptionValue], options: [OptionSpec]) -> (
        name: String, value: String
    )? {
        for o in options where o.standardOutput == .whenDash {
            if case .text(let t)? = given[o.name], standardOutputNames.contains(t) { return ("--\(o.name)", t) }
        }
        return nil
    }

    public static func isNegativeNumber(_ t: String) -> Bool {
        t.count > 1 && t.first == "-" && t.dropFirst().allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") }
    }

    /// The one message for an option left out.
    public static func requiredMessage(_ spec: OptionSpec) -> String {
        var m = "\(spec.synopsis) is required"
        if spec.name == "device" { m += " (pcsc:READER, pn532_uart:PATH, sim:SCENARIO…; see 'nfcbench devices')" }
        if let env = spec.environment { m += ", or set \(env)" }
        return m
    }

    public static func value(_ text: String, for spec: OptionSpec, spelling: String) throws(BenchError) -> OptionValue {
        switch spec.kind {
        case .flag: return .flag
        case .text: return .text(text)
        case .repeated: return .list([text])
        case .int(let range):
            let digits = text.hasPrefix("-") ? text.dropFirst() : text[...]
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let v = Int(text),
                range.contains(v)
            else {
                throw .usage(
                    "\(spelling) takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
            }
            return .int(v)
        case .duration(let bare, let moreThanZero):
            switch Durations.parse(text, bare: bare) {
            case .success(let d) where !moreThanZero || d > .zero:
                if let r = spec.durationRange, !r.contains(d) {
                    let bareText = bare.map { "; a bare number is \($0.rawValue)" } ?? ""
                    throw .usage(
                        "\(spelling) takes a duration from \(Durations.text(r.lowerBound)) to \(Durations.text(r.upperBound))"
                            + "\(bareText), not '\(text)'")
                }
                return .duration(d)
            case .failure(.needsUnit):
                throw .usage("\(spelling) needs a unit: \(text)ms or \(text)s (or us, m), not '\(text)'")
            default:
                let bareText = bare.map { "; a bare number is \($0.rawValue)" } ?? ""
                throw .usage(
                    "\(spelling) takes a duration\(moreThanZero ? " more than 0" : "") such as 500ms, 2s or 1m"
                        + "\(bareText), not '\(text)'")
            }
        case .choice(let words):
            guard words.contains(text) else { throw .usage(notOneOf(spelling, words, text)) }
            return .text(text)
        case .list(let of):
            let items = text.split(separator: ",").map(String.init).filter { !$0.isEmpty }
            if let of, let bad = items.first(where: { !of.contains($0) }) {
                throw .usage(notOneOf(spelling, of, bad, list: true))
            }
            return .list(items)
        }
    }

    /// The one message for a word that is not one of the choices.
    public static func notOneOf(_ spelling: String, _ words: [String], _ text: String, list: Bool = false) -> String {
        let near = nearest(text, among: words).map { "; did you mean '\($0)'?" } ?? ""
        return "\(spelling) \(list ? "takes a comma-separated list of" : "is one of") \(words.joined(separator: ", ")),"
            + " not '\(text)'\(near)"
    }

    /// The one message for an unknown option: the nearest known spelling, quoted.
    public static func unknownOption(_ spelling: String, among options: [OptionSpec]) -> String {
        let names = options.flatMap(\.spellings) + ["--help"]
        return "unknown option '\(spelling)'"
            + (nearest(spelling, among: names).map { " (did you mean '\($0)'?)" } ?? "")
    }

    /// The name nearest `word` (edit distance at most a third of its length, 1 to 2), or nil.
    public static func nearest(_ word: String, among names: [String]) -> String? {
        let limit = max(1, min(2, word.count / 3))
        return names.map { ($0, editDistance($0, word)) }.filter { $0.1 <= limit }
            .min { ($0.1, $0.0) < ($1.1, $1.0) }?.0
    }
}
