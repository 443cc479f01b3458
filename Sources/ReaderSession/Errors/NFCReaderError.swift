public import Foundation
public import NFCTags

/// Core NFC `NFCErrorDomain`: the domain of every ``NFCReaderError`` as an `NSError`.
public let NFCErrorDomain = "NFCError"
/// Core NFC `NFCISO15693TagResponseErrorKey`: in an error's `userInfo`, the ISO/IEC 15693-3
/// error code of the tag's response (a number).
public let NFCISO15693TagResponseErrorKey = "NFCISO15693TagResponseErrorKey"
/// Core NFC `NFCTagResponseUnexpectedLengthErrorKey`: in an error's `userInfo`, present when
/// the tag's response had an unexpected length.
public let NFCTagResponseUnexpectedLengthErrorKey = "NFCTagResponseUnexpectedLengthErrorKey"

/// An error of a reader session, shaped like Core NFC's `NFCReaderError`: a code with
/// Apple's raw value, bridged to `NSError` as Core NFC's is (`CustomNSError`): domain
/// `NFCError` (``NFCErrorDomain``), code = the raw value, `userInfo` with
/// `NSLocalizedDescription` (the text field reports show, ``Code/localizedDescription``),
/// `NSDebugDescription` (the bench's ``detail``, when there is one) and whatever the creator
/// passed. So `(error as NSError).code == 201` and `error.localizedDescription ==
/// "Session timeout"` hold as on an iPhone.
///
/// Source: Core NFC `NFCError.h` (iOS 26 SDK): `NFCReaderError.Code` raw values 1–8,
/// 100–105, 200–204, 300, 400–403. Two errors compare equal when their codes are equal
/// (Core NFC compares the bridged `NSError`s; the bench's details would make every error
/// unequal).
// unchecked: immutable; `extraUserInfo` is Core NFC's [String: Any] userInfo (numbers and strings here)
public struct NFCReaderError: CustomNSError, Hashable, @unchecked Sendable, CustomStringConvertible {
    /// Core NFC's `NFCReaderError.Code`, with Apple's raw values exactly.
    public enum Code: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        case readerErrorUnsupportedFeature = 1
        case readerErrorSecurityViolation = 2
        case readerErrorInvalidParameter = 3
        case readerErrorInvalidParameterLength = 4
        case readerErrorParameterOutOfBound = 5
        case readerErrorRadioDisabled = 6
        case readerErrorIneligible = 7
        case readerErrorAccessNotAccepted = 8
        case readerTransceiveErrorTagConnectionLost = 100
        case readerTransceiveErrorRetryExceeded = 101
        case readerTransceiveErrorTagResponseError = 102
        case readerTransceiveErrorSessionInvalidated = 103
        case readerTransceiveErrorTagNotConnected = 104
        case readerTransceiveErrorPacketTooLong = 105
        case readerSessionInvalidationErrorUserCanceled = 200
        case readerSessionInvalidationErrorSessionTimeout = 201
        case readerSessionInvalidationErrorSessionTerminatedUnexpectedly = 202
        case readerSessionInvalidationErrorSystemIsBusy = 203
        case readerSessionInvalidationErrorFirstNDEFTagRead = 204
        case tagCommandConfigurationErrorInvalidParameters = 300
        case ndefReaderSessionErrorTagNotWritable = 400
        case ndefReaderSessionErrorTagUpdateFailure = 401
        case ndefReaderSessionErrorTagSizeTooSmall = 402
        case ndefReaderSessionErrorZeroLengthMessage = 403

