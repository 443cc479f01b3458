import Dispatch
public import HCEEvents
import NFCBase
import NFCTags
import Synchronization

/// How the phone presents itself to a reader's ISO/IEC 14443-4 A activation, and the
/// PC/SC ATR a contactless reader builds from that.
///
/// Defaults are an iPhone's as the corpus sniff `pm3_hf_visa_apple_ecp.trace` shows them:
/// a UID starting `08` (ISO/IEC 14443-3 §6.5.4: `08` = random UID; ``HCELivePhone`` draws a
/// new one for each emulation, ``HCEPhoneIdentity/UIDChoice``), ATS
/// `05 78 80 70 02` (TL 5, T0 `78`: FSCI 8, TA/TB/TC present; TB(1) `70`: FWI 7, SFGI 0;
/// no historical bytes). ATQA `00 04` (libnfc order) and SAK `20` (ISO/IEC 14443-4
/// compliant) are the usual single-size-UID ISO-DEP values.
public struct HCEPhoneIdentity: Sendable, Equatable {
    /// NFCID1, 4 bytes (a PN532 in target mode takes only 4 and forces the first to `08`).
    /// The default `08 5A 3C 91` is the one the phone presented before issue 31 (`emulate
    /// --uid 085A3C91`); ``HCELivePhone`` replaces it as its ``UIDChoice`` says.
    public var uid: [UInt8]
    /// ATQA as libnfc stores it (`00 04`).
    public var atqa: [UInt8]
    /// SAK; bit `20` announces ISO/IEC 14443-4.
    public var sak: UInt8
    /// ATS including TL (ISO/IEC 14443-4 §5.2).
    public var ats: [UInt8]

    public init(
        uid: [UInt8] = [0x08, 0x5A, 0x3C, 0x91], atqa: [UInt8] = [0x00, 0x04], sak: UInt8 = 0x20,
        ats: [UInt8] = [0x05, 0x78, 0x80, 0x70, 0x02]
    ) {
        self.uid = uid
        self.atqa = atqa
        self.sak = sak
        self.ats = ats
    }

    /// The ATS's historical bytes (ISO/IEC 14443-4 §5.2.7): after TL, T0 and the interface
    /// bytes T0 announces (b5 TA, b6 TB, b7 TC). Empty when the ATS is too short.
    public var historicalBytes: [UInt8] {
        guard ats.count >= 2 else { return [] }
        let t0 = ats[1]
        let interface = [0x10, 0x20, 0x40].filter { t0 & UInt8($0) != 0 }.count
        let start = 2 + interface
        let end = min(Int(ats[0]), ats.count)
        return start < end ? Array(ats[start..<end]) : []
    }

    /// Where the phone's UID comes from, emulation after emulation.
    ///
    /// *Reported*: iPhones present a UID starting `08`, and the reports differ in the rest:
    /// `08 DF BF F2 9A`-style in the corpus trace `pm3_hf_visa_apple_ecp.trace`, `08 10 53 17`
    /// in https://developer.apple.com/forums/thread/774626; ISO/IEC 14443-3 §6.5.4 makes a
    /// first byte `08` a random UID, dynamically generated. *Assumed*: a new one for every
    /// emulation (every field the phone serves), 4 bytes (single size, as both reports).
    public enum UIDChoice: Sendable, Equatable {
        /// The same UID every time (`emulate --uid`: the behaviour before issue 31).
        case fixed([UInt8])
        /// `08` and three bytes from NFCBase's `SplitMix64` seeded with `seed`, a new UID
        /// for each emulation: the same seed gives the same UIDs in the same order.
        case random(seed: UInt64)

        /// The UID of the first emulation.
        public var firstUID: [UInt8] {
            switch self {
            case .fixed(let u): return u
            case .random(let seed):
                var g = SplitMix64(seed: seed)
                return HCEPhoneIdentity.randomUID(using: &g)
            }
        }
    }

    /// A random single-size UID as an iPhone's: `08`, then three bytes from `generator`.
    public static func randomUID(using generator: inout some RandomNumberGenerator) -> [UInt8] {
        let r = generator.next()
        return [
            0x08, UInt8(truncatingIfNeeded: r), UInt8(truncatingIfNeeded: r >> 8), UInt8(truncatingIfNeeded: r >> 16),
        ]
    }

