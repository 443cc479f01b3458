import FoundationEssentials

extension NDEFRecordDescription {
    /// A description from its parts (the fields the JSON form carries), for text output of
    /// records read back from a trace.
    public init(
        tnf: UInt8, tnfName: String, type: String, identifierHex: String = "", payloadHex: String,
        text: String? = nil, language: String? = nil, encoding: String? = nil, uri: String? = nil,
        mimeType: String? = nil, packageName: String? = nil, title: String? = nil,
        records: [NDEFRecordDescription]? = nil, warnings: [String] = []
    ) {
        self.tnf = tnf
        self.tnfName = tnfName
        self.type = type
        self.typeHex = Array(type.utf8).hexString()
        self.identifierHex = identifierHex
        self.payloadHex = payloadHex
        self.text = text
        self.language = language
        self.encoding = encoding
        self.uri = uri
        self.mimeType = mimeType
        self.packageName = packageName
        self.title = title
        self.records = records
        self.warnings = warnings
    }

    /// The record for people, as `tag show` and the session print it: everything the JSON
    /// form says (decoded body, ID, title, nested records, every warning), with text bodies
    /// (Text records, `text/*` and JSON/XML media records in UTF-8 or US-ASCII) decoded and
    /// wrapped at `width` columns, and other payloads longer than 16 bytes as hex, 16 bytes a line.
    /// - Parameters:
    ///   - number: the record's number (`1`, or `1.2` for a Smart Poster's second inner record).
    ///   - indent: spaces before every line.
    public func textLines(number: String, indent: Int = 2, width: Int = 100) -> [String] {
        let pad = String(repeating: " ", count: indent)
        let inner = pad + "  "
        var head = "\(pad)record \(number): \(tnfName) \(type)"
        var body: [String] = []
        let payload = [UInt8](hex: payloadHex)
        if let uri {
            head += ": \(uri)"
        } else if let text {
            head += " (\(language ?? "?")\(encoding.map { $0 == "UTF-8" ? "" : ", \($0)" } ?? "")):"
            if !text.contains(where: \.isNewline), head.count + text.count + 3 <= width {
                head += " \"\(text)\""  // a short text stays on the record's line
            } else {
                body = Self.wrap(text, width: width - inner.count).map { inner + $0 }
            }
        } else if let packageName {
            head += ": \(packageName)"
        } else if let payload, let decoded = mediaText(payload) {
            head += " (\(payload.count) bytes, text):"
            body = Self.wrap(decoded, width: width - inner.count).map { inner + $0 }
        } else if let payload {
            if payload.count <= 16 {
                head += ": " + (payload.isEmpty ? "(no payload)" : payload.hexString(separator: " "))
            } else {
                head += " (\(payload.count) bytes):"
                body = stride(from: 0, to: payload.count, by: 16).map {
                    inner + Array(payload[$0..<min($0 + 16, payload.count)]).hexString(separator: " ")
                }
            }
        } else {
            head += ": \(payloadHex)"  // e.g. "redacted:7 bytes"
        }
        var lines = [head] + body
        if !identifierHex.isEmpty { lines.append("\(inner)id: \(identifierHex)") }
        if let mimeType, uri != nil || tnf == 1 { lines.append("\(inner)type: \(mimeType)") }
        if let title { lines.append("\(inner)title: \"\(title)\"" + (language.map { " (\($0))" } ?? "")) }
        for w in warnings { lines.append("\(inner)warning: \(w)") }
        for (i, r) in (records ?? []).enumerated() {
            lines += r.textLines(number: "\(number).\(i + 1)", indent: indent + 2, width: width)
        }
        return lines
    }

    /// A media record's payload as text, when its type says text and its bytes agree.
    private func mediaText(_ payload: [UInt8]) -> String? {
        guard tnf == 2, let mimeType, let m = try? NDEFMediaType(mimeType) else { return nil }
        let textual =
            m.type == "text" || ["application/json", "application/xml"].contains(m.essence)
            || m.subtype.hasSuffix("+json") || m.subtype.hasSuffix("+xml")
        let charset = m.parameters.first { $0.name == "charset" }?.value.lowercased()
        guard textual, charset == nil || ["utf-8", "utf8", "us-ascii"].contains(charset ?? "") else { return nil }
        guard let s = String(validating: payload, as: UTF8.self),
            !s.unicodeScalars.contains(where: { $0.value < 0x20 && !"\n\r\t".unicodeScalars.contains($0) })
        else { return nil }
        return s
    }

    /// `text` cut into lines of at most `width` characters, at spaces where it can, keeping
    /// its own line breaks; an empty text is one empty line shown as `""`.
    static func wrap(_ text: String, width: Int) -> [String] {
        guard !text.isEmpty else { return ["\"\""] }
        let width = max(width, 20)
        var out: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = Substring(paragraph.hasSuffix("\r") ? paragraph.dropLast() : paragraph)
            if line.isEmpty {
                out.append("")
                continue
            }
            while line.count > width {
                let cut = line.index(line.startIndex, offsetBy: width)
                let space = line[..<cut].lastIndex(of: " ")
                let end = space.map { $0 > line.startIndex ? $0 : cut } ?? cut
                out.append(String(line[..<end]))
                line = line[end...].drop { $0 == " " }
            }
            out.append(String(line))
        }
        if out.last == "" && out.count > 1 { out.removeLast() }  // a final newline
        return out
    }
}
