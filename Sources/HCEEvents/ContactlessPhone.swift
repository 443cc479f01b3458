import NFCTags
import Synchronization

/// RF technology a reader polls with (NFC Forum Activity: NFC-A = ISO/IEC 14443 A,
/// NFC-B = ISO/IEC 14443 B, NFC-F = FeliCa, JIS X 6319-4).
public enum ReaderTechnology: String, Sendable, Equatable, Codable, CaseIterable {
    case iso14443A = "ISO14443A"
    case iso14443B = "ISO14443B"
    case felica = "FeliCa"

    /// ISO-DEP (ISO/IEC 14443-4) exists on A and B only.
    public var supportsISODEP: Bool { self != .felica }
}

/// Who answered an APDU on the phone.
public enum Responder: String, Sendable, Equatable {
    /// The default app's `CardSession`.
    case app
    /// The phone's own software (PPSE, `6A 82`, malformed-APDU status words).
    case system
    /// An express-mode credential that won the field (see ``ContactlessPhone/ExpressCredential``).
    case express
}

/// A virtual-time model of an iPhone (iOS 17.4+, EEA) meeting contactless readers with
/// one default contactless app (entitlement `com.apple.developer.nfc.hce.default-contactless-app`).
///
/// The rules, in order of a tap:
/// 1. **Field on** → the default app is woken (scene `nfcEvent`, and `readerDetected` on
///    its `CardSession` if one exists) whoever the reader is, before any AID exists.
///    Named exceptions: a held ``NFCPresentmentIntentAssertion`` suppresses the wake
///    (``WakeSuppression/presentmentIntentAssertion``); **express-mode rule**: a reader whose
///    polling carries Apple's ECP frame that matches an express credential on the phone
///    wins over the default app (``WakeSuppression/expressCredential(_:)``) and that
///    credential answers every APDU of the tap.
/// 2. **ISO-DEP activation** (RATS/ATS). Readers that never get there (MIFARE Classic
///    doors, Type 2 readers, FeliCa) send no APDU.
/// 3. **SELECT by DF name** (`00 A4 04 xx`): answered by the app's `CardSession` only when
///    the AID starts with a declared ``SelectIdentifierPrefix`` (P2 first or next occurrence
///    route alike) and emulation is in progress; SELECT PPSE is answered by the system
///    (FCI listing the declared identifiers, or `6A 82` when none) unless PPSE is among
///    the prefixes; anything else gets `6A 82` from the system.
/// 4. **Other APDUs** go to the app while its AID is selected. Otherwise the system
///    answers (model choice, documented): nothing selected → `69 85` (conditions of use
///    not satisfied); PPSE selected by the system → `6D 00` (its PPSE responder knows
///    only SELECT). Malformed APDUs: `67 00` (length), `6E 00` (CLA `FF`), `6D 00`
///    (INS `6X`/`9X`), `6A 81` (a SELECT whose length does not parse: reported, Apple
///    developer forums thread 774626), `6A 86` (SELECT P1/P2 not supported), `6A 82` (SELECT by DF
///    name with fewer than 5 bytes).
/// 5. **`readerDeselected`** on field off, or when another AID is selected while the app's
///    is; **field off** ends the tap.
///
/// Time only moves through the `at:` of inputs and ``advance(to:)``; inputs earlier than
/// ``now`` are taken at ``now``.
public final class ContactlessPhone: Sendable {
    /// The default contactless app and its entitlement prefixes.
    public struct DefaultApp: Sendable, Equatable {
        public var name: String
        public var selectIdentifierPrefixes: [SelectIdentifierPrefix]
        public init(name: String = "app", selectIdentifierPrefixes: [SelectIdentifierPrefix]) {
            self.name = name
            self.selectIdentifierPrefixes = selectIdentifierPrefixes
        }

        /// The first prefix matching `aid`, if any.
        public func prefix(matching aid: [UInt8]) -> SelectIdentifierPrefix? {
            selectIdentifierPrefixes.first { $0.matches(aid) }
        }
    }

    /// An express-mode credential in Wallet, chosen by a terminal's ECP frame. The frame
    /// is compared without its CRC (ECP: header `6A`, version, data; kormax/apple-enhanced-
    /// contactless-polling). What it answers is not modelled: `90 00` to every APDU.
    public struct ExpressCredential: Sendable, Equatable {
        public var name: String
        public var ecpFrame: [UInt8]
        public init(name: String, ecpFrame: [UInt8]) {
            self.name = name
            self.ecpFrame = ecpFrame
        }
    }

    /// Why the default app was not woken by a field.
    public enum WakeSuppression: Sendable, Equatable {
        case presentmentIntentAssertion
        case expressCredential(String)
    }