    /// The phone's RF identity as the model's table rows (docs/model.md), each with its
    /// source: one per stored property, `phone_` and its name.
    public static var facts: [HCEParameters.Fact] {
        let d = HCEPhoneIdentity()
        return [
            .init(
                key: "phone_uid", value: "random per emulation: 08 and 3 bytes", source: "reported",
                reference:
                    "UIDs starting 08 (ISO/IEC 14443-3: a random UID): 08 DF BF F2 9A-style in the corpus trace pm3_hf_visa_apple_ecp.trace, 08 10 53 17 in https://developer.apple.com/forums/thread/774626; a new one each emulation is assumed (the reports are of different phones). emulate --uid fixes it (085A3C91 before issue 31), --uid-seed repeats a run's"
            ),
            .init(
                key: "phone_atqa", value: d.atqa.hexString(separator: " "), source: "reported",
                reference: "00 04 (libnfc order; 04 00 on the wire) in https://developer.apple.com/forums/thread/774626"
            ),
            .init(
                key: "phone_sak", value: String(format: "%02X", d.sak), source: "reported",
                reference: "20 (ISO/IEC 14443-4 compliant) in https://developer.apple.com/forums/thread/774626"),
            .init(
                key: "phone_ats", value: d.ats.hexString(separator: " "), source: "reported",
                reference:
                    "the corpus trace pm3_hf_visa_apple_ecp.trace (05 78 80 70 02); 05 78 80 71 00 in https://developer.apple.com/forums/thread/774626"
            ),
        ]
    }

    /// The ATS without TL, as `nfc_target_init` takes it.
    public var atsWithoutLength: [UInt8] { Array(ats.dropFirst()) }

    /// The PC/SC 2.02 part 3 §3.1.3.2.3 ATR for this card: `3B 8n 80 01 <historical bytes> TCK`
    /// (the iPhone's empty historical bytes give `3B 80 80 01 01`).
    public var atr: [UInt8] {
        (try? ATR.iso14443_4(historicalBytes: Array(historicalBytes.prefix(15))).bytes) ?? [
            0x3B, 0x80, 0x80, 0x01, 0x01,
        ]
    }
}

/// One line of a live emulation's timeline: a transport event (what the wire showed) or
/// a phone-model event, with microseconds since the bench started.
public struct HCELiveEvent: Sendable, Equatable {
    /// Where the event comes from.
    public enum Source: String, Sendable, Equatable {
        /// The ``/HCEEvents/ContactlessPhone`` model (wake, CardSession events, routing).
        case model
        /// The vpcd connection of the virtual phone card.
        case vpcd
        /// The PC/SC client playing a reader profile through pcscd.
        case pcsc
        /// libnfc target mode (PN53x TgInitAsTarget / TgGetData / TgSetData).
        case libnfc
        /// The bench itself (a profile that can't be shown, a skipped step).
        case bench
    }

    /// Microseconds since the bench started (monotonic clock; virtual in tests).
    public var time: Duration
    public var source: Source
    /// Model: `fieldOn`, `nfcEvent`, `wakeSuppressed`, `isoDepActivated`, `apdu`,
    /// `sessionStarted`, `readerDetected`, `received`, `readerDeselected`,
    /// `sessionInvalidated`, `startEmulation`, `stopEmulation`, `fieldOff`.
    /// Transports: `vpcdConnected`, `vpcdControl`, `vpcdATR`, `vpcdDisconnected`,
    /// `pcscCardPresent`, `pcscConnect`, `pcscTransmit`, `pcscDisconnect`, `activation`,
    /// `targetReceive`, `targetSend`, `released`, `notShowable`, `error`.
    public var event: String
    /// The reader (profile) name, when known.
    public var reader: String?
    public var command: [UInt8]?
    public var response: [UInt8]?
    public var answeredBy: Responder?
    /// Technology, reason, status, control byte meaning, error text…
    public var detail: String?
    /// The UID the phone presented to this reader (on the model's `isoDepActivated`: a new
    /// one each emulation, ``HCEPhoneIdentity/UIDChoice``).
    public var uid: [UInt8]? = nil

    public init(
        time: Duration, source: Source, event: String, reader: String? = nil, command: [UInt8]? = nil,
        response: [UInt8]? = nil, answeredBy: Responder? = nil, detail: String? = nil
    ) {
        self.time = time
        self.source = source
        self.event = event
        self.reader = reader
        self.command = command
        self.response = response
        self.answeredBy = answeredBy
        self.detail = detail
    }
}

