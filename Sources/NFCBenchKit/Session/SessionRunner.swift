import Dispatch
import Foundation
import NFCHardware
public import NFCTags
public import NFCTrace
public import ReaderSession
import Synchronization

/// Runs one Core NFC-shaped reader session on a backend the way an app would, and reports
/// it through the always-on trace: every line printed (human or `--json`) is a trace record.
///
/// Modes: `ndef` (`NFCNDEFReaderSession`, read-only `didDetectNDEFs`), `ndef-rw` (the same
/// session with a tag delegate: connect, `readNDEF`, `alertMessage` "Tag N read",
/// `restartPolling()` for the next tag), `tag` (`NFCTagReaderSession`, the same app
/// behaviour). Several tags at once: the alert Apple's sample shows and `restartPolling()`
/// after 500 ms. Signals (README "Signals"): SIGINT is the sheet's Done (200);
/// SIGTSTP is leaving the foreground (202): the session ends, then the process stops if it
/// is the terminal's foreground job; nothing restarts on SIGCONT, and a SIGCONT during the
/// session (the process was stopped: its SIGTSTP may have been discarded by the kernel,
/// or it was a SIGSTOP) ends it with 202 too; SIGTERM, SIGHUP and SIGPIPE (the output's reader
/// went away) end it with 202 "terminated by signal N". The ending record says which signal
/// (`cause`), after a `signal` record.
public final class SessionRunner: Sendable {
    public enum Mode: String, CaseIterable, Sendable {
        case ndef
        case ndefRW = "ndef-rw"
        case tag
    }

    public struct Options: Sendable {
        public var mode: Mode = .ndef
        public var firstRead = false
        public var timeLimit: Duration = .seconds(60)
        public var thermal = true
        public var hostWide = false
        public var alertMessage = "Hold your iPhone near an NFC tag."
        public var json = false
        public var verbose = false
        public var statusLine = false
        /// Added to the `session` numbers in the trace (several runners writing one trace).
        public var sessionNumberOffset: UInt64 = 0
        /// Read-write and tag modes: the app taps Done after the first tag's read, whatever
        /// its outcome, instead of asking for the next tag (`check equivalence`).
        public var doneAfterFirstTag = false
        /// What a begin gets while another session holds the reader (`--busy`).
        public var busy = ReaderSystemModel.BusyPolicy.refuse
        /// The bench app's Info.plist ISO 7816 select-identifiers (`--select-identifiers`).
        public var selectIdentifiers = ["D2760000850101"]
        /// `--mode tag`'s polling options (`--polling`).
        public var polling: NFCPollingOption = .iso14443
        /// The bench app's Info.plist FeliCa system codes (`--felica-system-codes`).
        public var feliCaSystemCodes = ["12FC"]
        /// Why the thermal model is off, when a caller switches it off for its own reasons
        /// (the demo): said in the trace header.
        public var thermalOffReason: String?
        /// How long after the app's `invalidate()` its ending arrives (`--turnover-delay`;
        /// reported 2.5 s, `ReaderSystemModel/invalidationDelay`; 0 is the old model).
        public var invalidationDelay = ReaderSystemModel.reportedTurnover.invalidationDelay
        /// `sendMiFareCommand`'s CRC_A rule (`--mifare-crc`).
        public var miFareCRC = ReaderSystemModel.default.miFareCRC
        /// The iPhone's Type 2 discovery before a Type 2 tag is reported (`--type2-probe`;
        /// `off` is the model before).
        public var type2Probe = Type2ProbeModel.iphone
        /// What a begin() while the same app's session runs gets (`--same-app-begin`).
        public var sameAppBegin = ReaderSystemModel.reportedTurnover.sameAppBegin
        /// The app's entitlement formats (`--entitlement`), usage description
        /// (`--no-usage-description`) and the phone's NFC conditions (`--nfc`).
        public var readerSessionFormats = ReaderSystemModel.default.readerSessionFormats
        public var hasUsageDescription = true
        public var availability = ReaderSystemModel.NFCAvailability.available

        /// The defaults above: an NDEF session of 60 s with the thermal model on.
        public init() {}
    }

