import NFCTags

/// The rules of ``ContactlessPhone`` as a pure value: inputs in, actions out (the house style
/// of a state machine, as `ReaderSessionMachine` and `PN532ChipMachine` are). The phone holds
/// one under its lock with the timeline and the session objects, feeds it each call (with the
/// virtual time it carries) and performs the returned ``Action`` values in order: a timeline
/// line, or an event delivered to a session object. The machine reads no clock and holds no
/// object; what it answers a call comes back as the ``Output/reply``.
///
/// The state, each part carrying only what is valid in it:
/// - ``rf``: no field, or a reader's field held by the system (the default app's side: the
///   ISO-DEP link, what is selected, the command in flight) or taken by an express
///   credential (which answers every APDU itself).
/// - ``wake``: no wake, a locked phone authenticating its user, or the app launching.
/// - each session's ``Session/Phase`` (idle, emulation starting, emulating, invalidated).
/// - ``presentment``: the presentment intent assertion free, held or cooling down;
///   ``maxDurationCoolDown`` after a session reached its maximum duration; ``place``.
struct ContactlessPhoneMachine: Sendable {
    let parameters: HCEParameters
    let defaultApp: ContactlessPhone.DefaultApp?
    let expressCredentials: [ContactlessPhone.ExpressCredential]

    /// What is selected on the ISO-DEP link.
    enum Selected: Sendable, Equatable {
        case nothing
        case app([UInt8])
        case systemPPSE
    }

    /// A command the reader sent and waits on.
    struct Command: Sendable, Equatable {
        var apduID: UInt64
        var bytes: [UInt8]
        var sentAt: Duration
        /// The frame waiting time's end, moved on by each S(WTX).
        var deadline: Duration
    }

    /// The command in flight on the link, if any.
    enum Exchange: Sendable, Equatable {
        case none
        /// The system holds it for the default app that is still waking or starting emulation.
        case heldForApp(Command)
        /// Delivered to session `session`, not answered yet.
        case routed(session: Int, Command)
        /// The app answered it; the reader has not collected the answer yet.
        case answered(Command, response: [UInt8])

        var command: Command? {
            switch self {
            case .none: nil
            case .heldForApp(let c), .routed(_, let c), .answered(let c, _): c
            }
        }
        /// The timeline line of a command given up (a new command, or the field leaving).
        var abandoned: ContactlessPhone.LogEvent? {
            switch self {
            case .none: nil
            case .heldForApp(let c), .routed(_, let c): .apdu(command: c.bytes, response: nil, answeredBy: nil)
            case .answered(let c, let r): .apdu(command: c.bytes, response: r, answeredBy: .app)
            }
        }
    }

    /// The ISO-DEP link of a field the system holds.
    enum Link: Sendable, Equatable {
        /// RATS not sent yet: no APDU can come.
        case polling
        case isoDep(selected: Selected, exchange: Exchange)
    }

    /// Who holds a reader's field.
    enum Holder: Sendable, Equatable {
        /// The system and the default app (routing by SELECT).
        case system(Link)
        /// An express credential won the field by the reader's ECP frame; `isoDep` once activated.
        case express(ContactlessPhone.ExpressCredential, isoDep: Bool)
    }

    /// The reader's field.
    enum RF: Sendable, Equatable {
        case off
        case on(ReaderTechnology, Holder)
    }

    /// A wake of the default app under way.
    enum Wake: Sendable, Equatable {
        case none
        /// The locked phone authenticates its user at `at`, then the wake is `due`.
        case authenticating(at: Duration, due: Duration)
        /// The app launches (or, already up, hears the reader) at `due`.
        case launching(due: Duration)

        var due: Duration? {
            switch self {
            case .none: nil
            case .authenticating(_, let d), .launching(let d): d
            }
        }
    }

    /// A card session of the default app.
    struct Session: Sendable, Equatable {
        /// Where a card session stands; each case carries only what is valid in it.
        enum Phase: Sendable, Equatable {
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

    struct Assertion: Sendable, Equatable {
        var id: Int
        var expires: Duration
    }

    /// The presentment intent assertion: none, held, or released (or expired) and not to be
    /// taken again before `until`.
    enum PresentmentIntent: Sendable, Equatable {
        case free
        case held(Assertion)
        case coolingDown(until: Duration)
        var held: Assertion? { if case .held(let a) = self { a } else { nil } }
    }