/// What one command got from the live phone.
public enum HCELiveAnswer: Sendable, Equatable {
    /// Answered (by the system, the app or an express credential).
    case answered(by: Responder, response: [UInt8])
    /// The app did not answer within the frame waiting time: a real reader times out.
    case timedOut
    /// No ISO-DEP link: no field, or not activated.
    case notActivated
}

/// The ``/HCEEvents/ContactlessPhone`` model on a monotonic clock, for transports that carry a real
/// reader's commands (the vpcd virtual card, libnfc target mode). Model time is the
/// time since this object was made, so model and wire events share one µs timeline.
///
/// It plays the stand-in default app like ``/HCEEvents/ReaderWalk`` (policy `stay`): on every wake it
/// makes a `CardSession`, starts emulation, answers each `received(_:)` APDU with
/// `answer(payload)` (default `90 00`), and at field off stops emulation (`success` when it
/// was reached, else `none`) and invalidates the session.
///
/// Every method blocks the calling thread (at most the frame waiting time in
/// ``exchange(_:)``): call them from a transport's own thread, never from Swift's
/// cooperative pool, since the app runs there as a task.
public final class HCELivePhone: Sendable {
    public let phone: ContactlessPhone
    /// Where this phone's UIDs come from.
    public let uidChoice: HCEPhoneIdentity.UIDChoice
    /// What the phone presents to the reader of the current emulation (a field it is in),
    /// or, between fields, to the next one: its UID is drawn (``uidChoice``) when the phone
    /// is made and again each time a field leaves, so a transport reads it before it lets a
    /// reader activate the phone (`nfc_target_init`) and the model's field on uses it.
    public var identity: HCEPhoneIdentity { state.withLock { $0.identity } }
    private let clock: @Sendable () -> Duration
    private let answer: @Sendable ([UInt8]) -> [UInt8]
    private let onEvent: (@Sendable (HCELiveEvent) -> Void)?
    private let appAnswered = DispatchSemaphore(value: 0)
    private let state: Mutex<State>
    /// Held while timeline lines are handed to `onEvent`, so lines leave in the order of
    /// their times even when the transport's thread and the bench's thread (a PC/SC client)
    /// add lines at once. Never held across a wait.
    private let emission = Mutex(())

    private struct State {
        var identity: HCEPhoneIdentity
        var generator: SplitMix64?
        var events: [HCELiveEvent] = []
        var logIndex = 0
        var reader: String?
        var session: CardSession?
        var served = false
        var appTask: Task<Void, Never>?
    }

    /// - Parameters:
    ///   - app: the default contactless app and its select-identifier prefixes.
    ///   - identity: ATQA/SAK/ATS (and ATR) the phone presents; its UID as `uid` says.
    ///   - uid: where the UIDs come from: by default a new random one (`08` …) for each
    ///     emulation from a fixed seed, so a test sees the same UIDs run after run; the CLI
    ///     gives a fresh seed per run (`--uid-seed` repeats one) or `.fixed` (`--uid`).
    ///   - parameters: the model's unpublished numbers (the library's, every latency 0: the
    ///     live carriers can't hold a reader while the app launches). The live phone sends no
    ///     S(WTX): its carrier (vpcd, a PN532 in target mode) chains and extends on its own, so
    ///     `sendsWaitingTimeExtensions` is switched off here.
    ///   - expressCredentials: Wallet's express-mode credentials, each woken by its terminal's
    ///     ECP frame (none by default).
    ///   - clock: time since the bench started; default a monotonic clock from now. Tests
    ///     pass a virtual one.
    ///   - answer: what the stand-in app answers to each APDU routed to it.
    ///   - onEvent: called for every timeline line as it is made (for a trace flushed per line).
    public init(
        app: ContactlessPhone.DefaultApp, identity: HCEPhoneIdentity = HCEPhoneIdentity(),
        uid: HCEPhoneIdentity.UIDChoice = .random(seed: HCELivePhone.defaultUIDSeed),
        parameters: HCEParameters = HCEParameters(),
        expressCredentials: [ContactlessPhone.ExpressCredential] = [],
        clock: (@Sendable () -> Duration)? = nil,
        answer: @escaping @Sendable ([UInt8]) -> [UInt8] = { _ in [0x90, 0x00] },
        onEvent: (@Sendable (HCELiveEvent) -> Void)? = nil
    ) {
        var live = parameters
        live.sendsWaitingTimeExtensions = false
        phone = ContactlessPhone(defaultApp: app, expressCredentials: expressCredentials, parameters: live)
        uidChoice = uid
        var first = identity
        var generator: SplitMix64?
        switch uid {
        case .fixed(let u): first.uid = u
        case .random(let seed):
            var g = SplitMix64(seed: seed)
            first.uid = HCEPhoneIdentity.randomUID(using: &g)
            generator = g
        }
        state = Mutex(State(identity: first, generator: generator))
        isVirtualClock = clock != nil
        if let clock {
            self.clock = clock
        } else {
            let start = ContinuousClock.now
            self.clock = { ContinuousClock.now - start }
        }
        self.answer = answer
        self.onEvent = onEvent
    }

