public import NFCTags

/// A pcsc-lite result other than `SCARD_S_SUCCESS`: the `LONG` a `SCard*` function returned.
///
/// An open struct, not an enum: a code pcsc-lite adds later still round-trips. Two errors are
/// equal when their codes are; ``function`` (the C function that failed) is context only.
/// Match with the named constants: `catch let e as PCSCError where e == .removedCard`.
/// Names and messages come from `PCSC/pcsclite.h` of pcsc-lite 1.9.9 (``knownCodes`` lists
/// every `SCARD_S_/E_/F_/W_/P_` code there).
public struct PCSCError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The code as pcsc-lite defines it (`0x8010xxxx`), as an unsigned 32-bit value.
    public let code: UInt32
    /// The C function that returned it (`"SCardTransmit"`), or `""` when built by hand.
    public let function: String

    public init(code: UInt32, function: String = "") {
        self.code = code
        self.function = function
    }

    /// The `SCARD_*` name of ``code`` (`"SCARD_W_REMOVED_CARD"`), or `"SCARD_0x…"` when
    /// pcsclite.h has no name for it. `0x8010001F` is both `SCARD_E_UNEXPECTED` and
    /// `SCARD_E_UNSUPPORTED_FEATURE`; the first is reported, as `pcsc_stringify_error` does.
    public var name: String {
        Self.entry(code)?.name ?? "SCARD_0x" + String(code, radix: 16, uppercase: true)
    }

    /// pcsclite.h's one-line explanation of ``code``.
    public var message: String { Self.entry(code)?.message ?? "Unknown PC/SC error." }

    public var description: String {
        let hex = String(code, radix: 16, uppercase: true)
        let prefix = function.isEmpty ? "" : "\(function): "
        return "\(prefix)\(name) (0x\(hex)): \(message)"
    }

    public static func == (a: PCSCError, b: PCSCError) -> Bool { a.code == b.code }
    public func hash(into h: inout Hasher) { h.combine(code) }

    /// Every code of pcsc-lite 1.9.9's pcsclite.h, in header order: (code, name, message).
    public static let knownCodes: [(code: UInt32, name: String, message: String)] = [
        (0x0000_0000, "SCARD_S_SUCCESS", "No error was encountered."),
        (0x8010_0001, "SCARD_F_INTERNAL_ERROR", "An internal consistency check failed."),
        (0x8010_0002, "SCARD_E_CANCELLED", "The action was cancelled by an SCardCancel request."),
        (0x8010_0003, "SCARD_E_INVALID_HANDLE", "The supplied handle was invalid."),
        (
            0x8010_0004, "SCARD_E_INVALID_PARAMETER",
            "One or more of the supplied parameters could not be properly interpreted."
        ),
        (0x8010_0005, "SCARD_E_INVALID_TARGET", "Registry startup information is missing or invalid."),
        (0x8010_0006, "SCARD_E_NO_MEMORY", "Not enough memory available to complete this command."),
        (0x8010_0007, "SCARD_F_WAITED_TOO_LONG", "An internal consistency timer has expired."),
        (
            0x8010_0008, "SCARD_E_INSUFFICIENT_BUFFER",
            "The data buffer to receive returned data is too small for the returned data."
        ),
        (0x8010_0009, "SCARD_E_UNKNOWN_READER", "The specified reader name is not recognized."),
        (0x8010_000A, "SCARD_E_TIMEOUT", "The user-specified timeout value has expired."),
        (
            0x8010_000B, "SCARD_E_SHARING_VIOLATION",
            "The smart card cannot be accessed because of other connections outstanding."
        ),
        (
            0x8010_000C, "SCARD_E_NO_SMARTCARD",
            "The operation requires a Smart Card, but no Smart Card is currently in the device."
        ),
        (0x8010_000D, "SCARD_E_UNKNOWN_CARD", "The specified smart card name is not recognized."),
        (0x8010_000E, "SCARD_E_CANT_DISPOSE", "The system could not dispose of the media in the requested manner."),
        (
            0x8010_000F, "SCARD_E_PROTO_MISMATCH",
            "The requested protocols are incompatible with the protocol currently in use with the smart card."
        ),
        (0x8010_0010, "SCARD_E_NOT_READY", "The reader or smart card is not ready to accept commands."),
        (
            0x8010_0011, "SCARD_E_INVALID_VALUE",
            "One or more of the supplied parameters values could not be properly interpreted."
        ),
        (
            0x8010_0012, "SCARD_E_SYSTEM_CANCELLED",
            "The action was cancelled by the system, presumably to log off or shut down."
        ),
        (0x8010_0013, "SCARD_F_COMM_ERROR", "An internal communications error has been detected."),
        (0x8010_0014, "SCARD_F_UNKNOWN_ERROR", "An internal error has been detected, but the source is unknown."),
        (0x8010_0015, "SCARD_E_INVALID_ATR", "An ATR obtained from the registry is not a valid ATR string."),
        (0x8010_0016, "SCARD_E_NOT_TRANSACTED", "An attempt was made to end a non-existent transaction."),
        (0x8010_0017, "SCARD_E_READER_UNAVAILABLE", "The specified reader is not currently available for use."),
        (0x8010_0018, "SCARD_P_SHUTDOWN", "The operation has been aborted to allow the server application to exit."),
        (0x8010_0019, "SCARD_E_PCI_TOO_SMALL", "The PCI Receive buffer was too small."),
        (
            0x8010_001A, "SCARD_E_READER_UNSUPPORTED",
            "The reader driver does not meet minimal requirements for support."
        ),
        (0x8010_001B, "SCARD_E_DUPLICATE_READER", "The reader driver did not produce a unique reader name."),
        (0x8010_001C, "SCARD_E_CARD_UNSUPPORTED", "The smart card does not meet minimal requirements for support."),
        (0x8010_001D, "SCARD_E_NO_SERVICE", "The Smart card resource manager is not running."),
        (0x8010_001E, "SCARD_E_SERVICE_STOPPED", "The Smart card resource manager has shut down."),
        (0x8010_001F, "SCARD_E_UNEXPECTED", "An unexpected card error has occurred."),
        (0x8010_001F, "SCARD_E_UNSUPPORTED_FEATURE", "This smart card does not support the requested feature."),
        (0x8010_0020, "SCARD_E_ICC_INSTALLATION", "No primary provider can be found for the smart card."),
        (0x8010_0021, "SCARD_E_ICC_CREATEORDER", "The requested order of object creation is not supported."),
        (0x8010_0023, "SCARD_E_DIR_NOT_FOUND", "The identified directory does not exist in the smart card."),
        (0x8010_0024, "SCARD_E_FILE_NOT_FOUND", "The identified file does not exist in the smart card."),
        (0x8010_0025, "SCARD_E_NO_DIR", "The supplied path does not represent a smart card directory."),
        (0x8010_0026, "SCARD_E_NO_FILE", "The supplied path does not represent a smart card file."),
        (0x8010_0027, "SCARD_E_NO_ACCESS", "Access is denied to this file."),
        (0x8010_0028, "SCARD_E_WRITE_TOO_MANY", "The smart card does not have enough memory to store the information."),
        (0x8010_0029, "SCARD_E_BAD_SEEK", "There was an error trying to set the smart card file object pointer."),
        (0x8010_002A, "SCARD_E_INVALID_CHV", "The supplied PIN is incorrect."),
        (0x8010_002B, "SCARD_E_UNKNOWN_RES_MNG", "An unrecognized error code was returned from a layered component."),
        (0x8010_002C, "SCARD_E_NO_SUCH_CERTIFICATE", "The requested certificate does not exist."),
        (0x8010_002D, "SCARD_E_CERTIFICATE_UNAVAILABLE", "The requested certificate could not be obtained."),
        (0x8010_002E, "SCARD_E_NO_READERS_AVAILABLE", "Cannot find a smart card reader."),
        (
            0x8010_002F, "SCARD_E_COMM_DATA_LOST",
            "A communications error with the smart card has been detected. Retry the operation."
        ),
        (0x8010_0030, "SCARD_E_NO_KEY_CONTAINER", "The requested key container does not exist on the smart card."),
        (
            0x8010_0031, "SCARD_E_SERVER_TOO_BUSY",
            "The Smart Card Resource Manager is too busy to complete this operation."
        ),
        (
            0x8010_0065, "SCARD_W_UNSUPPORTED_CARD",
            "The reader cannot communicate with the card, due to ATR string configuration conflicts."
        ),
        (0x8010_0066, "SCARD_W_UNRESPONSIVE_CARD", "The smart card is not responding to a reset."),
        (
            0x8010_0067, "SCARD_W_UNPOWERED_CARD",
            "Power has been removed from the smart card, so that further communication is not possible."
        ),
        (
            0x8010_0068, "SCARD_W_RESET_CARD",
            "The smart card has been reset, so any shared state information is invalid."
        ),
        (
            0x8010_0069, "SCARD_W_REMOVED_CARD",
            "The smart card has been removed, so further communication is not possible."
        ),
        (0x8010_006A, "SCARD_W_SECURITY_VIOLATION", "Access was denied because of a security violation."),
        (0x8010_006B, "SCARD_W_WRONG_CHV", "The card cannot be accessed because the wrong PIN was presented."),
        (
            0x8010_006C, "SCARD_W_CHV_BLOCKED",
            "The card cannot be accessed because the maximum number of PIN entry attempts has been reached."
        ),
        (0x8010_006D, "SCARD_W_EOF", "The end of the smart card file has been reached."),
        (0x8010_006E, "SCARD_W_CANCELLED_BY_USER", "The user pressed \"Cancel\" on a Smart Card Selection Dialog."),
        (0x8010_006F, "SCARD_W_CARD_NOT_AUTHENTICATED", "No PIN was presented to the smart card."),
    ]

    private static func entry(_ code: UInt32) -> (code: UInt32, name: String, message: String)? {
        knownCodes.first { $0.code == code }
    }

    // The codes this package meets, by name (Errno's style: `PCSCError.removedCard`).
    /// `SCARD_E_CANCELLED` 0x80100002: an `SCardCancel` ended the wait.
    public static let cancelled = PCSCError(code: 0x8010_0002)
    /// `SCARD_E_INVALID_HANDLE` 0x80100003.
    public static let invalidHandle = PCSCError(code: 0x8010_0003)
    /// `SCARD_E_INVALID_PARAMETER` 0x80100004.
    public static let invalidParameter = PCSCError(code: 0x8010_0004)
    /// `SCARD_E_INSUFFICIENT_BUFFER` 0x80100008: the answer is larger than the receive buffer.
    public static let insufficientBuffer = PCSCError(code: 0x8010_0008)
    /// `SCARD_E_UNKNOWN_READER` 0x80100009: no reader of that name (unplugged).
    public static let unknownReader = PCSCError(code: 0x8010_0009)
    /// `SCARD_E_TIMEOUT` 0x8010000A: `SCardGetStatusChange`'s timeout expired.
    public static let timeout = PCSCError(code: 0x8010_000A)
    /// `SCARD_E_SHARING_VIOLATION` 0x8010000B: another application holds the card exclusively.
    public static let sharingViolation = PCSCError(code: 0x8010_000B)
    /// `SCARD_E_NO_SMARTCARD` 0x8010000C: `SCardConnect` with no card in the reader.
    public static let noSmartcard = PCSCError(code: 0x8010_000C)
    /// `SCARD_E_PROTO_MISMATCH` 0x8010000F: the card offers none of the requested protocols.
    public static let protocolMismatch = PCSCError(code: 0x8010_000F)
    /// `SCARD_F_COMM_ERROR` 0x80100013: the client lost its socket to pcscd.
    public static let commError = PCSCError(code: 0x8010_0013)
    /// `SCARD_E_NOT_TRANSACTED` 0x80100016: the reader driver could not send the APDU.
    public static let notTransacted = PCSCError(code: 0x8010_0016)
    /// `SCARD_E_READER_UNAVAILABLE` 0x80100017: the reader went away.
    public static let readerUnavailable = PCSCError(code: 0x8010_0017)
    /// `SCARD_E_NO_SERVICE` 0x8010001D: pcscd is not running.
    public static let noService = PCSCError(code: 0x8010_001D)
    /// `SCARD_E_SERVICE_STOPPED` 0x8010001E: pcscd stopped while we were connected.
    public static let serviceStopped = PCSCError(code: 0x8010_001E)
    /// `SCARD_E_NO_READERS_AVAILABLE` 0x8010002E: `SCardListReaders` found none.
    public static let noReadersAvailable = PCSCError(code: 0x8010_002E)
    /// `SCARD_W_UNRESPONSIVE_CARD` 0x80100066: the card did not answer the reset (mute).
    public static let unresponsiveCard = PCSCError(code: 0x8010_0066)
    /// `SCARD_W_UNPOWERED_CARD` 0x80100067: power-up failed (e.g. an ATR over 33 bytes).
    public static let unpoweredCard = PCSCError(code: 0x8010_0067)
    /// `SCARD_W_RESET_CARD` 0x80100068: another handle reset the card; reported once.
    public static let resetCard = PCSCError(code: 0x8010_0068)
    /// `SCARD_W_REMOVED_CARD` 0x80100069: the card left; this handle is dead.
    public static let removedCard = PCSCError(code: 0x8010_0069)

    /// The tag-level meaning of this PC/SC failure, for the tag procedures and the session:
    ///
    /// | PC/SC | ``/NFCBase/TagCommunicationError`` |
    /// | --- | --- |
    /// | `SCARD_W_REMOVED_CARD`, `SCARD_E_NO_SMARTCARD`, `SCARD_W_RESET_CARD`, `SCARD_E_NOT_TRANSACTED` | `.tagLost` |
    /// | `SCARD_W_UNRESPONSIVE_CARD`, `SCARD_W_UNPOWERED_CARD`, `SCARD_E_TIMEOUT` | `.noResponse` |
    /// | `SCARD_E_NO_SERVICE`, `SCARD_E_SERVICE_STOPPED`, `SCARD_F_COMM_ERROR` | `.readerFailure("pcscd stopped")` |
    /// | `SCARD_E_READER_UNAVAILABLE`, `SCARD_E_UNKNOWN_READER` | `.readerFailure("reader gone: …")` |
    /// | `SCARD_E_INSUFFICIENT_BUFFER` | `.malformedResponse` |
    /// | anything else | `.readerFailure(<name>)` |
    ///
    /// The other half of "tag lost" on vpcd, an `SCardTransmit` that succeeds with 0 bytes,
    /// is not an error code; ``PCSCAPDUTransport`` maps it.
    public var tagCommunicationError: TagCommunicationError {
        switch self {
        case .removedCard, .noSmartcard, .resetCard, .notTransacted: .tagLost
        case .unresponsiveCard, .unpoweredCard, .timeout: .noResponse
        case .noService, .serviceStopped, .commError: .readerFailure("pcscd stopped")
        case .readerUnavailable, .unknownReader: .readerFailure("reader gone: \(name)")
        case .insufficientBuffer: .malformedResponse("answer larger than the receive buffer")
        default: .readerFailure(name)
        }
    }
}
