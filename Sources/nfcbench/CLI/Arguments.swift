import NFCFiles
import NFCTags

/// The words after a command's name, consumed by name (options, flags) or in order
/// (positionals). Parsing is a pure function of `[String]`, so tests can drive it.
///
/// Accepted forms: `--name value`, `--name=value`, `--flag`, `-h`, and `--` (everything
/// after it is positional). Whatever is left unconsumed when ``finish()`` is called is a
/// usage error.
struct Arguments {
    private var tokens: [String]
    private var used: [Bool]
    private var terminator: Int?

    init(_ argv: some Sequence<String>) {
        tokens = Array(argv)
        used = Array(repeating: false, count: tokens.count)
        terminator = tokens.firstIndex(of: "--")
        if let t = terminator { used[t] = true }
    }

    private func isOptionZone(_ i: Int) -> Bool { terminator.map { i < $0 } ?? true }

    /// True when `--long` (or `-short`) is present; consumes every occurrence.
    mutating func flag(_ long: String, short: Character? = nil) -> Bool {
        var found = false
        for i in tokens.indices where !used[i] && isOptionZone(i) {
            if tokens[i] == "--" + long || short.map({ tokens[i] == "-" + String($0) }) == true {
                used[i] = true
                found = true
            }
        }
        return found
    }

    /// Every value given as `--long value` or `--long=value`, in order.
    mutating func options(_ long: String) throws(CLIError) -> [String] {
        var values: [String] = []
        var i = 0
        while i < tokens.count {
            defer { i += 1 }
            guard !used[i], isOptionZone(i) else { continue }
            let t = tokens[i]
            if t == "--" + long {
                guard i + 1 < tokens.count, !used[i + 1], !tokens[i + 1].hasPrefix("--") else {
                    throw .usage("--\(long) needs a value")
                }
                used[i] = true
                used[i + 1] = true
                values.append(tokens[i + 1])
                i += 1
            } else if t.hasPrefix("--" + long + "=") {
                used[i] = true
                values.append(String(t.dropFirst(long.count + 3)))
            }
        }
        return values
    }

    /// The value of `--long` (the last one if repeated), or nil.
    mutating func option(_ long: String) throws(CLIError) -> String? {
        try options(long).last
    }

    /// `--long` as an integer within `range`, written in decimal digits (`16`, not `0x10`).
    mutating func int(_ long: String, in range: ClosedRange<Int> = Int.min...Int.max) throws(CLIError) -> Int? {
        guard let s = try option(long) else { return nil }
        let digits = s.hasPrefix("-") ? s.dropFirst() : s[...]
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let v = Int(s), range.contains(v)
        else {
            throw .usage(
                "--\(long) takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(s)'"
            )
        }
        return v
    }

    /// A plain decimal number as people write one (`2`, `0.5`, `.5`, `2.`): digits and at
    /// most one point; no sign, hex (`0x10`), exponent, `inf` or `nan`.
    static func decimal(_ s: some StringProtocol) -> Double? {
        guard s.contains(where: \.isNumber), s.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            s.filter({ $0 == "." }).count <= 1
        else { return nil }
        return Double(String(s))
    }

    /// `--long` as seconds (a decimal number, e.g. `1.5`), returned as a `Duration` (µs
    /// resolution). `moreThanZero`: 0 (or less than 1 µs) is refused too.
    mutating func seconds(_ long: String, moreThanZero: Bool = false) throws(CLIError) -> Duration? {
        guard let s = try option(long) else { return nil }
        let limit = 1_000_000_000.0
        guard let v = Self.decimal(s), v <= limit, !moreThanZero || (v * 1_000_000).rounded() >= 1 else {
            throw .usage(
                "--\(long) takes a number of seconds "
                    + (moreThanZero ? "more than 0" : "from 0") + " up to 1000000000 (e.g. 2 or 0.5), not '\(s)'")
        }
        return .microseconds(Int64((v * 1_000_000).rounded()))
    }

