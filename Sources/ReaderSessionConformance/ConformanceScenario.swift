public import Foundation
import NFCFiles
public import NFCTags
public import ReaderSession

/// One conformance scenario: what the user does and which tags come and go, at virtual
/// instants, for how long. File format: `hardware/conformance/FORMAT.md`
/// (`"format": "nfcbench-conformance"`, version 1).
public struct ConformanceScenario: Sendable, Equatable {
    /// A user action the harness injects into the app.
    public enum UserAction: Sendable, Equatable {
        /// The user taps the app's Scan button, asking to read this many tags.
        case scan(ScanRequest)
        /// The user taps Done on the sheet (Core NFC: every active session ends with 200).
        case done
        /// The app leaves the foreground (home gesture, a call): active sessions end with 202.
        case background
        /// The app comes back to the foreground and is active (UIKit `willEnterForeground`
        /// when it was in the background, then `didBecomeActive`).
        case foreground
        /// The app stays in the foreground but is not active (a banner, Control Center):
        /// UIKit `willResignActive`; sessions go on.
        case inactive
        /// The user taps the newest background-read notification not yet tapped
        /// (`"user": "tap-notification"`): for the app's universal link the app comes to the
        /// foreground and gets the `NSUserActivity` (``ConformanceApp/continueUserActivity(_:)``).
        case tapNotification
    }

    /// What the system does on its own (a scripted ending, a policy change): first-class
    /// actions, named in `hardware/conformance/FORMAT.md`.
    public enum SystemAction: Sendable, Equatable {
        /// Every session of every app ends now with 202 (`"system": "terminate"`).
        case terminate
        /// The next `begin()` ends at once with 202 (`"system": "terminate-next-begin"`).
        case terminateNextBegin
        /// From now on a `begin()` while another session is active gets this policy
        /// (`"system": "busy-policy", "policy": "refuse"|"queue"`).
        case busyPolicy(ReaderSystemModel.BusyPolicy)
        /// This many field-seconds of heat reach the thermal model now, as if other work had
        /// kept the field on that long (`"system": "heat", "field_seconds": N`); enough of it
        /// makes the next `begin()` meet the model's refusal (203).
        case heat(fieldSeconds: Double)

        /// The action's name in the file format.
        public var name: String {
            switch self {
            case .terminate: "terminate"
            case .terminateNextBegin: "terminate-next-begin"
            case .busyPolicy: "busy-policy"
            case .heat: "heat"
            }
        }
    }

    /// A trace event some session of the app must show: `event` (the trace's name, e.g.
    /// `"queued"`, `"tagOperationEnded"`) and fields it must carry (`"code": 104`; hex
    /// fields `command`, `response` and `aid` match as prefixes).
    public struct ExpectedEvent: Sendable, Equatable, CustomStringConvertible {
        public enum Value: Sendable, Equatable {
            case int(Int64)
            case string(String)
            case bool(Bool)
        }
        public var event: String
        public var fields: [String: Value]
        public init(event: String, fields: [String: Value] = [:]) {
            self.event = event
            self.fields = fields
        }
        public var description: String {
            let f = fields.keys.sorted().map { k -> String in
                switch fields[k]! {
                case .int(let v): "\(k) \(v)"
                case .string(let v): "\(k) \(v)"
                case .bool(let v): "\(k) \(v)"
                }
            }
            return f.isEmpty ? event : "\(event) (\(f.joined(separator: ", ")))"
        }
    }

    /// What happens at a step.
    public enum Action: Sendable, Equatable {
        case user(UserAction)
        /// Another app begins a reader session that lasts this long (then invalidates it);
        /// while it is active a `begin()` of the app under test is refused with 203.
        case otherAppSession(Duration)
        /// Tags enter the field together: (tag reference, presentation name, extra faults).
        case present([(tag: String, name: String, faults: [TagFault])])
        /// A presentation leaves the field.
        case remove(String)
        /// The system acts on its own.
        case system(SystemAction)

