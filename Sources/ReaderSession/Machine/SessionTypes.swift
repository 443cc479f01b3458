public import NFCTags

/// Which Core NFC session the machine plays.
///
/// - `ndef(invalidateAfterFirstRead:)`: `NFCNDEFReaderSession` whose delegate implements only
///   `readerSession(_:didDetectNDEFs:)` (read-only mode: messages, no tag objects).
/// - `ndefReadWrite`: `NFCNDEFReaderSession` whose delegate implements
///   `readerSession(_:didDetect:)` (tag objects; `invalidateAfterFirstRead` is ignored, as in
///   Core NFC).
/// - `tag(_:)`: `NFCTagReaderSession(pollingOption:delegate:queue:)`.
public enum ReaderSessionKind: Sendable, Hashable {
    case ndef(invalidateAfterFirstRead: Bool)
    case ndefReadWrite
    case tag(NFCPollingOption)

    /// True when the session delivers tag objects (read-write NDEF and tag sessions).
    public var deliversTags: Bool {
        switch self {
        case .ndef: false
        case .ndefReadWrite, .tag: true
        }
    }
}

/// Core NFC's `NFCTagReaderSession.PollingOption`: the RF technologies to poll for.
public struct NFCPollingOption: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// ISO/IEC 14443 Type A and B (MIFARE, ISO 7816 over ISO-DEP).
    public static let iso14443 = NFCPollingOption(rawValue: 1 << 0)
    /// ISO/IEC 15693 vicinity cards.
    public static let iso15693 = NFCPollingOption(rawValue: 1 << 1)
    /// ISO/IEC 18092 / FeliCa.
    public static let iso18092 = NFCPollingOption(rawValue: 1 << 2)
    /// PACE (iOS 16): polling for travel documents with PACE.
    public static let pace = NFCPollingOption(rawValue: 1 << 3)
}

/// A target one presentation of a tag in the field; unique per presentation (a tag that
/// leaves and comes back gets a new one). Backends choose the values.
public struct DetectedTargetID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "#\(rawValue)" }
}

/// A tag object as the session delivered it: the target plus the polling generation it
/// was delivered in. `restartPolling()` bumps the generation, which makes every earlier
/// handle stale (`readerTransceiveErrorTagNotConnected`, 104).
public struct TagHandle: Sendable, Hashable, CustomStringConvertible {
    public let target: DetectedTargetID
    public let generation: UInt32
    public init(target: DetectedTargetID, generation: UInt32) {
        self.target = target
        self.generation = generation
    }
    public var description: String { "\(target)@g\(generation)" }
}

/// Names one operation the app started on a tag object (connect, read, write, transceive),
/// so its completion can be matched. Chosen by the runtime, increasing per session.
public struct TagOperationID: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "op\(rawValue)" }
}

/// The raw bytes of one NDEF message (NFC Forum NDEF 1.0 §3), as read from a tag's NDEF
/// TLV (Type 2) or NDEF file (Type 4). Kept as bytes here; NFCTags parses the records.
public struct NDEFMessageBytes: Sendable, Hashable, CustomStringConvertible {
    public let bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public var description: String { "NDEF[\(bytes.count) B]" }

    /// True when the bytes parse as an NDEF message (NFCTags' strict parser, NFC Forum
    /// NDEF 1.0 §3) with at least one record that is not the empty record (TNF 0).
    public var isWellFormedNonEmpty: Bool {
        guard let m = try? NFCNDEFMessage(bytes: bytes) else { return false }
        return m.records.contains { $0.typeNameFormat != .empty }
    }

    /// True when the bytes parse as an NDEF message (NFC Forum NDEF 1.0 §3), whatever its
    /// records: a message of one empty record (TNF 0, `D0 00 00`) is one. Read-only mode
    /// delivers such a message (``ReaderSessionMachine/ndefReadFinished(target:outcome:)``).
    public var isWellFormed: Bool { message != nil }

    /// The parsed message, or `nil` when the bytes do not parse.
    public var message: NFCNDEFMessage? { try? NFCNDEFMessage(bytes: bytes) }
}

/// What reading a tag's NDEF area found (Core NFC `NFCNDEFStatus` plus the message).
public enum NDEFReadOutcome: Sendable, Hashable {
    /// A message (NDEF TLV of length > 0): well-formed or not, empty records included.
    case message(NDEFMessageBytes)
    /// The tag is NDEF-formatted but holds an empty message (NDEF TLV of length 0, NLEN 0).
    case empty
    /// The tag has no NDEF area (no capability container, no NDEF application).
    case notNDEF
    /// The read failed; the code says why (100 lost, 102 response error...).
    case failed(NFCReaderError.Code)
}

/// How an operation on a tag object ended, as the runtime reports it to the machine.
public enum TagOperationResult: Sendable, Hashable {
    /// Done; the runtime holds the value to hand back.
    case success
    /// `readNDEF` found an NDEF-formatted tag with an empty message (→ 403).
    case emptyNDEFMessage
    /// Failed with this code (100 when the tag left mid-operation, 102, 105, 40x...).
    case failed(NFCReaderError.Code)
}

/// Why a `begin` may not start the session; what the runtime learned before calling
/// ``ReaderSessionMachine/begin(at:admission:)``.
public enum SessionAdmission: Sendable, Hashable {
    /// The reader is free and the thermal model allows a session of this length.
    case granted(timeLimit: Duration)
    /// Another session holds the reader (this process's arbiter or another process's
    /// lock) → 203.
    case anotherSessionActive
    /// The thermal model refuses ("temporarily unavailable due to system resource
    /// constraints") → 203.
    case thermallyThrottled
    /// Refused for another reason: 1 (no reader / unsupported), 2 (security), 6 (radio off),
    /// 202 (a scripted system ending at `begin()`, or a begin in the background under
    /// ``ReaderSystemModel/BackgroundBegin/terminated``).
    case refused(NFCReaderError.Code)
    /// Another session holds the reader and the busy policy is `queue`: wait in the queue;
    /// a later ``ReaderSessionMachine/begin(at:admission:)`` brings the grant.
    case queued
    /// Begun but never active: no callback; ended with 201 after `timeLimit` (a quick
    /// restart that never becomes active), or never (`nil`: begun in the background).
    case dormant(timeLimit: Duration?)
}