    /// The phone's conditions, checked by `CardSession.init()` and `startEmulation()`.
    public struct Conditions: Sendable, Equatable {
        public var radioEnabled = true
        public var eligible = true
        public var accessAccepted = true
        /// The device supports card sessions (`CardSession.isSupported`); creating a session
        /// on one that does not is a fatal error (documented), not a throw.
        public var supported = true
        /// The phone is locked: a field wakes the default app only after authentication
        /// (``HCEParameters/authenticationLatency``).
        public var locked = false
        public init(
            radioEnabled: Bool = true, eligible: Bool = true, accessAccepted: Bool = true, supported: Bool = true,
            locked: Bool = false
        ) {
            self.radioEnabled = radioEnabled
            self.eligible = eligible
            self.accessAccepted = accessAccepted
            self.supported = supported
            self.locked = locked
        }
    }

    /// What the phone did, in order (the timeline).
    public enum LogEvent: Sendable, Equatable {
        case fieldOn(ReaderTechnology, ecp: [UInt8]?)
        /// A locked phone authenticated its user (then it wakes the default app).
        case authenticated
        /// The system sent an S(WTX) block (`F2 WTXM`) and the reader granted it.
        case waitingTimeExtension(multiplier: UInt8)
        /// The system holds a command for the default app, which is still waking or starting
        /// emulation; it reaches the app once it emulates.
        case heldForApp(command: [UInt8])
        /// The default app woken: scene `nfcEvent` (`NFCWindowSceneEvent.readerDetected`).
        case nfcEvent
        case wakeSuppressed(WakeSuppression)
        case isoDepActivated
        /// A command and its answer; `response == nil`: the reader timed out.
        case apdu(command: [UInt8], response: [UInt8]?, answeredBy: Responder?)
        case session(id: Int, CardSession.Event)
        case emulationStarted(session: Int)
        case emulationStopped(session: Int, status: CardSession.EmulationUIStatus)
        case fieldOff
    }

    /// The name a timeline or trace gives a log event (`fieldOn`, `nfcEvent`,
    /// `wakeSuppressed`, `isoDepActivated`, `apdu`, the CardSession event's name,
    /// `startEmulation`, `stopEmulation`, `fieldOff`) and its one-line detail.
    public static func describe(_ e: LogEvent) -> (name: String, detail: String?) {
        switch e {
        case .fieldOn(let tech, let ecp): ("fieldOn", tech.rawValue + (ecp.map { " ECP " + $0.hexString() } ?? ""))
        case .authenticated: ("authenticated", "the locked phone authenticated its user")
        case .heldForApp: ("heldForApp", "the app is not up yet: the system holds the command for it")
        case .waitingTimeExtension(let m): ("wtx", "S(WTX) F2 \([m].hexString()): the app's answer is not ready")
        case .nfcEvent: ("nfcEvent", nil)
        case .wakeSuppressed(.presentmentIntentAssertion): ("wakeSuppressed", "presentmentIntentAssertion")
        case .wakeSuppressed(.expressCredential(let n)): ("wakeSuppressed", "expressCredential " + n)
        case .isoDepActivated: ("isoDepActivated", nil)
        case .apdu(_, let r, _): ("apdu", r == nil ? "reader timeout" : nil)
        case .session(_, let se):
            if case .sessionInvalidated(let reason) = se { (se.name, reason.description) } else { (se.name, nil) }
        case .emulationStarted: ("startEmulation", nil)
        case .emulationStopped(_, let status): ("stopEmulation", status.rawValue)
        case .fieldOff: ("fieldOff", nil)
        }
    }

    /// The reader's view of one command.
    public enum ReaderExchange: Sendable, Equatable {
        /// Answered at once.
        case answered(by: Responder, response: [UInt8])
        /// Routed to the app as `received(_:)`; collect with ``collectResponse(at:)``
        /// no earlier than the app's answer and no later than `deadline`.
        case awaitingApp(deadline: Duration)
        /// The reader timed out: no answer within the frame waiting time.
        case timedOut
        /// No ISO-DEP link (no field, or not activated): the command was not sent.
        case notActivated
    }

    public let parameters: HCEParameters
    public let defaultApp: DefaultApp?
    public let expressCredentials: [ExpressCredential]

