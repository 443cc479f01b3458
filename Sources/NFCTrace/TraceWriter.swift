public import FoundationEssentials
import Glibc
import Synchronization

/// The always-on trace: one JSON Lines file per run (schema ``TraceWriter/schema``).
///
/// Line 1 is a header (`"event":"header"`: schema, tool and library versions, command,
/// device, model parameters, wall-clock start). Every later line is one event, frame or
/// APDU with `t_us`, microseconds on a monotonic clock since the run began, and `event`.
/// The same records are what `--json` prints, so one schema serves both.
///
/// Each line is handed to the kernel with one `write(2)` as soon as it is recorded, so a
/// trace survives the process being killed mid-session (at worst its last line is missing,
/// never half a line in the middle). Location, rotation and the size cap: see
/// ``TraceLocation``. With `redact` on, UIDs and payload bytes are replaced by
/// `"redacted:<n> bytes"`.
public final class TraceWriter: Sendable {
    /// The schema every record follows; bump the number on any incompatible change.
    public static let schema = "nfcbench.trace/1"
    /// Record keys whose values are redacted when asked: identifiers and payloads.
    /// Record keys whose values are redacted when asked: identifiers, payloads, and what was
    /// decoded from them (URIs, texts, titles, package names), in any nested object.
    public static let sensitiveKeys: Set<String> = [
        "uid", "uid_header", "payload", "ndef", "data", "apdu", "response", "command", "frame", "id", "id_hex",
        "identifierHex", "uri", "text", "title", "package", "bytes", "atr", "ats",
    ]

    public let path: String?
    private let state: Mutex<State>
    private let start: ContinuousClock.Instant
    private let redact: Bool
    private let maxBytes: Int
    private let echo: (@Sendable (String) -> Void)?

    private struct State {
        var fd: Int32
        var written: Int
        var capped: Bool
    }

    /// Opens a new trace file at `path` (parent folders are created) and writes the header.
    /// `path == nil` keeps no file (records only reach `echo`). `maxBytes` caps the file:
    /// past it one `"event":"trace_truncated"` line is written and later records are dropped.
    /// `echo` receives every line too (for `--json`). Throws when the file can't be created.
    /// `createParentDirectory` makes the folder first (the default trace location); a path
    /// the user named must be in an existing folder.
    public init(
        path: String?, header: JSONObject, redact: Bool = false, maxBytes: Int = 16 << 20,
        createParentDirectory: Bool = true, echo: (@Sendable (String) -> Void)? = nil
    ) throws {
        self.path = path
        self.redact = redact
        self.maxBytes = maxBytes
        self.echo = echo
        self.start = .now
        var fd: Int32 = -1
        if let path {
            let dir = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? ""
            if !dir.isEmpty && createParentDirectory {
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            }
            fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o644)
            if fd < 0 { throw TraceFileError(path: path, reason: String(cString: strerror(errno))) }
        }
        state = Mutex(State(fd: fd, written: 0, capped: false))
        var h: JSONObject = ["schema": .string(Self.schema), "t_us": 0, "event": "header"]
        for e in header.entries where h[e.key] == nil { h[e.key] = e.value }
        emit(h)
    }

    deinit {
        state.withLock {
            if $0.fd >= 0 {
                close($0.fd)
                $0.fd = -1
            }
        }
    }

    /// Microseconds since this trace began (monotonic).
    public var elapsedMicroseconds: Int64 {
        let d = ContinuousClock.now - start
        return d.components.seconds * 1_000_000 + d.components.attoseconds / 1_000_000_000_000
    }

    /// Records one event. `fields` must not contain `t_us` or `event`; `tMicroseconds`
    /// defaults to now.
    public func record(_ event: String, at tMicroseconds: Int64? = nil, _ fields: JSONObject = [:]) {
        var o: JSONObject = ["t_us": .int(tMicroseconds ?? elapsedMicroseconds), "event": .string(event)]
        for e in fields.entries { o[e.key] = e.value }
        emit(o)
    }

    /// Writes a fully formed record (it should carry `t_us` and `event`) and returns it as
    /// written (redacted when asked), for whatever shows it to a person.
    @discardableResult
    public func emit(_ record: JSONObject) -> JSONObject {
        let written = redact ? Self.redacted(record) : record
        let line = written.serialized + "\n"
        // Under the lock, so --json prints the records in the trace file's order.
        state.withLock { s in
            echo?(String(line.dropLast()))
            guard s.fd >= 0, !s.capped else { return }
            var bytes = Array(line.utf8)
            if s.written + bytes.count > maxBytes {
                s.capped = true
                bytes = Array(
                    (JSONObject([
                        "t_us": .int(elapsedMicroseconds), "event": "trace_truncated",
                        "max_bytes": .int(Int64(maxBytes)),
                    ]).serialized + "\n").utf8)
            }
            s.written += Self.writeAll(s.fd, bytes)
        }
        return written
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { raw in
            var off = 0
            while off < raw.count {
                let n = write(fd, raw.baseAddress! + off, raw.count - off)
                if n < 0 { if errno == EINTR { continue } else { break } }
                off += n
            }
            return off
        }
    }

    static func redacted(_ o: JSONObject) -> JSONObject {
        var out = JSONObject()
        for e in o.entries {
            if sensitiveKeys.contains(e.key), case .string(let s) = e.value {
                let isHex = s.count % 2 == 0 && s.allSatisfy(\.isHexDigit)
                out[e.key] = .string(isHex ? "redacted:\(s.count / 2) bytes" : "redacted:\(s.utf8.count) bytes")
            } else {
                out[e.key] = redactedValue(e.value)
            }
        }
        return out
    }

    private static func redactedValue(_ v: JSONValue) -> JSONValue {
        switch v {
        case .object(let o): .object(redacted(o))
        case .array(let a): .array(a.map(redactedValue))
        default: v
        }
    }
}

