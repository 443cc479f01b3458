public import Foundation
import Synchronization

/// The always-on trace: one JSON Lines file per run (schema ``TraceWriter/schema``).
///
/// Line 1 is the header (``TraceHeader``: the same keys for every command). Every later
/// line is one event, frame or APDU with `t_us`, microseconds on a monotonic clock since
/// the run began (the header's `started` is that instant's wall-clock time), and `event`.
/// The same records are what `--json` prints, so one schema serves both.
///
/// Each record is handed to the kernel with one `write(2)` as soon as it is recorded (a
/// batch of records, ``emit(contentsOf:)``, with one `write(2)` for the batch), so a trace
/// survives the process being killed mid-session (at worst its last lines are missing, never
/// half a line in the middle). Location, rotation and the size cap: see
/// ``TraceLocation``. With `redact` on, UIDs, payloads and what was decoded from them are
/// replaced by `"redacted:<n> bytes"` (``sensitiveKeys``); the header keeps everything but
/// its `setup`'s identifiers. Sinks (``TraceSink``, e.g. the pcapng export) see every
/// record as it is written, unredacted, in the file's order; they redact for themselves.
public final class TraceWriter: Sendable {
    /// The schema every record follows; bump the number on any incompatible change.
    public static let schema = "nfcbench.trace/1"
    /// Record keys whose values are redacted when asked: identifiers, payloads, and what was
    /// decoded from them (URIs, texts, titles, package names), in any nested object. In the
    /// header only `setup` is looked at (a header's `command` is the command's name).
    public static let sensitiveKeys: Set<String> = [
        "uid", "uid_header", "payload", "ndef", "data", "apdu", "response", "command", "frame", "id", "id_hex",
        "identifierHex", "uri", "text", "title", "package", "bytes", "atr", "ats",
    ]

    public let path: String?
    /// The header as written (before redaction), with its `started`.
    public let header: JSONObject
    private let state: Mutex<State>
    private let start: ContinuousClock.Instant
    private let redact: Bool
    private let maxBytes: Int
    private let echo: (@Sendable (String) -> Void)?
    private let sinks: [any TraceSink]

    private struct State {
        var fd: Int32
        var written: Int
        var capped: Bool
        var closed = false
    }

    /// Opens a new trace file at `path` (through ``TraceFile/create(path:createParentDirectory:)``)
    /// and writes the header. `path == nil` keeps no file (records only reach `echo` and the
    /// sinks). `maxBytes` caps the file: past it one `"event":"trace_truncated"` line is
    /// written and later records are dropped from the file (sinks still get them).
    /// `echo` receives every line too (for `--json`). Throws ``TraceFileError`` when the
    /// file can't be created. `createParentDirectory` makes the folder first (the default
    /// trace location); a path the user named must be in an existing folder.
    public init(
        path: String?, header: TraceHeader, redact: Bool = false, maxBytes: Int = 16 << 20,
        createParentDirectory: Bool = true, echo: (@Sendable (String) -> Void)? = nil,
        sinks: [any TraceSink] = []
    ) throws(TraceFileError) {
        self.path = path
        self.redact = redact
        self.maxBytes = maxBytes
        self.echo = echo
        self.sinks = sinks
        var fd: Int32 = -1
        if let path { fd = try TraceFile.create(path: path, createParentDirectory: createParentDirectory) }
        state = Mutex(State(fd: fd, written: 0, capped: false))
        self.start = .now
        self.header = header.record(started: Date())
        emit(self.header)
    }

    deinit { close() }

    /// Ends the trace: the sinks finish (a pcapng file is complete) and the file is closed.
    /// Later records are dropped. Calling it again does nothing.
    public func close() {
        let sinks: [any TraceSink] = state.withLock { s in
            guard !s.closed else { return [] }
            s.closed = true
            if s.fd >= 0 {
                Foundation.close(s.fd)
                s.fd = -1
            }
            return self.sinks
        }
        for sink in sinks { sink.finish() }
    }

    /// Microseconds since this trace began (monotonic).
    public var elapsedMicroseconds: Int64 { elapsedMicroseconds(at: .now) }

    /// Microseconds from this trace's beginning to `instant` (monotonic; negative before it),
    /// for an event timed elsewhere and recorded later (``record(_:at:_:)``).
    public func elapsedMicroseconds(at instant: ContinuousClock.Instant) -> Int64 {
        let d = instant - start
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
        emit(contentsOf: CollectionOfOne(record))[0]
    }

