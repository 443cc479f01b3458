#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A deterministic model of the NFC subsystem's heat and the quick-restart penalty.
///
/// Apple publishes no numbers (the seed article: abusing the NFC subsystem shortens the
/// session time, and restarting a session the instant it ends shortens the next one until
/// a session cannot start at all). This is an explicit model with named parameters:
///
/// - heat is measured in **field-seconds**: one second with the field on adds
///   `heatingPerFieldSecond` (default 1);
/// - with the field off, heat decays exponentially: `heat × exp(−idle / coolingTimeConstant)`
///   (default time constant 120 s);
/// - a `begin` less than `quickRestartWindow` (default 3 s) after the previous session ended
///   adds `quickRestartPenalty` (default 20 field-seconds); a refused begin counts as an
///   end for this window, so a retry loop on 203 keeps the system hot;
/// - the next session's limit is `baseLimit − limitLossPerHeat × heat` (default 60 s −
///   0.25 s per field-second), never below `minimumLimit` (default 15 s);
/// - above `refusalThreshold` (default 180 field-seconds) `begin` is refused with 203.
///
/// With the defaults, sessions run to their limit back to back get 60 s, 40 s, 25 s and
/// then a refusal. ``disabled`` keeps every limit at 60 s and never refuses.
/// Time is the runtime clock's `Duration`; the model reads no clock.
public struct ThermalModel: Sendable, Hashable {
    /// The model's parameters; see the type's documentation for their meaning.
    public struct Parameters: Sendable, Hashable {
        /// False: no heat, every limit is `baseLimit`, nothing is refused.
        public var enabled: Bool
        /// The time limit of a cool system (Core NFC: 60 s).
        public var baseLimit: Duration
        /// The limit never shrinks below this.
        public var minimumLimit: Duration
        /// Heat added per second of field-on time (field-seconds per second).
        public var heatingPerFieldSecond: Double
        /// Exponential cooling time constant with the field off.
        public var coolingTimeConstant: Duration
        /// Seconds of limit lost per field-second of heat.
        public var limitLossPerHeat: Double
        /// A begin this soon after the previous session ended is a quick restart.
        public var quickRestartWindow: Duration
        /// Heat (field-seconds) a quick restart adds.
        public var quickRestartPenalty: Double
        /// Above this heat (field-seconds) a begin is refused with 203.
        public var refusalThreshold: Double

        public init(
            enabled: Bool = true,
            baseLimit: Duration = .seconds(60),
            minimumLimit: Duration = .seconds(15),
            heatingPerFieldSecond: Double = 1,
            coolingTimeConstant: Duration = .seconds(120),
            limitLossPerHeat: Double = 0.25,
            quickRestartWindow: Duration = .seconds(3),
            quickRestartPenalty: Double = 20,
            refusalThreshold: Double = 180
        ) {
            self.enabled = enabled
            self.baseLimit = baseLimit
            self.minimumLimit = minimumLimit
            self.heatingPerFieldSecond = heatingPerFieldSecond
            self.coolingTimeConstant = coolingTimeConstant
            self.limitLossPerHeat = limitLossPerHeat
            self.quickRestartWindow = quickRestartWindow
            self.quickRestartPenalty = quickRestartPenalty
            self.refusalThreshold = refusalThreshold
        }

        /// The documented defaults.
        public static let `default` = Parameters()
    }

    /// The model's verdict on a begin.
    public enum Decision: Sendable, Hashable {
        /// The session may start, with this time limit.
        case granted(timeLimit: Duration)
        /// Too hot: refuse with 203.
        case refused
    }

    /// The field's state, with the time of its last change.
    public enum Field: Sendable, Hashable {
        /// No session has run yet.
        case neverOn
        /// On since `since`, with `heat` at that instant.
        case on(since: Duration, heat: Double)
        /// Off since `since`, with `heat` at that instant.
        case off(since: Duration, heat: Double)
    }

    public let parameters: Parameters
    public private(set) var field: Field = .neverOn