/// The trace file could not be opened: its path and the system's reason.
public struct TraceFileError: Error, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "\(path): \(reason)" }
}

extension JSONObject {
    init(_ entries: KeyValuePairs<String, JSONValue>) {
        self.init()
        for (k, v) in entries { self[k] = v }
    }
}

/// Where traces go and how many are kept.
///
/// Folder: `$NFCBENCH_TRACE_DIR`, else `$XDG_STATE_HOME/nfcbench/traces`, else
/// `~/.local/state/nfcbench/traces`. File name: `<UTC yyyyMMdd-HHmmss>-<command>-<pid>.jsonl`.
/// Rotation: when a new trace is made, the oldest files beyond ``keep`` (default 100) are
/// deleted. Each file is capped at 16 MiB by default (``TraceWriter``'s `maxBytes`).
public struct TraceLocation: Sendable {
    public var directory: String
    public var keep: Int

    public init(environment: [String: String] = ProcessInfo.processInfo.environment, keep: Int = 100) {
        if let d = environment["NFCBENCH_TRACE_DIR"], !d.isEmpty {
            directory = d
        } else if let x = environment["XDG_STATE_HOME"], !x.isEmpty {
            directory = x + "/nfcbench/traces"
        } else {
            directory =
                (environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path)
                + "/.local/state/nfcbench/traces"
        }
        self.keep = keep
    }

    /// A fresh path for `command`, after deleting the oldest traces beyond `keep - 1`.
    public func newTracePath(
        command: String, now: Date = Date(), pid: Int32 = ProcessInfo.processInfo.processIdentifier
    ) -> String {
        let safe = command.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "-" }
        rotate()
        return directory + "/" + Self.utcStamp(now) + "-" + String(safe) + "-" + String(pid) + ".jsonl"
    }

    /// `yyyyMMdd-HHmmss` in UTC (`gmtime_r`, no locale data loaded).
    static func utcStamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var t = tm()
        gmtime_r(&seconds, &t)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(t.tm_year + 1900)" + two(t.tm_mon + 1) + two(t.tm_mday) + "-" + two(t.tm_hour) + two(t.tm_min)
            + two(t.tm_sec)
    }

    func rotate() {
        let fm = FileManager.default
        guard let names = try? fm.contentsOfDirectory(atPath: directory) else { return }
        let traces = names.filter { $0.hasSuffix(".jsonl") }.sorted()
        guard traces.count >= keep else { return }
        for name in traces.prefix(traces.count - keep + 1) {
            try? fm.removeItem(atPath: directory + "/" + name)
        }
    }
}
