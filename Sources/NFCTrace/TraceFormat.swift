extension TraceRecord {
    /// A record's kind: its `event`. The kinds nfcbench writes are the constants here, each
    /// described in ``TraceRecord/catalog``; any other name (a newer nfcbench's, or another
    /// module's event named at run time) is a kind too, kept as read (``isKnown`` false).
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A kind by its name (tests, and a reader matching a name it reads); nfcbench's own
        /// writers use the constants.
        public init(stringLiteral value: String) { self.rawValue = value }
        public var description: String { rawValue }
        /// Whether the catalog describes this kind.
        public var isKnown: Bool { TraceRecord.spec(of: self) != nil }

        // Every trace.
        public static let header = Kind(rawValue: "header")
        public static let traceTruncated = Kind(rawValue: "trace_truncated")
        public static let traceDropped = Kind(rawValue: "trace_dropped")
        public static let pcapngSkipped = Kind(rawValue: "pcapng_skipped")
        // Reader sessions (ReaderSession's events; Core NFC's delegate names where there is one).
        public static let begin = Kind(rawValue: "begin")
        public static let readerLockFailed = Kind(rawValue: "readerLockFailed")
        public static let readerFailed = Kind(rawValue: "readerFailed")
        public static let thermal = Kind(rawValue: "thermal")
        public static let queued = Kind(rawValue: "queued")
        public static let beginIgnored = Kind(rawValue: "beginIgnored")
        public static let quickRestart = Kind(rawValue: "quickRestart")
        public static let endingRepeated = Kind(rawValue: "endingRepeated")
        public static let systemEnded = Kind(rawValue: "systemEnded")
        public static let refusedByModel = Kind(rawValue: "refusedByModel")
        public static let selectIdentifiersDropped = Kind(rawValue: "selectIdentifiersDropped")
        public static let kickedOut = Kind(rawValue: "kickedOut")
        public static let closing = Kind(rawValue: "closing")
        public static let detectionWithheld = Kind(rawValue: "detectionWithheld")
        public static let iso7816Selected = Kind(rawValue: "iso7816Selected")
        public static let iso7816SelectFailed = Kind(rawValue: "iso7816SelectFailed")
        public static let felicaSystemSelected = Kind(rawValue: "felicaSystemSelected")
        public static let felicaPollingFailed = Kind(rawValue: "felicaPollingFailed")
        public static let type2ProbePassed = Kind(rawValue: "type2ProbePassed")
        public static let type2ProbeSkipped = Kind(rawValue: "type2ProbeSkipped")
        public static let type2ProbeLost = Kind(rawValue: "type2ProbeLost")
        public static let type2ProbeUnreadable = Kind(rawValue: "type2ProbeUnreadable")
        public static let connectionEnded = Kind(rawValue: "connectionEnded")
        public static let didBecomeActive = Kind(rawValue: "didBecomeActive")
        public static let detected = Kind(rawValue: "detected")
        public static let lost = Kind(rawValue: "lost")
        public static let ndefRead = Kind(rawValue: "ndefRead")
        public static let didDetectNDEFs = Kind(rawValue: "didDetectNDEFs")
        public static let didDetectTags = Kind(rawValue: "didDetectTags")
        public static let restartPolling = Kind(rawValue: "restartPolling")
        public static let alertMessage = Kind(rawValue: "alertMessage")
        public static let tagOperation = Kind(rawValue: "tagOperation")
        public static let tagOperationEnded = Kind(rawValue: "tagOperationEnded")
        public static let frame = Kind(rawValue: "frame")
        public static let didInvalidateWithError = Kind(rawValue: "didInvalidateWithError")
        // The bench around a session (session, demo, check equivalence).
        public static let signal = Kind(rawValue: "signal")
        public static let readNDEF = Kind(rawValue: "readNDEF")
        public static let readNDEFFailed = Kind(rawValue: "readNDEFFailed")
        public static let writeNDEF = Kind(rawValue: "writeNDEF")
        public static let demo = Kind(rawValue: "demo")
        // Commands on a reader (dump, measure, write, format, lock, restore, raw, apdu).
        public static let closed = Kind(rawValue: "closed")
        public static let measured = Kind(rawValue: "measured")
        public static let writeOutcome = Kind(rawValue: "write_outcome")
        public static let restoreOutcome = Kind(rawValue: "restore_outcome")
        // virtual card.
        public static let cardConnected = Kind(rawValue: "card_connected")
        public static let cardDisconnected = Kind(rawValue: "card_disconnected")
        public static let vpcdControl = Kind(rawValue: "vpcd_control")
        public static let atr = Kind(rawValue: "atr")
        public static let cApdu = Kind(rawValue: "c_apdu")
        public static let rApdu = Kind(rawValue: "r_apdu")
        public static let fault = Kind(rawValue: "fault")
        public static let command = Kind(rawValue: "command")
        public static let waiting = Kind(rawValue: "waiting")
        public static let notInField = Kind(rawValue: "not_in_field")
        public static let stopped = Kind(rawValue: "stopped")
        // virtual pn532.
        public static let pn532Event = Kind(rawValue: "pn532_event")
        public static let field = Kind(rawValue: "field")
        public static let air = Kind(rawValue: "air")
        public static let readerExchange = Kind(rawValue: "reader_exchange")
        // walk and emulate (HCEEvents' phone model, the live phone's transports).
        public static let fieldOn = Kind(rawValue: "fieldOn")
        public static let fieldOff = Kind(rawValue: "fieldOff")
        public static let authenticated = Kind(rawValue: "authenticated")
        public static let wakeSuppressed = Kind(rawValue: "wakeSuppressed")
        public static let nfcEvent = Kind(rawValue: "nfcEvent")
        public static let isoDepActivated = Kind(rawValue: "isoDepActivated")
        public static let apdu = Kind(rawValue: "apdu")
        public static let heldForApp = Kind(rawValue: "heldForApp")
        public static let wtx = Kind(rawValue: "wtx")
        public static let startEmulation = Kind(rawValue: "startEmulation")
        public static let stopEmulation = Kind(rawValue: "stopEmulation")
        public static let sessionStarted = Kind(rawValue: "sessionStarted")
        public static let readerDetected = Kind(rawValue: "readerDetected")
        public static let received = Kind(rawValue: "received")
        public static let readerDeselected = Kind(rawValue: "readerDeselected")
        public static let sessionInvalidated = Kind(rawValue: "sessionInvalidated")
        public static let vpcdConnected = Kind(rawValue: "vpcdConnected")
        public static let vpcdDisconnected = Kind(rawValue: "vpcdDisconnected")
        public static let vpcdATR = Kind(rawValue: "vpcdATR")
        public static let vpcdControlEvent = Kind(rawValue: "vpcdControl")
        public static let pcscConnect = Kind(rawValue: "pcscConnect")
        public static let pcscDisconnect = Kind(rawValue: "pcscDisconnect")
        public static let targetReceive = Kind(rawValue: "targetReceive")
        public static let targetSend = Kind(rawValue: "targetSend")
        public static let released = Kind(rawValue: "released")
        public static let error = Kind(rawValue: "error")
        public static let sweep = Kind(rawValue: "sweep")
        public static let summary = Kind(rawValue: "summary")
    }

    /// One field of a kind: its key and what it holds.
    public struct Field: Sendable, Equatable {
        public let key: String
        public let meaning: String
        public init(_ key: String, _ meaning: String) {
            self.key = key
            self.meaning = meaning
        }
    }

    /// A kind as the format document describes it: who writes it, what it means, its fields.
    /// `open` kinds carry a report's fields besides those listed (`measured`, the outcomes,
    /// the summaries: the same object `--json` prints).
    public struct KindSpec: Sendable, Equatable {
        public let kind: Kind
        public let writers: String
        public let meaning: String
        public let fields: [Field]
        public let open: Bool
        /// The ``TracePayload`` types that write and read the kind (``TracePayload/typeName``),
        /// empty for a kind read by its keys.
        public let payloads: [String]
        /// For a typed kind, the fields each of its types requires (``TracePayload/requiredKeys``).
        public let requiredKeys: [[String]]
        public init(_ kind: Kind, _ writers: String, _ meaning: String, _ fields: [Field] = [], open: Bool = false) {
            self.kind = kind
            self.writers = writers
            self.meaning = meaning
            self.fields = fields
            self.open = open
            self.payloads = []
            self.requiredKeys = []
        }
        /// A typed kind: its fields are those of `types` (``TracePayload/catalogFields``), in
        /// their order, so the document lists what the types write.
        public init(_ kind: Kind, _ writers: String, _ meaning: String, typed types: [any TracePayload.Type]) {
            self.kind = kind
            self.writers = writers
            self.meaning = meaning
            self.fields = TraceRecord.fields(of: types)
            self.open = false
            self.payloads = types.map { $0.typeName }
            self.requiredKeys = types.map { $0.requiredKeys }
        }
    }

    /// The keys any record may carry besides its kind's fields: `t_us`, `event`, and a session
    /// record's `session` and `session_t_us`.
    public static let commonFields: [Field] = [
        Field(Key.time, "µs since the trace began (monotonic; the header's `started` is 0)"),
        Field(Key.kind, "the record's kind"),
        Field(Key.session, "the session (from 1), on a session's records"),
        Field(Key.sessionTime, "µs since the session began, on a session's records when `t_us` is the trace's"),
    ]

    static let target = Field("target", "the target's id (from 1, as in `detected`)")
    static let code = Field("code", "Core NFC's error code (Apple's raw value)")
    static let reason = Field("reason", "why, in words (for a code: Core NFC's case name)")
    static let why = Field("why", "why, in words")
    static let reader = Field("reader", "the reader profile's name")
    static let apduField = Field("apdu", "the C-APDU (hex)")
    static let responseField = Field("response", "the answer (hex), or null for none")
    static let detail = Field("detail", "what happened, in words")
    static let source = Field("source", "emulate: where the event comes from (model, vpcd, pcsc, libnfc, bench)")
    static let uid = Field("uid", "emulate: the phone's UID (hex)")
    static let note = Field("note", "what the chip did, in words")
    static let hce: [Field] = [reader, source, uid, apduField, responseField, detail]

    /// Every kind nfcbench writes, in the order the format document lists them.
    public static let catalog: [KindSpec] = [
        KindSpec(
            .header, "every trace", "line 1, the same keys for every command (`TraceHeader`)",
            [
                Field(Key.schema, "`\(schema)`"), Field("tool", "`nfcbench` and its version"),
                Field("libnfc", "libnfc's version, or `unknown`"),
                Field("pcsclite", "pcsc-lite's version, or `unknown`"),
                Field("command", "the command as typed (`session`, `virtual card`…)"),
                Field("device", "the reader or virtual device, or null"), Field("pid", "the process id"),
                Field("started", "UTC wall-clock time of `t_us` 0, ISO 8601 with µs"),
                Field("model", "the model's parameters, each `{\"value\", \"source\", \"ref\"}`"),
                Field("setup", "what the command was given (tag file, port, pty…)"),
            ]),
        KindSpec(
            .traceTruncated, "every trace", "the size cap was reached: later records are left out of the file",
            [Field("max_bytes", "the cap")]),
        KindSpec(
            .traceDropped, "every trace", "what the cap left out so far, before a summary written past it",
            [
                Field("dropped_records", "records left out"), Field("dropped_bytes", "their bytes"),
                Field("max_bytes", "the cap"),
            ]),
        KindSpec(
            .pcapngSkipped, "`--pcapng`", "frames the live pcapng export left out (no Wireshark dissector)",
            [
                Field("pcapng", "the pcapng file"), Field("family", "the frames' family (`iso15693`)"),
                Field("frames", "how many"), reason,
            ]),
        KindSpec(
            .begin, "sessions", "`begin()`: the session's mode and reader",
            [
                Field("mode", "`ndef`, `ndef-rw` or `tag`"),
                Field("invalidate_after_first_read", "NDEF sessions: `invalidateAfterFirstRead`"), reader,
            ]),
        KindSpec(.readerLockFailed, "sessions", "the reader's lock could not be taken", [Field("error", "why")]),
        KindSpec(.readerFailed, "sessions", "the reader failed", [Field("error", "why")]),
        KindSpec(
            .thermal, "sessions", "the thermal model: `phase` `begin` (the limit granted) or `end` (the next limit)",
            [
                Field("phase", "`begin` or `end`"), Field("heat", "field-seconds of heat"),
                Field("time_limit_s", "begin: the session's time limit, null when refused"),
                Field("next_time_limit_s", "end: the limit a session begun now would get"),
                Field("thermal_model", "`off` when switched off"),
                Field("time_to_cool_s", "refused: seconds until a session may begin"),
            ]),
        KindSpec(.queued, "sessions", "the reader is busy: waiting in line", [Field("busy_policy", "`queue`")]),
        KindSpec(.beginIgnored, "sessions", "`begin()` on a session that is already running", [reason]),
        KindSpec(
            .quickRestart, "sessions", "`begin()` soon after the last sheet closed",
            [Field("since_last_end_ms", "ms since the last end"), Field("outcome", "what the model did")]),
        KindSpec(.endingRepeated, "sessions", "`invalidate()` on an ended session", [code, reason]),
        KindSpec(.systemEnded, "sessions", "the system ended the session", [code, reason]),
        KindSpec(.refusedByModel, "sessions", "the model refused the session", [code, reason, why]),
        KindSpec(
            .selectIdentifiersDropped, "sessions", "AIDs left out of the select list",
            [Field("dropped", "the AIDs"), why]),
        KindSpec(
            .kickedOut, "sessions", "another session took the reader",
            [Field("by_session", "the session that did")]),
        KindSpec(.closing, "sessions", "the sheet closes", [Field("delay_ms", "after how long")]),
        KindSpec(
            .detectionWithheld, "sessions", "targets not delivered to the app",
            [Field("targets", "their ids"), why]),
        KindSpec(
            .iso7816Selected, "sessions", "an AID of the app's list was selected",
            [target, Field("tried", "the AIDs tried"), Field("aid", "the one selected")]),
        KindSpec(
            .iso7816SelectFailed, "sessions", "no AID of the app's list answered",
            [target, Field("tried", "the AIDs tried")]),
        KindSpec(
            .felicaSystemSelected, "sessions", "a system code of the app's list answered",
            [target, Field("tried", "the system codes tried"), Field("system_code", "the one selected")]),
        KindSpec(
            .felicaPollingFailed, "sessions", "no system code of the app's list answered",
            [target, Field("tried", "the system codes tried")]),
        KindSpec(.type2ProbePassed, "sessions", "the Type 2 probe identified the tag", probeFields),
        KindSpec(.type2ProbeSkipped, "sessions", "the Type 2 probe was skipped, the tag delivered", probeFields),
        KindSpec(.type2ProbeLost, "sessions", "the tag left during the Type 2 probe", probeFields),
        KindSpec(.type2ProbeUnreadable, "sessions", "the Type 2 probe could not read the tag", probeFields),
        KindSpec(
            .connectionEnded, "sessions", "a tag connection ended",
            [Field("tag", "the tag"), reason]),
        KindSpec(.didBecomeActive, "sessions", "delegate `readerSessionDidBecomeActive`"),
        KindSpec(
            .detected, "sessions, commands on a reader", "tags came into the field", typed: [Detected.self]),
        KindSpec(.lost, "sessions, commands on a reader", "a tag left the field", typed: [Lost.self]),
        KindSpec(
            .ndefRead, "sessions", "the reader's NDEF read",
            [
                target, Field("outcome", "`message`, `empty`, `notNDEF` or `failed`"),
                Field("ndef", "the message (hex)"), Field("records", "the decoded records"),
                Field("ndef_error", "why the bytes do not parse"), code, reason,
            ]),
        KindSpec(
            .didDetectNDEFs, "sessions", "delegate `didDetectNDEFs`",
            [Field("messages", "each `{ndef, records}`"), Field("records", "one message: its decoded records")]),
        KindSpec(.didDetectTags, "sessions", "delegate `didDetectTags`", [Field("tags", "the tags")]),
        KindSpec(.restartPolling, "sessions", "`restartPolling()`", [Field("generation", "the polling generation")]),
        KindSpec(.alertMessage, "sessions", "the sheet's alert message was set", [Field("message", "its text")]),
        KindSpec(
            .tagOperation, "sessions", "the app began a tag operation",
            [Field("operation", "the operation"), Field("name", "its API name"), Field("tag", "the tag")]),
        KindSpec(
            .tagOperationEnded, "sessions", "a tag operation ended", typed: [TagOperationEnded.self]),
        KindSpec(
            .frame, "sessions, commands on a reader, virtual pn532", "one frame or APDU exchanged",
            typed: [Frame.self, HostLinkFrame.self]),
        KindSpec(
            .didInvalidateWithError, "sessions", "delegate `didInvalidateWithError`: the session's ending",
            typed: [Ending.self]),
        KindSpec(
            .signal, "session", "a signal ended the run", typed: [Signal.self]),
        KindSpec(
            .readNDEF, "session's bench app, check equivalence", "the bench app's `readNDEF` answer",
            [
                Field("ndef", "the message (hex)"), Field("records", "the decoded records"),
                Field("ndef_error", "why the bytes do not parse"),
            ]),
        KindSpec(.readNDEFFailed, "session's bench app", "the bench app's `readNDEF` failed", [code, reason]),
        KindSpec(
            .writeNDEF, "check equivalence", "the bench app's `writeNDEF`",
            [
                Field("ndef", "the message (hex)"), Field("records", "the decoded records"),
                Field("ndef_error", "why the bytes do not parse"),
            ]),
        KindSpec(.demo, "demo", "a step of the demo", [Field("message", "what it says")]),
        KindSpec(.closed, "commands on a reader", "the reader was closed", [reason]),
        KindSpec(.measured, "measure", "the figures (`measure --json`'s object)", open: true),
        KindSpec(.writeOutcome, "write, format, lock", "what was written (`--json`'s report)", open: true),
        KindSpec(.restoreOutcome, "restore", "what was restored (`--json`'s report)", open: true),
        KindSpec(.cardConnected, "virtual card", "connected to vpcd: in the field", [Field("port", "vpcd's port")]),
        KindSpec(.cardDisconnected, "virtual card", "out of the field", [reason]),
        KindSpec(
            .vpcdControl, "virtual card", "a vpcd control byte",
            [Field("code", "two hex digits"), Field("meaning", "`power off`, `power on`, `reset`, `get ATR`")]),
        KindSpec(.atr, "virtual card", "the ATR sent", [Field("atr", "hex")]),
        KindSpec(.cApdu, "virtual card", "a C-APDU received", typed: [CommandAPDU.self]),
        KindSpec(.rApdu, "virtual card", "an R-APDU sent", typed: [ResponseAPDU.self]),
        KindSpec(.fault, "virtual card", "a fault rule fired", typed: [Fault.self]),
        KindSpec(
            .command, "virtual card", "a control command", [Field("input", "`present`, `remove`, `remove-after`")]),
        KindSpec(.waiting, "virtual card", "waiting for vpcd", [reason]),
        KindSpec(.notInField, "virtual card", "gave up waiting for vpcd", [reason]),
        KindSpec(.stopped, "virtual card, virtual pn532", "the device stopped", [reason]),
        KindSpec(.pn532Event, "virtual pn532", "the chip's own event", typed: [PN532Event.self]),
        KindSpec(.field, "virtual pn532", "the RF field", typed: [FieldChange.self]),
        KindSpec(.air, "virtual pn532", "an exchange on the air", typed: [Air.self]),
        KindSpec(
            .readerExchange, "virtual pn532 --reader", "the profile reader's C-APDUs and answers",
            [apduField, responseField, Field("index", "from 0")]),
        KindSpec(
            .fieldOn, "walk, emulate", "a reader's field on", hce + [Field("technology", "the field's technology, ECP")]
        ),
        KindSpec(.fieldOff, "walk, emulate", "the field off", hce),
        KindSpec(.authenticated, "walk, emulate", "the locked phone authenticated its user", hce),
        KindSpec(.wakeSuppressed, "walk, emulate", "the app's wake was suppressed", hce),
        KindSpec(.nfcEvent, "walk, emulate", "the app was woken (`NFCEvent`)", hce),
        KindSpec(.isoDepActivated, "walk, emulate", "ISO-DEP is up", hce),
        KindSpec(
            .apdu, "walk, emulate", "a C-APDU and who answered it",
            hce + [Field("answered_by", "`app`, `system`, `express` or null")]),
        KindSpec(.heldForApp, "walk, emulate", "the system holds a command for the app", hce),
        KindSpec(.wtx, "walk, emulate", "an S(WTX) while the app works", hce),
        KindSpec(.startEmulation, "walk, emulate", "`CardSession.startEmulation()`", hce),
        KindSpec(.stopEmulation, "walk, emulate", "`stopEmulation`", hce + [Field("status", "its status")]),
        KindSpec(.sessionStarted, "walk, emulate", "`CardSession` event `sessionStarted`", hce),
        KindSpec(.readerDetected, "walk, emulate", "`CardSession` event `readerDetected`", hce),
        KindSpec(.received, "walk, emulate", "`CardSession` event `received`", hce),
        KindSpec(.readerDeselected, "walk, emulate", "`CardSession` event `readerDeselected`", hce),
        KindSpec(.sessionInvalidated, "walk, emulate", "`CardSession` event `sessionInvalidated`", hce + [reason]),
        KindSpec(.vpcdConnected, "emulate, walk --device", "the phone's vpcd card connected", hce),
        KindSpec(.vpcdDisconnected, "emulate, walk --device", "the vpcd card disconnected", hce),
        KindSpec(.vpcdATR, "emulate, walk --device", "the vpcd card's ATR", hce),
        KindSpec(.vpcdControlEvent, "emulate, walk --device", "a vpcd control byte", hce),
        KindSpec(.pcscConnect, "walk --device", "the reader side connected through PC/SC", hce),
        KindSpec(.pcscDisconnect, "walk --device", "the reader side disconnected", hce),
        KindSpec(.targetReceive, "emulate", "libnfc target mode received", hce),
        KindSpec(.targetSend, "emulate", "libnfc target mode sent", hce),
        KindSpec(.released, "emulate", "the reader released the target", hce),
        KindSpec(.error, "emulate, walk --device", "a transport error", hce),
        KindSpec(
            .sweep, "walk --sweep", "one value of a swept parameter",
            [
                Field("parameter", "the parameter"), Field("value_us", "its value"), Field("readers", "readers walked"),
                Field("served", "readers served"), Field("served_readers", "their names"), Field("wakes", "app wakes"),
                Field("useless_wakes", "wakes that served nothing"), Field("wtx", "S(WTX) frames"),
            ]),
        KindSpec(
            .summary, "walk, emulate", "what the walk or the emulation came to (`--json`'s summary)",
            [
                Field("readers", "readers walked"), Field("wakes", "app wakes"),
                Field("per_reader", "each reader's figures"), Field("sweep", "walk --sweep: the swept parameters"),
            ], open: true),
    ]

    static let probeFields: [Field] = [
        target, Field("outcome", "the probe's outcome"), why, Field("duration_ms", "how long it took"),
        Field("steps", "each `{step, frame, answer}`"),
    ]

    /// The catalog's entry for `kind`, or nil for a kind it does not describe.
    public static func spec(of kind: Kind) -> KindSpec? { specs[kind] }

    private static let specs: [Kind: KindSpec] = Dictionary(
        catalog.map { ($0.kind, $0) }, uniquingKeysWith: { a, _ in a })

    /// The keys of this record that its kind's catalog entry does not list (nor
    /// ``commonFields``); empty for an open kind. A record of an unknown kind has none listed.
    public var unlistedKeys: [String] {
        let common = Set(Self.commonFields.map(\.key))
        guard let kind else { return keys.filter { !common.contains($0) } }
        guard let spec = Self.spec(of: kind) else { return keys.filter { !common.contains($0) } }
        if spec.open { return [] }
        let listed = common.union(spec.fields.map(\.key))
        return keys.filter { !listed.contains($0) }
    }

    /// The trace format document (`docs/trace-format.md`), generated from ``catalog``.
    public static var formatDocument: String {
        var out = """
            # Trace format (`\(schema)`)

            <!-- Generated from NFCTrace's TraceRecord.catalog (Sources/NFCTrace/TraceFormat.swift);
                 a test checks this file against it: edit the catalog, not this file. -->

            A trace is JSON Lines: one JSON object a line, written as it happens. Line 1 is the
            header; every other line is a record with `t_us` and `event` (its kind), then the
            kind's fields, in that order. Readers must keep what they do not know: a kind or a
            field not listed here is passed on as read (a newer nfcbench may write it), and
            `schema` changes only when a change is incompatible.

            Keys any record may carry:

            | key | meaning |
            | --- | --- |

            """
        for f in commonFields { out += "| `\(f.key)` | \(f.meaning) |\n" }
        out += "\n## Kinds\n"
        for spec in catalog {
            out += "\n### `\(spec.kind.rawValue)`\n\n"
            out += "Written by \(spec.writers): \(spec.meaning).\n"
            if !spec.fields.isEmpty {
                out += "\n| field | meaning |\n| --- | --- |\n"
                for f in spec.fields { out += "| `\(f.key)` | \(f.meaning) |\n" }
            }
            if spec.open { out += "\nBesides these, the fields of the command's `--json` report.\n" }
            for (name, required) in zip(spec.payloads, spec.requiredKeys) {
                let keys = required.map { "`\($0)`" }.joined(separator: ", ")
                out +=
                    "\nWritten and read through `\(name)` (NFCTrace), which needs \(keys): a record without one, or"
                    + " with a listed field of another JSON type, does not read as one (`TraceFieldError`), and is"
                    + " still kept and passed on as read.\n"
            }
        }
        return out
    }
}
