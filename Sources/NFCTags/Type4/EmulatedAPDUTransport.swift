import Synchronization

/// An ``/NFCBase/APDUTransport`` straight into a ``Type4NDEFApplication`` in memory: each call is one
/// command APDU and the core's response APDU. Scheduled ``TagFault``s play through
/// ``FaultyType4Core``, as on every device: silence → `.noResponse`, a tag that left →
/// `.tagLost`. Thread-safe.
public final class EmulatedAPDUTransport: APDUTransport, Sendable {
    private struct State {
        var card: FaultyType4Core
        var exchanges: [(command: [UInt8], response: [UInt8]?)] = []
    }

    private let state: Mutex<State>

    public convenience init(core: Type4NDEFApplication, faults: [TagFault] = []) {
        self.init(card: FaultyType4Core(core: core, faults: faults))
    }

    /// A transport into `card` as it is (its files and its fault schedule).
    public init(card: FaultyType4Core) {
        state = Mutex(State(card: card))
    }

    /// The card behind the transport now: its files and its fault schedule.
    public var card: FaultyType4Core { state.withLock { $0.card } }

    /// The core as it is now (its ``Type4NDEFApplication/ndefFile`` shows what writes did).
    public var core: Type4NDEFApplication { state.withLock { $0.card.core } }
    /// A `tag_lost` fault fired: the tag has left the field.
    public var isGone: Bool { state.withLock { $0.card.isGone } }
    /// Every exchange so far: the command and the response (`nil` when a fault ate it).
    public var exchanges: [(command: [UInt8], response: [UInt8]?)] { state.withLock { $0.exchanges } }

    /// The field was lost: the application is deselected (ISO/IEC 14443-4 deactivation).
    public func deselect() { state.withLock { $0.card.deselect() } }

    public func transmit(_ command: [UInt8]) throws -> [UInt8] {
        let (answer, gone) = state.withLock { s in
            let a = s.card.respond(to: command)
            if case .response(let r) = a {
                s.exchanges.append((command, r))
            } else {
                s.exchanges.append((command, nil))
            }
            return (a, s.card.isGone)
        }
        switch answer {
        case .response(let r): return r
        case .silent: throw gone ? TagCommunicationError.tagLost : TagCommunicationError.noResponse
        }
    }
}
