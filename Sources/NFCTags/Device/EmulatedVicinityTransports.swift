import Synchronization

/// A ``/NFCBase/FeliCaTransport`` straight into a ``FeliCaCore`` in memory, behind the fault
/// wrapper every device shares (``FaultyFeliCaCore``). Silence → `.noResponse` (`.tagLost`
/// once a `tag_lost` fault made the card leave). Thread-safe.
public final class EmulatedFeliCaTransport: FeliCaTransport, Sendable {
    private let state: Mutex<FaultyFeliCaCore>

    public init(card: FaultyFeliCaCore) { state = Mutex(card) }

    /// The card now: its memory and its fault schedule.
    public var card: FaultyFeliCaCore { state.withLock { $0 } }
    public var core: FeliCaCore { state.withLock { $0.core } }
    public var isGone: Bool { state.withLock { $0.isGone } }

    public func exchange(_ frame: [UInt8]) throws -> [UInt8] {
        let (answer, gone) = state.withLock { c in (c.respond(to: frame), c.isGone) }
        if gone { throw TagCommunicationError.tagLost }
        guard let answer else { throw TagCommunicationError.noResponse }
        return answer
    }

    /// Polling as a reader's activation sends it (wildcard FFFF, Request Code 01): the
    /// SENSF_RES without LEN, `nil` when the card stays silent.
    public func activate(systemCode: [UInt8] = [0xFF, 0xFF], requestCode: UInt8 = 0x01) -> [UInt8]? {
        state.withLock { $0.poll(systemCode: systemCode, requestCode: requestCode) }
    }
}

/// A ``/NFCBase/ISO15693Transport`` straight into an ``ISO15693Core`` in memory, behind
/// ``FaultyISO15693Core``. Thread-safe.
public final class EmulatedISO15693Transport: ISO15693Transport, Sendable {
    private let state: Mutex<FaultyISO15693Core>

    public init(card: FaultyISO15693Core) { state = Mutex(card) }

    public var card: FaultyISO15693Core { state.withLock { $0 } }
    public var core: ISO15693Core { state.withLock { $0.core } }
    public var isGone: Bool { state.withLock { $0.isGone } }

    public func request(_ request: [UInt8]) throws -> [UInt8] {
        let (answer, gone) = state.withLock { c in (c.respond(to: request), c.isGone) }
        if gone { throw TagCommunicationError.tagLost }
        guard let answer else { throw TagCommunicationError.noResponse }
        return answer
    }

    /// Inventory as a reader's activation sends it (``FaultyISO15693Core/inventory()``).
    public func inventory() -> [UInt8]? { state.withLock { $0.inventory() } }

    /// Reset To Ready (``FaultyISO15693Core/resetToReady()``).
    public func resetToReady() { state.withLock { $0.resetToReady() } }
}
