public import Foundation
import Synchronization

/// The 3-bit TNF field of an NDEF record header (NFC Forum NDEF 1.0 §3.2.6), with Core
/// NFC's case names (`NFCTypeNameFormat`).
///
/// The reserved value 7 has no case: a parser reads it as ``unknown`` (NDEF 1.0 §3.2.6
/// says so) and records ``NDEFReadWarning/reservedTypeNameFormat(_:)`` on the record.
public enum NFCTypeNameFormat: UInt8, Sendable, Hashable, CaseIterable {
    /// 0: no type, no ID, no payload.
    case empty = 0
    /// 1: an NFC Forum well-known type (RTD 1.0), e.g. `T`, `U`, `Sp`.
    case nfcWellKnown = 1
    /// 2: a media type (RFC 2046), e.g. `text/vcard`.
    case media = 2
    /// 3: an absolute URI (RFC 3986) names the type.
    case absoluteURI = 3
    /// 4: an NFC Forum external type (RTD 1.0 §3.1), `domain:type`.
    case nfcExternal = 4
    /// 5: the payload's type is unknown; TYPE_LENGTH is 0.
    case unknown = 5
    /// 6: a later chunk of a chunked payload; TYPE_LENGTH is 0.
    case unchanged = 6

    /// Core NFC's case name (`"nfcWellKnown"`), used by ``NDEFRecordDescription/tnfName``.
    public var name: String {
        switch self {
        case .empty: "empty"
        case .nfcWellKnown: "nfcWellKnown"
        case .media: "media"
        case .absoluteURI: "absoluteURI"
        case .nfcExternal: "nfcExternal"
        case .unknown: "unknown"
        case .unchanged: "unchanged"
        }
    }
}

/// Something the parser accepted but a reader of the tag should be told about.
public enum NDEFReadWarning: Sendable, Hashable {
    /// The record's TNF field held this reserved value (7); it was read as `unknown`
    /// (NDEF 1.0 §3.2.6). Serializing the record writes 5.
    case reservedTypeNameFormat(UInt8)

    public var message: String {
        switch self {
        case .reservedTypeNameFormat(let v):
            "TNF \(v) is reserved; read as unknown (NDEF 1.0 §3.2.6)"
        }
    }
}

/// One NDEF record, as Core NFC's `NFCNDEFPayload`: TNF, TYPE, ID and PAYLOAD fields
/// (NFC Forum NDEF 1.0 §3.2). A chunked record read from the wire is one value holding the
/// reassembled payload.
///
/// A class, as Core NFC's is (`NSObject`, `NSSecureCoding`, `NSCopying`): two references
/// to one record see each other's changes; `copy()` makes an independent record. Its
/// fields are guarded by a lock, so a record can cross threads (Core NFC's are
/// `nonatomic`; this is stricter, never looser).
///
/// Equality (`==`, `isEqual(_:)`) and hashing cover the five Core NFC fields, not
/// ``readWarnings`` (how the bytes were read is not part of the value).
public final class NFCNDEFPayload: NSObject, NSSecureCoding, NSCopying, Sendable {
    private struct Fields: Sendable {
        var typeNameFormat: NFCTypeNameFormat
        var type: Data
        var identifier: Data
        var payload: Data
        var chunkSize: Int
        var readWarnings: [NDEFReadWarning] = []
    }
    private let fields: Mutex<Fields>