    /// The device's cool-down after an emulation reached its maximum duration.
    enum MaxDurationCoolDown: Sendable, Equatable {
        case none
        case until(Duration)
    }

    /// Where the app is.
    enum Place: Sendable, Equatable { case foreground, background }

    private(set) var now: Duration = .zero
    private(set) var conditions: ContactlessPhone.Conditions
    private(set) var sessions: [Int: Session] = [:]
    private(set) var nextSession = 1
    private(set) var nextAPDU: UInt64 = 1
    private(set) var rf = RF.off
    private(set) var maxDurationCoolDown = MaxDurationCoolDown.none
    private(set) var presentment = PresentmentIntent.free
    private(set) var nextAssertion = 1
    private(set) var place = Place.foreground
    private(set) var wake = Wake.none
    /// When the default app last got `nfcEvent` (a record, not a rule: `nil` before the first).
    private(set) var lastWake: Duration?
    private var out: [Action] = []

    init(
        defaultApp: ContactlessPhone.DefaultApp?, expressCredentials: [ContactlessPhone.ExpressCredential],
        parameters: HCEParameters, conditions: ContactlessPhone.Conditions
    ) {
        self.defaultApp = defaultApp
        self.expressCredentials = expressCredentials
        self.parameters = parameters
        self.conditions = conditions
    }

    /// An event for a session object (``CardSession/Event``, the APDU by its number).
    enum Delivery: Sendable, Equatable {
        case sessionStarted
        case readerDetected
        case received(payload: [UInt8], apduID: UInt64)
        case readerDeselected
        case sessionInvalidated(reason: CardSession.Error)
    }

    /// What the phone performs, in order.
    enum Action: Sendable, Equatable {
        /// A timeline line (never `.session`: deliveries log their own).
        case log(ContactlessPhone.LogEvent, at: Duration)
        /// Deliver to session `session`'s object (and log it), if it still has one.
        case deliver(session: Int, Delivery, at: Duration)
    }

    /// What happens to the phone (each call of ``ContactlessPhone``; times are virtual).
    enum Input: Sendable, Equatable {
        case advance(to: Duration)
        case setConditions(ContactlessPhone.Conditions)
        case fieldOn(ReaderTechnology, ecp: [UInt8]?, at: Duration)
        case activateISODEP(at: Duration)
        case readerCommand([UInt8], at: Duration)
        case collectResponse(at: Duration)
        case fieldOff(at: Duration)
        /// A session number for ``ContactlessPhone/makeCardSession()`` (no checks).
        case newSessionNumber
        /// `CardSession.init()`'s checks, then a session number.
        case reserveSession
        /// The session object `session` exists: `sessionStarted`, then maybe `readerDetected`.
        case attach(session: Int)
        case startEmulation(session: Int)
        case stopEmulation(session: Int, status: CardSession.EmulationUIStatus)
        case invalidate(session: Int, reason: CardSession.Error)
        case systemInvalidates(CardSession.Error)
        case setAlertMessage(String, session: Int)
        case respond(apduID: UInt64, session: Int, response: [UInt8])
        case acquirePresentmentIntent
        case releaseAssertion(id: Int)
        case setForeground(Bool)
    }

    /// The machine's answer to an input.
    enum Reply: Sendable, Equatable {
        case none
        case accepted(Bool)
        case exchange(ContactlessPhone.ReaderExchange)
        case session(Int)
        case sessionError(CardSession.Error)
        case assertion(id: Int)
        case assertionError(NFCPresentmentIntentAssertion.Error)
    }

    struct Output: Sendable, Equatable {
        var reply: Reply
        var actions: [Action]
    }

    // MARK: Reads

    var fieldPresent: Bool { rf != .off }
    var isEligible: Bool { conditions.supported && conditions.eligible }
    func assertionIsHeld(id: Int) -> Bool { presentment.held?.id == id }
    func isEmulating(session id: Int) -> Bool { sessions[id]?.emulatingSince != nil }
    func isValid(session id: Int) -> Bool { sessions[id]?.valid == true }
    func alertMessage(session id: Int) -> String { sessions[id]?.alert ?? "" }
    /// The earliest moment something of the system's own is due.
    var nextDue: Duration? { nextTimer()?.0 }

