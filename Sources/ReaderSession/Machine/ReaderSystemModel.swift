import NFCTags

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
    /// What the source actually covers, in words: the device, tag family or case it speaks
    /// of, so a reader can tell a value that is sourced from one that is stretched
    /// (`"one report, an ISO 15693 tag; nothing for Type 2 or Type 4"`). Empty only where
    /// nobody says anything (an assumed value says so in ``reference``).
    public var covers: String

    public init(
        key: String, value: Value, text: String, source: ModelSource, reference: String, covers: String = ""
    ) {
        self.key = key
        self.value = value
        self.text = text
        self.source = source
        self.reference = reference
        self.covers = covers
    }
}

/// How the reader system behaves where Core NFC's rules leave a choice or Apple publishes
/// no number: the busy policy, the app's foreground state, the quick-restart (teardown)
/// window, the session turnover, connections and command limits, ISO 7816 application
/// selection, and the app's declarations (entitlement, Info.plist) and the phone's NFC
/// conditions behind errors 2, 6, 7 and 8. Each member's documentation names its source
/// (documented, reported or assumed); ``facts`` lists them for trace headers, `--help` and
/// the generated table in `docs/model.md`. The thermal model's numbers are
/// ``ThermalModel/Parameters``.
public struct ReaderSystemModel: Sendable, Hashable {
    /// What a `begin()` gets while another app's session (another bench process, a
    /// conformance run's other app) holds the reader.
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

    /// What a `begin()` gets while a session of the same app is active.
    public enum SameAppBegin: String, Sendable, Hashable, CaseIterable {
        /// The new session kicks the active one out: it ends with 202
        /// `readerSessionInvalidationErrorSessionTerminatedUnexpectedly`, and the new
        /// `begin()` then meets the quick-restart rule like any begin right after an ending
        /// (203 by default), so an instant retry gets 203 too and a retry after a back-off
        /// works (reported: nfcim/flutter_nfc_kit#234, "the real kick-off (502) → instant
        /// retry (503) → backoff"; the plugin's 502/503 are Core NFC's 202/203). The default
        /// of `nfcbench session` and the conformance harness (``reportedTurnover``).
        case kickOut = "kick-out"
        /// The busy policy, as for another app's session (203, or the queue): the model
        /// before this parameter existed, and the library's default.
        case busyPolicy = "busy-policy"
    }

    /// What `begin()` does while the app is in the background.
    public enum BackgroundBegin: String, Sendable, Hashable, CaseIterable {
        /// Nothing at all: no sheet, no `didBecomeActive`, no error. Assumed: no iOS report
        /// says what a `begin()` made in the background gets (the one report once cited,
        /// JulianAssmann/flutter_background#81, is about an Android-only plugin). The default.
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

    /// What `sendMiFareCommand` does with the CRC_A of an Ultralight (Type 2) frame. The
    /// sources conflict: Apple's page for `sendMiFareCommand(commandPacket:completionHandler:)`
    /// says "For NFCMiFareFamily.ultralight commands, you must calculate a 2-byte CRC value
    /// and append it" (documented), and apps are reported sending frames without it and
    /// working (nfcim/flutter_nfc_kit#224 writes `A2 page data`).
    public enum MiFareCRC: String, Sendable, Hashable, CaseIterable {
        /// Either form works: a frame whose last two bytes are its own CRC_A goes on the
        /// air as it is; any other frame gets the CRC_A added. An app that follows Apple's
        /// page and one that follows the reports both pass (assumed: no source says what the
        /// phone does with each form; a frame whose last two bytes happen to equal the CRC_A
        /// of the rest, 1 in 65 536, is taken as carrying one). The default.
        case either
        /// Apple's page, taken literally: the app's bytes go on the air as they are, so a
        /// frame must end in its CRC_A; one without it reaches the tag with a bad CRC and
        /// is not answered (``miFareFailureCode``).
        case appended
        /// The phone adds the CRC_A to whatever the app sends (what the reported apps rely
        /// on): a frame with a CRC_A appended reaches the tag two bytes long and is refused
        /// (`30 04 26 EE` gets a NAK: 100). The model before this parameter existed.
        case omitted
    }

