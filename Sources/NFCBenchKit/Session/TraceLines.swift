public import NFCTags
public import NFCTrace
import ReaderSession

/// Renders trace records (the JSON written to the trace) as the bench's human lines, so
/// what a person reads is exactly what the trace holds.
public enum TraceLines {
    public static func seconds(_ us: Int64) -> String {
        let s = Double(us) / 1_000_000
        let text = String(format: "%.3f", s)
        return String(repeating: " ", count: max(0, 8 - text.count)) + "+" + text + " s"
    }

    /// One or more lines for a record, or nil for records a person doesn't need to see
    /// (frames, thermal bookkeeping) — those stay in the trace.
    public static func render(_ r: TraceRecord, verbose: Bool = false) -> String? {
        let t = seconds(r.time ?? 0)
        let event = r.kind ?? "?"
        switch event {
        case .header:
            return nil
        case .demo:
            return "\(t)  \(r["message"]?.stringValue ?? "")"
        case .begin:
            var mode = r["mode"]?.stringValue ?? "?"
            if r["invalidate_after_first_read"] == .bool(true) { mode += ", invalidateAfterFirstRead" }
            return
                "\(t)  begin          session \(r["session"]?.intValue ?? 0) (\(mode)) on \(r["reader"]?.stringValue ?? "?")"
        case .thermal:
            let heat = r["heat"].map { "\($0.serialized)" } ?? "0"
            let off = r["thermal_model"]?.stringValue == "off"
            if r["phase"]?.stringValue == "end" {
                if off { return nil }
                if case .double(let next)? = r["next_time_limit_s"] {
                    return
                        "\(t)  thermal        heat \(heat) field-s; a session begun now would get \(String(format: "%.1f", next)) s"
                }
                return "\(t)  thermal        heat \(heat) field-s; a session begun now would be refused (203)"
            }
            if case .double(let limit)? = r["time_limit_s"] {
                let how = off ? "fixed, thermal model off" : "granted, heat \(heat) field-s"
                return "\(t)  thermal        time limit \(String(format: "%.1f", limit)) s (\(how))"
            }
            let cool = r["time_to_cool_s"].map { "; cools enough to begin in \($0.serialized) s" } ?? ""
            return
                "\(t)  thermal        refused: too hot (heat \(heat) field-s\(cool)) → 203 (exit 14; --no-thermal on a lab bench)"
        case .readerFailed:
            return "\(t)  readerFailed   \(r["error"]?.stringValue ?? "")"
        case .readerLockFailed:
            return "\(t)  readerLockFailed \(r["error"]?.stringValue ?? "")"
        case .queued:
            return "\(t)  queued         the reader is busy; waiting in line (busy policy queue)"
        case .beginIgnored:
            return "\(t)  beginIgnored   \(r["reason"]?.stringValue ?? "")"
        case .quickRestart:
            let since = r["since_last_end_ms"].map { $0.serialized } ?? "?"
            return
                "\(t)  quickRestart   begin() \(since) ms after the last sheet closed: \(r["outcome"]?.stringValue ?? "?")"
        case .endingRepeated:
            return "\(t)  endingRepeated begin() on an ended session: \(r["code"]?.intValue ?? 0) delivered again"
        case .systemEnded:
            return "\(t)  systemEnded    the system ends the session: \(r["code"]?.intValue ?? 0)"
        case .iso7816Selected:
            return "\(t)  iso7816Selected \(r["aid"]?.stringValue ?? "")"
        case .iso7816SelectFailed:
            let tried: String
            if case .array(let a)? = r["tried"] {
                tried = a.compactMap(\.stringValue).joined(separator: ", ")
            } else {
                tried = ""
            }
            return "\(t)  iso7816SelectFailed no application answered (\(tried)): the tag is not delivered"
        case .connectionEnded:
            return "\(t)  connectionEnded \(r["tag"]?.stringValue ?? "") (\(r["reason"]?.stringValue ?? ""))"
        case .didBecomeActive:
            return "\(t)  didBecomeActive"
        case .detected:
            guard let detected = TraceRecord.Detected(r) else { return nil }
            return detected.targets.map { tg in
                "\(t)  detected       \(tg.kind) UID \(spaced(tg.uid))" + (tg.sak.map { " SAK \($0)" } ?? "")
            }.joined(separator: "\n")
        case .lost:
            return "\(t)  lost           target \(TraceRecord.Lost(r)?.target ?? 0)"
        case .ndefRead:
            let outcome = r["outcome"]?.stringValue ?? "?"
            if outcome == "message" { return nil }  // shown by didDetectNDEFs / readNDEF
            if outcome == "failed" {
                return "\(t)  ndefRead       failed: \(r["code"]?.intValue ?? 0) \(r["reason"]?.stringValue ?? "")"
            }
            return
                "\(t)  ndefRead       \(outcome == "empty" ? "empty NDEF message (keeps polling)" : "no NDEF on this tag (keeps polling)")"
        case .didDetectNDEFs, .readNDEF:
            var lines = ["\(t)  \(event.rawValue.padding(toLength: 14, withPad: " ", startingAt: 0)) " + recordCount(r)]
            lines += recordLines(r)
            return lines.joined(separator: "\n")
        case .didDetectTags:
            guard case .array(let tags)? = r["tags"] else { return nil }
            return "\(t)  didDetectTags  \(tags.count) tag\(tags.count == 1 ? "" : "s")"
        case .restartPolling:
            return "\(t)  restartPolling generation \(r["generation"]?.intValue ?? 0)"
        case .alertMessage:
            return "\(t)  alertMessage   \"\(r["message"]?.stringValue ?? "")\""
        case .tagOperation:
            return verbose ? "\(t)  \(r["name"]?.stringValue ?? "operation")" : nil
        case .tagOperationEnded:
            guard let failure = TraceRecord.TagOperationEnded(r)?.failure else { return nil }
            return "\(t)  tag operation failed: \(failure.code) \(failure.reason)"
        case .type2ProbePassed, .type2ProbeUnreadable, .type2ProbeSkipped, .type2ProbeLost:
            let ms = r["duration_ms"].map { $0.serialized } ?? "?"
            var line = "\(t)  \(event) \(ms) ms of the iPhone's Type 2 discovery"
            if let why = r["why"]?.stringValue {
                line += event == .type2ProbeUnreadable ? ": \(why): the tag is not reported" : ": \(why)"
            }
            if verbose, case .array(let steps)? = r["steps"] {
                for case .object(let step) in steps {
                    line +=
                        "\n          probe  \(step["step"]?.stringValue ?? "?") → \(step["answer"]?.stringValue ?? "?")"
                }
            }
            return line
        case .frame:
            let f = TraceRecord.Frame(r)
            return verbose ? "\(t)  frame          \(spaced(f?.command ?? "")) → \(spaced(f?.response ?? ""))" : nil
        case .didInvalidateWithError:
            let e = TraceRecord.Ending(r)
            var s = "\(t)  didInvalidateWithError \(e?.code ?? 0) \(e?.reason ?? "")"
            if let m = e?.errorMessage { s += " \"\(m)\"" }
            if let cause = e?.cause { s += " (\(cause))" }
            return s
        case .signal:
            let signal = TraceRecord.Signal(r)
            let name = signal?.name ?? "?"
            let reason = signal?.reason ?? ""
            return "\(t)  signal         " + (reason.hasPrefix(name) ? reason : "\(name): \(reason)")
        default:
            return verbose ? "\(t)  \(event)" : nil
        }
    }

