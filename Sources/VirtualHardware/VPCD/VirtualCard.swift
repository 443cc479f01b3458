import Foundation
import Glibc
import NFCTags
import Synchronization

/// A virtual contactless card that pcscd sees in a vsmartcard `vpcd` reader.
///
/// The card is a TCP client of vpcd (listen mode: `DEVICENAME /dev/null:<port>` in
/// reader.conf; the Debian driver's slot 0 is "Virtual PCD 00 00" on 35963, slot 1 on 35964).
/// Being served by vpcd is being in the field: the card is in the field once vpcd speaks on its
/// connection (vpcd asks for the ATR at every presence poll of pcscd, ≈ 0.4 s), not when TCP
/// connects — vpcd serves one card per port, and a second card's connection waits unanswered in
/// its listen queue (``link``). ``remove()`` closes the connection, ``present()``
/// connects again, and pcscd notices either at its next presence poll (≈ 0.4 s). A card
/// whose personality left the field (``VirtualCardPersonality/hasLeftField``: a tag file's
/// `tag_lost` fault) closes the connection instead of answering, as if removed mid-APDU.
///
/// The wire (vsmartcard `doc/api.txt`): every message is a 2-byte big-endian length and a body.
/// vpcd asks, the card answers: control byte `00` power off, `01` power on, `02` reset (no
/// answer; `01`/`02` reset the personality), `04` get ATR (answered with the ATR); any longer
/// message is a command APDU, answered exactly once with ≥ 1 byte. Before each read the card
/// re-arms `TCP_QUICKACK` (Linux clears it after a while): without it, the delayed ACK costs
/// ≈ 40–48 ms per APDU round trip instead of ≈ 150 µs. `TCP_NODELAY` is set on connect.
/// While vpcd's port refuses (pcscd not running yet, or socket-activated and exited) the card
/// retries every ``Configuration/retryInterval``; EOF from vpcd means pcscd went away, and the
/// card reconnects the same way.
///
/// In vpcd's reversed mode (``Configuration/reversed``; reader.conf `DEVICENAME
/// 127.0.0.1:0x8C7B`, as `hardware/pcsc-loopback/vpcd` has it) the roles swap: the card
/// listens on `127.0.0.1:<port>` and vpcd connects to it at its next presence poll, so a
/// shared pcscd gets a vpcd reader without a port open beyond loopback (vpcd's own listen
/// mode binds `INADDR_ANY`: vsmartcard `vpcd.c`, `opensock`). Out of the field the card
/// closes its listening socket too, so vpcd's connect is refused (card absent).
///
/// All blocking I/O runs on one dedicated thread per card; every method here returns at once.
public final class VirtualCard: Sendable {
    /// Where and how the card connects.
    public struct Configuration: Sendable {
        /// vpcd's host (reversed mode: the address the card listens on, which must be a
        /// loopback address); `127.0.0.1` by default.
        public var host: String = "127.0.0.1"
        /// vpcd's TCP port for the slot: 35963 is "Virtual PCD 00 00".
        public var port: UInt16 = 35963
        /// vpcd's reversed mode: the card listens on `host:port` (loopback only) and vpcd
        /// connects to it. Default false: vpcd listens and the card connects.
        public var reversed: Bool = false
        /// Re-arm `TCP_QUICKACK` before each read (default true; false only to measure the cost).
        public var quickAck: Bool = true
        /// Pause between connection attempts while vpcd refuses.
        public var retryInterval: Duration = .milliseconds(50)
        public init(port: UInt16 = 35963) { self.port = port }
    }

    private struct State {
        var personality: any VirtualCardPersonality
        var running = false
        var wantPresent = true
        var fd: Int32 = -1
        /// Reversed mode: the listening socket while the card is in the field.
        var listener: Int32 = -1
        var faults: [VirtualCardFault] = []
        var events: [VirtualCardEvent] = []
        var thread: Thread? = nil
        var generation = 0
        var link = Link.stopped
        var linkSince: UInt64 = VirtualCardEvent.now()
    }

