import Foundation
import NFCFiles
public import NFCTags

/// A spec that makes no record: what is wrong with it (the CLI's exit 65).
public struct NDEFSpecError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The record specs of `nfcbench write --ndef SPEC` (repeated: one record each, in order), and
/// `--message FILE` (the JSON `tag show --json` prints), as a library call.
///
/// - `uri:URI`: an NFC Forum URI record (RTD-URI 1.0; the prefix byte is chosen for you).
/// - `text:TEXT`: a Text record (RTD-Text 1.0, UTF-8), language `en`; TEXT is everything after
///   the first `:`, colons included (`text:OK: done` is the text "OK: done").
/// - `text@LANG:TEXT`: the same with language LANG (BCP 47: 2–3 letters, optional subtags of
///   up to 8 letters or digits, `de`, `pt-BR`).
/// - `mime:TYPE:DATA`: a media record; TYPE is an RFC 2045 media type, parameters allowed
///   (`mime:text/plain; charset=utf-8:hi`), and ends at the first `:` outside a quoted
///   string; DATA is UTF-8, or `@FILE` for a file's bytes.
/// - `aar:PACKAGE`: an Android Application Record (NFC Forum external type `android.com:pkg`,
///   payload the package name; Android's NdefRecord.createApplicationRecord).
/// - `sp:URI` and `sp:URI|TITLE` (`sp@LANG:URI|TITLE`): a Smart Poster (NFC Forum SPR 1.1):
///   its URI record and, with a title, a Text record (language `en`, or LANG), nested. `|` ends
///   the URI: RFC 3986 allows it in no URI unencoded.
/// - `@FILE`: FILE holds NDEF message bytes (checked); their records join the message in order.
public enum NDEFMessageSpec {
    /// The lines `write --help` shows.
    public static let help = """
        uri:https://example.com      NFC Forum URI record (prefix byte chosen for you)
        text:Hello, world            Text record, language en: everything after 'text:'
                                     is the text, colons too (text:OK: done)
        text@de:Hallo                Text record, language de (2-3 letters, optional
                                     -REGION: text@pt-BR:Olá)
        mime:TYPE:DATA               media record; TYPE per RFC 2045, parameters allowed:
                                     mime:text/plain; charset=utf-8:hi
        mime:TYPE:@FILE              media record whose payload is FILE's bytes
        aar:com.example.app          Android Application Record (android.com:pkg)
        sp:https://example.com|Title Smart Poster: URI record and a title (Text, en);
                                     sp@de:URI|Titel for another language, sp:URI alone
        @FILE                        FILE holds raw NDEF message bytes (checked before writing)
        """

    /// The records of one spec (several for `@FILE`).
    public static func records(_ spec: String) throws(NDEFSpecError) -> [NFCNDEFPayload] {
        if spec.hasPrefix("@") {
            let path = String(spec.dropFirst())
            let bytes: [UInt8]
            do { bytes = try InputFile.read(path) } catch {
                throw NDEFSpecError("cannot read \(path): \(error.reason)")
            }
            do { return try NFCNDEFMessage(bytes: bytes).records } catch {
                throw NDEFSpecError("\(path) is not an NDEF message: \(error)")
            }
        }
        guard let colon = spec.firstIndex(of: ":") else {
            throw NDEFSpecError(
                "NDEF spec '\(spec)' needs a kind: uri:…, text:…, text@LANG:…, mime:TYPE:…, aar:…, sp:…, or @FILE")
        }
        let kind = spec[..<colon]
        let rest = String(spec[spec.index(after: colon)...])
        let payload: NFCNDEFPayload?
        switch kind {
        case "uri":
            guard !rest.isEmpty else { throw NDEFSpecError("uri: needs a URI") }
            payload = NFCNDEFPayload.wellKnownTypeURIPayload(string: rest)
        case "text":
            payload = NFCNDEFPayload.wellKnownTypeTextPayload(string: rest, locale: Locale(identifier: "en"))
        case _ where kind.hasPrefix("text@"):
            let language = try languageTag(kind.dropFirst("text@".count), kind: "text")
            payload = NFCNDEFPayload.wellKnownTypeTextPayload(string: rest, locale: Locale(identifier: language))
        case "mime":
            let (type, value) = try mediaTypeAndData(rest)
            var body = Data(value.utf8)
            if value.hasPrefix("@") {
                do { body = Data(try InputFile.read(String(value.dropFirst()))) } catch {
                    throw NDEFSpecError("cannot read \(value.dropFirst()): \(error.reason)")
                }
            }
            payload = NFCNDEFPayload(format: .media, type: Data(type.utf8), identifier: Data(), payload: body)
        case "aar":
            guard !rest.isEmpty, rest.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._".contains($0)) })
            else { throw NDEFSpecError("aar: needs an Android package name such as com.example.app, not '\(rest)'") }
            payload = NFCNDEFPayload(
                format: .nfcExternal, type: Data("android.com:pkg".utf8), identifier: Data(), payload: Data(rest.utf8))
        case "sp":
            payload = try smartPoster(rest, language: "en")
        case _ where kind.hasPrefix("sp@"):
            payload = try smartPoster(rest, language: try languageTag(kind.dropFirst("sp@".count), kind: "sp"))
        default:
            throw NDEFSpecError(
                "unknown NDEF spec kind '\(kind)': use uri:, text:, text@LANG:, mime:, aar:, sp: or @FILE")
        }
        guard let payload else { throw NDEFSpecError("cannot make a record of '\(spec)'") }
        return [payload]
    }