        public static func == (a: Action, b: Action) -> Bool {
            switch (a, b) {
            case (.user(let x), .user(let y)): x == y
            case (.system(let x), .system(let y)): x == y
            case (.otherAppSession(let x), .otherAppSession(let y)): x == y
            case (.remove(let x), .remove(let y)): x == y
            case (.present(let x), .present(let y)):
                x.count == y.count
                    && zip(x, y).allSatisfy { $0.tag == $1.tag && $0.name == $1.name && $0.faults == $1.faults }
            default: false
            }
        }
    }

    /// When a step happens.
    public enum When: Sendable, Equatable {
        /// At this offset from the scenario's start.
        case at(Duration)
        /// This long after the app's latest session ended (waits for the end first; a
        /// session refused at `begin()` ends at once).
        case afterSessionEnd(Duration)
        /// This long after the previous step happened (`"after_ms"`; the first step: after
        /// the scenario's start).
        case afterPrevious(Duration)
    }

    public struct Step: Sendable, Equatable {
        public var when: When
        public var action: Action
        public init(when: When, action: Action) {
            self.when = when
            self.action = action
        }
    }

    /// The scenario's name (the file's stem unless the file says otherwise).
    public var name: String
    public var description: String
    /// Virtual time the scenario runs for, from its start.
    public var duration: Duration
    /// False: the thermal model is switched off (every limit 60 s).
    public var thermal: Bool
    public var steps: [Step]
    /// Endings (Core NFC codes) the app's sessions must reach, or the scenario did not test
    /// what it says and is reported inconclusive.
    public var expectEndings: [Int]
    /// True: some session must end through `invalidate(errorMessage:)`.
    public var expectErrorMessage: Bool
    /// Tag files by the names the steps use.
    public var tags: [String: TagFile]
    /// The busy policy the system starts with (`"busy"`); default `refuse` (203).
    public var busyPolicy: ReaderSystemModel.BusyPolicy
    /// The app's Info.plist `com.apple.developer.nfc.readersession.iso7816.select-identifiers`
    /// (`"select_identifiers"`, hex AIDs).
    public var selectIdentifiers: [String]
    /// Trace events the app's sessions must show, or the scenario is inconclusive.
    public var expectEvents: [ExpectedEvent]
    /// The app's entitlement formats (`"entitlement"`: `["NDEF", "TAG"]`, the default both),
    /// its Info.plist usage description (`"usage_description"`, default true) and the phone's
    /// NFC conditions (`"nfc"`: `available`, `radio-disabled`, `ineligible`,
    /// `access-not-accepted`): ``/ReaderSession/ReaderSystemModel``'s declaration inputs.
    public var readerSessionFormats: Set<ReaderSystemModel.ReaderSessionFormat> = [.ndef, .tag]
    public var hasUsageDescription = true
    public var availability = ReaderSystemModel.NFCAvailability.available
    /// The phone reads tags in the background while no reader session is in progress
    /// (`"background_reading"`, with the app's `"associated_domains"`); `nil`: it does not
    /// (the default, so scenarios written before it behave as they did).
    public var backgroundReading: BackgroundTagReading? = nil

    public init(
        name: String, description: String = "", duration: Duration, thermal: Bool = true, steps: [Step],
        expectEndings: [Int] = [], expectErrorMessage: Bool = false, tags: [String: TagFile] = [:],
        busyPolicy: ReaderSystemModel.BusyPolicy = .refuse, selectIdentifiers: [String] = [],
        expectEvents: [ExpectedEvent] = []
    ) {
        self.name = name
        self.description = description
        self.duration = duration
        self.thermal = thermal
        self.steps = steps
        self.expectEndings = expectEndings
        self.expectErrorMessage = expectErrorMessage
        self.tags = tags
        self.busyPolicy = busyPolicy
        self.selectIdentifiers = selectIdentifiers
        self.expectEvents = expectEvents
    }
}