    /// The thermal parameters and the system model a run with `options` plays by.
    public static func models(_ options: Options) -> (ThermalModel.Parameters, ReaderSystemModel) {
        var params = options.thermal ? ThermalModel.Parameters() : ThermalModel.disabled.parameters
        params.baseLimit = options.timeLimit
        if params.minimumLimit > params.baseLimit { params.minimumLimit = params.baseLimit }
        var model = ReaderSystemModel()
        model.busyPolicy = options.busy
        model.iso7816SelectIdentifiers = options.selectIdentifiers
        model.feliCaSystemCodes = options.feliCaSystemCodes
        model.invalidationDelay = options.invalidationDelay
        model.miFareCRC = options.miFareCRC
        model.type2Probe = options.type2Probe
        model.sameAppBegin = options.sameAppBegin
        model.readerSessionFormats = options.readerSessionFormats
        model.hasUsageDescription = options.hasUsageDescription
        model.availability = options.availability
        return (params, model)
    }

    /// Every number and rule of a run with `options`, with its source.
    public static func facts(_ options: Options) -> [ModelFact] {
        let (params, model) = models(options)
        return model.facts(thermal: params)
    }

    /// The trace header's model block: the run's settings, then every model number with its
    /// source (`ModelFact`). A value of its own, for whichever header writer builds the header.
    public static func headerModel(_ options: Options) -> JSONObject {
        var o: JSONObject = [
            "mode": .string(options.mode.rawValue), "host_wide": .bool(options.hostWide),
        ]
        if let why = options.thermalOffReason { o["thermal_off_reason"] = .string(why) }
        o.merge(facts(options).traceHeaderBlock)
        return o
    }

    /// How a session ended, and whether anything was read.
    public struct Ending: Sendable {
        public var code: NFCReaderError.Code
        public var reads: Int
        /// The signal that ended the session, if one did.
        public var signal: Int32? = nil
        /// The 203 came from the thermal model (too hot), not from another session: the heat
        /// and how long the bench needs to cool before a session begins.
        public var tooHot: (heat: Double, timeToCool: Duration)? = nil

        public init(
            code: NFCReaderError.Code, reads: Int, signal: Int32? = nil,
            tooHot: (heat: Double, timeToCool: Duration)? = nil
        ) {
            self.code = code
            self.reads = reads
            self.signal = signal
            self.tooHot = tooHot
        }

        /// Exit status: 0 for 204 and for a user's Done (200) after reads; 10 + (code − 200)
        /// for 200 without a read (10), 201 (11), 202 (12), 203 (13); 14 for a 203 from the
        /// thermal model (too hot; 13 before issue 31); 1 for any other code.
        public var exitStatus: Int32 {
            switch code.rawValue {
            case 204: 0
            case 200: reads > 0 ? 0 : 10
            case 203 where tooHot != nil: 14
            case 201...203: Int32(10 + code.rawValue - 200)
            default: 1
            }
        }
    }

    public let backend: any ReaderBackend
    public let options: Options
    public let trace: TraceWriter
    /// Tags the app read: `didDetectNDEFs` in read-only mode, the app's own `readNDEF` in
    /// read-write and tag modes. The exit status and the status line count the same reads.
    public let reads: Counter
    /// The live line on a terminal (`options.statusLine`).
    public let status: StatusLine?
    /// Why the session is ending, when a signal ends it (the ending record's `cause`), and the
    /// UIDs it detected (the demo checks its own card).
    private let seen = SessionSeen()
    public var detectedUIDs: [[UInt8]] { seen.uids.withLock { $0 } }
    /// Whether `didBecomeActive` has been written (trace and output), so what a caller does
    /// next is written after it (the demo's second session).
    public var hasShownActive: Bool { seen.activation.withLock { $0.shown } }
    public let system: NFCReaderSystem
    /// Reads the bench app has started and not finished (0 once a virtual-time driver has
    /// drained its executor).
    public let appWork = Counter()

