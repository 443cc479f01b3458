public import NFCTrace

extension ModelFact {
    /// `{"value": …, "source": "documented|reported|assumed", "ref": "…"}`.
    public var json: JSONValue {
        let v: JSONValue =
            switch value {
            case .number(let n): n == n.rounded() && abs(n) < 1e15 ? .int(Int64(n)) : .double(n)
            case .text(let t): .string(t)
            case .flag(let b): .bool(b)
            }
        var o: JSONObject = ["value": v, "source": .string(source.rawValue), "ref": .string(reference)]
        if !covers.isEmpty { o["covers"] = .string(covers) }
        return .object(o)
    }
}

extension Array where Element == ModelFact {
    /// The trace header's model block: one entry per fact, keyed by ``ModelFact/key``, each
    /// with its value and source. A value of its own, so whichever header writer builds the
    /// header can carry it under `model`.
    public var traceHeaderBlock: JSONObject {
        var o: JSONObject = [:]
        for f in self { o[f.key] = f.json }
        return o
    }

    /// A table for `--help` and `conformance --thermal`: NAME, VALUE, SOURCE, WHERE FROM.
    public func table(indent: String = "  ") -> String {
        let keyWidth: Int = (map(\.key.count).max() ?? 0) + 2
        let widest: Int = (map(\.text.count).max() ?? 0) + 2
        let valueWidth: Int = Swift.min(28, widest)
        func pad(_ s: String, _ n: Int) -> String {
            s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count)
        }
        var out = indent
        out += pad("PARAMETER", keyWidth)
        out += pad("VALUE", valueWidth)
        out += pad("SOURCE", 12)
        out += "WHERE FROM\n"
        for f in self {
            var line = indent
            line += pad(f.key, keyWidth)
            line += pad(f.text, valueWidth)
            line += pad(f.source.rawValue, 12)
            line += f.reference
            out += line + "\n"
        }
        return out
    }

    /// A Markdown table for `docs/model.md`: every number and rule with its value, label,
    /// source and what the source actually covers (generated; a test keeps the file in step).
    public var markdownTable: String {
        func cell(_ s: String) -> String {
            s.split(separator: "|", omittingEmptySubsequences: false).joined(separator: "\\|")
        }
        var out = "| parameter | value | label | source | what the source covers |\n|---|---|---|---|---|\n"
        for f in self {
            out +=
                "| `\(f.key)` | \(cell(f.text)) | \(f.source.rawValue) | \(cell(f.reference)) | \(cell(f.covers.isEmpty ? "—" : f.covers)) |\n"
        }
        return out
    }
}