extension ConformanceScenario {
    /// Parses a scenario file's JSON by the data files' rule (``/NFCTags/DataFile``): errors name
    /// `file` (default: `name`), the field path (`steps[2].at_ms`) or the line and column of
    /// a syntax error. `name` is used when the file has no `name`; `loadTag` turns a tag
    /// reference (a name in `hardware/tags/` or a path) into a tag file. A tag file's own
    /// error is thrown as it is (it names the tag file); a reference `loadTag` can't resolve
    /// is an error at the step that makes it.
    public init(
        json: Data, name defaultName: String, file: String? = nil, loadTag: (String) throws -> TagFile
    ) throws(DataFileError) {
        let file = file ?? defaultName
        let f = try DataFile.decode(ConformanceFile.self, from: json, file: file)
        var tags: [String: TagFile] = [:]
        for (ref, field) in f.tagReferences where tags[ref] == nil {
            do {
                tags[ref] = try loadTag(ref)
            } catch let error as DataFileError {
                guard error.file == nil else { throw error }
                var e = error
                e.file = file
                e.field = field
                throw e
            } catch {
                throw DataFileError(.invalidValue, file: file, field: field, "tag '\(ref)': \(error)")
            }
        }
        self.init(
            name: f.name ?? defaultName, description: f.description, duration: f.duration, thermal: f.thermal,
            steps: f.steps, expectEndings: f.expectEndings, expectErrorMessage: f.expectErrorMessage, tags: tags,
            busyPolicy: f.busyPolicy, selectIdentifiers: f.selectIdentifiers, expectEvents: f.expectEvents)
        readerSessionFormats = f.readerSessionFormats
        hasUsageDescription = f.hasUsageDescription
        availability = f.availability
        backgroundReading = f.backgroundReading
    }

    /// Loads every `*.json` in `directory`, sorted by file name. Tag references are looked
    /// up by `loadTag`. Throws the first malformed file's error; ``/NFCTags/DataFileError/Code/notFound``
    /// when the folder can't be listed or holds no scenario.
    public static func loadSuite(
        directory: String, loadTag: (String) throws -> TagFile
    ) throws(DataFileError) -> [ConformanceScenario] {
        let fm = FileManager.default
        var isFolder: ObjCBool = false
        guard fm.fileExists(atPath: directory, isDirectory: &isFolder), isFolder.boolValue else {
            throw DataFileError(.notFound, file: directory, "no such folder")
        }
        guard let names = try? fm.contentsOfDirectory(atPath: directory) else {
            throw DataFileError(.notFound, file: directory, "the folder cannot be read")
        }
        var out: [ConformanceScenario] = []
        for file in names.filter({ $0.hasSuffix(".json") }).sorted() {
            let path = directory + "/" + file
            out.append(
                try ConformanceScenario(
                    json: try DataFile.read(path), name: String(file.dropLast(5)), file: path, loadTag: loadTag))
        }
        guard !out.isEmpty else { throw DataFileError(.notFound, file: directory, "holds no *.json scenario") }
        return out
    }
}

/// A conformance scenario file as JSON holds it (`hardware/conformance/FORMAT.md`).
private struct ConformanceFile: Decodable {
    var name: String?
    var description: String
    var duration: Duration
    var thermal: Bool
    var steps: [ConformanceScenario.Step]
    /// Every tag reference with the field that first makes it (`steps[1].present`).
    var tagReferences: [(ref: String, field: String)] = []
    var expectEndings: [Int]
    var expectErrorMessage: Bool
    var busyPolicy: ReaderSystemModel.BusyPolicy
    var selectIdentifiers: [String]
    var expectEvents: [ConformanceScenario.ExpectedEvent]
    var readerSessionFormats: Set<ReaderSystemModel.ReaderSessionFormat>
    var hasUsageDescription: Bool
    var availability: ReaderSystemModel.NFCAvailability
    var backgroundReading: BackgroundTagReading?

