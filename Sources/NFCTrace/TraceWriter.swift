import Foundation
public import NFCFiles
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
/// half a line in the middle). Every write is checked (``/NFCFiles/FileWriter``): a trace on a
/// full disk is never reported as written (``failure``). Location, rotation and the size cap:
/// see ``TraceLocation``. With `redact` on, UIDs, payloads and what was decoded from them are
/// replaced by `"redacted:<n> bytes"` (``sensitiveKeys``); the header keeps everything but
/// its `setup`'s identifiers. Sinks (``TraceSink``, e.g. the pcapng export) see every
/// record as it is written, unredacted, in the file's order; they redact for themselves.
public final class TraceWriter: Sendable {
    /// The schema every record follows (``TraceRecord/schema``).
    public static let schema = TraceRecord.schema
    /// Record keys whose values are redacted when asked: identifiers, payloads, and what was
    /// decoded from them (URIs, texts, titles, package names), in any nested object. In the
    /// header only `setup` is looked at (a header's `command` is the command's name).
    public static let sensitiveKeys: Set<String> = [
        "uid", "uid_header", "payload", "ndef", "data", "apdu", "response", "command", "frame", "id", "id_hex",
        "identifierHex", "uri", "text", "title", "package", "bytes", "atr", "ats",
    ]

    public let path: String?
    /// The header as written (before redaction), with its `started`.
    public let header: TraceRecord
    private let state: Mutex<State>
    private let start: ContinuousClock.Instant
    private let redact: Bool
    private let maxBytes: Int
    private let echo: (@Sendable (String) -> Void)?
    private let sinks: [any TraceSink]
    private let stream: FileWriter?

    /// Records written past the size cap all the same, so a capped trace still ends with what
    /// it came to: a measurement's figures, a session's ending, a virtual device's stop, a
    /// walk's or an emulation's summary, the signal that ended it.
    public static let summaryEvents: Set<TraceRecord.Kind> = [
        .measured, .didInvalidateWithError, .signal, .stopped, .summary, .notInField, .writeOutcome, .closed,
        .pcapngSkipped,
    ]

    private struct State {
        var written: Int
        var capped: Bool
        /// Records left out by the cap, and their bytes; and how many a `trace_dropped` record
        /// has counted so far.
        var dropped = 0
        var droppedBytes = 0
        var counted = 0
        var closed = false
    }

    /// Opens a new trace file at `path` and writes the header. `path == nil` keeps no file
    /// (records only reach `echo` and the sinks). With `createParentDirectory` (the trace
    /// folder) the folder must pass ``/NFCFiles/PrivateFolder`` and the file is made new
    /// (`O_EXCL`, never through a link); otherwise `path` is a file the user named, written by
    /// ``/NFCFiles/OutputFile``'s rules (`-` is standard output; an existing file is replaced
    /// when the trace is closed). Throws ``TraceFileError``. See
    /// ``init(stream:header:redact:maxBytes:echo:sinks:)`` for the rest.
    public convenience init(
        path: String?, header: TraceHeader, redact: Bool = false, maxBytes: Int = TraceLocation.defaultMaxBytes,
        createParentDirectory: Bool = true, echo: (@Sendable (String) -> Void)? = nil,
        sinks: [any TraceSink] = []
    ) throws(TraceFileError) {
        var stream: FileWriter? = nil
        if let path { stream = try TraceFile.create(path: path, createParentDirectory: createParentDirectory) }
        self.init(stream: stream, header: header, redact: redact, maxBytes: maxBytes, echo: echo, sinks: sinks)
    }

    /// A trace written to `stream` (nil: no file), header first. `maxBytes` caps the file: past
    /// it one `"event":"trace_truncated"` line is written and later records are left out of the
    /// file (sinks and `echo` still get them), except ``summaryEvents``, which are written all
    /// the same, each after a `"event":"trace_dropped"` record counting what was left out
    /// (`dropped_records`, `dropped_bytes`); closing writes a last count when records were
    /// left out after that. `echo` receives every line too (for `--json`).
    public init(
        stream: FileWriter?, header: TraceHeader, redact: Bool = false,
        maxBytes: Int = TraceLocation.defaultMaxBytes, echo: (@Sendable (String) -> Void)? = nil,
        sinks: [any TraceSink] = []
    ) {
        self.path = stream?.file.named
        self.stream = stream
        self.redact = redact
        self.maxBytes = maxBytes
        self.echo = echo
        self.sinks = sinks
        state = Mutex(State(written: 0, capped: false))
        self.start = .now
        self.header = TraceRecord(json: header.record(started: Date()))
        emit(self.header)
    }