    /// The app's entitlement `com.apple.developer.nfc.readersession.formats` (documented:
    /// Core NFC's entitlement page; `NFCReaderSession.h`, readerErrorSecurityViolation).
    public enum ReaderSessionFormat: String, Sendable, Hashable, CaseIterable {
        /// `NDEF`: `NFCNDEFReaderSession`.
        case ndef = "NDEF"
        /// `TAG`: `NFCTagReaderSession`.
        case tag = "TAG"
    }

    /// The phone's NFC conditions a `begin()` meets (Core NFC 26 codes 6, 7 and 8: the
    /// codes are documented; when an iPhone raises them for a reader session is not, so
    /// the causes are assumed and stated).
    public enum NFCAvailability: String, Sendable, Hashable, CaseIterable {
        /// NFC is available: sessions begin.
        case available
        /// The NFC radio is off: `begin()` ends with 6 `readerErrorRadioDisabled`.
        case radioDisabled = "radio-disabled"
        /// The device or region is not eligible: `begin()` ends with 7 `readerErrorIneligible`.
        case ineligible
        /// The user declined NFC access: `begin()` ends with 8 `readerErrorAccessNotAccepted`.
        case accessNotAccepted = "access-not-accepted"

        /// The code a `begin()` ends with, `nil` when available.
        public var refusal: NFCReaderError.Code? {
            switch self {
            case .available: nil
            case .radioDisabled: .readerErrorRadioDisabled
            case .ineligible: .readerErrorIneligible
            case .accessNotAccepted: .readerErrorAccessNotAccepted
            }
        }
    }

    public var busyPolicy: BusyPolicy
    public var sameAppBegin: SameAppBegin
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
    /// How long after the app's `invalidate()` (or `invalidate(errorMessage:)`) the
    /// delegate hears `didInvalidateWithError`: the session stops at once (no tag is
    /// delivered, operations fail with 103, `isReady` is false), the sheet stays up with the
    /// reader held, and the ending arrives this much later. Reported: "Invalidating an active
    /// NFC session on iOS usually takes a few seconds" (okadan/flutter-nfc-manager#255, no
    /// number); the number is from "a delay of around 2.5s between the success icon finishes
    /// to draw and the alert is dismissed" (revtel/react-native-nfc-manager#246: the sheet
    /// closing after a read, not `invalidate()` itself). 2.5 s in `nfcbench session` and the
    /// conformance harness (``reportedTurnover``); the library's default is `.zero`, the model
    /// before this parameter existed (the ending in the same instant), so a host on a manual
    /// clock is not left waiting on a clock it never advances.
    public var invalidationDelay: Duration
    /// How long one tag stays connected: an operation started later than this after
    /// `connect(to:)` fails with 100 `readerTransceiveErrorTagConnectionLost`, and the
    /// connection is gone. 30 s: one report, about an **ISO 15693** tag
    /// (okadan/flutter-nfc-manager#35, "closes ... after around 30 secs and then I get an
    /// error ... Code=100"); applied to Type 2 and Type 4 tags, where nothing is reported, so
    /// assumed there. `nil`: no limit.
    public var tagConnectionLimit: Duration?
    /// The code `sendMiFareCommand` fails with when the tag NAKs or stays silent. Reported:
    /// 100 (revtel/react-native-nfc-manager#537: a refused PWD_AUTH "throws an error that
    /// says that the tag connection was lost"). The other candidate is 102
    /// `readerTransceiveErrorTagResponseError` (assumed).
    public var miFareFailureCode: NFCReaderError.Code
    /// What `sendMiFareCommand` does with a Type 2 frame's CRC_A (``MiFareCRC``).
    public var miFareCRC: MiFareCRC
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
    /// An entry that is not 5 to 16 bytes of hex is not a valid AID: it is dropped (and the
    /// trace says so); a list with entries but no valid one makes an ISO 14443 tag
    /// session's `begin()` end with 2 (documented: "does not contain at least one valid
    /// entry"). After `begin()`, `sendCommand` may SELECT by DF name only these AIDs: any
    /// other ends that command with 2 `readerErrorSecurityViolation` before it reaches the
    /// tag (documented: `NFCISO7816Tag.h`, "Selecting an application outside of the
    /// permissible list will result in a NFCReaderErrorSecurityViolation error").
    /// Empty (no key): the tag is delivered as `NFCMiFareTag` of family DESFire (documented
    /// for MIFARE DESFire on the `NFCMiFareTag` page; reported for other ISO-DEP tags,
    /// revtel/react-native-nfc-manager#248), and no SELECT by name is permitted.
    public var iso7816SelectIdentifiers: [String]
    /// The app's Info.plist key `com.apple.developer.nfc.readersession.felica.systemcodes`
    /// (4 hex digits each, e.g. `"12FC"`). When an `NFCTagReaderSession` with `.iso18092`
    /// finds a FeliCa card it sends Polling with these codes in order and delivers the card
    /// as `NFCFeliCaTag` on the first that answers (`currentSystemCode`, `currentIDm`), and
    /// not at all when none does (documented, `NFCFeliCaTag.h`: "Tag will not be returned …
    /// if no matching system is found"). A code with `FF` in either byte (Polling's wildcard)
    /// is not valid and is dropped (documented: "The wild card value (0xFF) isn't allowed");
    /// a `.iso18092` session whose list has no valid entry ends at `begin()` with 2
    /// (documented: "systemcodes does not contain at least one valid entry"). After delivery
    /// `polling(systemCode:…)` with a code outside the valid list fails with 2 before
    /// anything is sent (documented: "NFCReaderErrorSecurityViolation will be returned when
    /// an invalid system code is used").
    public var feliCaSystemCodes: [String] = []
    /// The app's entitlement: which reader sessions it may begin. A session of a format not
    /// listed ends at `begin()` with 2 `readerErrorSecurityViolation` (documented:
    /// `NFCReaderSession.h`, "Missing required entitlement"). Default: both.
    public var readerSessionFormats: Set<ReaderSessionFormat>
    /// The app's Info.plist has `NFCReaderUsageDescription`. Without it sessions begin but
    /// no tag is ever delivered (documented: Core NFC's headers, no tag-discovery callbacks
    /// without the usage description); the session ends with its time limit, Done or the
    /// app's `invalidate()`. Default: present.
    public var hasUsageDescription: Bool
    /// The phone's NFC conditions (``NFCAvailability``): default available.
    public var availability: NFCAvailability