    enum CodingKeys: String, CodingKey {
        case format, version, name, description, thermal, steps, busy, entitlement, nfc
        case backgroundReading = "background_reading"
        case associatedDomains = "associated_domains"
        case usageDescription = "usage_description"
        case durationMs = "duration_ms"
        case expectEndings = "expect_endings"
        case expectErrorMessage = "expect_error_message"
        case selectIdentifiers = "select_identifiers"
        case expectEvents = "expect_events"
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let format = try c.decode(String.self, forKey: .format)
        guard format == "nfcbench-conformance" else {
            throw c.dataError(.format, "\"\(format)\" is not \"nfcbench-conformance\"", code: .unrecognizedFormat)
        }
        let version = try c.decodeWholeNumber(.version, in: 0...Int(Int32.max))
        guard version == 1 else {
            throw c.dataError(.version, "format version \(version); this build reads 1", code: .unsupported)
        }
        name = try c.ifPresent(.name) { try c.decode(String.self, forKey: $0) }
        if name?.isEmpty == true { throw c.dataError(.name, "an empty name") }
        description = try c.ifPresent(.description) { try c.decode(String.self, forKey: $0) } ?? ""
        duration = try c.decodeMilliseconds(.durationMs, in: 0.001...1e9)
        thermal = try c.ifPresent(.thermal) { try c.decode(Bool.self, forKey: $0) } ?? true
        let raw = try c.decode([ConformanceStep].self, forKey: .steps)
        var last = Duration.zero
        var inField: Set<String> = []
        for (i, step) in raw.enumerated() {
            let at = c.codingPath + [CodingKeys.steps, DataFileKey(index: i)]
            if case .at(let t) = step.step.when {
                let here = at + [DataFileKey("at_ms")]
                guard t >= last else { throw DataFileError.decodingError(at: here, "steps must be in time order") }
                guard t <= duration else { throw DataFileError.decodingError(at: here, "after duration_ms") }
                last = t
            }
            switch step.step.action {
            case .present(let list):
                for (p, path) in zip(list, step.presentPaths) {
                    guard inField.insert(p.name).inserted else {
                        throw DataFileError.decodingError(at: at + path, "'\(p.name)' is already in the field")
                    }
                    if !tagReferences.contains(where: { $0.ref == p.tag }) {
                        tagReferences.append((p.tag, DataFileError.path(at + path)))
                    }
                }
            case .remove(let n):
                guard inField.remove(n) != nil else {
                    throw DataFileError.decodingError(at: at + [DataFileKey("remove")], "'\(n)' is not in the field")
                }
            default:
                break
            }
        }
        steps = raw.map(\.step)
        expectEndings =
            try c.ifPresent(.expectEndings) { try c.decode([EndingCode].self, forKey: $0) }?.map(\.code) ?? []
        expectErrorMessage = try c.ifPresent(.expectErrorMessage) { try c.decode(Bool.self, forKey: $0) } ?? false
        busyPolicy =
            try c.ifPresent(.busy) { try c.decodeChoice(ReaderSystemModel.BusyPolicy.self, forKey: $0) } ?? .refuse
        selectIdentifiers = try c.ifPresent(.selectIdentifiers) { try decodeAIDs(c, $0) } ?? []
        expectEvents =
            try c.ifPresent(.expectEvents) { try c.decode([ExpectedEventEntry].self, forKey: $0) }?.map(\.event) ?? []
        readerSessionFormats =
            try c.ifPresent(.entitlement) { key in
                Set(
                    try c.decode([String].self, forKey: key).map { word in
                        guard let f = ReaderSystemModel.ReaderSessionFormat(rawValue: word) else {
                            throw c.dataError(key, "expected NDEF or TAG, found \"\(word)\"")
                        }
                        return f
                    })
            } ?? [.ndef, .tag]
        hasUsageDescription = try c.ifPresent(.usageDescription) { try c.decode(Bool.self, forKey: $0) } ?? true
        availability =
            try c.ifPresent(.nfc) { try c.decodeChoice(ReaderSystemModel.NFCAvailability.self, forKey: $0) }
            ?? .available
        let domains = try c.ifPresent(.associatedDomains) { key in
            try c.decode([String].self, forKey: key).map { d in
                guard !d.isEmpty, !d.contains("/") else {
                    throw c.dataError(
                        key, "expected a domain such as \"example.com\" or \"*.example.com\", found \"\(d)\"")
                }
                return d
            }
        }
        backgroundReading = nil
        if c.contains(.backgroundReading) {
            if let on = try? c.decode(Bool.self, forKey: .backgroundReading) {
                backgroundReading = on ? BackgroundTagReading(associatedDomains: domains ?? []) : nil
            } else {
                var b = try c.decode(BackgroundReadingEntry.self, forKey: .backgroundReading).model
                b.associatedDomains = (domains ?? []).map(BackgroundTagReading.domain)
                backgroundReading = b
            }
        }
        if domains != nil && backgroundReading == nil {
            throw c.dataError(.associatedDomains, "only with \"background_reading\"")
        }
    }
}