    private var express: ContactlessPhone.ExpressCredential? {
        if case .on(_, .express(let e, _)) = rf { e } else { nil }
    }
    private var exchange: Exchange {
        if case .on(_, .system(.isoDep(_, let x))) = rf { x } else { .none }
    }
    /// Sets the command in flight (only on an ISO-DEP link the system holds).
    private mutating func setExchange(_ x: Exchange) {
        guard case .on(let tech, .system(.isoDep(let sel, _))) = rf else { return }
        rf = .on(tech, .system(.isoDep(selected: sel, exchange: x)))
    }

    // MARK: Inputs

    /// One input: the state moves; the actions are for the phone to perform, in order.
    mutating func apply(_ input: Input) -> Output {
        out = []
        let reply = take(input)
        defer { out = [] }
        return Output(reply: reply, actions: out)
    }

    private mutating func take(_ input: Input) -> Reply {
        switch input {
        case .advance(let t):
            advance(to: t)
            return .none
        case .setConditions(let c):
            conditions = c
            return .none
        case .fieldOn(let technology, let ecp, let t):
            return .accepted(fieldOn(technology, ecp: ecp, at: t))
        case .activateISODEP(let t):
            advance(to: t)
            switch rf {
            case .off: return .accepted(false)
            case .on(let tech, _) where !tech.supportsISODEP: return .accepted(false)
            case .on(let tech, .system(.polling)):
                rf = .on(tech, .system(.isoDep(selected: .nothing, exchange: .none)))
                emit(.isoDepActivated)
            case .on(let tech, .express(let e, isoDep: false)):
                rf = .on(tech, .express(e, isoDep: true))
                emit(.isoDepActivated)
            case .on(_, .system(.isoDep)), .on(_, .express(_, isoDep: true)): break
            }
            return .accepted(true)
        case .readerCommand(let command, let t):
            advance(to: t)
            return .exchange(readerCommand(command))
        case .collectResponse(let t):
            return .exchange(collectResponse(at: t))
        case .fieldOff(let t):
            advance(to: t)
            fieldOff()
            return .none
        case .newSessionNumber:
            defer { nextSession += 1 }
            return .session(nextSession)
        case .reserveSession:
            precondition(
                conditions.supported,
                "CardSession: this device does not support card sessions; check CardSession.isSupported first")
            if !conditions.radioEnabled { return .sessionError(.radioDisabled) }
            if !conditions.eligible { return .sessionError(.systemEligibilityFailed) }
            if !conditions.accessAccepted { return .sessionError(.accessNotAccepted) }
            defer { nextSession += 1 }
            return .session(nextSession)
        case .attach(let id):
            sessions[id] = Session()
            deliver(id, .sessionStarted)
            if case .on(_, .system) = rf, wake == .none { deliver(id, .readerDetected) }
            return .none
        case .startEmulation(let id):
            return startEmulation(session: id).map { .sessionError($0) } ?? .none
        case .stopEmulation(let id, let status):
            guard sessions[id]?.valid == true, sessions[id]?.emulatingSince != nil else { return .none }
            sessions[id]?.phase = .idle
            emit(.emulationStopped(session: id, status: status))
            return .none
        case .invalidate(let id, let reason):
            invalidate(session: id, reason: reason)
            return .none
        case .systemInvalidates(let reason):
            for id in sessions.keys.sorted() { invalidate(session: id, reason: reason) }
            return .none
        case .setAlertMessage(let m, let id):
            sessions[id]?.alert = m
            return .none
        case .respond(let apduID, let session, let response):
            advance(to: now)
            guard sessions[session]?.valid == true, case .routed(_, let c) = exchange, c.apduID == apduID,
                now <= c.deadline
            else { return .accepted(false) }
            setExchange(.answered(c, response: response))
            return .accepted(true)
        case .acquirePresentmentIntent:
            guard place == .foreground else { return .assertionError(.notInForeground) }
            switch presentment {
            case .held(let a): return .assertion(id: a.id)
            case .coolingDown(let until) where now < until: return .assertionError(.coolingDown(remaining: until - now))
            case .coolingDown, .free: break
            }
            let id = nextAssertion
            nextAssertion += 1
            presentment = .held(Assertion(id: id, expires: now + parameters.presentmentAssertionLifetime))
            return .assertion(id: id)
        case .releaseAssertion(let id):
            if presentment.held?.id == id {
                presentment = .coolingDown(until: now + parameters.presentmentReacquireCoolDown)
            }
            return .none
        case .setForeground(let foreground):
            place = foreground ? .foreground : .background
            guard !foreground else { return .none }
            if presentment.held != nil {
                presentment = .coolingDown(until: now + parameters.presentmentReacquireCoolDown)
            }
            for id in sessions.keys.sorted() { invalidate(session: id, reason: .invalidated) }
            return .none
        }
    }