    public init(
        busyPolicy: BusyPolicy = .refuse,
        sameAppBegin: SameAppBegin = .busyPolicy,
        backgroundBegin: BackgroundBegin = .ignored,
        quickRestartWindow: Duration = .seconds(3),
        quickRestartOutcome: QuickRestartOutcome = .systemIsBusy,
        quickRestartPenalty: Double = 20,
        invalidatedBegin: InvalidatedBegin = .endingRepeated,
        invalidationDelay: Duration = .zero,
        tagConnectionLimit: Duration? = .seconds(30),
        miFareFailureCode: NFCReaderError.Code = .readerTransceiveErrorTagConnectionLost,
        miFareCRC: MiFareCRC = .either,
        maximumMiFareCommandLength: Int = 254,
        maximumAPDULength: Int = 65_544,
        iso7816SelectIdentifiers: [String] = [],
        readerSessionFormats: Set<ReaderSessionFormat> = [.ndef, .tag],
        hasUsageDescription: Bool = true,
        availability: NFCAvailability = .available
    ) {
        self.busyPolicy = busyPolicy
        self.sameAppBegin = sameAppBegin
        self.backgroundBegin = backgroundBegin
        self.quickRestartWindow = quickRestartWindow
        self.quickRestartOutcome = quickRestartOutcome
        self.quickRestartPenalty = quickRestartPenalty
        self.invalidatedBegin = invalidatedBegin
        self.invalidationDelay = max(.zero, invalidationDelay)
        self.tagConnectionLimit = tagConnectionLimit
        self.miFareFailureCode = miFareFailureCode
        self.miFareCRC = miFareCRC
        self.maximumMiFareCommandLength = maximumMiFareCommandLength
        self.maximumAPDULength = maximumAPDULength
        self.iso7816SelectIdentifiers = iso7816SelectIdentifiers
        self.readerSessionFormats = readerSessionFormats
        self.hasUsageDescription = hasUsageDescription
        self.availability = availability
    }

    /// The documented defaults.
    public static let `default` = ReaderSystemModel()

    /// The reported session turnover (``invalidationDelay`` 2.5 s, ``SameAppBegin/kickOut``):
    /// what `nfcbench session` and the conformance harness play by default. The library's
    /// own default keeps the ending in the same instant and no kick-out, so code that drives a
    /// session on a manual clock does not wait on a clock it never advances; a host that
    /// wants the phone's turnover sets these two (or starts from this value).
    public static let reportedTurnover = ReaderSystemModel(
        sameAppBegin: .kickOut, invalidationDelay: .milliseconds(2500))

