public import Foundation
import Synchronization

// Core NFC's Value Added Services session (NFCVASReaderSession.h, iOS 13): reads Apple Wallet
// passes from a VAS-capable terminal's point of view. Declared with Core NFC's shapes so app
// code compiles; not modelled: VAS needs Apple's VAS merchant entitlement and pass keys, which
// no bench reader or tag file stands for. `begin()` ends the session at once with 1
// `readerErrorUnsupportedFeature`, as Core NFC ends a session whose feature the device or app
// does not have.

/// Core NFC `NFCVASCommandConfiguration`: one pass type to ask the phone for.
public final class NFCVASCommandConfiguration: NSObject, NSCopying, Sendable {
    /// Core NFC `NFCVASCommandConfiguration.Mode` (`NFCVASMode`).
    public enum Mode: Int, Sendable, Hashable {
        case urlOnly = 0
        case normal = 1
    }
    /// Core NFC's older name.
    public typealias VASMode = Mode

    private let fields: Mutex<(mode: Mode, passTypeIdentifier: String, url: URL?)>
    public var mode: Mode {
        get { fields.withLock { $0.mode } }
        set { fields.withLock { $0.mode = newValue } }
    }
    public var passTypeIdentifier: String {
        get { fields.withLock { $0.passTypeIdentifier } }
        set { fields.withLock { $0.passTypeIdentifier = newValue } }
    }
    public var url: URL? {
        get { fields.withLock { $0.url } }
        set { fields.withLock { $0.url = newValue } }
    }

    public init(vasMode mode: Mode, passTypeIdentifier: String, url: URL?) {
        fields = Mutex((mode, passTypeIdentifier, url))
        super.init()
    }

    public func copy(with zone: NSZone? = nil) -> Any {
        NFCVASCommandConfiguration(vasMode: mode, passTypeIdentifier: passTypeIdentifier, url: url)
    }
}

/// Core NFC `NFCVASResponse`: one pass's answer.
public final class NFCVASResponse: NSObject, NSCopying, Sendable {
    /// Core NFC `NFCVASResponse.ErrorCode` (`NFCVASErrorCode`): the status word.
    public enum ErrorCode: Int, Sendable, Hashable {
        case success = 0x9000
        case dataNotFound = 0x6A83
        case dataNotActivated = 0x6287
        case wrongParameters = 0x6B00
        case wrongLCField = 0x6700
        case userIntervention = 0x6984
        case incorrectData = 0x6A80
        case unsupportedApplicationVersion = 0x6340
    }
    /// Core NFC's older name.
    public typealias VASErrorCode = ErrorCode

    public let status: ErrorCode
    public let vasData: Data
    public let mobileToken: Data

    init(status: ErrorCode, vasData: Data, mobileToken: Data) {
        self.status = status
        self.vasData = vasData
        self.mobileToken = mobileToken
        super.init()
    }

    public func copy(with zone: NSZone? = nil) -> Any { self }
}

/// Core NFC `NFCVASReaderSessionDelegate`.
public protocol NFCVASReaderSessionDelegate: NSObjectProtocol {
    /// Core NFC `readerSessionDidBecomeActive(_:)` (optional; empty by default here).
    func readerSessionDidBecomeActive(_ session: NFCVASReaderSession)
    /// Core NFC `readerSession(_:didInvalidateWithError:)`.
    func readerSession(_ session: NFCVASReaderSession, didInvalidateWithError error: any Error)
    /// Core NFC `readerSession(_:didReceive:)`.
    func readerSession(_ session: NFCVASReaderSession, didReceive responses: [NFCVASResponse])
}

extension NFCVASReaderSessionDelegate {
    public func readerSessionDidBecomeActive(_ session: NFCVASReaderSession) {}
}

/// Core NFC `NFCVASReaderSession` (not modelled: see above).
// unchecked: restates the base's conformance; its own stored state is two lets of Sendable values
public final class NFCVASReaderSession: NFCReaderSession, @unchecked Sendable {
    // unchecked: the app's delegate is not Sendable (as in Core NFC); weak, set once, called on the session's queue
    private final class Box: @unchecked Sendable {
        weak let value: (any NFCVASReaderSessionDelegate)?
        init(_ v: any NFCVASReaderSessionDelegate) { value = v }
    }
    private let delegateBox: Box
    /// The configurations given at creation.
    public let vasCommandConfigurations: [NFCVASCommandConfiguration]

    /// Core NFC `init(vasCommandConfigurations:delegate:queue:)`.
    public init(
        vasCommandConfigurations commandConfigurations: [NFCVASCommandConfiguration],
        delegate: any NFCVASReaderSessionDelegate, queue: dispatch_queue_t?
    ) {
        delegateBox = Box(delegate)
        vasCommandConfigurations = commandConfigurations
        super.init(kind: .tag(.iso14443), queue: queue, system: nil)
    }

    override var delegateObject: AnyObject? { delegateBox.value }

    /// Core NFC `readingAvailable`: false here (VAS is not modelled).
    public override class var readingAvailable: Bool { false }

    override func refuseWithoutSystem() {
        let box = delegateBox
        endUnmodelled("VAS reader sessions are not modelled (Apple's VAS entitlement)") { [self] e in
            box.value?.readerSession(self, didInvalidateWithError: e)
        }
    }
}
