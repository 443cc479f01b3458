public import NFCTags

/// An error of a reader session, shaped like Core NFC's `NFCReaderError`: a code with
/// Apple's raw value, a human description and the Core NFC case name.
///
/// Source: Core NFC `NFCError.h` (iOS 26 SDK): `NFCReaderError.Code` raw values 1–8,
/// 100–105, 200–204, 300, 400–403. Two errors compare equal when their codes are equal.
public struct NFCReaderError: Error, Sendable, Hashable, CustomStringConvertible {
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

    public let code: Code
    /// Extra context (the transport failure behind a transceive error), or `nil`.
    public let detail: String?

    public init(_ code: Code, detail: String? = nil) {
        self.code = code
        self.detail = detail
    }

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