    /// Where the card stands with vpcd (``link``).
    public enum Link: Sendable, Equatable {
        /// Not started, or stopped.
        case stopped
        /// Out of the field on request (``remove()``).
        case removed
        /// vpcd's port does not take the connection; the latest attempt's `errno`
        /// (`ECONNREFUSED`: nothing listens there, no pcscd with vpcd's reader for that port).
        /// In reversed mode: the card can't listen on its port (`EADDRINUSE`: another card has it).
        case refused(errno: Int32)
        /// Reversed mode: the card listens on its port and vpcd has not connected (no pcscd
        /// with a reversed-mode vpcd reader for that port, or it has not polled yet).
        case listening
        /// Connected over TCP from `localPort`, but vpcd has not spoken on the connection: pcscd
        /// has not polled the card yet, and never will while another card holds the port.
        case unanswered(localPort: UInt16)
        /// vpcd spoke on the connection: pcscd sees the card.
        case inField

        /// The three phases whose changes restart ``VirtualCard/link``'s clock.
        var phase: Int {
            switch self {
            case .stopped, .removed: 0
            case .refused, .listening, .unanswered: 1
            case .inField: 2
            }
        }
    }

    public let configuration: Configuration
    private let state: Mutex<State>
    private let wake = NSCondition()

    /// A card with `personality`, not yet started; present by default once started.
    public init(personality: some VirtualCardPersonality, configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.state = Mutex(State(personality: personality))
    }

    deinit { stop() }

    /// Starts the connection thread; the card enters the field as soon as vpcd accepts it.
    /// Calling it again while running does nothing.
    public func start() {
        let thread: Thread? = state.withLock { s in
            guard !s.running else { return nil }
            s.running = true
            s.generation += 1
            let generation = s.generation
            let t = Thread { [self] in self.run(generation: generation) }
            t.name = "nfcbench.vpcd.\(configuration.port)"
            s.thread = t
            return t
        }
        thread?.start()
    }

    /// Leaves the field for good: closes the connection and ends the thread.
    public func stop() {
        state.withLock { s in
            s.running = false
            s.link = .stopped
            if s.fd >= 0 { shutdown(s.fd, Int32(SHUT_RDWR)) }
            if s.listener >= 0 { shutdown(s.listener, Int32(SHUT_RDWR)) }
        }
        wake.broadcast()
    }

    /// Takes the card out of the field: closes the TCP connection (pcscd: "Card Removed").
    public func remove() {
        state.withLock { s in
            s.wantPresent = false
            if s.fd >= 0 { shutdown(s.fd, Int32(SHUT_RDWR)) }
        }
        wake.broadcast()
    }

    /// Puts the card back: reconnects (pcscd sees a new insertion, its event counter grows).
    public func present() {
        state.withLock { $0.wantPresent = true }
        wake.broadcast()
    }

    /// True while the card holds a TCP connection to vpcd.
    public var isConnected: Bool { state.withLock { $0.fd >= 0 } }

    /// Where the card stands with vpcd, and since when (µs on `CLOCK_MONOTONIC`): since it
    /// entered the field, left it, or was started, presented or removed; trying again after a
    /// refusal, or connecting without an answer, does not restart the clock.
    public var link: (state: Link, sinceMicros: UInt64) { state.withLock { ($0.link, $0.linkSince) } }

    private func setLink(_ new: Link) {
        state.withLock { s in
            guard s.running else { return }
            if s.link.phase != new.phase { s.linkSince = VirtualCardEvent.now() }
            s.link = new
        }
    }

    /// Queues a fault for the next command APDU (faults apply in the order queued, one per APDU).
    public func inject(_ fault: VirtualCardFault) {
        state.withLock { $0.faults.append(fault) }
    }

