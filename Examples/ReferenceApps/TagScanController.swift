public import Dispatch
import Foundation
public import NFCTags
public import ReaderSession
import Synchronization

/// Habits real apps have and Core NFC's rules forbid (the seed article's "Handling the
/// endings" table). The reference app has none; each faulty app is the reference app
/// with one habit added, so a conformance run shows exactly that habit being caught.
public struct ScanHabits: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// After 201 (timeout) it begins a new session at once, without the user.
    public static let restartsAfterTimeout = ScanHabits(rawValue: 1 << 0)
    /// After 203 (busy) it begins again every 250 ms until a session starts.
    public static let retriesWhenBusy = ScanHabits(rawValue: 1 << 1)
    /// After `restartPolling()` it reads the previous tag object once more "to confirm".
    public static let reusesTagsAfterRestartPolling = ScanHabits(rawValue: 1 << 2)
    /// Back in the foreground after 202 it begins again without the user asking.
    public static let restartsOnReturn = ScanHabits(rawValue: 1 << 3)
}

/// A "scan a tag" screen's logic, written as an iOS app would write it against Core NFC:
///
/// - Scan for one tag: an `NFCNDEFReaderSession` in read-only mode with
///   `invalidateAfterFirstRead: true` (one action, one sheet, one result: ends with 204).
/// - Scan for tag objects or a guided sequence of N tags: one read-write session
///   (`readerSession(_:didDetect:)`): connect, `readNDEF`, update `alertMessage`
///   ("Tag 2 of 5 read…"), `restartPolling()` for the next; several tags at once → an
///   alert and `restartPolling()` after 500 ms (Apple's sample); an empty tag →
///   `invalidate(errorMessage:)`; a tag that moved away (100) → ask to hold it still.
/// - Endings: 201 → "tap Scan to try again"; 203 → "try again in a moment"; 202 → the
///   session is over, a new one starts when the user taps Scan; 200/204 → nothing.
///
/// Threading: every callback runs on the controller's serial `queue` (the sessions'
/// delegate queue); the UI entry points hop onto it with `queue.sync`. Delays go through
/// `after`, so a harness can run them in virtual time.
public final class TagScanController: @unchecked Sendable {
    /// Schedules work on a queue after a delay (`DispatchQueue.asyncAfter`'s shape).
    public typealias Scheduler = @Sendable (Duration, DispatchQueue, @escaping @Sendable () -> Void) -> Void

    public let queue = DispatchQueue(label: "example.tag-scan")
    public let habits: ScanHabits
    private let system: NFCReaderSystem?
    private let after: Scheduler

    // Confined to `queue`.
    private var session: NFCNDEFReaderSession?
    private var request = ScanPlan(tagCount: 1, tagObjects: false)
    private var readIdentifiers: Set<Data> = []
    private var lastTag: (any NFCNDEFTag)?
    private var lastEnding: NFCReaderError.Code?
    private var _status = "Tap Scan to read a tag."
    private var _messages: [NFCNDEFMessage] = []
    private var readOnly: ReadOnlyDelegate?
    private var readWrite: ReadWriteDelegate?

    /// What the user asked for.
    public struct ScanPlan: Sendable, Hashable {
        public var tagCount: Int
        public var tagObjects: Bool
        public init(tagCount: Int, tagObjects: Bool) {
            self.tagCount = max(1, tagCount)
            self.tagObjects = tagObjects || tagCount > 1
        }
    }

    /// - Parameters:
    ///   - system: the reader system; `nil` = `NFCReaderSystem.current` (Core NFC's initialisers).
    ///   - habits: faults to add (none for the reference app).
    ///   - after: how to wait; real time (`DispatchQueue.asyncAfter`) by default.
    public init(system: NFCReaderSystem? = nil, habits: ScanHabits = [], after: Scheduler? = nil) {
        self.system = system
        self.habits = habits
        self.after =
            after ?? { delay, queue, work in
                let c = delay.components
                queue.asyncAfter(
                    deadline: .now()
                        + .nanoseconds(Int(c.seconds) * 1_000_000_000 + Int(c.attoseconds / 1_000_000_000)),
                    execute: work)
            }
    }