    deinit { close() }

    /// The first write to the file that failed (a full disk): the trace is incomplete from there.
    public var failure: FileError? { stream?.failure }

    /// Ends the trace: the sinks' closing records (``TraceSink/closingRecords()``), a last
    /// `trace_dropped` count when the cap left records out, the sinks finish (a pcapng file is
    /// complete) and the file is synced, closed and put in place.
    /// Later records are dropped. Calling it again does nothing. A failure is in ``failure``
    /// (and ``/NFCFiles/OutputFailures``).
    public func close() {
        let open = state.withLock { !$0.closed }
        if open {
            let now = elapsedMicroseconds
            let closing = sinks.flatMap { $0.closingRecords() }.map { r -> TraceRecord in
                var r = r
                r.time = now
                return r
            }
            if !closing.isEmpty { emit(contentsOf: closing) }
        }
        let sinks: [any TraceSink] = state.withLock { s in
            guard !s.closed else { return [] }
            if let stream, s.dropped > s.counted {
                stream.write(Array((countRecord(&s).line + "\n").utf8))
            }
            s.closed = true
            return self.sinks
        }
        for sink in sinks { sink.finish() }
        try? stream?.finish()
    }

    private func countRecord(_ s: inout State) -> TraceRecord {
        s.counted = s.dropped
        return TraceRecord(
            .traceDropped, at: elapsedMicroseconds,
            [
                "dropped_records": .int(Int64(s.dropped)), "dropped_bytes": .int(Int64(s.droppedBytes)),
                "max_bytes": .int(Int64(maxBytes)),
            ])
    }

    /// Microseconds since this trace began (monotonic).
    public var elapsedMicroseconds: Int64 { elapsedMicroseconds(at: .now) }

    /// Microseconds from this trace's beginning to `instant` (monotonic; negative before it),
    /// for an event timed elsewhere and recorded later (``record(_:at:_:)``).
    public func elapsedMicroseconds(at instant: ContinuousClock.Instant) -> Int64 {
        let d = instant - start
        return d.components.seconds * 1_000_000 + d.components.attoseconds / 1_000_000_000_000
    }

    /// Records one record of `kind` (``TraceRecord/init(_:at:_:)``). `fields` must not contain
    /// `t_us` or `event`; `tMicroseconds` defaults to now.
    public func record(_ kind: TraceRecord.Kind, at tMicroseconds: Int64? = nil, _ fields: JSONObject = [:]) {
        emit(TraceRecord(kind, at: tMicroseconds ?? elapsedMicroseconds, fields))
    }

    /// Records a typed payload (``TracePayload/record(at:session:sessionTime:)``) at
    /// `tMicroseconds`, by default now.
    public func record(_ payload: some TracePayload, at tMicroseconds: Int64? = nil) {
        emit(payload.record(at: tMicroseconds ?? elapsedMicroseconds))
    }

    /// Writes a fully formed record (it should carry `t_us` and `event`) and returns it as
    /// written (redacted when asked), for whatever shows it to a person.
    @discardableResult
    public func emit(_ record: TraceRecord) -> TraceRecord {
        emit(contentsOf: CollectionOfOne(record))[0]
    }

    /// Writes fully formed records in their order with one `write(2)` for all of them (a
    /// burst of frames noted outside a timing, a virtual card's events since the last look),
    /// instead of one per record; returns them as written (redacted when asked). The size
    /// cap applies record by record, as for ``emit(_:)``.
    @discardableResult
    public func emit(contentsOf records: some Collection<TraceRecord>) -> [TraceRecord] {
        let written = redact ? records.map { Self.redacted(record: $0) } : Array(records)
        // Under the lock, so --json, the file and the sinks have the records in one order.
        state.withLock { s in
            guard !s.closed else { return }
            var bytes: [UInt8] = []
            for (record, shown) in zip(records, written) {
                for sink in sinks { sink.receive(record) }
                let wantsFile = stream != nil
                guard wantsFile || echo != nil else { continue }
                let line = shown.line + "\n"
                echo?(String(line.dropLast()))
                guard wantsFile else { continue }
                let size = line.utf8.count
                let total = s.written + bytes.count
                if !s.capped && total + size <= maxBytes {
                    bytes.append(contentsOf: line.utf8)
                    continue
                }
                if !s.capped {
                    s.capped = true
                    bytes.append(
                        contentsOf: (TraceRecord(
                            .traceTruncated, at: elapsedMicroseconds, ["max_bytes": .int(Int64(maxBytes))]
                        ).line + "\n").utf8)
                }
                // Summaries are written past the cap, within a reserve (a sixteenth of it).
                if let kind = record.kind, Self.summaryEvents.contains(kind),
                    total + size <= maxBytes + max(maxBytes / 16, 64 << 10)
                {
                    if s.dropped > s.counted { bytes.append(contentsOf: (countRecord(&s).line + "\n").utf8) }
                    bytes.append(contentsOf: line.utf8)
                } else {
                    s.dropped += 1
                    s.droppedBytes += size
                }
            }
            if !bytes.isEmpty, let stream {
                stream.write(bytes)
                s.written += bytes.count
            }
        }
        return written
    }

