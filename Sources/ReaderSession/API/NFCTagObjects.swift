public import Foundation
public import NFCTags
import Synchronization

/// Core NFC `NFCTagType`.
public enum NFCTagType: UInt, Sendable, Hashable {
    case iso15693 = 1
    case feliCa = 2
    case iso7816Compatible = 3
    case miFare = 4
}

/// Core NFC's Objective-C `NFCTag` protocol, which Swift names `__NFCTag` (the Swift name
/// `NFCTag` is the enum): what every tag object has.
public protocol __NFCTag: NSObjectProtocol, NSSecureCoding, NSCopying, Sendable {
    /// Core NFC `type`.
    var type: NFCTagType { get }
    /// Core NFC `session`: the session that delivered the tag (held weakly).
    var session: (any NFCReaderSessionProtocol)? { get }
    /// Core NFC `isAvailable`: in the field and of the session's current polling.
    var isAvailable: Bool { get }
    /// Core NFC `asNFCISO15693Tag()`: self when it is an ISO 15693 tag, else `nil`.
    func asNFCISO15693Tag() -> (any NFCISO15693Tag)?
    /// Core NFC `asNFCISO7816Tag()`.
    func asNFCISO7816Tag() -> (any NFCISO7816Tag)?
    /// Core NFC `asNFCFeliCaTag()`.
    func asNFCFeliCaTag() -> (any NFCFeliCaTag)?
    /// Core NFC `asNFCMiFareTag()`.
    func asNFCMiFareTag() -> (any NFCMiFareTag)?
}

/// Core NFC `NFCNDEFTag`: a tag object whose NDEF area can be queried, read and written.
/// Valid until the session ends or `restartPolling()` (then 103 / 104). Completion
/// handlers run on the session's delegate queue. The handlers are not `@Sendable`, as Core
/// NFC's are not: the session calls them only on its delegate queue.
public protocol NFCNDEFTag: NSObjectProtocol, NSSecureCoding, NSCopying, Sendable {
    /// True while the tag is in the field and its session generation is current.
    var isAvailable: Bool { get }
    /// Core NFC `queryNDEFStatus(completionHandler:)`: status and capacity in bytes.
    func queryNDEFStatus(completionHandler: @escaping (NFCNDEFStatus, Int, (any Error)?) -> Void)
    /// Core NFC `readNDEF(completionHandler:)`. An NDEF-formatted tag holding an empty
    /// message fails with 403 `ndefReaderSessionErrorZeroLengthMessage`.
    func readNDEF(completionHandler: @escaping (NFCNDEFMessage?, (any Error)?) -> Void)
    /// Core NFC `writeNDEF(_:completionHandler:)`: 400 read-only, 402 too large.
    func writeNDEF(_ ndefMessage: NFCNDEFMessage, completionHandler: @escaping ((any Error)?) -> Void)
    /// Core NFC `writeLock(completionHandler:)`: makes the tag read-only for good. Not
    /// modelled on this bench: fails with 1 `readerErrorUnsupportedFeature` and touches
    /// nothing (a bench never locks a tag on an app's behalf).
    func writeLock(completionHandler: @escaping ((any Error)?) -> Void)
}

extension NFCNDEFTag {
    /// Async `queryNDEFStatus()`.
    public func queryNDEFStatus() async throws -> (NFCNDEFStatus, Int) {
        try await withCheckedThrowingContinuation { k in
            queryNDEFStatus { s, c, e in if let e { k.resume(throwing: e) } else { k.resume(returning: (s, c)) } }
        }
    }
    /// Async `readNDEF()`.
    public func readNDEF() async throws -> NFCNDEFMessage {
        try await withCheckedThrowingContinuation { k in
            readNDEF { m, e in
                if let m {
                    k.resume(returning: m)
                } else {
                    k.resume(throwing: e ?? NFCReaderError(.readerTransceiveErrorTagResponseError))
                }
            }
        }
    }
    /// Async `writeNDEF(_:)`.
    public func writeNDEF(_ ndefMessage: NFCNDEFMessage) async throws {
        try await withCheckedThrowingContinuation { (k: CheckedContinuation<Void, any Error>) in
            writeNDEF(ndefMessage) { e in if let e { k.resume(throwing: e) } else { k.resume() } }
        }
    }
    /// Async `writeLock()`.
    public func writeLock() async throws {
        try await withCheckedThrowingContinuation { (k: CheckedContinuation<Void, any Error>) in
            writeLock { e in if let e { k.resume(throwing: e) } else { k.resume() } }
        }
    }
}