    private mutating func fieldOn(_ technology: ReaderTechnology, ecp: [UInt8]?, at t: Duration) -> Bool {
        advance(to: t)
        if rf != .off { fieldOff() }
        let match = ecp.flatMap { ecp in expressCredentials.first { $0.ecpFrame == ecp } }
        rf = .on(technology, match.map { .express($0, isoDep: false) } ?? .system(.polling))
        emit(.fieldOn(technology, ecp: ecp))
        if let match {
            emit(.wakeSuppressed(.expressCredential(match.name)))
            return false
        }
        if presentment.held != nil {
            emit(.wakeSuppressed(.presentmentIntentAssertion))
            for id in sessions.keys.sorted() where sessions[id]?.valid == true { deliver(id, .readerDetected) }
            return false
        }
        let appUp = sessions.values.contains { $0.valid }
        guard defaultApp != nil || appUp else { return false }
        if wake == .none {
            let launch = appUp ? Duration.zero : parameters.wakeLatency
            if conditions.locked {
                let auth = now + parameters.authenticationLatency
                wake = .authenticating(at: auth, due: auth + launch)
            } else {
                wake = .launching(due: now + launch)
            }
        }
        advance(to: now)
        return defaultApp != nil
    }

    private mutating func readerCommand(_ command: [UInt8]) -> ContactlessPhone.ReaderExchange {
        switch rf {
        case .off, .on(_, .system(.polling)), .on(_, .express(_, isoDep: false)): return .notActivated
        case .on(_, .express):
            let r: [UInt8] = [0x90, 0x00]
            emit(.apdu(command: command, response: r, answeredBy: .express))
            return .answered(by: .express, response: r)
        case .on(let tech, .system(.isoDep(var selected, let x))):
            if let abandoned = x.abandoned { emit(abandoned) }  // a new command abandons an unanswered one
            let route = route(command, selected: &selected)
            rf = .on(tech, .system(.isoDep(selected: selected, exchange: .none)))
            switch route {
            case .system(let response):
                emit(.apdu(command: command, response: response, answeredBy: .system))
                return .answered(by: .system, response: response)
            case .app(let sessionID, let deselectFirst):
                if deselectFirst { deliver(sessionID, .readerDeselected) }
                let c = newCommand(command)
                setExchange(.routed(session: sessionID, c))
                deliver(sessionID, .received(payload: command, apduID: c.apduID))
                return .awaitingApp(deadline: c.deadline)
            case .heldForApp:
                // The default app is waking or starting emulation: the system keeps the reader
                // waiting (S(WTX)) and hands the APDU over once the app emulates.
                let c = newCommand(command)
                setExchange(.heldForApp(c))
                emit(.heldForApp(command: command))
                return .awaitingApp(deadline: c.deadline)
            case .systemAfterDeselect(let sessionID, let response):
                deliver(sessionID, .readerDeselected)
                emit(.apdu(command: command, response: response, answeredBy: .system))
                return .answered(by: .system, response: response)
            }
        }
    }

    private mutating func newCommand(_ bytes: [UInt8]) -> Command {
        defer { nextAPDU += 1 }
        return Command(apduID: nextAPDU, bytes: bytes, sentAt: now, deadline: now + parameters.frameWaitingTime)
    }

    private mutating func collectResponse(at t: Duration) -> ContactlessPhone.ReaderExchange {
        guard exchange != .none else { return .notActivated }
        advance(to: t)
        switch exchange {
        case .none: return .notActivated
        case .answered(let c, let r):
            setExchange(.none)
            emit(.apdu(command: c.bytes, response: r, answeredBy: .app))
            return .answered(by: .app, response: r)
        case .heldForApp(let c), .routed(_, let c):
            guard now >= c.deadline else { return .awaitingApp(deadline: c.deadline) }
            // The reader gives up; a late respond() fails with transmissionError.
            setExchange(.none)
            emit(.apdu(command: c.bytes, response: nil, answeredBy: nil))
            return .timedOut
        }
    }

