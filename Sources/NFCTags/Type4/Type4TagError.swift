/// Why a Type 4 Tag procedure failed (NFC Forum T4T 2.0 / 3.0 §5). Compares by ``code``
/// only; ``reason`` is the human-readable detail.
///
/// Core NFC equivalents: `communication(…)` → the transceive errors 100–105 as
/// ``/NFCBase/TagCommunicationError`` says; `readOnly` → `ndefReaderSessionErrorTagNotWritable` (400);
/// `messageTooLarge` → `ndefReaderSessionErrorTagSizeTooSmall` (402);
/// the others → `ndefReaderSessionErrorTagUpdateFailure` (401) on write and
/// `readerTransceiveErrorTagResponseError` (102) on read.
public struct Type4TagError: Error, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// SELECT of the NDEF Tag Application failed under both names, `D2 76 00 00 85 01 01`
        /// (mapping 2.0 and later) and `D2 76 00 00 85 01 00` (mapping 1.0): not a Type 4 Tag.
        case applicationNotFound
        /// The Capability Container breaks a T4T rule (lengths, file id, TLV).
        case ccInvalid
        /// The CC's mapping version major number is neither 2 nor 3 (the raw byte).
        case unsupportedVersion(UInt8)
        /// SELECT of the CC file or of the NDEF file answered `6A82`.
        case fileNotFound
        /// The CC's read access byte is not `00`: the NDEF file can't be read.
        case accessDenied
        /// The CC's write access byte is not `00`, or the tag refused UPDATE BINARY with `6982`.
        case readOnly
        /// NLEN/ENLEN is beyond the maximum the CC allows, or a read would leave the file.
        case lengthOutOfRange
        /// The message does not fit the NDEF file (max file size − length field).
        case messageTooLarge
        /// A status word the procedure has no meaning for.
        case unexpectedStatus(StatusWord)
        /// The carrier failed, or the answer has no valid response APDU shape.
        case communication(TagCommunicationError)
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String = "") {
        self.code = code
        self.reason = reason
    }

    public static func == (a: Type4TagError, b: Type4TagError) -> Bool { a.code == b.code }

    public static let applicationNotFound = Type4TagError(.applicationNotFound)
    public static let ccInvalid = Type4TagError(.ccInvalid)
    public static let fileNotFound = Type4TagError(.fileNotFound)
    public static let accessDenied = Type4TagError(.accessDenied)
    public static let readOnly = Type4TagError(.readOnly)
    public static let lengthOutOfRange = Type4TagError(.lengthOutOfRange)
    public static let messageTooLarge = Type4TagError(.messageTooLarge)
    public static func ccInvalid(_ reason: String) -> Type4TagError { Type4TagError(.ccInvalid, reason) }
    public static func unsupportedVersion(_ v: UInt8) -> Type4TagError {
        Type4TagError(.unsupportedVersion(v), "mapping version \([v].hexString()) (major \(v >> 4))")
    }
    public static func unexpectedStatus(_ sw: StatusWord) -> Type4TagError {
        Type4TagError(.unexpectedStatus(sw), sw.description)
    }
    public static func communication(_ e: TagCommunicationError) -> Type4TagError {
        Type4TagError(.communication(e), e.description)
    }

    public var description: String {
        reason.isEmpty ? "Type 4 Tag: \(code)" : "Type 4 Tag: \(code): \(reason)"
    }
}
