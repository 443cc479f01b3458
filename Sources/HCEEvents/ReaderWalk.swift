import NFCTags

/// What the stand-in default app does after a wake, for ``ReaderWalk``.
public enum AppPolicy: Sendable, Equatable, CustomStringConvertible {
    /// Up (session and emulation) until the field goes off.
    case stay
    /// Steps aside (stops emulation, invalidates) this long after a wake when no APDU has
    /// reached its `CardSession`; an app that was reached stays until field off.
    case stepAside(after: Duration)

    /// Parses `stay` or `step-aside:300ms` (`ms`, `us` or `s`; a bare number is ms).
    public init?(_ text: String) {
        if text == "stay" {
            self = .stay
            return
        }
        guard text.hasPrefix("step-aside:") else { return nil }
        var v = String(text.dropFirst("step-aside:".count))
        var scale: Double = 1000
        for (suffix, s) in [("ms", 1000.0), ("us", 1.0), ("µs", 1.0), ("s", 1_000_000.0)] where v.hasSuffix(suffix) {
            v.removeLast(suffix.count)
            scale = s
            break
        }
        guard let n = Double(v), n >= 0, n.isFinite else { return nil }
        self = .stepAside(after: .microseconds(Int64((n * scale).rounded())))
    }

    public var description: String {
        switch self {
        case .stay: "stay"
        case .stepAside(let d): "step-aside:\(d.wholeMicroseconds / 1000)ms"
        }
    }
}

/// One line of a walk's timeline (and of its JSON Lines output).
public struct WalkEvent: Sendable, Equatable {
    /// Virtual time from the start of the walk.
    public var time: Duration
    public var reader: String
    /// `fieldOn`, `nfcEvent`, `wakeSuppressed`, `sessionStarted`, `readerDetected`,
    /// `startEmulation`, `isoDepActivated`, `received`, `apdu`, `readerDeselected`,
    /// `stopEmulation`, `sessionInvalidated`, `fieldOff`.
    public var event: String
    public var command: [UInt8]? = nil
    public var response: [UInt8]? = nil
    public var answeredBy: Responder? = nil
    /// Reason (`sessionInvalidated`, `wakeSuppressed`), status (`stopEmulation`), technology (`fieldOn`)…
    public var detail: String? = nil
}

/// Per-reader and total counts of a walk.
public struct WalkSummary: Sendable, Equatable {
    public struct Reader: Sendable, Equatable {
        public var name: String
        public var woke: Bool
        /// At least one APDU reached the app's `CardSession` and was answered.
        public var served: Bool
        public var apdusToApp: Int
        public var apdusBySystem: Int
        /// How long the app was up (wake → session end) when it was not served.
        public var upForNothing: Duration
        /// When the default app was woken (its scene `nfcEvent`), from the walk's start.
        public var wokeAt: Duration? = nil
        /// S(WTX) blocks the system sent to this reader.
        public var waitingTimeExtensions: Int = 0
        /// Why the reader was served, useless, or did not wake the app, in words.
        public var reason: String = ""
    }
    public var readers: [Reader]
    public var wakes: Int { readers.filter(\.woke).count }
    public var servableWakes: Int { readers.filter { $0.woke && $0.served }.count }
    public var uselessWakes: Int { wakes - servableWakes }
    public var upForNothing: Duration { readers.reduce(.zero) { $0 + $1.upForNothing } }
}

