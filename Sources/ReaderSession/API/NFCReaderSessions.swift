public import Dispatch
public import Foundation
public import NFCTags
import Synchronization

/// Core NFC `NFCReaderSessionProtocol`: what every reader session offers.
public protocol NFCReaderSessionProtocol: NSObjectProtocol, Sendable {
    /// Core NFC `isReady`.
    var isReady: Bool { get }
    /// Core NFC `alertMessage`.
    var alertMessage: String { get set }
    /// Core NFC `begin()`.
    func begin()
    /// Core NFC `invalidate()`.
    func invalidate()
    /// Core NFC `invalidate(errorMessage:)`.
    func invalidate(errorMessage: String)
}

/// The type Core NFC's optional delegate methods return when a delegate does not
/// implement them; see ``NFCNDEFReaderSessionDelegate``. Not for app code.
public struct _NFCOptionalMethodNotImplemented: Sendable {
    public init() {}
}

/// Core NFC `NFCNDEFReaderSessionDelegate`. Called on the session's queue.
///
/// **Read-write mode from the delegate's shape, as in Core NFC.** Core NFC runs the session
/// in read-write mode (tag objects to `readerSession(_:didDetect:)`, no
/// `didDetectNDEFs`, no automatic 204) when the delegate *implements* the optional
/// `readerSession(_:didDetect:)`; it asks the Objective-C runtime (`respondsToSelector:`).
/// Swift on Linux has no optional requirements and no such runtime, so the compiler is asked
/// instead: the requirement returns the associated type `_ReadWriteWitness`, which the
/// compiler infers from the conformance: `Void` when the delegate type declares
/// `func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [NFCNDEFTag])` (the
/// iOS signature, nothing else to write), `_NFCOptionalMethodNotImplemented` when only the
/// protocol's default is there. The session reads that type at creation
/// (``NFCNDEFReaderSession/isReadWrite``). The iOS file compiles unchanged; the one
/// difference is that the protocol, having an associated type, is spelled
/// `any NFCNDEFReaderSessionDelegate` where code stores it in a variable (Swift 5 mode warns
/// on the bare name). A subclass that adds the method to a superclass that conforms without
/// it stays read-only: Swift calls the superclass's witness there, so the method would
/// never be called anyway.
///
/// The conforming type says `NFCNDEFReaderSessionTagDelegate` too, as before; that is the
/// same thing spelled as a protocol.
public protocol NFCNDEFReaderSessionDelegate: NSObjectProtocol {
    /// Inferred from the conformance; never written by app code. See the protocol's
    /// discussion.
    associatedtype _ReadWriteWitness = _NFCOptionalMethodNotImplemented
    /// Core NFC `readerSessionDidBecomeActive(_:)` (optional there; empty by default here).
    func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession)
    /// Core NFC `readerSession(_:didDetectNDEFs:)`: read-only mode's messages (required).
    func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage])
    /// Core NFC `readerSession(_:didDetect:)` (optional): implementing it makes the session
    /// read-write. Tag objects, several together when several are in the field; connect
    /// before reading or writing.
    func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [any NFCNDEFTag]) -> _ReadWriteWitness
    /// Core NFC `readerSession(_:didInvalidateWithError:)`: always last, exactly once.
    /// The error is an ``NFCReaderError``.
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error)
}

extension NFCNDEFReaderSessionDelegate {
    public func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession) {}
    /// The optional method's absence (read-only mode). Never called by the session.
    public func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [any NFCNDEFTag])
        -> _NFCOptionalMethodNotImplemented
    { _NFCOptionalMethodNotImplemented() }

    /// True when this delegate's type implements `readerSession(_:didDetect:)`.
    static var implementsDidDetectTags: Bool { _ReadWriteWitness.self != _NFCOptionalMethodNotImplemented.self }
}