        /// The Core NFC case name, e.g. `readerSessionInvalidationErrorFirstNDEFTagRead`;
        /// the trace's and `--json`'s `reason` field.
        public var name: String {
            switch self {
            case .readerErrorUnsupportedFeature: "readerErrorUnsupportedFeature"
            case .readerErrorSecurityViolation: "readerErrorSecurityViolation"
            case .readerErrorInvalidParameter: "readerErrorInvalidParameter"
            case .readerErrorInvalidParameterLength: "readerErrorInvalidParameterLength"
            case .readerErrorParameterOutOfBound: "readerErrorParameterOutOfBound"
            case .readerErrorRadioDisabled: "readerErrorRadioDisabled"
            case .readerErrorIneligible: "readerErrorIneligible"
            case .readerErrorAccessNotAccepted: "readerErrorAccessNotAccepted"
            case .readerTransceiveErrorTagConnectionLost: "readerTransceiveErrorTagConnectionLost"
            case .readerTransceiveErrorRetryExceeded: "readerTransceiveErrorRetryExceeded"
            case .readerTransceiveErrorTagResponseError: "readerTransceiveErrorTagResponseError"
            case .readerTransceiveErrorSessionInvalidated: "readerTransceiveErrorSessionInvalidated"
            case .readerTransceiveErrorTagNotConnected: "readerTransceiveErrorTagNotConnected"
            case .readerTransceiveErrorPacketTooLong: "readerTransceiveErrorPacketTooLong"
            case .readerSessionInvalidationErrorUserCanceled: "readerSessionInvalidationErrorUserCanceled"
            case .readerSessionInvalidationErrorSessionTimeout: "readerSessionInvalidationErrorSessionTimeout"
            case .readerSessionInvalidationErrorSessionTerminatedUnexpectedly:
                "readerSessionInvalidationErrorSessionTerminatedUnexpectedly"
            case .readerSessionInvalidationErrorSystemIsBusy: "readerSessionInvalidationErrorSystemIsBusy"
            case .readerSessionInvalidationErrorFirstNDEFTagRead: "readerSessionInvalidationErrorFirstNDEFTagRead"
            case .tagCommandConfigurationErrorInvalidParameters: "tagCommandConfigurationErrorInvalidParameters"
            case .ndefReaderSessionErrorTagNotWritable: "ndefReaderSessionErrorTagNotWritable"
            case .ndefReaderSessionErrorTagUpdateFailure: "ndefReaderSessionErrorTagUpdateFailure"
            case .ndefReaderSessionErrorTagSizeTooSmall: "ndefReaderSessionErrorTagSizeTooSmall"
            case .ndefReaderSessionErrorZeroLengthMessage: "ndefReaderSessionErrorZeroLengthMessage"
            }
        }

        /// What happened, in a sentence (Apple's documentation wording where it has one).
        public var summary: String {
            switch self {
            case .readerErrorUnsupportedFeature: "The reader does not support this feature."
            case .readerErrorSecurityViolation: "Missing entitlement or a forbidden command."
            case .readerErrorInvalidParameter: "An input parameter is invalid."
            case .readerErrorInvalidParameterLength: "An input parameter has an invalid length."
            case .readerErrorParameterOutOfBound: "An input parameter is out of bounds."
            case .readerErrorRadioDisabled: "The NFC radio is disabled."
            case .readerErrorIneligible: "The device or app is not eligible for this feature."
            case .readerErrorAccessNotAccepted: "The user did not accept access to NFC."
            case .readerTransceiveErrorTagConnectionLost: "The connection to the tag was lost."
            case .readerTransceiveErrorRetryExceeded: "Too many retries."
            case .readerTransceiveErrorTagResponseError: "The tag answered with an error."
            case .readerTransceiveErrorSessionInvalidated: "The session is invalidated."
            case .readerTransceiveErrorTagNotConnected: "The tag is not connected (stale after restartPolling)."
            case .readerTransceiveErrorPacketTooLong: "The packet is longer than the tag or reader accepts."
            case .readerSessionInvalidationErrorUserCanceled:
                "The user canceled the session (or the app invalidated it)."
            case .readerSessionInvalidationErrorSessionTimeout: "The session's time limit elapsed."
            case .readerSessionInvalidationErrorSessionTerminatedUnexpectedly:
                "The session ended unexpectedly (the app left the foreground or the reader went away)."
            case .readerSessionInvalidationErrorSystemIsBusy:
                "The system is busy: another session is active, or NFC is temporarily unavailable due to system resource constraints."
            case .readerSessionInvalidationErrorFirstNDEFTagRead: "The first NDEF tag was read, as configured."
            case .tagCommandConfigurationErrorInvalidParameters: "The tag command configuration is invalid."
            case .ndefReaderSessionErrorTagNotWritable: "The tag is not writable."
            case .ndefReaderSessionErrorTagUpdateFailure: "Updating the tag failed."
            case .ndefReaderSessionErrorTagSizeTooSmall: "The tag's NDEF capacity is too small for the message."
            case .ndefReaderSessionErrorZeroLengthMessage: "The tag holds a zero-length NDEF message."
            }
        }

