import NFCTags
public import NFCTrace

extension SessionTraceRecord {
    /// The record in the one trace schema (``/NFCTrace/TraceWriter/schema``) that `--json` shares:
    /// `t_us`, `event`, `session`, then the event's own fields. `event` is the Core NFC
    /// delegate method's short name where there is one (`didBecomeActive`,
    /// `didDetectNDEFs`, `didDetectTags`, `didInvalidateWithError`), otherwise a noun
    /// (`begin`, `thermal`, `detected`, `lost`, `ndefRead`, `restartPolling`,
    /// `alertMessage`, `tagOperation`, `tagOperationEnded`, `frame`, `queued`,
    /// `beginIgnored`, `quickRestart`, `endingRepeated`, `systemEnded`, `iso7816Selected`,
    /// `iso7816SelectFailed`, `connectionEnded`). Invalidations carry `code` (Apple's raw
    /// value) and `reason` (Core NFC's case name). `thermal` has `phase` `begin` (the limit
    /// granted, `time_limit_s`) or `end` (the limit a session begun now would get,
    /// `next_time_limit_s`).
    ///
    /// - Parameter t: the time to write as `t_us` (µs since the trace began);
    ///   the session-relative time is kept as `session_t_us`.
    public func json(tMicroseconds t: Int64? = nil) -> JSONObject { record(tMicroseconds: t).json }

    /// The record of ``json(tMicroseconds:)`` as the trace's record type.
    public func record(tMicroseconds t: Int64? = nil) -> TraceRecord {
        var o = JSONObject()
        o[TraceRecord.Key.session] = .int(Int64(session))
        if t != nil { o[TraceRecord.Key.sessionTime] = .int(tMicroseconds) }
        switch event {
        case .sessionBegan(let kind, let reader):
            switch kind {
            case .ndef(let first):
                o["mode"] = "ndef"
                o["invalidate_after_first_read"] = .bool(first)
            case .ndefReadWrite: o["mode"] = "ndef-rw"
            case .tag: o["mode"] = "tag"
            }
            o["reader"] = .string(reader)
        case .readerLockFailed(let why), .readerFailed(let why):
            o["error"] = .string(why)
        case .thermal(let heat, let limit, let enabled):
            o["phase"] = "begin"
            o["heat"] = .double((heat * 1000).rounded() / 1000)
            o["time_limit_s"] = limit.map { .double(Self.seconds($0)) } ?? .null
            if !enabled { o["thermal_model"] = "off" }
        case .thermalAfter(let heat, let next, let enabled):
            o["phase"] = "end"
            o["heat"] = .double((heat * 1000).rounded() / 1000)
            o["next_time_limit_s"] = next.map { .double(Self.seconds($0)) } ?? .null
            if !enabled { o["thermal_model"] = "off" }
        case .queued:
            o["busy_policy"] = "queue"
        case .beginIgnored(let why):
            o["reason"] = .string(why)
        case .quickRestart(let since, let outcome):
            o["since_last_end_ms"] = .double((Self.seconds(since) * 1e6).rounded() / 1e3)
            o["outcome"] = .string(outcome.rawValue)
        case .endingRepeated(let code), .systemEnded(let code):
            o["code"] = .int(Int64(code.rawValue))
            o["reason"] = .string(code.name)
        case .refusedByModel(let code, let why):
            o["code"] = .int(Int64(code.rawValue))
            o["reason"] = .string(code.name)
            o["why"] = .string(why)
        case .selectIdentifiersDropped(let aids):
            o["dropped"] = .array(aids.map { .string($0) })
            o["why"] = "not a hex AID of 5 to 16 bytes"
        case .kickedOut(let by):
            o["by_session"] = .int(Int64(by))
        case .closing(let delay):
            o["delay_ms"] = .double((Self.seconds(delay) * 1e6).rounded() / 1e3)
        case .detectionWithheld(let ids, let why):
            o["targets"] = .array(ids.map { .int(Int64($0.rawValue)) })
            o["why"] = .string(why)
        case .applicationSelection(let id, let tried, let selected):
            o["target"] = .int(Int64(id.rawValue))
            o["tried"] = .array(tried.map { .string($0) })
            if let selected { o["aid"] = .string(selected) }
        case .systemCodeSelection(let id, let tried, let selected):
            o["target"] = .int(Int64(id.rawValue))
            o["tried"] = .array(tried.map { .string($0) })
            if let selected { o["system_code"] = .string(selected) }
        case .type2Probe(let id, let report):
            o["target"] = .int(Int64(id.rawValue))
            o["outcome"] = .string(report.outcomeName)
            if let why = report.reason { o["why"] = .string(why) }
            o["duration_ms"] = .double((Self.seconds(report.duration) * 1e6).rounded() / 1e3)
            o["steps"] = .array(
                report.exchanges.map {
                    .object([
                        "step": .string($0.step), "frame": .string($0.frame.hexString()), "answer": .string($0.answer),
                    ])
                })
        case .connectionEnded(let tag, let why):
            o["tag"] = .string(tag.description)
            o["reason"] = .string(why.rawValue)
        case .didBecomeActive:
            break
        case .detected(let targets):
            o.merge(TraceRecord.Detected(targets: targets.map(\.traceTarget)).fields)
        case .lost(let id):
            o.merge(TraceRecord.Lost(target: Int64(id.rawValue)).fields)
        case .ndefRead(let id, let outcome):
            o["target"] = .int(Int64(id.rawValue))
            switch outcome {
            case .message(let m):
                o["outcome"] = "message"
                o.merge(m.json)
            case .empty: o["outcome"] = "empty"
            case .notNDEF: o["outcome"] = "notNDEF"
            case .failed(let code):
                o["outcome"] = "failed"
                o["code"] = .int(Int64(code.rawValue))
                o["reason"] = .string(code.name)
            }
        case .didDetectNDEFs(let messages):
            o["messages"] = .array(messages.map { .object($0.json) })
            if messages.count == 1, let records = messages[0].json["records"] { o["records"] = records }
        case .didDetectTags(let tags):
            o["tags"] = .array(tags.map { .string($0.description) })
        case .restartPolling(let generation):
            o["generation"] = .int(Int64(generation))
        case .alertMessage(let text):
            o["message"] = .string(text)
        case .tagOperation(let op, let name, let tag):
            o["operation"] = .string(op.description)
            o["name"] = .string(name)
            o["tag"] = .string(tag.description)
        case .tagOperationEnded(let op, let code):
            let failure = code.map { TraceRecord.TagOperationEnded.Failure(code: Int64($0.rawValue), reason: $0.name) }
            o.merge(TraceRecord.TagOperationEnded(operation: op.description, failure: failure).fields)
        case .frame(let id, let command, let response):
            o.merge(TraceRecord.Frame(target: Int64(id.rawValue), command: command, response: response).fields)
        case .didInvalidateWithError(let code, let message):
            o.merge(TraceRecord.Ending(code: Int64(code.rawValue), reason: code.name, errorMessage: message).fields)
        }
        return TraceRecord(kind, at: t ?? tMicroseconds, o)
    }

