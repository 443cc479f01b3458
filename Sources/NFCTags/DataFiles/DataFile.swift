public import Foundation

/// The one way nfcbench parses its JSON data files (tag files, scenarios, conformance
/// scenarios, reader profiles): given the bytes (read by `NFCFiles`' `DataFile.read(_:)`;
/// this module does no file I/O), check the syntax with `JSONSerialization`
/// (whose errors carry a byte offset, turned here into line and column), refuse a key
/// given twice in one object, then decode a `Decodable` type with Foundation's
/// `JSONDecoder` and turn its `DecodingError` into a ``DataFileError`` naming the field's
/// path. On Linux `JSONDecoder` reports no position for a syntax error, hence the first pass.
///
/// Accepted JSON is RFC 8259 as Foundation parses it: a UTF-8 byte order mark and a
/// trailing comma before `]` or `}` are tolerated; comments, `NaN` and single quotes are not.
public enum DataFile {
    /// Decodes `data`: syntax first (line and column), then `T` with `JSONDecoder` (the
    /// field path). `file` is put in every error.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data, file: String?) throws(DataFileError) -> T {
        try decode(type, from: data, tree: try parse(data, file: file), file: file)
    }

    /// Decodes `data` already checked by ``parse(_:file:)``, which returned `tree`.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data, tree: Any, file: String?)
        throws(DataFileError) -> T
    {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch let error as DecodingError {
            throw DataFileError(error, tree: tree, file: file)
        } catch let error as DataFileError {
            throw file.map { error.inFile($0) } ?? error
        } catch {
            throw DataFileError(.invalidValue, file: file, "\(error)")
        }
    }

    /// The JSON value tree of `data` (`JSONSerialization`), or a ``DataFileError/Code/syntax``
    /// error with the line and column of the fault; a key given twice in one object is a
    /// syntax error too (JSONSerialization keeps the last, JSONDecoder the first).
    public static func parse(_ data: Data, file: String?) throws(DataFileError) -> Any {
        let tree: Any
        // JSONSerialization skips a UTF-8 byte order mark and counts its offsets after it.
        let body = data.starts(with: [0xEF, 0xBB, 0xBF]) ? Data(data.dropFirst(3)) : data
        do {
            tree = try JSONSerialization.jsonObject(with: body)
        } catch {
            throw syntaxError(error, data: body, file: file)
        }
        try checkDuplicateKeys(body, file: file)
        return tree
    }

    // MARK: Syntax positions

    /// Line and column (1-based; columns count characters) of UTF-8 byte `offset`.
    public static func position(ofByte offset: Int, in data: Data) -> (line: Int, column: Int) {
        let bytes = [UInt8](data.prefix(max(0, offset)))
        let lineStart = (bytes.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 }) ?? 0
        let line = 1 + bytes.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        return (line, 1 + String(decoding: bytes[lineStart...], as: UTF8.self).count)
    }

    /// `JSONSerialization`'s error as ours. On Linux its message says "around character N"
    /// (a 0-based UTF-8 byte offset, checked on this platform) or "Unexpected end of file";
    /// a truncated file is placed just after its last non-blank character.
    static func syntaxError(_ error: any Error, data: Data, file: String?) -> DataFileError {
        let text = ((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String) ?? "\(error)"
        var offset: Int? = nil
        var reason = text
        if text.hasPrefix("Unexpected end of file during JSON parse") {
            let blank: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
            offset =
                (data.lastIndex { !blank.contains($0) }.map { data.distance(from: data.startIndex, to: $0) + 1 }) ?? 0
            reason = "unexpected end of file: the JSON is cut short"
        } else if let r = text.range(of: #" (around|starting from) character [0-9]+"#, options: .regularExpression) {
            offset = Int(text[r].split(separator: " ").last ?? "")
            reason = "not valid JSON: " + lowerFirst(String(text[..<r.lowerBound]) + String(text[r.upperBound...]))
        } else if let r = text.range(of: #"^Number \S+ is not representable"#, options: .regularExpression) {
            // "Number 1e400 is not representable in Swift." has no position: find the literal.
            let literal = text[r].split(separator: " ")[1]
            if let at = String(decoding: data, as: UTF8.self).range(of: literal) {
                offset = String(decoding: data, as: UTF8.self)[..<at.lowerBound].utf8.count
            }
            reason = "not valid JSON: " + lowerFirst(text)
        } else {
            reason = "not valid JSON: " + lowerFirst(text)
        }
        if reason.hasSuffix(".") { reason.removeLast() }
        guard let offset else { return DataFileError(.syntax, file: file, reason) }
        let (line, column) = position(ofByte: offset, in: data)
        return DataFileError(.syntax, file: file, line: line, column: column, reason)
    }

    private static func lowerFirst(_ s: String) -> String { s.prefix(1).lowercased() + s.dropFirst() }

    /// Refuses a key given twice in one object, at the second one. `data` is valid JSON
    /// (checked before); keys are compared as written, escapes included.
    static func checkDuplicateKeys(_ data: Data, file: String?) throws(DataFileError) {
        let b = [UInt8](data)
        // One entry per open bracket: nil for an array, the keys seen so far for an object.
        var stack: [[String: Int]?] = []
        var expectKey = false
        var i = 0
        while i < b.count {
            switch b[i] {
            case UInt8(ascii: "{"):
                stack.append([:])
                expectKey = true
            case UInt8(ascii: "["):
                stack.append(nil)
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                stack.removeLast()
                expectKey = false
            case UInt8(ascii: ","):
                expectKey = stack.last.map { $0 != nil } ?? false
            case UInt8(ascii: "\""):
                let start = i
                i += 1
                while i < b.count && b[i] != UInt8(ascii: "\"") { i += b[i] == UInt8(ascii: "\\") ? 2 : 1 }
                if expectKey, var keys = stack.last ?? nil {
                    let key = String(decoding: b[(start + 1)..<i], as: UTF8.self)
                    if let first = keys[key] {
                        let (line, column) = position(ofByte: start, in: data)
                        let firstLine = position(ofByte: first, in: data).line
                        throw DataFileError(
                            .syntax, file: file, line: line, column: column,
                            "key \"\(key)\" is given twice in one object (first on line \(firstLine))")
                    }
                    keys[key] = start
                    stack[stack.count - 1] = keys
                    expectKey = false
                }
            default:
                break
            }
            i += 1
        }
    }
}

