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
    /// *(documented)*: `NFCPresentmentIntentAssertion`, "you must wait through a 15-second
    /// cool-down period before you can acquire a new instance"; developers observe the same
    /// (Apple developer forums thread 776328).
    public var presentmentReacquireCoolDown: Duration
    /// Frame waiting time integer of the phone's ATS (ISO/IEC 14443-4 §5.2.5, TB(1) high
    /// nibble). The corpus iPhone ATS `05 78 80 70 02` has TB(1) = `70`, so FWI = 7.
    public var frameWaitingTimeInteger: Int
    /// Time from the field appearing (or from the phone's authentication, when locked) to
    /// the default app's scene `nfcEvent` / `readerDetected`: launching the app. Unpublished.
    /// 0 here (a best case, for code that drives the model on a manual clock); the walk's
    /// default is ``walkDefaults``' 400 ms (assumed: Apple's launch target for an app's first
    /// frame), `walk --wake-latency` sets it.
    public var wakeLatency: Duration
    /// A locked phone authenticates its user (Face ID, passcode) before it wakes the default
    /// app (documented: Apple's "Field detect" — the app launches "after authentication if
    /// locked"); this is how long that takes. Assumed: 1 s.
    public var authenticationLatency: Duration
    /// From `startEmulation()` (the emulation sheet appearing) until the card answers the
    /// reader. Unpublished. 0 here; the walk's default is ``walkDefaults``' 500 ms (assumed),
    /// `walk --sheet-latency` sets it.
    public var emulationStartLatency: Duration
    /// The system keeps a reader waiting with ISO/IEC 14443-4 S(WTX) blocks while an APDU it
    /// routes to the app has no answer yet (the app launching, or working). Assumed for a
    /// third-party app: the one trace with an iPhone's S(WTX), the corpus
    /// `pm3_hf_visa_apple_ecp.trace`, is Apple Pay answering GPO (`80 A8 …` → `F2 01` →
    /// `69 86`), not a third-party HCE app launching.
    public var sendsWaitingTimeExtensions: Bool
    /// WTXM of the system's S(WTX) (1 in the corpus trace: reported, for Apple Pay at GPO).
    public var waitingTimeExtensionMultiplier: UInt8
    /// How long a reader keeps granting S(WTX) past the first frame waiting time before it
    /// gives up and times out. ISO/IEC 14443-4 sets no limit; assumed: 1 s.
    public var readerWaitingTimeExtensionLimit: Duration

    public init(
        maximumSessionDuration: Duration = .seconds(60),
        maximumDurationCoolDown: Duration = .seconds(15),
        presentmentAssertionLifetime: Duration = .seconds(15),
        presentmentReacquireCoolDown: Duration = .seconds(15),
        frameWaitingTimeInteger: Int = 7,
        wakeLatency: Duration = .zero,
        authenticationLatency: Duration = .seconds(1),
        emulationStartLatency: Duration = .zero,
        sendsWaitingTimeExtensions: Bool = true,
        waitingTimeExtensionMultiplier: UInt8 = 1,
        readerWaitingTimeExtensionLimit: Duration = .seconds(1)
    ) {
        self.maximumSessionDuration = maximumSessionDuration
        self.maximumDurationCoolDown = maximumDurationCoolDown
        self.presentmentAssertionLifetime = presentmentAssertionLifetime
        self.presentmentReacquireCoolDown = presentmentReacquireCoolDown
        self.frameWaitingTimeInteger = min(max(frameWaitingTimeInteger, 0), 14)
        self.wakeLatency = max(.zero, wakeLatency)
        self.authenticationLatency = max(.zero, authenticationLatency)
        self.emulationStartLatency = max(.zero, emulationStartLatency)
        self.sendsWaitingTimeExtensions = sendsWaitingTimeExtensions
        self.waitingTimeExtensionMultiplier = min(max(waitingTimeExtensionMultiplier, 1), 59)
        self.readerWaitingTimeExtensionLimit = max(.zero, readerWaitingTimeExtensionLimit)
    }

    /// The walk's defaults (`nfcbench walk`, its `--sweep`): the library's, with the launch
    /// and the emulation sheet taking time as a phone's do rather than none. Both numbers
    /// are assumed (Apple publishes neither):
    /// - ``wakeLatency`` 400 ms: Apple's target for an app launch to its first frame
    ///   (WWDC 2019 session 423, "Optimizing App Launch"), for a launch from the Home Screen;
    ///   nobody has timed the default app's launch by a field.
    /// - ``emulationStartLatency`` 500 ms: the system's modal emulation sheet coming up
    ///   before the card answers (`startEmulation()` "triggers the system modal UI"); no
    ///   source gives a time.
    ///
    /// `walk --wake-latency 0 --sheet-latency 0` is the walk before issue 31 (every latency
    /// 0). `HCEParameters()` keeps 0 for both, and so does the live phone of `emulate` and
    /// `walk --device`: its carriers (vpcd, a PN532 in target mode) can't hold a reader with
    /// S(WTX) while the app launches.
    public static let walkDefaults = HCEParameters(
        wakeLatency: .milliseconds(400), emulationStartLatency: .milliseconds(500))

    /// The fact keys (``facts``) of each stored property: a property with none fails the
    /// docs test (docs/model.md is generated from ``facts``).
    public static let factKeysByProperty: [String: [String]] = [
        "maximumSessionDuration": ["maximum_session_duration"],
        "maximumDurationCoolDown": ["maximum_duration_cool_down"],
        "presentmentAssertionLifetime": ["presentment_assertion_lifetime"],
        "presentmentReacquireCoolDown": ["presentment_reacquire_cool_down"],
        "frameWaitingTimeInteger": ["frame_waiting_time_integer", "frame_waiting_time"],
        "wakeLatency": ["wake_latency"],
        "authenticationLatency": ["authentication_latency"],
        "emulationStartLatency": ["emulation_start_latency"],
        "sendsWaitingTimeExtensions": ["sends_wtx"],
        "waitingTimeExtensionMultiplier": ["wtx_multiplier"],
        "readerWaitingTimeExtensionLimit": ["reader_wtx_limit"],
    ]

    /// One parameter with its source, for the walk's summary and trace headers.
    public struct Fact: Sendable, Equatable {
        public var key: String
        public var microseconds: Int64?
        public var value: String
        /// `documented`, `reported` or `assumed`.
        public var source: String
        public var reference: String

        public init(key: String, microseconds: Int64? = nil, value: String, source: String, reference: String) {
            self.key = key
            self.microseconds = microseconds
            self.value = value
            self.source = source
            self.reference = reference
        }
    }

    /// Every parameter with its source (documented, reported or assumed).
    public var facts: [Fact] {
        func d(_ key: String, _ v: Duration, _ source: String, _ ref: String) -> Fact {
            let us = v.wholeMicroseconds
            let text = us % 1000 == 0 ? "\(us / 1000) ms" : "\(Double(us) / 1000) ms"
            return Fact(key: key, microseconds: us, value: text, source: source, reference: ref)
        }
        var out: [Fact] = []
        out.append(
            d(
                "maximum_session_duration", maximumSessionDuration, "assumed",
                "CardSession.Error.maxSessionDurationReached exists; its value is not published"))
        out.append(
            d(
                "maximum_duration_cool_down", maximumDurationCoolDown, "assumed",
                "Apple: a cool down period follows maxSessionDurationReached; its length is not published"))
        out.append(
            d(
                "presentment_assertion_lifetime", presentmentAssertionLifetime, "documented",
                "NFCPresentmentIntentAssertion: expires after 15 s"))
        out.append(
            d(
                "presentment_reacquire_cool_down", presentmentReacquireCoolDown, "documented",
                "NFCPresentmentIntentAssertion: you must wait through a 15-second cool-down period before you can acquire a new instance (also observed: https://developer.apple.com/forums/thread/776328)"
            ))
        out.append(
            Fact(
                key: "frame_waiting_time_integer", microseconds: nil, value: "\(frameWaitingTimeInteger)",
                source: "reported", reference: "the corpus iPhone ATS 05 78 80 70 02: TB(1) 70, FWI 7"))
        out.append(
            d("frame_waiting_time", frameWaitingTime, "reported", "ISO/IEC 14443-4 §7.2 from FWI"))
        out.append(
            d(
                "wake_latency", wakeLatency, "assumed",
                "launching the default app after the field; not published. The walk's default, 400 ms, is Apple's target for an app launch to its first frame (WWDC 2019 session 423, Optimizing App Launch; also https://mobile-vitals.com/article/1132-farfetch-mobile-app-launch-performance), a launch from the Home Screen; nobody has timed the default app's launch by a field. 0 is the best case (walk --wake-latency 0; the library's and the live phone's value)"
            ))
        out.append(
            d(
                "authentication_latency", authenticationLatency, "assumed",
                "a locked phone authenticates before the default app launches (Apple's Field detect: after authentication if locked); the time is ours"
            ))
        out.append(
            d(
                "emulation_start_latency", emulationStartLatency, "assumed",
                "startEmulation() shows the system's modal sheet before the card answers (CardSession: emulation triggers the system modal UI); no source gives a time. The walk's default, 500 ms, is ours; 0 is the best case (walk --sheet-latency 0; the library's and the live phone's value)"
            ))
        out.append(
            Fact(
                key: "sends_wtx", microseconds: nil, value: sendsWaitingTimeExtensions ? "yes" : "no",
                source: "assumed",
                reference:
                    "the system holds a launching app's SELECT with S(WTX): nobody shows it for a third-party app; the one iPhone S(WTX) seen (F2 01 in the corpus trace pm3_hf_visa_apple_ecp.trace) is Apple Pay answering GPO"
            ))
        out.append(
            Fact(
                key: "wtx_multiplier", microseconds: nil, value: "\(waitingTimeExtensionMultiplier)",
                source: "reported", reference: "WTXM 1 in the corpus trace (Apple Pay at GPO)"))
        out.append(
            d(
                "reader_wtx_limit", readerWaitingTimeExtensionLimit, "assumed",
                "how long a reader keeps granting S(WTX); ISO/IEC 14443-4 sets none"))
        return out
    }

    /// The reader's frame waiting time: FWT = (256 × 16 / fc) × 2^FWI with fc = 13.56 MHz
    /// (ISO/IEC 14443-4 §7.2). FWI 7 → 524 288 periods = 38 664 µs. A `received(_:)` APDU not
    /// answered within it gets an S(WTX) from the system (``sendsWaitingTimeExtensions``)
    /// until the reader's limit, then the reader times out.
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