    /// Time since the bench started.
    public var elapsed: Duration { clock() }

    /// The seed of the random UIDs when `init` is given none.
    public static let defaultUIDSeed: UInt64 = 0x4E46_4342_5549_4431

    /// With an injected (virtual) clock only virtual time decides a reader timeout: the
    /// phone waits for the app's answer in real time up to this bound, however slowly the
    /// machine schedules the app. With the real clock the wait is the frame waiting time.
    static let virtualClockAnswerBound: Duration = .seconds(10)
    private let isVirtualClock: Bool

    /// The stand-in app's thread (made at the first wake): its task and the card's calls into
    /// the session run there, not on the cooperative pool, so the app answers the reader
    /// (and the card's thread, which waits for it, goes on) however busy the pool is with
    /// other work in the process. It stands in for the phone, hardware of its own whose
    /// answer (microseconds of the model's work) does not wait for its host's other
    /// sessions, so it asks to be real-time (``/NFCBase/ThreadPriority``): at nice 0, under
    /// two test suites at once, it was once not run within the frame waiting time (FWI 7,
    /// 38.7 ms) and `emulate` logged a miss that no phone would have had.
    private let appThread = Mutex<JobThread?>(nil)

    private var appExecutor: JobThread {
        appThread.withLock { t in
            if let t { return t }
            let made = JobThread(name: "nfcbench.hce.app", standsInForHardware: true)
            t = made
            return made
        }
    }

    deinit { appThread.withLock { $0?.stop() } }

    /// The timeline so far, in the order things happened.
    public var events: [HCELiveEvent] { state.withLock { $0.events } }

    /// Names the reader whose events follow (a profile's name), or nil.
    public func setReader(_ name: String?) { state.withLock { $0.reader = name } }

    /// Adds a transport (or bench) event at the current time.
    public func note(
        _ source: HCELiveEvent.Source, _ event: String, command: [UInt8]? = nil,
        response: [UInt8]? = nil, detail: String? = nil
    ) {
        emission.withLock { _ in
            // The model is brought to now first, so what it logs from here on is at this line's
            // time or later; the line's time is the model's now (the clock's reading, unless
            // another thread moved the model past it a moment ago). The model's lines not yet
            // handed on up to that time leave first. Only those: the card's and the app's
            // threads drive the model without this lock, so between reading `t` and reading
            // the log one of them can log a line later than `t` (an APDU, the app's answer, a
            // timer its advance fired); it stays for the next drain, which is at `t` or later
            // (the model's now never goes back). Draining it here sent it out before this
            // earlier line (issue 35: once under 8 CPU burners).
            phone.advance(to: clock())
            let t = phone.now
            let logged = drainLog(upTo: t)
            let e: HCELiveEvent = state.withLock { s in
                let e = HCELiveEvent(
                    time: t, source: source, event: event, reader: s.reader, command: command,
                    response: response, detail: detail)
                s.events.append(e)
                return e
            }
            if let onEvent {
                logged.forEach(onEvent)
                onEvent(e)
            }
        }
    }

    /// A reader's field reaches the phone now: the model's `fieldOn`; when the default
    /// app is woken, its stand-in makes a `CardSession` and starts emulation.
    /// Returns true when the app was woken.
    @discardableResult
    public func fieldOn(_ technology: ReaderTechnology = .iso14443A, ecp: [UInt8]? = nil) -> Bool {
        let woke = phone.fieldOn(technology, ecp: ecp, at: clock())
        if woke {
            let session = phone.makeCardSession()
            blocking { try? await session.startEmulation() }
            let task = Task.detached(executorPreference: appExecutor) { [phone, answer, appAnswered, clock] in
                for await event in session.eventStream {
                    guard case .received(let apdu) = event else { continue }
                    let response = answer(apdu.payload)
                    phone.advance(to: clock())  // a late answer fails like on a phone
                    // A transmissionError means the reader had already given up; either way
                    // the reader's side may look now.
                    try? await apdu.respond(response: response)
                    appAnswered.signal()
                }
            }
            state.withLock { s in
                s.session = session
                s.served = false
                s.appTask = task
            }
        }
        sync()
        return woke
    }

