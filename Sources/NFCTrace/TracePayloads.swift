/// A kind's fields as a typed value: the one place a kind's field names are written, used by
/// the module that writes the kind and every module that reads it.
///
/// ``fields`` writes the kind's fields as today's traces have them (the same keys, the same
/// order, the same JSON types); ``init(decoding:)`` reads them back. Reading is strict only
/// about what the writers always write: a required field that is missing, or any listed field
/// of another JSON type, throws ``TraceFieldError`` (so ``init(_:)`` is nil); an optional field
/// that is absent or `null` is nil. A key the payload does not list is not its business: it
/// stays in the ``TraceRecord`` it was read from, which is what is passed on.
///
/// The catalog's fields for a typed kind are ``catalogFields`` (``TraceRecord/KindSpec``
/// `typed:`), so the format document cannot list other keys than the type writes.
public protocol TracePayload: Sendable, Equatable {
    /// The kind this payload is the fields of.
    static var kind: TraceRecord.Kind { get }
    /// Its fields, in the order ``fields`` writes them, with what each holds.
    static var catalogFields: [TraceRecord.Field] { get }
    /// The fields a record must hold to read (``TraceFieldError/Problem/missing`` otherwise);
    /// every other field is optional. The format document lists them.
    static var requiredKeys: [String] { get }
    /// Reads the payload from a record of ``kind``; throws ``TraceFieldError`` on a record of
    /// another kind, a missing required field or a field of another JSON type.
    init(decoding record: TraceRecord) throws(TraceFieldError)
    /// The fields, in their written order (without `t_us`, `event` or a session's keys).
    var fields: JSONObject { get }
}

extension TracePayload {
    /// The payload of `record`, or nil when it is of another kind or its fields do not read
    /// (``init(decoding:)``).
    public init?(_ record: TraceRecord) {
        do { try self.init(decoding: record) } catch { return nil }
    }

    /// The record of this payload: `t_us` (none when nil), `event`, a session record's
    /// `session` and `session_t_us` when given, then ``fields``.
    public func record(at time: Int64?, session: Int64? = nil, sessionTime: Int64? = nil) -> TraceRecord {
        var o = JSONObject()
        if let session { o[TraceRecord.Key.session] = .int(session) }
        if let sessionTime { o[TraceRecord.Key.sessionTime] = .int(sessionTime) }
        o.merge(fields)
        return TraceRecord(Self.kind, at: time, o)
    }

    /// The name the format document gives the type (`TraceRecord.Frame`).
    public static var typeName: String { "TraceRecord.\(String(describing: Self.self))" }
}

/// Why a record's fields do not read as a ``TracePayload``.
public struct TraceFieldError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Problem: Sendable, Equatable {
        /// The record is of another kind (or has none).
        case wrongKind(TraceRecord.Kind?)
        /// A required field is not there.
        case missing
        /// The field holds another JSON type than the one named.
        case wrongType(expected: String)
    }
    /// The kind the payload reads.
    public let kind: TraceRecord.Kind
    /// The field (empty for ``Problem/wrongKind(_:)``).
    public let key: String
    public let problem: Problem

    public init(kind: TraceRecord.Kind, key: String, problem: Problem) {
        self.kind = kind
        self.key = key
        self.problem = problem
    }

    public var description: String {
        switch problem {
        case .wrongKind(let k): "not a \(kind) record: \(k?.rawValue ?? "no event")"
        case .missing: "\(kind) record without its \(key)"
        case .wrongType(let expected): "\(kind) record whose \(key) is not \(expected)"
        }
    }
}

/// Reads a payload's fields by their JSON types, throwing ``TraceFieldError``.
struct PayloadFields {
    let object: JSONObject
    let kind: TraceRecord.Kind
    /// Put before a key in an error (`targets[0].`), for a nested object.
    let prefix: String

    init(_ record: TraceRecord, _ kind: TraceRecord.Kind) throws(TraceFieldError) {
        guard record.is(kind) else { throw TraceFieldError(kind: kind, key: "", problem: .wrongKind(record.kind)) }
        self.init(object: record.json, kind: kind, prefix: "")
    }

    init(object: JSONObject, kind: TraceRecord.Kind, prefix: String) {
        self.object = object
        self.kind = kind
        self.prefix = prefix
    }