    private enum Selected: Equatable {
        case app([UInt8])
        case systemPPSE
    }
    private struct Pending {
        var apduID: UInt64
        /// The session it was routed to; `nil` while the system holds it for the default app
        /// that is still waking or starting emulation.
        var session: Int?
        var command: [UInt8]
        var sentAt: Duration
        var deadline: Duration
        var response: [UInt8]?
    }
    private struct Field {
        var technology: ReaderTechnology
        var ecp: [UInt8]?
        var express: ExpressCredential?
        var isoDep = false
        var selected: Selected?
        var pending: Pending?
    }
    private struct SessionState {
        /// Where a card session stands; each case carries only what is valid in it.
        enum Phase: Equatable {
            /// Valid, not emulating.
            case idle
            /// `startEmulation()` was called: the sheet comes up and the card answers from
            /// `at` (then `startEmulation` is logged and the phase is ``emulating(since:)``).
            case emulationStarting(at: Duration)
            /// Emulating since `since`, announced.
            case emulating(since: Duration)
            /// Invalidated: over for good.
            case invalidated
        }
        var phase = Phase.idle
        var alert = ""
        var valid: Bool { phase != .invalidated }
        /// When emulation is (or will be) on; later than now while the sheet comes up.
        var emulatingSince: Duration? {
            switch phase {
            case .emulationStarting(let t), .emulating(let t): t
            case .idle, .invalidated: nil
            }
        }
        var emulationAnnounced: Bool { if case .emulating = phase { true } else { false } }
    }
    /// A wake of the default app under way: after authentication (locked) and launch.
    private struct Wake {
        var authenticatedAt: Duration?
        var due: Duration
        /// The default app's scene gets `nfcEvent` (false: only sessions already up hear it).
        var scene: Bool
    }
    private struct Assertion {
        var id: Int
        var expires: Duration
    }
    /// The presentment intent assertion: none, held, or released (or expired) and not to be
    /// taken again before `until`.
    private enum PresentmentIntent {
        case free
        case held(Assertion)
        case coolingDown(until: Duration)
        var held: Assertion? { if case .held(let a) = self { a } else { nil } }
    }
    private struct State {
        var now: Duration = .zero
        var conditions: Conditions
        var log: [(at: Duration, event: LogEvent)] = []
        var sessions: [Int: SessionState] = [:]
        var sessionObjects: [Int: CardSession] = [:]
        var nextSession = 1
        var nextAPDU: UInt64 = 1
        var field: Field?
        var coolDownUntil: Duration?
        var presentment = PresentmentIntent.free
        var nextAssertion = 1
        var inForeground = true
        var wake: Wake?
        var lastWake: Duration?
    }
    private let state: Mutex<State>

    public init(
        defaultApp: DefaultApp?,
        expressCredentials: [ExpressCredential] = [],
        parameters: HCEParameters = HCEParameters(),
        conditions: Conditions = Conditions()
    ) {
        self.defaultApp = defaultApp
        self.expressCredentials = expressCredentials
        self.parameters = parameters
        state = Mutex(State(conditions: conditions))
    }

    // MARK: Observation

    /// Current virtual time.
    public var now: Duration { state.withLock { $0.now } }
    /// Everything that happened so far.
    public var log: [(at: Duration, event: LogEvent)] { state.withLock { $0.log } }
    /// True while a reader's field is present.
    public var fieldPresent: Bool { state.withLock { $0.field != nil } }
    /// Changes the radio/eligibility/access conditions (Settings, region, lock).
    public func setConditions(_ c: Conditions) { state.withLock { $0.conditions = c } }
    /// The conditions now.
    public var conditions: Conditions { state.withLock { $0.conditions } }
    /// When the default app will be woken (a wake under way: authentication, launch), if any.
    public var pendingWake: Duration? { state.withLock { $0.wake?.due } }
    /// When the default app was last woken.
    public var lastWake: Duration? { state.withLock { $0.lastWake } }
    /// The earliest moment something of the system's own is due (a wake, emulation coming
    /// on, an S(WTX), a maximum duration, an assertion expiry), for a driver stepping in
    /// virtual time.
    public var nextDue: Duration? { state.withLock { Self.nextTimer($0, parameters: parameters)?.0 } }

    private static let installed = Mutex<ContactlessPhone?>(nil)
    /// The phone `CardSession()` and its class properties use; `nil` until a host installs
    /// one (then `CardSession.isSupported` is false).
    public static var current: ContactlessPhone? { installed.withLock { $0 } }
    /// Makes `phone` the current one (`nil` removes it).
    public static func install(_ phone: ContactlessPhone?) { installed.withLock { $0 = phone } }

    // MARK: Time

    /// Moves virtual time to `t` (never backwards), firing what falls due: the end of an
    /// emulation at its maximum duration (session invalidated with
    /// `maxSessionDurationReached`, cool-down begins) and presentment-assertion expiry.
    public func advance(to t: Duration) {
        state.withLock { s in Self.advance(&s, to: t, parameters: parameters) }
    }

    private enum Timer {
        case maxDuration(Int)
        case assertionExpiry
        case authenticated
        case wake
        case emulationOn(Int)
        case waitingTimeExtension
    }

