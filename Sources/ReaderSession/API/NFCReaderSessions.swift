public import Dispatch
public import NFCTags
import Synchronization

/// Core NFC `NFCNDEFReaderSessionDelegate`. Called on the session's queue.
///
/// Read-only mode (`didDetectNDEFs`) is the default. Swift on Linux has no optional
/// protocol methods, so **read-write mode is chosen by conforming to the refining
/// protocol ``NFCNDEFReaderSessionTagDelegate``** (Core NFC: "the delegate implements
/// `readerSession(_:didDetect:)`").
public protocol NFCNDEFReaderSessionDelegate: AnyObject {
    /// Core NFC `readerSessionDidBecomeActive(_:)` (optional there; empty by default here).
    func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession)
    /// Core NFC `readerSession(_:didDetectNDEFs:)`: read-only mode's messages.
    func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage])
    /// Core NFC `readerSession(_:didInvalidateWithError:)`: always last, exactly once.
    /// The error is an ``NFCReaderError``.
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error)
}

extension NFCNDEFReaderSessionDelegate {
    public func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession) {}
}

/// A delegate that implements `readerSession(_:didDetect:)`: the session runs in
/// read-write mode and delivers tag objects instead of messages.
public protocol NFCNDEFReaderSessionTagDelegate: NFCNDEFReaderSessionDelegate {
    /// Core NFC `readerSession(_:didDetect:)`: tag objects, several together when several
    /// are in the field. Connect before reading or writing.
    func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [any NFCNDEFTag])
}

extension NFCNDEFReaderSessionTagDelegate {
    public func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}
}

/// Core NFC `NFCTagReaderSessionDelegate`. Called on the session's queue.
public protocol NFCTagReaderSessionDelegate: AnyObject {
    /// Core NFC `tagReaderSessionDidBecomeActive(_:)`.
    func tagReaderSessionDidBecomeActive(_ session: NFCTagReaderSession)
    /// Core NFC `tagReaderSession(_:didDetect:)`.
    func tagReaderSession(_ session: NFCTagReaderSession, didDetect tags: [NFCTag])
    /// Core NFC `tagReaderSession(_:didInvalidateWithError:)`.
    func tagReaderSession(_ session: NFCTagReaderSession, didInvalidateWithError error: any Error)
}

extension NFCTagReaderSessionDelegate {
    public func tagReaderSessionDidBecomeActive(_ session: NFCTagReaderSession) {}
}

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
private final class NDEFDelegateBox: @unchecked Sendable {
    weak var value: (any NFCNDEFReaderSessionDelegate)?
    init(_ v: any NFCNDEFReaderSessionDelegate) { value = v }
}

private final class TagDelegateBox: @unchecked Sendable {
    weak var value: (any NFCTagReaderSessionDelegate)?
    init(_ v: any NFCTagReaderSessionDelegate) { value = v }
}

/// Shared by both session classes: the runtime, the queue, alertMessage.
public class NFCReaderSessionCore: @unchecked Sendable {
    let runtime: ReaderSessionRuntime?
    /// The delegate queue (Core NFC: `nil` → a private serial queue).
    public let sessionQueue: DispatchQueue
    private let alert = Mutex("")

    init(kind: ReaderSessionKind, queue: DispatchQueue?, system: NFCReaderSystem?) {
        self.sessionQueue = queue ?? DispatchQueue(label: "nfcbench.reader-session.delegate")
        self.runtime = system.map { ReaderSessionRuntime(kind: kind, system: $0) }
    }

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
    /// throttled, 1 when no reader system is installed). Nothing on a used session.
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

    func deliverer() -> @Sendable (@escaping @Sendable () -> Void) -> Void {
        let q = sessionQueue
        guard let runtime else { return { work in q.async(execute: work) } }
        return { work in runtime.deliverAsync(on: q, work) }
    }
}

/// Core NFC `NFCNDEFReaderSession`.
public final class NFCNDEFReaderSession: NFCReaderSessionCore, @unchecked Sendable {
    private let delegateBox: NDEFDelegateBox
    private let continuation: AsyncStream<NFCNDEFReaderSessionEvent>.Continuation
    /// The session's events as a sequence (one consumer); finishes after `didInvalidate`.
    public let events: AsyncStream<NFCNDEFReaderSessionEvent>
    /// True when the delegate is an ``NFCNDEFReaderSessionTagDelegate`` (read-write mode).
    public let isReadWrite: Bool