    /// What the screen shows.
    public var status: String { queue.sync { _status } }
    /// The NDEF messages read so far.
    public var messages: [NFCNDEFMessage] { queue.sync { _messages } }
    /// True while a session (a sheet) is up.
    public var isScanning: Bool { queue.sync { session?.isReady ?? false } }

    // MARK: UI entry points

    /// The Scan button. Ignored while a sheet is up.
    public func scanTapped(tagCount: Int = 1, tagObjects: Bool = false) {
        queue.sync {
            guard session?.isReady != true else { return }
            request = ScanPlan(tagCount: tagCount, tagObjects: tagObjects)
            startSession()
        }
    }

    /// `sceneDidEnterBackground`: nothing to do; Core NFC ends the session with 202.
    public func didEnterBackground() {}

    /// `sceneWillEnterForeground`: the reference app waits for the user.
    public func willEnterForeground() {
        queue.sync {
            if habits.contains(.restartsOnReturn),
                lastEnding == .readerSessionInvalidationErrorSessionTerminatedUnexpectedly
            {
                startSession()
            }
        }
    }

    // MARK: Sessions (on `queue`)

    private func startSession() {
        readIdentifiers = []
        lastTag = nil
        let s: NFCNDEFReaderSession
        if request.tagObjects {
            let d = ReadWriteDelegate(self)
            readWrite = d
            s = makeSession(d, invalidateAfterFirstRead: false)
            s.alertMessage =
                request.tagCount > 1
                ? "Hold your iPhone near tag 1 of \(request.tagCount)." : "Hold your iPhone near the tag."
        } else {
            let d = ReadOnlyDelegate(self)
            readOnly = d
            s = makeSession(d, invalidateAfterFirstRead: true)
            s.alertMessage = "Hold your iPhone near the tag."
        }
        session = s
        _status = "Scanning…"
        s.begin()
    }

    private func makeSession(_ d: any NFCNDEFReaderSessionDelegate, invalidateAfterFirstRead: Bool)
        -> NFCNDEFReaderSession
    {
        if let system {
            return NFCNDEFReaderSession(
                delegate: d, queue: queue, invalidateAfterFirstRead: invalidateAfterFirstRead, system: system)
        }
        return NFCNDEFReaderSession(delegate: d, queue: queue, invalidateAfterFirstRead: invalidateAfterFirstRead)
    }

    fileprivate func didRead(_ message: NFCNDEFMessage) {
        _messages.append(message)
        _status = "Read: " + Self.summary(message)
    }

    /// The first record as a person would read it: its URI or text, else its type.
    static func summary(_ m: NFCNDEFMessage) -> String {
        guard let r = m.records.first else { return "an empty message" }
        if let url = r.wellKnownTypeURIPayload() { return url.absoluteString }
        if let d = m.descriptions.first {
            if let t = d.text { return "\"\(t)\"" }
            return "a \(d.type) record of \(r.payload.count) bytes"
        }
        return "\(m.records.count) record(s)"
    }

    fileprivate func didDetect(_ tags: [any NFCNDEFTag], in s: NFCNDEFReaderSession) {
        guard s === session, s.isReady else { return }
        if tags.count > 1 {
            s.alertMessage = "More than 1 tag is detected. Please remove all tags and try again."
            let previous = tags[0]
            after(.milliseconds(500), queue) { [weak self] in
                guard let self, s === self.session, s.isReady else { return }
                s.restartPolling()
                if self.habits.contains(.reusesTagsAfterRestartPolling) { previous.readNDEF { _, _ in } }
            }
            return
        }
        guard let tag = tags.first else { return }
        let id = Self.identifier(tag)
        if let id, readIdentifiers.contains(id) { return }  // the previous tag, still in the field
        // Completion handlers run on the session's queue, which is `queue`.
        s.connect(to: tag) { [weak self] error in self?.connected(tag, id, error, s) }
    }