/// A delegate that implements `readerSession(_:didDetect:)`: the session runs in
/// read-write mode and delivers tag objects instead of messages. Conforming to it is no
/// longer needed (implementing the method is what counts, as in Core NFC); kept for code
/// that says so, and it gives `didDetectNDEFs` an empty default.
public protocol NFCNDEFReaderSessionTagDelegate: NFCNDEFReaderSessionDelegate where _ReadWriteWitness == Void {
    /// Core NFC `readerSession(_:didDetect:)`.
    func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [any NFCNDEFTag])
}

extension NFCNDEFReaderSessionTagDelegate {
    public func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}
}

/// Core NFC `NFCTagReaderSessionDelegate`. Called on the session's queue. Its
/// `didBecomeActive` and `didDetect` are optional in Core NFC and change nothing by their
/// presence: their defaults here do nothing (a session whose delegate lacks `didDetect`
/// polls and delivers to no one, as on iOS).
public protocol NFCTagReaderSessionDelegate: NSObjectProtocol {
    /// Core NFC `tagReaderSessionDidBecomeActive(_:)`.
    func tagReaderSessionDidBecomeActive(_ session: NFCTagReaderSession)
    /// Core NFC `tagReaderSession(_:didDetect:)`.
    func tagReaderSession(_ session: NFCTagReaderSession, didDetect tags: [NFCTag])
    /// Core NFC `tagReaderSession(_:didInvalidateWithError:)`.
    func tagReaderSession(_ session: NFCTagReaderSession, didInvalidateWithError error: any Error)
}

extension NFCTagReaderSessionDelegate {
    public func tagReaderSessionDidBecomeActive(_ session: NFCTagReaderSession) {}
    public func tagReaderSession(_ session: NFCTagReaderSession, didDetect tags: [NFCTag]) {}
}

/// Core NFC `NFCReaderSessionDelegate`: the delegate of the legacy
/// ``NFCISO15693ReaderSession``.
public protocol NFCReaderSessionDelegate: NSObjectProtocol {
    /// Core NFC `readerSessionDidBecomeActive(_:)` (required there).
    func readerSessionDidBecomeActive(_ session: NFCReaderSession)
    /// Core NFC `readerSession(_:didDetect:)` (optional; empty by default here).
    func readerSession(_ session: NFCReaderSession, didDetect tags: [any __NFCTag])
    /// Core NFC `readerSession(_:didInvalidateWithError:)`.
    func readerSession(_ session: NFCReaderSession, didInvalidateWithError error: any Error)
}

extension NFCReaderSessionDelegate {
    public func readerSession(_ session: NFCReaderSession, didDetect tags: [any __NFCTag]) {}
}

/// Core NFC's Objective-C name for a dispatch queue, as its Swift signatures print it.
// swift-format-ignore: TypeNamesShouldBeCapitalized
// The C name, spelled as Core NFC's Swift interface prints it.
public typealias dispatch_queue_t = DispatchQueue

/// What an ``NFCNDEFReaderSession`` delivers, as a value (the `events` sequence).
public enum NFCNDEFReaderSessionEvent: Sendable {
    case didBecomeActive
    case didDetectNDEFs([NFCNDEFMessage])
    case didDetectTags([any NFCNDEFTag])
    case didInvalidate(NFCReaderError)
}

/// What an ``NFCTagReaderSession`` delivers, as a value (the `events` sequence).
public enum NFCTagReaderSessionEvent: Sendable {
    case didBecomeActive
    case didDetect([NFCTag])
    case didInvalidate(NFCReaderError)
}

/// The delegate is called only on the session's queue; the box carries it there.
// unchecked: the app's delegate is not Sendable (as in Core NFC); held weakly, set once, called on the session's queue
private final class NDEFDelegateBox: @unchecked Sendable {
    weak let value: (any NFCNDEFReaderSessionDelegate)?
    init(_ v: any NFCNDEFReaderSessionDelegate) { value = v }
}

