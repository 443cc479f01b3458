/// Where one number or rule of the model comes from.
public enum ModelSource: String, Sendable, Hashable, CaseIterable {
    /// Apple says so: a Core NFC symbol, header or documentation page.
    case documented
    /// A public field report says so: an issue thread, a forum post, a trace.
    case reported
    /// Ours: Apple publishes nothing and no report pins the value down.
    case assumed
}

/// One number or rule of the model with its source, for docstrings' readers, trace headers
/// (`model`), `nfcbench session --help` and `nfcbench conformance --thermal`.
public struct ModelFact: Sendable, Hashable {
    /// A value as JSON carries it.
    public enum Value: Sendable, Hashable {
        case number(Double)
        case text(String)
        case flag(Bool)
    }

    /// The key in the trace header's `model` object, e.g. `"time_limit_s"`.
    public var key: String
    public var value: Value
    /// The value as a person reads it, e.g. `"60 s"`.
    public var text: String
    public var source: ModelSource
    /// The Apple symbol or page, the report (with its address) or why we chose it.
    public var reference: String

    public init(key: String, value: Value, text: String, source: ModelSource, reference: String) {
        self.key = key
        self.value = value
        self.text = text
        self.source = source
        self.reference = reference
    }
}

/// How the reader system behaves where Core NFC's rules leave a choice or Apple publishes
/// no number: the busy policy, the app's foreground state, the quick-restart (teardown)
/// window, connections and command limits, ISO 7816 application selection. Each member's
/// documentation names its source (documented, reported or assumed); ``facts`` lists them
/// for trace headers and `--help`. The thermal model's numbers are ``ThermalModel/Parameters``.
public struct ReaderSystemModel: Sendable, Hashable {
    /// What a `begin()` gets while another session is active.
    public enum BusyPolicy: String, Sendable, Hashable, CaseIterable {
        /// 203 `readerSessionInvalidationErrorSystemIsBusy` at once (documented:
        /// `NFCNDEFReaderSession.h`, `initWithDelegate:queue:invalidateAfterFirstRead:`
        /// discussion). The default: the seed article's table and the header's error text
        /// give 203, and an app must handle 203 anyway.
        case refuse
        /// The session waits in a first-in, first-out queue and becomes active when the
        /// reader is free (documented: the `NFCNDEFReaderSession` class note, "Subsequent
        /// opened sessions will get queued up and processed by the system in FIFO order").
        case queue
    }

    /// What `begin()` does while the app is in the background.
    public enum BackgroundBegin: String, Sendable, Hashable, CaseIterable {
        /// Nothing at all: no sheet, no `didBecomeActive`, no error (reported:
        /// JulianAssmann/flutter_background#81, "No error appears"). The default.
        case ignored
        /// Ends at once with 202 `readerSessionInvalidationErrorSessionTerminatedUnexpectedly`
        /// (assumed: the ending Apple documents for leaving the foreground).
        case terminated
        /// Starts a working session, as if the app were in the foreground (assumed; the
        /// model before this parameter existed).
        case starts
    }

    /// What a `begin()` within ``quickRestartWindow`` of the end of a session that had a
    /// sheet gets.
    public enum QuickRestartOutcome: String, Sendable, Hashable, CaseIterable {
        /// 203 at once (reported: okadan/flutter-nfc-manager#139, "start a new session it
        /// returns SystemBusy"; nfcim/flutter_nfc_kit#234). The default.
        case systemIsBusy
        /// The session never becomes active: no sheet, no `didBecomeActive`; it holds the
        /// reader until the app invalidates it (200) or its own time limit ends it (201,
        /// assumed) (reported: ph4r05/ios-14-nfc-bug-poc, revtel/react-native-nfc-manager#408,
        /// nfcim/flutter_nfc_kit#94).
        case neverActive
        /// The session starts with a shorter time limit: ``quickRestartPenalty`` is added to
        /// the heat (reported: the seed article, "restarting a session the instant it ends
        /// ... will only shorten the time for the next session").
        case shorterLimit
    }