    /// Every event so far, oldest first.
    public var events: [VirtualCardEvent] { state.withLock { $0.events } }

    /// Forgets the events logged so far.
    public func clearEvents() { state.withLock { $0.events.removeAll() } }

    /// The events since the last take, removed from the log: for a follower that traces them
    /// as they come (`virtual card`), so the log stays small however many APDUs the card
    /// answers and each look copies only what is new.
    public func takeEvents() -> [VirtualCardEvent] {
        state.withLock { s in
            let taken = s.events
            s.events = []
            return taken
        }
    }

    /// Reads or changes the personality (its memory, for instance) between APDUs.
    public func withPersonality<T>(_ body: (inout any VirtualCardPersonality) throws -> T) rethrows -> T {
        try state.withLock { try body(&$0.personality) }
    }

    /// Alternates presence on a schedule until ``stop()``: present for `present`, absent for
    /// `absent`, `cycles` times (nil: forever), on a background thread. Call after ``start()``.
    public func cyclePresence(present: Duration, absent: Duration, cycles: Int? = nil) {
        let generation = state.withLock { $0.generation }
        let t = Thread { [self] in
            var n = 0
            while cycles.map({ n < $0 }) ?? true {
                if !self.sleep(present, generation: generation) { return }
                self.remove()
                if !self.sleep(absent, generation: generation) { return }
                self.present()
                n += 1
            }
        }
        t.name = "nfcbench.vpcd.schedule"
        t.start()
    }

    // MARK: the connection thread

    private func log(_ kind: VirtualCardEvent.Kind) {
        let event = VirtualCardEvent(timestampMicros: VirtualCardEvent.now(), kind: kind)
        state.withLock { $0.events.append(event) }
    }

    /// Sleeps up to `d`; false when the card was stopped (or restarted) meanwhile.
    private func sleep(_ d: Duration, generation: Int) -> Bool {
        let deadline = Date().addingTimeInterval(Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18)
        wake.lock()
        defer { wake.unlock() }
        while Date() < deadline {
            if !state.withLock({ $0.running && $0.generation == generation }) { return false }
            _ = wake.wait(until: deadline)
        }
        return state.withLock { $0.running && $0.generation == generation }
    }

    private func run(generation: Int) {
        defer { closeListener() }
        while true {
            let (running, wanted) = state.withLock { ($0.running && $0.generation == generation, $0.wantPresent) }
            guard running else { return }
            guard wanted else {
                setLink(.removed)
                closeListener()  // reversed mode: vpcd's connect is refused, the card is absent
                wake.lock()
                _ = wake.wait(until: Date().addingTimeInterval(0.05))
                wake.unlock()
                continue
            }
            let connection =
                configuration.reversed
                ? acceptFromVPCD() : VPCDSocket.connect(host: configuration.host, port: configuration.port)
            guard let fd = connection else {
                if !configuration.reversed {
                    setLink(.refused(errno: errno))
                    _ = sleep(configuration.retryInterval, generation: generation)
                }
                continue
            }
            // Publish the descriptor, unless remove()/stop() came while connecting.
            let keep = state.withLock { s in
                guard s.running, s.wantPresent, s.generation == generation else { return false }
                s.fd = fd
                return true
            }
            guard keep else {
                close(fd)
                continue
            }
            state.withLock { $0.personality.enteredField() }
            setLink(.unanswered(localPort: VPCDSocket.localPort(fd)))
            var inField = false
            let reason = serve(fd, inField: &inField)
            state.withLock { $0.fd = -1 }
            close(fd)
            if inField { log(.disconnected(reason)) }
        }
    }