    /// - Parameters:
    ///   - backend: the reader the session runs on.
    ///   - options: the mode, the models' settings and what is printed.
    ///   - trace: the run's trace; every line printed is one of its records.
    ///   - clock: real time by default; a `ManualClock` runs the session and the bench
    ///     app's restart timer in virtual time.
    ///   - arbiter: the reader's lock (default: lock files, per reader or per host).
    ///   - statusOutput: where the status line is drawn (default: standard output).
    ///   - executor: runs the session's hand-offs (``/ReaderSession/NFCReaderSystem``'s
    ///     `executor`); `nil`, the default, is dispatch queues. A virtual-time driver gives an
    ///     `EmbeddedReaderSessionExecutor` on `clock` and drains it: the bench app's reads
    ///     have then run.
    public init(
        backend: any ReaderBackend, options: Options, trace: TraceWriter,
        clock: any ReaderSessionClock = ContinuousReaderClock(), arbiter: SessionArbiter? = nil,
        statusOutput: @escaping @Sendable (String) -> Void = { BenchOutput.raw($0) },
        executor: (any ReaderSessionExecutor)? = nil
    ) {
        self.backend = backend
        self.options = options
        self.trace = trace
        let reads = Counter()
        self.reads = reads
        let status =
            options.statusLine && !options.json
            ? StatusLine(alert: options.alertMessage, reads: reads, clock: clock, output: statusOutput) : nil
        self.status = status
        let (params, model) = Self.models(options)
        let json = options.json
        let verbose = options.verbose
        let offset = options.sessionNumberOffset
        system = NFCReaderSystem(
            backend: backend, clock: clock,
            arbiter: arbiter ?? SessionArbiter(scope: options.hostWide ? .hostWide : .perReader),
            thermal: ThermalModel(parameters: params), model: model,
            observer: { [trace, reads, seen] record in
                var o = record.record(tMicroseconds: trace.elapsedMicroseconds)
                if offset > 0 { o[TraceRecord.Key.session] = .int(Int64(record.session + offset)) }
                if case .didInvalidateWithError = record.event, let s = seen.signalCause.withLock({ $0 }),
                    var ending = TraceRecord.Ending(o)
                {
                    ending.cause = s.cause
                    o.merge(ending.fields)
                }
                if case .detected(let targets) = record.event { seen.uids.withLock { $0 += targets.map(\.uid) } }
                if case .didDetectNDEFs = record.event { reads.add() }
                if case .thermal(let heat, nil, true) = record.event {
                    let wait = params.timeToCool(fromHeat: heat)
                    let seconds = Double(wait.components.seconds) + Double(wait.components.attoseconds) * 1e-18
                    o["time_to_cool_s"] = .double((seconds * 10).rounded(.up) / 10)
                    seen.tooHot.withLock { $0 = (heat, wait) }
                }
                let written = trace.emit(o)
                if !json, let line = TraceLines.render(written, verbose: verbose) {
                    Self.show(line, status: status)
                }
                status?.update(record)
                if case .didBecomeActive = record.event {
                    // A signal that came while the session was still beginning found nothing to
                    // end: its ending is applied now (off this callback).
                    let pending = seen.activation.withLock { a -> Int32? in
                        a.shown = true
                        defer { a.pendingSignal = nil }
                        return a.pendingSignal
                    }
                    if let pending, let apply = seen.applier.withLock({ $0 }) {
                        DispatchQueue.global().async { apply(pending) }
                    }
                }
            }, executor: executor)
        seen.applier.withLock { $0 = { [weak self] sig in self?.apply(sig) } }
    }

    public static func show(_ line: String, status: StatusLine?) {
        if let status { status.printAbove(line) } else { BenchOutput.out(line) }
    }

    /// Records a bench-level event (what the bench app did) in the trace and the output.
    public func note(_ kind: TraceRecord.Kind, _ fields: JSONObject) {
        show(trace.emit(TraceRecord(kind, at: trace.elapsedMicroseconds, fields)))
    }

    /// ``note(_:_:)`` of a typed payload.
    public func note(_ payload: some TracePayload) {
        show(trace.emit(payload.record(at: trace.elapsedMicroseconds)))
    }

    private func show(_ written: TraceRecord) {
        if !options.json, let line = TraceLines.render(written, verbose: options.verbose) {
            Self.show(line, status: status)
        }
    }