    /// The earliest timer of the system's own, if any.
    private static func nextTimer(_ s: State, parameters: HCEParameters) -> (Duration, Timer)? {
        var next: (Duration, Timer)?
        func consider(_ t: Duration, _ timer: Timer) {
            if next == nil || t < next!.0 { next = (t, timer) }
        }
        for id in s.sessions.keys.sorted() {
            guard let ss = s.sessions[id], ss.valid, let since = ss.emulatingSince else { continue }
            if !ss.emulationAnnounced { consider(since, .emulationOn(id)) }
            consider(since + parameters.maximumSessionDuration, .maxDuration(id))
        }
        if let a = s.presentment.held { consider(a.expires, .assertionExpiry) }
        if let w = s.wake {
            if let auth = w.authenticatedAt { consider(auth, .authenticated) } else { consider(w.due, .wake) }
        }
        if parameters.sendsWaitingTimeExtensions, let f = s.field, let p = f.pending, p.response == nil,
            p.deadline - p.sentAt < parameters.frameWaitingTime + parameters.readerWaitingTimeExtensionLimit
        {
            consider(p.deadline, .waitingTimeExtension)
        }
        return next
    }

    private static func advance(_ s: inout State, to t: Duration, parameters: HCEParameters) {
        // Fire due timers in time order (at `t` too: what is due now happens now).
        while let (due, timer) = nextTimer(s, parameters: parameters), due <= t {
            s.now = max(s.now, due)
            switch timer {
            case .maxDuration(let sid):
                s.sessions[sid]?.phase = .idle
                s.coolDownUntil = due + parameters.maximumDurationCoolDown
                invalidate(&s, session: sid, reason: .maxSessionDurationReached)
            case .assertionExpiry:
                s.presentment = .coolingDown(until: due + parameters.presentmentReacquireCoolDown)
            case .authenticated:
                s.wake?.authenticatedAt = nil
                emit(&s, .authenticated)
            case .wake:
                let scene = s.wake?.scene ?? false
                s.wake = nil
                if scene {
                    s.lastWake = s.now
                    emit(&s, .nfcEvent)
                }
                if let f = s.field, f.express == nil {
                    for id in s.sessions.keys.sorted() where s.sessions[id]?.valid == true {
                        deliver(&s, session: id, .readerDetected)
                    }
                }
            case .emulationOn(let sid):
                if case .emulationStarting(let at)? = s.sessions[sid]?.phase {
                    s.sessions[sid]?.phase = .emulating(since: at)
                }
                emit(&s, .emulationStarted(session: sid))
                deliverHeld(&s, to: sid)
            case .waitingTimeExtension:
                guard var f = s.field, var p = f.pending else { break }
                let m = parameters.waitingTimeExtensionMultiplier
                p.deadline = p.deadline + parameters.frameWaitingTime * Int(m)
                f.pending = p
                s.field = f
                emit(&s, .waitingTimeExtension(multiplier: m))
            }
        }
        s.now = max(s.now, t)
    }

    /// An APDU the system held for the default app reaches session `sid` now that it emulates.
    private static func deliverHeld(_ s: inout State, to sid: Int) {
        guard var f = s.field, var p = f.pending, p.session == nil, p.response == nil,
            let obj = s.sessionObjects[sid]
        else { return }
        p.session = sid
        f.pending = p
        s.field = f
        deliver(&s, session: sid, .received(CardSession.APDU(payload: p.command, id: p.apduID, session: obj)))
    }

    private func at(_ s: inout State, _ t: Duration) {
        Self.advance(&s, to: t, parameters: parameters)
    }

    private static func emit(_ s: inout State, _ e: LogEvent) {
        s.log.append((s.now, e))
    }

    private static func deliver(_ s: inout State, session id: Int, _ e: CardSession.Event) {
        guard let obj = s.sessionObjects[id] else { return }
        s.log.append((s.now, .session(id: id, e)))
        obj.deliver(e, at: s.now)
    }

    private static func invalidate(_ s: inout State, session id: Int, reason: CardSession.Error) {
        guard s.sessions[id]?.valid == true else { return }
        s.sessions[id]?.phase = .invalidated
        if var f = s.field, let p = f.pending, p.session == id, p.response == nil {
            f.pending = nil
            s.field = f
        }
        deliver(&s, session: id, .sessionInvalidated(reason: reason))
        s.sessionObjects[id] = nil
    }

    // MARK: Card sessions