        public var description: String { "\(name) (\(rawValue))" }
    }

    /// The Core NFC code.
    public let code: Code
    /// Extra context (the transport failure behind a transceive error), or `nil`; in the
    /// bridged `NSError` under `NSDebugDescriptionErrorKey`.
    public let detail: String?
    private let extraUserInfo: [String: Any]

    public init(_ code: Code, detail: String? = nil) {
        self.code = code
        self.detail = detail
        self.extraUserInfo = [:]
    }

    /// Core NFC `init(_:userInfo:)`.
    public init(_ code: Code, userInfo: [String: Any]) {
        self.code = code
        self.detail = nil
        self.extraUserInfo = userInfo
    }

    /// Core NFC `errorDomain`: `"NFCError"`.
    public static var errorDomain: String { NFCErrorDomain }
    /// Core NFC `errorCode`: the code's raw value.
    public var errorCode: Int { code.rawValue }
    /// Core NFC `errorUserInfo`: `NSLocalizedDescription`, `NSDebugDescription` (when there is
    /// a detail) and the creator's entries (which win).
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: code.localizedDescription]
        if let detail { info[NSDebugDescriptionErrorKey] = detail }
        info.merge(extraUserInfo) { _, given in given }
        return info
    }
    /// Core NFC `userInfo` (the bridged error's).
    public var userInfo: [String: Any] { errorUserInfo }
    /// The text the bridged error's `localizedDescription` gives.
    public var localizedDescription: String { code.localizedDescription }

    public var description: String {
        if let detail { "\(code): \(code.summary) \(detail)" } else { "\(code): \(code.summary)" }
    }

    public static func == (a: NFCReaderError, b: NFCReaderError) -> Bool { a.code == b.code }
    public func hash(into h: inout Hasher) { h.combine(code) }
}
extension NFCReaderError {
    /// The Core NFC error a transport failure becomes.
    ///
    /// `tagLost`, `noResponse` → 100 `readerTransceiveErrorTagConnectionLost`;
    /// `nak`, `malformedResponse` → 102 `readerTransceiveErrorTagResponseError`;
    /// `packetTooLong` → 105 `readerTransceiveErrorPacketTooLong`;
    /// `readerFailure` → 100 as well (the tag is gone as far as the app can tell);
    /// `unsupportedCommand` → 1 `readerErrorUnsupportedFeature` (this bench's reader cannot
    /// carry the frame; an iPhone always can).
    public init(_ failure: TagCommunicationError) {
        switch failure {
        case .tagLost, .noResponse, .readerFailure:
            self.init(.readerTransceiveErrorTagConnectionLost, detail: failure.description)
        case .nak, .malformedResponse:
            self.init(.readerTransceiveErrorTagResponseError, detail: failure.description)
        case .packetTooLong:
            self.init(.readerTransceiveErrorPacketTooLong, detail: failure.description)
        case .unsupportedCommand:
            self.init(.readerErrorUnsupportedFeature, detail: failure.description)
        }
    }
}

extension NFCReaderError.Code {
    /// The bridged `NSError`'s `localizedDescription` for this code: the text iOS gives,
    /// where a field report shows it, else a short text of ours. Each case names its source
    /// ("reported: …" or "assumed: no report found").
    public var localizedDescription: String {
        switch self {
        // assumed: no report found
        case .readerErrorUnsupportedFeature: "Feature not supported"
        // reported: a Tangem SDK integration log, `Error Domain=NFCError Code=2 "Missing required entitlement" UserInfo={NSLocalizedDescription=Missing required entitlement}`
        case .readerErrorSecurityViolation: "Missing required entitlement"
        // assumed: no report found
        case .readerErrorInvalidParameter: "Invalid parameter"
        // assumed: no report found
        case .readerErrorInvalidParameterLength: "Invalid parameter length"
        // assumed: no report found
        case .readerErrorParameterOutOfBound: "Parameter out of bound"
        // assumed: no report found
        case .readerErrorRadioDisabled: "NFC radio is disabled"
        // assumed: no report found
        case .readerErrorIneligible: "Ineligible"
        // assumed: no report found
        case .readerErrorAccessNotAccepted: "Access not accepted"
        // reported: okadan/flutter-nfc-manager issue 35, `Error Domain=NFCError Code=100 "Tag connection lost" UserInfo={NSLocalizedDescription=Tag connection lost}`
        case .readerTransceiveErrorTagConnectionLost: "Tag connection lost"
        // assumed: no report found
        case .readerTransceiveErrorRetryExceeded: "Retry exceeded"
        // reported: a Tangem SDK log, `Error Domain=NFCError Code=102 "Tag response error / no response"`
        case .readerTransceiveErrorTagResponseError: "Tag response error / no response"
        // assumed: no report found
        case .readerTransceiveErrorSessionInvalidated: "Session invalidated"
        // assumed: no report found
        case .readerTransceiveErrorTagNotConnected: "Tag is not connected"
        // assumed: no report found
        case .readerTransceiveErrorPacketTooLong: "Packet too long"
        // reported: nfcim/flutter_nfc_kit issue 135, `PlatformException(409, SessionCanceled, Session invalidated by user, null)`
        case .readerSessionInvalidationErrorUserCanceled: "Session invalidated by user"
        // reported: a passport-reader app's error table, `Error Domain=NFCError Code=201 "Session timeout"`
        case .readerSessionInvalidationErrorSessionTimeout: "Session timeout"
        // reported: phonegap-nfc and passport-reader logs, `Error Domain=NFCError Code=202 "Session invalidated unexpectedly"`
        case .readerSessionInvalidationErrorSessionTerminatedUnexpectedly: "Session invalidated unexpectedly"
        // reported: a passport-reader app's error table, `Unknown(System resource unavailable)`; revtel/react-native-nfc-manager issue 699 quotes an older wording
        case .readerSessionInvalidationErrorSystemIsBusy: "System resource unavailable"
        // assumed: no report found
        case .readerSessionInvalidationErrorFirstNDEFTagRead: "First NDEF tag read"
        // assumed: no report found
        case .tagCommandConfigurationErrorInvalidParameters: "Invalid tag command configuration parameters"
        // assumed: no report found
        case .ndefReaderSessionErrorTagNotWritable: "NDEF tag is not writable"
        // assumed: no report found
        case .ndefReaderSessionErrorTagUpdateFailure: "NDEF tag update failure"
        // assumed: no report found
        case .ndefReaderSessionErrorTagSizeTooSmall: "NDEF tag size too small"
        // reported: a Flutter NFC plugin's comment, `Error Domain=NFCError Code=403 "NDEF tag does not contain any NDEF message"`
        case .ndefReaderSessionErrorZeroLengthMessage: "NDEF tag does not contain any NDEF message"
        }
    }
}

