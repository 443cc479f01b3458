public import FoundationEssentials

/// What a record means, decoded from its TNF, TYPE and PAYLOAD by the NFC Forum RTDs.
/// A bad body is `.invalid(error)` on that record alone; the message stays readable.
public enum NDEFRecordContent: Sendable, Hashable {
    /// TNF `empty` (the canonical empty message `D0 00 00`).
    case empty
    /// Well-known `T` (RTD-Text 1.0).
    case text(NDEFTextRecord)
    /// Well-known `U` (RTD-URI 1.0).
    case uri(NDEFURIRecord)
    /// Well-known `Sp` (Smart Poster RTD 1.1).
    case smartPoster(NDEFSmartPoster)
    /// TNF `media`: the RFC 2046 type as written (parameters included; ``NDEFMediaType``
    /// parses it) and the payload.
    case mime(type: String, payload: Data)
    /// External type `android.com:pkg`: an Android Application Record.
    case androidApplication(packageName: String)
    /// Any other TNF `nfcExternal` record; `domain` and `type` lower-cased (RTD 1.0 §3.1:
    /// external type names compare case-insensitively).
    case external(domain: String, type: String, payload: Data)
    /// TNF `absoluteURI`: the URI is the TYPE field.
    case absoluteURI(uri: String, payload: Data)
    /// A well-known type this decoder does not interpret (`Hs`, `Sig`, `act` outside a
    /// Smart Poster...): the type as text and the payload.
    case wellKnown(type: String, payload: Data)
    /// TNF `unknown` (or the reserved 7 read as it).
    case unknown(payload: Data)
    /// The body breaks its RTD.
    case invalid(NDEFError)
}

/// The encoding of a Text record (RTD-Text 1.0 §3.2.1, status bit 7), with the byte order
/// actually used for UTF-16.
public enum NDEFTextEncoding: String, Sendable, Hashable {
    case utf8 = "UTF-8"
    /// UTF-16 with a big-endian BOM, or with none (the RTD's default is big-endian).
    case utf16BigEndian = "UTF-16BE"
    /// UTF-16 with a little-endian BOM (`FF FE`).
    case utf16LittleEndian = "UTF-16LE"
}

/// A decoded Text record (RTD-Text 1.0 §3.2).
public struct NDEFTextRecord: Sendable, Hashable {
    /// The text, without a byte-order mark.
    public var text: String
    /// The IANA language code (RFC 3066 / BCP 47), e.g. `en-US`.
    public var languageCode: String
    public var encoding: NDEFTextEncoding
    /// The UTF-16 text started with a byte-order mark.
    public var hasByteOrderMark: Bool

    public init(text: String, languageCode: String, encoding: NDEFTextEncoding, hasByteOrderMark: Bool = false) {
        self.text = text
        self.languageCode = languageCode
        self.encoding = encoding
        self.hasByteOrderMark = hasByteOrderMark
    }