    /// Writes fully formed records in their order with one `write(2)` for all of them (a
    /// burst of frames noted outside a timing, a virtual card's events since the last look),
    /// instead of one per record; returns them as written (redacted when asked). The size
    /// cap applies record by record, as for ``emit(_:)``.
    @discardableResult
    public func emit(contentsOf records: some Collection<JSONObject>) -> [JSONObject] {
        let written = redact ? records.map(Self.redacted) : Array(records)
        // Under the lock, so --json, the file and the sinks have the records in one order.
        state.withLock { s in
            guard !s.closed else { return }
            var bytes: [UInt8] = []
            for (record, shown) in zip(records, written) {
                for sink in sinks { sink.receive(record) }
                let wantsFile = s.fd >= 0 && !s.capped
                guard wantsFile || echo != nil else { continue }
                let line = shown.serialized + "\n"
                echo?(String(line.dropLast()))
                guard wantsFile else { continue }
                let size = line.utf8.count
                if s.written + bytes.count + size > maxBytes {
                    s.capped = true
                    bytes.append(
                        contentsOf: (JSONObject([
                            "t_us": .int(elapsedMicroseconds), "event": "trace_truncated",
                            "max_bytes": .int(Int64(maxBytes)),
                        ]).serialized + "\n").utf8)
                } else {
                    bytes.append(contentsOf: line.utf8)
                }
            }
            if !bytes.isEmpty { s.written += TraceFile.writeAll(s.fd, bytes) }
        }
        return written
    }

    /// `o` as `--redact` writes it: the values of ``sensitiveKeys`` replaced by their length;
    /// in a header record only `setup` is looked at.
    public static func redacted(_ o: JSONObject) -> JSONObject {
        guard o["event"]?.stringValue == "header" else { return redactedObject(o) }
        var out = o
        if case .object(let setup)? = o["setup"] { out["setup"] = .object(redactedObject(setup)) }
        return out
    }

    /// The text `--redact` puts in place of a value: `redacted:<n> bytes`.
    public static func redactedText(_ s: String) -> String {
        let isHex = s.count % 2 == 0 && s.allSatisfy(\.isHexDigit)
        return isHex ? "redacted:\(s.count / 2) bytes" : "redacted:\(s.utf8.count) bytes"
    }

    static func redactedObject(_ o: JSONObject) -> JSONObject {
        var out = JSONObject()
        for e in o.entries {
            if sensitiveKeys.contains(e.key), case .string(let s) = e.value {
                out[e.key] = .string(redactedText(s))
            } else {
                out[e.key] = redactedValue(e.value)
            }
        }
        return out
    }

    private static func redactedValue(_ v: JSONValue) -> JSONValue {
        switch v {
        case .object(let o): .object(redactedObject(o))
        case .array(let a): .array(a.map(redactedValue))
        default: v
        }
    }
}

/// Something that follows a trace as it is written (the pcapng export): it gets every
/// record, header first, unredacted, in the file's order, under the writer's lock (so it
/// must not block), then ``finish()`` once when the trace is closed.
public protocol TraceSink: Sendable {
    func receive(_ record: JSONObject)
    func finish()
}

/// The one place trace files and the files made from them (pcapng, SVG) are created, so
/// their folder and file modes are decided once: files `0600` (owner only: traces hold tag
/// UIDs and NDEF payloads) whatever the umask, the trace folder `0700` (``PrivateFolder``).
public enum TraceFile {
    /// Creates (truncating) `path` for writing and returns its descriptor. A regular file gets
    /// mode 0600 (`fchmod(2)` after `open(2)`, so neither the umask nor an older file's mode
    /// matters); a device the user named (`/dev/stdout`) is left as it is. With
    /// `createParentDirectory` (the trace folder, not a path the user named) the folder must
    /// pass ``PrivateFolder/prepare(_:createParents:)`` (it is made 0700 when missing) and
    /// the file is opened with `O_NOFOLLOW`. Throws ``TraceFileError``.
    public static func create(path: String, createParentDirectory: Bool = false) throws(TraceFileError) -> Int32 {
        let dir = PrivateFolder.parent(of: path)
        var flags = O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC
        if createParentDirectory {
            if !dir.isEmpty {
                do { try PrivateFolder.prepare(dir, createParents: true) } catch {
                    throw TraceFileError(path: dir, reason: error.problem, folder: error)
                }
            }
            flags |= O_NOFOLLOW
        }
        let fd = open(path, flags, 0o600)
        if fd < 0 { throw openFailure(path, errno: errno) }
        var st = stat()
        if fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_mode & 0o7777 != 0o600, fchmod(fd, 0o600) != 0 {
            let e = errno
            close(fd)
            throw TraceFileError(path: path, reason: "cannot make it 0600: \(String(cString: strerror(e)))")
        }
        return fd
    }

