#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A deterministic model of the NFC subsystem's heat.
///
/// Apple publishes no numbers (the seed article: abusing the NFC subsystem shortens the
/// session time, until a session cannot start at all). This is an explicit model with named
/// parameters; every one but the 60 s base limit (documented) is **assumed**:
///
/// - heat is measured in **field-seconds**: one second with the field on adds
///   `heatingPerFieldSecond` (default 1);
/// - with the field off, heat decays exponentially: `heat × exp(−idle / coolingTimeConstant)`
///   (default time constant 120 s);
/// - the next session's limit is `baseLimit − limitLossPerHeat × heat` (default 60 s −
///   0.25 s per field-second), never below `minimumLimit` (default 15 s);
/// - above `refusalThreshold` (default 180 field-seconds) `begin` is refused with 203
///   (Apple's wording for 203: "temporarily unavailable due to system resource constraints").
///
/// A quick restart (a `begin` right after a session ended) is ``ReaderSystemModel``'s
/// business; under its `shorterLimit` outcome it hands a penalty to ``beginRequested(at:penalty:)``.
/// The heat follows the reader lock's scope and is kept between processes in the lock
/// folder (``NFCReaderSystem``). ``disabled`` keeps every limit at 60 s and never refuses.
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
        /// Above this heat (field-seconds) a begin is refused with 203.
        public var refusalThreshold: Double

        public init(
            enabled: Bool = true,
            baseLimit: Duration = .seconds(60),
            minimumLimit: Duration = .seconds(15),
            heatingPerFieldSecond: Double = 1,
            coolingTimeConstant: Duration = .seconds(120),
            limitLossPerHeat: Double = 0.25,
            refusalThreshold: Double = 180
        ) {
            self.enabled = enabled
            self.baseLimit = baseLimit
            self.minimumLimit = minimumLimit
            self.heatingPerFieldSecond = heatingPerFieldSecond
            self.coolingTimeConstant = coolingTimeConstant
            self.limitLossPerHeat = limitLossPerHeat
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

    /// True while a session's field is on.
    public var isOn: Bool {
        if case .on = field { true } else { false }
    }

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

    /// What a `begin` at `now` would get, without changing the model.
    public func decision(at now: Duration) -> Decision {
        Self.decide(heat: heat(at: now), parameters)
    }

    /// How long from `now` until a `begin` would be granted, the field staying off: zero when
    /// it would be now, `nil` while a session's field is on (it heats instead). Heat cools as
    /// `heat × exp(−t / τ)`, so the wait is `τ × ln(heat / threshold)`.
    public func timeToCool(at now: Duration) -> Duration? {
        guard parameters.enabled else { return .zero }
        if isOn { return nil }
        return parameters.timeToCool(fromHeat: heat(at: now))
    }

    /// The limit of a session begun `gap` after the previous session ended (the field must
    /// be off), or `nil` when such a begin would be refused; heat only (a quick restart's
    /// outcome is ``ReaderSystemModel``'s). For "limits after 0 s, 3 s and 30 s gaps".
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

    /// A session asks to begin at `now`, with `penalty` field-seconds of extra heat (a quick
    /// restart under ``ReaderSystemModel/QuickRestartOutcome/shorterLimit``; banked even when
    /// the begin is refused). A granted session must be followed by ``fieldOn(at:)``.
    public mutating func beginRequested(at now: Duration, penalty: Double = 0) -> Decision {
        guard parameters.enabled else { return .granted(timeLimit: parameters.baseLimit) }
        let h = heat(at: now) + max(0, penalty)
        switch field {
        case .off, .neverOn:
            if penalty > 0 { field = .off(since: now, heat: h) }
        case .on:
            break
        }
        return Self.decide(heat: h, parameters)
    }

    /// The state to keep between processes: heat at `now` and whether the field is on.
    public func snapshot(at now: Duration) -> (heat: Double, fieldOn: Bool) {
        switch field {
        case .on: (heat(at: now), true)
        case .off, .neverOn: (heat(at: now), false)
        }
    }

    /// Takes up a state kept by another process: `heat` was measured `age` before `now`,
    /// with the field on or off since then. Nothing when the model is switched off.
    public mutating func restore(heat: Double, fieldOn: Bool, age: Duration, now: Duration) {
        guard parameters.enabled, heat.isFinite, heat >= 0 else { return }
        let since = now - max(.zero, age)
        field = fieldOn ? .on(since: since, heat: heat) : .off(since: since, heat: heat)
    }

    /// `fieldSeconds` of heat arrive at `now` from work the model did not see (a harness's
    /// scripted "the NFC subsystem has been busy"), then cool or grow as usual. Nothing
    /// when the model is switched off or the amount is not a finite positive number.
    public mutating func addHeat(_ fieldSeconds: Double, at now: Duration) {
        guard parameters.enabled, fieldSeconds.isFinite, fieldSeconds > 0 else { return }
        let h = heat(at: now) + fieldSeconds
        switch field {
        case .on: field = .on(since: now, heat: h)
        case .off, .neverOn: field = .off(since: now, heat: h)
        }
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

extension ThermalModel.Parameters {
    /// How long a bench at `heat`, its field off, takes to cool to where a `begin` is granted:
    /// `τ × ln(heat / threshold)`, rounded up to the millisecond (plus one), zero when it is
    /// there already or the model is off.
    public func timeToCool(fromHeat heat: Double) -> Duration {
        guard enabled, heat > refusalThreshold else { return .zero }
        let tau = ThermalModel.seconds(coolingTimeConstant)
        guard tau > 0, refusalThreshold > 0 else { return .zero }
        let t = tau * log(heat / refusalThreshold)
        return .milliseconds(Int64((t * 1000).rounded(.up)) + 1)
    }

    /// The parameters with their sources, for trace headers and `--help`.
    public var facts: [ModelFact] {
        var out: [ModelFact] = []
        func add(
            _ key: String, _ value: ModelFact.Value, _ text: String, _ source: ModelSource, _ ref: String,
            covers: String = "nobody says: the number is ours"
        ) {
            out.append(ModelFact(key: key, value: value, text: text, source: source, reference: ref, covers: covers))
        }
        func s(_ d: Duration) -> Double { ReaderSystemModel.seconds(d) }
        func n(_ v: Double) -> String { ReaderSystemModel.number(v) }
        let standard = baseLimit == .seconds(60)
        let limitSource: ModelSource = standard ? .documented : .assumed
        let limitRef: String =
            standard
            ? "NFCNDEFReaderSession.h: a session times out after 60 s (readerSessionInvalidationErrorSessionTimeout, 201)"
            : "set for this run (Core NFC: 60 s)"
        if !enabled {
            add(
                "thermal_model", .text("off"), "off", .assumed, "switched off: every session gets the base time limit",
                covers: "a bench choice (--no-thermal)")
            add(
                "time_limit_s", .number(s(baseLimit)), n(s(baseLimit)) + " s", limitSource, limitRef,
                covers: standard ? "every reader session" : "this run only")
            return out
        }
        add(
            "thermal_model", .text("on"), "on", .reported,
            "the seed article: abusing the NFC subsystem shortens the session time, until a session cannot start; the numbers below are ours",
            covers: "that heat shortens sessions and can refuse one; no number")
        add(
            "time_limit_s", .number(s(baseLimit)), n(s(baseLimit)) + " s", limitSource, limitRef,
            covers: standard ? "every reader session" : "this run only")
        add(
            "minimum_time_limit_s", .number(s(minimumLimit)), n(s(minimumLimit)) + " s", .assumed,
            "heat never shortens a session below this")
        add(
            "heating_per_field_second", .number(heatingPerFieldSecond), n(heatingPerFieldSecond) + " field-s/s",
            .assumed, "heat unit: one second of field on")
        add(
            "cooling_time_constant_s", .number(s(coolingTimeConstant)), n(s(coolingTimeConstant)) + " s", .assumed,
            "exponential cooling with the field off")
        add(
            "limit_loss_s_per_field_second", .number(limitLossPerHeat), n(limitLossPerHeat) + " s per field-s",
            .assumed, "the next limit shrinks with heat")
        add(
            "refusal_threshold_field_s", .number(refusalThreshold), n(refusalThreshold) + " field-s", .assumed,
            "above it begin() gets 203 (Apple's 203 text: temporarily unavailable due to system resource constraints)",
            covers: "the code's text (system resource constraints); the threshold is ours")
        add(
            "heat_scope", .text("lock scope"), "lock scope", .assumed,
            "per reader, or per host with a host-wide lock (--host-wide); kept in the lock folder between processes")
        return out
    }
}