// unchecked: the app's delegate is not Sendable (as in Core NFC); held weakly, set once, called on the session's queue
private final class TagDelegateBox: @unchecked Sendable {
    weak let value: (any NFCTagReaderSessionDelegate)?
    init(_ v: any NFCTagReaderSessionDelegate) { value = v }
}

// unchecked: the app's delegate is not Sendable (as in Core NFC); held weakly, set once, called on the session's queue
private final class LegacyDelegateBox: @unchecked Sendable {
    weak let value: (any NFCReaderSessionDelegate)?
    init(_ v: any NFCReaderSessionDelegate) { value = v }
}

/// Whether a delegate's type implements `readerSession(_:didDetect:)` (opens the existential).
private func implementsDidDetectTags<D: NFCNDEFReaderSessionDelegate>(_ d: D) -> Bool {
    D.implementsDidDetectTags
}

/// The name this class had before it took Core NFC's.
public typealias NFCReaderSessionCore = NFCReaderSession

/// Core NFC `NFCReaderSession`: shared by the session classes: the runtime, the queue,
/// alertMessage. An `NSObject`, as Core NFC's is.
// unchecked: not final (the session classes extend it, as in Core NFC); its state is Sendable lets and `alert`, a Mutex
public class NFCReaderSession: NSObject, NFCReaderSessionProtocol, @unchecked Sendable {
    let runtime: ReaderSessionRuntime?
    /// The delegate queue (Core NFC: `nil` → a private serial queue).
    public let sessionQueue: DispatchQueue
    private let alert = Mutex("")

    init(kind: ReaderSessionKind, queue: DispatchQueue?, system: NFCReaderSystem?) {
        self.sessionQueue = queue ?? DispatchQueue(label: "nfcbench.reader-session.delegate")
        // `DispatchQueue.main` is a new wrapper each time on Linux: compare labels.
        let onMain = queue.map { $0.label == DispatchQueue.main.label } ?? false
        self.runtime = system.map { ReaderSessionRuntime(kind: kind, system: $0, delegateQueueIsMain: onMain) }
        super.init()
    }

    /// Core NFC `delegate`: the session's delegate (held weakly), `nil` once it is gone.
    public var delegate: Any? { delegateObject }
    var delegateObject: AnyObject? { nil }

    /// Core NFC `readingAvailable`: true when a reader system is installed.
    public class var readingAvailable: Bool { NFCReaderSystem.current != nil }

    /// Core NFC `alertMessage`: the sheet's text. Set before `begin()` or while the session
    /// is valid (then the sheet changes); ignored after the end.
    public var alertMessage: String {
        get { alert.withLock { $0 } }
        set {
            alert.withLock { $0 = newValue }
            runtime?.alertMessageChanged(newValue)
        }
    }

    /// Core NFC `isReady`: true between `didBecomeActive` and the end.
    public var isReady: Bool { runtime?.isReady ?? false }

    /// Core NFC `begin()`: starts polling and shows the sheet, or ends at once (203 busy or
    /// throttled, 1 when no reader system is installed). With the system's model: waits in
    /// the queue (busy policy `queue`), does nothing in the background (reported), meets the
    /// quick-restart window; on a session that already ended the old ending comes again
    /// (reported; ``ReaderSystemModel/InvalidatedBegin``).
    public func begin() {
        guard let runtime else { return refuseWithoutSystem() }
        runtime.begin(alertMessage: alertMessage)
    }

    /// Core NFC `invalidate()`: ends the session with 200.
    public func invalidate() { runtime?.invalidate(errorMessage: nil) }

    /// Core NFC `invalidate(errorMessage:)`: shows `errorMessage`, ends with 200.
    public func invalidate(errorMessage: String) { runtime?.invalidate(errorMessage: errorMessage) }

    /// Core NFC `restartPolling()`: rediscovers tags (tag objects from before become
    /// invalid). No effect in read-only NDEF mode or after the end.
    public func restartPolling() { runtime?.restartPolling() }

