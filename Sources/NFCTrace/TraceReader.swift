import Foundation
import NFCFiles
import NFCTags

/// A trace read back from its file (or any JSON Lines text of trace records, such as
/// `walk --json` output): the header, if line 1 is one, and the other records in order.
public struct TraceContents: Sendable, Equatable {
    /// Line 1 when it is a header (`"event":"header"`), else nil.
    public var header: TraceRecord?
    /// Every other record, in file order, each as read (keys in the line's order, unknown
    /// kinds and fields kept: ``unknownKinds`` names the kinds this nfcbench does not know).
    public var records: [TraceRecord]
    /// How many lines could not be read: only a cut last line is forgiven (a run killed
    /// mid-write); see ``TraceReadError``.
    public var skippedLines: Int

    public init(header: TraceRecord?, records: [TraceRecord], skippedLines: Int = 0) {
        self.header = header
        self.records = records
        self.skippedLines = skippedLines
    }

    /// Records given as JSON (tests, and records made elsewhere).
    public init(header: JSONObject?, records: [JSONObject], skippedLines: Int = 0) {
        self.init(
            header: header.map(TraceRecord.init(json:)), records: records.map(TraceRecord.init(json:)),
            skippedLines: skippedLines)
    }

    /// The header's `command` (`session`, `walk`, `virtual card`…), if any.
    public var command: String? { header?["command"]?.stringValue }

    /// Header first (when there is one), then the records: what a ``TraceSink`` is fed.
    public var allRecords: [TraceRecord] { (header.map { [$0] } ?? []) + records }

    /// The kinds of records in this trace that ``TraceRecord/catalog`` does not describe (a
    /// newer nfcbench's), in first-seen order: kept in ``records``, never dropped.
    public var unknownKinds: [TraceRecord.Kind] {
        var seen: Set<TraceRecord.Kind> = []
        var out: [TraceRecord.Kind] = []
        for r in allRecords {
            guard let k = r.kind, !k.isKnown, seen.insert(k).inserted else { continue }
            out.append(k)
        }
        return out
    }

    /// Parses JSON Lines text. Blank lines are skipped; a last line that does not parse is
    /// counted in ``skippedLines`` (a trace cut by `kill -9`); any other bad line throws. Text
    /// that is no nfcbench trace at all (empty, binary, JSON of another kind, a first line that
    /// is no trace record) throws ``TraceReadError/notATrace``.
    public init(text: String, name: String = "trace") throws(TraceReadError) {
        var header: TraceRecord?
        var records: [TraceRecord] = []
        var skipped = 0
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let lastContentLine = lines.lastIndex { !$0.allSatisfy(\.isWhitespace) }
        if let why = Self.notATrace(lines, lastContentLine: lastContentLine) {
            throw TraceReadError(name: name, line: 0, reason: why, notATrace: true)
        }
        for (i, line) in lines.enumerated() where !line.allSatisfy(\.isWhitespace) {
            guard case .object(let o)? = try? JSONValue(parsingOrdered: String(line)) else {
                if i == lastContentLine {
                    skipped += 1
                    continue
                }
                throw Self.lineError(line, number: i + 1, name: name)
            }
            let record = TraceRecord(json: o)
            if i == 0 && record.is(.header) {
                header = record
            } else {
                records.append(record)
            }
        }
        guard header != nil || !records.isEmpty else {
            throw TraceReadError(
                name: name, line: 0,
                reason: skipped > 0 ? "no trace records: its only line is cut short" : "no trace records (empty file)")
        }
        self.init(header: header, records: records, skippedLines: skipped)
    }

    /// Reads the trace at `path`. Throws ``TraceReadError`` (``TraceReadError/missing``
    /// when the file does not exist or can't be read).
    public init(path: String) throws(TraceReadError) {
        let data: Data
        do { data = try DataFile.read(path) } catch {
            throw TraceReadError(name: path, line: 0, reason: error.reason, missing: true)
        }
        try self.init(text: String(decoding: data, as: UTF8.self), name: path)
    }

    /// Why `lines` are not an nfcbench trace at all, or nil when their first line is a trace
    /// record (`{…"event":…}`), or a record cut short where it is the only line (a run killed
    /// while writing its header: said as cut short, not as no trace). Every trace line is one
    /// JSON object with an `event`, the header's `"header"`.
    static func notATrace(_ lines: [Substring], lastContentLine: Int?) -> String? {
        guard let first = lines.firstIndex(where: { !$0.allSatisfy(\.isWhitespace) }) else {
            return "the file is empty"
        }
        let line = lines[first]
        if line.contains("\u{0}") || line.contains("\u{FFFD}") { return "binary data, not JSON Lines text" }
        switch try? JSONValue(parsing: String(line)) {
        case .object(let o)?:
            if TraceRecord(json: o).kind != nil { return nil }
            return "line \(first + 1) is a JSON object with no \"event\": not a trace record"
        case _?:
            return "line \(first + 1) is JSON but not an object: a trace line is one {...} record"
        case nil:
            let cutShort: Bool
            do {
                _ = try DataFile.parse(Data(line.utf8), file: nil)
                cutShort = false
            } catch {
                cutShort = error.reason.hasPrefix("unexpected end of file")
            }
            if first == lastContentLine && cutShort && line.drop(while: \.isWhitespace).hasPrefix("{\"") { return nil }
            guard cutShort else { return "line \(first + 1) is not JSON" }
            // One JSON document over many lines (a tag file, a profile): say what it is.
            let whole = lines[first...].joined(separator: "\n")
            if case .object(let o)? = try? JSONValue(parsing: whole), let format = o["format"]?.stringValue {
                return "it is one JSON document of format \"\(format)\", not JSON Lines:"
                    + " a trace has one {...} record a line"
            }
            if (try? JSONValue(parsing: whole)) != nil {
                return "it is one JSON document, not JSON Lines: a trace has one {...} record a line"
            }
            return "line \(first + 1) is not a whole JSON object: a trace line is one {...} record"
        }
    }

    /// Why line `number` is not a record: the JSON syntax error at its column, or "not a
    /// JSON object" for JSON of another kind.
    static func lineError(_ line: Substring, number: Int, name: String) -> TraceReadError {
        do {
            _ = try DataFile.parse(Data(line.utf8), file: nil)
        } catch {
            return TraceReadError(name: name, line: number, column: error.column, reason: error.reason)
        }
        return TraceReadError(name: name, line: number, reason: "not a JSON object (a trace line is one {...} record)")
    }
}

/// A trace file that could not be read: which file, which line (1-based; 0 = the file)
/// and column (1-based, in characters, for a JSON syntax error).
public struct TraceReadError: Error, Sendable, Equatable, CustomStringConvertible {
    public var name: String
    public var line: Int
    public var column: Int?
    public var reason: String
    /// The file does not exist or can't be read (no input), rather than holding bad data.
    public var missing: Bool
    /// The file holds data, but no nfcbench trace (a picture, another JSON file, nothing):
    /// `reason` says what it is instead. Still a data error (65), as a damaged trace is.
    public var notATrace: Bool
    public init(
        name: String, line: Int, column: Int? = nil, reason: String, missing: Bool = false, notATrace: Bool = false
    ) {
        self.name = name
        self.line = line
        self.column = column
        self.reason = reason
        self.missing = missing
        self.notATrace = notATrace
    }
    public var description: String {
        if notATrace { return "\(name) is not an nfcbench trace (\(reason))" }
        guard line > 0 else { return "\(name): \(reason)" }
        return "\(name):\(line)" + (column.map { ":\($0)" } ?? "") + ": \(reason)"
    }
}