    /// ISO-DEP activation now (RATS answered with ``HCEPhoneIdentity/ats``).
    @discardableResult
    public func activateISODEP() -> Bool {
        let ok = phone.activateISODEP(at: clock())
        sync()
        return ok
    }

    /// The reader sends `command` now. Blocks until the model (or the app, within the
    /// frame waiting time ``/HCEEvents/HCEParameters/frameWaitingTime``) answers.
    public func exchange(_ command: [UInt8]) -> HCELiveAnswer {
        while appAnswered.wait(timeout: .now()) == .success {}  // forget stale signals
        var result: HCELiveAnswer
        switch phone.readerCommand(command, at: clock()) {
        case .answered(let by, let r): result = .answered(by: by, response: r)
        case .timedOut: result = .timedOut
        case .notActivated: result = .notActivated
        case .awaitingApp(let deadline):
            state.withLock { $0.served = true }
            // One wait for the app's answer, up to the deadline (see `virtualClockAnswerBound`
            // for virtual clocks); then the reader looks at the deadline.
            let left = isVirtualClock ? Self.virtualClockAnswerBound : deadline - clock()
            let us = max(left.wholeMicroseconds, 0)
            if us > 0 { _ = appAnswered.wait(timeout: .now() + .microseconds(Int(us))) }
            var look = phone.collectResponse(at: clock())
            if case .awaitingApp = look { look = phone.collectResponse(at: deadline) }
            switch look {
            case .answered(let by, let r): result = .answered(by: by, response: r)
            case .notActivated: result = .notActivated
            case .timedOut, .awaitingApp: result = .timedOut
            }
        }
        sync()
        return result
    }

    /// The field leaves now: the model's `fieldOff` (`readerDeselected` to the app), then the
    /// stand-in app stops emulation and invalidates its session.
    public func fieldOff() {
        phone.fieldOff(at: clock())
        let (session, served, task) = state.withLock { s in
            defer {
                s.session = nil
                s.appTask = nil
            }
            return (s.session, s.served, s.appTask)
        }
        if let session {
            blocking { await session.stopEmulation(status: served ? .success : .none) }
            session.invalidate()
        }
        if let task { blocking { await task.value } }
        sync()
        // That emulation is over: the next field meets a new UID (when it is random).
        state.withLock { s in
            guard var g = s.generator else { return }
            s.identity.uid = HCEPhoneIdentity.randomUID(using: &g)
            s.generator = g
        }
    }

    /// Copies the model's new log lines into the timeline and hands them on, in order.
    private func sync() {
        emission.withLock { _ in
            let new = drainLog()
            if let onEvent { new.forEach(onEvent) }
        }
    }

    /// The model's log lines not yet in the timeline (those at `limit` or earlier, when given),
    /// now added to it (call with `emission` held). The log is in time order.
    private func drainLog(upTo limit: Duration? = nil) -> [HCELiveEvent] {
        let all = phone.log
        let log = limit.map { t in all.prefix { $0.at <= t } } ?? all[...]
        return state.withLock { s in
            guard s.logIndex < log.count else { return [] }
            let uid = s.identity.uid
            let fresh = log[s.logIndex...].map { entry in
                var e = Self.event(from: entry.event, at: entry.at, reader: s.reader)
                if case .isoDepActivated = entry.event { e.uid = uid }
                return e
            }
            s.logIndex = log.count
            s.events += fresh
            return fresh
        }
    }

    static func event(from e: ContactlessPhone.LogEvent, at t: Duration, reader: String?) -> HCELiveEvent {
        let (name, detail) = ContactlessPhone.describe(e)
        var w = HCELiveEvent(time: t, source: .model, event: name, reader: reader)
        w.detail = detail
        switch e {
        case .apdu(let c, let r, let by):
            w.command = c
            w.response = r
            w.answeredBy = by
        case .session(_, .received(let a)): w.command = a.payload
        default: break
        }
        return w
    }

    /// Runs `body` as a task on the app's thread and blocks this (non-pool) thread until it is
    /// done: no pool thread is needed.
    private func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let box = Mutex<T?>(nil)
        Task.detached(executorPreference: appExecutor) {
            let value = await body()
            box.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return box.withLock { $0! }
    }
}