    /// Creates the app's `CardSession` now without the checks of Core NFC's `init()` (a
    /// host's shortcut; apps use ``CardSession/init(phone:)``); it delivers `sessionStarted`
    /// at once, and `readerDetected` too when a field is present, the app is awake and no
    /// express credential took the field.
    public func makeCardSession() -> CardSession {
        let id = state.withLock { s in
            defer { s.nextSession += 1 }
            return s.nextSession
        }
        let session = CardSession(id: id, phone: self)
        attach(session)
        return session
    }

    /// Core NFC `CardSession.init()`'s checks: unsupported → a fatal error (documented:
    /// `isSupported`, "to avoid raising fatalError(_:file:line:)"); then `radioDisabled`,
    /// `systemEligibilityFailed`, `accessNotAccepted` (documented: `init()`). Returns the new
    /// session's number.
    func reserveSession() throws(CardSession.Error) -> Int {
        let r: Result<Int, CardSession.Error> = state.withLock { s in
            precondition(
                s.conditions.supported,
                "CardSession: this device does not support card sessions; check CardSession.isSupported first")
            if !s.conditions.radioEnabled { return .failure(.radioDisabled) }
            if !s.conditions.eligible { return .failure(.systemEligibilityFailed) }
            if !s.conditions.accessAccepted { return .failure(.accessNotAccepted) }
            let id = s.nextSession
            s.nextSession += 1
            return .success(id)
        }
        return try r.get()
    }

    /// Registers a new session object: `sessionStarted`, then `readerDetected` when a field
    /// is present and the app is awake.
    func attach(_ session: CardSession) {
        state.withLock { s in
            let id = session.id
            s.sessions[id] = SessionState()
            s.sessionObjects[id] = session
            Self.deliver(&s, session: id, .sessionStarted)
            if let f = s.field, f.express == nil, s.wake == nil { Self.deliver(&s, session: id, .readerDetected) }
        }
    }

    /// Core NFC `CardSession.isEligible`: the device and region allow card sessions now.
    public var isEligible: Bool { state.withLock { $0.conditions.supported && $0.conditions.eligible } }

    func startEmulation(session id: Int) throws(CardSession.Error) {
        let result: CardSession.Error? = state.withLock { s in
            guard let ss = s.sessions[id], ss.valid else { return .invalidated }
            if ss.emulatingSince != nil { return nil }
            if !s.conditions.radioEnabled { return .radioDisabled }
            if !s.conditions.eligible { return .systemEligibilityFailed }
            if !s.conditions.accessAccepted { return .accessNotAccepted }
            if let until = s.coolDownUntil, s.now < until { return .systemNotAvailable }
            if s.sessions.contains(where: { $0.key != id && $0.value.valid && $0.value.emulatingSince != nil }) {
                return .systemNotAvailable
            }
            // The emulation sheet comes up; the card answers once it is up.
            s.sessions[id]?.phase = .emulationStarting(at: s.now + parameters.emulationStartLatency)
            Self.advance(&s, to: s.now, parameters: parameters)
            return nil
        }
        if let result { throw result }
    }

    func stopEmulation(session id: Int, status: CardSession.EmulationUIStatus) {
        state.withLock { s in
            guard s.sessions[id]?.valid == true, s.sessions[id]?.emulatingSince != nil else { return }
            s.sessions[id]?.phase = .idle
            Self.emit(&s, .emulationStopped(session: id, status: status))
        }
    }

    func invalidate(session id: Int, reason: CardSession.Error) {
        state.withLock { s in Self.invalidate(&s, session: id, reason: reason) }
    }

    /// The system ends every valid session with `reason` (e.g. `.invalidated`).
    public func systemInvalidates(_ reason: CardSession.Error = .invalidated) {
        state.withLock { s in
            for id in s.sessions.keys.sorted() { Self.invalidate(&s, session: id, reason: reason) }
        }
    }

    /// The person dismisses the emulation sheet: sessions end with `userInvalidated`.
    public func userDismissesEmulation() { systemInvalidates(.userInvalidated) }

    func isEmulating(session id: Int) -> Bool {
        state.withLock { $0.sessions[id]?.emulatingSince != nil }
    }
    func emulationStarts(session id: Int) -> Duration? { state.withLock { $0.sessions[id]?.emulatingSince } }
    func isValid(session id: Int) -> Bool { state.withLock { $0.sessions[id]?.valid == true } }
    func alertMessage(session id: Int) -> String { state.withLock { $0.sessions[id]?.alert ?? "" } }
    func setAlertMessage(_ m: String, session id: Int) { state.withLock { $0.sessions[id]?.alert = m } }