/// Core NFC `NFCMiFareFamily`.
public enum NFCMiFareFamily: UInt, Sendable, Hashable {
    case unknown = 1
    case ultralight = 2
    case plus = 3
    case desfire = 4
}

/// Core NFC `NFCMiFareTag`: a MIFARE / NFC Forum Type 2 tag.
public protocol NFCMiFareTag: __NFCTag, NFCNDEFTag {
    /// UID (7 bytes for Ultralight / NTAG).
    var identifier: Data { get }
    var mifareFamily: NFCMiFareFamily { get }
    /// Core NFC `historicalBytes`: the ATS's historical bytes of an ISO 14443-4 MIFARE
    /// (DESFire, Plus), `nil` for Ultralight.
    var historicalBytes: Data? { get }
    /// Core NFC `sendMiFareCommand(commandPacket:completionHandler:)`, CRC excluded: any
    /// frame reaches the tag (READ `30`, WRITE `A2`, GET_VERSION `60`, FAST_READ `3A`,
    /// READ_SIG `3C`, PWD_AUTH `1B`, READ_CNT `39`…) and its answer comes back (an ACK as
    /// `0A`). A NAK or silence fails with the model's ``ReaderSystemModel/miFareFailureCode``
    /// (100 `readerTransceiveErrorTagConnectionLost`, reported) and the connection is gone;
    /// a packet over ``ReaderSystemModel/maximumMiFareCommandLength`` fails with 105
    /// `readerTransceiveErrorPacketTooLong` before anything is sent. A DESFire delivered as
    /// MIFARE gets the frame as one ISO-DEP exchange.
    func sendMiFareCommand(commandPacket command: Data, completionHandler: @escaping (Data, (any Error)?) -> Void)
    /// Core NFC `sendMiFareISO7816Command(_:completionHandler:)`: an APDU to an ISO 7816
    /// compatible MIFARE (DESFire) over ISO-DEP; response data, SW1, SW2. On a tag without
    /// ISO-DEP (Ultralight) it fails with 1 `readerErrorUnsupportedFeature` (assumed).
    func sendMiFareISO7816Command(
        _ apdu: NFCISO7816APDU, completionHandler: @escaping (Data, UInt8, UInt8, (any Error)?) -> Void)
}

