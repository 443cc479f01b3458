/// Every number the phone model needs that Apple does not publish, named and documented
/// in one place so a bench run can state which values it assumed (the walk prints them
/// in its summary).
///
/// All durations are virtual time (`Duration`; µs resolution in output).
public struct HCEParameters: Sendable, Equatable {
    /// Longest an emulation may run, from `startEmulation()` until the system ends the
    /// session with `CardSession.Error.maxSessionDurationReached`. Apple documents that a
    /// maximum exists (CardSession.Error.maxSessionDurationReached) but not its value.
    /// Default 60 s: an assumption, matching the reader-session limit.
    public var maximumSessionDuration: Duration
    /// After an emulation reached its maximum duration, `startEmulation()` of any session
    /// throws `CardSession.Error.systemNotAvailable` until this much time has passed
    /// (Apple: "the API enforces a cool down period", value unpublished). Default 15 s:
    /// an assumption.
    public var maximumDurationCoolDown: Duration
    /// Lifetime of an `NFCPresentmentIntentAssertion` (Apple: it expires after 15 s).
    public var presentmentAssertionLifetime: Duration
    /// Wait between the end of one presentment assertion and the next `acquire()`.
    /// *(reported)*: developers observe 15 s (Apple developer forums thread 776328);
    /// Apple does not document it.
    public var presentmentReacquireCoolDown: Duration
    /// Frame waiting time integer of the phone's ATS (ISO/IEC 14443-4 §5.2.5, TB(1) high
    /// nibble). The corpus iPhone ATS `05 78 80 70 02` has TB(1) = `70`, so FWI = 7.
    public var frameWaitingTimeInteger: Int
    /// Time from the field appearing to the default app's `readerDetected` / scene
    /// `nfcEvent`. Unpublished; default 0 (the model orders events, it does not claim a
    /// latency).
    public var wakeLatency: Duration

    public init(
        maximumSessionDuration: Duration = .seconds(60),
        maximumDurationCoolDown: Duration = .seconds(15),
        presentmentAssertionLifetime: Duration = .seconds(15),
        presentmentReacquireCoolDown: Duration = .seconds(15),
        frameWaitingTimeInteger: Int = 7,
        wakeLatency: Duration = .zero
    ) {
        self.maximumSessionDuration = maximumSessionDuration
        self.maximumDurationCoolDown = maximumDurationCoolDown
        self.presentmentAssertionLifetime = presentmentAssertionLifetime
        self.presentmentReacquireCoolDown = presentmentReacquireCoolDown
        self.frameWaitingTimeInteger = min(max(frameWaitingTimeInteger, 0), 14)
        self.wakeLatency = wakeLatency
    }

    /// The reader's frame waiting time: FWT = (256 × 16 / fc) × 2^FWI with fc = 13.56 MHz
    /// (ISO/IEC 14443-4 §7.2). FWI 7 → 524 288 periods = 38 664 µs. A `received(_:)` APDU not answered
    /// within it makes the reader time out (the model sends no S(WTX) for the app).
    public var frameWaitingTime: Duration {
        let carrierPeriods = 256 * 16 * (1 << frameWaitingTimeInteger)
        return .microseconds(Int64((Double(carrierPeriods) / 13.56).rounded()))
    }
}

extension Duration {
    /// Whole microseconds (truncated toward zero), for `t_us` fields and timelines.
    public var wholeMicroseconds: Int64 {
        let (s, atto) = components
        return s * 1_000_000 + atto / 1_000_000_000_000
    }
}