    /// Whether `aid` is a valid AID for the select-identifiers list: 5 to 16 bytes of hex
    /// (ISO/IEC 7816-4 §8.2.1.2: an AID is at most 16 bytes; its RID is 5).
    public static func isValidAID(_ aid: String) -> Bool {
        guard let b = [UInt8](hex: aid) else { return false }
        return (5...16).contains(b.count)
    }

    /// The Info.plist list's valid entries, upper-case, in order, duplicates dropped.
    public var validSelectIdentifiers: [String] {
        var out: [String] = []
        for aid in iso7816SelectIdentifiers.map({ $0.uppercased() }) where Self.isValidAID(aid) && !out.contains(aid) {
            out.append(aid)
        }
        return out
    }

    /// Whether `code` is a valid entry of the FeliCa system-code list: 2 bytes of hex with
    /// no `FF` byte (documented: no wildcard in the upper or the lower byte).
    public static func isValidSystemCode(_ code: String) -> Bool {
        guard let b = [UInt8](hex: code), b.count == 2 else { return false }
        return b[0] != 0xFF && b[1] != 0xFF
    }

    /// The FeliCa list's valid entries, upper-case, in order, duplicates dropped.
    public var validFeliCaSystemCodes: [String] {
        var out: [String] = []
        for c in feliCaSystemCodes.map({ $0.uppercased() }) where Self.isValidSystemCode(c) && !out.contains(c) {
            out.append(c)
        }
        return out
    }

    /// The FeliCa list's entries that are not valid (dropped).
    public var invalidFeliCaSystemCodes: [String] { feliCaSystemCodes.filter { !Self.isValidSystemCode($0) } }

    /// The system codes a session polls: the Info.plist list's valid entries narrowed by the
    /// session's `feliCaSystemCodes` (Core NFC 26.4 `Configuration`: "all unknown / not
    /// matched entries will be dropped. An empty array indicates all system codes specified
    /// in Info.plist will be used. Subsequent duplicate elements will get dropped.").
    public func feliCaSystemCodes(narrowedTo session: [String]) -> [String] {
        let declared = validFeliCaSystemCodes
        var out: [String] = []
        for c in (session.isEmpty ? declared : session.map { $0.uppercased() })
        where declared.contains(c) && !out.contains(c) {
            out.append(c)
        }
        return out
    }

    /// The Info.plist list's entries that are not valid AIDs (dropped).
    public var invalidSelectIdentifiers: [String] { iso7816SelectIdentifiers.filter { !Self.isValidAID($0) } }

    /// The AIDs an `NFCTagReaderSession` SELECTs: the Info.plist list's valid entries narrowed
    /// by the session's `iso7816SelectIdentifiers` (Core NFC 26.4 `NFCTagReaderSession.Configuration`:
    /// a subset, unknown entries dropped, later duplicates dropped, empty means all).
    /// Hex is compared without case; the result is upper-case hex in the session's order.
    public func selectIdentifiers(narrowedTo session: [String]) -> [String] {
        let declared = validSelectIdentifiers
        var out: [String] = []
        for aid in (session.isEmpty ? declared : session.map { $0.uppercased() })
        where declared.contains(aid) && !out.contains(aid) {
            out.append(aid)
        }
        return out
    }

    /// Whether a command APDU may be sent to an `NFCISO7816Tag`: a SELECT by DF name
    /// (`INS A4`, `P1 04`) must name one of the valid select-identifiers (hex compared
    /// without case); every other command passes. `nil` when allowed, else the AID refused.
    public func forbiddenSelection(in apdu: [UInt8]) -> [UInt8]? {
        guard apdu.count >= 5, apdu[1] == 0xA4, apdu[2] == 0x04 else { return nil }
        // Short Lc (1 byte) or extended (00 Lc1 Lc2), ISO/IEC 7816-4 §5.1.
        let aid: [UInt8]
        if apdu[4] != 0 {
            let n = Int(apdu[4])
            aid = Array(apdu.dropFirst(5).prefix(n))
        } else if apdu.count >= 7 {
            let n = Int(apdu[5]) << 8 | Int(apdu[6])
            aid = Array(apdu.dropFirst(7).prefix(n))
        } else {
            aid = []
        }
        let hex = aid.hexString()
        return validSelectIdentifiers.contains(hex) ? nil : aid
    }