    /// ``jsonEventName`` as a record kind.
    public var kind: TraceRecord.Kind { TraceRecord.Kind(rawValue: jsonEventName) }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    /// `event` as the JSON schema names it (Core NFC's short delegate names).
    public var jsonEventName: String {
        switch event {
        case .didBecomeActive: "didBecomeActive"
        default: event.name
        }
    }
}

extension DetectedTarget {
    /// `id`, `kind`, `family`, `uid`, and `atqa`/`sak`/`ats`/`atr`/`pmm`/`system_code`/`dsfid`
    /// when known (hex): ``traceTarget``'s object.
    public var json: JSONObject { traceTarget.object }

    /// The target as `detected` records it (``/NFCTrace/TraceRecord/Detected/Target``).
    public var traceTarget: TraceRecord.Detected.Target {
        let kindName =
            switch kind {
            case .type2: "type2"
            case .type4: "type4"
            case .felica: "felica"
            case .iso15693: "iso15693"
            case .other: "other"
            }
        return TraceRecord.Detected.Target(
            id: Int64(id.rawValue), kind: kindName, family: family.rawValue, uid: uid.hexString(),
            atqa: atqa?.hexString(), sak: sak.map { [$0].hexString() }, ats: ats?.hexString(), atr: atr?.hexString(),
            pmm: pmm?.hexString(), systemCode: systemCode?.hexString(), dsfid: dsfid.map { [$0].hexString() })
    }
}

extension NDEFMessageBytes {
    /// `ndef` (hex) and the decoded `records` (NFCTrace's `NDEFRecordDescription.json`), or
    /// `ndef_error` when the bytes do not parse.
    public var json: JSONObject {
        var o: JSONObject = ["ndef": .string(bytes.hexString())]
        do {
            o["records"] = try NFCNDEFMessage(bytes: bytes).recordsJSON
        } catch {
            o["ndef_error"] = .string("\(error)")
        }
        return o
    }
}