extension NFCMiFareTag {
    /// Async `sendMiFareCommand(commandPacket:)`.
    public func sendMiFareCommand(commandPacket command: Data) async throws -> Data {
        try await withCheckedThrowingContinuation { k in
            sendMiFareCommand(commandPacket: command) { d, e in
                if let e { k.resume(throwing: e) } else { k.resume(returning: d) }
            }
        }
    }
    /// Core NFC `sendMiFareCommand(commandPacket:resultHandler:)`.
    public func sendMiFareCommand(
        commandPacket command: Data, resultHandler: @escaping (Result<Data, any Error>) -> Void
    ) {
        sendMiFareCommand(commandPacket: command) { d, e in resultHandler(e.map { .failure($0) } ?? .success(d)) }
    }
    /// Async `sendMiFareISO7816Command(_:)`.
    public func sendMiFareISO7816Command(_ apdu: NFCISO7816APDU) async throws -> (Data, UInt8, UInt8) {
        try await withCheckedThrowingContinuation { k in
            sendMiFareISO7816Command(apdu) { d, s1, s2, e in
                if let e { k.resume(throwing: e) } else { k.resume(returning: (d, s1, s2)) }
            }
        }
    }
    /// Core NFC `sendMiFareISO7816Command(_:resultHandler:)`.
    public func sendMiFareISO7816Command(
        _ apdu: NFCISO7816APDU, resultHandler: @escaping (Result<NFCISO7816ResponseAPDU, any Error>) -> Void
    ) {
        sendMiFareISO7816Command(apdu) { d, s1, s2, e in resultHandler(NFCISO7816ResponseAPDU.result(d, s1, s2, e)) }
    }
    /// Core NFC's async `sendMiFareISO7816Command(_:) -> NFCISO7816ResponseAPDU`.
    public func sendMiFareISO7816Command(_ apdu: NFCISO7816APDU) async throws -> NFCISO7816ResponseAPDU {
        let (d, s1, s2): (Data, UInt8, UInt8) = try await sendMiFareISO7816Command(apdu)
        return NFCISO7816ResponseAPDU(statusWord1: s1, statusWord2: s2, payload: d.isEmpty ? nil : d)
    }
}

/// Core NFC `NFCISO7816Tag`: an ISO-DEP target taking APDUs.
public protocol NFCISO7816Tag: __NFCTag, NFCNDEFTag {
    var identifier: Data { get }
    /// Historical bytes of the ATS (ISO/IEC 14443-4 §5.2.7), if any (Type A).
    var historicalBytes: Data? { get }
    /// Core NFC `applicationData`: the ATQB's application data (Type B); `nil` for Type A.
    var applicationData: Data? { get }
    /// Core NFC `proprietaryApplicationDataCoding`: the ATQB's coding bit (Type B); false
    /// for Type A.
    var proprietaryApplicationDataCoding: Bool { get }
    /// Core NFC `initialSelectedAID`: the hex AID (one of the Info.plist's
    /// `select-identifiers`) the session selected when it discovered the tag.
    var initialSelectedAID: String { get }
    /// Core NFC `sendCommand(apdu:completionHandler:)`: response data, SW1, SW2. An APDU
    /// over ``ReaderSystemModel/maximumAPDULength`` fails with 105 before anything is sent.
    func sendCommand(
        apdu: NFCISO7816APDU, completionHandler: @escaping (Data, UInt8, UInt8, (any Error)?) -> Void)
}

extension NFCISO7816Tag {
    /// Async `sendCommand(apdu:)`.
    public func sendCommand(apdu: NFCISO7816APDU) async throws -> (Data, UInt8, UInt8) {
        try await withCheckedThrowingContinuation { k in
            sendCommand(apdu: apdu) { d, s1, s2, e in
                if let e { k.resume(throwing: e) } else { k.resume(returning: (d, s1, s2)) }
            }
        }
    }
    /// Core NFC `sendCommand(apdu:resultHandler:)`.
    public func sendCommand(
        apdu: NFCISO7816APDU, resultHandler: @escaping (Result<NFCISO7816ResponseAPDU, any Error>) -> Void
    ) {
        sendCommand(apdu: apdu) { d, s1, s2, e in resultHandler(NFCISO7816ResponseAPDU.result(d, s1, s2, e)) }
    }
    /// Core NFC's async `sendCommand(apdu:) -> NFCISO7816ResponseAPDU`.
    public func sendCommand(apdu: NFCISO7816APDU) async throws -> NFCISO7816ResponseAPDU {
        let (d, s1, s2): (Data, UInt8, UInt8) = try await sendCommand(apdu: apdu)
        return NFCISO7816ResponseAPDU(statusWord1: s1, statusWord2: s2, payload: d.isEmpty ? nil : d)
    }
}

/// Core NFC `NFCISO7816ResponseAPDU` (iOS 14): a response APDU's status words and data.
public struct NFCISO7816ResponseAPDU: Sendable, Hashable {
    public var statusWord1: UInt8
    public var statusWord2: UInt8
    public var payload: Data?

