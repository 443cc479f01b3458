import Synchronization

/// An ``APDUTransport`` straight into a ``Type4NDEFApplication`` in memory: each call is one
/// command APDU and the core's response APDU. Scheduled ``TagFault``s fail the chosen
/// command, counted as ``EmulatedType2Transport`` counts them. Thread-safe.
public final class EmulatedAPDUTransport: APDUTransport, Sendable {
    private struct State {
        var core: Type4NDEFApplication
        var faults: [TagFault]
        var commands = 0
        var exchanges: [(command: [UInt8], response: [UInt8]?)] = []
    }

    private let state: Mutex<State>

    public init(core: Type4NDEFApplication, faults: [TagFault] = []) {
        state = Mutex(State(core: core, faults: faults))
    }

    /// The core as it is now (its ``Type4NDEFApplication/ndefFile`` shows what writes did).
    public var core: Type4NDEFApplication { state.withLock { $0.core } }
    /// Every exchange so far: the command and the response (`nil` when a fault ate it).
    public var exchanges: [(command: [UInt8], response: [UInt8]?)] { state.withLock { $0.exchanges } }

    /// The field was lost: the application is deselected (ISO/IEC 14443-4 deactivation).
    public func deselect() { state.withLock { $0.core.deselect() } }

    public func transmit(_ command: [UInt8]) throws -> [UInt8] {
        let result: Result<[UInt8], TagCommunicationError> = state.withLock { s in
            let n = s.commands
            s.commands += 1
            if let i = s.faults.firstIndex(where: { $0.afterCommands == n }) {
                let fault = s.faults.remove(at: i)
                if fault.kind == .corruptReply {
                    var r = s.core.respond(to: command)
                    r[0] ^= 0xFF
                    s.exchanges.append((command, r))
                    return .success(r)
                }
                s.exchanges.append((command, nil))
                return .failure(fault.error)
            }
            let r = s.core.respond(to: command)
            s.exchanges.append((command, r))
            return .success(r)
        }
        return try result.get()
    }
}