    func refuseWithoutSystem() {}

    /// Ends a session of a kind this bench does not model: its delegate's
    /// `didInvalidateWithError` gets 1 `readerErrorUnsupportedFeature` on the session's queue,
    /// as Core NFC ends a session whose feature the device or app does not have.
    func endUnmodelled(_ detail: String, _ tell: @escaping @Sendable (NFCReaderError) -> Void) {
        sessionQueue.async { tell(NFCReaderError(.readerErrorUnsupportedFeature, detail: detail)) }
    }

    func deliverer() -> @Sendable (@escaping @Sendable () -> Void) -> Void {
        let q = sessionQueue
        guard let runtime else { return { work in q.async(execute: work) } }
        return { work in runtime.deliverAsync(on: q, work) }
    }
}

/// Core NFC `NFCNDEFReaderSession`.
// unchecked: restates the base's conformance; its own state is lets of Sendable values
public final class NFCNDEFReaderSession: NFCReaderSessionCore, @unchecked Sendable {
    private let delegateBox: NDEFDelegateBox
    private let continuation: AsyncStream<NFCNDEFReaderSessionEvent>.Continuation
    /// The session's events as a sequence (one consumer); finishes after `didInvalidate`.
    public let events: AsyncStream<NFCNDEFReaderSessionEvent>
    /// True when the delegate implements `readerSession(_:didDetect:)` (read-write mode,
    /// as Core NFC decides; see ``NFCNDEFReaderSessionDelegate``).
    public let isReadWrite: Bool

    /// Core NFC `init(delegate:queue:invalidateAfterFirstRead:)`, against
    /// ``NFCReaderSystem/current``. The delegate is held weakly.
    public convenience init(
        delegate: any NFCNDEFReaderSessionDelegate, queue: dispatch_queue_t?, invalidateAfterFirstRead: Bool
    ) {
        self.init(
            delegate: delegate, queue: queue, invalidateAfterFirstRead: invalidateAfterFirstRead,
            system: NFCReaderSystem.current)
    }

    /// As Core NFC's initialiser, against an explicit system (tests, several benches).
    public init(
        delegate: any NFCNDEFReaderSessionDelegate, queue: DispatchQueue?, invalidateAfterFirstRead: Bool,
        system: NFCReaderSystem?
    ) {
        delegateBox = NDEFDelegateBox(delegate)
        isReadWrite = implementsDidDetectTags(delegate)
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        super.init(
            kind: isReadWrite ? .ndefReadWrite : .ndef(invalidateAfterFirstRead: invalidateAfterFirstRead),
            queue: queue, system: system)
        runtime?.attach(owner: self) { [weak self] e in self?.deliver(e) }
    }

    override var delegateObject: AnyObject? { delegateBox.value }

    private func deliver(_ event: RuntimeEvent) {
        guard let runtime else { return }
        let box = delegateBox
        let k = continuation
        let deliver = deliverer()
        runtime.deliverAsync(on: sessionQueue) { [self] in
            switch event {
            case .didBecomeActive:
                box.value?.readerSessionDidBecomeActive(self)
                k.yield(.didBecomeActive)
            case .didDetectNDEFs(let raw):
                let m = raw.compactMap(\.message)
                box.value?.readerSession(self, didDetectNDEFs: m)
                k.yield(.didDetectNDEFs(m))
            case .didDetectTags(let delivered):
                let tags: [any NFCNDEFTag] = delivered.map {
                    SessionTag.make(runtime: runtime, tag: $0, session: self, deliver: deliver).ndefTag
                }
                if isReadWrite, let d = box.value { _ = d.readerSession(self, didDetect: tags) }
                k.yield(.didDetectTags(tags))
            case .didInvalidate(let e):
                box.value?.readerSession(self, didInvalidateWithError: e)
                k.yield(.didInvalidate(e))
                k.finish()
            }
        }
    }