    /// The TNF field.
    public var typeNameFormat: NFCTypeNameFormat {
        get { fields.withLock { $0.typeNameFormat } }
        set { fields.withLock { $0.typeNameFormat = newValue } }
    }
    /// The TYPE field, at most 255 bytes to be serializable.
    public var type: Data {
        get { fields.withLock { $0.type } }
        set { fields.withLock { $0.type = newValue } }
    }
    /// The ID field, at most 255 bytes to be serializable; empty when there is none.
    public var identifier: Data {
        get { fields.withLock { $0.identifier } }
        set { fields.withLock { $0.identifier = newValue } }
    }
    /// The PAYLOAD field (the whole reassembled payload for a chunked record).
    public var payload: Data {
        get { fields.withLock { $0.payload } }
        set { fields.withLock { $0.payload = newValue } }
    }
    /// Bytes per chunk when serialized; 0 writes one unchunked record (Core NFC's
    /// `chunkSize`). A parsed chunked record has the size of its initial chunk here.
    public var chunkSize: Int {
        get { fields.withLock { $0.chunkSize } }
        set { fields.withLock { $0.chunkSize = max(0, newValue) } }
    }
    /// What the parser noticed while reading this record; empty for records made in code.
    public internal(set) var readWarnings: [NDEFReadWarning] {
        get { fields.withLock { $0.readWarnings } }
        set { fields.withLock { $0.readWarnings = newValue } }
    }

    /// A record from its fields, unchunked. Core NFC: `init(format:type:identifier:payload:)`.
    public convenience init(format: NFCTypeNameFormat, type: Data, identifier: Data, payload: Data) {
        self.init(format: format, type: type, identifier: identifier, payload: payload, chunkSize: 0)
    }

    /// A record from its fields, serialized in chunks of `chunkSize` bytes (0: unchunked).
    /// Core NFC: `init(format:type:identifier:payload:chunkSize:)`.
    public init(format: NFCTypeNameFormat, type: Data, identifier: Data, payload: Data, chunkSize: Int) {
        fields = Mutex(
            Fields(
                typeNameFormat: format, type: type, identifier: identifier, payload: payload,
                chunkSize: max(0, chunkSize)))
        super.init()
    }

    // MARK: NSSecureCoding, NSCopying

    /// Core NFC: `supportsSecureCoding` (true).
    public static var supportsSecureCoding: Bool { true }

    /// Core NFC: `encode(with:)`: the five fields under their Core NFC names.
    public func encode(with coder: NSCoder) {
        let f = fields.withLock { $0 }
        coder.encode(Int(f.typeNameFormat.rawValue), forKey: "typeNameFormat")
        coder.encode(f.type, forKey: "type")
        coder.encode(f.identifier, forKey: "identifier")
        coder.encode(f.payload, forKey: "payload")
        coder.encode(f.chunkSize, forKey: "chunkSize")
    }

    /// Core NFC: `init?(coder:)`; `nil` when a field is missing or the TNF is not 0–6.
    public required convenience init?(coder: NSCoder) {
        let tnf = coder.decodeInteger(forKey: "typeNameFormat")
        guard let format = UInt8(exactly: tnf).flatMap(NFCTypeNameFormat.init(rawValue:)),
            let type = coder.decodeObject(of: NSData.self, forKey: "type"),
            let identifier = coder.decodeObject(of: NSData.self, forKey: "identifier"),
            let payload = coder.decodeObject(of: NSData.self, forKey: "payload")
        else { return nil }
        self.init(
            format: format, type: Data(type), identifier: Data(identifier), payload: Data(payload),
            chunkSize: coder.decodeInteger(forKey: "chunkSize"))
    }

    /// Core NFC: `copy(with:)`: an independent record with the same fields.
    public func copy(with zone: NSZone? = nil) -> Any {
        let f = fields.withLock { $0 }
        let c = NFCNDEFPayload(
            format: f.typeNameFormat, type: f.type, identifier: f.identifier, payload: f.payload,
            chunkSize: f.chunkSize)
        c.readWarnings = f.readWarnings
        return c
    }

    // MARK: Equality

    public override func isEqual(_ object: Any?) -> Bool {
        guard let o = object as? NFCNDEFPayload else { return false }
        if o === self { return true }
        let a = fields.withLock { $0 }
        let b = o.fields.withLock { $0 }
        return a.typeNameFormat == b.typeNameFormat && a.type == b.type && a.identifier == b.identifier
            && a.payload == b.payload && a.chunkSize == b.chunkSize
    }