    /// The frame `sendMiFareCommand` puts on the air for a Type 2 tag, as the tag hears it
    /// (CRC_A excluded, as the emulation cores and carriers take frames): `nil` when the
    /// frame reaches the tag with a bad CRC_A, which answers nothing (``MiFareCRC/appended``
    /// and a frame without its CRC_A).
    public func miFareFrameOnAir(_ frame: [UInt8]) -> [UInt8]? {
        let carriesCRC = frame.count > 2 && iso14443CRCA(frame.dropLast(2)) == Array(frame.suffix(2))
        switch miFareCRC {
        case .either: return carriesCRC ? Array(frame.dropLast(2)) : frame
        case .appended: return carriesCRC ? Array(frame.dropLast(2)) : nil
        case .omitted: return frame
        }
    }

    /// The code a `begin()` of `kind` ends with because of the app's declarations or the
    /// phone's conditions, with the reason; `nil` when it may go on.
    public func declarationRefusal(for kind: ReaderSessionKind) -> (code: NFCReaderError.Code, reason: String)? {
        let format: ReaderSessionFormat
        switch kind {
        case .ndef, .ndefReadWrite: format = .ndef
        case .tag: format = .tag
        }
        if !readerSessionFormats.contains(format) {
            return (
                .readerErrorSecurityViolation,
                "the app's entitlement com.apple.developer.nfc.readersession.formats lacks \(format.rawValue)"
            )
        }
        if let code = availability.refusal {
            return (code, "the phone's NFC is \(availability.rawValue)")
        }
        if case .tag(let options) = kind, options.contains(.iso14443), !iso7816SelectIdentifiers.isEmpty,
            validSelectIdentifiers.isEmpty
        {
            return (
                .readerErrorSecurityViolation,
                "the Info.plist select-identifiers list has no valid entry (\(iso7816SelectIdentifiers.joined(separator: ",")))"
            )
        }
        if case .tag(let options) = kind, options.contains(.iso18092), validFeliCaSystemCodes.isEmpty {
            return (
                .readerErrorSecurityViolation,
                feliCaSystemCodes.isEmpty
                    ? "the Info.plist has no com.apple.developer.nfc.readersession.felica.systemcodes (needed for .iso18092)"
                    : "the Info.plist felica.systemcodes list has no valid entry (\(feliCaSystemCodes.joined(separator: ",")))"
            )
        }
        return nil
    }

    /// Every number and rule with its source (thermal ones from `thermal`).
    public func facts(thermal: ThermalModel.Parameters) -> [ModelFact] {
        thermal.facts + facts
    }

    /// The stored properties of ``ReaderSystemModel`` and the ``facts`` keys that state
    /// them (a test checks every stored property is here and every key is in ``facts``).
    public static let factKeysByProperty: [String: [String]] = [
        "busyPolicy": ["busy_policy", "queued_time_limit_from"],
        "sameAppBegin": ["same_app_begin"],
        "backgroundBegin": ["background_begin", "background_ends_session_code", "inactive_keeps_sessions"],
        "quickRestartWindow": ["quick_restart_window_s"],
        "quickRestartOutcome": ["quick_restart_outcome", "never_active_ends_code"],
        "quickRestartPenalty": ["quick_restart_penalty"],
        "invalidatedBegin": ["invalidated_begin"],
        "invalidationDelay": ["invalidation_delay_s"],
        "tagConnectionLimit": ["tag_connection_limit_s", "connect_ends_previous_connection", "not_connected_code"],
        "miFareFailureCode": ["mifare_failure_code"],
        "miFareCRC": ["mifare_crc"],
        "maximumMiFareCommandLength": ["mifare_max_command_bytes"],
        "maximumAPDULength": ["apdu_max_bytes"],
        "iso7816SelectIdentifiers": [
            "iso7816_select_identifiers", "iso7816_invalid_aid", "iso7816_permissible_selection",
        ],
        "feliCaSystemCodes": ["felica_system_codes", "felica_invalid_system_code", "felica_polling_security"],
        "readerSessionFormats": ["reader_session_formats"],
        "hasUsageDescription": ["usage_description"],
        "availability": ["nfc_availability"],
    ]