/// `"background_reading"` as an object: the phone's conditions (FORMAT.md).
private struct BackgroundReadingEntry: Decodable {
    var model = BackgroundTagReading()

    enum CodingKeys: String, CodingKey {
        case supported, locked
        case unlockedSinceBoot = "unlocked_since_boot"
        case inUse = "in_use"
        case walletInUse = "wallet_in_use"
        case cameraInUse = "camera_in_use"
        case airplaneMode = "airplane_mode"
        case uriRecord = "uri_record"
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func flag(_ k: CodingKeys, _ v: inout Bool) throws {
            if let b = try c.ifPresent(k, { try c.decode(Bool.self, forKey: $0) }) { v = b }
        }
        try flag(.supported, &model.conditions.supported)
        try flag(.unlockedSinceBoot, &model.conditions.unlockedSinceBoot)
        try flag(.inUse, &model.conditions.inUse)
        try flag(.locked, &model.conditions.locked)
        try flag(.walletInUse, &model.conditions.walletInUse)
        try flag(.cameraInUse, &model.conditions.cameraInUse)
        try flag(.airplaneMode, &model.conditions.airplaneMode)
        if let r = try c.ifPresent(
            .uriRecord, { try c.decodeChoice(BackgroundTagReading.URIRecordRule.self, forKey: $0) })
        {
            model.uriRecordRule = r
        }
    }
}

/// A list of hex AIDs of 5 to 16 bytes (ISO/IEC 7816-4 §8.2.1.2), upper-cased.
private func decodeAIDs<K: CodingKey>(_ c: KeyedDecodingContainer<K>, _ key: K) throws -> [String] {
    var list = try c.nestedUnkeyedContainer(forKey: key)
    var out: [String] = []
    while !list.isAtEnd {
        let index = list.currentIndex
        let text = try list.decode(String.self)
        guard let b = [UInt8](hex: text), (5...16).contains(b.count) else {
            throw DataFileError.decodingError(
                at: c.codingPath + [key, DataFileKey(index: index)],
                "expected a hex AID of 5 to 16 bytes, found '\(text)'")
        }
        out.append(b.hexString())
    }
    return out
}

