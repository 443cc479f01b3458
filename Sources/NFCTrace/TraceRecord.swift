/// One line of a trace (schema ``schema``): the one record type every writer and reader of
/// traces uses, so the shared keys and the record kinds are named in one place.
///
/// A record is a JSON object: `t_us` (``time``: µs on the trace's monotonic clock), `event`
/// (``kind``) and the kind's own fields (``fields``), in the order they were written. A record
/// made here is written `t_us`, `event`, then its fields (``init(_:at:_:)``); the header writes
/// `schema` first (``TraceHeader/record(started:)``). A record read back keeps its keys in the
/// file's order, so reading and writing a line gives the same bytes (``line``), whatever kind
/// or key it holds: an unknown kind (``Kind/isKnown``) or field is kept, never dropped, and a
/// reader that does not know it passes it on. The kinds and their fields are listed in
/// ``catalog`` and in the trace format document generated from it (``formatDocument``).
public struct TraceRecord: Sendable, Equatable, CustomStringConvertible {
    /// The schema every record follows; bump the number on any incompatible change.
    public static let schema = "nfcbench.trace/1"

    /// The keys every record shares: the one place their names are written.
    public enum Key {
        /// The header's schema (``TraceRecord/schema``), its first key.
        public static let schema = "schema"
        /// Microseconds on the trace's monotonic clock since the header's `started`.
        public static let time = "t_us"
        /// The record's kind (``TraceRecord/Kind``).
        public static let kind = "event"
        /// A session record's session number (from 1).
        public static let session = "session"
        /// A session record's time since its session began, when `t_us` is the trace's.
        public static let sessionTime = "session_t_us"
    }

    /// The record as JSON, keys in their written order.
    public private(set) var json: JSONObject

    /// A new record: `t_us` (left out when `time` is nil), `event`, then `fields` in their order.
    /// `fields` should hold neither `t_us` nor `event`; if they do, the ones given here win.
    public init(_ kind: Kind, at time: Int64?, _ fields: JSONObject = [:]) {
        self.init(kind, at: time, leading: [:], fields)
    }

    /// A new record with `leading` between `t_us` and `event` (a walk's `reader`), then `fields`.
    public init(_ kind: Kind, at time: Int64?, leading: JSONObject, _ fields: JSONObject = [:]) {
        var o = JSONObject()
        if let time { o[Key.time] = .int(time) }
        for e in leading.entries where e.key != Key.time && e.key != Key.kind { o[e.key] = e.value }
        o[Key.kind] = .string(kind.rawValue)
        for e in fields.entries where e.key != Key.time && e.key != Key.kind { o[e.key] = e.value }
        json = o
    }

    /// A record read back (or handed over) as JSON, kept as it is: its kind, when it has one,
    /// is `json["event"]`; unknown kinds and keys stay.
    public init(json: JSONObject) { self.json = json }

    /// Parses one JSON Lines line. Throws when it is not one JSON object.
    public init(line: some StringProtocol) throws(TraceRecordError) {
        guard case .object(let o)? = try? JSONValue(parsingOrdered: String(line)) else {
            throw TraceRecordError(line: String(line))
        }
        self.init(json: o)
    }

    /// The record's kind (`event`), or nil when it has none (no trace record). Setting it
    /// replaces `event` in place (or adds it after `t_us`).
    public var kind: Kind? {
        get { json[Key.kind]?.stringValue.map(Kind.init(rawValue:)) }
        set {
            guard let newValue else {
                json[Key.kind] = nil
                return
            }
            if json[Key.kind] != nil {
                json[Key.kind] = .string(newValue.rawValue)
            } else {
                json = TraceRecord(newValue, at: nil, json).json
                if let t = time { self.time = t }
            }
        }
    }

    /// The kind, or `""` when there is none: what a `switch` over kinds reads.
    public var kindName: String { json[Key.kind]?.stringValue ?? "" }

    /// Whether this is a record of kind `kind`.
    public func `is`(_ kind: Kind) -> Bool { json[Key.kind]?.stringValue == kind.rawValue }

    /// `t_us`, or nil when the record has none. Setting it replaces it in place, or puts it
    /// first (after the header's `schema`) when the record had none.
    public var time: Int64? {
        get { json[Key.time]?.intValue }
        set {
            guard let newValue else {
                json[Key.time] = nil
                return
            }
            if json[Key.time] != nil {
                json[Key.time] = .int(newValue)
                return
            }
            var entries = json.entries
            let at = entries.first?.key == Key.schema ? 1 : 0
            entries.insert((Key.time, .int(newValue)), at: at)
            json = JSONObject(entries: entries)
        }
    }

    /// The session number of a session record (`session`), if any.
    public var session: Int64? { json[Key.session]?.intValue }

    /// Every key but `t_us` and `event` (and the header's `schema`), in the written order.
    public var fields: JSONObject {
        var o = JSONObject()
        for e in json.entries where e.key != Key.time && e.key != Key.kind && e.key != Key.schema {
            o[e.key] = e.value
        }
        return o
    }

    /// A field (or any key) of the record; setting one replaces it in place or appends it.
    public subscript(key: String) -> JSONValue? {
        get { json[key] }
        set { json[key] = newValue }
    }

    /// Appends (or replaces) every field of `fields`, in their order.
    public mutating func merge(_ fields: JSONObject) { json.merge(fields) }

    /// The keys in their written order.
    public var keys: [String] { json.keys }

    /// The line as written (no newline): the same bytes the record was read from.
    public var line: String { json.serialized }

    /// ``line``, by the name ``JSONObject`` gives it.
    public var serialized: String { line }

    public var description: String { line }
}

/// A line that is not one JSON object, so no trace record.
public struct TraceRecordError: Error, Sendable, Equatable, CustomStringConvertible {
    public var line: String
    public var description: String { "not a trace record (one JSON object a line): \(line.prefix(80))" }
}
