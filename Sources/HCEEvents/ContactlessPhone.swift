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
///
/// The state and the rules are one value machine inside (inputs in, actions out, as the
/// reader session's and the PN532's are); the phone holds it with the timeline and the
/// session objects under one lock and performs what each call returns before the call ends.
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

    /// The machine (every rule and all of the state), the timeline and the session objects,
    /// under one lock: each call applies one input and performs its actions before it returns.
    private struct Locked {
        var machine: ContactlessPhoneMachine
        var log: [(at: Duration, event: LogEvent)] = []
        /// The objects of valid sessions (an invalidated one is let go after its last event).
        var sessionObjects: [Int: CardSession] = [:]

        /// Applies `input`, performs its actions in order, returns the machine's reply.
        mutating func apply(_ input: ContactlessPhoneMachine.Input) -> ContactlessPhoneMachine.Reply {
            let output = machine.apply(input)
            for action in output.actions {
                switch action {
                case .log(let e, let t): log.append((t, e))
                case .deliver(let id, let d, let t):
                    guard let obj = sessionObjects[id] else { continue }
                    let e: CardSession.Event =
                        switch d {
                        case .sessionStarted: .sessionStarted
                        case .readerDetected: .readerDetected
                        case .received(let payload, let apduID):
                            .received(CardSession.APDU(payload: payload, id: apduID, session: obj))
                        case .readerDeselected: .readerDeselected
                        case .sessionInvalidated(let reason): .sessionInvalidated(reason: reason)
                        }
                    log.append((t, .session(id: id, e)))
                    obj.deliver(e, at: t)
                    if case .sessionInvalidated = d { sessionObjects[id] = nil }
                }
            }
            return output.reply
        }
    }
    private let state: Mutex<Locked>

    public init(
        defaultApp: DefaultApp?,
        expressCredentials: [ExpressCredential] = [],
        parameters: HCEParameters = HCEParameters(),
        conditions: Conditions = Conditions()
    ) {
        self.defaultApp = defaultApp
        self.expressCredentials = expressCredentials
        self.parameters = parameters
        state = Mutex(
            Locked(
                machine: ContactlessPhoneMachine(
                    defaultApp: defaultApp, expressCredentials: expressCredentials, parameters: parameters,
                    conditions: conditions)))
    }

    private func apply(_ input: ContactlessPhoneMachine.Input) -> ContactlessPhoneMachine.Reply {
        state.withLock { $0.apply(input) }
    }
    private func read<T>(_ f: (ContactlessPhoneMachine) -> T) -> T { state.withLock { f($0.machine) } }

    // MARK: Observation

    /// Current virtual time.
    public var now: Duration { read(\.now) }
    /// Everything that happened so far.
    public var log: [(at: Duration, event: LogEvent)] { state.withLock { $0.log } }
    /// True while a reader's field is present.
    public var fieldPresent: Bool { read(\.fieldPresent) }
    /// Changes the radio/eligibility/access conditions (Settings, region, lock).
    public func setConditions(_ c: Conditions) { _ = apply(.setConditions(c)) }
    /// The conditions now.
    public var conditions: Conditions { read(\.conditions) }
    /// When the default app will be woken (a wake under way: authentication, launch), if any.
    public var pendingWake: Duration? { read(\.wake.due) }
    /// When the default app was last woken.
    public var lastWake: Duration? { read(\.lastWake) }
    /// The earliest moment something of the system's own is due (a wake, emulation coming
    /// on, an S(WTX), a maximum duration, an assertion expiry), for a driver stepping in
    /// virtual time.
    public var nextDue: Duration? { read(\.nextDue) }

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
    public func advance(to t: Duration) { _ = apply(.advance(to: t)) }

    // MARK: Card sessions

    /// Creates the app's `CardSession` now without the checks of Core NFC's `init()` (a
    /// host's shortcut; apps use ``CardSession/init(phone:)``); it delivers `sessionStarted`
    /// at once, and `readerDetected` too when a field is present, the app is awake and no
    /// express credential took the field.
    public func makeCardSession() -> CardSession {
        guard case .session(let id) = apply(.newSessionNumber) else { preconditionFailure("a session number") }
        let session = CardSession(id: id, phone: self)
        attach(session)
        return session
    }

    /// Core NFC `CardSession.init()`'s checks: unsupported → a fatal error (documented:
    /// `isSupported`, "to avoid raising fatalError(_:file:line:)"); then `radioDisabled`,
    /// `systemEligibilityFailed`, `accessNotAccepted` (documented: `init()`). Returns the new
    /// session's number.
    func reserveSession() throws(CardSession.Error) -> Int {
        switch apply(.reserveSession) {
        case .session(let id): return id
        case .sessionError(let e): throw e
        default: preconditionFailure("a session number or an error")
        }
    }

    /// Registers a new session object: `sessionStarted`, then `readerDetected` when a field
    /// is present and the app is awake.
    func attach(_ session: CardSession) {
        state.withLock { s in
            s.sessionObjects[session.id] = session
            _ = s.apply(.attach(session: session.id))
        }
    }

    /// Core NFC `CardSession.isEligible`: the device and region allow card sessions now.
    public var isEligible: Bool { read(\.isEligible) }

    func startEmulation(session id: Int) throws(CardSession.Error) {
        if case .sessionError(let e) = apply(.startEmulation(session: id)) { throw e }
    }

    func stopEmulation(session id: Int, status: CardSession.EmulationUIStatus) {
        _ = apply(.stopEmulation(session: id, status: status))
    }

    func invalidate(session id: Int, reason: CardSession.Error) { _ = apply(.invalidate(session: id, reason: reason)) }

    /// The system ends every valid session with `reason` (e.g. `.invalidated`).
    public func systemInvalidates(_ reason: CardSession.Error = .invalidated) { _ = apply(.systemInvalidates(reason)) }

    /// The person dismisses the emulation sheet: sessions end with `userInvalidated`.
    public func userDismissesEmulation() { systemInvalidates(.userInvalidated) }

    func isEmulating(session id: Int) -> Bool { read { $0.isEmulating(session: id) } }
    func isValid(session id: Int) -> Bool { read { $0.isValid(session: id) } }
    func alertMessage(session id: Int) -> String { read { $0.alertMessage(session: id) } }
    func setAlertMessage(_ m: String, session id: Int) { _ = apply(.setAlertMessage(m, session: id)) }

    func respond(apduID: UInt64, session: Int, response: [UInt8]) throws(CardSession.Error) {
        guard apply(.respond(apduID: apduID, session: session, response: response)) == .accepted(true) else {
            throw .transmissionError
        }
    }

    // MARK: Presentment intent

    /// `NFCPresentmentIntentAssertion.acquire()` by the foreground app, now.
    /// Throws ``NFCPresentmentIntentAssertion/Error``.
    public func acquirePresentmentIntent() throws(NFCPresentmentIntentAssertion.Error) -> NFCPresentmentIntentAssertion
    {
        switch apply(.acquirePresentmentIntent) {
        case .assertion(let id): return NFCPresentmentIntentAssertion(id: id, phone: self)
        case .assertionError(let e): throw e
        default: preconditionFailure("an assertion or an error")
        }
    }

    func releaseAssertion(id: Int) { _ = apply(.releaseAssertion(id: id)) }

    func assertionIsHeld(id: Int) -> Bool { read { $0.assertionIsHeld(id: id) } }

    /// The app leaves (or returns to) the foreground: leaving releases a presentment
    /// assertion and the system invalidates card sessions with `.invalidated`.
    public func setForeground(_ foreground: Bool) { _ = apply(.setForeground(foreground)) }

    // MARK: The reader's side

    /// A reader's field appears at `t` with `technology` and, when its polling loop carries
    /// one, an ECP frame (without CRC). Returns true when the default app is (or will be)
    /// woken: after ``HCEParameters/authenticationLatency`` when the phone is locked, then
    /// after ``HCEParameters/wakeLatency`` (the launch) unless a session of the app is
    /// already up; `nfcEvent` and `readerDetected` come then (``advance(to:)``). A wake under
    /// way goes on when the field leaves (the app launches for nothing).
    @discardableResult
    public func fieldOn(_ technology: ReaderTechnology, ecp: [UInt8]? = nil, at t: Duration) -> Bool {
        apply(.fieldOn(technology, ecp: ecp, at: t)) == .accepted(true)
    }

    /// ISO-DEP activation (RATS answered with the phone's ATS) at `t`. False when no
    /// field is present or the technology has no ISO-DEP (FeliCa).
    @discardableResult
    public func activateISODEP(at t: Duration) -> Bool { apply(.activateISODEP(at: t)) == .accepted(true) }

    /// The reader sends `command` at `t`.
    public func readerCommand(_ command: [UInt8], at t: Duration) -> ReaderExchange {
        exchange(apply(.readerCommand(command, at: t)))
    }

    /// The reader looks for the app's answer at `t`: `.answered` when the app responded,
    /// `.timedOut` when `t` is past the frame waiting time, as extended by the system's
    /// S(WTX) up to the reader's limit, with no answer; otherwise `.awaitingApp` again (with
    /// the deadline as extended so far).
    public func collectResponse(at t: Duration) -> ReaderExchange { exchange(apply(.collectResponse(at: t))) }

    /// The field disappears at `t`: `readerDeselected` to the app if its AID was
    /// selected or it had seen the reader, then `fieldOff`.
    public func fieldOff(at t: Duration) { _ = apply(.fieldOff(at: t)) }

    private func exchange(_ reply: ContactlessPhoneMachine.Reply) -> ReaderExchange {
        guard case .exchange(let x) = reply else { preconditionFailure("a reader exchange") }
        return x
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