    public init(statusWord1: UInt8, statusWord2: UInt8, payload: Data?) {
        self.statusWord1 = statusWord1
        self.statusWord2 = statusWord2
        self.payload = payload
    }

    /// Apple's misspelt initialiser, deprecated there.
    @available(*, deprecated, renamed: "init(statusWord1:statusWord2:payload:)")
    public init(statusWord1: UInt8, statusWord2: UInt8, paylaod: Data?) {
        self.init(statusWord1: statusWord1, statusWord2: statusWord2, payload: paylaod)
    }

    static func result(_ d: Data, _ s1: UInt8, _ s2: UInt8, _ e: (any Error)?) -> Result<Self, any Error> {
        if let e { return .failure(e) }
        return .success(Self(statusWord1: s1, statusWord2: s2, payload: d.isEmpty ? nil : d))
    }
}

/// Core NFC `NFCTag`: the tag objects an ``NFCTagReaderSession`` delivers, one case per
/// family: `.miFare` and `.iso7816` for ISO 14443 targets, `.feliCa` (an ``NFCFeliCaTag``) for
/// a FeliCa card under `.iso18092` polling, on its first Info.plist system that answers, and
/// `.iso15693` (an ``NFCISO15693Tag``) under `.iso15693` polling.
public enum NFCTag: Sendable {
    case feliCa(any NFCFeliCaTag)
    case iso7816(any NFCISO7816Tag)
    case iso15693(any NFCISO15693Tag)
    case miFare(any NFCMiFareTag)

    /// The tag object as an NDEF tag.
    public var ndefTag: any NFCNDEFTag {
        switch self {
        case .feliCa(let t): t
        case .iso7816(let t): t
        case .iso15693(let t): t
        case .miFare(let t): t
        }
    }

    /// Core NFC `isAvailable`.
    public var isAvailable: Bool { ndefTag.isAvailable }
}

/// Core NFC `NFCTagCommandConfiguration`: retries for tag commands (ISO 15693's
/// configurations extend it).
// unchecked: not final (the ISO 15693 configurations extend it, as in Core NFC); its fields are guarded by `retries`
public class NFCTagCommandConfiguration: NSObject, NSCopying, @unchecked Sendable {
    private let retries = Mutex((maximumRetries: 0, retryInterval: TimeInterval(0)))
    /// Maximum number of retries, 0–256. Default 0.
    public var maximumRetries: Int {
        get { retries.withLock { $0.maximumRetries } }
        set { retries.withLock { $0.maximumRetries = newValue } }
    }
    /// Delay before a retry, in seconds. Default 0.
    public var retryInterval: TimeInterval {
        get { retries.withLock { $0.retryInterval } }
        set { retries.withLock { $0.retryInterval = newValue } }
    }

    public override init() { super.init() }

    public func copy(with zone: NSZone? = nil) -> Any {
        let c = NFCTagCommandConfiguration()
        c.maximumRetries = maximumRetries
        c.retryInterval = retryInterval
        return c
    }
}

/// Core NFC `NFCISO7816APDU` (ISO/IEC 7816-4 §5.1 command APDU). A class, as Core NFC's is
/// (`NSObject`, `NSCopying`); immutable, so it crosses threads freely. Equality compares the
/// fields.
public final class NFCISO7816APDU: NSObject, NSCopying, Sendable {
    public let instructionClass: UInt8
    public let instructionCode: UInt8
    public let p1Parameter: UInt8
    public let p2Parameter: UInt8
    public let data: Data?
    /// Ne: −1 = no Le field; 256 (short) / 65536 (extended) = the maximum.
    public let expectedResponseLength: Int