    private func fail(_ key: String, _ problem: TraceFieldError.Problem) -> TraceFieldError {
        TraceFieldError(kind: kind, key: prefix + key, problem: problem)
    }

    func int(_ key: String) throws(TraceFieldError) -> Int64 {
        guard let v = try optionalInt(key) else { throw fail(key, .missing) }
        return v
    }

    func optionalInt(_ key: String) throws(TraceFieldError) -> Int64? {
        switch object[key] {
        case nil, .null?: return nil
        case .int(let i)?: return i
        default: throw fail(key, .wrongType(expected: "an integer"))
        }
    }

    func string(_ key: String) throws(TraceFieldError) -> String {
        guard let v = try optionalString(key) else { throw fail(key, .missing) }
        return v
    }

    func optionalString(_ key: String) throws(TraceFieldError) -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let s)?: return s
        default: throw fail(key, .wrongType(expected: "a string"))
        }
    }

    /// One of `values` (a string field written from a fixed set).
    func oneOf<E: RawRepresentable>(_ key: String, _ type: E.Type) throws(TraceFieldError) -> E
    where E.RawValue == String, E: CaseIterable {
        let s = try string(key)
        guard let v = E(rawValue: s) else {
            throw fail(key, .wrongType(expected: E.allCases.map { "`\($0.rawValue)`" }.joined(separator: " or ")))
        }
        return v
    }
}

extension TraceRecord {
    /// Every payload type, for the catalog's check (each kind's fields are its types' fields).
    public static let payloadTypes: [any TracePayload.Type] = [
        Detected.self, Frame.self, HostLinkFrame.self, Lost.self, TagOperationEnded.self, Ending.self, Signal.self,
        CommandAPDU.self,
        ResponseAPDU.self, Fault.self, PN532Event.self, FieldChange.self, Air.self,
    ]

    /// The fields of `types` in their order, each key once (a kind with two shapes, `frame`).
    static func fields(of types: [any TracePayload.Type]) -> [Field] {
        var seen = Set<String>()
        return types.flatMap { $0.catalogFields }.filter { seen.insert($0.key).inserted }
    }

    // MARK: sessions and commands on a reader

    /// `frame` of a session or a command on a reader: one frame or APDU exchanged with a
    /// target. `response` is always written, `null` when there was none (read back as nil,
    /// absent too).
    public struct Frame: TracePayload {
        public static let kind = Kind.frame
        public static let requiredKeys = ["target", "command"]
        public static let catalogFields = [
            TraceRecord.target, Field("command", "what was sent (hex)"), TraceRecord.responseField,
        ]
        /// The target's id (`detected`'s `id`).
        public var target: Int64
        /// What was sent, hex (or a redacted trace's `redacted:N bytes`).
        public var command: String
        /// The answer, hex; nil for none.
        public var response: String?

        public init(target: Int64, command: String, response: String?) {
            self.target = target
            self.command = command
            self.response = response
        }

        public init(target: Int64, command: [UInt8], response: [UInt8]?) {
            self.init(target: target, command: command.hexString(), response: response?.hexString())
        }

        public init(decoding record: TraceRecord) throws(TraceFieldError) {
            let f = try PayloadFields(record, Self.kind)
            target = try f.int("target")
            command = try f.string("command")
            response = try f.optionalString("response")
        }

        public var fields: JSONObject {
            ["target": .int(target), "command": .string(command), "response": response.map { .string($0) } ?? .null]
        }
    }

    /// `detected`: tags came into the field, each a ``Target``.
    public struct Detected: TracePayload {
        public static let kind = Kind.detected
        public static let catalogFields = [
            Field(
                "targets",
                "each `{\(Target.alwaysWritten.joined(separator: ", "))}` and "
                    + Target.whenKnown.map { "`\($0)`" }.joined(separator: ", ") + " when known (hex)")
        ]
        public static let requiredKeys = ["targets"]

        /// One target as `detected` lists it: `id`, `kind`, `family`, `uid`, then what is known
        /// of `atqa`, `sak`, `ats`, `atr`, `pmm`, `system_code`, `dsfid` (hex). Reading needs
        /// `id`, `kind` and `uid`; `family` is nil when absent (its `kind` names it then).
        public struct Target: Sendable, Equatable {
            /// The keys every target has, in their order.
            public static let alwaysWritten = ["id", "kind", "family", "uid"]
            /// The keys a target has when the reader knows them, in their order.
            public static let whenKnown = ["atqa", "sak", "ats", "atr", "pmm", "system_code", "dsfid"]
            /// What a target must hold to read.
            public static let requiredKeys = ["id", "kind", "uid"]

