public import Foundation
import NFCTags

/// A contactless reader as data: what it polls with, whether it reaches ISO-DEP, an
/// optional Apple ECP frame, and the APDUs it sends with their times. The file format
/// (JSON) is documented in `hardware/readers/FORMAT.md`.
public struct ReaderProfile: Sendable, Equatable {
    /// One command of the reader's sequence.
    public struct Step: Sendable, Equatable {
        /// When the reader sends it, from field on (µs). A reader still waiting for the
        /// previous answer sends it right after that answer.
        public var offset: Duration
        /// The command APDU (ISO/IEC 7816-4), without ISO-DEP framing.
        public var apdu: [UInt8]
        /// Status words that count as success (`"9000"`, `"61XX"`: X = any nibble);
        /// empty: any answer is fine.
        public var expectedStatusWords: [String]
        /// Stop the sequence (field off) when the answer is not expected or missing.
        public var stopOnFailure: Bool
        /// What the step is ("SELECT PPSE").
        public var note: String?

        public init(
            offset: Duration, apdu: [UInt8], expectedStatusWords: [String] = [],
            stopOnFailure: Bool = false, note: String? = nil
        ) {
            self.offset = offset
            self.apdu = apdu
            self.expectedStatusWords = expectedStatusWords
            self.stopOnFailure = stopOnFailure
            self.note = note
        }

        /// True when `response`'s status word (last two bytes) is one of the expected.
        public func accepts(_ response: [UInt8]?) -> Bool {
            guard let response else { return false }
            if expectedStatusWords.isEmpty { return true }
            guard response.count >= 2 else { return false }
            let sw = Array(response.suffix(2)).hexString()
            return expectedStatusWords.contains { pattern in
                let p = Array(pattern.uppercased().utf8)
                let s = Array(sw.utf8)
                return p.count == 4 && zip(p, s).allSatisfy { $0 == UInt8(ascii: "X") || $0 == $1 }
            }
        }
    }

    public var name: String
    /// payment, vas, tag, transit, access, hotel, car, imported, …
    public var category: String
    public var description: String
    public var technology: ReaderTechnology
    /// Whether the reader activates ISO-DEP (ISO/IEC 14443-4). False: it wakes the phone
    /// and never sends an APDU (MIFARE Classic doors, Type 2 readers, FeliCa).
    public var reachesISODEP: Bool
    /// Apple ECP frame carried in the polling loop, without CRC.
    public var ecp: [UInt8]?
    /// RATS and ATS seen in a trace (informational).
    public var rats: [UInt8]?
    public var ats: [UInt8]?
    /// ISO-DEP activation time from field on.
    public var activationOffset: Duration
    public var steps: [Step]
    /// Field off, from field on (at least after the last answer).
    public var fieldOffOffset: Duration
    /// Where the facts come from (spec and section, URL, trace file).
    public var source: String
    public var note: String?

    public init(
        name: String, category: String, description: String = "", technology: ReaderTechnology,
        reachesISODEP: Bool, ecp: [UInt8]? = nil, rats: [UInt8]? = nil, ats: [UInt8]? = nil,
        activationOffset: Duration, steps: [Step], fieldOffOffset: Duration,
        source: String, note: String? = nil
    ) {
        self.name = name
        self.category = category
        self.description = description
        self.technology = technology
        self.reachesISODEP = reachesISODEP
        self.ecp = ecp
        self.rats = rats
        self.ats = ats
        self.activationOffset = activationOffset
        self.steps = steps
        self.fieldOffOffset = fieldOffOffset
        self.source = source
        self.note = note
    }
}

/// Why a profile file was refused; `path` is the JSON path of the bad field.
public struct ReaderProfileError: Error, Equatable, CustomStringConvertible {
    public var file: String
    public var path: String
    public var reason: String
    public init(file: String, path: String, reason: String) {
        self.file = file
        self.path = path
        self.reason = reason
    }
    public var description: String { "\(file): \(path): \(reason)" }
}

extension ReaderProfile {
    /// The format tag every profile file carries in `"format"`.
    public static let formatTag = "nfcbench-reader-profile/1"