    public init(
        instructionClass: UInt8, instructionCode: UInt8, p1Parameter: UInt8, p2Parameter: UInt8,
        data: Data, expectedResponseLength: Int
    ) {
        self.instructionClass = instructionClass
        self.instructionCode = instructionCode
        self.p1Parameter = p1Parameter
        self.p2Parameter = p2Parameter
        self.data = data.isEmpty ? nil : data
        self.expectedResponseLength = expectedResponseLength
        super.init()
    }

    public func copy(with zone: NSZone? = nil) -> Any { self }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let o = object as? NFCISO7816APDU else { return false }
        return o.instructionClass == instructionClass && o.instructionCode == instructionCode
            && o.p1Parameter == p1Parameter && o.p2Parameter == p2Parameter && o.data == data
            && o.expectedResponseLength == expectedResponseLength
    }

    public override var hash: Int { bytes.hashValue }

    /// Parses a command APDU (cases 1–4, short or extended); `nil` when malformed.
    public convenience init?(data bytes: Data) {
        let b = [UInt8](bytes)
        guard b.count >= 4 else { return nil }
        var data: [UInt8] = []
        var ne = -1
        let body = b.count - 4
        if body == 0 {
        } else if body == 1 {
            ne = b[4] == 0 ? 256 : Int(b[4])
        } else if b[4] != 0 {
            let lc = Int(b[4])
            guard body == 1 + lc || body == 2 + lc else { return nil }
            data = Array(b[5..<(5 + lc)])
            if body == 2 + lc { ne = b[5 + lc] == 0 ? 256 : Int(b[5 + lc]) }
        } else {
            guard body >= 3 else { return nil }
            let n = Int(b[5]) << 8 | Int(b[6])
            if body == 3 {
                ne = n == 0 ? 65536 : n
            } else {
                guard n > 0, body == 3 + n || body == 5 + n else { return nil }
                data = Array(b[7..<(7 + n)])
                if body == 5 + n {
                    let le = Int(b[7 + n]) << 8 | Int(b[8 + n])
                    ne = le == 0 ? 65536 : le
                }
            }
        }
        self.init(
            instructionClass: b[0], instructionCode: b[1], p1Parameter: b[2], p2Parameter: b[3],
            data: Data(data), expectedResponseLength: ne)
    }

    /// The APDU's bytes: short form when Lc ≤ 255 and Ne ≤ 256, extended otherwise.
    public var bytes: [UInt8] {
        let d = data.map { [UInt8]($0) } ?? []
        var out = [instructionClass, instructionCode, p1Parameter, p2Parameter]
        let extended = d.count > 255 || expectedResponseLength > 256
        if !extended {
            if !d.isEmpty {
                out.append(UInt8(d.count))
                out += d
            }
            if expectedResponseLength > 0 { out.append(UInt8(expectedResponseLength & 0xFF)) }
        } else {
            out.append(0)
            if !d.isEmpty { out += [UInt8(d.count >> 8 & 0xFF), UInt8(d.count & 0xFF)] + d }
            if expectedResponseLength > 0 {
                let le = expectedResponseLength >= 65536 ? 0 : expectedResponseLength
                out += [UInt8(le >> 8 & 0xFF), UInt8(le & 0xFF)]
            }
        }
        return out
    }
}

// MARK: Implementation

/// What every tag object of a session is: a handle into a runtime plus activation data, the
/// NFCNDEFTag operations, and the connection rule. The app must `connect(to:)` it before any
/// operation (else 104), as in Core NFC; the session's machine keeps which tag is connected.
/// The concrete classes add each family's protocol: ``SessionTagObject`` (MiFare and ISO
/// 7816), ``SessionFeliCaTag`` and ``SessionISO15693Tag``.
// unchecked: not final (the three tag classes extend it); immutable after init: lets of Sendable values, a weak let
class SessionTag: NSObject, @unchecked Sendable {
    // Immutable after init.
    let runtime: ReaderSessionRuntime
    let handle: TagHandle
    let target: DetectedTarget
    let initialSelectedAID: String
    let deliver: @Sendable (@escaping @Sendable () -> Void) -> Void
    /// How the session delivered it (`.miFare` or `.iso7816Compatible`).
    let type: NFCTagType
    private weak let owner: NFCReaderSession?