    public override var hash: Int {
        let f = fields.withLock { $0 }
        var hasher = Hasher()
        hasher.combine(f.typeNameFormat)
        hasher.combine(f.type)
        hasher.combine(f.identifier)
        hasher.combine(f.payload)
        hasher.combine(f.chunkSize)
        return hasher.finalize()
    }

    public override var description: String {
        let f = fields.withLock { $0 }
        return
            "NFCNDEFPayload(\(f.typeNameFormat.name), type \(f.type.count) B, id \(f.identifier.count) B, payload \(f.payload.count) B)"
    }
}

// MARK: - Core NFC's well-known type helpers

extension NFCNDEFPayload {
    /// A URI record (TNF well-known, type `U`) for `string`, abbreviated with the longest
    /// matching prefix code of NFC Forum RTD-URI 1.0 Table 3. `nil` when the string holds a
    /// control character (U+0000–U+001F), which the URI RTD forbids.
    /// Core NFC: `wellKnownTypeURIPayload(string:)`.
    public static func wellKnownTypeURIPayload(string: String) -> NFCNDEFPayload? {
        if string.unicodeScalars.contains(where: { $0.value < 0x20 }) { return nil }
        var code: UInt8 = 0
        var prefixLength = 0
        for (i, prefix) in NDEFURIRecord.prefixes.enumerated() where i > 0 {
            if prefix.utf8.count > prefixLength, string.utf8.starts(with: prefix.utf8) {
                code = UInt8(i)
                prefixLength = prefix.utf8.count
            }
        }
        var body: [UInt8] = [code]
        body.append(contentsOf: string.utf8.dropFirst(prefixLength))
        return NFCNDEFPayload(format: .nfcWellKnown, type: Data([0x55]), identifier: Data(), payload: Data(body))
    }

    /// A URI record for `url.absoluteString`. Core NFC: `wellKnownTypeURIPayload(url:)`.
    public static func wellKnownTypeURIPayload(url: URL) -> NFCNDEFPayload? {
        wellKnownTypeURIPayload(string: url.absoluteString)
    }

    /// A UTF-8 Text record (TNF well-known, type `T`; RTD-Text 1.0 §3.2) in the language of
    /// `locale`, written as a BCP 47 tag (`en-US`). `nil` when that tag is empty, longer
    /// than 63 bytes or not printable ASCII. Core NFC: `wellKnownTypeTextPayload(string:locale:)`.
    public static func wellKnownTypeTextPayload(string: String, locale: Locale) -> NFCNDEFPayload? {
        let language = locale.identifier.replacingOccurrences(of: "_", with: "-")
        let lang = Array(language.utf8)
        guard !lang.isEmpty, lang.count <= 0x3F, lang.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        var body: [UInt8] = [UInt8(lang.count)]
        body += lang
        body += Array(string.utf8)
        return NFCNDEFPayload(format: .nfcWellKnown, type: Data([0x54]), identifier: Data(), payload: Data(body))
    }

    /// Apple's deprecated misspelling of ``wellKnownTypeTextPayload(string:locale:)``, which
    /// older copies of Apple's tag-writer sample call. Core NFC: `wellKnowTypeTextPayload(string:locale:)`.
    @available(*, deprecated, renamed: "wellKnownTypeTextPayload(string:locale:)")
    public static func wellKnowTypeTextPayload(string: String, locale: Locale) -> NFCNDEFPayload? {
        wellKnownTypeTextPayload(string: string, locale: locale)
    }

    /// The URL of a valid URI record; `nil` for any other record, an invalid body or a URI
    /// that `URL(string:)` refuses. Core NFC: `wellKnownTypeURIPayload()`.
    public func wellKnownTypeURIPayload() -> URL? {
        guard case .uri(let u) = content else { return nil }
        return URL(string: u.uri)
    }

    /// The text and language of a valid Text record, `(nil, nil)` otherwise.
    /// Core NFC: `wellKnownTypeTextPayload()`.
    public func wellKnownTypeTextPayload() -> (String?, Locale?) {
        guard case .text(let t) = content else { return (nil, nil) }
        return (t.text, Locale(identifier: t.languageCode))
    }
}
