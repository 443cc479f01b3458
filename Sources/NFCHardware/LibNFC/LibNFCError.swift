public import NFCTags

/// A libnfc failure: the `NFC_E*` code (`nfc.h`), the call that failed and libnfc's text
/// (`nfc_strerror`). Compares by code only.
public struct LibNFCError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An `NFC_E*` code.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        /// `NFC_EIO` (-1): input/output error (bad frame from the chip, unplugged device).
        public static let io = Code(rawValue: -1)
        /// `NFC_EINVARG` (-2): invalid argument.
        public static let invalidArgument = Code(rawValue: -2)
        /// `NFC_EDEVNOTSUPP` (-3): operation not supported by the device.
        public static let deviceNotSupported = Code(rawValue: -3)
        /// `NFC_ENOTSUCHDEV` (-4): no such device.
        public static let noSuchDevice = Code(rawValue: -4)
        /// `NFC_EOVFLOW` (-5): buffer overflow.
        public static let overflow = Code(rawValue: -5)
        /// `NFC_ETIMEOUT` (-6): the chip did not answer in time.
        public static let timeout = Code(rawValue: -6)
        /// `NFC_EOPABORTED` (-7): ended by `nfc_abort_command`.
        public static let aborted = Code(rawValue: -7)
        /// `NFC_ENOTIMPL` (-8): not (yet) implemented.
        public static let notImplemented = Code(rawValue: -8)
        /// `NFC_ETGRELEASED` (-10): the target was released (left, or the reader left).
        public static let targetReleased = Code(rawValue: -10)
        /// `NFC_ERFTRANS` (-20): RF transmission error (the target did not answer, or answered badly).
        public static let rfTransmission = Code(rawValue: -20)
        /// `NFC_EMFCAUTHFAIL` (-30): MIFARE authentication failed.
        public static let mifareAuthenticationFailed = Code(rawValue: -30)
        /// `NFC_ESOFT` (-80): software error (allocation, bad state).
        public static let software = Code(rawValue: -80)
        /// `NFC_ECHIP` (-90): the chip reported an error.
        public static let chip = Code(rawValue: -90)

        /// The C name, e.g. `NFC_ETIMEOUT`.
        public var name: String {
            switch rawValue {
            case -1: "NFC_EIO"
            case -2: "NFC_EINVARG"
            case -3: "NFC_EDEVNOTSUPP"
            case -4: "NFC_ENOTSUCHDEV"
            case -5: "NFC_EOVFLOW"
            case -6: "NFC_ETIMEOUT"
            case -7: "NFC_EOPABORTED"
            case -8: "NFC_ENOTIMPL"
            case -10: "NFC_ETGRELEASED"
            case -20: "NFC_ERFTRANS"
            case -30: "NFC_EMFCAUTHFAIL"
            case -80: "NFC_ESOFT"
            case -90: "NFC_ECHIP"
            default: "NFC_E?(\(rawValue))"
            }
        }
        public var description: String { "\(name) (\(rawValue))" }
    }

    public var code: Code
    /// The libnfc function that failed, e.g. `nfc_initiator_transceive_bytes`.
    public var operation: String
    /// `nfc_strerror` at the time of failure (or our own text when no device exists yet).
    public var message: String

    public init(code: Code, operation: String, message: String) {
        self.code = code
        self.operation = operation
        self.message = message
    }

    public var description: String { "\(operation): \(message) [\(code)]" }
    public static func == (a: Self, b: Self) -> Bool { a.code == b.code }
    public func hash(into h: inout Hasher) { h.combine(code) }

    /// The carrier-level error the tag procedures see (``/NFCBase/TagCommunicationError``):
    /// `NFC_ETGRELEASED` → `.tagLost`; `NFC_ETIMEOUT` and `NFC_ERFTRANS` → `.noResponse`
    /// (libnfc folds "no answer" and "bad answer" into ERFTRANS; the Type 2 transport
    /// tells a NAK apart itself); `NFC_EOVFLOW` → `.malformedResponse`; `NFC_EIO`,
    /// `NFC_EOPABORTED`, `NFC_ECHIP` and the rest → `.readerFailure`.
    public var tagCommunicationError: TagCommunicationError {
        switch code {
        case .targetReleased: .tagLost
        case .timeout, .rfTransmission: .noResponse
        case .overflow: .malformedResponse("answer longer than the receive buffer (\(message))")
        default: .readerFailure("\(code.name): \(message)")
        }
    }
}