    func respond(apduID: UInt64, session: Int, response: [UInt8]) throws(CardSession.Error) {
        let ok: Bool = state.withLock { s in
            Self.advance(&s, to: s.now, parameters: parameters)
            guard s.sessions[session]?.valid == true, var f = s.field, var p = f.pending,
                p.apduID == apduID, p.response == nil, s.now <= p.deadline
            else { return false }
            p.response = response
            f.pending = p
            s.field = f
            return true
        }
        if !ok { throw .transmissionError }
    }

    // MARK: Presentment intent

    /// `NFCPresentmentIntentAssertion.acquire()` by the foreground app, now.
    /// Throws ``NFCPresentmentIntentAssertion/Error``.
    public func acquirePresentmentIntent() throws(NFCPresentmentIntentAssertion.Error) -> NFCPresentmentIntentAssertion
    {
        let r: Result<NFCPresentmentIntentAssertion, NFCPresentmentIntentAssertion.Error> = state.withLock { s in
            guard s.inForeground else { return .failure(.notInForeground) }
            switch s.presentment {
            case .held(let a): return .success(NFCPresentmentIntentAssertion(id: a.id, phone: self))
            case .coolingDown(let until) where s.now < until: return .failure(.coolingDown(remaining: until - s.now))
            case .coolingDown, .free: break
            }
            let id = s.nextAssertion
            s.nextAssertion += 1
            s.presentment = .held(Assertion(id: id, expires: s.now + parameters.presentmentAssertionLifetime))
            return .success(NFCPresentmentIntentAssertion(id: id, phone: self))
        }
        return try r.get()
    }

    func releaseAssertion(id: Int) {
        state.withLock { s in
            guard s.presentment.held?.id == id else { return }
            s.presentment = .coolingDown(until: s.now + parameters.presentmentReacquireCoolDown)
        }
    }

    func assertionIsHeld(id: Int) -> Bool { state.withLock { $0.presentment.held?.id == id } }

    /// The app leaves (or returns to) the foreground: leaving releases a presentment
    /// assertion and the system invalidates card sessions with `.invalidated`.
    public func setForeground(_ foreground: Bool) {
        state.withLock { s in
            s.inForeground = foreground
            guard !foreground else { return }
            if s.presentment.held != nil {
                s.presentment = .coolingDown(until: s.now + parameters.presentmentReacquireCoolDown)
            }
            for id in s.sessions.keys.sorted() { Self.invalidate(&s, session: id, reason: .invalidated) }
        }
    }

    // MARK: The reader's side

    /// A reader's field appears at `t` with `technology` and, when its polling loop carries
    /// one, an ECP frame (without CRC). Returns true when the default app is (or will be)
    /// woken: after ``HCEParameters/authenticationLatency`` when the phone is locked, then
    /// after ``HCEParameters/wakeLatency`` (the launch) unless a session of the app is
    /// already up; `nfcEvent` and `readerDetected` come then (``advance(to:)``). A wake under
    /// way goes on when the field leaves (the app launches for nothing).
    @discardableResult
    public func fieldOn(_ technology: ReaderTechnology, ecp: [UInt8]? = nil, at t: Duration) -> Bool {
        state.withLock { s in
            at(&s, t)
            if s.field != nil { Self.fieldOff(&s) }
            var f = Field(technology: technology, ecp: ecp)
            if let ecp, let match = expressCredentials.first(where: { $0.ecpFrame == ecp }) {
                f.express = match
            }
            s.field = f
            Self.emit(&s, .fieldOn(technology, ecp: ecp))
            if let express = f.express {
                Self.emit(&s, .wakeSuppressed(.expressCredential(express.name)))
                return false
            }
            if s.presentment.held != nil {
                Self.emit(&s, .wakeSuppressed(.presentmentIntentAssertion))
                for id in s.sessions.keys.sorted() where s.sessions[id]?.valid == true {
                    Self.deliver(&s, session: id, .readerDetected)
                }
                return false
            }
            let appUp = s.sessions.values.contains { $0.valid }
            guard defaultApp != nil || appUp else { return false }
            if s.wake == nil {
                let auth: Duration? = s.conditions.locked ? s.now + parameters.authenticationLatency : nil
                let launch = appUp ? Duration.zero : parameters.wakeLatency
                s.wake = Wake(authenticatedAt: auth, due: (auth ?? s.now) + launch, scene: defaultApp != nil)
            }
            Self.advance(&s, to: s.now, parameters: parameters)
            return defaultApp != nil
        }
    }

    /// ISO-DEP activation (RATS answered with the phone's ATS) at `t`. False when no
    /// field is present or the technology has no ISO-DEP (FeliCa).
    @discardableResult
    public func activateISODEP(at t: Duration) -> Bool {
        state.withLock { s in
            at(&s, t)
            guard var f = s.field, f.technology.supportsISODEP else { return false }
            if !f.isoDep {
                f.isoDep = true
                s.field = f
                Self.emit(&s, .isoDepActivated)
            }
            return true
        }
    }