    /// Reversed mode: listens on `host:port` (loopback only) while in the field and takes
    /// vpcd's next connection; nil after ≈ 50 ms without one, or when the socket can't be had
    /// (then it waits ``Configuration/retryInterval``).
    private func acceptFromVPCD() -> Int32? {
        var listener = state.withLock { $0.listener }
        if listener < 0 {
            guard let fd = VPCDSocket.listen(host: configuration.host, port: configuration.port) else {
                setLink(.refused(errno: errno))
                _ = sleep(configuration.retryInterval, generation: state.withLock { $0.generation })
                return nil
            }
            let kept = state.withLock { s in
                guard s.running, s.wantPresent else { return false }
                s.listener = fd
                return true
            }
            guard kept else {
                close(fd)
                return nil
            }
            listener = fd
        }
        if link.state != .listening { setLink(.listening) }  // between connections: out of the field
        return VPCDSocket.accept(listener, timeoutMilliseconds: 50)
    }

    private func closeListener() {
        let fd = state.withLock { s in
            defer { s.listener = -1 }
            return s.listener
        }
        if fd >= 0 { close(fd) }
    }

    /// What the card does with one vpcd message, the body after its 2-byte length (vsmartcard
    /// `doc/api.txt`), without I/O: one byte is a control code (`00` power off, `01` power
    /// on and `02` reset: no answer, `01`/`02` reset the personality; `04`: the ATR, at most
    /// 33 bytes, `3B 00` when the personality has none; any other code: no answer); anything
    /// else, the empty message included, is a command APDU answered by the personality, an
    /// empty or over-long (> FFFF) answer replaced by `6F 00`. ``VPCDReply/leftField`` when
    /// the personality left the field on it (a `tag_lost` fault).
    public static func reply(to body: [UInt8], personality: inout any VirtualCardPersonality) -> VPCDReply {
        if body.count == 1 {
            switch body[0] {
            case 0x01, 0x02:
                personality.reset()
                return .none
            case 0x04:
                let atr = personality.atr
                return .atr(atr.isEmpty ? [0x3B, 0x00] : Array(atr.prefix(33)))
            default:
                return .none  // 00 power off, and codes this card does not know
            }
        }
        var answer = personality.respond(to: body)
        if personality.hasLeftField { return .leftField }
        if answer.isEmpty || answer.count > 0xFFFF { answer = [0x6F, 0x00] }  // a zero-length answer hangs vpcd
        return .response(answer)
    }

    /// Serves vpcd until the connection ends; returns why it ended. `inField` turns true (and
    /// the card logs that it is connected) when vpcd first speaks.
    private func serve(_ fd: Int32, inField: inout Bool) -> VirtualCardEvent.DisconnectReason {
        while true {
            if configuration.quickAck { VPCDSocket.armQuickAck(fd) }
            guard let header = VPCDSocket.read(fd, count: 2) else { return endReason() }
            if !inField {
                inField = true
                setLink(.inField)
                log(.connected(port: configuration.port))
            }
            let length = Int(header[0]) << 8 | Int(header[1])
            if configuration.quickAck { VPCDSocket.armQuickAck(fd) }
            guard let body = length == 0 ? [] : VPCDSocket.read(fd, count: length) else { return endReason() }
            if body.count == 1 {
                log(.control(body[0]))
                let reply = state.withLock { Self.reply(to: body, personality: &$0.personality) }
                if case .atr(let answer) = reply {
                    guard VPCDSocket.write(fd, message: answer) else { return endReason() }
                    log(.atr(answer))
                }
                continue
            }
            log(.command(body))
            let fault: VirtualCardFault? = state.withLock { s in s.faults.isEmpty ? nil : s.faults.removeFirst() }
            var answer: [UInt8]
            switch fault {
            case .closeMidAPDU?:
                log(.fault(.closeMidAPDU))
                return .fault
            case .silence?:
                log(.fault(.silence))
                // Never answer: vpcd blocks in recv() until this connection closes.
                while VPCDSocket.read(fd, count: 1) != nil {}
                return endReason()
            case .replace(let bytes)?:
                log(.fault(.replace(bytes)))
                answer = bytes.isEmpty || bytes.count > 0xFFFF ? [0x6F, 0x00] : bytes
            case nil:
                let reply: VPCDReply = state.withLock { s in
                    let r = Self.reply(to: body, personality: &s.personality)
                    if case .leftField = r { s.wantPresent = false }  // out of the field until present()
                    return r
                }
                switch reply {
                case .response(let r): answer = r
                case .leftField, .none, .atr:
                    // A tag_lost fault: no answer, the connection closes (vpcd: 0 bytes back,
                    // pcscd: card removed).
                    log(.fault(.closeMidAPDU))
                    return .fault
                }
            }
            guard VPCDSocket.write(fd, message: answer) else { return endReason() }
            log(.response(answer))
        }
    }