    /// Parses one profile file (`hardware/readers/FORMAT.md`). Throws ``ReaderProfileError``.
    public init(json data: Data, file: String = "profile") throws(ReaderProfileError) {
        func fail(_ path: String, _ reason: String) -> ReaderProfileError {
            ReaderProfileError(file: file, path: path, reason: reason)
        }
        guard let any = try? JSONSerialization.jsonObject(with: data), let o = any as? [String: Any] else {
            throw fail("$", "not a JSON object")
        }
        guard (o["format"] as? String) == Self.formatTag else {
            throw fail("$.format", "must be \"\(Self.formatTag)\"")
        }
        func string(_ key: String, in obj: [String: Any], at path: String, required: Bool = true)
            throws(ReaderProfileError) -> String?
        {
            guard let v = obj[key] else {
                if required { throw fail("\(path).\(key)", "missing") }
                return nil
            }
            guard let s = v as? String else { throw fail("\(path).\(key)", "must be a string") }
            return s
        }
        func hex(_ key: String, in obj: [String: Any], at path: String, required: Bool) throws(ReaderProfileError)
            -> [UInt8]?
        {
            guard let s = try string(key, in: obj, at: path, required: required) else { return nil }
            guard let b = [UInt8](hex: s) else { throw fail("\(path).\(key)", "'\(s)' is not hex") }
            return b
        }
        func time(_ obj: [String: Any], base: String, at path: String, required: Bool) throws(ReaderProfileError)
            -> Duration?
        {
            if let v = obj[base + "_us"] {
                guard let n = v as? NSNumber, n.doubleValue >= 0, n.doubleValue <= 1e15,
                    n.doubleValue.rounded() == n.doubleValue
                else {
                    throw fail("\(path).\(base)_us", "must be a whole number of µs from 0 to 10^15")
                }
                return .microseconds(n.int64Value)
            }
            if let v = obj[base + "_ms"] {
                guard let n = v as? NSNumber, n.doubleValue >= 0, n.doubleValue <= 1e12 else {
                    throw fail("\(path).\(base)_ms", "must be a number of ms from 0 to 10^12")
                }
                return .microseconds(Int64((n.doubleValue * 1000).rounded()))
            }
            if required { throw fail("\(path).\(base)_us", "missing (or \(base)_ms)") }
            return nil
        }
        func bool(_ key: String, in obj: [String: Any], at path: String, default d: Bool? = nil)
            throws(ReaderProfileError) -> Bool
        {
            guard let v = obj[key] else {
                if let d { return d }
                throw fail("\(path).\(key)", "missing")
            }
            guard let n = v as? NSNumber, ["c", "B"].contains(String(cString: n.objCType)) else {
                throw fail("\(path).\(key)", "must be true or false")
            }
            return n.boolValue
        }

        let name = try string("name", in: o, at: "$")!
        guard !name.isEmpty else { throw fail("$.name", "empty") }
        let techText = try string("technology", in: o, at: "$")!
        guard let tech = ReaderTechnology(rawValue: techText) else {
            throw fail("$.technology", "'\(techText)' is not one of ISO14443A, ISO14443B, FeliCa")
        }
        let isoDep = try bool("iso_dep", in: o, at: "$")
        if isoDep && !tech.supportsISODEP { throw fail("$.iso_dep", "FeliCa has no ISO-DEP") }
        let ecp = try hex("ecp", in: o, at: "$", required: false)
        if let ecp, ecp.first != 0x6A || ecp.count < 2 {
            throw fail("$.ecp", "an ECP frame starts with 6A and a version byte")
        }
        var steps: [Step] = []
        if let rawSteps = o["steps"] {
            guard let arr = rawSteps as? [Any] else { throw fail("$.steps", "must be an array") }
            for (i, raw) in arr.enumerated() {
                let p = "$.steps[\(i)]"
                guard let so = raw as? [String: Any] else { throw fail(p, "must be an object") }
                let at = try time(so, base: "t", at: p, required: true)!
                let apdu = try hex("apdu", in: so, at: p, required: true)!
                guard apdu.count >= 4 else { throw fail("\(p).apdu", "a command APDU has at least 4 bytes") }
                var expect: [String] = []
                if let e = so["expect_sw"] {
                    let list: [Any] = (e as? [Any]) ?? [e]
                    for (j, item) in list.enumerated() {
                        guard let s = item as? String, s.count == 4,
                            s.uppercased().allSatisfy({ $0.isHexDigit || $0 == "X" })
                        else {
                            throw fail("\(p).expect_sw[\(j)]", "a status word is 4 hex digits (X = any)")
                        }
                        expect.append(s.uppercased())
                    }
                }
                let stop = try bool("stop_on_failure", in: so, at: p, default: false)
                let note = try string("note", in: so, at: p, required: false)
                if let prev = steps.last, at < prev.offset { throw fail("\(p).t_us", "earlier than the step before") }
                steps.append(Step(offset: at, apdu: apdu, expectedStatusWords: expect, stopOnFailure: stop, note: note))
            }
        }
        if !isoDep && !steps.isEmpty { throw fail("$.steps", "a reader without ISO-DEP sends no APDU") }
        let activation = try time(o, base: "activation", at: "$", required: isoDep) ?? .zero
        let fieldOff = try time(o, base: "field_off", at: "$", required: true)!
        if let last = steps.last, fieldOff < last.offset { throw fail("$.field_off_us", "before the last step") }
        if let first = steps.first, first.offset < activation { throw fail("$.steps[0].t_us", "before activation") }
        let source = try string("source", in: o, at: "$")!
        self.init(
            name: name, category: try string("category", in: o, at: "$")!,
            description: try string("description", in: o, at: "$", required: false) ?? "",
            technology: tech, reachesISODEP: isoDep, ecp: ecp,
            rats: try hex("rats", in: o, at: "$", required: false),
            ats: try hex("ats", in: o, at: "$", required: false),
            activationOffset: activation, steps: steps, fieldOffOffset: fieldOff,
            source: source, note: try string("note", in: o, at: "$", required: false))
    }