    public func run() async -> Ending {
        let done = AsyncStream<NFCReaderError.Code>.makeStream()
        let app = BenchApp(
            runner: self,
            finished: {
                done.continuation.yield($0)
                done.continuation.finish()
            })
        let signals = BenchSignals.handle { [self] sig in
            if sig == SIGTSTP { app.leftForeground.store(true, ordering: .releasing) }
            endSession(by: sig)
        }
        defer { signals.cancel() }
        // The output's reader leaving ends the session as SIGPIPE, even with no line to write.
        let watch = BenchSignals.watchOutputReader()
        defer { watch.cancel() }
        status?.start()
        app.begin()
        var code = NFCReaderError.Code.readerSessionInvalidationErrorUserCanceled
        for await c in done.stream { code = c }
        status?.stop()
        if app.leftForeground.load(ordering: .acquiring) { BenchSignals.stopIfForegroundOfTerminal() }
        return Ending(
            code: code, reads: reads.value, signal: seen.signalCause.withLock { $0?.signal },
            tooHot: code == .readerSessionInvalidationErrorSystemIsBusy ? seen.tooHot.withLock { $0 } : nil)
    }

    /// The signal policy for a session (README "Signals"): the first signal ends it, recorded;
    /// a second SIGINT, SIGTERM or SIGHUP while it ends ends the process at once.
    private func endSession(by sig: Int32) {
        let cause: String
        switch sig {
        case SIGINT: cause = "SIGINT: the user tapped Done"
        case SIGTSTP: cause = "SIGTSTP: the app left the foreground"
        case SIGCONT: cause = "SIGCONT: the process was stopped and continued, so the app left the foreground"
        default: cause = "terminated by signal \(sig)"
        }
        let first = seen.signalCause.withLock { s -> Bool in
            guard s == nil else { return false }
            s = (sig, cause)
            return true
        }
        guard first else {
            if sig == SIGINT || sig == SIGTERM || sig == SIGHUP { BenchSignals.die(by: sig) }
            return
        }
        note(TraceRecord.Signal(signal: Int64(sig), name: BenchSignals.name(sig), reason: cause))
        seen.activation.withLock { if !$0.shown { $0.pendingSignal = sig } }
        apply(sig)
    }

    /// What a signal does to the sessions (README "Signals"); also run again when the signal
    /// came before the session became active (nothing was there to end yet).
    private func apply(_ sig: Int32) {
        switch sig {
        case SIGINT: system.userTappedDone()
        case SIGTSTP, SIGCONT: system.appDidEnterBackground()
        default: system.terminateSessions()
        }
    }

    public func countRead() { reads.add() }

    /// Begins the bench app's session without the terminal around it (no signal handling,
    /// no status-line redraws): the part of ``run()`` a virtual-time driver runs. The caller
    /// keeps the returned app alive until `finished` is called (sessions hold their
    /// delegates weakly, as Core NFC does).
    public func beginApp(finished: @escaping @Sendable (NFCReaderError.Code) -> Void) -> AnyObject {
        let app = BenchApp(runner: self, finished: finished)
        app.begin()
        return app
    }
}

/// What a session's observer saw that the runner reports: the signal that ended it, the UIDs.
final class SessionSeen: Sendable {
    let signalCause = Mutex<(signal: Int32, cause: String)?>(nil)
    /// The thermal model refused the begin: the heat and the time to cool.
    let tooHot = Mutex<(heat: Double, timeToCool: Duration)?>(nil)
    let uids = Mutex<[[UInt8]]>([])
    /// Whether `didBecomeActive` has been written, and a signal's ending that came before it
    /// (one lock, so a signal and the activation can't miss each other).
    let activation = Mutex<(shown: Bool, pendingSignal: Int32?)>((false, nil))
    /// Applies a signal's ending (``SessionRunner/apply(_:)``), set once the runner exists.
    let applier = Mutex<(@Sendable (Int32) -> Void)?>(nil)
}

/// A thread-safe count (reads, work in flight).
public final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    public func add() { count.add(1, ordering: .relaxed) }
    public func remove() { count.subtract(1, ordering: .relaxed) }
    public var value: Int { count.load(ordering: .relaxed) }
}

