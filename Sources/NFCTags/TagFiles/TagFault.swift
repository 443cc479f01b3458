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