// MARK: DecodingError → DataFileError

extension DataFileError {
    /// `error` from `JSONDecoder` as ours: the field path from its coding path, and what was
    /// found there read from `tree` (the same file through `JSONSerialization`).
    public init(_ error: DecodingError, tree: Any?, file: String?) {
        switch error {
        case .keyNotFound(let key, let context):
            self.init(.missingField, file: file, field: Self.path(context.codingPath + [key]), "missing (required)")
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            let found = Self.describe(Self.value(at: context.codingPath, in: tree))
            self.init(
                .invalidValue, file: file, field: Self.path(context.codingPath),
                "expected \(Self.describe(type)), found \(found)")
        case .dataCorrupted(let context):
            let own = context.underlyingError as? DataFileError
            self.init(
                own?.code ?? .invalidValue, file: file, field: Self.path(context.codingPath),
                own?.reason ?? context.debugDescription)
        @unknown default:
            self.init(.invalidValue, file: file, "\(error)")
        }
        if field == "" { field = nil }
    }

    /// `steps[2].at_ms` for a coding path (array positions are keys with an integer value).
    public static func path(_ codingPath: [any CodingKey]) -> String {
        var s = ""
        for key in codingPath {
            if let i = key.intValue {
                s += "[\(i)]"
            } else {
                s += (s.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return s
    }

    static func value(at codingPath: [any CodingKey], in tree: Any?) -> Any? {
        var node = tree
        for key in codingPath {
            if let i = key.intValue, let list = node as? [Any] {
                node = i < list.count ? list[i] : nil
            } else {
                node = (node as? [String: Any])?[key.stringValue]
            }
        }
        return node
    }

    static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "true or false"
        case is Double.Type, is Float.Type, is Int.Type, is Int64.Type, is UInt8.Type: return "a number"
        default: return String(describing: type).hasPrefix("Array<") ? "a list" : "an object"
        }
    }

    /// What a person sees in the file: `true`, `1.5`, `"abc"`, `a list`, `null`.
    static func describe(_ value: Any?) -> String {
        switch value {
        case nil: return "nothing"
        case is NSNull: return "null"
        case let n as NSNumber where String(cString: n.objCType) == "c": return n.boolValue ? "true" : "false"
        case let n as NSNumber: return "\(n)"
        case let s as String: return "\"\(s.count > 40 ? s.prefix(40) + "…" : s)\""
        case is [Any]: return "a list"
        default: return "an object"
        }
    }
}