    public static func recordCount(_ r: TraceRecord) -> String {
        if case .array(let records)? = r["records"] { return "\(records.count) record\(records.count == 1 ? "" : "s")" }
        if case .array(let messages)? = r["messages"] { return "\(messages.count) messages" }
        return ""
    }

    public static func recordLines(_ r: TraceRecord) -> [String] {
        var records: [JSONValue] = []
        if case .array(let rs)? = r["records"] {
            records = rs
        } else if case .array(let ms)? = r["messages"] {
            for m in ms { if case .array(let rs)? = m["records"] { records += rs } }
        }
        return records.enumerated().flatMap { i, rec in
            description(rec).textLines(number: "\(i + 1)", indent: 17)
        }
    }

    /// A record's JSON (`NDEFRecordDescription/json`) back as a description, so the text
    /// lines say everything the JSON does.
    public static func description(_ rec: JSONValue) -> NDEFRecordDescription {
        var nested: [NDEFRecordDescription]? = nil
        if case .array(let rs)? = rec["records"] { nested = rs.map(description) }
        var warnings: [String] = []
        if case .array(let ws)? = rec["warnings"] { warnings = ws.compactMap(\.stringValue) }
        return NDEFRecordDescription(
            tnf: UInt8(clamping: rec["tnf"]?.intValue ?? 0), tnfName: rec["tnf_name"]?.stringValue ?? "",
            type: rec["type"]?.stringValue ?? "", identifierHex: rec["id"]?.stringValue ?? "",
            payloadHex: rec["payload"]?.stringValue ?? "", text: rec["text"]?.stringValue,
            language: rec["lang"]?.stringValue, encoding: rec["encoding"]?.stringValue, uri: rec["uri"]?.stringValue,
            mimeType: rec["mime_type"]?.stringValue, packageName: rec["package"]?.stringValue,
            title: rec["title"]?.stringValue, records: nested, warnings: warnings)
    }

    public static func spaced(_ hex: String) -> String {
        guard hex.allSatisfy(\.isHexDigit) else { return hex }  // e.g. "redacted:7 bytes"
        var out = ""
        for (i, c) in hex.enumerated() {
            if i > 0 && i % 2 == 0 { out += " " }
            out.append(c)
        }
        return out
    }
}
