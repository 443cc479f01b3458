import Foundation

/// A JSON value whose objects keep their keys in insertion order, so every JSON Lines
/// record (`--json` output and the trace) reads `t_us`, `event`, … in a fixed order.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// One compact line of JSON (no newline).
    public var serialized: String {
        var out = ""
        write(to: &out)
        return out
    }

    func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if d.isFinite { out += String(d) } else { out += "null" }
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let a):
            out += "["
            for (i, v) in a.enumerated() {
                if i > 0 { out += "," }
                v.write(to: &out)
            }
            out += "]"
        case .object(let o): o.write(to: &out)
        }
    }

    /// `s` as a JSON string (RFC 8259 §7): `"` and `\` escaped, control characters as `\n`,
    /// `\r`, `\t` or `\u00XX`. Runs without an escape are copied whole: the bytes that need
    /// one are ASCII, which never occurs inside a multi-byte UTF-8 sequence.
    static func writeString(_ s: String, to out: inout String) {
        out += "\""
        guard s.utf8.contains(where: { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 }) else {
            out += s
            out += "\""
            return
        }
        var s = s
        s.withUTF8 { bytes in
            var run = 0
            for i in bytes.indices {
                let b = bytes[i]
                guard b == 0x22 || b == 0x5C || b < 0x20 else { continue }
                if run < i { out += String(decoding: UnsafeBufferPointer(rebasing: bytes[run..<i]), as: UTF8.self) }
                switch b {
                case 0x22: out += "\\\""
                case 0x5C: out += "\\\\"
                case 0x0A: out += "\\n"
                case 0x0D: out += "\\r"
                case 0x09: out += "\\t"
                default: out += "\\u00" + String(b >> 4, radix: 16) + String(b & 0xF, radix: 16)
                }
                run = i + 1
            }
            if run < bytes.count {
                out += String(decoding: UnsafeBufferPointer(rebasing: bytes[run...]), as: UTF8.self)
            }
        }
        out += "\""
    }

    /// Parses one JSON text (for reading traces and tests); numbers without a fraction or
    /// exponent become `.int`. Throws on anything that is not JSON.
    public init(parsing text: String) throws {
        let any = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
        self = try JSONValue(foundation: any)
    }

    private init(foundation any: Any) throws {
        switch any {
        case is NSNull: self = .null
        case let n as NSNumber:
            let objCType = String(cString: n.objCType)
            if objCType == "c" || objCType == "B" {
                self = .bool(n.boolValue)
            } else if objCType != "d" && objCType != "f" {
                self = .int(n.int64Value)
            } else {
                self = .double(n.doubleValue)
            }
        case let s as String: self = .string(s)
        case let a as [Any]: self = .array(try a.map { try JSONValue(foundation: $0) })
        case let d as [String: Any]:
            var o = JSONObject()
            for key in d.keys.sorted() { o[key] = try JSONValue(foundation: d[key]!) }
            self = .object(o)
        default:
            throw CocoaError(.coderReadCorrupt)
        }
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }
    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var intValue: Int64? { if case .int(let i) = self { i } else { nil } }
}

/// An ordered JSON object.
public struct JSONObject: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    public private(set) var entries: [(key: String, value: JSONValue)] = []

    public init() {}
    /// An object of `entries` as given (keys assumed unique), for records rebuilt in a new order.
    init(entries: [(key: String, value: JSONValue)]) { self.entries = entries }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        for (k, v) in elements { self[k] = v }
    }

    /// Reads a key; setting replaces in place or appends; setting `nil` removes.
    public subscript(key: String) -> JSONValue? {
        get { entries.first { $0.key == key }?.value }
        set {
            if let i = entries.firstIndex(where: { $0.key == key }) {
                if let newValue { entries[i].value = newValue } else { entries.remove(at: i) }
            } else if let newValue {
                entries.append((key, newValue))
            }
        }
    }

    public var keys: [String] { entries.map(\.key) }

    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        a.entries.count == b.entries.count
            && zip(a.entries, b.entries).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    func write(to out: inout String) {
        out += "{"
        for (i, e) in entries.enumerated() {
            if i > 0 { out += "," }
            JSONValue.writeString(e.key, to: &out)
            out += ":"
            e.value.write(to: &out)
        }
        out += "}"
    }

    public var serialized: String { JSONValue.object(self).serialized }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue {
    /// Parses one JSON text keeping every object's keys in their written order (so a trace
    /// line read and written again is the same bytes); numbers without a fraction or exponent
    /// become `.int`, as ``init(parsing:)``. Throws on anything ``init(parsing:)`` rejects.
    public init(parsingOrdered text: String) throws {
        _ = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
        var p = OrderedJSONParser(bytes: Array(text.utf8))
        p.skipSpace()
        self = try p.value()
    }
}