    private mutating func fieldOff() {
        guard rf != .off else { return }
        if let abandoned = exchange.abandoned { emit(abandoned) }
        if case .on(_, .system) = rf {
            for id in sessions.keys.sorted() where sessions[id]?.valid == true { deliver(id, .readerDeselected) }
        }
        rf = .off
        emit(.fieldOff)
    }

    private mutating func startEmulation(session id: Int) -> CardSession.Error? {
        guard let ss = sessions[id], ss.valid else { return .invalidated }
        if ss.emulatingSince != nil { return nil }
        if !conditions.radioEnabled { return .radioDisabled }
        if !conditions.eligible { return .systemEligibilityFailed }
        if !conditions.accessAccepted { return .accessNotAccepted }
        if case .until(let until) = maxDurationCoolDown, now < until { return .systemNotAvailable }
        if sessions.contains(where: { $0.key != id && $0.value.valid && $0.value.emulatingSince != nil }) {
            return .systemNotAvailable
        }
        // The emulation sheet comes up; the card answers once it is up.
        sessions[id]?.phase = .emulationStarting(at: now + parameters.emulationStartLatency)
        advance(to: now)
        return nil
    }

    private mutating func invalidate(session id: Int, reason: CardSession.Error) {
        guard sessions[id]?.valid == true else { return }
        sessions[id]?.phase = .invalidated
        if case .routed(id, _) = exchange { setExchange(.none) }
        deliver(id, .sessionInvalidated(reason: reason))
    }

    // MARK: Time

    private enum Timer {
        case maxDuration(Int)
        case assertionExpiry
        case authenticated
        case wake
        case emulationOn(Int)
        case waitingTimeExtension
    }

    /// The earliest timer of the system's own, if any.
    private func nextTimer() -> (Duration, Timer)? {
        var next: (Duration, Timer)?
        func consider(_ t: Duration, _ timer: Timer) {
            if next == nil || t < next!.0 { next = (t, timer) }
        }
        for id in sessions.keys.sorted() {
            guard let ss = sessions[id], ss.valid, let since = ss.emulatingSince else { continue }
            if !ss.emulationAnnounced { consider(since, .emulationOn(id)) }
            consider(since + parameters.maximumSessionDuration, .maxDuration(id))
        }
        if let a = presentment.held { consider(a.expires, .assertionExpiry) }
        switch wake {
        case .none: break
        case .authenticating(let at, _): consider(at, .authenticated)
        case .launching(let due): consider(due, .wake)
        }
        switch exchange {
        case .heldForApp(let c), .routed(_, let c):
            if parameters.sendsWaitingTimeExtensions,
                c.deadline - c.sentAt < parameters.frameWaitingTime + parameters.readerWaitingTimeExtensionLimit
            {
                consider(c.deadline, .waitingTimeExtension)
            }
        case .none, .answered: break
        }
        return next
    }

    /// Moves virtual time to `t` (never backwards), firing due timers in time order (at `t`
    /// too: what is due now happens now).
    private mutating func advance(to t: Duration) {
        while let (due, timer) = nextTimer(), due <= t {
            now = max(now, due)
            switch timer {
            case .maxDuration(let sid):
                sessions[sid]?.phase = .idle
                maxDurationCoolDown = .until(due + parameters.maximumDurationCoolDown)
                invalidate(session: sid, reason: .maxSessionDurationReached)
            case .assertionExpiry:
                presentment = .coolingDown(until: due + parameters.presentmentReacquireCoolDown)
            case .authenticated:
                if case .authenticating(_, let d) = wake { wake = .launching(due: d) }
                emit(.authenticated)
            case .wake:
                wake = .none
                if defaultApp != nil {  // the app's scene hears it; without one, only sessions up do
                    lastWake = now
                    emit(.nfcEvent)
                }
                if case .on(_, .system) = rf {
                    for id in sessions.keys.sorted() where sessions[id]?.valid == true {
                        deliver(id, .readerDetected)
                    }
                }
            case .emulationOn(let sid):
                if case .emulationStarting(let at)? = sessions[sid]?.phase {
                    sessions[sid]?.phase = .emulating(since: at)
                }
                emit(.emulationStarted(session: sid))
                deliverHeld(to: sid)
            case .waitingTimeExtension:
                let m = parameters.waitingTimeExtensionMultiplier
                switch exchange {
                case .heldForApp(var c):
                    c.deadline = c.deadline + parameters.frameWaitingTime * Int(m)
                    setExchange(.heldForApp(c))
                case .routed(let sid, var c):
                    c.deadline = c.deadline + parameters.frameWaitingTime * Int(m)
                    setExchange(.routed(session: sid, c))
                case .none, .answered: break
                }
                emit(.waitingTimeExtension(multiplier: m))
            }
        }
        now = max(now, t)
    }