    init(
        runtime: ReaderSessionRuntime, tag: DeliveredTag, type: NFCTagType = .miFare, session: NFCReaderSession?,
        deliver: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) {
        self.runtime = runtime
        self.handle = tag.handle
        self.target = tag.target
        self.initialSelectedAID = tag.initialSelectedAID ?? ""
        self.deliver = deliver
        self.type = type
        self.owner = session
        super.init()
    }

    /// Core NFC `session`.
    var session: (any NFCReaderSessionProtocol)? { owner }
    // NSSecureCoding, NSCopying: a tag object is a handle into a live session; a copy is the
    // same handle, and an archived one cannot come back (Core NFC's tags are not meant to
    // outlive their session either).
    func encode(with coder: NSCoder) { coder.encode(Data(target.uid), forKey: "identifier") }
    func copy(with zone: NSZone? = nil) -> Any { self }

    /// The tag object of the kind `tag` is (FeliCa, ISO 15693, or MiFare / ISO 7816 as `type`).
    static func make(
        runtime: ReaderSessionRuntime, tag: DeliveredTag, type: NFCTagType = .miFare, session: NFCReaderSession?,
        deliver: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) -> NFCTag {
        switch tag.target.kind {
        case .felica:
            return .feliCa(
                SessionFeliCaTag(runtime: runtime, tag: tag, type: .feliCa, session: session, deliver: deliver))
        case .iso15693:
            return .iso15693(
                SessionISO15693Tag(runtime: runtime, tag: tag, type: .iso15693, session: session, deliver: deliver))
        case .type2, .type4, .other:
            let o = SessionTagObject(runtime: runtime, tag: tag, type: type, session: session, deliver: deliver)
            return type == .iso7816Compatible ? .iso7816(o) : .miFare(o)
        }
    }

    var isAvailable: Bool { runtime.isAvailable(handle) }

    /// Runs an operation; the machine fails it with 104 unless this tag is the connected one.
    func run<R: Sendable>(
        _ name: String, kind: ReaderSessionMachine.OperationKind = .needsConnection,
        _ body: @escaping @Sendable (TagConnection, any NDEFTagProcedures) throws -> R,
        _ completion: @escaping @Sendable (Result<R, NFCReaderError>) -> Void
    ) {
        let deliver = self.deliver
        runtime.perform(name, on: handle, kind: kind, body) { r in deliver { completion(r) } }
    }

    func queryNDEFStatus(completionHandler: @escaping (NFCNDEFStatus, Int, (any Error)?) -> Void) {
        let completionHandler = Handler(completionHandler)
        run("queryNDEFStatus", { c, p in try p.queryNDEFStatus(c) }) { r in
            switch r {
            case .success(let v): completionHandler(v.status, v.capacity, nil)
            case .failure(let e): completionHandler(.notSupported, 0, e)
            }
        }
    }

    func readNDEF(completionHandler: @escaping (NFCNDEFMessage?, (any Error)?) -> Void) {
        let completionHandler = Handler(completionHandler)
        run(
            "readNDEF",
            { c, p -> NFCNDEFMessage in
                switch try p.readNDEF(c) {
                case .message(let m):
                    do { return try NFCNDEFMessage(bytes: m.bytes) } catch {
                        throw NFCReaderError(
                            .readerTransceiveErrorTagResponseError, detail: "malformed NDEF message: \(error)")
                    }
                case .empty: throw NFCReaderError(.ndefReaderSessionErrorZeroLengthMessage)
                case .notNDEF: throw NFCReaderError(.readerErrorUnsupportedFeature, detail: "the tag has no NDEF area")
                case .failed(let code): throw NFCReaderError(code)
                }
            }
        ) { r in
            switch r {
            case .success(let m): completionHandler(m, nil)
            case .failure(let e): completionHandler(nil, e)
            }
        }
    }

