public import Foundation
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

        /// The action's name in the file format.
        public var name: String {
            switch self {
            case .terminate: "terminate"
            case .terminateNextBegin: "terminate-next-begin"
            case .busyPolicy: "busy-policy"
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

/// A malformed conformance scenario: the file, the field and why.
public struct ConformanceFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var field: String
    public var reason: String
    public init(file: String, field: String, reason: String) {
        self.file = file
        self.field = field
        self.reason = reason
    }
    public var description: String { "\(file): \(field): \(reason)" }
}

extension ConformanceScenario {
    /// Parses a scenario file's JSON. `name` is used when the file has no `name`;
    /// `loadTag` turns a tag reference (a name in `hardware/tags/` or a path) into a tag file.
    public init(
        json: Data, name defaultName: String, loadTag: (String) throws -> TagFile
    ) throws(ConformanceFormatError) {
        func fail(_ field: String, _ reason: String) -> ConformanceFormatError {
            ConformanceFormatError(file: defaultName, field: field, reason: reason)
        }
        func milliseconds(_ v: Any?, _ field: String) throws(ConformanceFormatError) -> Duration {
            guard let n = v as? NSNumber, !isBoolean(n), n.doubleValue >= 0, n.doubleValue.isFinite, n.doubleValue < 1e9
            else {
                throw fail(field, "a number of milliseconds ≥ 0")
            }
            return .microseconds(Int64((n.doubleValue * 1000).rounded()))
        }
        guard let any = try? JSONSerialization.jsonObject(with: json), let top = any as? [String: Any] else {
            throw fail("(file)", "not a JSON object")
        }
        guard top["format"] as? String == "nfcbench-conformance" else {
            throw fail("format", "must be \"nfcbench-conformance\"")
        }
        guard let v = top["version"] as? NSNumber, v.intValue == 1 else { throw fail("version", "must be 1") }
        let name = (top["name"] as? String) ?? defaultName
        let duration = try milliseconds(top["duration_ms"], "duration_ms")
        guard duration > .zero else { throw fail("duration_ms", "must be > 0") }
        var thermal = true
        if let t = top["thermal"] {
            guard let n = t as? NSNumber, isBoolean(n) else { throw fail("thermal", "true or false") }
            let b = n.boolValue
            thermal = b
        }
        var busy = ReaderSystemModel.BusyPolicy.refuse
        if let b = top["busy"] {
            guard let t = b as? String, let p = ReaderSystemModel.BusyPolicy(rawValue: t) else {
                throw fail("busy", "\"refuse\" or \"queue\"")
            }
            busy = p
        }
        let selectIdentifiers = try Self.aids(top["select_identifiers"], "select_identifiers", fail)
        guard let rawSteps = top["steps"] as? [Any] else { throw fail("steps", "missing or not a list") }
        var steps: [Step] = []
        var tagRefs: Set<String> = []
        var last = Duration.zero
        var inField: Set<String> = []
        for (i, raw) in rawSteps.enumerated() {
            let f = "steps[\(i)]"
            guard let s = raw as? [String: Any] else { throw fail(f, "not an object") }
            let when: When
            switch (s["at_ms"], s["after_end_ms"]) {
            case (let a?, nil):
                let at = try milliseconds(a, "\(f).at_ms")
                guard at >= last else { throw fail("\(f).at_ms", "steps must be in time order") }
                guard at <= duration else { throw fail("\(f).at_ms", "after duration_ms") }
                last = at
                when = .at(at)
            case (nil, let a?):
                when = .afterSessionEnd(try milliseconds(a, "\(f).after_end_ms"))
            default:
                throw fail(f, "needs exactly one of \"at_ms\" or \"after_end_ms\"")
            }
            let keys = ["user", "other_app_session_ms", "present", "remove", "system"].filter { s[$0] != nil }
            guard keys.count == 1 else {
                throw fail(
                    f, "needs exactly one of \"user\", \"other_app_session_ms\", \"present\", \"remove\", \"system\"")
            }
            let action: Action
            switch keys[0] {
            case "user":
                switch s["user"] as? String {
                case "scan":
                    let count = (s["tags"] as? NSNumber)?.intValue ?? 1
                    guard count >= 1, count <= 100 else { throw fail("\(f).tags", "a number of tags from 1 to 100") }
                    var readWrite = count > 1
                    if let rw = s["read_write"] {
                        guard let n = rw as? NSNumber, isBoolean(n) else {
                            throw fail("\(f).read_write", "true or false")
                        }
                        let b = n.boolValue
                        readWrite = b || count > 1
                    }
                    var request = ScanRequest(tagCount: count, readWrite: readWrite)
                    try Self.scanOptions(s, f, &request, fail)
                    action = .user(.scan(request))
                case "done": action = .user(.done)
                case "background": action = .user(.background)
                case "foreground": action = .user(.foreground)
                case "inactive": action = .user(.inactive)
                default: throw fail("\(f).user", "one of scan, done, background, foreground, inactive")
                }
            case "system":
                switch s["system"] as? String {
                case "terminate": action = .system(.terminate)
                case "terminate-next-begin": action = .system(.terminateNextBegin)
                case "busy-policy":
                    guard let t = s["policy"] as? String, let p = ReaderSystemModel.BusyPolicy(rawValue: t) else {
                        throw fail("\(f).policy", "\"refuse\" or \"queue\"")
                    }
                    action = .system(.busyPolicy(p))
                default: throw fail("\(f).system", "one of terminate, terminate-next-begin, busy-policy")
                }
            case "other_app_session_ms":
                let d = try milliseconds(s["other_app_session_ms"], "\(f).other_app_session_ms")
                guard d > .zero else { throw fail("\(f).other_app_session_ms", "must be > 0") }
                action = .otherAppSession(d)
            case "present":
                var list: [(tag: String, name: String, faults: [TagFault])] = []
                let items: [Any] = (s["present"] as? [Any]) ?? [s["present"] as Any]
                for (j, item) in items.enumerated() {
                    let g = items.count == 1 && !(s["present"] is [Any]) ? "\(f).present" : "\(f).present[\(j)]"
                    var tag: String
                    var as_: String?
                    var rawFaults: [Any] = []
                    if let t = item as? String {
                        tag = t
                        as_ = items.count == 1 ? s["as"] as? String : nil
                        rawFaults = items.count == 1 ? (s["faults"] as? [Any] ?? []) : []
                    } else if let o = item as? [String: Any], let t = o["tag"] as? String {
                        tag = t
                        as_ = o["as"] as? String
                        rawFaults = o["faults"] as? [Any] ?? []
                    } else {
                        throw fail(g, "a tag name, or {\"tag\": NAME, \"as\": NAME, \"faults\": [...]}")
                    }
                    let name = as_ ?? tag
                    guard !inField.contains(name) else { throw fail(g, "'\(name)' is already in the field") }
                    inField.insert(name)
                    var faults: [TagFault] = []
                    for (k, rf) in rawFaults.enumerated() {
                        switch TagFault.fromJSONObject(rf) {
                        case .success(let fault): faults.append(fault)
                        case .failure(let e):
                            throw fail("\(g).faults[\(k)]" + (e.field.isEmpty ? "" : "." + e.field), e.reason)
                        }
                    }
                    tagRefs.insert(tag)
                    list.append((tag, name, faults))
                }
                guard !list.isEmpty else { throw fail("\(f).present", "names no tag") }
                action = .present(list)
            default:
                guard let n = s["remove"] as? String else { throw fail("\(f).remove", "a presentation name") }
                guard inField.remove(n) != nil else { throw fail("\(f).remove", "'\(n)' is not in the field") }
                action = .remove(n)
            }
            steps.append(Step(when: when, action: action))
        }
        var endings: [Int] = []
        for (i, e) in ((top["expect_endings"] as? [Any]) ?? []).enumerated() {
            guard let n = e as? NSNumber, !isBoolean(n) else {
                throw fail("expect_endings[\(i)]", "a Core NFC error code, e.g. 201")
            }
            endings.append(n.intValue)
        }
        var expectEvents: [ExpectedEvent] = []
        for (i, e) in ((top["expect_events"] as? [Any]) ?? []).enumerated() {
            let g = "expect_events[\(i)]"
            guard let o = e as? [String: Any], let name = o["event"] as? String, !name.isEmpty else {
                throw fail(g, "an object with \"event\": NAME and fields to match, e.g. {\"event\": \"queued\"}")
            }
            var fields: [String: ExpectedEvent.Value] = [:]
            for (k, v) in o where k != "event" {
                if let t = v as? String {
                    fields[k] = .string(t)
                } else if let n = v as? NSNumber {
                    fields[k] = isBoolean(n) ? .bool(n.boolValue) : .int(n.int64Value)
                } else {
                    throw fail("\(g).\(k)", "a string, a number or true/false")
                }
            }
            expectEvents.append(ExpectedEvent(event: name, fields: fields))
        }
        var tags: [String: TagFile] = [:]
        for ref in tagRefs.sorted() {
            do { tags[ref] = try loadTag(ref) } catch { throw fail("present", "tag '\(ref)': \(error)") }
        }
        self.init(
            name: name, description: top["description"] as? String ?? "", duration: duration, thermal: thermal,
            steps: steps,
            expectEndings: endings, expectErrorMessage: top["expect_error_message"] as? Bool ?? false, tags: tags,
            busyPolicy: busy, selectIdentifiers: selectIdentifiers, expectEvents: expectEvents)
    }

    /// A list of hex AIDs (5 to 16 bytes, ISO/IEC 7816-4 §8.2.1.2), upper-cased; `[]` when absent.
    private static func aids(
        _ v: Any?, _ field: String, _ fail: (String, String) -> ConformanceFormatError
    ) throws(ConformanceFormatError) -> [String] {
        guard let v else { return [] }
        guard let list = v as? [Any] else { throw fail(field, "a list of hex AIDs") }
        var out: [String] = []
        for (i, item) in list.enumerated() {
            guard let t = item as? String, let b = [UInt8](hex: t), (5...16).contains(b.count) else {
                throw fail("\(field)[\(i)]", "a hex AID of 5 to 16 bytes")
            }
            out.append(t.uppercased())
        }
        return out
    }

    /// A Scan's options beyond `tags` and `read_write` (see FORMAT.md).
    private static func scanOptions(
        _ s: [String: Any], _ f: String, _ request: inout ScanRequest,
        _ fail: (String, String) -> ConformanceFormatError
    ) throws(ConformanceFormatError) {
        if let v = s["session"] {
            switch v as? String {
            case "ndef": request.session = .ndef
            case "tag": request.session = .tag
            default: throw fail("\(f).session", "\"ndef\" or \"tag\"")
            }
        }
        if let v = s["commands"] {
            guard let list = v as? [Any] else { throw fail("\(f).commands", "a list of hex frames") }
            for (i, item) in list.enumerated() {
                guard let t = item as? String, let b = [UInt8](hex: t), !b.isEmpty else {
                    throw fail("\(f).commands[\(i)]", "a hex frame or APDU")
                }
                request.commands.append(b)
            }
            request.session = .tag
        }
        if s["iso7816_select_identifiers"] != nil {
            request.selectIdentifiers = try aids(
                s["iso7816_select_identifiers"], "\(f).iso7816_select_identifiers", fail)
            request.session = .tag
        }
        if let v = s["read_all"] {
            guard let n = v as? NSNumber, isBoolean(n) else { throw fail("\(f).read_all", "true or false") }
            request.readAll = n.boolValue
        }
        if let v = s["command_interval_ms"] {
            guard let n = v as? NSNumber, !isBoolean(n), n.doubleValue >= 0, n.doubleValue < 1e9 else {
                throw fail("\(f).command_interval_ms", "a number of milliseconds ≥ 0")
            }
            request.commandInterval = .microseconds(Int64((n.doubleValue * 1000).rounded()))
        }
        if request.session == .tag { request.readWrite = true }
    }

    /// Loads every `*.json` in `directory`, sorted by file name. Tag references are looked
    /// up by `loadTag`. Throws the first malformed file's error.
    public static func loadSuite(
        directory: String, loadTag: (String) throws -> TagFile
    ) throws(ConformanceFormatError) -> [ConformanceScenario] {
        let fm = FileManager.default
        guard let names = try? fm.contentsOfDirectory(atPath: directory) else {
            throw ConformanceFormatError(file: directory, field: "(folder)", reason: "cannot be read")
        }
        var out: [ConformanceScenario] = []
        for file in names.filter({ $0.hasSuffix(".json") }).sorted() {
            let stem = String(file.dropLast(5))
            guard let data = fm.contents(atPath: directory + "/" + file) else {
                throw ConformanceFormatError(file: file, field: "(file)", reason: "cannot be read")
            }
            out.append(try ConformanceScenario(json: data, name: stem, loadTag: loadTag))
        }
        guard !out.isEmpty else {
            throw ConformanceFormatError(file: directory, field: "(folder)", reason: "holds no *.json scenario")
        }
        return out
    }
}

/// JSON `true`/`false` as Foundation parses them (an NSNumber of type `c`), not 0 or 1.
private func isBoolean(_ n: NSNumber) -> Bool { String(cString: n.objCType) == "c" }

extension ConformanceScenario {
    /// Loads every `*.json` in `directory`, looking tag references up as paths or as
    /// names (with or without `.json`) in `tagDirectories`, in order.
    public static func loadSuite(directory: String, tagDirectories: [String]) throws(ConformanceFormatError)
        -> [ConformanceScenario]
    {
        try loadSuite(directory: directory) { ref in try loadTagFile(ref, in: tagDirectories) }
    }

    /// A tag file by path, or by name in the first of `directories` that has it.
    public static func loadTagFile(_ ref: String, in directories: [String]) throws -> TagFile {
        let fm = FileManager.default
        var candidates = ref.contains("/") ? [ref] : []
        for d in directories { candidates += ["\(d)/\(ref)", "\(d)/\(ref).json"] }
        for c in candidates {
            var isDir: ObjCBool = false
            if fm.fileExists(atPath: c, isDirectory: &isDir), !isDir.boolValue { return try TagFile.load(path: c) }
        }
        throw TagFileError(.io, "no tag file '\(ref)' in \(directories.joined(separator: ", "))")
    }
}