    /// A record as `--redact` writes it (``redacted(_:)`` of its JSON).
    public static func redacted(record r: TraceRecord) -> TraceRecord { TraceRecord(json: redacted(r.json)) }

    /// `o` as `--redact` writes it: the values of ``sensitiveKeys`` replaced by their length;
    /// in a header record only `setup` is looked at.
    public static func redacted(_ o: JSONObject) -> JSONObject {
        guard o[TraceRecord.Key.kind]?.stringValue == TraceRecord.Kind.header.rawValue else {
            return redactedObject(o)
        }
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
    func receive(_ record: TraceRecord)
    func finish()
    /// Records for the trace to end with, asked once when it is closed, before ``finish()``
    /// (the pcapng export's frames left out); the writer sets their `t_us`. None by default.
    func closingRecords() -> [TraceRecord]
}

extension TraceSink {
    public func closingRecords() -> [TraceRecord] { [] }
}

/// The one place trace files and the files made from them (pcapng, SVG) are created, so
/// their folder and file modes are decided once: files `0600` (owner only: traces hold tag
/// UIDs and NDEF payloads) whatever the umask, the trace folder `0700` (``/NFCFiles/PrivateFolder``),
/// written by ``/NFCFiles/OutputFile``'s rules.
public enum TraceFile {
    /// Opens `path` for a trace or an export written as the run goes. With
    /// `createParentDirectory` (the trace folder, not a path the user named) the folder must
    /// pass ``/NFCFiles/PrivateFolder/prepare(_:createParents:)`` (it is made 0700 when missing)
    /// and the file must be new (no link is followed); otherwise ``/NFCFiles/OutputFile``'s rules
    /// apply (`-` standard output, a FIFO or device written into, an existing file replaced
    /// when the stream finishes). `label` names it in errors. Throws ``TraceFileError``.
    public static func create(
        path: String, createParentDirectory: Bool = false, label: String? = nil, streaming: Bool = true
    ) throws(TraceFileError) -> FileWriter {
        if createParentDirectory {
            let dir = PrivateFolder.parent(of: path)
            if !dir.isEmpty {
                do { try PrivateFolder.prepare(dir, createParents: true) } catch {
                    throw TraceFileError(path: dir, reason: error.problem, folder: error)
                }
            }
        }
        do {
            return try OutputFile.plan(path, label: label, followLinks: !createParentDirectory).open(
                streaming: streaming)
        } catch {
            throw TraceFileError(error)
        }
    }

    /// Writes `bytes` as the whole file at `path` (``/NFCFiles/OutputFile/write(_:)``), mode 0600
    /// when new. Throws ``TraceFileError``.
    public static func write(_ bytes: [UInt8], to path: String, label: String? = nil) throws(TraceFileError) {
        do throws(FileError) { try OutputFile.plan(path, label: label).write(bytes) } catch {
            throw TraceFileError(error)
        }
    }
}

/// The trace file could not be opened or written: its path and the system's reason.
public struct TraceFileError: Error, Sendable, CustomStringConvertible {
    public init(path: String, reason: String, folder: PrivateFolderError? = nil, kind: FileError.Kind = .cantCreate) {
        self.path = path
        self.reason = reason
        self.folder = folder
        self.kind = kind
    }

    public init(_ error: FileError) {
        self.init(path: error.path, reason: error.reason, kind: error.kind)
    }

    public let path: String
    public let reason: String
    /// Set when the trace folder itself was refused (``/NFCFiles/PrivateFolder``): not ours, a
    /// link, or writable by others.
    public let folder: PrivateFolderError?
    /// ``/NFCFiles/FileError/Kind/cantCreate`` (73) or ``/NFCFiles/FileError/Kind/io`` (74).
    public let kind: FileError.Kind
    public var description: String { folder.map { "trace folder \($0)" } ?? "\(path): \(reason)" }
}