    /// This model's numbers and rules with their sources.
    public var facts: [ModelFact] {
        var out: [ModelFact] = []
        func add(
            _ key: String, _ value: ModelFact.Value, _ text: String, _ source: ModelSource, _ ref: String,
            covers: String
        ) {
            out.append(ModelFact(key: key, value: value, text: text, source: source, reference: ref, covers: covers))
        }
        let busyRef: String =
            busyPolicy == .refuse
            ? "NFCNDEFReaderSession.h init discussion: a session begun while one is active gets readerSessionInvalidationErrorSystemIsBusy (203); the class note's FIFO queue is the alternative (busy queue)"
            : "NFCNDEFReaderSession class note: subsequent sessions are queued and processed in FIFO order"
        add(
            "busy_policy", .text(busyPolicy.rawValue), busyPolicy.rawValue, .documented, busyRef,
            covers:
                "Apple's header says both (203 and a FIFO queue); applied to another app's session (another process)")
        add(
            "queued_time_limit_from", .text("activation"), "activation", .assumed,
            "a queued session's time limit counts from when it becomes active", covers: "nobody says")
        let kickRef: String =
            sameAppBegin == .kickOut
            ? "https://github.com/nfcim/flutter_nfc_kit/pull/234 (the real kick-off (502) → instant retry (503) → backoff; 502/503 are the plugin's names for 202/203): the active session ends 202, the new begin() meets the quick-restart rule"
            : "the busy policy (203 or the queue), as for another app"
        add(
            "same_app_begin", .text(sameAppBegin.rawValue), sameAppBegin.rawValue,
            sameAppBegin == .kickOut ? .reported : .documented, kickRef,
            covers:
                "one plugin's example app on iOS (a session begun while the same app's session runs); what the kicking session itself gets is not said: here the quick-restart rule"
        )
        add(
            "background_ends_session_code", .number(202), "202", .documented,
            "NFCNDEFReaderSession.h: the app entering the background ends the session with readerSessionInvalidationErrorSessionTerminatedUnexpectedly",
            covers: "an active session when the app leaves the foreground")
        add(
            "background_begin", .text(backgroundBegin.rawValue), backgroundBegin.rawValue, .assumed,
            backgroundBegin == .ignored
                ? "no iOS report says what a begin() made in the background gets; JulianAssmann/flutter_background#81, once cited here, is about an Android-only plugin"
                : "alternative to the default (ignored); no report either way",
            covers: "nothing: no source speaks of a begin() made in the background on iOS")
        add(
            "inactive_keeps_sessions", .flag(true), "yes", .assumed,
            "an inactive app (a banner, Control Center) keeps its session and may begin one: the NFC sheet itself makes the app inactive",
            covers: "nothing beyond the sheet making the app inactive")
        add(
            "quick_restart_window_s", .number(Self.seconds(quickRestartWindow)), Self.text(quickRestartWindow),
            .reported,
            "https://github.com/ph4r05/ios-14-nfc-bug-poc (~3 s), https://github.com/nfcim/flutter_nfc_kit/issues/94 (a couple of seconds); counted within one reader system (a bench process, or a conformance run with its other app); separate CLI runs do not share it (assumed)",
            covers: "one app restarting its own session (iOS 14, iOS 15.4.1)")
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
            outcomeRef, covers: "field reports of an immediate re-begin; they disagree, so each outcome is selectable")
        add(
            "quick_restart_penalty", .number(quickRestartPenalty), Self.number(quickRestartPenalty) + " field-s",
            .assumed, "heat a quick restart adds when the outcome is shorterLimit", covers: "nobody says")
        add(
            "never_active_ends_code", .number(201), "201 at its time limit", .assumed,
            "a session that never became active is ended by its own time limit (the reports stop at 'never shows up')",
            covers: "nothing: the reports end before the session does")
        let invalidatedSource: ModelSource = invalidatedBegin == .endingRepeated ? .reported : .documented
        let invalidatedRef: String =
            invalidatedBegin == .endingRepeated
            ? "https://github.com/hansemannn/iOS-NFC-Example/issues/11 (the old ending delivered again)"
            : "NFCReaderSession: an invalidated session cannot be reused"
        add(
            "invalidated_begin", .text(invalidatedBegin.rawValue), invalidatedBegin.rawValue, invalidatedSource,
            invalidatedRef, covers: "begin() again on the same, ended session object (iOS 11)")
        add(
            "invalidation_delay_s", .number(Self.seconds(invalidationDelay)), Self.text(invalidationDelay),
            invalidationDelay == .milliseconds(2500) ? .reported : .assumed,
            (invalidationDelay == .zero
                ? "0: the ending in the same instant (the library's default, the model before this parameter); the phone's reported turnover is 2.5 s (session --turnover-delay, ReaderSystemModel.reportedTurnover): "
                : "")
                + "https://github.com/okadan/flutter-nfc-manager/issues/255 (invalidating an active session usually takes a few seconds before didInvalidateWithError), https://github.com/revtel/react-native-nfc-manager/issues/246 (around 2.5 s from the success tick to the sheet's dismissal)",
            covers:
                "#255: the app's invalidate() of an active session takes a few seconds (no number); #246: 2.5 s from the success tick to the sheet's dismissal after a read. Applied to invalidate() only: Done, the time limit and the first read end at once here (assumed)"
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
            "connect_ends_previous_connection", .flag(true), "yes", .documented,
            "NFCTagReaderSession connect(to:completionHandler:): a tag stays connected until your app connects to a different tag or restarts polling",
            covers: "every tag family")
        add(
            "not_connected_code", .number(104), "104", .assumed,
            "an operation on a tag whose connection ended: Core NFC's code for a tag that is not connected (readerTransceiveErrorTagNotConnected, 'Tag is not connected' in https://github.com/okadan/flutter-nfc-manager/issues/164); no report shows the first tag after a second connect",
            covers: "the code's name; not the case of a first tag after a second connect")
        add(
            "tag_connection_limit_s", limitValue, limitText, .assumed,
            "https://github.com/okadan/flutter-nfc-manager/issues/35 (100 after about 30 s, an ISO 15693 tag), applied here to Type 2 and Type 4 tags",
            covers:
                "one report, about an ISO 15693 tag (the sheet closed too); nothing for Type 2 or Type 4: assumed there"
        )
        add(
            "ndef_empty_record_message", .text("delivered"), "delivered", .assumed,
            "a message of one empty record (TNF 0, D0 00 00): readNDEF returns it (reported: https://github.com/Exxili/capacitor-nfc/issues/25, an NTAG215 on iOS 26.3 read as one record with an empty type and payload); read-only mode's didDetectNDEFs delivers it too (assumed: the same read). An empty NDEF TLV (NLEN 0) is 403 to readNDEF and no delivery (reported: phonegap-nfc#416)",
            covers:
                "readNDEF in a tag session (NFCTagReaderSession, NFCMiFareTag); nothing about didDetectNDEFs: assumed there"
        )
        let miFareSource: ModelSource =
            miFareFailureCode == .readerTransceiveErrorTagConnectionLost ? .reported : .assumed
        add(
            "mifare_failure_code", .number(Double(miFareFailureCode.rawValue)), String(miFareFailureCode.rawValue),
            miFareSource,
            "NAK or silence to sendMiFareCommand: https://github.com/revtel/react-native-nfc-manager/issues/537 (PWD_AUTH NAK: 'Tag connection lost'); 102 is the other candidate",
            covers: "a NAK to PWD_AUTH on an NTAG; silence is assumed to end the same way")
        let crcRef: String
        switch miFareCRC {
        case .either:
            crcRef =
                "sources conflict: Apple's sendMiFareCommand page (append the CRC for .ultralight) and https://github.com/nfcim/flutter_nfc_kit/pull/224 (frames without it work); either form works here"
        case .appended:
            crcRef =
                "Apple's sendMiFareCommand page: for NFCMiFareFamily.ultralight commands the app appends the 2-byte CRC"
        case .omitted:
            crcRef =
                "https://github.com/nfcim/flutter_nfc_kit/pull/224 (A2 page data, no CRC); a frame with a CRC appended is refused"
        }
        let crcSource: ModelSource =
            switch miFareCRC {
            case .either: .assumed
            case .appended: .documented
            case .omitted: .reported
            }
        add(
            "mifare_crc", .text(miFareCRC.rawValue), miFareCRC.rawValue, crcSource, crcRef,
            covers:
                "Apple's page: Ultralight commands; the report: WRITE A2 from a Flutter plugin; neither says what the phone does with the other form"
        )
        add(
            "mifare_max_command_bytes", .number(Double(maximumMiFareCommandLength)),
            String(maximumMiFareCommandLength) + " B", .assumed,
            "longer fails with readerTransceiveErrorPacketTooLong (105, documented, iOS 14); FSD 256 less CRC_A",
            covers: "the code only; the length is ours")
        add(
            "apdu_max_bytes", .number(Double(maximumAPDULength)), String(maximumAPDULength) + " B", .assumed,
            "longer fails with 105; ISO/IEC 7816-4 §5.1 extended case 4 maximum",
            covers: "the code only; the length is ours"
        )
        let aids = iso7816SelectIdentifiers.joined(separator: ",")
        add(
            "iso7816_select_identifiers", .text(aids), aids.isEmpty ? "none" : aids, .documented,
            "NFCISO7816Tag, initialSelectedAID: SELECT in order, deliver after the first success, not at all when none succeeds; none declared: NFCMiFareTag (DESFire: NFCMiFareTag page; other ISO-DEP: https://github.com/revtel/react-native-nfc-manager/issues/248)",
            covers:
                "NFCTagReaderSession with ISO 14443 polling; the SELECT's framing (00 A4 04 00 Lc AID 00) is assumed")
        add(
            "iso7816_invalid_aid", .text("dropped; 2 when none valid"), "dropped; 2 when none is valid", .documented,
            "NFCTagReaderSession.h: readerErrorSecurityViolation when select-identifiers does not contain at least one valid entry; an entry is valid when it is 5 to 16 bytes of hex (assumed: ISO/IEC 7816-4 AID lengths)",
            covers: "a list with no valid entry; which entries Apple deems valid is assumed")
        add(
            "iso7816_permissible_selection", .text("SELECT by name of a listed AID only; else 2"),
            "listed AIDs only; else 2", .documented,
            "NFCISO7816Tag.h sendCommandAPDU: selecting an application outside of the permissible list results in NFCReaderErrorSecurityViolation",
            covers: "SELECT by DF name (P1 04) through sendCommand; other SELECTs (by file id) pass (assumed)")
        let codes = feliCaSystemCodes.joined(separator: ",")
        add(
            "felica_system_codes", .text(codes), codes.isEmpty ? "none" : codes, .documented,
            "NFCFeliCaTag.h: Polling with the Info.plist system codes in the array's order; the tag is returned on the first successful Polling and not at all when no system matches",
            covers:
                "NFCTagReaderSession with .iso18092; the Polling frame (06 00 SC SC 01 00, Request Code 01) and that silence means no match are assumed"
        )
        add(
            "felica_invalid_system_code", .text("dropped; 2 when none valid"), "dropped; 2 when none is valid",
            .documented,
            "entitlement page com.apple.developer.nfc.readersession.felica.systemcodes: the wild card value (0xFF) isn't allowed; NFCFeliCaTag.h: readerErrorSecurityViolation when the list does not contain at least one valid entry",
            covers:
                "a code with FF in either byte; a .iso18092 session with no valid code (no key counts as none, assumed)"
        )
        add(
            "felica_polling_security", .text("listed codes only; else 2"), "listed codes only; else 2", .documented,
            "NFCFeliCaTag.h polling: NFCReaderErrorSecurityViolation will be returned when an invalid system code is used",
            covers:
                "polling(systemCode:requestCode:timeSlot:) after delivery; the code is checked before anything is sent (assumed)"
        )
        let formats = ReaderSessionFormat.allCases.filter { readerSessionFormats.contains($0) }.map(\.rawValue)
        add(
            "reader_session_formats", .text(formats.joined(separator: ",")),
            formats.isEmpty ? "none" : formats.joined(separator: ","), .documented,
            "the entitlement com.apple.developer.nfc.readersession.formats; a session of a format not listed ends at begin() with readerErrorSecurityViolation (2, NFCReaderSession.h: missing required entitlement)",
            covers: "both session kinds; NFCNDEFReaderSession's init discussion also mentions 1")
        add(
            "usage_description", .flag(hasUsageDescription), hasUsageDescription ? "present" : "missing", .documented,
            "NFCReaderUsageDescription in Info.plist; without it no tag-discovery callbacks (Core NFC headers): the session begins, no tag is delivered",
            covers: "tag-discovery callbacks; whether the sheet still appears is assumed (it does here)")
        add(
            "nfc_availability", .text(availability.rawValue), availability.rawValue, .assumed,
            "begin() ends with 6 (radio disabled), 7 (ineligible) or 8 (access not accepted) when the phone is so; the codes are documented (Core NFC 26), when an iPhone raises them for a reader session is not",
            covers: "the codes' existence and names only")
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