/// Plays reader profiles one after the other against a ``ContactlessPhone`` in virtual
/// time, with a stand-in default app that, once woken (after the phone's authentication
/// when ``locked``, and its launch, ``HCEParameters/wakeLatency``), creates a `CardSession`
/// (`init() async throws`), starts emulation (the sheet, ``HCEParameters/emulationStartLatency``),
/// answers every APDU it receives with `90 00` after ``appLatency``, and follows an
/// ``AppPolicy``. While the app wakes or works, the system keeps the reader waiting with
/// S(WTX) (``HCEParameters/sendsWaitingTimeExtensions``) up to the reader's limit.
public struct ReaderWalk: Sendable {
    public var profiles: [ReaderProfile]
    public var app: ContactlessPhone.DefaultApp
    public var policy: AppPolicy
    public var parameters: HCEParameters
    public var expressCredentials: [ContactlessPhone.ExpressCredential]
    /// Time between one reader's field off (or the app's end, if later) and the next field on.
    public var gap: Duration
    /// The phone is locked: each wake waits for authentication.
    public var locked: Bool
    /// How long the stand-in app takes to answer an APDU it received.
    public var appLatency: Duration

    public init(
        profiles: [ReaderProfile], app: ContactlessPhone.DefaultApp, policy: AppPolicy = .stay,
        parameters: HCEParameters = HCEParameters(),
        expressCredentials: [ContactlessPhone.ExpressCredential] = [], gap: Duration = .seconds(2),
        locked: Bool = false, appLatency: Duration = .zero
    ) {
        self.profiles = profiles
        self.app = app
        self.policy = policy
        self.parameters = parameters
        self.expressCredentials = expressCredentials
        self.gap = gap
        self.locked = locked
        self.appLatency = max(.zero, appLatency)
    }

    public struct Result: Sendable {
        public var events: [WalkEvent]
        public var summary: WalkSummary
    }

    public func run() async -> Result {
        let phone = ContactlessPhone(
            defaultApp: app, expressCredentials: expressCredentials, parameters: parameters,
            conditions: ContactlessPhone.Conditions(locked: locked))
        var events: [WalkEvent] = []
        var readers: [WalkSummary.Reader] = []
        var base: Duration = .zero
        var logIndex = 0

        for profile in profiles {
            let standIn = StandInApp(phone: phone, policy: policy, appLatency: appLatency, fieldOn: base)
            let woke = phone.fieldOn(profile.technology, ecp: profile.ecp, at: base)
            await standIn.catchUp(to: base)
            var cursor = base
            var stopped = false
            var readerTimedOut = false
            if profile.reachesISODEP {
                let t = base + profile.activationOffset
                await standIn.catchUp(to: t)
                phone.activateISODEP(at: t)
                cursor = t
                for step in profile.steps where !stopped {
                    let t = max(base + step.offset, cursor)
                    await standIn.catchUp(to: t)
                    var exchange = phone.readerCommand(step.apdu, at: t)
                    await standIn.catchUp(to: t)
                    while case .awaitingApp = exchange {
                        // An answer already given is collected now; otherwise wait for what comes first.
                        exchange = phone.collectResponse(at: phone.now)
                        guard case .awaitingApp(let deadline) = exchange else { break }
                        let next = min(deadline, standIn.nextActionTime ?? deadline)
                        await standIn.catchUp(to: next)
                        exchange = phone.collectResponse(at: max(next, phone.now))
                    }
                    cursor = phone.now
                    let response: [UInt8]? = if case .answered(_, let r) = exchange { r } else { nil }
                    if case .timedOut = exchange { readerTimedOut = true }
                    if step.stopOnFailure && !step.accepts(response) { stopped = true }
                }
            }
            let off = stopped ? cursor : max(base + profile.fieldOffOffset, cursor)
            await standIn.catchUp(to: off)
            phone.fieldOff(at: off)
            await standIn.readerLeft(at: off)

            let log = phone.log
            var toApp = 0
            var bySystem = 0
            var wtx = 0
            var selects: [[UInt8]] = []
            var suppression: ContactlessPhone.WakeSuppression?
            var wokeAt: Duration?
            for (t, e) in log[logIndex...] {
                let (name, detail) = ContactlessPhone.describe(e)
                var w = WalkEvent(time: t, reader: profile.name, event: name)
                w.detail = detail
                switch e {
                case .apdu(let c, let r, let by):
                    w.command = c
                    w.response = r
                    w.answeredBy = by
                    if by == .app { toApp += 1 } else if by == .system { bySystem += 1 }
                    if c.count >= 5, c[1] == 0xA4, c[2] == 0x04, c.count >= 5 + Int(c[4]) {
                        selects.append(Array(c[5..<(5 + Int(c[4]))]))
                    }
                case .session(_, .received(let a)): w.command = a.payload
                case .heldForApp(let c): w.command = c
                case .waitingTimeExtension(let m):
                    wtx += 1
                    w.command = [0xF2, m]
                    w.response = [0xF2, m]
                    w.answeredBy = .system
                case .wakeSuppressed(let why): suppression = why
                case .nfcEvent: wokeAt = wokeAt ?? t
                default: break
                }
                events.append(w)
            }
            logIndex = log.count
            let served = standIn.served && toApp > 0
            let up = standIn.upTime
            let upForNothing: Duration = (woke && !served) ? up : .zero
            var reader = WalkSummary.Reader(
                name: profile.name, woke: woke, served: served, apdusToApp: toApp,
                apdusBySystem: bySystem, upForNothing: upForNothing)
            reader.wokeAt = wokeAt
            reader.waitingTimeExtensions = wtx
            reader.reason = reason(
                profile: profile, woke: woke, served: served, suppression: suppression, wokeAt: wokeAt,
                off: off, selects: selects, wtx: wtx, timedOut: readerTimedOut, toApp: toApp, base: base,
                appEnd: standIn.appEnd)
            readers.append(reader)
            base = max(off, standIn.appEnd ?? off) + gap
        }
        return Result(events: events, summary: WalkSummary(readers: readers))
    }

