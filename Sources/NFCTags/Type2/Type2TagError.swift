/// Why a Type 2 Tag procedure failed (NFC Forum Type 2 Tag Technical Specification 1.0, §6).
///
/// Errors compare by ``code`` only; ``reason`` and the source location are for people.
public struct Type2TagError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, with the data a caller can act on.
    public enum Code: Sendable, Equatable {
        /// The CC (page 3) is not an NDEF CC: magic number not `E1`, size 0, or read access not granted.
        case ccInvalid
        /// The CC's mapping major version (high nibble of CC byte 1) is above 1.
        case unsupportedVersion(UInt8)
        /// A TLV block cannot be parsed; the byte address (page × 4 + byte) of its T field.
        case tlvMalformed(offset: Int)
        /// The NDEF TLV's length runs past the end of the data area the CC declares.
        case lengthBeyondDataArea
        /// The CC's write access is not `0h` (`Fh` = read-only).
        case readOnly
        /// The pages the write would touch that are locked by static or dynamic lock bits.
        case pagesLocked([UInt8])
        /// The message does not fit: its length and the maximum NDEF message size.
        case messageTooLong(length: Int, maximum: Int)
        /// A write failed part way: the pages written, in order (a page written twice appears
        /// twice), and the failure that stopped it.
        case writeInterrupted(writtenPages: [UInt8], cause: TagCommunicationError)
        /// The data area holds no NDEF TLV.
        case noNDEF
        /// The transport failed.
        case communication(TagCommunicationError)
    }

    public let code: Code
    public let reason: String
    public let file: String
    public let line: Int

    public init(_ code: Code, _ reason: String = "", file: String = #fileID, line: Int = #line) {
        self.code = code
        self.reason = reason
        self.file = file
        self.line = line
    }

    public static func == (lhs: Type2TagError, rhs: Type2TagError) -> Bool { lhs.code == rhs.code }

    public var description: String {
        let what: String =
            switch code {
            case .ccInvalid: "capability container invalid"
            case .unsupportedVersion(let v): "unsupported Type 2 mapping version \(v >> 4).\(v & 0xF)"
            case .tlvMalformed(let offset): "malformed TLV at byte \(offset) (page \(offset / 4))"
            case .lengthBeyondDataArea: "NDEF length runs past the data area"
            case .readOnly: "tag is read-only (CC write access)"
            case .pagesLocked(let pages): "pages locked: \(pages.map(String.init).joined(separator: ", "))"
            case .messageTooLong(let length, let maximum):
                "NDEF message of \(length) bytes exceeds the maximum \(maximum)"
            case .writeInterrupted(let pages, let cause):
                "write interrupted by \(cause) after writing pages [\(pages.map(String.init).joined(separator: ", "))]"
            case .noNDEF: "no NDEF TLV on the tag"
            case .communication(let e): "communication failed: \(e)"
            }
        return reason.isEmpty ? what : what + ": " + reason
    }
}