            public var id: Int64
            /// `type2`, `type4`, `felica`, `iso15693` or `other`.
            public var kind: String
            /// A `TargetFamily` name.
            public var family: String?
            /// Hex, as the other byte fields (a redacted trace's `redacted:N bytes`).
            public var uid: String
            public var atqa: String?
            public var sak: String?
            public var ats: String?
            public var atr: String?
            public var pmm: String?
            public var systemCode: String?
            public var dsfid: String?

            public init(
                id: Int64, kind: String, family: String?, uid: String, atqa: String? = nil, sak: String? = nil,
                ats: String? = nil, atr: String? = nil, pmm: String? = nil, systemCode: String? = nil,
                dsfid: String? = nil
            ) {
                self.id = id
                self.kind = kind
                self.family = family
                self.uid = uid
                self.atqa = atqa
                self.sak = sak
                self.ats = ats
                self.atr = atr
                self.pmm = pmm
                self.systemCode = systemCode
                self.dsfid = dsfid
            }

            /// Reads one element of `targets`; throws ``TraceFieldError`` naming `targets[i].key`.
            public init(_ value: JSONValue, index: Int) throws(TraceFieldError) {
                let key = "targets[\(index)]"
                guard case .object(let o) = value else {
                    throw TraceFieldError(kind: Detected.kind, key: key, problem: .wrongType(expected: "an object"))
                }
                let f = PayloadFields(object: o, kind: Detected.kind, prefix: key + ".")
                id = try f.int("id")
                kind = try f.string("kind")
                family = try f.optionalString("family")
                uid = try f.string("uid")
                atqa = try f.optionalString("atqa")
                sak = try f.optionalString("sak")
                ats = try f.optionalString("ats")
                atr = try f.optionalString("atr")
                pmm = try f.optionalString("pmm")
                systemCode = try f.optionalString("system_code")
                dsfid = try f.optionalString("dsfid")
            }

            /// The target's object, keys in their written order.
            public var object: JSONObject {
                var o: JSONObject = ["id": .int(id), "kind": .string(kind)]
                if let family { o["family"] = .string(family) }
                o["uid"] = .string(uid)
                let known: [(String, String?)] = [
                    ("atqa", atqa), ("sak", sak), ("ats", ats), ("atr", atr), ("pmm", pmm), ("system_code", systemCode),
                    ("dsfid", dsfid),
                ]
                for (k, v) in known { if let v { o[k] = .string(v) } }
                return o
            }
        }

        public var targets: [Target]

        public init(targets: [Target]) { self.targets = targets }

        public init(decoding record: TraceRecord) throws(TraceFieldError) {
            _ = try PayloadFields(record, Self.kind)
            guard let value = record["targets"] else {
                throw TraceFieldError(kind: Self.kind, key: "targets", problem: .missing)
            }
            guard case .array(let list) = value else {
                throw TraceFieldError(kind: Self.kind, key: "targets", problem: .wrongType(expected: "an array"))
            }
            var targets: [Target] = []
            for (i, v) in list.enumerated() { targets.append(try Target(v, index: i)) }
            self.targets = targets
        }

        public var fields: JSONObject { ["targets": .array(targets.map { .object($0.object) })] }
    }

    /// `lost`: a target left the field.
    public struct Lost: TracePayload {
        public static let kind = Kind.lost
        public static let requiredKeys = ["target"]
        public static let catalogFields = [TraceRecord.target]
        public var target: Int64

        public init(target: Int64) { self.target = target }

        public init(decoding record: TraceRecord) throws(TraceFieldError) {
            target = try PayloadFields(record, Self.kind).int("target")
        }

        public var fields: JSONObject { ["target": .int(target)] }
    }

    /// `tagOperationEnded`: a tag operation ended, with Core NFC's error (`code`, `reason`)
    /// or `result` `success`.
    public struct TagOperationEnded: TracePayload {
        public static let kind = Kind.tagOperationEnded
        public static let requiredKeys = ["operation"]
        public static let catalogFields = [
            Field("operation", "the operation"), TraceRecord.code, TraceRecord.reason, Field("result", "`success`"),
        ]
        /// Core NFC's error: its raw value and case name.
        public struct Failure: Sendable, Equatable {
            public var code: Int64
            public var reason: String
            public init(code: Int64, reason: String) {
                self.code = code
                self.reason = reason
            }
        }
        public var operation: String
        /// The error, or nil when the operation succeeded (`result` `success`).
        public var failure: Failure?