/// The order-keeping reader behind ``JSONValue/init(parsingOrdered:)``, run on text that
/// Foundation has already accepted as JSON.
private struct OrderedJSONParser {
    let bytes: [UInt8]
    var i = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    mutating func value() throws -> JSONValue {
        guard i < bytes.count else { throw CocoaError(.coderReadCorrupt) }
        switch bytes[i] {
        case UInt8(ascii: "{"):
            i += 1
            var o = JSONObject()
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
                i += 1
                return .object(o)
            }
            while true {
                skipSpace()
                let key = try string()
                skipSpace()
                i += 1  // :
                skipSpace()
                o[key] = try value()
                skipSpace()
                guard i < bytes.count else { throw CocoaError(.coderReadCorrupt) }
                let c = bytes[i]
                i += 1
                if c == UInt8(ascii: "}") { return .object(o) }
            }
        case UInt8(ascii: "["):
            i += 1
            var a: [JSONValue] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
                i += 1
                return .array(a)
            }
            while true {
                skipSpace()
                a.append(try value())
                skipSpace()
                guard i < bytes.count else { throw CocoaError(.coderReadCorrupt) }
                let c = bytes[i]
                i += 1
                if c == UInt8(ascii: "]") { return .array(a) }
            }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            i += 4
            return .bool(true)
        case UInt8(ascii: "f"):
            i += 5
            return .bool(false)
        case UInt8(ascii: "n"):
            i += 4
            return .null
        default: return try number()
        }
    }

    mutating func number() throws -> JSONValue {
        let start = i
        var fraction = false
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") {
                fraction = true
            } else if !(c == UInt8(ascii: "-") || c == UInt8(ascii: "+") || (c >= 0x30 && c <= 0x39)) {
                break
            }
            i += 1
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        if !fraction, let n = Int64(text) { return .int(n) }
        guard let d = Double(text) else { throw CocoaError(.coderReadCorrupt) }
        return .double(d)
    }

    mutating func string() throws -> String {
        guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw CocoaError(.coderReadCorrupt) }
        i += 1
        var out: [UInt8] = []
        while i < bytes.count {
            let c = bytes[i]
            i += 1
            if c == UInt8(ascii: "\"") { return String(decoding: out, as: UTF8.self) }
            guard c == UInt8(ascii: "\\") else {
                out.append(c)
                continue
            }
            guard i < bytes.count else { break }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if scalar >= 0xD800 && scalar < 0xDC00, i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"),
                    bytes[i + 1] == UInt8(ascii: "u")
                {
                    i += 2
                    let low = try hex4()
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                out.append(contentsOf: Array(String(Unicode.Scalar(scalar).map(Character.init) ?? "\u{FFFD}").utf8))
            default: out.append(e)
            }
        }
        throw CocoaError(.coderReadCorrupt)
    }

    mutating func hex4() throws -> UInt32 {
        guard i + 4 <= bytes.count, let v = UInt32(String(decoding: bytes[i..<(i + 4)], as: UTF8.self), radix: 16)
        else { throw CocoaError(.coderReadCorrupt) }
        i += 4
        return v
    }
}