extension NFCReaderError {
    // Core NFC's static shortcuts (`NFCReaderError.readerSessionInvalidationErrorUserCanceled`),
    // as on every imported `NS_ERROR_ENUM`: `error.code == .x` and `case NFCReaderError.x` read alike.
    public static var readerErrorUnsupportedFeature: Code { .readerErrorUnsupportedFeature }
    public static var readerErrorSecurityViolation: Code { .readerErrorSecurityViolation }
    public static var readerErrorInvalidParameter: Code { .readerErrorInvalidParameter }
    public static var readerErrorInvalidParameterLength: Code { .readerErrorInvalidParameterLength }
    public static var readerErrorParameterOutOfBound: Code { .readerErrorParameterOutOfBound }
    public static var readerErrorRadioDisabled: Code { .readerErrorRadioDisabled }
    public static var readerErrorIneligible: Code { .readerErrorIneligible }
    public static var readerErrorAccessNotAccepted: Code { .readerErrorAccessNotAccepted }
    public static var readerTransceiveErrorTagConnectionLost: Code { .readerTransceiveErrorTagConnectionLost }
    public static var readerTransceiveErrorRetryExceeded: Code { .readerTransceiveErrorRetryExceeded }
    public static var readerTransceiveErrorTagResponseError: Code { .readerTransceiveErrorTagResponseError }
    public static var readerTransceiveErrorSessionInvalidated: Code { .readerTransceiveErrorSessionInvalidated }
    public static var readerTransceiveErrorTagNotConnected: Code { .readerTransceiveErrorTagNotConnected }
    public static var readerTransceiveErrorPacketTooLong: Code { .readerTransceiveErrorPacketTooLong }
    public static var readerSessionInvalidationErrorUserCanceled: Code { .readerSessionInvalidationErrorUserCanceled }
    public static var readerSessionInvalidationErrorSessionTimeout: Code {
        .readerSessionInvalidationErrorSessionTimeout
    }
    public static var readerSessionInvalidationErrorSessionTerminatedUnexpectedly: Code {
        .readerSessionInvalidationErrorSessionTerminatedUnexpectedly
    }
    public static var readerSessionInvalidationErrorSystemIsBusy: Code { .readerSessionInvalidationErrorSystemIsBusy }
    public static var readerSessionInvalidationErrorFirstNDEFTagRead: Code {
        .readerSessionInvalidationErrorFirstNDEFTagRead
    }
    public static var tagCommandConfigurationErrorInvalidParameters: Code {
        .tagCommandConfigurationErrorInvalidParameters
    }
    public static var ndefReaderSessionErrorTagNotWritable: Code { .ndefReaderSessionErrorTagNotWritable }
    public static var ndefReaderSessionErrorTagUpdateFailure: Code { .ndefReaderSessionErrorTagUpdateFailure }
    public static var ndefReaderSessionErrorTagSizeTooSmall: Code { .ndefReaderSessionErrorTagSizeTooSmall }
    public static var ndefReaderSessionErrorZeroLengthMessage: Code { .ndefReaderSessionErrorZeroLengthMessage }
}

extension NFCReaderError.Code {
    /// Core NFC `~=`: `case NFCReaderError.readerSessionInvalidationErrorUserCanceled:` in a
    /// `switch` over an `Error` matches an ``NFCReaderError`` with that code.
    public static func ~= (code: Self, error: any Error) -> Bool {
        (error as? NFCReaderError)?.code == code
    }
}