    /// `mkdir -p`: makes `dir` and the folders above it that are missing (with `mode`, before
    /// the umask); the error names the first one that can't be made and the system's reason
    /// (never a Foundation error dump).
    public static func makeFolder(_ dir: String, mode: mode_t = 0o755) throws(TraceFileError) {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: dir, isDirectory: &isFolder) {
            if isFolder.boolValue { return }
            throw TraceFileError(path: dir, reason: "is a file, not a folder")
        }
        let parent = (dir as NSString).deletingLastPathComponent
        if !parent.isEmpty && parent != dir { try makeFolder(parent, mode: mode) }
        if mkdir(dir, mode) != 0 && errno != EEXIST {
            throw TraceFileError(path: dir, reason: "can't make this folder: " + String(cString: strerror(errno)))
        }
    }

    /// Why `open(2)` of `path` for writing failed, in words a person can act on.
    public static func openFailure(_ path: String, errno code: Int32) -> TraceFileError {
        let dir = (path as NSString).deletingLastPathComponent
        var isFolder: ObjCBool = false
        switch code {
        case ENOENT where !dir.isEmpty && !FileManager.default.fileExists(atPath: dir):
            return TraceFileError(path: path, reason: "the folder \(dir) does not exist")
        case ENOTDIR where !dir.isEmpty && FileManager.default.fileExists(atPath: dir, isDirectory: &isFolder):
            return TraceFileError(path: path, reason: "\(dir) is a file, not a folder")
        case EISDIR: return TraceFileError(path: path, reason: "is a folder; give a file name")
        default: return TraceFileError(path: path, reason: String(cString: strerror(code)))
        }
    }

    /// Writes `bytes` to a file made by ``create(path:createParentDirectory:)`` and closes it.
    public static func write(_ bytes: [UInt8], to path: String) throws(TraceFileError) {
        let fd = try create(path: path)
        defer { close(fd) }
        guard writeAll(fd, bytes) == bytes.count else {
            throw TraceFileError(path: path, reason: String(cString: strerror(errno)))
        }
    }

    /// `write(2)` until every byte is written (retrying on EINTR); returns how many were.
    @discardableResult
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { raw in
            var off = 0
            while off < raw.count {
                let n = Foundation.write(fd, raw.baseAddress! + off, raw.count - off)
                if n < 0 { if errno == EINTR { continue } else { break } }
                off += n
            }
            return off
        }
    }
}

/// The trace file could not be opened: its path and the system's reason.
public struct TraceFileError: Error, Sendable, CustomStringConvertible {
    public init(path: String, reason: String, folder: PrivateFolderError? = nil) {
        self.path = path
        self.reason = reason
        self.folder = folder
    }
    public let path: String
    public let reason: String
    /// Set when the trace folder itself was refused (``PrivateFolder``): not ours, a link, or
    /// writable by others.
    public let folder: PrivateFolderError?
    public var description: String { folder.map { "trace folder \($0)" } ?? "\(path): \(reason)" }
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
            directory = (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state/nfcbench/traces"
        }
        self.keep = keep
    }

    /// Makes the folder (0700) when missing and checks it (``PrivateFolder``) before
    /// anything is written or rotated there. Throws ``PrivateFolderError``.
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

    func rotate() {
        // opendir(3)/readdir(3) and unlink(2): FileManager's listing costs a command's start
        // more than the listing itself (issue 15's start-up budget).
        guard let dir = opendir(directory) else { return }
        var traces: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(".jsonl") { traces.append(name) }
        }
        closedir(dir)
        traces.sort()
        guard traces.count >= keep else { return }
        for name in traces.prefix(traces.count - keep + 1) {
            unlink(directory + "/" + name)
        }
    }
}
