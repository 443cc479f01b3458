import FoundationEssentials

/// A flat, printable summary of one record with its body decoded, for `tag show` and JSON.
/// Optional fields are `nil` where the record's type has no such thing.
public struct NDEFRecordDescription: Sendable, Hashable, Codable {
    /// The TNF as read from the wire (7 stays 7 here, with a warning).
    public var tnf: UInt8
    /// Core NFC's case name of the TNF the record was read as (`"nfcWellKnown"`).
    public var tnfName: String
    /// The TYPE field as UTF-8 (invalid bytes replaced).
    public var type: String
    public var typeHex: String
    public var identifierHex: String
    public var payloadHex: String
    /// Text record (or a Smart Poster's first title is in ``title``).
    public var text: String?
    public var language: String?
    /// `UTF-8`, `UTF-16BE` or `UTF-16LE`.
    public var encoding: String?
    /// URI record, Smart Poster URI, or an absolute-URI record's type.
    public var uri: String?
    /// Media record's type, or a Smart Poster's `t`.
    public var mimeType: String?
    /// Android Application Record.
    public var packageName: String?
    /// Smart Poster's first title.
    public var title: String?
    /// Smart Poster's titles, every language (SPR 1.1 §3.3.1).
    public var titles: [Title]?
    /// Smart Poster's action: `do`, `save`, `edit`, or `reserved` for `03`–`FF` (SPR 1.1 §3.3.3).
    public var action: String?
    /// Smart Poster's action byte as written.
    public var actionCode: UInt8?
    /// Smart Poster's `s`: size of the referenced object in bytes.
    public var size: UInt32?
    /// Smart Poster's icons (`image/*`, `video/*` media records).
    public var icons: [Icon]?
    /// Smart Poster's nested records; a bad optional record carries its warning.
    public var records: [NDEFRecordDescription]?
    /// Reserved TNF read as unknown, RFU URI prefix, an invalid body and the like.
    public var warnings: [String]

    /// One Smart Poster title.
    public struct Title: Sendable, Hashable, Codable {
        public var text: String
        public var language: String
        public init(text: String, language: String) {
            self.text = text
            self.language = language
        }
    }

    /// One Smart Poster icon.
    public struct Icon: Sendable, Hashable, Codable {
        public var mimeType: String
        /// The icon's size in bytes.
        public var payloadLength: Int
        /// Its index in ``records`` (0-based).
        public var recordIndex: Int
        public init(mimeType: String, payloadLength: Int, recordIndex: Int) {
            self.mimeType = mimeType
            self.payloadLength = payloadLength
            self.recordIndex = recordIndex
        }
    }

    /// Describes `record`, decoding its body with `limits`.
    public init(_ record: NFCNDEFPayload, limits: NDEFLimits = .default) {
        self.init(record, limits: limits, depth: 0)
    }

    init(_ record: NFCNDEFPayload, limits: NDEFLimits, depth: Int) {
        var rawTNF = record.typeNameFormat.rawValue
        warnings = []
        for w in record.readWarnings {
            if case .reservedTypeNameFormat(let v) = w { rawTNF = v }
            warnings.append(w.message)
        }
        tnf = rawTNF
        tnfName = record.typeNameFormat.name
        type = String(decoding: record.type, as: UTF8.self)
        typeHex = record.type.hexString()
        identifierHex = record.identifier.hexString()
        payloadHex = record.payload.hexString()

        switch record.content(limits: limits, depth: depth) {
        case .empty, .unknown, .wellKnown:
            break
        case .text(let t):
            text = t.text
            language = t.languageCode
            encoding = t.encoding.rawValue
        case .uri(let u):
            uri = u.uri
            if u.isReservedPrefix {
                warnings.append(Self.reservedPrefixWarning(u.prefixCode))
            }
        case .smartPoster(let sp):
            uri = sp.uri.uri
            if sp.uri.isReservedPrefix {
                warnings.append(Self.reservedPrefixWarning(sp.uri.prefixCode))
            }
            title = sp.titles.first?.text
            language = sp.titles.first?.languageCode
            titles = sp.titles.map { Title(text: $0.text, language: $0.languageCode) }
            if let a = sp.action {
                if case .reserved = a { action = "reserved" } else { action = a.name }
                actionCode = a.rawValue
            }
            size = sp.size
            mimeType = sp.mimeType
            icons = sp.icons.map {
                Icon(mimeType: $0.mimeType, payloadLength: $0.payload.count, recordIndex: $0.recordIndex)
            }
            var nested = sp.message.records.map { NDEFRecordDescription($0, limits: limits, depth: depth + 1) }
            for w in sp.warnings where nested.indices.contains(w.recordIndex) {
                nested[w.recordIndex].warnings.append(w.message)
            }
            records = nested
        case .mime(let t, _):
            mimeType = t
        case .androidApplication(let p):
            packageName = p
        case .external:
            break
        case .absoluteURI(let u, _):
            uri = u
        case .invalid(let e):
            warnings.append("invalid body: \(e)")
        }
    }

    static func reservedPrefixWarning(_ code: UInt8) -> String {
        "URI identifier code 0x\([code].hexString()) is RFU; decoded as no prefix (RTD-URI 1.0 §3.2.2)"
    }
}

extension NDEFRecordDescription {
    /// The record with its identifier, payload and what was decoded from them (text, URI,
    /// package, titles), nested records' too, shown as `hide` shows their bytes (a string's UTF-8):
    /// the keys a redacted trace hides (`--redact`), so `tag show --redact` prints what it does.
    public func hidingContent(_ hide: ([UInt8]) -> String) -> NDEFRecordDescription {
        func hidden(_ s: String?) -> String? { s.map { hide(Array($0.utf8)) } }
        var d = self
        if !identifierHex.isEmpty { d.identifierHex = hide([UInt8](hex: identifierHex) ?? Array(identifierHex.utf8)) }
        d.payloadHex = hide([UInt8](hex: payloadHex) ?? Array(payloadHex.utf8))
        d.text = hidden(text)
        d.uri = hidden(uri)
        d.packageName = hidden(packageName)
        d.title = hidden(title)
        d.titles = titles?.map { Title(text: hide(Array($0.text.utf8)), language: $0.language) }
        d.records = records?.map { $0.hidingContent(hide) }
        return d
    }
}