    private func connected(_ tag: any NFCNDEFTag, _ id: Data?, _ error: (any Error)?, _ s: NFCNDEFReaderSession) {
        guard s === session, s.isReady else { return }
        if let error { return tagFailed(error, s) }
        tag.readNDEF { [weak self] message, error in self?.read(tag, id, message, error, s) }
    }

    private func read(
        _ tag: any NFCNDEFTag, _ id: Data?, _ message: NFCNDEFMessage?, _ error: (any Error)?, _ s: NFCNDEFReaderSession
    ) {
        guard s === session, s.isReady else { return }
        if let error { return tagFailed(error, s) }
        guard let message else { return }
        didRead(message)
        if let id { readIdentifiers.insert(id) }
        let done = readIdentifiers.count >= request.tagCount || id == nil
        if done {
            s.alertMessage = request.tagCount > 1 ? "All \(request.tagCount) tags read." : "Tag read."
            if request.tagCount > 1 { _status = "Read \(request.tagCount) tags." }
            s.invalidate()
            return
        }
        s.alertMessage = "Tag \(readIdentifiers.count) of \(request.tagCount) read. Hold the phone near the next one."
        lastTag = tag
        s.restartPolling()
        if habits.contains(.reusesTagsAfterRestartPolling), let old = lastTag { old.readNDEF { _, _ in } }
    }

    private func tagFailed(_ error: any Error, _ s: NFCNDEFReaderSession) {
        switch (error as? NFCReaderError)?.code {
        case .ndefReaderSessionErrorZeroLengthMessage?:
            s.invalidate(errorMessage: "Tag \(readIdentifiers.count + 1) is empty. Nothing was read from it.")
        case .readerTransceiveErrorTagConnectionLost?:
            s.alertMessage = "The tag moved away. Hold it still near the top of the phone."
        default:
            s.invalidate(errorMessage: "This tag could not be read.")
        }
    }

    fileprivate func didInvalidate(_ error: any Error, in s: NFCNDEFReaderSession) {
        guard s === session else { return }
        session = nil
        let code = (error as? NFCReaderError)?.code
        lastEnding = code
        switch code {
        case .readerSessionInvalidationErrorFirstNDEFTagRead?, .readerSessionInvalidationErrorUserCanceled?:
            if _status == "Scanning…" { _status = "Tap Scan to read a tag." }
        case .readerSessionInvalidationErrorSessionTimeout?:
            _status = "The scan timed out. Tap Scan to try again."
            if habits.contains(.restartsAfterTimeout) { startSession() }
        case .readerSessionInvalidationErrorSystemIsBusy?:
            _status = "Another app is using the reader. Try again in a moment."
            if habits.contains(.retriesWhenBusy) {
                after(.milliseconds(250), queue) { [weak self] in
                    guard let self, self.session == nil else { return }
                    self.startSession()
                }
            }
        case .readerSessionInvalidationErrorSessionTerminatedUnexpectedly?:
            _status = "Scanning stopped when the app left the screen. Tap Scan to scan again."
        default:
            _status = "Scanning is not available (\(error))."
        }
    }

    private static func identifier(_ tag: any NFCNDEFTag) -> Data? {
        if let t = tag as? any NFCMiFareTag { return t.identifier }
        if let t = tag as? any NFCISO7816Tag { return t.identifier }
        return nil
    }
}

/// Read-only mode: the delegate implements only `didDetectNDEFs`.
private final class ReadOnlyDelegate: NFCNDEFReaderSessionDelegate, @unchecked Sendable {
    unowned let owner: TagScanController
    init(_ owner: TagScanController) { self.owner = owner }
    func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {
        for m in messages { owner.didRead(m) }
    }
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
        owner.didInvalidate(error, in: session)
    }
}

/// Read-write mode: the delegate implements `readerSession(_:didDetect:)`.
private final class ReadWriteDelegate: NFCNDEFReaderSessionTagDelegate, @unchecked Sendable {
    unowned let owner: TagScanController
    init(_ owner: TagScanController) { self.owner = owner }
    func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [any NFCNDEFTag]) {
        owner.didDetect(tags, in: session)
    }
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
        owner.didInvalidate(error, in: session)
    }
}