    /// Decodes a Text record's PAYLOAD: status byte (bit 7 UTF-16, bit 6 RFU and 0,
    /// bits 5–0 language code length ≥ 1), printable ASCII language code, then UTF-8 or
    /// UTF-16 text (a `FE FF`/`FF FE` BOM chooses the byte order; none means big-endian).
    /// - Throws: ``NDEFError/Code/invalidTextRecord``, offsets within the payload.
    public init(payload: some Collection<UInt8>) throws(NDEFError) {
        var p = ArraySlice(payload)
        let base = p.startIndex
        guard let status = p.popFirst() else {
            throw NDEFError(.invalidTextRecord, offset: 0, message: "no status byte")
        }
        guard status & 0x40 == 0 else {
            throw NDEFError(.invalidTextRecord, offset: 0, message: "status byte bit 6 is RFU and must be 0")
        }
        let langLength = Int(status & 0x3F)
        guard langLength > 0 else {
            throw NDEFError(.invalidTextRecord, offset: 0, message: "language code length is 0")
        }
        guard p.count >= langLength else {
            throw NDEFError(
                .invalidTextRecord, offset: 0,
                message: "language code length \(langLength) exceeds the \(p.count) bytes left")
        }
        let lang = p.prefix(langLength)
        p = p.dropFirst(langLength)
        guard lang.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw NDEFError(.invalidTextRecord, offset: 1, message: "language code is not printable US-ASCII")
        }
        languageCode = String(decoding: lang, as: UTF8.self)
        let textOffset = p.startIndex - base
        if status & 0x80 == 0 {
            guard let s = String(validating: p, as: UTF8.self) else {
                throw NDEFError(.invalidTextRecord, offset: textOffset, message: "text is not valid UTF-8")
            }
            text = s
            encoding = .utf8
            hasByteOrderMark = false
        } else {
            guard p.count % 2 == 0 else {
                throw NDEFError(.invalidTextRecord, offset: textOffset, message: "UTF-16 text has an odd byte count")
            }
            var bigEndian = true
            hasByteOrderMark = false
            if p.count >= 2, let a = p.first, let b = p.dropFirst().first {
                if a == 0xFE && b == 0xFF { hasByteOrderMark = true }
                if a == 0xFF && b == 0xFE {
                    hasByteOrderMark = true
                    bigEndian = false
                }
            }
            if hasByteOrderMark { p = p.dropFirst(2) }
            var units: [UInt16] = []
            units.reserveCapacity(p.count / 2)
            var it = p.makeIterator()
            while let hi = it.next(), let lo = it.next() {
                units.append(bigEndian ? UInt16(hi) << 8 | UInt16(lo) : UInt16(lo) << 8 | UInt16(hi))
            }
            guard let s = String(validating: units, as: UTF16.self) else {
                throw NDEFError(.invalidTextRecord, offset: textOffset, message: "text is not valid UTF-16")
            }
            text = s
            encoding = bigEndian ? .utf16BigEndian : .utf16LittleEndian
        }
    }
}

/// A decoded URI record (RTD-URI 1.0 §3.2).
public struct NDEFURIRecord: Sendable, Hashable {
    /// The identifier code byte as read (0x00–0x23 defined, 0x24–0xFF RFU).
    public var prefixCode: UInt8
    /// The URI field after the code byte.
    public var uriField: String

    /// The abbreviations of RTD-URI 1.0 §3.2.2 Table 3, indexed by code 0x00–0x23.
    public static let prefixes: [String] = [
        "", "http://www.", "https://www.", "http://", "https://", "tel:",
        "mailto:", "ftp://anonymous:anonymous@", "ftp://ftp.", "ftps://",
        "sftp://", "smb://", "nfs://", "ftp://", "dav://", "news:",
        "telnet://", "imap:", "rtsp://", "urn:", "pop:", "sip:", "sips:",
        "tftp:", "btspp://", "btl2cap://", "btgoep://", "tcpobex://",
        "irdaobex://", "file://", "urn:epc:id:", "urn:epc:tag:",
        "urn:epc:pat:", "urn:epc:raw:", "urn:epc:", "urn:nfc:",
    ]

    /// The code is RFU (0x24–0xFF): it is kept, and decoded as no prefix.
    public var isReservedPrefix: Bool { Int(prefixCode) >= Self.prefixes.count }
    /// The prefix the code stands for; empty for 0x00 and RFU codes.
    public var prefix: String { isReservedPrefix ? "" : Self.prefixes[Int(prefixCode)] }
    /// The full URI: prefix + URI field.
    public var uri: String { prefix + uriField }

    public init(prefixCode: UInt8, uriField: String) {
        self.prefixCode = prefixCode
        self.uriField = uriField
    }

    /// Decodes a URI record's PAYLOAD: a code byte, then a UTF-8 URI field without
    /// control characters (U+0000–U+001F).
    /// - Throws: ``NDEFError/Code/invalidURIRecord``, offsets within the payload.
    public init(payload: some Collection<UInt8>) throws(NDEFError) {
        var p = ArraySlice(payload)
        guard let code = p.popFirst() else {
            throw NDEFError(.invalidURIRecord, offset: 0, message: "no identifier code byte")
        }
        guard let field = String(validating: p, as: UTF8.self) else {
            throw NDEFError(.invalidURIRecord, offset: 1, message: "URI field is not valid UTF-8")
        }
        if let i = field.unicodeScalars.firstIndex(where: { $0.value < 0x20 }) {
            let at = 1 + field.unicodeScalars[..<i].reduce(0) { $0 + UTF8.width($1) }
            throw NDEFError(.invalidURIRecord, offset: at, message: "URI field holds a control character")
        }
        self.prefixCode = code
        self.uriField = field
    }
}

