import Synchronization

/// A connection to the PC/SC resource manager (pcscd): `SCardEstablishContext` with
/// `SCARD_SCOPE_SYSTEM`, released (`SCardReleaseContext`) by ``release()`` or when the last
/// reference goes.
///
/// Threads: the methods block the calling thread (for up to their timeout), so call them
/// from a thread of your own (the reader frontend's device thread), never from Swift's
/// cooperative pool. pcsc-lite locks a context for the length of a call, so one blocking
/// call runs at a time per context; ``cancel()`` is the exception and may come from any
/// thread.
public final class PCSCContext: Sendable {
    let handle: PCSCContextHandle
    private let released = Mutex(false)

    /// Connects to pcscd. Throws `SCARD_E_NO_SERVICE` when it is not running
    /// (`SCardEstablishContext`).
    public init() throws(PCSCError) {
        handle = try pcscEstablishContext()
    }

    deinit { release() }

    /// `SCardReleaseContext`: cards connected through it are disconnected by pcscd. Idempotent.
    public func release() {
        let first = released.withLock { r in
            defer { r = true }
            return !r
        }
        if first { try? pcscReleaseContext(handle) }
    }

    /// False once pcscd went away or the context was released (`SCardIsValidContext`).
    public var isValid: Bool { pcscIsValidContext(handle) }

    /// The names of the connected readers, in pcscd's order; `[]` when there are none
    /// (`SCardListReaders`; `SCARD_E_NO_READERS_AVAILABLE` is not an error here).
    public func readers() throws(PCSCError) -> [String] {
        try pcscListReaders(handle)
    }

    /// Blocks until a reader's state differs from the state passed in, the timeout expires,
    /// or ``cancel()`` is called (`SCardGetStatusChange`).
    ///
    /// - Parameters:
    ///   - readers: what the caller knows: pass ``PCSCReaderState/unaware(_:)`` to get the
    ///     current state at once, then the returned states to wait for the next change.
    ///   - timeout: how long to wait; `nil` waits forever (`INFINITE`). Rounded up to
    ///     whole milliseconds.
    /// - Returns: `.changed` with every reader's new state, `.timeout`, or `.cancelled`.
    /// - Throws: ``PCSCError`` for anything else, e.g. `SCARD_E_UNKNOWN_READER`,
    ///   `SCARD_E_NO_SERVICE`.
    public func waitForStatusChange(
        readers: [PCSCReaderState], timeout: Duration?
    ) throws(PCSCError) -> PCSCStatusChange {
        let rows = readers.map { PCSCRawReaderState(name: $0.reader, currentState: $0.dword) }
        do {
            let out = try pcscGetStatusChange(handle, timeoutMs: timeout.map(Self.milliseconds), rows)
            return .changed(out.map(PCSCReaderState.init(raw:)))
        } catch let e where e == .timeout {
            return .timeout
        } catch let e where e == .cancelled {
            return .cancelled
        }
    }

    /// Ends a ``waitForStatusChange(readers:timeout:)`` blocked on this context with
    /// `.cancelled`; does nothing when no wait is in progress (`SCardCancel`). Thread-safe.
    public func cancel() throws(PCSCError) {
        if released.withLock({ $0 }) { return }
        try pcscCancel(handle)
    }

    /// Connects to the card in `reader` (`SCardConnect`).
    ///
    /// - Parameters:
    ///   - reader: the reader's name as ``readers()`` lists it.
    ///   - shareMode: `.shared` (default) lets other applications in; `.exclusive` keeps
    ///     them out; `.direct` reaches the reader without a card.
    ///   - protocols: acceptable protocols; the card's ATR decides which becomes active.
    /// - Throws: `SCARD_E_NO_SMARTCARD` (no card), `SCARD_E_SHARING_VIOLATION`,
    ///   `SCARD_E_PROTO_MISMATCH`, `SCARD_W_UNPOWERED_CARD` (mute card), `SCARD_E_UNKNOWN_READER`.
    public func connect(
        reader: String, shareMode: PCSCShareMode = .shared, protocols: PCSCProtocols = [.t0, .t1]
    ) throws(PCSCError) -> PCSCCard {
        let (card, active) = try pcscConnect(
            handle, reader: reader, shareMode: shareMode.rawValue, protocols: protocols.rawValue)
        return PCSCCard(
            context: self, handle: card, reader: reader, shareMode: shareMode,
            activeProtocol: PCSCProtocols(rawValue: active))
    }

    static func milliseconds(_ d: Duration) -> UInt32 {
        let (s, atto) = d.components
        if s < 0 { return 0 }
        let ms = Double(s) * 1000 + (Double(atto) / 1e15).rounded(.up)
        return ms >= Double(UInt32.max - 1) ? UInt32.max - 1 : UInt32(ms)
    }
}

/// How a connection shares the card (`SCardConnect`'s `dwShareMode`).
public enum PCSCShareMode: UInt32, Sendable {
    /// `SCARD_SHARE_EXCLUSIVE`: no other application may connect.
    case exclusive = 1
    /// `SCARD_SHARE_SHARED`: others may connect too.
    case shared = 2
    /// `SCARD_SHARE_DIRECT`: the reader itself, with or without a card.
    case direct = 3
}

/// Card protocols (`SCARD_PROTOCOL_*`).
public struct PCSCProtocols: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `SCARD_PROTOCOL_T0`: ISO/IEC 7816-3 character protocol.
    public static let t0 = PCSCProtocols(rawValue: 1)
    /// `SCARD_PROTOCOL_T1`: ISO/IEC 7816-3 block protocol (what contactless readers report).
    public static let t1 = PCSCProtocols(rawValue: 2)
    /// `SCARD_PROTOCOL_RAW`.
    public static let raw = PCSCProtocols(rawValue: 4)
    public var description: String {
        [(Self.t0, "T=0"), (.t1, "T=1"), (.raw, "raw")].filter { contains($0.0) }.map(\.1)
            .joined(separator: "|")
    }
}

/// What happens to the card when a connection ends (`SCardDisconnect`'s `dwDisposition`).
public enum PCSCDisposition: UInt32, Sendable {
    /// `SCARD_LEAVE_CARD`: nothing.
    case leave = 0
    /// `SCARD_RESET_CARD`: warm reset (other handles then see `SCARD_W_RESET_CARD` once).
    case reset = 1
    /// `SCARD_UNPOWER_CARD`: power off (a contactless reader turns the card's field off).
    case unpower = 2
    /// `SCARD_EJECT_CARD`.
    case eject = 3
}
