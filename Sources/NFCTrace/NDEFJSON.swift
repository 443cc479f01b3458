public import NFCTags

extension NDEFRecordDescription {
    /// The record as the trace, `--json` and `tag show --json` write it: `tnf` (number on
    /// the wire), `tnf_name` (Core NFC case name), `type`, `id` (hex, when present),
    /// `payload` (hex), then what was decoded: `text`, `lang`, `encoding`, `uri`,
    /// `mime_type`, `package`, `title`; for a Smart Poster also `titles` (`text`, `lang`),
    /// `action` (`do`, `save`, `edit` or `reserved`) with `action_code`, `size`, `icons`
    /// (`mime_type`, `length` in bytes, `record`: 0-based index in `records`); nested `records`, and
    /// `warnings`.
    public var json: JSONObject {
        var o: JSONObject = [
            "tnf": .int(Int64(tnf)), "tnf_name": .string(tnfName), "type": .string(type),
        ]
        if !identifierHex.isEmpty { o["id"] = .string(identifierHex) }
        o["payload"] = .string(payloadHex)
        if let text { o["text"] = .string(text) }
        if let language { o["lang"] = .string(language) }
        if let encoding { o["encoding"] = .string(encoding) }
        if let uri { o["uri"] = .string(uri) }
        if let mimeType { o["mime_type"] = .string(mimeType) }
        if let packageName { o["package"] = .string(packageName) }
        if let title { o["title"] = .string(title) }
        if let titles {
            o["titles"] = .array(titles.map { .object(["text": .string($0.text), "lang": .string($0.language)]) })
        }
        if let action { o["action"] = .string(action) }
        if let actionCode { o["action_code"] = .int(Int64(actionCode)) }
        if let size { o["size"] = .int(Int64(size)) }
        if let icons {
            o["icons"] = .array(
                icons.map {
                    .object([
                        "mime_type": .string($0.mimeType), "length": .int(Int64($0.payloadLength)),
                        "record": .int(Int64($0.recordIndex)),
                    ])
                })
        }
        if let records { o["records"] = .array(records.map { .object($0.json) }) }
        if !warnings.isEmpty { o["warnings"] = .array(warnings.map { .string($0) }) }
        return o
    }
}

extension NFCNDEFMessage {
    /// Every record as ``NDEFRecordDescription/json``.
    public var recordsJSON: JSONValue { .array(descriptions.map { .object($0.json) }) }
}

extension JSONObject {
    /// Appends `other`'s entries (replacing equal keys in place).
    public mutating func merge(_ other: JSONObject) {
        for e in other.entries { self[e.key] = e.value }
    }
}