/// The bench's "app": begins the session the user asked for and, in read-write and tag
/// modes, reads each tag and asks for the next one, as Apple's sample app does.
///
/// Its restart is one timer per session, on the session's clock: a read arms it (1 s, time
/// to take the tag away), a detection of a tag already read or of several tags re-arms it,
/// and the session's end disarms it. A tag that bounces in and out of the field therefore
/// postpones the one restart; it never starts a second `restartPolling()` loop.
private final class BenchApp: NSObject, NFCNDEFReaderSessionTagDelegate, NFCTagReaderSessionDelegate, Sendable {
    let runner: SessionRunner
    let finished: @Sendable (NFCReaderError.Code) -> Void
    /// Set by the signal handler on SIGTSTP (its thread), read by ``SessionRunner/run()``
    /// once the session has ended.
    let leftForeground = Atomic<Bool>(false)

    /// What the app remembers between callbacks (delegate queue and read tasks).
    private struct Memory {
        /// The app's session, held as an app holds it (the session holds its delegate weakly).
        var session: NFCReaderSessionCore?
        var tagsRead = 0
        var readUIDs: Set<Data> = []
        /// The armed restart, and a number that tells a stale firing from the current one.
        var restart: ReaderSessionTimer?
        var restartGeneration = 0
        var ended = false
    }
    private let memory = Mutex(Memory())

    /// How long the app waits before `restartPolling()`: after a read (the user takes the
    /// tag away), and after the "more than 1 tag" alert (Apple's sample: 500 ms).
    static let restartAfterRead: Duration = .seconds(1)
    static let restartAfterSeveralTags: Duration = .milliseconds(500)

    init(runner: SessionRunner, finished: @escaping @Sendable (NFCReaderError.Code) -> Void) {
        self.runner = runner
        self.finished = finished
    }

    func begin() {
        let o = runner.options
        switch o.mode {
        case .ndef:
            let s = NFCNDEFReaderSession(
                delegate: ReadOnlyDelegate(app: self), queue: nil,
                invalidateAfterFirstRead: o.firstRead, system: runner.system)
            s.alertMessage = o.alertMessage
            memory.withLock { $0.session = s }
            s.begin()
        case .ndefRW:
            let s = NFCNDEFReaderSession(
                delegate: self, queue: nil, invalidateAfterFirstRead: false, system: runner.system)
            s.alertMessage = o.alertMessage
            memory.withLock { $0.session = s }
            s.begin()
        case .tag:
            guard
                let s = NFCTagReaderSession(
                    pollingOption: o.polling, delegate: self, queue: nil, system: runner.system)
            else {
                finished(.readerErrorInvalidParameter)
                return
            }
            s.alertMessage = o.alertMessage
            memory.withLock { $0.session = s }
            s.begin()
        }
    }

    private func code(_ error: any Error) -> NFCReaderError.Code {
        (error as? NFCReaderError)?.code ?? .readerErrorUnsupportedFeature
    }