    override func refuseWithoutSystem() {
        let box = delegateBox
        let k = continuation
        sessionQueue.async { [self] in
            let e = NFCReaderError(.readerErrorUnsupportedFeature, detail: "no NFCReaderSystem installed")
            box.value?.readerSession(self, didInvalidateWithError: e)
            k.yield(.didInvalidate(e))
            k.finish()
        }
    }

    /// Core NFC `connect(to:completionHandler:)`: connects a tag object delivered by this
    /// session; 104 when stale, 103 after the end, 100 when the tag left.
    public func connect(to tag: any NFCNDEFTag, completionHandler: @escaping ((any Error)?) -> Void) {
        Self.connect(tag, runtime: runtime, deliver: deliverer(), Handler(completionHandler))
    }

    /// Async `connect(to:)`.
    public func connect(to tag: any NFCNDEFTag) async throws {
        try await withCheckedThrowingContinuation { (k: CheckedContinuation<Void, any Error>) in
            connect(to: tag) { e in if let e { k.resume(throwing: e) } else { k.resume() } }
        }
    }

    static func connect(
        _ tag: any NFCNDEFTag, runtime: ReaderSessionRuntime?,
        deliver: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
        _ completion: Handler<(any Error)?>
    ) {
        guard let t = tag as? SessionTag, let runtime, t.runtime === runtime else {
            return deliver {
                completion(NFCReaderError(.readerErrorInvalidParameter, detail: "tag from another session"))
            }
        }
        t.run("connect", kind: .connect, { _, _ in true }) { r in
            switch r {
            case .success: completion(nil)
            case .failure(let e): completion(e)
            }
        }
    }
}

/// Core NFC `NFCTagReaderSession`.
///
/// ISO-DEP targets: with ISO 7816 applications to select (the app's
/// ``ReaderSystemModel/iso7816SelectIdentifiers``, narrowed by ``Configuration``), the
/// session SELECTs them in order and delivers the tag as `.iso7816` with
/// `initialSelectedAID` after the first success, and not at all when none succeeds
/// (documented, `NFCISO7816Tag`); with none, as `.miFare` of family `.desfire` (documented
/// for DESFire on `NFCMiFareTag`). One tag is connected at a time (``connectedTag``).
// unchecked: restates the base's conformance; its own state is lets of Sendable values and `delivered`, a Mutex
public final class NFCTagReaderSession: NFCReaderSessionCore, @unchecked Sendable {
    /// Core NFC `NFCTagReaderSession.PollingOption`.
    public typealias PollingOption = NFCPollingOption

    /// Core NFC `NFCTagReaderSession.Configuration` (iOS 26.4): applied at `begin()` and at
    /// `restartPolling(configuration:)` (that one does not persist).
    public struct Configuration: Sendable, Hashable {
        /// RF polling types to perform tag discovery.
        public var pollingOption: PollingOption
        /// ISO 7816 AIDs (hex) used in tag detection: a subset of the Info.plist's
        /// `com.apple.developer.nfc.readersession.iso7816.select-identifiers`; unknown
        /// entries and later duplicates are dropped; empty means every declared one.
        public var iso7816SelectIdentifiers: [String]
        /// FeliCa system codes (hex) used in tag detection with `.iso18092`: a subset of the
        /// Info.plist's `com.apple.developer.nfc.readersession.felica.systemcodes`; unknown
        /// entries and later duplicates are dropped; empty means every declared one
        /// (``ReaderSystemModel/feliCaSystemCodes``).
        public var feliCaSystemCodes: [String]

        public init(
            pollingOption: PollingOption, iso7816SelectIdentifiers: [String] = [], feliCaSystemCodes: [String] = []
        ) {
            self.pollingOption = pollingOption
            self.iso7816SelectIdentifiers = iso7816SelectIdentifiers
            self.feliCaSystemCodes = feliCaSystemCodes
        }
    }

