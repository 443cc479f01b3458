public import Foundation
import NFCFiles
public import NFCTags

/// A simulated-reader scenario: when tags enter and leave the field, and which faults to
/// inject (the tag files' own ``/NFCTags/TagFault`` model: the same three kinds, counted the same
/// way). File format: `hardware/scenarios/FORMAT.md`.
public struct Scenario: Sendable, Equatable {
    public enum Action: Sendable, Equatable {
        /// A tag enters the field: the tag file reference, the presentation's name, faults.
        case present(tag: String, as: String, faults: [TagFault])
        /// The named presentation leaves the field.
        case remove(String)
    }

    public struct Step: Sendable, Equatable {
        /// Offset from the start of polling.
        public var at: Duration
        public var action: Action
        public init(at: Duration, action: Action) {
            self.at = at
            self.action = action
        }
    }

    public var description: String
    /// The reader name sessions lock (two processes on one reader name conflict).
    public var reader: String
    public var steps: [Step]
    /// When set, the steps start again this long after the last one.
    public var repeatEvery: Duration?

    public init(description: String = "", reader: String, steps: [Step], repeatEvery: Duration? = nil) {
        self.description = description
        self.reader = reader
        self.steps = steps
        self.repeatEvery = repeatEvery
    }

    /// Parses a scenario file's JSON by the data files' rule (``/NFCTags/DataFile``): errors name
    /// `file`, the field path (`steps[2].at_ms`) or the line and column of a syntax error.
    /// `defaultReader` names the reader when the file doesn't.
    public init(json: Data, file: String? = nil, defaultReader: String) throws(DataFileError) {
        let f = try DataFile.decode(ScenarioFile.self, from: json, file: file)
        self.init(
            description: f.description, reader: f.reader ?? defaultReader, steps: f.steps, repeatEvery: f.repeatEvery)
    }

    /// Reads and parses `path`; the reader is named after the file (without `.json`) unless
    /// the file says otherwise.
    public static func load(path: String) throws(DataFileError) -> Scenario {
        let stem = FilePath.stem(of: FilePath.lastComponent(of: path))
        return try Scenario(json: try DataFile.read(path), file: path, defaultReader: stem)
    }
}

/// A scenario file as JSON holds it (`hardware/scenarios/FORMAT.md`).
private struct ScenarioFile: Decodable {
    var description: String
    var reader: String?
    var steps: [Scenario.Step]
    var repeatEvery: Duration?

    enum CodingKeys: String, CodingKey {
        case format, version, description, reader, steps
        case repeatEvery = "repeat_every_ms"
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let format = try c.decode(String.self, forKey: .format)
        guard format == "nfcbench-scenario" else {
            throw c.dataError(.format, "\"\(format)\" is not \"nfcbench-scenario\"", code: .unrecognizedFormat)
        }
        let version = try c.decodeWholeNumber(.version, in: 0...Int(Int32.max))
        guard version == 1 else {
            throw c.dataError(.version, "format version \(version); this build reads 1", code: .unsupported)
        }
        description = try c.ifPresent(.description) { try c.decode(String.self, forKey: $0) } ?? ""
        reader = try c.ifPresent(.reader) { try c.decode(String.self, forKey: $0) }
        let raw = try c.decode([StepJSON].self, forKey: .steps)
        func fail(_ i: Int, _ key: String, _ reason: String) -> DecodingError {
            DataFileError.decodingError(
                at: c.codingPath + [CodingKeys.steps, DataFileKey(index: i), DataFileKey(key)], reason)
        }
        var inField: Set<String> = []
        var last = Duration.zero
        for (i, step) in raw.enumerated() {
            guard step.step.at >= last else { throw fail(i, "at_ms", "steps must be in time order") }
            last = step.step.at
            switch step.step.action {
            case .present(_, let name, _):
                guard inField.insert(name).inserted else {
                    throw fail(i, step.named ? "as" : "present", "'\(name)' is already in the field")
                }
            case .remove(let name):
                guard inField.remove(name) != nil else { throw fail(i, "remove", "'\(name)' is not in the field") }
            }
        }
        steps = raw.map(\.step)
        repeatEvery = try c.ifPresent(.repeatEvery) { try c.decodeMilliseconds($0, in: 0.001...1e12) }
    }
}

/// One step: `at_ms` and exactly one of `present` (with `as`, `faults`) or `remove`.
private struct StepJSON: Decodable {
    var step: Scenario.Step
    /// The presentation has an `as` name of its own.
    var named = false

    enum CodingKeys: String, CodingKey {
        case present, remove, faults
        case atMs = "at_ms"
        case as_ = "as"
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let at = try c.decodeMilliseconds(.atMs, in: 0...1e12)
        func name(_ key: CodingKeys) throws -> String {
            let s = try c.decode(String.self, forKey: key)
            guard !s.isEmpty else { throw c.dataError(key, "an empty name") }
            return s
        }
        switch (c.contains(.present), c.contains(.remove)) {
        case (true, false):
            let tag = try name(.present)
            named = c.contains(.as_)
            let as_ = try c.ifPresent(.as_) { try name($0) } ?? tag
            let faults = try c.ifPresent(.faults) { try c.decode([TagFault].self, forKey: $0) } ?? []
            step = Scenario.Step(at: at, action: .present(tag: tag, as: as_, faults: faults))
        case (false, true):
            if let key = [CodingKeys.as_, .faults].first(where: c.contains) {
                throw c.dataError(key, "only on a \"present\" step")
            }
            step = Scenario.Step(at: at, action: .remove(try name(.remove)))
        default:
            throw DataFileError.decodingError(at: c.codingPath, "needs exactly one of \"present\" or \"remove\"")
        }
    }
}