    // Read-write NDEF session.
    func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [any NFCNDEFTag]) {
        handle(tags, session: session, connect: { tag, done in session.connect(to: tag, completionHandler: done) })
    }

    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
        ended()
        finished(code(error))
    }

    // Tag session.
    func tagReaderSession(_ session: NFCTagReaderSession, didDetect tags: [NFCTag]) {
        let byObject = tags
        handle(
            tags.map(\.ndefTag), session: session,
            connect: { tag, done in
                guard let t = byObject.first(where: { $0.ndefTag === tag }) else { return done(nil) }
                session.connect(to: t, completionHandler: done)
            })
    }

    func tagReaderSession(_ session: NFCTagReaderSession, didInvalidateWithError error: any Error) {
        ended()
        finished(code(error))
    }

    /// The session ended: the restart timer is disarmed and never armed again.
    func ended() {
        let timer = memory.withLock { m in
            m.ended = true
            defer { m.restart = nil }
            return m.restart
        }
        timer?.cancel()
    }

    /// Arms the session's one restart timer `delay` from now, replacing the armed one.
    private func restart(after delay: Duration, _ session: NFCReaderSessionCore) {
        let clock = runner.system.clock
        let old: ReaderSessionTimer? = memory.withLock { m in
            guard !m.ended else { return nil }
            let old = m.restart
            m.restartGeneration += 1
            let generation = m.restartGeneration
            m.restart = clock.schedule(at: clock.now + delay) { [weak self] in
                guard let self else { return }
                let current = self.memory.withLock { m in
                    guard m.restartGeneration == generation, !m.ended else { return false }
                    m.restart = nil
                    return true
                }
                if current { session.restartPolling() }
            }
            return old
        }
        old?.cancel()
    }

    /// Reads a newly detected tag, then asks for the next one a second later (a tag still
    /// held is re-detected by `restartPolling()`; it is not read again in this session).
    ///
    /// The read is Core NFC's completion-handler calls (`connect(to:completionHandler:)`, then
    /// `readNDEF(completionHandler:)`), as Apple's sample app makes them: each step runs on the
    /// session's delegate queue, so under a system's executor (a virtual-time test's
    /// `EmbeddedReaderSessionExecutor`) the whole read has run when the executor is drained.
    private func handle(
        _ tags: [any NFCNDEFTag], session: NFCReaderSessionCore,
        connect: @escaping @Sendable (any NFCNDEFTag, @escaping ((any Error)?) -> Void) -> Void
    ) {
        if tags.count > 1 {
            session.alertMessage = "More than 1 tag is detected. Please remove all tags and try again."
            restart(after: Self.restartAfterSeveralTags, session)
            return
        }
        guard let tag = tags.first else { return }
        let uid = Self.identifier(of: tag)
        if let uid, memory.withLock({ $0.readUIDs.contains(uid) }) {
            restart(after: Self.restartAfterRead, session)
            return
        }
        runner.appWork.add()
        connect(tag) { [self] error in
            if let error { return read(uid: uid, session: session, .failure(error)) }
            tag.readNDEF { [self] message, error in
                let outcome: Result<NFCNDEFMessage, any Error> =
                    if let message { .success(message) } else {
                        .failure(error ?? NFCReaderError(.readerTransceiveErrorTagResponseError))
                    }
                read(uid: uid, session: session, outcome)
            }
        }
    }

    /// The end of one tag's read (``handle(_:session:connect:)``): noted, then Done or the
    /// next tag's restart.
    private func read(uid: Data?, session: NFCReaderSessionCore, _ outcome: Result<NFCNDEFMessage, any Error>) {
        defer { runner.appWork.remove() }
        guard session.isReady else { return }
        switch outcome {
        case .success(let message):
            let n = memory.withLock { m in
                if let uid { m.readUIDs.insert(uid) }
                m.tagsRead += 1
                return m.tagsRead
            }
            runner.countRead()
            runner.note(.readNDEF, NDEFMessageBytes(message.bytes).json)
            session.alertMessage = "Tag \(n) read. Hold your iPhone near the next one."
        case .failure(let error):
            let c = code(error)
            runner.note(.readNDEFFailed, ["code": .int(Int64(c.rawValue)), "reason": .string(c.name)])
        }
        if runner.options.doneAfterFirstTag {
            session.invalidate()
        } else {
            restart(after: Self.restartAfterRead, session)
        }
    }

    static func identifier(of tag: any NFCNDEFTag) -> Data? {
        (tag as? any NFCMiFareTag)?.identifier ?? (tag as? any NFCISO7816Tag)?.identifier
    }
}

/// The read-only delegate (no `didDetect tags`: Core NFC's read-only mode).
private final class ReadOnlyDelegate: NSObject, NFCNDEFReaderSessionDelegate, Sendable {
    weak let app: BenchApp?
    // The session holds its delegate weakly, as Core NFC does; this one holds itself until
    // the session ends.
    private let keepAlive = Mutex<ReadOnlyDelegate?>(nil)
    init(app: BenchApp) {
        self.app = app
        super.init()
        keepAlive.withLock { $0 = self }
    }
    func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
        app?.readerSession(session, didInvalidateWithError: error)
        keepAlive.withLock { $0 = nil }
    }
}