    private func endReason() -> VirtualCardEvent.DisconnectReason {
        state.withLock { s in
            if !s.running { return .stopped }
            if !s.wantPresent { return .removed }
            return .readerClosed
        }
    }
}

/// What a vpcd card sends back for one message (``VirtualCard/reply(to:personality:)``).
public enum VPCDReply: Sendable, Equatable {
    /// Nothing (power off, power on, reset, an unknown control code).
    case none
    /// The ATR, for control code `04`.
    case atr([UInt8])
    /// The response APDU (1 … FFFF bytes).
    case response([UInt8])
    /// The card left the field instead of answering: the connection closes.
    case leftField
}

/// A misbehaviour for the next command APDU (``VirtualCard/inject(_:)``).
public enum VirtualCardFault: Sendable, Hashable {
    /// Read the command, then close the connection without answering: the application's
    /// `SCardTransmit` returns success with 0 bytes, later calls `SCARD_W_REMOVED_CARD`.
    case closeMidAPDU
    /// Never answer. vpcd has no timeout: that `SCardTransmit` and the reader's presence
    /// polling block until the card is removed or stopped. Use it only with a client that
    /// has its own timeout (and then call ``VirtualCard/remove()``).
    case silence
    /// Answer these bytes instead of the personality's (garbage status words, short answers).
    /// An empty array becomes `6F 00`.
    case replace([UInt8])
}

/// One line of the virtual card's log: what crossed the wire, with a monotonic timestamp.
public struct VirtualCardEvent: Sendable, Hashable, CustomStringConvertible {
    /// Microseconds on `CLOCK_MONOTONIC`.
    public var timestampMicros: UInt64
    public var kind: Kind

    public enum Kind: Sendable, Hashable {
        /// vpcd spoke on the card's connection (the first message after connecting): the card
        /// entered the field.
        case connected(port: UInt16)
        /// The connection ended.
        case disconnected(DisconnectReason)
        /// A control byte from vpcd (`00` off, `01` on, `02` reset, `04` get ATR).
        case control(UInt8)
        /// The ATR sent for a `04`.
        case atr([UInt8])
        /// A command APDU from the reader.
        case command([UInt8])
        /// The response APDU sent back.
        case response([UInt8])
        /// An injected fault took effect.
        case fault(VirtualCardFault)
    }

    public enum DisconnectReason: String, Sendable, Hashable {
        /// ``VirtualCard/remove()``.
        case removed
        /// ``VirtualCard/stop()``.
        case stopped
        /// vpcd closed the connection (pcscd stopped) or the socket failed.
        case readerClosed
        /// An injected fault closed it.
        case fault
    }

    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1_000
    }

    public var description: String {
        let what: String
        switch kind {
        case .connected(let port): what = "connected to vpcd :\(port)"
        case .disconnected(let why): what = "disconnected (\(why.rawValue))"
        case .control(let c): what = "control \(String(format: "%02X", c))"
        case .atr(let b): what = "ATR \(b.hexString(separator: " "))"
        case .command(let b): what = "C-APDU \(b.hexString(separator: " "))"
        case .response(let b): what = "R-APDU \(b.hexString(separator: " "))"
        case .fault(let f): what = "fault \(f)"
        }
        return "\(timestampMicros) µs \(what)"
    }
}
