import FoundationEssentials
import NFCTags

/// The `--ndef SPEC` syntax: one record, or a file of NDEF message bytes.
///
/// - `uri:URI`: an NFC Forum URI record (RTD-URI 1.0; the prefix byte is chosen for you).
/// - `text:TEXT`: a Text record (RTD-Text 1.0, UTF-8), language `en`; TEXT is everything after
///   the first `:`, colons included (`text:OK: done` is the text "OK: done").
/// - `text@LANG:TEXT`: the same with language LANG (BCP 47: 2–3 letters, optional subtags of
///   up to 8 letters or digits, `de`, `pt-BR`).
/// - `mime:TYPE:DATA`: a media record; TYPE is an RFC 2045 media type, parameters allowed
///   (`mime:text/plain; charset=utf-8:hi`), and ends at the first `:` outside a quoted
///   string; DATA is UTF-8, or `@FILE` for a file's bytes.
/// - `@FILE`: FILE holds the NDEF message bytes (parsed before anything is written).
enum NDEFSpec {
    /// The lines `write --help` shows, indented for its OPTIONS block.
    static let help = """
        uri:https://example.com      NFC Forum URI record (prefix byte chosen for you)
        text:Hello, world            Text record, language en: everything after 'text:'
                                     is the text, colons too (text:OK: done)
        text@de:Hallo                Text record, language de (2-3 letters, optional
                                     -REGION: text@pt-BR:Olá)
        mime:TYPE:DATA               media record; TYPE per RFC 2045, parameters allowed:
                                     mime:text/plain; charset=utf-8:hi
        mime:TYPE:@FILE              media record whose payload is FILE's bytes
        @FILE                        FILE holds raw NDEF message bytes (checked before writing)
        """

    /// The message SPEC describes. Throws `CLIError.data` (exit 65) saying what is wrong.
    static func parse(_ spec: String) throws(CLIError) -> [UInt8] {
        if spec.hasPrefix("@") {
            let path = String(spec.dropFirst())
            guard let data = FileManager.default.contents(atPath: path) else { throw .data("cannot read \(path)") }
            let bytes = [UInt8](data)
            do { _ = try NFCNDEFMessage(bytes: bytes) } catch {
                throw .data("\(path) is not an NDEF message: \(error)")
            }
            return bytes
        }
        guard let colon = spec.firstIndex(of: ":") else {
            throw .data("NDEF spec '\(spec)' needs a kind: uri:…, text:…, text@LANG:…, mime:TYPE:…, or @FILE")
        }
        let kind = spec[..<colon]
        let rest = String(spec[spec.index(after: colon)...])
        let payload: NFCNDEFPayload?
        switch kind {
        case "uri":
            guard !rest.isEmpty else { throw .data("uri: needs a URI") }
            payload = NFCNDEFPayload.wellKnownTypeURIPayload(string: rest)
        case "text":
            payload = NFCNDEFPayload.wellKnownTypeTextPayload(string: rest, locale: Locale(identifier: "en"))
        case _ where kind.hasPrefix("text@"):
            let language = kind.dropFirst("text@".count)
            guard isLanguageTag(language) else {
                throw .data("text@\(language): is not a language tag (2-3 letters, optional -REGION: text@de:…)")
            }
            payload = NFCNDEFPayload.wellKnownTypeTextPayload(
                string: rest, locale: Locale(identifier: String(language)))
        case "mime":
            let (type, value) = try mediaTypeAndData(rest)
            var body = Data(value.utf8)
            if value.hasPrefix("@") {
                guard let d = FileManager.default.contents(atPath: String(value.dropFirst())) else {
                    throw .data("cannot read \(value.dropFirst())")
                }
                body = d
            }
            payload = NFCNDEFPayload(format: .media, type: Data(type.utf8), identifier: Data(), payload: body)
        default:
            throw .data("unknown NDEF spec kind '\(kind)': use uri:, text:, text@LANG:, mime: or @FILE")
        }
        guard let payload else { throw .data("cannot make a record of '\(spec)'") }
        return NFCNDEFMessage(records: [payload]).bytes
    }

    /// `TYPE:DATA` split at the first `:` outside a quoted string; TYPE checked against
    /// RFC 2045 §5.1 (the grammar `tag show` and sessions read media records with).
    static func mediaTypeAndData(_ rest: String) throws(CLIError) -> (String, String) {
        var quoted = false
        var escaped = false
        var split: String.Index?
        for i in rest.indices {
            let c = rest[i]
            if escaped {
                escaped = false
            } else if quoted && c == "\\" {
                escaped = true
            } else if c == "\"" {
                quoted.toggle()
            } else if c == ":" && !quoted {
                split = i
                break
            }
        }
        guard let split else { throw .data("mime: needs TYPE:DATA with a type like text/plain") }
        let type = String(rest[..<split])
        do {
            _ = try NDEFMediaType(type)
        } catch {
            throw .data("mime: '\(type)' is not a media type: \(error)")
        }
        return (type, String(rest[rest.index(after: split)...]))
    }

    static func isLanguageTag(_ s: Substring) -> Bool {
        let parts = s.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, (2...3).contains(first.count), first.allSatisfy({ $0.isASCII && $0.isLetter })
        else { return false }
        return parts.dropFirst().allSatisfy {
            !$0.isEmpty && $0.count <= 8 && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        }
    }
}
