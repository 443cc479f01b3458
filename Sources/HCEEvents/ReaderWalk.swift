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
        /// At least one APDU reached the app's `CardSession`.
        public var served: Bool
        public var apdusToApp: Int
        public var apdusBySystem: Int
        /// How long the app was up (wake → session end) when it was not served.
        public var upForNothing: Duration
    }
    public var readers: [Reader]
    public var wakes: Int { readers.filter(\.woke).count }
    public var servableWakes: Int { readers.filter { $0.woke && $0.served }.count }
    public var uselessWakes: Int { wakes - servableWakes }
    public var upForNothing: Duration { readers.reduce(.zero) { $0 + $1.upForNothing } }
}

/// Plays reader profiles one after the other against a ``ContactlessPhone`` in virtual
/// time, with a stand-in default app that wakes on every field, creates a `CardSession`,
/// starts emulation, answers every APDU it receives with `90 00` at once, and follows an
/// ``AppPolicy``.
public struct ReaderWalk: Sendable {
    public var profiles: [ReaderProfile]
    public var app: ContactlessPhone.DefaultApp
    public var policy: AppPolicy
    public var parameters: HCEParameters
    public var expressCredentials: [ContactlessPhone.ExpressCredential]
    /// Time between one reader's field off (or the app's end, if later) and the next field on.
    public var gap: Duration

    public init(
        profiles: [ReaderProfile], app: ContactlessPhone.DefaultApp, policy: AppPolicy = .stay,
        parameters: HCEParameters = HCEParameters(),
        expressCredentials: [ContactlessPhone.ExpressCredential] = [], gap: Duration = .seconds(2)
    ) {
        self.profiles = profiles
        self.app = app
        self.policy = policy
        self.parameters = parameters
        self.expressCredentials = expressCredentials
        self.gap = gap
    }

    public struct Result: Sendable {
        public var events: [WalkEvent]
        public var summary: WalkSummary
    }

    public func run() async -> Result {
        let phone = ContactlessPhone(defaultApp: app, expressCredentials: expressCredentials, parameters: parameters)
        var events: [WalkEvent] = []
        var readers: [WalkSummary.Reader] = []
        var base: Duration = .zero
        var logIndex = 0

        for profile in profiles {
            var session: CardSession?
            var wakeTime: Duration?
            var served = false
            var appEnd: Duration?

            func endApp(at t: Duration) async {
                guard let s = session, appEnd == nil else { return }
                phone.advance(to: t)
                await s.stopEmulation(status: served ? .success : .none)
                s.invalidate()
                appEnd = t
            }
            func stepAsideIfDue(before t: Duration) async {
                guard case .stepAside(let after) = policy, !served, let w = wakeTime, appEnd == nil else { return }
                if w + after <= t { await endApp(at: w + after) }
            }

            let woke = phone.fieldOn(profile.technology, ecp: profile.ecp, at: base)
            if woke {
                wakeTime = phone.now
                let s = phone.makeCardSession()
                session = s
                try? await s.startEmulation()
            }
            var cursor = base
            var stopped = false
            if profile.reachesISODEP {
                let t = base + profile.activationOffset
                await stepAsideIfDue(before: t)
                phone.activateISODEP(at: t)
                cursor = t
                for step in profile.steps where !stopped {
                    let t = max(base + step.offset, cursor)
                    await stepAsideIfDue(before: t)
                    var exchange = phone.readerCommand(step.apdu, at: t)
                    if case .awaitingApp = exchange, let s = session {
                        if case .received(let apdu)? = s.history.last?.event {
                            served = true
                            try? await apdu.respond(response: [0x90, 0x00])
                        }
                        exchange = phone.collectResponse(at: t)
                        if case .awaitingApp(let deadline) = exchange { exchange = phone.collectResponse(at: deadline) }
                    }
                    cursor = phone.now
                    let response: [UInt8]? = if case .answered(_, let r) = exchange { r } else { nil }
                    if step.stopOnFailure && !step.accepts(response) { stopped = true }
                }
            }
            let off = stopped ? cursor : max(base + profile.fieldOffOffset, cursor)
            await stepAsideIfDue(before: off)
            phone.fieldOff(at: off)
            switch policy {
            case .stay: await endApp(at: off)
            case .stepAside(let after):
                if served { await endApp(at: off) } else if let w = wakeTime { await endApp(at: max(w + after, off)) }
            }

            let log = phone.log
            var toApp = 0
            var bySystem = 0
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
                case .session(_, .received(let a)): w.command = a.payload
                default: break
                }
                events.append(w)
            }
            logIndex = log.count
            let upForNothing: Duration = (woke && !served) ? ((appEnd ?? off) - (wakeTime ?? base)) : .zero
            readers.append(
                .init(
                    name: profile.name, woke: woke, served: served, apdusToApp: toApp,
                    apdusBySystem: bySystem, upForNothing: upForNothing))
            base = max(off, appEnd ?? off) + gap
        }
        return Result(events: events, summary: WalkSummary(readers: readers))
    }
}