    public init(parameters: Parameters = .default) {
        self.parameters = parameters
    }

    /// A switched-off model: 60 s limits, no refusals.
    public static let disabled = ThermalModel(parameters: Parameters(enabled: false))

    /// Heat (field-seconds) at `now`.
    public func heat(at now: Duration) -> Double {
        guard parameters.enabled else { return 0 }
        switch field {
        case .neverOn: return 0
        case .on(let since, let h):
            return h + parameters.heatingPerFieldSecond * Self.seconds(max(.zero, now - since))
        case .off(let since, let h):
            return Self.cooled(h, idle: max(.zero, now - since), tau: parameters.coolingTimeConstant)
        }
    }

    /// The time limit a session would get at this heat (pure function of heat).
    public func limit(forHeat heat: Double) -> Duration {
        guard parameters.enabled else { return parameters.baseLimit }
        let base = Self.seconds(parameters.baseLimit)
        let floor = Self.seconds(parameters.minimumLimit)
        let s = max(floor, min(base, base - parameters.limitLossPerHeat * max(0, heat)))
        return .milliseconds(Int64((s * 1000).rounded()))
    }

    /// What a `begin` at `now` would get, without changing the model (the quick-restart
    /// penalty included).
    public func decision(at now: Duration) -> Decision {
        Self.decide(heat: heatAtBegin(at: now), parameters)
    }

    /// The limit of a session begun `gap` after the previous session ended (the field must
    /// be off), or `nil` when such a begin would be refused. For "limits after 0 s, 3 s and
    /// 30 s gaps".
    public func limit(after gap: Duration) -> Duration? {
        switch field {
        case .neverOn:
            return limit(forHeat: 0)
        case .on:
            return nil
        case .off(let since, _):
            if case .granted(let l) = decision(at: since + gap) { return l }
            return nil
        }
    }

    // MARK: Inputs

    /// A session asks to begin at `now`: applies the quick-restart penalty, then decides.
    /// A granted session must be followed by ``fieldOn(at:)``.
    public mutating func beginRequested(at now: Duration) -> Decision {
        guard parameters.enabled else { return .granted(timeLimit: parameters.baseLimit) }
        let h = heatAtBegin(at: now)
        switch field {
        case .off:
            // Bank the penalty; a refused begin restarts the window, so a retry loop stays hot.
            field = .off(since: now, heat: h)
        case .neverOn, .on:
            break
        }
        return Self.decide(heat: h, parameters)
    }

    /// The field went on at `now` (a session became active).
    public mutating func fieldOn(at now: Duration) {
        guard parameters.enabled else { return }
        switch field {
        case .on: return
        case .neverOn, .off: field = .on(since: now, heat: heat(at: now))
        }
    }

    /// The field went off at `now` (the session ended).
    public mutating func fieldOff(at now: Duration) {
        guard parameters.enabled else { return }
        switch field {
        case .on: field = .off(since: now, heat: heat(at: now))
        case .neverOn, .off: return
        }
    }

    // MARK: Implementation

    private func heatAtBegin(at now: Duration) -> Double {
        guard parameters.enabled else { return 0 }
        var h = heat(at: now)
        if case .off(let since, _) = field, now - since < parameters.quickRestartWindow {
            h += parameters.quickRestartPenalty
        }
        return h
    }

    private static func decide(heat: Double, _ p: Parameters) -> Decision {
        guard p.enabled else { return .granted(timeLimit: p.baseLimit) }
        if heat > p.refusalThreshold { return .refused }
        return .granted(timeLimit: ThermalModel(parameters: p).limit(forHeat: heat))
    }

    static func seconds(_ d: Duration) -> Double {
        let c = d.components
        return Double(c.seconds) + Double(c.attoseconds) * 1e-18
    }

    private static func cooled(_ h: Double, idle: Duration, tau: Duration) -> Double {
        let t = seconds(tau)
        guard t > 0 else { return 0 }
        return h * exp(-seconds(idle) / t)
    }
}