        public init(operation: String, failure: Failure?) {
            self.operation = operation
            self.failure = failure
        }

        /// A record with `code` reads as a failure (its `reason` required); one without, a success.
        public init(decoding record: TraceRecord) throws(TraceFieldError) {
            let f = try PayloadFields(record, Self.kind)
            operation = try f.string("operation")
            if let code = try f.optionalInt("code") {
                failure = Failure(code: code, reason: try f.string("reason"))
            } else {
                _ = try f.optionalString("result")
                failure = nil
            }
        }

        public var fields: JSONObject {
            var o: JSONObject = ["operation": .string(operation)]
            if let failure {
                o["code"] = .int(failure.code)
                o["reason"] = .string(failure.reason)
            } else {
                o["result"] = "success"
            }
            return o
        }
    }

    /// `didInvalidateWithError`: the session's ending, Core NFC's error (`code`, `reason`),
    /// the app's message, and (written by the bench) the signal that ended it.
    public struct Ending: TracePayload {
        public static let kind = Kind.didInvalidateWithError
        public static let requiredKeys = ["code", "reason"]
        public static let catalogFields = [
            TraceRecord.code, TraceRecord.reason, Field("error_message", "the app's message"),
            Field("cause", "the signal that ended it"),
        ]
        public var code: Int64
        public var reason: String
        public var errorMessage: String?
        public var cause: String?

        public init(code: Int64, reason: String, errorMessage: String? = nil, cause: String? = nil) {
            self.code = code
            self.reason = reason
            self.errorMessage = errorMessage
            self.cause = cause
        }

        public init(decoding record: TraceRecord) throws(TraceFieldError) {
            let f = try PayloadFields(record, Self.kind)
            code = try f.int("code")
            reason = try f.string("reason")
            errorMessage = try f.optionalString("error_message")
            cause = try f.optionalString("cause")
        }

        public var fields: JSONObject {
            var o: JSONObject = ["code": .int(code), "reason": .string(reason)]
            if let errorMessage { o["error_message"] = .string(errorMessage) }
            if let cause { o["cause"] = .string(cause) }
            return o
        }
    }

    /// `signal`: a signal ended the run.
    public struct Signal: TracePayload {
        public static let kind = Kind.signal
        public static let requiredKeys = ["signal", "name", "reason"]
        public static let catalogFields = [
            Field("signal", "its number"), Field("name", "its name"), TraceRecord.reason,
        ]
        public var signal: Int64
        public var name: String
        public var reason: String

        public init(signal: Int64, name: String, reason: String) {
            self.signal = signal
            self.name = name
            self.reason = reason
        }

        public init(decoding record: TraceRecord) throws(TraceFieldError) {
            let f = try PayloadFields(record, Self.kind)
            signal = try f.int("signal")
            name = try f.string("name")
            reason = try f.string("reason")
        }

        public var fields: JSONObject { ["signal": .int(signal), "name": .string(name), "reason": .string(reason)] }
    }

    // MARK: the virtual card

    /// `c_apdu`: a C-APDU the virtual card received.
    public struct CommandAPDU: TracePayload {
        public static let kind = Kind.cApdu
        public static let requiredKeys = ["apdu"]
        public static let catalogFields = [TraceRecord.apduField]
        /// Hex.
        public var apdu: String

        public init(apdu: String) { self.apdu = apdu }

        public init(decoding record: TraceRecord) throws(TraceFieldError) {
            apdu = try PayloadFields(record, Self.kind).string("apdu")
        }

        public var fields: JSONObject { ["apdu": .string(apdu)] }
    }

    /// `r_apdu`: an R-APDU the virtual card sent.
    public struct ResponseAPDU: TracePayload {
        public static let kind = Kind.rApdu
        public static let requiredKeys = ["response"]
        public static let catalogFields = [Field("response", "hex")]
        /// Hex.
        public var response: String

        public init(response: String) { self.response = response }

        public init(decoding record: TraceRecord) throws(TraceFieldError) {
            response = try PayloadFields(record, Self.kind).string("response")
        }

