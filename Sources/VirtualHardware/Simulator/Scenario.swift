public import Foundation
public import NFCTags

/// A simulated-reader scenario: when tags enter and leave the field, and which faults to
/// inject (the tag files' own ``TagFault`` model: the same three kinds, counted the same
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

    /// A malformed scenario file: which field, and why.
    public struct FormatError: Error, Equatable, CustomStringConvertible {
        public var field: String
        public var reason: String
        public var description: String { "\(field): \(reason)" }
    }

    /// Parses a scenario file's JSON. `defaultReader` names the reader when the file doesn't.
    public init(json: Data, defaultReader: String) throws(FormatError) {
        func fail(_ field: String, _ reason: String) -> FormatError { FormatError(field: field, reason: reason) }
        guard let any = try? JSONSerialization.jsonObject(with: json), let top = any as? [String: Any] else {
            throw fail("(file)", "not a JSON object")
        }
        guard top["format"] as? String == "nfcbench-scenario" else {
            throw fail("format", "must be \"nfcbench-scenario\"")
        }
        guard (top["version"] as? NSNumber)?.intValue == 1 else { throw fail("version", "must be 1") }
        guard let rawSteps = top["steps"] as? [Any] else { throw fail("steps", "missing or not a list") }
        var steps: [Step] = []
        var inField: Set<String> = []
        var last = Duration.zero
        for (i, raw) in rawSteps.enumerated() {
            let f = "steps[\(i)]"
            guard let s = raw as? [String: Any] else { throw fail(f, "not an object") }
            guard let ms = (s["at_ms"] as? NSNumber)?.doubleValue, ms >= 0, ms <= 1e12 else {
                throw fail("\(f).at_ms", "missing, negative or beyond 10^12 ms")
            }
            let at = Duration.microseconds(Int64(ms * 1000))
            guard at >= last else { throw fail("\(f).at_ms", "steps must be in time order") }
            last = at
            switch (s["present"] as? String, s["remove"] as? String) {
            case (let tag?, nil):
                let name = s["as"] as? String ?? tag
                guard !inField.contains(name) else { throw fail("\(f).as", "'\(name)' is already in the field") }
                inField.insert(name)
                var faults: [TagFault] = []
                for (j, rf) in ((s["faults"] as? [Any]) ?? []).enumerated() {
                    switch TagFault.fromJSONObject(rf) {
                    case .success(let fault): faults.append(fault)
                    case .failure(let e):
                        throw fail("\(f).faults[\(j)]" + (e.field.isEmpty ? "" : "." + e.field), e.reason)
                    }
                }
                steps.append(Step(at: at, action: .present(tag: tag, as: name, faults: faults)))
            case (nil, let name?):
                guard inField.remove(name) != nil else { throw fail("\(f).remove", "'\(name)' is not in the field") }
                steps.append(Step(at: at, action: .remove(name)))
            default:
                throw fail(f, "needs exactly one of \"present\" or \"remove\"")
            }
        }
        var repeatEvery: Duration? = nil
        if let r = top["repeat_every_ms"] {
            guard let ms = (r as? NSNumber)?.doubleValue, ms > 0, ms <= 1e12 else {
                throw fail("repeat_every_ms", "must be > 0 and ≤ 10^12")
            }
            repeatEvery = .microseconds(Int64(ms * 1000))
        }
        self.init(
            description: top["description"] as? String ?? "",
            reader: top["reader"] as? String ?? defaultReader, steps: steps, repeatEvery: repeatEvery)
    }
}