    /// The message of `specs` in order: one record each (MB on the first, ME on the last).
    public static func message(_ specs: [String]) throws(NDEFSpecError) -> NFCNDEFMessage {
        var all: [NFCNDEFPayload] = []
        for s in specs { all += try records(s) }
        guard !all.isEmpty else { throw NDEFSpecError("no record: give --ndef SPEC or --message FILE") }
        return NFCNDEFMessage(records: all)
    }

    /// The bytes of `specs`' message: ``message(_:)``'s, except that one `@FILE` alone gives
    /// the file's bytes exactly as they are (chunked records stay chunked).
    public static func messageBytes(_ specs: [String]) throws(NDEFSpecError) -> [UInt8] {
        if specs.count == 1, specs[0].hasPrefix("@") {
            let path = String(specs[0].dropFirst())
            _ = try records(specs[0])
            do { return try InputFile.read(path) } catch { throw NDEFSpecError("cannot read \(path): \(error.reason)") }
        }
        return try message(specs).bytes
    }

    /// The message `tag show --json` (or `dump`'s file through `tag show`) describes: its
    /// `records`, each rebuilt from `tnf`, `type` (UTF-8), `id` (hex, optional) and `payload`
    /// (hex); a Smart Poster's nested records ride in its payload. Also a bare array of records.
    public static func message(json bytes: [UInt8], file: String) throws(NDEFSpecError) -> NFCNDEFMessage {
        let top: Any
        do { top = try JSONSerialization.jsonObject(with: Data(bytes)) } catch {
            throw NDEFSpecError("\(file) is not JSON: \(error.localizedDescription)")
        }
        guard let list = (top as? [String: Any])?["records"] ?? (top as? [Any]), let items = list as? [Any] else {
            throw NDEFSpecError("\(file): no \"records\" (the JSON 'nfcbench tag show --json' prints)")
        }
        var records: [NFCNDEFPayload] = []
        for (i, item) in items.enumerated() {
            guard let r = item as? [String: Any], let tnf = r["tnf"] as? Int,
                let format = NFCTypeNameFormat(rawValue: UInt8(clamping: tnf)), (0...7).contains(tnf)
            else { throw NDEFSpecError("\(file): records[\(i)]: needs \"tnf\" 0-7") }
            let type = (r["type"] as? String) ?? ""
            guard let payload = [UInt8](hex: (r["payload"] as? String) ?? "") else {
                throw NDEFSpecError("\(file): records[\(i)].payload: not hex")
            }
            guard let id = [UInt8](hex: (r["id"] as? String) ?? "") else {
                throw NDEFSpecError("\(file): records[\(i)].id: not hex")
            }
            records.append(
                NFCNDEFPayload(format: format, type: Data(type.utf8), identifier: Data(id), payload: Data(payload)))
        }
        guard !records.isEmpty else { throw NDEFSpecError("\(file): \"records\" is empty") }
        return NFCNDEFMessage(records: records)
    }

    static func smartPoster(_ rest: String, language: String) throws(NDEFSpecError) -> NFCNDEFPayload? {
        let uri = String(rest.prefix { $0 != "|" })
        let title = rest.contains("|") ? String(rest.drop { $0 != "|" }.dropFirst()) : nil
        guard !uri.isEmpty, let u = NFCNDEFPayload.wellKnownTypeURIPayload(string: uri) else {
            throw NDEFSpecError("sp: needs a URI: sp:https://example.com|Title")
        }
        var inner = [u]
        if let title {
            guard let t = NFCNDEFPayload.wellKnownTypeTextPayload(string: title, locale: Locale(identifier: language))
            else { throw NDEFSpecError("sp: cannot make a title of '\(title)'") }
            inner.append(t)
        }
        return NFCNDEFPayload(
            format: .nfcWellKnown, type: Data("Sp".utf8), identifier: Data(),
            payload: Data(NFCNDEFMessage(records: inner).bytes))
    }

    static func languageTag(_ s: Substring, kind: String) throws(NDEFSpecError) -> String {
        guard isLanguageTag(s) else {
            throw NDEFSpecError("\(kind)@\(s): is not a language tag (2-3 letters, optional -REGION: \(kind)@de:…)")
        }
        return String(s)
    }

    /// `TYPE:DATA` split at the first `:` outside a quoted string; TYPE checked against
    /// RFC 2045 §5.1 (the grammar `tag show` and sessions read media records with).
    public static func mediaTypeAndData(_ rest: String) throws(NDEFSpecError) -> (String, String) {
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
        guard let split else { throw NDEFSpecError("mime: needs TYPE:DATA with a type like text/plain") }
        let type = String(rest[..<split])
        do {
            _ = try NDEFMediaType(type)
        } catch {
            throw NDEFSpecError("mime: '\(type)' is not a media type: \(error)")
        }
        return (type, String(rest[rest.index(after: split)...]))
    }

    public static func isLanguageTag(_ s: Substring) -> Bool {
        let parts = s.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, (2...3).contains(first.count), first.allSatisfy({ $0.isASCII && $0.isLetter })
        else { return false }
        return parts.dropFirst().allSatisfy {
            !$0.isEmpty && $0.count <= 8 && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        }
    }
}