    /// The reader sends `command` at `t`.
    public func readerCommand(_ command: [UInt8], at t: Duration) -> ReaderExchange {
        state.withLock { s in
            at(&s, t)
            guard var f = s.field, f.isoDep else { return .notActivated }
            if let p = f.pending {  // a new command abandons an unanswered one
                Self.emit(
                    &s, .apdu(command: p.command, response: p.response, answeredBy: p.response == nil ? nil : .app))
                f.pending = nil
            }
            if let express = f.express {
                _ = express
                s.field = f
                let r: [UInt8] = [0x90, 0x00]
                Self.emit(&s, .apdu(command: command, response: r, answeredBy: .express))
                return .answered(by: .express, response: r)
            }
            let route = route(command, field: &f, state: s)
            switch route {
            case .system(let response):
                s.field = f
                Self.emit(&s, .apdu(command: command, response: response, answeredBy: .system))
                return .answered(by: .system, response: response)
            case .app(let sessionID, let deselectFirst):
                if deselectFirst {
                    s.field = f
                    Self.deliver(&s, session: sessionID, .readerDeselected)
                }
                let id = s.nextAPDU
                s.nextAPDU += 1
                let deadline = s.now + parameters.frameWaitingTime
                f.pending = Pending(
                    apduID: id, session: sessionID, command: command, sentAt: s.now, deadline: deadline)
                s.field = f
                guard let obj = s.sessionObjects[sessionID] else { return .timedOut }
                Self.deliver(
                    &s, session: sessionID, .received(CardSession.APDU(payload: command, id: id, session: obj)))
                return .awaitingApp(deadline: deadline)
            case .heldForApp:
                // The default app is waking or starting emulation: the system keeps the reader
                // waiting (S(WTX)) and hands the APDU over once the app emulates.
                let id = s.nextAPDU
                s.nextAPDU += 1
                let deadline = s.now + parameters.frameWaitingTime
                f.pending = Pending(apduID: id, session: nil, command: command, sentAt: s.now, deadline: deadline)
                s.field = f
                Self.emit(&s, .heldForApp(command: command))
                return .awaitingApp(deadline: deadline)
            case .systemAfterDeselect(let sessionID, let response):
                s.field = f
                Self.deliver(&s, session: sessionID, .readerDeselected)
                Self.emit(&s, .apdu(command: command, response: response, answeredBy: .system))
                return .answered(by: .system, response: response)
            }
        }
    }

    /// The reader looks for the app's answer at `t`: `.answered` when the app responded,
    /// `.timedOut` when `t` is past the frame waiting time, as extended by the system's
    /// S(WTX) up to the reader's limit, with no answer; otherwise `.awaitingApp` again (with
    /// the deadline as extended so far).
    public func collectResponse(at t: Duration) -> ReaderExchange {
        state.withLock { s in
            guard s.field?.pending != nil else { return .notActivated }
            at(&s, t)
            guard var f = s.field, let p = f.pending else { return .notActivated }
            if let r = p.response {
                f.pending = nil
                s.field = f
                Self.emit(&s, .apdu(command: p.command, response: r, answeredBy: .app))
                return .answered(by: .app, response: r)
            }
            guard s.now >= p.deadline else { return .awaitingApp(deadline: p.deadline) }
            // The reader gives up; a late respond() fails with transmissionError.
            if var f2 = s.field {
                f2.pending = nil
                s.field = f2
            }
            Self.emit(&s, .apdu(command: p.command, response: nil, answeredBy: nil))
            return .timedOut
        }
    }

    /// The field disappears at `t`: `readerDeselected` to the app if its AID was
    /// selected or it had seen the reader, then `fieldOff`.
    public func fieldOff(at t: Duration) {
        state.withLock { s in
            at(&s, t)
            Self.fieldOff(&s)
        }
    }

    private static func fieldOff(_ s: inout State) {
        guard let f = s.field else { return }
        if let p = f.pending {
            s.log.append(
                (s.now, .apdu(command: p.command, response: p.response, answeredBy: p.response == nil ? nil : .app)))
        }
        if f.express == nil {
            for id in s.sessions.keys.sorted() where s.sessions[id]?.valid == true {
                deliver(&s, session: id, .readerDeselected)
            }
        }
        s.field = nil
        emit(&s, .fieldOff)
    }

    // MARK: Routing

    private enum Route {
        case system([UInt8])
        case app(session: Int, deselectFirst: Bool)
        case heldForApp
        case systemAfterDeselect(session: Int, [UInt8])
    }

