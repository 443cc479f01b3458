// A Type 2 tag that answers one command frame its own (wrong) way: the tag file's `answers`
// (`hardware/tags/FORMAT.md`). It models tags and emulators that mishandle a frame a reader
// sends, such as the iPhone's `1A 00` probe before it reports a Type 2 tag.

/// One frame a tag answers its own way, whatever its product's datasheet says: the tag
/// file's `answers` entry `{"frame": "1A00", "answer": "0A"}`.
///
/// The core (``NTAG21xCore/frameAnswers``) gives ``answer`` to a frame that equals ``frame``
/// (CRC_A excluded) while the tag is selected, and stays selected; a halted or idle tag stays
/// silent as always. Every device presents the same core (`TagFile.makeEmulationCore()`),
/// so the in-process simulator, the vpcd card and the virtual PN532 answer alike.
public struct Type2FrameAnswer: Sendable, Hashable {
    /// The command frame, CRC_A excluded.
    public var frame: [UInt8]
    /// What the tag answers to it.
    public var answer: Type2Answer

    public init(frame: [UInt8], answer: Type2Answer) {
        self.frame = frame
        self.answer = answer
    }

    /// The JSON spelling of ``answer``: `"silent"`, `"ack"`, `"nak"` (NAK `0h`), `"nak N"`
    /// (one hex digit), or the data bytes in hex.
    public var answerText: String {
        switch answer {
        case .silent: "silent"
        case .ack: "ack"
        case .nak(let v): v == 0 ? "nak" : "nak \(String(v, radix: 16, uppercase: true))"
        case .data(let d): d.hexString()
        }
    }

    /// Reads ``answerText``'s spellings; `nil` for anything else (an empty string included:
    /// silence is `"silent"`).
    public static func answer(from text: String) -> Type2Answer? {
        let t = text.lowercased()
        switch t {
        case "silent": return .silent
        case "ack": return .ack
        case "nak": return .nak(0)
        default: break
        }
        if t.hasPrefix("nak ") {
            guard let v = UInt8(t.dropFirst(4), radix: 16), v < 0x10, v != 0x0A else { return nil }
            return .nak(v)
        }
        guard let bytes = [UInt8](hex: t), !bytes.isEmpty else { return nil }
        return .data(bytes)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(frame)
        hasher.combine(answerText)
    }

    /// One line for people: `answers 1A 00 with 0A`.
    public var summary: String {
        "answers \(frame.hexString(separator: " ")) with \(answerText)"
    }
}

extension Type2FrameAnswer: Decodable {
    enum CodingKeys: String, CodingKey { case frame, answer }

    /// `frame`: 1 to 64 bytes of hex; `answer`: one of ``answerText``'s spellings.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let frame = try c.decodeHex(.frame)
        guard (1...64).contains(frame.count) else {
            throw c.dataError(.frame, "expected 1 to 64 bytes of hex, found \(frame.count)")
        }
        let text = try c.decode(String.self, forKey: .answer)
        guard let answer = Self.answer(from: text) else {
            throw c.dataError(
                .answer,
                "expected \"silent\", \"ack\", \"nak\", \"nak N\" (a hex digit) or data bytes in hex, found \"\(text)\""
            )
        }
        self.init(frame: frame, answer: answer)
    }
}
