import Synchronization

/// Remembers whether a carrier reported the tag lost (``/NFCBase/TagCommunicationError/tagLost``),
/// whatever a procedure above it wrapped that error in: a reader wraps its transports with
/// ``type2(_:)`` / ``apdu(_:)`` for one exchange, then asks ``tagLost`` to know that the tag
/// has left the field.
public final class TagLossWatch: Sendable {
    private let lost = Atomic<Bool>(false)

    public init() {}

    /// True once a wrapped transport threw `.tagLost`.
    public var tagLost: Bool { lost.load(ordering: .acquiring) }

    func run<T>(_ call: () throws -> T) throws -> T {
        do { return try call() } catch let e as TagCommunicationError where e == .tagLost {
            lost.store(true, ordering: .releasing)
            throw e
        }
    }

    /// `base`, watched.
    public func type2(_ base: any Type2TagTransport) -> any Type2TagTransport {
        WatchedType2Transport(base: base, watch: self)
    }
    /// `base`, watched. A base that times its own round trips (``RepeatingAPDUTransport``)
    /// stays one, so a caller can still find it with `as? any RepeatingAPDUTransport`.
    public func apdu(_ base: any APDUTransport) -> any APDUTransport {
        if let repeating = base as? any RepeatingAPDUTransport {
            return WatchedRepeatingAPDUTransport(base: repeating, watch: self)
        }
        return WatchedAPDUTransport(base: base, watch: self)
    }
    /// `base`, watched.
    public func feliCa(_ base: any FeliCaTransport) -> any FeliCaTransport {
        WatchedFeliCaTransport(base: base, watch: self)
    }
    /// `base`, watched.
    public func iso15693(_ base: any ISO15693Transport) -> any ISO15693Transport {
        WatchedISO15693Transport(base: base, watch: self)
    }
}

private struct WatchedFeliCaTransport: FeliCaTransport {
    let base: any FeliCaTransport
    let watch: TagLossWatch
    func exchange(_ frame: [UInt8]) throws -> [UInt8] { try watch.run { try base.exchange(frame) } }
}

private struct WatchedISO15693Transport: ISO15693Transport {
    let base: any ISO15693Transport
    let watch: TagLossWatch
    func request(_ request: [UInt8]) throws -> [UInt8] { try watch.run { try base.request(request) } }
}

private struct WatchedType2Transport: Type2TagTransport {
    let base: any Type2TagTransport
    let watch: TagLossWatch
    func read(page: UInt8) throws -> [UInt8] { try watch.run { try base.read(page: page) } }
    func write(page: UInt8, data: [UInt8]) throws { try watch.run { try base.write(page: page, data: data) } }
    func getVersion() throws -> [UInt8]? { try watch.run { try base.getVersion() } }
    func reactivate() throws { try watch.run { try base.reactivate() } }
    func fastRead(from first: UInt8, to last: UInt8) throws -> [UInt8] {
        try watch.run { try base.fastRead(from: first, to: last) }
    }
    var fastReadPageLimit: Int { base.fastReadPageLimit }
    func transceive(_ frame: [UInt8]) throws -> Type2Answer { try watch.run { try base.transceive(frame) } }
}

extension WatchedType2Transport: ReaderAPDUCarrier {
    /// The base's reader APDUs (a PC/SC storage card's), watched like every command.
    func transmitReaderAPDU(_ apdu: [UInt8]) throws -> [UInt8] {
        guard let carrier = base as? any ReaderAPDUCarrier else { throw TagCommunicationError.unsupportedCommand(apdu) }
        return try watch.run { try carrier.transmitReaderAPDU(apdu) }
    }
}

private struct WatchedAPDUTransport: APDUTransport {
    let base: any APDUTransport
    let watch: TagLossWatch
    func transmit(_ command: [UInt8]) throws -> [UInt8] { try watch.run { try base.transmit(command) } }
    var maximumResponseLength: Int { base.maximumResponseLength }
}

private struct WatchedRepeatingAPDUTransport: RepeatingAPDUTransport {
    let base: any RepeatingAPDUTransport
    let watch: TagLossWatch
    func transmit(_ command: [UInt8]) throws -> [UInt8] { try watch.run { try base.transmit(command) } }
    var maximumResponseLength: Int { base.maximumResponseLength }
    func transmitRepeatedly(
        _ command: [UInt8], count: Int, into exchanges: inout TimedAPDUExchanges, shouldStop: () -> Bool
    ) throws {
        try watch.run {
            try base.transmitRepeatedly(command, count: count, into: &exchanges, shouldStop: shouldStop)
        }
    }
}
