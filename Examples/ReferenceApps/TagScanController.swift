public import Dispatch
public import Foundation
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
    /// When its session ends while it is still reading a tag (a read or its commands in
    /// flight), it begins a new session "to finish the read", without the user. No shipped
    /// scenario ends a session mid-exchange; the conformance explorer finds it.
    public static let resumesInterruptedRead = ScanHabits(rawValue: 1 << 4)
    /// When a background tag read opens the app (``WaypointTrail``), it begins a reader
    /// session to read the tag again: a sheet the user did not ask for.
    public static let rescansBackgroundTag = ScanHabits(rawValue: 1 << 5)
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
/// - Tag features (`ScanPlan.tagSession`): an `NFCTagReaderSession` (`init(configuration:)`,
///   with the plan's `iso7816SelectIdentifiers`): connect to each tag found, read its NDEF
///   (a tag without one is fine), send the plan's commands (`sendMiFareCommand` to a
///   MIFARE tag, `sendCommand(apdu:)` to an ISO 7816 one), then the next tag; `readAll`
///   reads every tag delivered together one after the other (connecting to the next ends
///   the previous connection, so it never goes back to it). A command that fails is noted
///   and the next one sent, unless the tag is gone (100).
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
    private var tagSession: NFCTagReaderSession?
    private var tagDelegate: TagSessionDelegate?
    private var request = ScanPlan(tagCount: 1, tagObjects: false)
    private var _commandResults: [(command: [UInt8], answer: Data?, error: NFCReaderError.Code?)] = []
    private var readIdentifiers: Set<Data> = []
    /// Tags this session could not connect to: not tried again while they stay in the field.
    private var failedIdentifiers: Set<Data> = []
    private var lastTag: (any NFCNDEFTag)?
    private var lastEnding: NFCReaderError.Code?
    /// A tag is being read (connected, its NDEF or commands not finished).
    private var reading = false
    private var _status = "Tap Scan to read a tag."
    private var _messages: [NFCNDEFMessage] = []
    private var readOnly: ReadOnlyDelegate?
    private var readWrite: ReadWriteDelegate?

    /// What the user asked for.
    public struct ScanPlan: Sendable, Hashable {
        public var tagCount: Int
        public var tagObjects: Bool
        /// Use an `NFCTagReaderSession` (tag features) instead of an NDEF session.
        public var tagSession: Bool
        /// Frames to send to each tag after reading it.
        public var commands: [[UInt8]]
        /// The session configuration's `iso7816SelectIdentifiers`.
        public var selectIdentifiers: [String]
        /// Read every tag found together, one after the other.
        public var readAll: Bool
        /// Time between two commands.
        public var commandInterval: Duration

        public init(
            tagCount: Int, tagObjects: Bool, tagSession: Bool = false, commands: [[UInt8]] = [],
            selectIdentifiers: [String] = [], readAll: Bool = false, commandInterval: Duration = .zero
        ) {
            self.tagCount = max(1, tagCount)
            self.tagObjects = tagObjects || tagCount > 1 || tagSession
            self.tagSession = tagSession
            self.commands = commands
            self.selectIdentifiers = selectIdentifiers
            self.readAll = readAll
            self.commandInterval = commandInterval
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
    public var isScanning: Bool { queue.sync { (session?.isReady ?? false) || (tagSession?.isReady ?? false) } }

    /// The commands sent so far and what each got (tag features).
    public var commandResults: [(command: [UInt8], answer: Data?, error: NFCReaderError.Code?)] {
        queue.sync { _commandResults }
    }

    // MARK: UI entry points

    /// The Scan button. Ignored while a sheet is up.
    public func scanTapped(tagCount: Int = 1, tagObjects: Bool = false) {
        scanTapped(ScanPlan(tagCount: tagCount, tagObjects: tagObjects))
    }

    /// The Scan button of a feature. Ignored while a sheet is up.
    public func scanTapped(_ plan: ScanPlan) {
        queue.sync {
            guard session?.isReady != true, tagSession?.isReady != true else { return }
            request = plan
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
        failedIdentifiers = []
        lastTag = nil
        if request.tagSession { return startTagSession() }
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
        // One tag at a time: tags detected while one is read wait for the next polling.
        guard s === session, s.isReady, !reading else { return }
        if tags.count > 1 {
            s.alertMessage = "More than 1 tag is detected. Please remove all tags and try again."
            let previous = tags[0]
            after(.milliseconds(500), queue) { [weak self] in
                // Not while a tag is being read: restartPolling() would make its tag object stale.
                guard let self, s === self.session, s.isReady, !self.reading else { return }
                s.restartPolling()
                if self.habits.contains(.reusesTagsAfterRestartPolling) { previous.readNDEF { _, _ in } }
            }
            return
        }
        guard let tag = tags.first else { return }
        let id = Self.identifier(tag)
        if let id, readIdentifiers.contains(id) { return }  // the previous tag, still in the field
        reading = true
        // Completion handlers run on the session's queue, which is `queue`.
        s.connect(to: tag) { [weak self] error in self?.connected(tag, id, error, s) }
    }

    private func connected(_ tag: any NFCNDEFTag, _ id: Data?, _ error: (any Error)?, _ s: NFCNDEFReaderSession) {
        guard s === session, s.isReady else { return }
        if let error {
            reading = false
            return tagFailed(error, s)
        }
        tag.readNDEF { [weak self] message, error in self?.read(tag, id, message, error, s) }
    }

    private func read(
        _ tag: any NFCNDEFTag, _ id: Data?, _ message: NFCNDEFMessage?, _ error: (any Error)?, _ s: NFCNDEFReaderSession
    ) {
        guard s === session, s.isReady else { return }
        reading = false
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
        endingReceived(error)
    }

    /// What the screen does with a session's ending (either kind of session).
    private func endingReceived(_ error: any Error) {
        let code = (error as? NFCReaderError)?.code
        lastEnding = code
        let interrupted = reading
        reading = false
        if habits.contains(.resumesInterruptedRead), interrupted {
            _status = "The read was interrupted. Finishing it…"
            return startSession()
        }
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
                    guard let self, self.session == nil, self.tagSession == nil else { return }
                    self.startSession()
                }
            }
        case .readerSessionInvalidationErrorSessionTerminatedUnexpectedly?:
            _status = "Scanning stopped when the app left the screen. Tap Scan to scan again."
        default:
            _status = "Scanning is not available (\(error))."
        }
    }

    // MARK: Tag features (on `queue`)

    private func startTagSession() {
        let d = TagSessionDelegate(self)
        tagDelegate = d
        let configuration = NFCTagReaderSession.Configuration(
            pollingOption: .iso14443, iso7816SelectIdentifiers: request.selectIdentifiers)
        let made =
            system.map { NFCTagReaderSession(configuration: configuration, delegate: d, queue: queue, system: $0) }
            ?? NFCTagReaderSession(configuration: configuration, delegate: d, queue: queue)
        guard let s = made else { return }
        s.alertMessage = "Hold your iPhone near the tag."
        tagSession = s
        _status = "Scanning…"
        s.begin()
    }

    fileprivate func tagSessionDetected(_ tags: [NFCTag], in s: NFCTagReaderSession) {
        // One tag at a time: connecting to another would drop the one being read, and its
        // pending commands would then go to a tag object the next restartPolling() made stale.
        guard s === tagSession, s.isReady, !reading else { return }
        if tags.count > 1 && !request.readAll {
            s.alertMessage = "More than 1 tag is detected. Please remove all tags and try again."
            after(.milliseconds(500), queue) { [weak self] in
                // Not while a tag is being read: restartPolling() would make its tag object stale.
                guard let self, s === self.tagSession, s.isReady, !self.reading else { return }
                s.restartPolling()
            }
            return
        }
        let fresh = tags.filter { t in
            Self.identifier(t.ndefTag).map { !readIdentifiers.contains($0) && !failedIdentifiers.contains($0) } ?? true
        }
        guard !fresh.isEmpty else { return }
        handleTags(fresh, in: s)
    }

    /// Connects to the first tag, reads it, sends the commands, then goes on with the rest.
    private func handleTags(_ tags: [NFCTag], in s: NFCTagReaderSession) {
        guard s === tagSession, s.isReady else { return }
        guard let tag = tags.first else {
            reading = false
            return tagsHandled(in: s)
        }
        reading = true
        let rest = Array(tags.dropFirst())
        s.connect(to: tag) { [weak self] error in
            guard let self, s === self.tagSession, s.isReady else { return }
            if let error {
                self.noteTagError(error, s)
                // A tag it cannot connect to is not tried again in this session
                // (restartPolling() would find it again at once, in a loop).
                if let id = Self.identifier(tag.ndefTag) { self.failedIdentifiers.insert(id) }
                return self.handleTags(rest, in: s)
            }
            tag.ndefTag.readNDEF { [weak self] message, _ in
                guard let self, s === self.tagSession, s.isReady else { return }
                if let message { self.didRead(message) }
                self.sendCommands(self.request.commands, to: tag, in: s) {
                    if let id = Self.identifier(tag.ndefTag) { self.readIdentifiers.insert(id) }
                    self.handleTags(rest, in: s)
                }
            }
        }
    }

    private func sendCommands(
        _ commands: [[UInt8]], to tag: NFCTag, in s: NFCTagReaderSession, then done: @escaping @Sendable () -> Void
    ) {
        guard let command = commands.first else { return done() }
        let rest = Array(commands.dropFirst())
        let next: @Sendable (NFCReaderError.Code?) -> Void = { [weak self] code in
            guard let self, s === self.tagSession, s.isReady else { return }
            // A tag that is gone (100) takes no more commands.
            if code == .readerTransceiveErrorTagConnectionLost { return done() }
            if rest.isEmpty || self.request.commandInterval == .zero {
                self.sendCommands(rest, to: tag, in: s, then: done)
            } else {
                self.after(self.request.commandInterval, self.queue) {
                    // The session may have ended while the app waited: an ended session takes no call.
                    guard s === self.tagSession, s.isReady else { return }
                    self.sendCommands(rest, to: tag, in: s, then: done)
                }
            }
        }
        switch tag {
        case .miFare(let t):
            t.sendMiFareCommand(commandPacket: Data(command)) { [weak self] answer, error in
                let code = (error as? NFCReaderError)?.code
                self?._commandResults.append((command, error == nil ? answer : nil, code))
                next(code)
            }
        case .iso7816(let t):
            guard let apdu = NFCISO7816APDU(data: Data(command)) else {
                _commandResults.append((command, nil, .readerErrorInvalidParameter))
                return next(.readerErrorInvalidParameter)
            }
            t.sendCommand(apdu: apdu) { [weak self] data, sw1, sw2, error in
                let code = (error as? NFCReaderError)?.code
                self?._commandResults.append((command, error == nil ? data + Data([sw1, sw2]) : nil, code))
                next(code)
            }
        case .feliCa, .iso15693:
            // Not this feature's tags: its sessions poll ISO 14443 only.
            return done()
        }
    }

    /// Every tag of one detection was handled: done, or ask for the next one.
    private func tagsHandled(in s: NFCTagReaderSession) {
        guard s === tagSession, s.isReady else { return }
        if readIdentifiers.count >= request.tagCount {
            s.alertMessage = request.tagCount > 1 ? "All \(request.tagCount) tags read." : "Tag read."
            s.invalidate()
            return
        }
        s.alertMessage = "Tag \(readIdentifiers.count) of \(request.tagCount) read. Hold the phone near the next one."
        s.restartPolling()
    }

    private func noteTagError(_ error: any Error, _ s: NFCTagReaderSession) {
        if (error as? NFCReaderError)?.code == .readerTransceiveErrorTagConnectionLost {
            s.alertMessage = "The tag moved away. Hold it still near the top of the phone."
        }
    }

    fileprivate func tagSessionInvalidated(_ error: any Error, in s: NFCTagReaderSession) {
        guard s === tagSession else { return }
        tagSession = nil
        endingReceived(error)
    }

    private static func identifier(_ tag: any NFCNDEFTag) -> Data? {
        if let t = tag as? any NFCMiFareTag { return t.identifier }
        if let t = tag as? any NFCISO7816Tag { return t.identifier }
        return nil
    }
}

/// Read-only mode: the delegate implements only `didDetectNDEFs`.
private final class ReadOnlyDelegate: NSObject, NFCNDEFReaderSessionDelegate, @unchecked Sendable {
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
private final class ReadWriteDelegate: NSObject, NFCNDEFReaderSessionTagDelegate, @unchecked Sendable {
    unowned let owner: TagScanController
    init(_ owner: TagScanController) { self.owner = owner }
    func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [any NFCNDEFTag]) {
        owner.didDetect(tags, in: session)
    }
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
        owner.didInvalidate(error, in: session)
    }
}

/// The tag features' delegate (`NFCTagReaderSessionDelegate`).
private final class TagSessionDelegate: NSObject, NFCTagReaderSessionDelegate, @unchecked Sendable {
    unowned let owner: TagScanController
    init(_ owner: TagScanController) { self.owner = owner }
    func tagReaderSession(_ session: NFCTagReaderSession, didDetect tags: [NFCTag]) {
        owner.tagSessionDetected(tags, in: session)
    }
    func tagReaderSession(_ session: NFCTagReaderSession, didInvalidateWithError error: any Error) {
        owner.tagSessionInvalidated(error, in: session)
    }
}