    /// What `begin()` on a session that already ended does.
    public enum InvalidatedBegin: String, Sendable, Hashable, CaseIterable {
        /// The delegate gets the old ending again (reported: hansemannn/iOS-NFC-Example#11,
        /// "Session is invalidated by user cancellation" on the next scan;
        /// okadan/flutter-nfc-manager#139). The default.
        case endingRepeated
        /// Nothing (Core NFC's documentation: an invalidated session cannot be reused).
        case ignored
    }

    public var busyPolicy: BusyPolicy
    public var backgroundBegin: BackgroundBegin
    /// A `begin()` this soon after the end of a session that had a sheet is a quick
    /// restart. Reported: ~3 s (ph4r05/ios-14-nfc-bug-poc: "the NFC dialog ... is still
    /// present for some time (~3 sec)"; nfcim/flutter_nfc_kit#94: "bug does not appear if
    /// you wait a couple of seconds"). Counted within one ``NFCReaderSystem``: one bench
    /// process, or one conformance run including its other app (the sheet is the system's);
    /// separate CLI runs do not share it (assumed: every report is one app restarting).
    public var quickRestartWindow: Duration
    public var quickRestartOutcome: QuickRestartOutcome
    /// Heat (field-seconds) a quick restart adds under ``QuickRestartOutcome/shorterLimit``.
    /// Assumed: 20.
    public var quickRestartPenalty: Double
    public var invalidatedBegin: InvalidatedBegin
    /// How long one tag stays connected: an operation started later than this after
    /// `connect(to:)` fails with 100 `readerTransceiveErrorTagConnectionLost`, and the
    /// connection is gone. Reported: ~30 s (okadan/flutter-nfc-manager#35, "closes ... after
    /// around 30 secs and then I get an error ... Code=100 "Tag connection lost""). `nil`:
    /// no limit.
    public var tagConnectionLimit: Duration?
    /// The code `sendMiFareCommand` fails with when the tag NAKs or stays silent. Reported:
    /// 100 (revtel/react-native-nfc-manager#537: a refused PWD_AUTH "throws an error that
    /// says that the tag connection was lost"). The other candidate is 102
    /// `readerTransceiveErrorTagResponseError` (assumed).
    public var miFareFailureCode: NFCReaderError.Code
    /// The longest `sendMiFareCommand` packet; longer fails with 105
    /// `readerTransceiveErrorPacketTooLong` (the code is documented, iOS 14). Assumed: 254
    /// bytes (an ISO/IEC 14443 frame of FSD 256 less CRC_A).
    public var maximumMiFareCommandLength: Int
    /// The longest `sendCommand(apdu:)` command APDU; longer fails with 105. Assumed: 65 544
    /// bytes (ISO/IEC 7816-4 §5.1, the largest extended case 4 APDU).
    public var maximumAPDULength: Int
    /// The app's Info.plist key `com.apple.developer.nfc.readersession.iso7816.select-identifiers`
    /// (hex AIDs). An `NFCTagReaderSession` SELECTs these in order on an ISO-DEP tag and
    /// delivers it as `NFCISO7816Tag` with `initialSelectedAID` after the first success, and
    /// not at all when none succeeds (documented: `NFCISO7816Tag`, `initialSelectedAID`).
    /// Empty: the tag is delivered as `NFCMiFareTag` of family DESFire (documented for
    /// MIFARE DESFire on the `NFCMiFareTag` page; assumed for every ISO-DEP tag).
    public var iso7816SelectIdentifiers: [String]

    public init(
        busyPolicy: BusyPolicy = .refuse,
        backgroundBegin: BackgroundBegin = .ignored,
        quickRestartWindow: Duration = .seconds(3),
        quickRestartOutcome: QuickRestartOutcome = .systemIsBusy,
        quickRestartPenalty: Double = 20,
        invalidatedBegin: InvalidatedBegin = .endingRepeated,
        tagConnectionLimit: Duration? = .seconds(30),
        miFareFailureCode: NFCReaderError.Code = .readerTransceiveErrorTagConnectionLost,
        maximumMiFareCommandLength: Int = 254,
        maximumAPDULength: Int = 65_544,
        iso7816SelectIdentifiers: [String] = []
    ) {
        self.busyPolicy = busyPolicy
        self.backgroundBegin = backgroundBegin
        self.quickRestartWindow = quickRestartWindow
        self.quickRestartOutcome = quickRestartOutcome
        self.quickRestartPenalty = quickRestartPenalty
        self.invalidatedBegin = invalidatedBegin
        self.tagConnectionLimit = tagConnectionLimit
        self.miFareFailureCode = miFareFailureCode
        self.maximumMiFareCommandLength = maximumMiFareCommandLength
        self.maximumAPDULength = maximumAPDULength
        self.iso7816SelectIdentifiers = iso7816SelectIdentifiers
    }