    private let delegateBox: TagDelegateBox
    private let continuation: AsyncStream<NFCTagReaderSessionEvent>.Continuation
    private let delivered = Mutex<[TagHandle: NFCTag]>([:])
    /// The session's events as a sequence (one consumer); finishes after `didInvalidate`.
    public let events: AsyncStream<NFCTagReaderSessionEvent>
    public let pollingOption: PollingOption
    /// The configuration given at creation (`init(configuration:…)`), or one made from the
    /// polling option.
    public let configuration: Configuration

    /// Core NFC `init?(pollingOption:delegate:queue:)` (deprecated in iOS 26.4), against
    /// ``NFCReaderSystem/current``. `nil` for an empty polling option (Core NFC returns nil
    /// for invalid options).
    public convenience init?(
        pollingOption: PollingOption, delegate: any NFCTagReaderSessionDelegate, queue: dispatch_queue_t? = nil
    ) {
        self.init(pollingOption: pollingOption, delegate: delegate, queue: queue, system: NFCReaderSystem.current)
    }

    /// As Core NFC's initialiser, against an explicit system.
    public convenience init?(
        pollingOption: PollingOption, delegate: any NFCTagReaderSessionDelegate, queue: DispatchQueue?,
        system: NFCReaderSystem?
    ) {
        self.init(
            configuration: Configuration(pollingOption: pollingOption), delegate: delegate, queue: queue,
            system: system)
    }

    /// Core NFC `init(configuration:delegate:queue:)` (iOS 26.4), against
    /// ``NFCReaderSystem/current``. `nil` for an empty polling option.
    public convenience init?(
        configuration: Configuration, delegate: any NFCTagReaderSessionDelegate, queue: DispatchQueue? = nil
    ) {
        self.init(configuration: configuration, delegate: delegate, queue: queue, system: NFCReaderSystem.current)
    }

    /// As Core NFC's initialiser, against an explicit system.
    public init?(
        configuration: Configuration, delegate: any NFCTagReaderSessionDelegate, queue: DispatchQueue?,
        system: NFCReaderSystem?
    ) {
        guard !configuration.pollingOption.isEmpty else { return nil }
        self.pollingOption = configuration.pollingOption
        self.configuration = configuration
        delegateBox = TagDelegateBox(delegate)
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        super.init(kind: .tag(configuration.pollingOption), queue: queue, system: system)
        runtime?.configureSelection(configuration.iso7816SelectIdentifiers)
        runtime?.configureFeliCaSystemCodes(configuration.feliCaSystemCodes)
        runtime?.attach(owner: self) { [weak self] e in self?.deliver(e) }
    }

    override var delegateObject: AnyObject? { delegateBox.value }

    /// Core NFC `connectedTag`: the tag connected to the session (`nil` before a connect,
    /// after `restartPolling()`, once another tag was connected, or after the end).
    public var connectedTag: NFCTag? {
        guard let h = runtime?.connectedHandle else { return nil }
        return delivered.withLock { $0[h] }
    }

    /// Core NFC `restartPolling(configuration:)` (iOS 26.4): rediscovers with `configuration`
    /// for this restart only; later restarts use the session's own.
    public func restartPolling(configuration: Configuration) {
        runtime?.restartPolling(selecting: configuration.iso7816SelectIdentifiers)
    }

    /// Core NFC `restartPolling()`: rediscovers with the session's configuration.
    public override func restartPolling() {
        runtime?.restartPolling(selecting: configuration.iso7816SelectIdentifiers)
    }

