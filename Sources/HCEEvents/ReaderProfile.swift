public import Foundation
public import NFCTags

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

extension ReaderProfile {
    /// The format tag every profile file carries in `"format"`.
    public static let formatTag = "nfcbench-reader-profile/1"

    /// Parses one profile file (`hardware/readers/FORMAT.md`) by the data files' rule
    /// (``/NFCTags/DataFile``): errors name `file`, the field path (`steps[2].apdu`) or the line and
    /// column of a syntax error.
    public init(json data: Data, file: String = "profile") throws(DataFileError) {
        self = try DataFile.decode(ProfileFile.self, from: data, file: file).profile
    }
}

/// A profile file as JSON holds it.
private struct ProfileFile: Decodable {
    var profile: ReaderProfile

    enum CodingKeys: String, CodingKey {
        case format, name, category, description, technology, ecp, rats, ats, steps, source, note
        case isoDep = "iso_dep"
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let format = try c.decode(String.self, forKey: .format)
        guard format == ReaderProfile.formatTag else {
            throw c.dataError(
                .format, "\"\(format)\" is not \"\(ReaderProfile.formatTag)\"", code: .unrecognizedFormat)
        }
        let name = try c.decode(String.self, forKey: .name)
        guard !name.isEmpty else { throw c.dataError(.name, "an empty name") }
        let tech = try c.decodeChoice(ReaderTechnology.self, forKey: .technology)
        let isoDep = try c.decode(Bool.self, forKey: .isoDep)
        if isoDep && !tech.supportsISODEP { throw c.dataError(.isoDep, "FeliCa has no ISO-DEP") }
        let ecp = try c.ifPresent(.ecp) { try c.decodeHex($0) }
        if let ecp, ecp.first != 0x6A || ecp.count < 2 {
            throw c.dataError(.ecp, "an ECP frame starts with 6A and a version byte")
        }
        let steps = try c.ifPresent(.steps) { try c.decode([ProfileStep].self, forKey: $0) } ?? []
        if !isoDep && !steps.isEmpty { throw c.dataError(.steps, "a reader without ISO-DEP sends no APDU") }
        let any = try decoder.container(keyedBy: DataFileKey.self)
        let activation = try Self.time(any, "activation")
        if activation != nil && !isoDep {
            throw DataFileError.decodingError(at: c.codingPath + [activation!.key], "only with \"iso_dep\": true")
        }
        if isoDep && activation == nil {
            throw DataFileError.decodingError(
                at: c.codingPath + [DataFileKey("activation_us")], "missing (or activation_ms): required with ISO-DEP",
                code: .missingField)
        }
        guard let fieldOff = try Self.time(any, "field_off") else {
            throw DataFileError.decodingError(
                at: c.codingPath + [DataFileKey("field_off_us")], "missing (or field_off_ms)", code: .missingField)
        }
        for (i, (s, prev)) in zip(steps.dropFirst(), steps).enumerated() where s.step.offset < prev.step.offset {
            throw DataFileError.decodingError(
                at: c.codingPath + [CodingKeys.steps, DataFileKey(index: i + 1), s.timeKey],
                "earlier than the step before")
        }
        if let last = steps.last, fieldOff.value < last.step.offset {
            throw DataFileError.decodingError(at: c.codingPath + [fieldOff.key], "before the last step")
        }
        if let first = steps.first, first.step.offset < (activation?.value ?? .zero) {
            throw DataFileError.decodingError(
                at: c.codingPath + [CodingKeys.steps, DataFileKey(index: 0), first.timeKey], "before activation")
        }
        profile = ReaderProfile(
            name: name, category: try c.decode(String.self, forKey: .category),
            description: try c.ifPresent(.description) { try c.decode(String.self, forKey: $0) } ?? "",
            technology: tech, reachesISODEP: isoDep, ecp: ecp,
            rats: try c.ifPresent(.rats) { try c.decodeHex($0) },
            ats: try c.ifPresent(.ats) { try c.decodeHex($0) },
            activationOffset: activation?.value ?? .zero, steps: steps.map(\.step), fieldOffOffset: fieldOff.value,
            source: try c.decode(String.self, forKey: .source),
            note: try c.ifPresent(.note) { try c.decode(String.self, forKey: $0) })
    }

    /// `BASE_us` (whole µs, 0 to 10^15) or `BASE_ms` (ms, 1 µs steps, 0 to 10^12), not both;
    /// nil when neither is given.
    static func time(_ c: KeyedDecodingContainer<DataFileKey>, _ base: String) throws -> (
        value: Duration, key: DataFileKey
    )? {
        let us = DataFileKey(base + "_us")
        let ms = DataFileKey(base + "_ms")
        switch (c.contains(us), c.contains(ms)) {
        case (true, true): throw c.dataError(ms, "give \(us.stringValue) or \(ms.stringValue), not both")
        case (true, false): return (try c.decodeMicroseconds(us, in: 0...1_000_000_000_000_000), us)
        case (false, true): return (try c.decodeMilliseconds(ms, in: 0...1e12), ms)
        case (false, false): return nil
        }
    }
}

/// One command of a profile's sequence.
private struct ProfileStep: Decodable {
    var step: ReaderProfile.Step
    /// `t_us` or `t_ms`, whichever the file gives.
    var timeKey: DataFileKey

    enum CodingKeys: String, CodingKey {
        case apdu, note
        case expectSW = "expect_sw"
        case stopOnFailure = "stop_on_failure"
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let (at, key) = try ProfileFile.time(try decoder.container(keyedBy: DataFileKey.self), "t") else {
            throw DataFileError.decodingError(
                at: c.codingPath + [DataFileKey("t_us")], "missing (or t_ms)", code: .missingField)
        }
        timeKey = key
        let apdu = try c.decodeHex(.apdu)
        guard apdu.count >= 4 else { throw c.dataError(.apdu, "a command APDU has at least 4 bytes") }
        var expect: [String] = []
        if c.contains(.expectSW) {
            let isList = (try? c.nestedUnkeyedContainer(forKey: .expectSW)) != nil
            let list =
                isList ? try c.decode([String].self, forKey: .expectSW) : [try c.decode(String.self, forKey: .expectSW)]
            for (j, s) in list.enumerated() {
                guard s.count == 4, s.uppercased().allSatisfy({ $0.isHexDigit || $0 == "X" }) else {
                    var at = c.codingPath + [CodingKeys.expectSW]
                    if isList { at.append(DataFileKey(index: j)) }
                    throw DataFileError.decodingError(at: at, "a status word is 4 hex digits (X = any), not \"\(s)\"")
                }
                expect.append(s.uppercased())
            }
        }
        step = ReaderProfile.Step(
            offset: at, apdu: apdu, expectedStatusWords: expect,
            stopOnFailure: try c.ifPresent(.stopOnFailure) { try c.decode(Bool.self, forKey: $0) } ?? false,
            note: try c.ifPresent(.note) { try c.decode(String.self, forKey: $0) })
    }
}

extension ReaderProfile {
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