    /// The documented defaults.
    public static let `default` = ReaderSystemModel()

    /// The AIDs an `NFCTagReaderSession` SELECTs: the Info.plist list narrowed by the
    /// session's `iso7816SelectIdentifiers` (Core NFC 26.4 `NFCTagReaderSession.Configuration`:
    /// a subset, unknown entries dropped, later duplicates dropped, empty means all).
    /// Hex is compared without case; the result is upper-case hex in the session's order.
    public func selectIdentifiers(narrowedTo session: [String]) -> [String] {
        let declared = iso7816SelectIdentifiers.map { $0.uppercased() }
        var out: [String] = []
        for aid in (session.isEmpty ? declared : session.map { $0.uppercased() })
        where declared.contains(aid) && !out.contains(aid) {
            out.append(aid)
        }
        return out
    }

    /// Every number and rule with its source (thermal ones from `thermal`).
    public func facts(thermal: ThermalModel.Parameters) -> [ModelFact] {
        thermal.facts + facts
    }

    /// This model's numbers and rules with their sources.
    public var facts: [ModelFact] {
        var out: [ModelFact] = []
        func add(_ key: String, _ value: ModelFact.Value, _ text: String, _ source: ModelSource, _ ref: String) {
            out.append(ModelFact(key: key, value: value, text: text, source: source, reference: ref))
        }
        let busyRef: String =
            busyPolicy == .refuse
            ? "NFCNDEFReaderSession.h init discussion: a session begun while one is active gets readerSessionInvalidationErrorSystemIsBusy (203); the class note's FIFO queue is the alternative (busy queue)"
            : "NFCNDEFReaderSession class note: subsequent sessions are queued and processed in FIFO order"
        add("busy_policy", .text(busyPolicy.rawValue), busyPolicy.rawValue, .documented, busyRef)
        add(
            "queued_time_limit_from", .text("activation"), "activation", .assumed,
            "a queued session's time limit counts from when it becomes active")
        add(
            "background_ends_session_code", .number(202), "202", .documented,
            "NFCNDEFReaderSession.h: the app entering the background ends the session with readerSessionInvalidationErrorSessionTerminatedUnexpectedly"
        )
        let backgroundSource: ModelSource = backgroundBegin == .ignored ? .reported : .assumed
        let backgroundRef: String =
            backgroundBegin == .ignored
            ? "https://github.com/JulianAssmann/flutter_background/issues/81 (begin in the background: nothing runs, no error)"
            : "alternative to the reported behaviour (ignored)"
        add(
            "background_begin", .text(backgroundBegin.rawValue), backgroundBegin.rawValue, backgroundSource,
            backgroundRef)
        add(
            "inactive_keeps_sessions", .flag(true), "yes", .assumed,
            "an inactive app (a banner, Control Center) keeps its session and may begin one: the NFC sheet itself makes the app inactive"
        )
        add(
            "quick_restart_window_s", .number(Self.seconds(quickRestartWindow)), Self.text(quickRestartWindow),
            .reported,
            "https://github.com/ph4r05/ios-14-nfc-bug-poc (~3 s), https://github.com/nfcim/flutter_nfc_kit/issues/94 (a couple of seconds); counted within one reader system (a bench process, or a conformance run with its other app); separate CLI runs do not share it (assumed)"
        )
        let outcomeRef: String
        switch quickRestartOutcome {
        case .systemIsBusy:
            outcomeRef =
                "203: https://github.com/okadan/flutter-nfc-manager/issues/139, https://github.com/nfcim/flutter_nfc_kit/pull/234"
        case .neverActive:
            outcomeRef =
                "never active: https://github.com/ph4r05/ios-14-nfc-bug-poc, https://github.com/revtel/react-native-nfc-manager/issues/408, https://github.com/nfcim/flutter_nfc_kit/issues/94"
        case .shorterLimit:
            outcomeRef = "shorter limit: the seed article 'Why an NFC reader session has a time limit'"
        }
        add(
            "quick_restart_outcome", .text(quickRestartOutcome.rawValue), quickRestartOutcome.rawValue, .reported,
            outcomeRef)
        add(
            "quick_restart_penalty", .number(quickRestartPenalty), Self.number(quickRestartPenalty) + " field-s",
            .assumed, "heat a quick restart adds when the outcome is shorterLimit")
        add(
            "never_active_ends_code", .number(201), "201 at its time limit", .assumed,
            "a session that never became active is ended by its own time limit (the reports stop at 'never shows up')")
        let invalidatedSource: ModelSource = invalidatedBegin == .endingRepeated ? .reported : .documented
        let invalidatedRef: String =
            invalidatedBegin == .endingRepeated
            ? "https://github.com/hansemannn/iOS-NFC-Example/issues/11 (the old ending delivered again)"
            : "NFCReaderSession: an invalidated session cannot be reused"
        add(
            "invalidated_begin", .text(invalidatedBegin.rawValue), invalidatedBegin.rawValue, invalidatedSource,
            invalidatedRef)
        add(
            "connect_ends_previous_connection", .flag(true), "yes", .documented,
            "NFCTagReaderSession connect(to:completionHandler:): a tag stays connected until your app connects to a different tag or restarts polling"
        )
        add(
            "not_connected_code", .number(104), "104", .assumed,
            "an operation on a tag whose connection ended: Core NFC's code for a tag that is not connected (readerTransceiveErrorTagNotConnected, 'Tag is not connected' in https://github.com/okadan/flutter-nfc-manager/issues/164); no report shows the first tag after a second connect"
        )
        let limitValue: ModelFact.Value
        let limitText: String
        if let l = tagConnectionLimit {
            limitValue = .number(Self.seconds(l))
            limitText = Self.text(l)
        } else {
            limitValue = .text("none")
            limitText = "none"
        }
        add(
            "tag_connection_limit_s", limitValue, limitText, .reported,
            "https://github.com/okadan/flutter-nfc-manager/issues/35 (100 after about 30 s on one tag)")
        let miFareSource: ModelSource =
            miFareFailureCode == .readerTransceiveErrorTagConnectionLost ? .reported : .assumed
        add(
            "mifare_failure_code", .number(Double(miFareFailureCode.rawValue)), String(miFareFailureCode.rawValue),
            miFareSource,
            "NAK or silence to sendMiFareCommand: https://github.com/revtel/react-native-nfc-manager/issues/537 (PWD_AUTH NAK: 'Tag connection lost'); 102 is the other candidate"
        )
        add(
            "mifare_max_command_bytes", .number(Double(maximumMiFareCommandLength)),
            String(maximumMiFareCommandLength) + " B", .assumed,
            "longer fails with readerTransceiveErrorPacketTooLong (105, documented, iOS 14); FSD 256 less CRC_A")
        add(
            "apdu_max_bytes", .number(Double(maximumAPDULength)), String(maximumAPDULength) + " B", .assumed,
            "longer fails with 105; ISO/IEC 7816-4 §5.1 extended case 4 maximum")
        let aids = iso7816SelectIdentifiers.joined(separator: ",")
        add(
            "iso7816_select_identifiers", .text(aids), aids.isEmpty ? "none" : aids, .documented,
            "NFCISO7816Tag, initialSelectedAID: SELECT in order, deliver after the first success, not at all when none succeeds; none declared: NFCMiFareTag (DESFire: NFCMiFareTag page; other ISO-DEP: assumed)"
        )
        return out
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }

    static func number(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
    }

    static func text(_ d: Duration) -> String { number(seconds(d)) + " s" }
}
