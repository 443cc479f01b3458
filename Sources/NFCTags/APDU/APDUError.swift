/// Why bytes are not a valid command or response APDU, or why fields cannot be encoded as
/// one (ISO/IEC 7816-4:2020 §5.2). Compares by ``code`` only, so a test can build the
/// expected error with any reason text.
public struct APDUError: Error, Hashable, CustomStringConvertible {
    /// What is wrong, independent of the wording of ``reason``.
    public enum Code: Sendable, Hashable {
        /// Fewer than 4 header bytes (command) or fewer than 2 status bytes (response).
        case tooShort
        /// The body lengths do not add up to any of cases 1, 2S, 3S, 4S, 2E, 3E, 4E
        /// (missing bytes, trailing bytes).
        case inconsistentLength
        /// An Lc field of zero: `00` alone in short form, `00 00 00` in extended form.
        case zeroLc
        /// Nc above 65535, or above 255 when short encoding is forced.
        case dataTooLong
        /// Ne outside 1…65536, or above 256 when short encoding is forced.
        case leOutOfRange
        /// A field value the command does not allow (an AID outside 5–16 bytes, an offset
        /// beyond 7FFF for READ BINARY, beyond FFFFFF for an offset data object).
        case invalidParameter
    }

    public let code: Code
    /// Human-readable detail, not part of equality.
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public static func == (a: APDUError, b: APDUError) -> Bool { a.code == b.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
    public var description: String { "APDU error \(code): \(reason)" }
}