    /// Core NFC `init(delegate:queue:invalidateAfterFirstRead:)`, against
    /// ``NFCReaderSystem/current``. The delegate is held weakly.
    public convenience init(
        delegate: any NFCNDEFReaderSessionDelegate, queue: DispatchQueue?, invalidateAfterFirstRead: Bool
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
        isReadWrite = delegate is any NFCNDEFReaderSessionTagDelegate
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        super.init(
            kind: isReadWrite ? .ndefReadWrite : .ndef(invalidateAfterFirstRead: invalidateAfterFirstRead),
            queue: queue, system: system)
        runtime?.attach(owner: self) { [weak self] e in self?.deliver(e) }
    }

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
                    SessionTagObject(runtime: runtime, tag: $0, deliver: deliver)
                }
                (box.value as? any NFCNDEFReaderSessionTagDelegate)?.readerSession(self, didDetect: tags)
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
    public func connect(to tag: any NFCNDEFTag, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        Self.connect(tag, runtime: runtime, deliver: deliverer(), completionHandler)
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
        _ completion: @escaping @Sendable ((any Error)?) -> Void
    ) {
        guard let t = tag as? SessionTagObject, let runtime, t.runtime === runtime else {
            return deliver {
                completion(NFCReaderError(.readerErrorInvalidParameter, detail: "tag from another session"))
            }
        }
        t.run("connect", requiresConnection: false, { _, _ in true }) { r in
            switch r {
            case .success:
                t.connected.withLock { $0 = true }
                completion(nil)
            case .failure(let e): completion(e)
            }
        }
    }
}

/// Core NFC `NFCTagReaderSession`.
public final class NFCTagReaderSession: NFCReaderSessionCore, @unchecked Sendable {
    /// Core NFC `NFCTagReaderSession.PollingOption`.
    public typealias PollingOption = NFCPollingOption

    private let delegateBox: TagDelegateBox
    private let continuation: AsyncStream<NFCTagReaderSessionEvent>.Continuation
    /// The session's events as a sequence (one consumer); finishes after `didInvalidate`.
    public let events: AsyncStream<NFCTagReaderSessionEvent>
    public let pollingOption: PollingOption

    /// Core NFC `init?(pollingOption:delegate:queue:)`, against ``NFCReaderSystem/current``.
    /// `nil` for an empty polling option (Core NFC returns nil for invalid options).
    public convenience init?(
        pollingOption: PollingOption, delegate: any NFCTagReaderSessionDelegate, queue: DispatchQueue?
    ) {
        self.init(pollingOption: pollingOption, delegate: delegate, queue: queue, system: NFCReaderSystem.current)
    }

    /// As Core NFC's initialiser, against an explicit system.
    public init?(
        pollingOption: PollingOption, delegate: any NFCTagReaderSessionDelegate, queue: DispatchQueue?,
        system: NFCReaderSystem?
    ) {
        guard !pollingOption.isEmpty else { return nil }
        self.pollingOption = pollingOption
        delegateBox = TagDelegateBox(delegate)
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        super.init(kind: .tag(pollingOption), queue: queue, system: system)
        runtime?.attach(owner: self) { [weak self] e in self?.deliver(e) }
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
            case .didDetectTags(let delivered):
                let tags: [NFCTag] = delivered.map { d in
                    let o = SessionTagObject(runtime: runtime, tag: d, deliver: deliver)
                    return d.target.kind == .type4 ? .iso7816(o) : .miFare(o)
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

    /// Core NFC `connect(to:completionHandler:)`.
    public func connect(to tag: NFCTag, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        NFCNDEFReaderSession.connect(tag.ndefTag, runtime: runtime, deliver: deliverer(), completionHandler)
    }

    /// Async `connect(to:)`.
    public func connect(to tag: NFCTag) async throws {
        try await withCheckedThrowingContinuation { (k: CheckedContinuation<Void, any Error>) in
            connect(to: tag) { e in if let e { k.resume(throwing: e) } else { k.resume() } }
        }
    }
}
