public import NFCTags

extension NDEFRecordDescription {
    /// The record as the trace, `--json` and `tag show --json` write it: `tnf` (number on
    /// the wire), `tnf_name` (Core NFC case name), `type`, `id` (hex, when present),
    /// `payload` (hex), then what was decoded: `text`, `lang`, `encoding`, `uri`,
    /// `mime_type`, `package`, `title`, nested `records`, and `warnings`.
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