    /// An APDU the system held for the default app reaches session `sid` now that it emulates.
    private mutating func deliverHeld(to sid: Int) {
        guard case .heldForApp(let c) = exchange, sessions[sid]?.valid == true else { return }
        setExchange(.routed(session: sid, c))
        deliver(sid, .received(payload: c.bytes, apduID: c.apduID))
    }

    private mutating func emit(_ e: ContactlessPhone.LogEvent) { out.append(.log(e, at: now)) }
    private mutating func deliver(_ id: Int, _ d: Delivery) { out.append(.deliver(session: id, d, at: now)) }

    // MARK: Routing

    private enum Route {
        case system([UInt8])
        case app(session: Int, deselectFirst: Bool)
        case heldForApp
        case systemAfterDeselect(session: Int, [UInt8])
    }

    /// The emulating session of the default app (its card answering now), if any.
    private var emulatingSession: Int? {
        sessions.keys.sorted().first { sessions[$0]?.valid == true && sessions[$0]?.emulationAnnounced == true }
    }

    /// The default app is on its way (waking, or up and about to emulate) and the system
    /// holds APDUs for it with S(WTX).
    private var appOnItsWay: Bool {
        guard parameters.sendsWaitingTimeExtensions, defaultApp != nil, express == nil else { return false }
        if wake != .none { return true }
        return sessions.values.contains { $0.valid && $0.emulatingSince != nil && !$0.emulationAnnounced }
    }

    private func route(_ command: [UInt8], selected: inout Selected) -> Route {
        let parsed: CommandAPDU
        switch screenCommand(command) {
        case .refused(let sw): return .system(sw.bytes)
        case .command(let c): parsed = c
        }
        let isSelect = parsed.ins == 0xA4 && parsed.cla & 0x80 == 0
        guard isSelect, parsed.p1 == 0x04 else {
            // Non-SELECT, or SELECT by file identifier / path: the selected application's.
            switch selected {
            case .app:
                if let sid = emulatingSession { return .app(session: sid, deselectFirst: false) }
                selected = .nothing
                return .system(StatusWord.conditionsNotSatisfied.bytes)
            case .systemPPSE:
                return .system(isSelect ? StatusWord.fileNotFound.bytes : StatusWord.insNotSupported.bytes)
            case .nothing:
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
        let appSelected: [UInt8]? = if case .app(let a) = selected { a } else { nil }
        let deselectSession: Int? = (appSelected != nil && appSelected != aid) ? emulatingSession : nil

        let app = defaultApp
        let ppseEntitled = app?.prefix(matching: WellKnownAID.ppse) != nil
        if aid == WellKnownAID.ppse && !ppseEntitled {
            selected = .systemPPSE
            let fci = ContactlessPhone.ppseFCI(listing: app?.selectIdentifierPrefixes ?? [])
            if let d = deselectSession { return .systemAfterDeselect(session: d, fci) }
            return .system(fci)
        }
        if app?.prefix(matching: aid) != nil, let sid = emulatingSession {
            selected = .app(aid)
            return .app(session: sid, deselectFirst: deselectSession != nil)
        }
        if app?.prefix(matching: aid) != nil, deselectSession == nil, appOnItsWay {
            selected = .app(aid)
            return .heldForApp
        }
        selected = .nothing
        if let d = deselectSession { return .systemAfterDeselect(session: d, StatusWord.fileNotFound.bytes) }
        return .system(StatusWord.fileNotFound.bytes)
    }
}
