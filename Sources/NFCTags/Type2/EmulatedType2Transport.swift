import Synchronization

/// A ``/NFCBase/Type2TagTransport`` straight into an ``NTAG21xCore`` in memory: each call becomes
/// one command frame (READ `30`, WRITE `A2`, GET_VERSION `60`) and the core's answer.
///
/// NAK → ``/NFCBase/TagCommunicationError/nak(_:)``, silence → `.noResponse` (`.tagLost` once a
/// `tag_lost` fault made the tag leave), an answer of the wrong shape → `.malformedResponse`.
/// Scheduled ``TagFault``s play through ``FaultyType2Core``, as on every device.
/// Thread-safe; the core sits behind a mutex.
public final class EmulatedType2Transport: Type2TagTransport, Sendable {
    private struct State {
        var card: FaultyType2Core
        var frames: [[UInt8]] = []
    }

    private let state: Mutex<State>

    /// The most pages one FAST_READ may ask for: the simulated reader's frame limit.
    public let fastReadPageLimit: Int

    /// `fastReadPageLimit` defaults to 63 pages: the 252 tag bytes a 256-byte frame (FSD 256,
    /// the largest of ISO/IEC 14443-4 before its 2016 extension) carries besides CRC_A and a
    /// header byte. Assumed, as a plausible reader: the simulator has no frame of its own.
    public convenience init(core: NTAG21xCore, faults: [TagFault] = [], fastReadPageLimit: Int = 63) {
        self.init(card: FaultyType2Core(core: core, faults: faults), fastReadPageLimit: fastReadPageLimit)
    }

    /// A transport into `card` as it is (its memory and its fault schedule).
    public init(card: FaultyType2Core, fastReadPageLimit: Int = 63) {
        state = Mutex(State(card: card))
        self.fastReadPageLimit = fastReadPageLimit
    }

    /// The card behind the transport now: its memory and its fault schedule.
    public var card: FaultyType2Core { state.withLock { $0.card } }

    /// The core as it is now (its ``NTAG21xCore/pages`` show what writes did).
    public var core: NTAG21xCore { state.withLock { $0.card.core } }
    /// A `tag_lost` fault fired: the tag has left the field.
    public var isGone: Bool { state.withLock { $0.card.isGone } }
    /// Every command frame sent so far, in order.
    public var frames: [[UInt8]] { state.withLock { $0.frames } }

    private func exchange(_ frame: [UInt8]) throws(TagCommunicationError) -> Type2Answer {
        let (answer, gone) = state.withLock { s in
            s.frames.append(frame)
            return (s.card.respond(to: frame), s.card.isGone)
        }
        if gone { throw .tagLost }
        return answer
    }

    private func expectData(_ answer: Type2Answer, count: Int, _ what: String) throws(TagCommunicationError) -> [UInt8]
    {
        switch answer {
        case .data(let d) where d.count == count: return d
        case .data(let d): throw .malformedResponse("\(what) answered \(d.count) bytes, expected \(count)")
        case .ack: throw .malformedResponse("\(what) answered ACK")
        case .nak(let v): throw .nak(v)
        case .silent: throw .noResponse
        }
    }

    public func read(page: UInt8) throws -> [UInt8] {
        try expectData(exchange([0x30, page]), count: 16, "READ")
    }

    public func write(page: UInt8, data: [UInt8]) throws {
        guard data.count == 4 else {
            throw TagCommunicationError.malformedResponse("WRITE needs 4 bytes, got \(data.count)")
        }
        switch try exchange([0xA2, page] + data) {
        case .ack: return
        case .nak(let v): throw TagCommunicationError.nak(v)
        case .silent: throw TagCommunicationError.noResponse
        case .data: throw TagCommunicationError.malformedResponse("WRITE answered data")
        }
    }

    public func fastRead(from first: UInt8, to last: UInt8) throws -> [UInt8] {
        guard last >= first else { throw TagCommunicationError.malformedResponse("FAST_READ \(first)…\(last)") }
        return try expectData(exchange([0x3A, first, last]), count: 4 * (Int(last) - Int(first) + 1), "FAST_READ")
    }

    public func getVersion() throws -> [UInt8]? {
        try expectData(exchange([0x60]), count: 8, "GET_VERSION")
    }

    /// Any frame straight into the core (FAST_READ, READ_SIG, PWD_AUTH, READ_CNT…); its
    /// answer as the core gives it. `.tagLost` once the tag has left.
    public func transceive(_ frame: [UInt8]) throws -> Type2Answer {
        try exchange(frame)
    }

    public func reactivate() throws {
        let gone = state.withLock { s in
            s.card.reactivate()
            return s.card.isGone
        }
        if gone { throw TagCommunicationError.tagLost }
    }
}