/// The Smart Poster action record `act` (SPR 1.1 §3.3.3): `00` do the action, `01` save
/// for later, `02` open for editing, `03`–`FF` RFU.
public enum NDEFSmartPosterAction: Sendable, Hashable {
    case doAction, save, edit
    /// An RFU value, kept.
    case reserved(UInt8)

    public init(rawValue: UInt8) {
        switch rawValue {
        case 0: self = .doAction
        case 1: self = .save
        case 2: self = .edit
        default: self = .reserved(rawValue)
        }
    }

    public var name: String {
        switch self {
        case .doAction: "do"
        case .save: "save"
        case .edit: "edit"
        case .reserved(let v): "reserved(\(v))"
        }
    }

    /// The byte as written.
    public var rawValue: UInt8 {
        switch self {
        case .doAction: 0
        case .save: 1
        case .edit: 2
        case .reserved(let v): v
        }
    }
}

/// A Smart Poster icon (SPR 1.1 §3.3.4): a media record of type `image/*` or `video/*`.
public struct NDEFSmartPosterIcon: Sendable, Hashable {
    /// The media type as written (`image/png`).
    public var mimeType: String
    /// The icon's bytes.
    public var payload: Data
    /// Index of the icon's record in ``NDEFSmartPoster/message``.
    public var recordIndex: Int

    public init(mimeType: String, payload: Data, recordIndex: Int) {
        self.mimeType = mimeType
        self.payload = payload
        self.recordIndex = recordIndex
    }
}

/// A decoded Smart Poster (well-known `Sp`, NFC Forum Smart Poster RTD 1.1 §3).
///
/// The URI record decides whether the poster is usable; a bad optional record (a title that
/// breaks RTD-Text, an `act`, `s` or `t` of the wrong shape, a second one of them, a reserved
/// action) is kept out of the decoded fields and named in ``warnings``, and the poster stays.
public struct NDEFSmartPoster: Sendable, Hashable {
    /// A finding on one record of the nested message.
    public struct RecordWarning: Sendable, Hashable, CustomStringConvertible {
        /// Index of the record in ``NDEFSmartPoster/message`` (0-based).
        public var recordIndex: Int
        public var message: String
        public var description: String { "record \(recordIndex + 1): \(message)" }
    }

    /// The one URI record.
    public var uri: NDEFURIRecord
    /// The `T` records that decode, in order (one per language).
    public var titles: [NDEFTextRecord]
    /// The first well-formed `act` record, if any (a reserved value is kept, with a warning).
    public var action: NDEFSmartPosterAction?
    /// The first well-formed `s` record: size of the referenced object in bytes.
    public var size: UInt32?
    /// The first well-formed `t` record: MIME type of the referenced object.
    public var mimeType: String?
    /// The `image/*` and `video/*` media records, in order.
    public var icons: [NDEFSmartPosterIcon] = []
    /// The bad or surprising optional records, in order.
    public var warnings: [RecordWarning] = []
    /// The whole nested message (icons and other records included).
    public var message: NFCNDEFMessage
}

// MARK: - Decoding

extension NFCNDEFPayload {
    /// The record's meaning under the RTDs, decoded with ``NDEFLimits/default``;
    /// `.invalid(error)` when the body is bad.
    public var content: NDEFRecordContent {
        content(limits: .default)
    }

    /// The record's meaning under the RTDs; `.invalid(error)` when the body is bad.
    public func content(limits: NDEFLimits) -> NDEFRecordContent {
        do { return try decodeContent(limits: limits) } catch { return .invalid(error) }
    }