        public var fields: JSONObject { ["response": .string(response)] }
    }

    /// `fault`: a fault rule of the virtual card fired.
    public struct Fault: TracePayload {
        public static let kind = Kind.fault
        public static let requiredKeys = ["fault"]
        public static let catalogFields = [Field("fault", "the rule")]
        public var fault: String

        public init(fault: String) { self.fault = fault }

        public init(decoding record: TraceRecord) throws(TraceFieldError) {
            fault = try PayloadFields(record, Self.kind).string("fault")
        }

        public var fields: JSONObject { ["fault": .string(fault)] }
    }

    // MARK: the virtual PN532

    /// `frame` of the virtual PN532: a frame on the host link (no `target`).
    public struct HostLinkFrame: TracePayload {
        public static let kind = Kind.frame
        public static let requiredKeys = ["dir", "frame"]
        public static let catalogFields = [
            Field("dir", "virtual pn532: `host_to_chip` or `chip_to_host`"),
            Field("frame", "virtual pn532: the frame (hex)"),
        ]
        public enum Direction: String, Sendable, Equatable, CaseIterable {
            case hostToChip = "host_to_chip"
            case chipToHost = "chip_to_host"
        }
        public var direction: Direction
        /// Hex.
        public var frame: String

        public init(direction: Direction, frame: String) {
            self.direction = direction
            self.frame = frame
        }

        public init(decoding record: TraceRecord) throws(TraceFieldError) {
            let f = try PayloadFields(record, Self.kind)
            direction = try f.oneOf("dir", Direction.self)
            frame = try f.string("frame")
        }

        public var fields: JSONObject { ["dir": .string(direction.rawValue), "frame": .string(frame)] }
    }

    /// `pn532_event`: the chip's own event.
    public struct PN532Event: TracePayload {
        public static let kind = Kind.pn532Event
        public static let requiredKeys = ["note"]
        public static let catalogFields = [TraceRecord.note]
        public var note: String

        public init(note: String) { self.note = note }

        public init(decoding record: TraceRecord) throws(TraceFieldError) {
            note = try PayloadFields(record, Self.kind).string("note")
        }

        public var fields: JSONObject { ["note": .string(note)] }
    }

    /// `field`: the virtual PN532's RF field went on or off.
    public struct FieldChange: TracePayload {
        public static let kind = Kind.field
        public static let requiredKeys = ["state", "note"]
        public static let catalogFields = [Field("state", "`on` or `off`"), TraceRecord.note]
        public enum State: String, Sendable, Equatable, CaseIterable {
            case on, off
        }
        public var state: State
        public var note: String

        public init(on: Bool, note: String) {
            self.state = on ? .on : .off
            self.note = note
        }

        public var isOn: Bool { state == .on }

        public init(decoding record: TraceRecord) throws(TraceFieldError) {
            let f = try PayloadFields(record, Self.kind)
            state = try f.oneOf("state", State.self)
            note = try f.string("note")
        }

        public var fields: JSONObject { ["state": .string(state.rawValue), "note": .string(note)] }
    }

    /// `air`: an exchange on the virtual PN532's air. `response` is always written, `null`
    /// for no answer; `note` only when there is one.
    public struct Air: TracePayload {
        public static let kind = Kind.air
        public static let requiredKeys = ["kind", "command"]
        public static let catalogFields = [
            Field("kind", "the exchange"), Field("command", "hex"), TraceRecord.responseField, TraceRecord.note,
        ]
        /// The exchange (`type2`, `felica`, `iso15693`, `deselect`, …).
        public var exchange: String
        /// Hex.
        public var command: String
        /// Hex; nil for no answer.
        public var response: String?
        public var note: String?

        public init(exchange: String, command: String, response: String?, note: String?) {
            self.exchange = exchange
            self.command = command
            self.response = response
            self.note = note
        }

        public init(decoding record: TraceRecord) throws(TraceFieldError) {
            let f = try PayloadFields(record, Self.kind)
            exchange = try f.string("kind")
            command = try f.string("command")
            response = try f.optionalString("response")
            note = try f.optionalString("note")
        }

        public var fields: JSONObject {
            var o: JSONObject = [
                "kind": .string(exchange), "command": .string(command),
                "response": response.map { .string($0) } ?? .null,
            ]
            if let note { o["note"] = .string(note) }
            return o
        }
    }
}