    /// `--long` as a duration with a unit: `400ms`, `1.5s`, `250us`. A bare number other than
    /// 0 is a usage error: `--budget 5` meant as seconds and read as 5 ms once let a run pass
    /// that should have failed.
    mutating func duration(_ long: String) throws(CLIError) -> Duration? {
        guard let s = try option(long) else { return nil }
        var v = s
        var scale: Double? = nil
        for (suffix, f) in [("ms", 1000.0), ("us", 1.0), ("µs", 1.0), ("s", 1_000_000.0)] where v.hasSuffix(suffix) {
            v.removeLast(suffix.count)
            scale = f
            break
        }
        guard let n = Self.decimal(v), n * (scale ?? 1) <= 1e15 else {
            throw .usage("--\(long) takes a duration such as 400ms, 1.5s or 250us, not '\(s)'")
        }
        guard let scale = scale ?? (n == 0 ? 1 : nil) else {
            throw .usage("--\(long) needs a unit: \(s)ms or \(s)s (or us), not '\(s)'")
        }
        return .microseconds(Int64((n * scale).rounded()))
    }

    /// The next positional word, or nil when none is left.
    mutating func positional() -> String? {
        for i in tokens.indices where !used[i] {
            if isOptionZone(i) && tokens[i].hasPrefix("-") && tokens[i] != "-" { continue }
            used[i] = true
            return tokens[i]
        }
        return nil
    }

    /// The next positional word; a usage error naming `name` when it is missing.
    mutating func requiredPositional(_ name: String) throws(CLIError) -> String {
        guard let v = positional() else { throw .usage("missing \(name)") }
        return v
    }

    /// The words not consumed yet (after a command gave up, for a better message).
    var unconsumed: [String] { tokens.indices.filter { !used[$0] && isOptionZone($0) }.map { tokens[$0] } }

    /// Throws a usage error for anything not consumed.
    func finish() throws(CLIError) {
        let left = tokens.indices.filter { !used[$0] }.map { tokens[$0] }
        if let first = left.first {
            throw .usage(first.hasPrefix("-") ? "unknown option '\(first)'" : "unexpected argument '\(first)'")
        }
    }
}

/// Errors that end a command with a message and a documented exit code.
enum CLIError: Error, Equatable {
    /// Bad words on the command line: exit 64 (EX_USAGE), message and usage on stderr.
    case usage(String)
    /// Input data that can't be used (a malformed tag file): exit 65 (EX_DATAERR).
    case data(String)
    /// An input file that does not exist or can't be read: exit 66 (EX_NOINPUT).
    case noInput(String)
    /// A needed service or device is missing (no pcscd, no reader): exit 69 (EX_UNAVAILABLE).
    case unavailable(String)
    /// An output file or folder that can't be created (`--out` in a missing folder, a trace
    /// folder that is a file): exit 73 (EX_CANTCREAT).
    case cantCreate(String)
    /// Reading or writing failed part way (a full disk, a device error): exit 74 (EX_IOERR).
    case ioError(String)
    /// Anything else: exit 1.
    case failure(String)

    var exitCode: Int32 {
        switch self {
        case .usage: 64
        case .data: 65
        case .noInput: 66
        case .unavailable: 69
        case .cantCreate: 73
        case .ioError: 74
        case .failure: 1
        }
    }

    var message: String {
        switch self {
        case .usage(let m), .data(let m), .noInput(let m), .unavailable(let m), .cantCreate(let m), .ioError(let m),
            .failure(let m):
            m
        }
    }

    /// A data file's error, printed as the file rule says (`FILE:LINE:COLUMN: reason`,
    /// `FILE: field PATH: reason`): 66 when the file is missing or unreadable, 73 when it
    /// can't be written, else 65.
    init(_ error: DataFileError) {
        switch error.code {
        case .notFound: self = .noInput(error.description)
        case .io: self = .ioError(error.description)
        default: self = .data(error.description)
        }
    }

    /// A file's error (``/NFCFiles/FileError``) with its exit status: 73 can't create, 74 I/O,
    /// 66 no input, 64 the same file as an input or another output.
    init(_ error: FileError) {
        switch error.kind {
        case .cantCreate: self = .cantCreate(error.description)
        case .io: self = .ioError(error.description)
        case .noInput: self = .noInput(error.description)
        case .sameFile: self = .usage(error.description)
        }
    }
}
