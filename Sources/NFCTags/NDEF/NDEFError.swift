/// Why an NDEF message or record body was rejected.
///
/// Compares and hashes by ``code`` only, so a test can build the expected error itself:
/// `#expect(throws: NDEFError(.trailingBytes)) { try NFCNDEFMessage(bytes: b) }`.
/// ``offset`` is the byte offset of the offending field: from the start of the message for
/// ``NFCNDEFMessage/init(bytes:limits:)``, from the start of the record's PAYLOAD for a
/// record-body (RTD) error.
public struct NDEFError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The named reasons, after the rule of NFC Forum NDEF 1.0 or the RTD that was broken.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// A header, length field or TYPE/ID/PAYLOAD field runs past the end of the data
        /// (NDEF 1.0 §3.2), or the message holds no record at all.
        case truncated
        /// The first record has no MB flag (NDEF 1.0 §3.2.1).
        case missingMessageBegin
        /// A record other than the first has the MB flag (NDEF 1.0 §3.2.1).
        case unexpectedMessageBegin
        /// The data ends after a record that has no ME flag (NDEF 1.0 §3.2.2).
        case missingMessageEnd
        /// Bytes follow the record with the ME flag (NDEF 1.0 §3.2.2).
        case trailingBytes
        /// A broken chunk sequence (NDEF 1.0 §2.3.3, §3.2.3): `unchanged` outside a
        /// sequence, a continuation whose TNF is not `unchanged`, IL on a later chunk,
        /// ME inside a sequence, a chunked `empty` record.
        case chunkFlagMisuse
        /// TNF and length fields disagree (NDEF 1.0 §3.2.6): `empty` with any length
        /// non-zero, `unknown`/`unchanged` with a TYPE, a typed TNF without one.
        case invalidTypeNameFormatFields
        /// A 4-byte PAYLOAD_LENGTH larger than ``NDEFLimits/maxMessageBytes`` can ever allow.
        case lengthOverflow
        /// The message is larger or holds more records than ``NDEFLimits`` allows.
        case limitExceeded
        /// Smart Posters nested deeper than ``NDEFLimits/maxNestingDepth``.
        case nestingTooDeep
        /// A Text record body breaks NFC Forum RTD-Text 1.0 §3.2.1.
        case invalidTextRecord
        /// A URI record body breaks NFC Forum RTD-URI 1.0 §3.2.
        case invalidURIRecord
        /// A Smart Poster body breaks NFC Forum SPR 1.1 §3 (nested message, one URI record,
        /// `act`/`s`/`t` record shapes).
        case invalidSmartPoster
        /// A media-type TYPE outside RFC 2045 §5.1's grammar (`type/subtype *(";" parameter)`).
        case invalidMediaType
        /// An external TYPE that is not `domain:type` in printable US-ASCII (RTD 1.0 §3.1).
        case invalidExternalType
        /// An absolute-URI TYPE that is not printable US-ASCII (RFC 3986).
        case invalidAbsoluteURI
        /// An Android Application Record (`android.com:pkg`) without a UTF-8 package name.
        case invalidAndroidApplicationRecord
    }

    /// The rule that was broken.
    public let code: Code
    /// Byte offset of the offending field (see the type's note for the origin).
    public let offset: Int
    /// What exactly was wrong, for people.
    public let message: String

    public init(_ code: Code, offset: Int = 0, message: String = "") {
        self.code = code
        self.offset = offset
        self.message = message
    }

    public static func == (lhs: NDEFError, rhs: NDEFError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String {
        message.isEmpty ? "\(code.rawValue) at byte \(offset)" : "\(code.rawValue) at byte \(offset): \(message)"
    }
}

/// Caps that keep a parse of untrusted bytes bounded in memory and time.
public struct NDEFLimits: Sendable, Hashable {
    /// Largest message accepted, in bytes. Default 1 MiB (1 048 576): far above the largest
    /// Type 2 tag (NTAG216, 888 bytes) and a Type 4 tag's 2-byte NLEN (32 767), while a
    /// Type 4 extended NLEN could claim 4 GiB.
    public var maxMessageBytes: Int
    /// Most records on the wire, each chunk counting as one. Default 1 024.
    public var maxRecords: Int
    /// Deepest Smart Poster nesting decoded: the top-level message is depth 0, a Smart
    /// Poster's nested message depth 1. Default 4.
    public var maxNestingDepth: Int

    public init(maxMessageBytes: Int = 1_048_576, maxRecords: Int = 1_024, maxNestingDepth: Int = 4) {
        self.maxMessageBytes = maxMessageBytes
        self.maxRecords = maxRecords
        self.maxNestingDepth = maxNestingDepth
    }

    /// 1 MiB, 1 024 records, depth 4.
    public static let `default` = NDEFLimits()
}