/// One of `expect_events`: `{"event": NAME, FIELD: VALUE…}`.
private struct ExpectedEventEntry: Decodable {
    var event: ConformanceScenario.ExpectedEvent

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: DataFileKey.self)
        let name = try c.decode(String.self, forKey: DataFileKey("event"))
        guard !name.isEmpty else { throw c.dataError(DataFileKey("event"), "an empty event name") }
        var fields: [String: ConformanceScenario.ExpectedEvent.Value] = [:]
        for key in c.allKeys where key.stringValue != "event" {
            if let b = try? c.decode(Bool.self, forKey: key) {
                fields[key.stringValue] = .bool(b)
            } else if let n = try? c.decode(Int64.self, forKey: key) {
                fields[key.stringValue] = .int(n)
            } else if let s = try? c.decode(String.self, forKey: key) {
                fields[key.stringValue] = .string(s)
            } else {
                throw c.dataError(key, "expected a string, a whole number or true/false")
            }
        }
        event = ConformanceScenario.ExpectedEvent(event: name, fields: fields)
    }
}

/// One step: exactly one time (`at_ms`, `after_end_ms`) and one action.
private struct ConformanceStep: Decodable {
    var step: ConformanceScenario.Step
    /// For a `present` step, each presentation's path below the step (`present[1].tag`).
    var presentPaths: [[any CodingKey]] = []

    enum CodingKeys: String, CodingKey {
        case user, present, remove, tags, faults, system, policy, session, commands
        case atMs = "at_ms"
        case afterEndMs = "after_end_ms"
        case afterMs = "after_ms"
        case fieldSeconds = "field_seconds"
        case otherAppSessionMs = "other_app_session_ms"
        case readWrite = "read_write"
        case as_ = "as"
        case iso7816SelectIdentifiers = "iso7816_select_identifiers"
        case readAll = "read_all"
        case commandIntervalMs = "command_interval_ms"
    }

    enum User: String, CaseIterable {
        case scan, done, background, foreground, inactive
        case tapNotification = "tap-notification"
    }

