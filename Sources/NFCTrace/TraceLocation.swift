public import Foundation
public import NFCFiles

/// Where traces go, how many are kept and how large one may grow.
///
/// Folder: `$NFCBENCH_TRACE_DIR`, else `$XDG_STATE_HOME/nfcbench/traces`, else
/// `~/.local/state/nfcbench/traces`. File name: `<UTC yyyyMMdd-HHmmss>-<command>-<pid>.jsonl`.
/// Rotation: when a new trace is made, the oldest traces beyond ``keep`` are deleted — only
/// files whose names nfcbench made (``isTraceName(_:)``: a user's `2025-lab-baseline-001.jsonl`
/// in the folder is never touched). ``keep`` is `$NFCBENCH_TRACE_KEEP` (a whole number; 0
/// keeps every trace), else 100. Each file is capped at ``maxBytes`` (`$NFCBENCH_TRACE_MAX_BYTES`,
/// else 16 MiB; ``TraceWriter`` keeps the summary records past it).
public struct TraceLocation: Sendable {
    /// 16 MiB.
    public static let defaultMaxBytes = 16 << 20
    /// 100 traces.
    public static let defaultKeep = 100

    public var directory: String
    /// How many traces the folder keeps (the new one included); 0 keeps every one.
    public var keep: Int
    /// The size cap of each trace file, in bytes.
    public var maxBytes: Int
    /// What was wrong with `$NFCBENCH_TRACE_KEEP` or `$NFCBENCH_TRACE_MAX_BYTES` (the default
    /// is used then), for a warning.
    public var problems: [String] = []

    public init(environment: [String: String] = ProcessInfo.processInfo.environment, keep: Int? = nil) {
        if let d = environment["NFCBENCH_TRACE_DIR"], !d.isEmpty {
            directory = d
        } else if let x = environment["XDG_STATE_HOME"], !x.isEmpty {
            directory = x + "/nfcbench/traces"
        } else {
            directory = (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state/nfcbench/traces"
        }
        var problems: [String] = []
        func number(_ name: String, _ fallback: Int, minimum: Int) -> Int {
            guard let text = environment[name], !text.isEmpty else { return fallback }
            guard let n = Int(text), n >= minimum else {
                problems.append("\(name)='\(text)' is not a whole number of at least \(minimum); using \(fallback)")
                return fallback
            }
            return n
        }
        self.keep = keep ?? number("NFCBENCH_TRACE_KEEP", Self.defaultKeep, minimum: 0)
        self.maxBytes = number("NFCBENCH_TRACE_MAX_BYTES", Self.defaultMaxBytes, minimum: 4096)
        self.problems = problems
    }

    /// The folder used when ``directory`` can't be (a read-only or missing state folder) and the
    /// command touches no hardware: `$TMPDIR` (else `/tmp`) + `/nfcbench-<euid>/traces`, which
    /// must pass ``/NFCFiles/PrivateFolder`` too.
    public static func fallbackDirectory(environment: [String: String] = ProcessInfo.processInfo.environment)
        -> String
    {
        let tmp = environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return "\(tmp)/nfcbench-\(geteuid())/traces"
    }

    /// Makes the folder (0700) when missing and checks it (``/NFCFiles/PrivateFolder``) before
    /// anything is written or rotated there. Throws ``/NFCFiles/PrivateFolderError``.
    public func prepare() throws(PrivateFolderError) {
        try PrivateFolder.prepare(directory, createParents: true)
    }

    /// A fresh path for `command`, after deleting the oldest traces beyond `keep - 1`.
    /// Call ``prepare()`` first: rotation deletes files in the folder.
    public func newTracePath(command: String, now: Date = Date(), pid: Int32 = getpid()) -> String {
        let safe = command.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "-" }
        rotate()
        return directory + "/" + Self.utcStamp(now) + "-" + String(safe) + "-" + String(pid) + ".jsonl"
    }