    func writeNDEF(_ message: NFCNDEFMessage, completionHandler: @escaping ((any Error)?) -> Void) {
        let completionHandler = Handler(completionHandler)
        run("writeNDEF", { c, p in try p.writeNDEF(NDEFMessageBytes(message.bytes), c) }) { r in
            switch r {
            case .success: completionHandler(nil)
            case .failure(let e): completionHandler(e)
            }
        }
    }

    func writeLock(completionHandler: @escaping ((any Error)?) -> Void) {
        let completionHandler = Handler(completionHandler)
        run(
            "writeLock",
            { _, _ in
                throw NFCReaderError(.readerErrorUnsupportedFeature, detail: "writeLock is not modelled on this bench")
            }
        ) { (r: Result<Void, NFCReaderError>) in
            switch r {
            case .success: completionHandler(nil)
            case .failure(let e): completionHandler(e)
            }
        }
    }

}

/// The tag object behind ``NFCMiFareTag`` and ``NFCISO7816Tag``.
// unchecked: restates SessionTag's conformance; adds no stored state
final class SessionTagObject: SessionTag, NFCMiFareTag, NFCISO7816Tag, @unchecked Sendable {
    override init(
        runtime: ReaderSessionRuntime, tag: DeliveredTag, type: NFCTagType = .miFare, session: NFCReaderSession?,
        deliver: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) {
        super.init(runtime: runtime, tag: tag, type: type, session: session, deliver: deliver)
    }

    func asNFCISO15693Tag() -> (any NFCISO15693Tag)? { nil }
    func asNFCISO7816Tag() -> (any NFCISO7816Tag)? { type == .iso7816Compatible ? self : nil }
    func asNFCFeliCaTag() -> (any NFCFeliCaTag)? { nil }
    func asNFCMiFareTag() -> (any NFCMiFareTag)? { type == .miFare ? self : nil }
    /// Type A targets only here: no ATQB.
    var applicationData: Data? { nil }
    var proprietaryApplicationDataCoding: Bool { false }

    static var supportsSecureCoding: Bool { true }
    required init?(coder: NSCoder) { nil }

    var identifier: Data { Data(target.uid) }
    /// The ATS's historical bytes: after TL, T0 and the interface bytes T0 announces
    /// (ISO/IEC 14443-4 §5.2).
    var historicalBytes: Data? {
        guard let ats = target.ats, ats.count >= 2 else { return nil }
        let length = min(Int(ats[0]), ats.count)
        let t0 = ats[1]
        var i = 2
        for bit: UInt8 in [0x10, 0x20, 0x40] where t0 & bit != 0 { i += 1 }
        return i <= length ? Data(ats[i..<length]) : nil
    }

    var mifareFamily: NFCMiFareFamily {
        switch target.kind {
        case .type2: .ultralight
        case .type4: .desfire
        case .felica, .iso15693, .other: .unknown
        }
    }

    func sendMiFareCommand(commandPacket: Data, completionHandler: @escaping (Data, (any Error)?) -> Void) {
        let completionHandler = Handler(completionHandler)
        let frame = [UInt8](commandPacket)
        let model = runtime.system.model
        run("sendMiFareCommand", { c, _ in try Self.miFareExchange(c, frame, model) }) { r in
            switch r {
            case .success(let d): completionHandler(d, nil)
            case .failure(let e): completionHandler(Data(), e)
            }
        }
    }