    enum System: String, CaseIterable {
        case terminate
        case terminateNextBegin = "terminate-next-begin"
        case busyPolicy = "busy-policy"
        case heat
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func exactlyOne(_ keys: [CodingKeys]) throws -> CodingKeys {
            let given = keys.filter(c.contains)
            guard given.count == 1 else {
                throw DataFileError.decodingError(
                    at: c.codingPath,
                    "needs exactly one of " + keys.map { "\"\($0.stringValue)\"" }.joined(separator: ", "))
            }
            return given[0]
        }
        let when: ConformanceScenario.When =
            switch try exactlyOne([.atMs, .afterEndMs, .afterMs]) {
            case .atMs: .at(try c.decodeMilliseconds(.atMs, in: 0...1e9))
            case .afterMs: .afterPrevious(try c.decodeMilliseconds(.afterMs, in: 0...1e9))
            default: .afterSessionEnd(try c.decodeMilliseconds(.afterEndMs, in: 0...1e9))
            }
        let actionKey = try exactlyOne([.user, .otherAppSessionMs, .present, .remove, .system])
        func onlyWith(_ keys: [CodingKeys], _ what: String) throws {
            if let key = keys.first(where: c.contains) { throw c.dataError(key, "only with \(what)") }
        }
        let isScan = try actionKey == .user && c.decode(String.self, forKey: .user) == User.scan.rawValue
        if !isScan {
            try onlyWith(
                [
                    .tags, .readWrite, .session, .commands, .iso7816SelectIdentifiers, .readAll, .commandIntervalMs,
                ], "\"user\": \"scan\"")
        }
        if actionKey != .system { try onlyWith([.policy], "\"system\": \"busy-policy\"") }
        if actionKey != .system { try onlyWith([.fieldSeconds], "\"system\": \"heat\"") }
        let action: ConformanceScenario.Action
        switch actionKey {
        case .user:
            switch try c.decodeChoice(User.self, forKey: .user) {
            case .scan:
                let count = try c.ifPresent(.tags) { try c.decodeWholeNumber($0, in: 1...100) } ?? 1
                let readWrite = try c.ifPresent(.readWrite) { try c.decode(Bool.self, forKey: $0) } ?? false
                var request = ScanRequest(tagCount: count, readWrite: readWrite || count > 1)
                try Self.scanOptions(c, &request)
                action = .user(.scan(request))
            case .done: action = .user(.done)
            case .background: action = .user(.background)
            case .foreground: action = .user(.foreground)
            case .inactive: action = .user(.inactive)
            case .tapNotification: action = .user(.tapNotification)
            }
        case .system:
            let system = try c.decodeChoice(System.self, forKey: .system)
            switch system {
            case .terminate, .terminateNextBegin:
                try onlyWith([.policy], "\"system\": \"busy-policy\"")
                try onlyWith([.fieldSeconds], "\"system\": \"heat\"")
                action = .system(system == .terminate ? .terminate : .terminateNextBegin)
            case .busyPolicy:
                try onlyWith([.fieldSeconds], "\"system\": \"heat\"")
                action = .system(.busyPolicy(try c.decodeChoice(ReaderSystemModel.BusyPolicy.self, forKey: .policy)))
            case .heat:
                try onlyWith([.policy], "\"system\": \"busy-policy\"")
                action = .system(.heat(fieldSeconds: try c.decodeNumber(.fieldSeconds, in: 0.001...1e6)))
            }
        case .otherAppSessionMs:
            action = .otherAppSession(try c.decodeMilliseconds(.otherAppSessionMs, in: 0.001...1e9))
        case .present:
            let isList = (try? c.nestedUnkeyedContainer(forKey: .present)) != nil
            let items =
                isList
                ? try c.decode([PresentItem].self, forKey: .present)
                : [try c.decode(PresentItem.self, forKey: .present)]
            guard !items.isEmpty else { throw c.dataError(.present, "names no tag") }
            var list: [(tag: String, name: String, faults: [TagFault])] = []
            for (j, item) in items.enumerated() {
                var name = item.as_ ?? item.tag
                var faults = item.faults
                var path: [any CodingKey] = [CodingKeys.present]
                if isList { path.append(DataFileKey(index: j)) }
                if item.isName && !isList {
                    name = try c.ifPresent(.as_) { try c.decode(String.self, forKey: $0) } ?? item.tag
                    if name.isEmpty { throw c.dataError(.as_, "an empty name") }
                    faults = try c.ifPresent(.faults) { try c.decode([TagFault].self, forKey: $0) } ?? []
                }
                if !item.isName { path.append(DataFileKey("tag")) }
                list.append((item.tag, name, faults))
                presentPaths.append(path)
            }
            if isList || !items[0].isName {
                try onlyWith([.as_, .faults], "\"present\": NAME (inside an object: {\"tag\": NAME, \"as\": …})")
            }
            action = .present(list)
        default:
            let n = try c.decode(String.self, forKey: .remove)
            guard !n.isEmpty else { throw c.dataError(.remove, "an empty name") }
            action = .remove(n)
        }
        if actionKey != .present { try onlyWith([.as_, .faults], "\"present\"") }
        step = ConformanceScenario.Step(when: when, action: action)
    }

    /// A Scan's options beyond `tags` and `read_write` (FORMAT.md): `session`, `commands`,
    /// `iso7816_select_identifiers`, `read_all`, `command_interval_ms`.
    static func scanOptions(_ c: KeyedDecodingContainer<CodingKeys>, _ request: inout ScanRequest) throws {
        if let s = try c.ifPresent(.session, { try c.decodeChoice(ScanRequest.Session.self, forKey: $0) }) {
            request.session = s
        }
        if c.contains(.commands) {
            var list = try c.nestedUnkeyedContainer(forKey: .commands)
            while !list.isAtEnd {
                let index = list.currentIndex
                let text = try list.decode(String.self)
                guard let b = [UInt8](hex: text), !b.isEmpty else {
                    throw DataFileError.decodingError(
                        at: c.codingPath + [CodingKeys.commands, DataFileKey(index: index)],
                        "expected a hex frame or APDU, found '\(text)'")
                }
                request.commands.append(b)
            }
            request.session = .tag
        }
        if c.contains(.iso7816SelectIdentifiers) {
            request.selectIdentifiers = try decodeAIDs(c, .iso7816SelectIdentifiers)
            request.session = .tag
        }
        request.readAll = try c.ifPresent(.readAll) { try c.decode(Bool.self, forKey: $0) } ?? false
        request.commandInterval =
            try c.ifPresent(.commandIntervalMs) { try c.decodeMilliseconds($0, in: 0...1e9) } ?? .zero
        if request.session == .tag { request.readWrite = true }
    }
}

