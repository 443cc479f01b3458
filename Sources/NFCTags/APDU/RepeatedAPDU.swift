/// Round trips of one command APDU, each timed by the carrier right around its library call:
/// when it started, how long it took (`ContinuousClock`), and the response APDU (data + SW1
/// SW2). Storage is reserved up front (``reserve(exchanges:responseBytes:)``), so recording a
/// round trip allocates nothing while the clock runs.
public struct TimedAPDUExchanges: Sendable {
    /// When each round trip began (just before the library call).
    public private(set) var starts: [ContinuousClock.Instant] = []
    /// How long each round trip took (library call in to library call out).
    public private(set) var durations: [Duration] = []
    /// Every response, back to back; ``responseEnds`` says where each one ends.
    private var responseBytes: [UInt8] = []
    private var responseEnds: [Int] = []

    public init() {}

    /// Round trips recorded.
    public var count: Int { durations.count }

    /// The response APDU of round trip `index` (0-based, below ``count``).
    public func response(_ index: Int) -> ArraySlice<UInt8> {
        responseBytes[(index == 0 ? 0 : responseEnds[index - 1])..<responseEnds[index]]
    }

    /// Room for `exchanges` more round trips with `responseBytes` more response bytes in all,
    /// so that ``append(start:duration:response:)`` does not allocate.
    public mutating func reserve(exchanges: Int, responseBytes bytes: Int) {
        starts.reserveCapacity(starts.count + exchanges)
        durations.reserveCapacity(durations.count + exchanges)
        responseEnds.reserveCapacity(responseEnds.count + exchanges)
        responseBytes.reserveCapacity(responseBytes.count + bytes)
    }

    /// Records one round trip.
    public mutating func append(
        start: ContinuousClock.Instant, duration: Duration, response: UnsafeBufferPointer<UInt8>
    ) {
        starts.append(start)
        durations.append(duration)
        responseBytes.append(contentsOf: response)
        responseEnds.append(responseBytes.count)
    }

    /// Forgets every round trip, keeping the storage.
    public mutating func removeAll() {
        starts.removeAll(keepingCapacity: true)
        durations.removeAll(keepingCapacity: true)
        responseBytes.removeAll(keepingCapacity: true)
        responseEnds.removeAll(keepingCapacity: true)
    }
}

/// An ``/NFCBase/APDUTransport`` that sends one command APDU over and over and times each round trip
/// itself, with nothing but the library call between its two clock readings: no allocation,
/// lock or trace record of ours runs inside the figure. For `nfcbench measure apdu`, whose
/// figure should be the reader's and the card's, as a C loop around the same call gets it.
///
/// Conformer: the PC/SC transport (`SCardTransmit`). Others are timed around
/// ``/NFCBase/APDUTransport/transmit(_:)`` by the caller.
public protocol RepeatingAPDUTransport: APDUTransport {
    /// Sends `command` `count` times, or until `shouldStop()` (asked before each round trip)
    /// says to stop, appending each round trip to `exchanges` (its storage is reserved here).
    /// A failed round trip throws ``/NFCBase/TagCommunicationError`` as ``/NFCBase/APDUTransport/transmit(_:)``
    /// does; the round trips before it stay in `exchanges`.
    func transmitRepeatedly(
        _ command: [UInt8], count: Int, into exchanges: inout TimedAPDUExchanges, shouldStop: () -> Bool
    ) throws
}