    /// Why a reader was served, useless or did not wake the app, in words.
    func reason(
        profile: ReaderProfile, woke: Bool, served: Bool, suppression: ContactlessPhone.WakeSuppression?,
        wokeAt: Duration?, off: Duration, selects: [[UInt8]], wtx: Int, timedOut: Bool, toApp: Int,
        base: Duration, appEnd: Duration? = nil
    ) -> String {
        func ms(_ d: Duration) -> String { "\((d - base).wholeMicroseconds / 1000) ms" }
        let launch = locked ? "authentication and launch" : "launch"
        switch suppression {
        case .expressCredential(let name)?:
            return "not woken: the reader's ECP frame chose the express credential '\(name)', which answered instead"
        case .presentmentIntentAssertion?:
            return "not woken: the app in the foreground held a presentment intent assertion"
        case nil: break
        }
        guard woke else { return "not woken: no default contactless app" }
        let prefixes = app.selectIdentifierPrefixes.map(\.description)
        let matched = selects.first { app.prefix(matching: $0) != nil }
        if served {
            var r = "served: the app answered \(toApp) APDU\(toApp == 1 ? "" : "s")"
            if let m = matched, let p = app.prefix(matching: m) {
                r += " after SELECT \(m.hexString()) (matches the app's prefix \(p.description))"
            }
            if wtx > 0 {
                r += "; the system held the reader with \(wtx) S(WTX) while the app's \(launch) or answer took time"
            }
            return r
        }
        if !profile.reachesISODEP {
            return
                "useless: this \(profile.category) reader (\(profile.technology.rawValue)) never reaches ISO-DEP: no APDU can reach any app"
        }
        if timedOut, let m = matched {
            let up = wokeAt.map { " (the app was up at \(ms($0)))" } ?? " (the app was not up yet)"
            return
                "useless: the reader selected \(m.hexString()) and gave up after \(wtx) S(WTX): the app's \(launch) took longer than the reader waits\(up)"
        }
        if let w = wokeAt, w > off {
            return
                "useless: the reader left at \(ms(off)), before the app was up at \(ms(w)) (\(launch) latency)"
        }
        if wokeAt == nil {
            return "useless: the reader left at \(ms(off)), before the app was up (\(launch) still under way)"
        }
        if let m = matched, let end = appEnd, end < off {
            return
                "useless: the app stepped aside at \(ms(end)) (policy \(policy)) before the reader selected \(m.hexString()), which it could have served"
        }
        if selects.isEmpty { return "useless: the reader selected no application" }
        let aids = selects.map { $0.hexString() }
        return
            "useless: the reader selected \(aids.joined(separator: ", ")); none matches the app's prefixes (\(prefixes.isEmpty ? "none" : prefixes.joined(separator: ", "))), so the system answered"
    }
}