    /// `yyyyMMdd-HHmmss` in UTC (`gmtime_r`: no locale or calendar data loaded).
    static func utcStamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var t = tm()
        gmtime_r(&seconds, &t)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(t.tm_year + 1900)" + two(t.tm_mon + 1) + two(t.tm_mday) + "-" + two(t.tm_hour) + two(t.tm_min)
            + two(t.tm_sec)
    }

    /// True for a name ``newTracePath(command:now:pid:)`` makes: 8 digits, `-`, 6 digits, `-`,
    /// the command (letters, digits, dashes), `-`, the pid, `.jsonl`. Nothing else is rotated.
    public static func isTraceName(_ name: String) -> Bool {
        let b = Array(name.utf8)
        guard b.count > 23, name.hasSuffix(".jsonl") else { return false }
        func digits(_ r: Range<Int>) -> Bool { r.allSatisfy { b[$0] >= 0x30 && b[$0] <= 0x39 } }
        guard digits(0..<8), b[8] == 0x2D, digits(9..<15), b[15] == 0x2D else { return false }
        let middle = b[16..<(b.count - 6)]
        guard let dash = middle.lastIndex(of: 0x2D), dash > 16, dash < b.count - 7 else { return false }
        let command = b[16..<dash]
        let isWord = { (c: UInt8) in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c >= 0x80
        }
        return command.allSatisfy(isWord) && digits((dash + 1)..<(b.count - 6))
    }

    func rotate() {
        guard keep > 0 else { return }
        // opendir(3)/readdir(3) and unlink(2): FileManager's listing costs a command's start
        // more than the listing itself (issue 15's start-up budget).
        guard let dir = opendir(directory) else { return }
        var traces: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if Self.isTraceName(name) { traces.append(name) }
        }
        closedir(dir)
        traces.sort()
        guard traces.count >= keep else { return }
        for name in traces.prefix(traces.count - keep + 1) {
            unlink(directory + "/" + name)
        }
    }
}

extension TraceLocation {
    /// Where a run's trace goes, as a command's options say.
    public enum Choice: Sendable, Equatable {
        /// The trace folder (``TraceLocation``), a new file named after the command.
        case folder
        /// A file the user named (`--trace PATH`; `-` is standard output).
        case file(String)
        /// No trace file (`--no-trace`): the records only reach `--json` and the sinks.
        case none
    }

    /// Opens the trace of a run of `command` (``TraceWriter``) where `choice` says, in the folder
    /// of `environment` (``init(environment:keep:)``), with its size cap. With `fallback` (a
    /// command that touches no hardware), a trace folder that can't be made or written (a
    /// read-only or missing state folder) gives way to ``fallbackDirectory(environment:)``,
    /// and then to no trace file, each with a warning: never silently. Returns the writer and
    /// the warnings to show. Throws ``TraceFileError`` (its `folder` set when the trace folder
    /// itself was refused).
    public static func openTrace(
        command: String, header: TraceHeader, choice: Choice, redact: Bool = false, fallback: Bool = false,
        echo: (@Sendable (String) -> Void)? = nil, sinks: [any TraceSink] = [],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(TraceFileError) -> (writer: TraceWriter, warnings: [String]) {
        let location = TraceLocation(environment: environment)
        var warnings = location.problems.map { "warning: \($0)" }
        func writer(_ stream: FileWriter?) -> TraceWriter {
            TraceWriter(
                stream: stream, header: header, redact: redact, maxBytes: location.maxBytes, echo: echo, sinks: sinks)
        }
        switch choice {
        case .none:
            return (writer(nil), warnings)
        case .file(let path):
            return (writer(try TraceFile.create(path: path, label: "--trace \(path)")), warnings)
        case .folder:
            do {
                return (writer(try location.openNew(command: command)), warnings)
            } catch {
                let unwritable = error.folder.map(\.unwritable) ?? true
                guard fallback, unwritable else { throw error }
                let why = error.folder.map { "\($0.path) \($0.problem)" } ?? error.description
                var other = location
                other.directory = fallbackDirectory(environment: environment)
                do {
                    let stream = try other.openNew(command: command)
                    warnings.append(
                        "warning: the trace folder can't be used (\(why)); this run's trace goes to \(other.directory) instead (set NFCBENCH_TRACE_DIR, or give --trace PATH or --no-trace)"
                    )
                    return (writer(stream), warnings)
                } catch {
                    let whyNot = error.folder.map { "\($0.path) \($0.problem)" } ?? error.description
                    warnings.append(
                        "warning: the trace folder can't be used (\(why)), nor \(other.directory) (\(whyNot)): this run keeps no trace (set NFCBENCH_TRACE_DIR, or give --trace PATH)"
                    )
                    return (writer(nil), warnings)
                }
            }
        }
    }

    /// Prepares the folder, rotates it, and makes a new trace file there for `command`.
    func openNew(command: String) throws(TraceFileError) -> FileWriter {
        do { try prepare() } catch { throw TraceFileError(path: error.path, reason: error.problem, folder: error) }
        return try TraceFile.create(path: newTracePath(command: command), createParentDirectory: true)
    }
}