    /// The profile as a JSON file (keys in the documented order, 2-space indent).
    public func jsonText() -> String {
        func q(_ s: String) -> String {
            let d = try? JSONSerialization.data(
                withJSONObject: s, options: [.fragmentsAllowed, .withoutEscapingSlashes])
            return d.flatMap { String(data: $0, encoding: .utf8) } ?? "\"\""
        }
        var lines: [String] = []
        lines.append("  \"format\": \(q(Self.formatTag))")
        lines.append("  \"name\": \(q(name))")
        lines.append("  \"category\": \(q(category))")
        if !description.isEmpty { lines.append("  \"description\": \(q(description))") }
        lines.append("  \"technology\": \(q(technology.rawValue))")
        lines.append("  \"iso_dep\": \(reachesISODEP)")
        if let ecp { lines.append("  \"ecp\": \(q(ecp.hexString()))") }
        if let rats { lines.append("  \"rats\": \(q(rats.hexString()))") }
        if let ats { lines.append("  \"ats\": \(q(ats.hexString()))") }
        if reachesISODEP { lines.append("  \"activation_us\": \(activationOffset.wholeMicroseconds)") }
        var stepLines: [String] = []
        for s in steps {
            var f = ["\"t_us\": \(s.offset.wholeMicroseconds)", "\"apdu\": \(q(s.apdu.hexString()))"]
            if !s.expectedStatusWords.isEmpty {
                f.append("\"expect_sw\": [" + s.expectedStatusWords.map(q).joined(separator: ", ") + "]")
            }
            f.append("\"stop_on_failure\": \(s.stopOnFailure)")
            if let n = s.note { f.append("\"note\": \(q(n))") }
            stepLines.append("    {" + f.joined(separator: ", ") + "}")
        }
        lines.append("  \"steps\": [" + (stepLines.isEmpty ? "]" : "\n" + stepLines.joined(separator: ",\n") + "\n  ]"))
        lines.append("  \"field_off_us\": \(fieldOffOffset.wholeMicroseconds)")
        lines.append("  \"source\": \(q(source))")
        if let note { lines.append("  \"note\": \(q(note))") }
        return "{\n" + lines.joined(separator: ",\n") + "\n}\n"
    }
}