    private func deliver(_ event: RuntimeEvent) {
        guard let runtime else { return }
        let box = delegateBox
        let k = continuation
        let deliver = deliverer()
        runtime.deliverAsync(on: sessionQueue) { [self] in
            switch event {
            case .didBecomeActive:
                box.value?.tagReaderSessionDidBecomeActive(self)
                k.yield(.didBecomeActive)
            case .didDetectNDEFs:
                break
            case .didDetectTags(let found):
                let tags: [NFCTag] = found.map { d in
                    let iso7816 = d.target.kind == .type4 && d.initialSelectedAID != nil
                    let tag = SessionTag.make(
                        runtime: runtime, tag: d, type: iso7816 ? .iso7816Compatible : .miFare, session: self,
                        deliver: deliver)
                    self.delivered.withLock { $0[d.handle] = tag }
                    return tag
                }
                box.value?.tagReaderSession(self, didDetect: tags)
                k.yield(.didDetect(tags))
            case .didInvalidate(let e):
                box.value?.tagReaderSession(self, didInvalidateWithError: e)
                k.yield(.didInvalidate(e))
                k.finish()
            }
        }
    }

    override func refuseWithoutSystem() {
        let box = delegateBox
        let k = continuation
        sessionQueue.async { [self] in
            let e = NFCReaderError(.readerErrorUnsupportedFeature, detail: "no NFCReaderSystem installed")
            box.value?.tagReaderSession(self, didInvalidateWithError: e)
            k.yield(.didInvalidate(e))
            k.finish()
        }
    }

    /// Core NFC `connect(to:completionHandler:)`. Connecting to a tag ends the connection of
    /// the tag connected before (documented: "A tag stays connected until your app connects
    /// to a different tag or restarts polling"); operations on that one then fail with 104,
    /// Core NFC's code for a tag that is not connected (assumed: no report shows it).
    public func connect(to tag: NFCTag, completionHandler: @escaping ((any Error)?) -> Void) {
        NFCNDEFReaderSession.connect(tag.ndefTag, runtime: runtime, deliver: deliverer(), Handler(completionHandler))
    }

    /// Async `connect(to:)`.
    public func connect(to tag: NFCTag) async throws {
        try await withCheckedThrowingContinuation { (k: CheckedContinuation<Void, any Error>) in
            connect(to: tag) { e in if let e { k.resume(throwing: e) } else { k.resume() } }
        }
    }
}

/// Core NFC `NFCISO15693ReaderSession` (the legacy ISO 15693 session, iOS 11; Core NFC asks for
/// the `com.apple.developer.nfc.readersession.iso15693.tag-identifiers` entitlement).
///
/// Declared with Core NFC's shape; the legacy session is not modelled (ISO 15693 tags come
/// through `NFCTagReaderSession` with `.iso15693`), so `begin()` ends the session at once with
/// 1 `readerErrorUnsupportedFeature` (Core NFC's code for a feature the reader does not offer).
// unchecked: restates the base's conformance; its own state is `delegateBox`, a let
public final class NFCISO15693ReaderSession: NFCReaderSession, @unchecked Sendable {
    private let delegateBox: LegacyDelegateBox

    /// Core NFC `init(delegate:queue:)`.
    public init(delegate: any NFCReaderSessionDelegate, queue: dispatch_queue_t?) {
        delegateBox = LegacyDelegateBox(delegate)
        super.init(kind: .tag(.iso15693), queue: queue, system: nil)
    }

    override var delegateObject: AnyObject? { delegateBox.value }

    /// Core NFC `readingAvailable`: false here (the legacy session is not modelled).
    public override class var readingAvailable: Bool { false }

    override func refuseWithoutSystem() {
        let box = delegateBox
        endUnmodelled("ISO 15693 reader sessions are not modelled yet") { [self] e in
            box.value?.readerSession(self, didInvalidateWithError: e)
        }
    }
}

/// A completion handler of an app (not `@Sendable`, as Core NFC's are not) carried to the
/// session's delegate queue, where alone it is called.
// unchecked: the app's handler (not @Sendable, as Core NFC's are not) is called only on the session's delegate queue
struct Handler<each T>: @unchecked Sendable {
    private let body: (repeat each T) -> Void
    init(_ body: @escaping (repeat each T) -> Void) { self.body = body }
    func callAsFunction(_ value: repeat each T) { body(repeat each value) }
}