    /// Decodes the record's body by its TNF and TYPE: Text, URI, Smart Poster (nested
    /// message parsed with `limits`), media, external, Android Application Record,
    /// absolute URI. Well-known types compare case-sensitively (RTD 1.0 §2.3), external
    /// types case-insensitively (§3.1).
    /// - Throws: the RTD's ``NDEFError``, offsets within the payload.
    public func decodeContent(limits: NDEFLimits = .default) throws(NDEFError) -> NDEFRecordContent {
        try decodeContent(limits: limits, depth: 0)
    }

    func decodeContent(limits: NDEFLimits, depth: Int) throws(NDEFError) -> NDEFRecordContent {
        switch typeNameFormat {
        case .empty:
            return .empty
        case .unknown, .unchanged:
            return .unknown(payload: payload)
        case .nfcWellKnown:
            switch Array(type) {
            case [0x54]: return .text(try NDEFTextRecord(payload: payload))
            case [0x55]: return .uri(try NDEFURIRecord(payload: payload))
            case [0x53, 0x70]:
                return .smartPoster(try NDEFSmartPoster(payload: payload, limits: limits, depth: depth + 1))
            default: return .wellKnown(type: String(decoding: type, as: UTF8.self), payload: payload)
            }
        case .media:
            // RFC 2045 §5.1 grammar, parameters included (`text/plain; charset=utf-8`).
            _ = try NDEFMediaType(bytes: Array(type))
            return .mime(type: String(decoding: type, as: UTF8.self), payload: payload)
        case .absoluteURI:
            guard let s = printableASCII(type) else {
                throw NDEFError(.invalidAbsoluteURI, offset: 0, message: "absolute URI type is not printable US-ASCII")
            }
            return .absoluteURI(uri: s, payload: payload)
        case .nfcExternal:
            guard let s = printableASCII(type)?.lowercased(), let colon = s.firstIndex(of: ":"),
                colon != s.startIndex, s.index(after: colon) != s.endIndex
            else {
                throw NDEFError(
                    .invalidExternalType, offset: 0, message: "external type is not domain:type in printable US-ASCII")
            }
            let domain = String(s[..<colon])
            let name = String(s[s.index(after: colon)...])
            if domain == "android.com" && name == "pkg" {
                guard !payload.isEmpty, let pkg = String(validating: payload, as: UTF8.self),
                    !pkg.unicodeScalars.contains(where: { $0.value < 0x21 })
                else {
                    throw NDEFError(
                        .invalidAndroidApplicationRecord, offset: 0,
                        message: "package name is empty, not UTF-8 or holds spaces or control characters")
                }
                return .androidApplication(packageName: pkg)
            }
            return .external(domain: domain, type: name, payload: payload)
        }
    }
}

private func printableASCII(_ bytes: Data) -> String? {
    guard !bytes.isEmpty, bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
    return String(decoding: bytes, as: UTF8.self)
}