    /// The emulating session of the default app (its card answering now), if any.
    private func emulatingSession(_ s: State) -> Int? {
        s.sessions.keys.sorted().first { s.sessions[$0]?.valid == true && s.sessions[$0]?.emulationAnnounced == true }
    }

    /// The default app is on its way (waking, or up and about to emulate) and the system
    /// holds APDUs for it with S(WTX).
    private func appOnItsWay(_ s: State) -> Bool {
        guard parameters.sendsWaitingTimeExtensions, defaultApp != nil, s.field?.express == nil else { return false }
        if s.wake != nil { return true }
        return s.sessions.values.contains { $0.valid && $0.emulatingSince != nil && !$0.emulationAnnounced }
    }

    private func route(_ command: [UInt8], field f: inout Field, state s: State) -> Route {
        let parsed: CommandAPDU
        switch screenCommand(command) {
        case .refused(let sw): return .system(sw.bytes)
        case .command(let c): parsed = c
        }
        let isSelect = parsed.ins == 0xA4 && parsed.cla & 0x80 == 0
        guard isSelect, parsed.p1 == 0x04 else {
            // Non-SELECT, or SELECT by file identifier / path: the selected application's.
            switch f.selected {
            case .app:
                if let sid = emulatingSession(s) { return .app(session: sid, deselectFirst: false) }
                f.selected = nil
                return .system(StatusWord.conditionsNotSatisfied.bytes)
            case .systemPPSE:
                return .system(isSelect ? StatusWord.fileNotFound.bytes : StatusWord.insNotSupported.bytes)
            case nil:
                return .system(isSelect ? StatusWord.fileNotFound.bytes : StatusWord.conditionsNotSatisfied.bytes)
            }
        }
        // SELECT by DF name. P2: b2b1 occurrence (00 first, 10 next; last/previous
        // unsupported), b4b3 answer (FCI 00, FCP 04, FMD 08, none 0C).
        let occurrence = parsed.p2 & 0x03
        guard occurrence == 0x00 || occurrence == 0x02, parsed.p2 & 0xF0 == 0 else {
            return .system(StatusWord.wrongParameters.bytes)
        }
        let aid = parsed.data
        guard aid.count >= 5 else { return .system(StatusWord.fileNotFound.bytes) }
        let previous = f.selected
        let appSelected: [UInt8]? = if case .app(let a) = previous { a } else { nil }
        let deselectSession: Int? = (appSelected != nil && appSelected != aid) ? emulatingSession(s) : nil

        let app = defaultApp
        let ppseEntitled = app?.prefix(matching: WellKnownAID.ppse) != nil
        if aid == WellKnownAID.ppse && !ppseEntitled {
            f.selected = .systemPPSE
            let fci = Self.ppseFCI(listing: app?.selectIdentifierPrefixes ?? [])
            if let d = deselectSession { return .systemAfterDeselect(session: d, fci) }
            return .system(fci)
        }
        if app?.prefix(matching: aid) != nil, let sid = emulatingSession(s) {
            f.selected = .app(aid)
            return .app(session: sid, deselectFirst: deselectSession != nil)
        }
        if app?.prefix(matching: aid) != nil, deselectSession == nil, appOnItsWay(s) {
            f.selected = .app(aid)
            return .heldForApp
        }
        f.selected = nil
        if let d = deselectSession { return .systemAfterDeselect(session: d, StatusWord.fileNotFound.bytes) }
        return .system(StatusWord.fileNotFound.bytes)
    }

    /// The system's answer to SELECT PPSE: FCI template `6F` with DF name `84` = PPSE and
    /// an FCI proprietary template `A5` → `BF0C` holding one directory entry `61` with
    /// ADF name `4F` per declared identifier (EMV Book B §3.3.1), then `90 00`.
    /// No declared identifier → `6A 82`.
    static func ppseFCI(listing prefixes: [SelectIdentifierPrefix]) -> [UInt8] {
        let adfs = prefixes.map(\.bytes).filter { $0 != WellKnownAID.ppse }
        guard !adfs.isEmpty else { return StatusWord.fileNotFound.bytes }
        func tlv(_ tag: [UInt8], _ value: [UInt8]) -> [UInt8] {
            // Lengths here stay below 128 for up to 5 entries; longer uses 81 xx.
            value.count < 0x80
                ? tag + [UInt8(value.count)] + value
                : tag + [0x81, UInt8(truncatingIfNeeded: value.count)] + value
        }
        let entries = adfs.prefix(8).flatMap { tlv([0x61], tlv([0x4F], $0)) }
        let body = tlv([0x84], WellKnownAID.ppse) + tlv([0xA5], tlv([0xBF, 0x0C], entries))
        return tlv([0x6F], body) + StatusWord.success.bytes
    }
}
