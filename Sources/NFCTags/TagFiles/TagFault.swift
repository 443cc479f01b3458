/// A scheduled failure of the carrier, as tag files declare it (`faults` in `hardware/tags/FORMAT.md`).
///
/// After `afterCommands` commands have been answered normally, the next command fails
/// with `kind`; each fault fires once. Counting includes every command the transport
/// carries (READ, WRITE, GET_VERSION...).
public struct TagFault: Sendable, Hashable, Codable {
    /// How the command fails.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// The tag leaves the field: ``TagCommunicationError/tagLost``.
        case tagLost = "tag_lost"
        /// The tag does not answer: ``TagCommunicationError/noResponse``.
        case noAnswer = "no_answer"
        /// The answer arrives damaged: ``TagCommunicationError/malformedResponse(_:)``.
        case corruptReply = "corrupt_reply"
    }

    /// Commands answered normally before this fault.
    public let afterCommands: Int
    public let kind: Kind

    public init(afterCommands: Int, kind: Kind) {
        self.afterCommands = afterCommands
        self.kind = kind
    }

    enum CodingKeys: String, CodingKey {
        case afterCommands = "after_commands"
        case kind
    }

    /// The error a transport raises for this fault.
    public var error: TagCommunicationError {
        switch kind {
        case .tagLost: .tagLost
        case .noAnswer: .noResponse
        case .corruptReply: .malformedResponse("corrupted reply (scheduled fault)")
        }
    }
}

extension TagFault {
    /// Reads `{"after_commands": N, "kind": K}` by the data files' rule (``DataFile``): both
    /// required, N a whole number from 0 to 10^9, K one of the ``Kind`` names.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            afterCommands: try c.decodeWholeNumber(.afterCommands, in: 0...1_000_000_000),
            kind: try c.decodeChoice(Kind.self, forKey: .kind))
    }
}