extension NDEFSmartPoster {
    /// Decodes a Smart Poster's PAYLOAD: a nested NDEF message holding exactly one URI
    /// record (SPR 1.1 §3.3.2), and optional `T` titles (§3.3.1), `act` (1 byte, §3.3.3),
    /// icons (`image/*`, `video/*` media records, §3.3.4), `s` (4-byte big-endian size,
    /// §3.3.5) and `t` (UTF-8 MIME type, §3.3.6). `depth` is this poster's nesting level (1
    /// for a poster in a top-level message).
    ///
    /// Only the URI record can make the poster invalid; a bad optional record becomes a
    /// ``RecordWarning`` on that record and is left out of the decoded fields.
    /// - Throws: ``NDEFError/Code/nestingTooDeep`` past ``NDEFLimits/maxNestingDepth``,
    ///   ``NDEFError/Code/invalidSmartPoster`` for a nested message that does not parse, no
    ///   URI record, more than one, or one that breaks RTD-URI (the reason in the message).
    init(payload: Data, limits: NDEFLimits, depth: Int) throws(NDEFError) {
        guard depth <= limits.maxNestingDepth else {
            throw NDEFError(
                .nestingTooDeep, offset: 0,
                message: "Smart Poster nesting depth \(depth) is over the limit of \(limits.maxNestingDepth)")
        }
        let nested: NFCNDEFMessage
        do {
            nested = try NFCNDEFMessage(bytes: payload, limits: limits)
        } catch {
            throw NDEFError(.invalidSmartPoster, offset: error.offset, message: "nested message: \(error)")
        }
        var uri: NDEFURIRecord? = nil
        var titles: [NDEFTextRecord] = []
        var action: NDEFSmartPosterAction? = nil
        var size: UInt32? = nil
        var mimeType: String? = nil
        var icons: [NDEFSmartPosterIcon] = []
        var warnings: [RecordWarning] = []
        for (i, record) in nested.records.enumerated() {
            func warn(_ m: String) { warnings.append(RecordWarning(recordIndex: i, message: m)) }
            if record.typeNameFormat == .media {
                let type = String(decoding: record.type, as: UTF8.self).lowercased()
                if type.hasPrefix("image/") || type.hasPrefix("video/") {
                    icons.append(
                        NDEFSmartPosterIcon(
                            mimeType: String(decoding: record.type, as: UTF8.self), payload: record.payload,
                            recordIndex: i))
                }
                continue
            }
            guard record.typeNameFormat == .nfcWellKnown else { continue }
            switch Array(record.type) {
            case [0x55]:
                guard uri == nil else {
                    throw NDEFError(
                        .invalidSmartPoster, offset: 0, message: "more than one URI record (record \(i + 1))")
                }
                do { uri = try NDEFURIRecord(payload: record.payload) } catch {
                    throw NDEFError(.invalidSmartPoster, offset: 0, message: "URI record: \(error)")
                }
            case [0x54]:
                do {
                    let title = try NDEFTextRecord(payload: record.payload)
                    if titles.contains(where: { $0.languageCode.lowercased() == title.languageCode.lowercased() }) {
                        warn("a second title in language \(title.languageCode) (SPR 1.1 §3.3.1: one per language)")
                    }
                    titles.append(title)
                } catch {
                    warn("title record ignored: \(error)")
                }
            case [0x61, 0x63, 0x74]:  // "act"
                guard record.payload.count == 1, let v = record.payload.first else {
                    warn("act record of \(record.payload.count) bytes ignored (SPR 1.1 §3.3.3: 1 byte)")
                    continue
                }
                guard action == nil else {
                    warn("a second act record ignored")
                    continue
                }
                let a = NDEFSmartPosterAction(rawValue: v)
                if case .reserved = a {
                    warn(
                        "act value 0x\([v].hexString()) is RFU (SPR 1.1 §3.3.3: 00 do, 01 save, 02 edit); shown as reserved"
                    )
                }
                action = a
            case [0x73]:  // "s"
                guard record.payload.count == 4 else {
                    warn("s record of \(record.payload.count) bytes ignored (SPR 1.1 §3.3.5: 4 bytes)")
                    continue
                }
                guard size == nil else {
                    warn("a second s record ignored")
                    continue
                }
                size = record.payload.reduce(0) { $0 << 8 | UInt32($1) }
            case [0x74]:  // "t"
                guard let s = String(validating: record.payload, as: UTF8.self), !s.isEmpty else {
                    warn(
                        record.payload.isEmpty
                            ? "empty t record ignored (SPR 1.1 §3.3.6: a MIME type)"
                            : "t record ignored: not UTF-8")
                    continue
                }
                guard mimeType == nil else {
                    warn("a second t record ignored")
                    continue
                }
                mimeType = s
            case [0x53, 0x70]:
                // A poster inside a poster is not a Smart Poster form, but bounding it is
                // what the depth cap is for: decode it to find out whether it is too deep.
                if case .invalid(let e) = record.content(limits: limits, depth: depth),
                    e.code == .nestingTooDeep
                {
                    throw e
                }
            default:
                break
            }
        }
        guard let uri else {
            throw NDEFError(.invalidSmartPoster, offset: 0, message: "no URI record")
        }
        self.uri = uri
        self.titles = titles
        self.action = action
        self.size = size
        self.mimeType = mimeType
        self.icons = icons
        self.warnings = warnings
        self.message = nested
    }
}

extension NFCNDEFPayload {
    func content(limits: NDEFLimits, depth: Int) -> NDEFRecordContent {
        do { return try decodeContent(limits: limits, depth: depth) } catch { return .invalid(error) }
    }
}