    /// One `sendMiFareCommand` exchange: the length rule, then the frame to the tag.
    static func miFareExchange(_ c: TagConnection, _ frame: [UInt8], _ model: ReaderSystemModel) throws -> Data {
        guard !frame.isEmpty else {
            throw NFCReaderError(.readerErrorInvalidParameterLength, detail: "empty command packet")
        }
        let limit = model.maximumMiFareCommandLength
        guard frame.count <= limit else {
            throw NFCReaderError(
                .readerTransceiveErrorPacketTooLong, detail: "\(frame.count) bytes, more than \(limit)")
        }
        let t: any Type2TagTransport
        switch c {
        case .iso7816(let apdu): return Data(try apdu.transmit(frame))
        case .type2(let type2): t = type2
        case .felica, .iso15693:
            throw NFCReaderError(.readerErrorUnsupportedFeature, detail: "not a MIFARE tag")
        }
        let hex = frame.hexString()
        // The CRC_A rule (ReaderSystemModel.MiFareCRC): what the tag hears, or nothing when
        // the frame reaches it with a bad CRC_A.
        guard let onAir = model.miFareFrameOnAir(frame) else {
            throw NFCReaderError(
                model.miFareFailureCode,
                detail: "no answer to " + hex
                    + ": it does not end in its CRC_A, and the phone adds none (mifare_crc appended)")
        }
        let answer: Type2Answer
        do {
            answer = try t.transceive(onAir)
        } catch let e as TagCommunicationError {
            guard case .nak(let v) = e else { throw e }
            answer = Type2Answer.nak(v)
        }
        switch answer {
        case .data(let d): return Data(d)
        case .ack: return Data([0x0A])
        case .nak(let v):
            let code = String(v, radix: 16, uppercase: true)
            throw NFCReaderError(model.miFareFailureCode, detail: "the tag answered NAK 0x" + code + " to " + hex)
        case .silent:
            throw NFCReaderError(model.miFareFailureCode, detail: "no answer to " + hex)
        }
    }

    func sendMiFareISO7816Command(
        _ apdu: NFCISO7816APDU, completionHandler: @escaping (Data, UInt8, UInt8, (any Error)?) -> Void
    ) {
        transmit("sendMiFareISO7816Command", apdu, Handler(completionHandler))
    }

    func sendCommand(
        apdu: NFCISO7816APDU, completionHandler: @escaping (Data, UInt8, UInt8, (any Error)?) -> Void
    ) {
        transmit("sendCommand", apdu, Handler(completionHandler))
    }

    private func transmit(
        _ name: String, _ apdu: NFCISO7816APDU, _ completionHandler: Handler<Data, UInt8, UInt8, (any Error)?>
    ) {
        let command = apdu.bytes
        let model = runtime.system.model
        let limit = model.maximumAPDULength
        run(
            name,
            { c, _ -> [UInt8] in
                guard command.count <= limit else {
                    throw NFCReaderError(
                        .readerTransceiveErrorPacketTooLong, detail: "\(command.count) bytes, more than \(limit)")
                }
                guard case .iso7816(let t) = c else {
                    throw NFCReaderError(.readerErrorUnsupportedFeature, detail: "not an ISO 7816 tag")
                }
                if let aid = model.forbiddenSelection(in: command) {
                    throw NFCReaderError(
                        .readerErrorSecurityViolation,
                        detail:
                            "SELECT of \(aid.isEmpty ? "an empty AID" : aid.hexString()) outside the Info.plist select-identifiers; it was not sent"
                    )
                }
                let r = try t.transmit(command)
                guard r.count >= 2 else {
                    throw NFCReaderError(
                        .readerTransceiveErrorTagResponseError, detail: "response shorter than SW1 SW2")
                }
                return r
            }
        ) { r in
            switch r {
            case .success(let b): completionHandler(Data(b.dropLast(2)), b[b.count - 2], b[b.count - 1], nil)
            case .failure(let e): completionHandler(Data(), 0, 0, e)
            }
        }
    }
}

extension NSObjectProtocol {
    /// Objective-C's `isKind(of:)` as Core NFC's tag protocols inherit it from
    /// `NSObjectProtocol` on Apple platforms (Foundation on Linux has it on `NSObject` only):
    /// true when this object is of `type`, a class or a protocol such as `NFCFeliCaTag.self`.
    public func isKind<T>(of type: T.Type) -> Bool { self is T }
}