/// `"present"`'s items: a tag name, or `{"tag": NAME, "as": NAME, "faults": [...]}`.
private struct PresentItem: Decodable {
    var tag: String
    var as_: String?
    var faults: [TagFault] = []
    var isName = false

    enum CodingKeys: String, CodingKey {
        case tag, faults
        case as_ = "as"
    }

    init(from decoder: any Decoder) throws {
        if let s = try? decoder.singleValueContainer().decode(String.self) {
            guard !s.isEmpty else { throw DataFileError.decodingError(at: decoder.codingPath, "an empty name") }
            tag = s
            isName = true
            return
        }
        guard let c = try? decoder.container(keyedBy: CodingKeys.self) else {
            throw DataFileError.decodingError(
                at: decoder.codingPath, "expected a tag name or {\"tag\": NAME, \"as\": NAME, \"faults\": [...]}")
        }
        tag = try c.decode(String.self, forKey: .tag)
        guard !tag.isEmpty else { throw c.dataError(.tag, "an empty name") }
        as_ = try c.ifPresent(.as_) { try c.decode(String.self, forKey: $0) }
        if as_?.isEmpty == true { throw c.dataError(.as_, "an empty name") }
        faults = try c.ifPresent(.faults) { try c.decode([TagFault].self, forKey: $0) } ?? []
    }
}

/// One of `expect_endings`: a Core NFC `NFCReaderError.Code` raw value.
private struct EndingCode: Decodable {
    var code: Int

    init(from decoder: any Decoder) throws {
        let v = try decoder.singleValueContainer().decode(Double.self)
        guard v == v.rounded(), abs(v) < 1e6, NFCReaderError.Code(rawValue: Int(v)) != nil else {
            let codes = NFCReaderError.Code.allCases.map { String($0.rawValue) }.joined(separator: ", ")
            throw DataFileError.decodingError(
                at: decoder.codingPath,
                "expected a Core NFC error code (\(codes)), found \(v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v))"
            )
        }
        code = Int(v)
    }
}

extension ConformanceScenario {
    /// Loads every `*.json` in `directory`, looking tag references up as paths or as
    /// names (with or without `.json`) in `tagDirectories`, in order.
    public static func loadSuite(directory: String, tagDirectories: [String]) throws(DataFileError)
        -> [ConformanceScenario]
    {
        try loadSuite(directory: directory) { ref in try loadTagFile(ref, in: tagDirectories) }
    }

    /// A tag file by path, or by name in the first of `directories` that has it; throws
    /// ``/NFCTags/DataFileError/Code/notFound`` (without a file: the reference is the caller's) when
    /// none has it, and the tag file's own error when it can't be read.
    public static func loadTagFile(_ ref: String, in directories: [String]) throws(DataFileError) -> TagFile {
        let fm = FileManager.default
        var candidates = ref.contains("/") ? [ref] : []
        for d in directories { candidates += ["\(d)/\(ref)", "\(d)/\(ref).json"] }
        for c in candidates {
            var isDir: ObjCBool = false
            if fm.fileExists(atPath: c, isDirectory: &isDir), !isDir.boolValue { return try TagFile.load(path: c) }
        }
        throw DataFileError(.notFound, "no tag file '\(ref)' in \(directories.joined(separator: ", "))")
    }
}