/// The walk's stand-in default app for one reader: it reacts to the phone at the virtual
/// instants things happen (its wake, APDUs it receives, its step-aside time).
final class StandInApp {
    let phone: ContactlessPhone
    let policy: AppPolicy
    let appLatency: Duration
    private(set) var session: CardSession?
    private(set) var wakeTime: Duration?
    private(set) var appEnd: Duration?
    private(set) var served = false
    private var seen = 0
    private var pending: (apdu: CardSession.APDU, at: Duration)?
    private var fieldGone = false
    /// This reader's field came on then; only a wake from then on is this app's.
    private let fieldOnAt: Duration

    init(phone: ContactlessPhone, policy: AppPolicy, appLatency: Duration, fieldOn: Duration) {
        self.phone = phone
        self.policy = policy
        self.appLatency = appLatency
        self.fieldOnAt = fieldOn
    }

    /// How long the app was up (wake → end).
    var upTime: Duration {
        guard let w = wakeTime else { return .zero }
        return max(.zero, (appEnd ?? w) - w)
    }

    /// The next instant the app or the phone's own timers act.
    var nextActionTime: Duration? {
        var times: [Duration] = []
        if appEnd == nil, let p = pending { times.append(p.at) }
        if let a = stepAsideTime { times.append(a) }
        if let d = phone.nextDue { times.append(d) }
        return times.min()
    }

    private var stepAsideTime: Duration? {
        guard case .stepAside(let after) = policy, !served, let w = wakeTime, appEnd == nil else { return nil }
        return w + after
    }

    /// Lets everything due up to `t` happen, in time order.
    func catchUp(to t: Duration) async {
        var guardCount = 0
        while let next = nextActionTime, next <= t, guardCount < 100_000 {
            guardCount += 1
            phone.advance(to: next)
            await react()
        }
        phone.advance(to: max(t, phone.now))
        await react()
    }

    /// The reader's field left at `t`: an app that was not served steps aside (it got
    /// `readerDeselected`); a served one finishes; an app still waking comes up for nothing.
    func readerLeft(at t: Duration) async {
        fieldGone = true
        if appEnd == nil, session != nil { await end(at: t) }
        if wakeTime == nil, let due = phone.pendingWake {
            await catchUp(to: due)
        }
    }

    private func react() async {
        let now = phone.now
        if session == nil, appEnd == nil, let w = phone.lastWake, w >= fieldOnAt, w <= now, wakeTime == nil {
            wakeTime = w
            if fieldGone {
                // Up after the reader left: nothing to do.
                appEnd = now
                return
            }
            guard let s = try? await CardSession(phone: phone) else {
                appEnd = now
                return
            }
            session = s
            try? await s.startEmulation()
        }
        guard let s = session, appEnd == nil else { return }
        let history = s.history
        while seen < history.count {
            if case .received(let apdu) = history[seen].event { pending = (apdu, now + appLatency) }
            seen += 1
        }
        if let p = pending, p.at <= now {
            pending = nil
            served = true
            try? await p.apdu.respond(response: [0x90, 0x00])
        }
        if let a = stepAsideTime, a <= now { await end(at: now) }
    }

    private func end(at t: Duration) async {
        guard let s = session, appEnd == nil else { return }
        await s.stopEmulation(status: served ? .success : .none)
        s.invalidate()
        appEnd = max(t, wakeTime ?? t)
    }
}
