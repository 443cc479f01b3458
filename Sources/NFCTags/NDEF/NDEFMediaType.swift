/// The TYPE of a TNF `media` record: a media type as RFC 2046 names it (NDEF 1.0 §3.2.6),
/// in the grammar of RFC 2045 §5.1:
///
///     content   := type "/" subtype *(";" parameter)
///     parameter := attribute "=" value
///     value     := token / quoted-string
///     token     := 1*<any US-ASCII CHAR except SPACE, CTLs, or tspecials>
///     tspecials := ( ) < > @ , ; : \ " / [ ] ? =
///
/// Spaces and tabs may stand around `;` and `=` (RFC 822 §3.1.4, which RFC 2045 builds on).
/// Type, subtype and parameter names compare case-insensitively (RFC 2045 §5.1); values are
/// kept as written (a quoted string unquoted).
public struct NDEFMediaType: Sendable, Hashable, CustomStringConvertible {
    public struct Parameter: Sendable, Hashable {
        /// The attribute, lower-cased (`charset`).
        public var name: String
        /// The value, a quoted string's quotes and backslashes removed (`utf-8`).
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The top-level type, lower-cased (`text`).
    public let type: String
    /// The subtype, lower-cased (`plain`).
    public let subtype: String
    public let parameters: [Parameter]

    /// `type/subtype` without parameters, lower-cased: what Android's
    /// `Intent.normalizeMimeType` keeps (`text/plain; charset=utf-8` → `text/plain`).
    public var essence: String { "\(type)/\(subtype)" }

    /// The canonical form: `type/subtype; name=value…` (values quoted when they need it).
    public var description: String {
        parameters.reduce(essence) { s, p in
            let plain = !p.value.isEmpty && p.value.unicodeScalars.allSatisfy { Self.isTokenCharacter($0.value) }
            let value =
                plain
                ? p.value
                : "\""
                    + p.value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                    + "\""
            return s + "; \(p.name)=\(value)"
        }
    }

    /// Parses a media type.
    /// - Throws: ``NDEFError`` `.invalidMediaType` whose offset is the first byte that breaks
    ///   the grammar and whose message says what was expected there.
    public init(_ text: String) throws(NDEFError) {
        try self.init(bytes: Array(text.utf8))
    }

    /// Parses a record's TYPE field (bytes, so a non-ASCII byte is reported where it is).
    public init(bytes: [UInt8]) throws(NDEFError) {
        var i = 0
        func fail(_ what: String) -> NDEFError {
            NDEFError(.invalidMediaType, offset: i, message: "media type (RFC 2045 §5.1): \(what) at byte \(i)")
        }
        func token() -> String? {
            let start = i
            while i < bytes.count, Self.isTokenCharacter(UInt32(bytes[i])) { i += 1 }
            return i > start ? String(decoding: bytes[start..<i], as: UTF8.self) : nil
        }
        func skipSpace() { while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 { i += 1 } }

        guard !bytes.isEmpty else { throw fail("empty, expected type/subtype") }
        guard let type = token() else { throw fail("expected the type, a token") }
        guard i < bytes.count, bytes[i] == 0x2F else { throw fail("expected '/' after the type") }
        i += 1
        guard let subtype = token() else { throw fail("expected the subtype, a token") }
        var parameters: [Parameter] = []
        skipSpace()
        while i < bytes.count {
            guard bytes[i] == 0x3B else { throw fail("expected ';' before a parameter or the end") }
            i += 1
            skipSpace()
            guard let name = token() else { throw fail("expected a parameter name, a token") }
            skipSpace()
            guard i < bytes.count, bytes[i] == 0x3D else { throw fail("expected '=' after the parameter name") }
            i += 1
            skipSpace()
            let value: String
            if i < bytes.count, bytes[i] == 0x22 {  // quoted-string (RFC 822 §3.3)
                i += 1
                var unquoted: [UInt8] = []
                while true {
                    guard i < bytes.count else { throw fail("unterminated quoted string") }
                    let b = bytes[i]
                    if b == 0x22 { break }
                    if b == 0x5C {
                        i += 1
                        guard i < bytes.count, bytes[i] < 0x80 else {
                            throw fail("expected an ASCII character after '\\'")
                        }
                    } else {
                        guard b == 0x09 || (0x20...0x7E).contains(b) else {
                            throw fail("byte \(String(b, radix: 16, uppercase: true)) inside a quoted string")
                        }
                    }
                    unquoted.append(bytes[i])
                    i += 1
                }
                i += 1
                value = String(decoding: unquoted, as: UTF8.self)
            } else {
                guard let t = token() else { throw fail("expected a parameter value, a token or a quoted string") }
                value = t
            }
            parameters.append(Parameter(name: name.lowercased(), value: value))
            skipSpace()
        }
        self.type = type.lowercased()
        self.subtype = subtype.lowercased()
        self.parameters = parameters
    }

    /// Printable US-ASCII but SPACE and tspecials (RFC 2045 §5.1).
    static func isTokenCharacter(_ c: UInt32) -> Bool {
        guard c > 0x20, c < 0x7F else { return false }
        return !"()<>@,;:\\\"/[]?=".unicodeScalars.contains { $0.value == c }
    }
}
