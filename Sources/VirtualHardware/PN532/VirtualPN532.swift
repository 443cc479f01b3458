import Foundation
import Glibc
import NFCBase
import NFCFiles
import Synchronization

/// glibc's pty calls, looked up at run time: Swift's Glibc module hides them behind
/// `_XOPEN_SOURCE`, and VirtualHardware has no C shim.
private enum PTYCalls {
    typealias OpenPT = @convention(c) (Int32) -> Int32
    typealias FDCall = @convention(c) (Int32) -> Int32
    typealias PTSNameR = @convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32
    static func symbol<T>(_ name: String, as type: T.Type) -> T? {
        guard let p = dlsym(nil, name) else { return nil }
        return unsafeBitCast(p, to: type)
    }
    static let posixOpenPT = symbol("posix_openpt", as: OpenPT.self)
    static let grantPT = symbol("grantpt", as: FDCall.self)
    static let unlockPT = symbol("unlockpt", as: FDCall.self)
    static let ptsNameR = symbol("ptsname_r", as: PTSNameR.self)
    /// `ppoll`, for waits finer than `poll`'s milliseconds (the link-timing model's bytes).
    typealias PPoll =
        @convention(c) (
            UnsafeMutablePointer<pollfd>?, nfds_t, UnsafePointer<timespec>?, UnsafeRawPointer?
        ) -> Int32
    static let ppoll = symbol("ppoll", as: PPoll.self)
}

/// A failure of the virtual PN532's pseudo-terminal plumbing: which call failed and `errno`.
public struct VirtualPN532Error: Error, Sendable, Equatable, CustomStringConvertible {
    /// The C call that failed (`posix_openpt`, `grantpt`, `unlockpt`, `ptsname_r`, `open`,
    /// `tcsetattr`, `symlink`, `pipe`).
    public var operation: String
    public var errno: Int32
    /// What is wrong in words, when more than `errno` says it (a link refused).
    public var reason: String? = nil
    public init(operation: String, errno: Int32, reason: String? = nil) {
        self.operation = operation
        self.errno = errno
        self.reason = reason
    }
    public var description: String { "\(operation): \(reason ?? String(cString: strerror(errno)))" }
}

/// One entry of the virtual PN532's wire log.
public struct PN532FrameLogEntry: Sendable, Equatable {
    /// Host link (each way), a bench event, or the chip's RF side (``air``).
    public enum Direction: Sendable, Equatable { case hostToChip, chipToHost, event, air }
    /// Microseconds since ``VirtualPN532/start(ptyPath:chip:timing:)``, monotonic clock.
    public var microseconds: Int64
    public var direction: Direction
    /// The bytes as read or written (for `.event` and `.air`, empty).
    public var bytes: [UInt8]
    /// For `.event`: what happened (card presented, removed, fault, hang-up).
    public var note: String
    /// For `.air`: what went over the air (``PN532Chip/takeAir()``).
    public var air: PN532AirEvent? = nil
}

/// A PN532 on a pseudo-terminal that the real libnfc `pn532_uart` driver talks to.
///
/// `start(ptyPath:)` opens a pty master (`posix_openpt`/`grantpt`/`unlockpt`/`ptsname_r`),
/// opens the slave and puts it in raw mode itself and keeps it open for the fake's lifetime
/// (so libnfc sessions can come and go), creates a symlink at `ptyPath` pointing to the slave
/// and serves the chip (``PN532Chip``) on its own thread. Connect with
/// `pn532_uart:<ptyPath>`. `stop()` ends the thread, closes both ends and removes the link.
/// Every method is thread-safe.
public final class VirtualPN532: Sendable {
    private struct State: ~Copyable {
        var chip = PN532Chip()
        var log: [PN532FrameLogEntry] = []
        var master: Int32 = -1
        var running = false
        /// `stop()` has run (once: after `unplug()` too, which leaves the link and the pipe to it).
        var stopped = false
        var schedule: [(at: ContinuousClock.Instant, action: ScheduledAction)] = []
        /// The link-timing model's clock arithmetic (`timing == .real`).
        var link: PN532LinkSchedule
        /// Told of every log entry (``observeLog(_:)``).
        var logObserver: (@Sendable () -> Void)?
    }
    private enum ScheduledAction: Sendable {
        case present(PN532Card)
        case remove
        /// A finite InAutoPoll's time is up (``PN532Chip/finitePoll``).
        case endPoll(serial: Int)
        /// Bytes the chip writes, held back until a real link would have carried them.
        case send([UInt8])
    }

    private let state: Mutex<State>
    /// `real`: every byte and answer takes as long as on a real PN532 (``PN532LinkTiming``).
    public let timing: PN532LinkTiming
    private let wakePipe: (read: Int32, write: Int32)
    private let slave: Int32
    private let master: Int32
    private let epoch = ContinuousClock.now
    /// The pty slave (e.g. `/dev/pts/7`).
    public let slavePath: String
    /// The symlink created by ``start(ptyPath:chip:timing:)``.
    /// The link made at start (nil: none, the pty is used by its own path ``slavePath``).
    public let linkPath: String?
    private let done = Mutex<Bool>(false)

    private init(
        master: Int32, slave: Int32, slavePath: String, linkPath: String?, pipe: (Int32, Int32),
        timing: PN532LinkTiming
    ) {
        self.state = Mutex(State(link: PN532LinkSchedule(now: .now)))
        self.timing = timing
        self.master = master
        self.slave = slave
        self.slavePath = slavePath
        self.linkPath = linkPath
        self.wakePipe = pipe
    }

    /// Creates the pty, the symlink at `ptyPath` (``/NFCFiles/SymbolicLink``: where nothing is,
    /// or over an old `/dev/pts` link; anything else there is an error; nil: no link) and
    /// starts serving. With `timing` `.real` each answer comes when a
    /// real PN532 on a UART would give it (``PN532LinkTiming``); `.none` answers at once.
    /// Throws ``VirtualPN532Error``.
    public static func start(
        ptyPath: String?, chip: PN532Chip = PN532Chip(), timing: PN532LinkTiming = .none
    ) throws -> VirtualPN532 {
        guard let posixOpenPT = PTYCalls.posixOpenPT, let grantpt = PTYCalls.grantPT,
            let unlockpt = PTYCalls.unlockPT, let ptsname_r = PTYCalls.ptsNameR
        else { throw VirtualPN532Error(operation: "dlsym", errno: ENOSYS) }
        let master = posixOpenPT(O_RDWR | O_NOCTTY)
        guard master >= 0 else { throw VirtualPN532Error(operation: "posix_openpt", errno: errno) }
        var ok = false
        defer { if !ok { close(master) } }
        guard grantpt(master) == 0 else { throw VirtualPN532Error(operation: "grantpt", errno: errno) }
        guard unlockpt(master) == 0 else { throw VirtualPN532Error(operation: "unlockpt", errno: errno) }
        var name = [CChar](repeating: 0, count: 128)
        guard ptsname_r(master, &name, name.count) == 0 else {
            throw VirtualPN532Error(operation: "ptsname_r", errno: errno)
        }
        let slavePath = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let slave = open(slavePath, O_RDWR | O_NOCTTY)
        guard slave >= 0 else { throw VirtualPN532Error(operation: "open", errno: errno) }
        defer { if !ok { close(slave) } }
        var tio = termios()
        guard tcgetattr(slave, &tio) == 0 else { throw VirtualPN532Error(operation: "tcgetattr", errno: errno) }
        cfmakeraw(&tio)
        guard tcsetattr(slave, TCSANOW, &tio) == 0 else {
            throw VirtualPN532Error(operation: "tcsetattr", errno: errno)
        }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw VirtualPN532Error(operation: "pipe", errno: errno) }
        if let ptyPath {
            do { try SymbolicLink.make(ptyPath, to: slavePath, label: ptyPath) } catch {
                close(fds[0])
                close(fds[1])
                throw VirtualPN532Error(operation: "symlink", errno: error.errno ?? EEXIST, reason: error.reason)
            }
        }
        ok = true
        let device = VirtualPN532(
            master: master, slave: slave, slavePath: slavePath, linkPath: ptyPath, pipe: (fds[0], fds[1]),
            timing: timing)
        device.state.withLock {
            $0.chip = chip
            $0.master = master
            $0.running = true
        }
        let thread = Thread { [device] in device.serve() }
        thread.name = "VirtualPN532 \(ptyPath ?? slavePath)"
        thread.start()
        return device
    }

    /// A chip is hardware of its own: it ACKs a frame within about a millisecond whatever its
    /// host is doing, and clients count on it (nfcpy reads the ACK with a 100 ms timeout,
    /// `nfc/clf/pn53x.py` `command`; nfcbench's libnfc Type 2 transport gives a command 100 ms).
    /// The virtual chip shares its host's CPUs, so on a loaded machine the scheduler let it
    /// miss that 100 ms: nfcpy failed with EIO (a 2-core test run beside two compilers, load
    /// 10), and a Type 2 WRITE through libnfc lost the tag (two test suites at once, load 20).
    /// So its thread asks to be real-time (``/NFCBase/ThreadPriority/raiseCallingThread()``:
    /// SCHED_FIFO 1, else nice -10, else unchanged: best effort, said in the README, beside
    /// nfcpy); the thread sleeps in `ppoll` but for the microseconds each frame takes.
    @discardableResult
    static func raiseThisThreadsPriority() -> ThreadPriority.Outcome {
        ThreadPriority.raiseCallingThread()
    }

    /// Names the calling thread `pn532 chip` in the kernel, so `top -H`, `ps -L` and `perf
    /// sched` show the chip's thread by name (``/NFCBase/ThreadName``).
    static func nameThisThread() {
        ThreadName.setCallingThread("pn532 chip")
    }

    /// Puts `card` in the field now.
    public func present(_ card: PN532Card) {
        state.withLock { s in
            let out = s.chip.presentTimed(card)
            record(&s, .event, [], "present UID \(card.uid.map(\.pn532Hex).joined())")
            recordAir(&s)
            emit(&s, out.map { [$0] } ?? [], commandAt: .now)
        }
        wake()
    }

    /// Takes `card` as the card of this run, out of the field (``PN532Chip/load(_:)``):
    /// ``presentAgain()`` puts it in.
    public func load(_ card: PN532Card) {
        state.withLock { s in
            s.chip.load(card)
            record(&s, .event, [], "load UID \(card.uid.map(\.pn532Hex).joined())")
        }
    }

    /// The card that last left the field (or was loaded) comes in now (``PN532Chip/presentAgain()``): the
    /// same tag, its memory as it left, its tag file's faults that fired spent.
    public func presentAgain() {
        state.withLock { s in
            guard s.chip.card == nil, let card = s.chip.cardOutOfField else { return }
            let out = s.chip.presentAgainTimed()
            record(&s, .event, [], "present UID \(card.uid.map(\.pn532Hex).joined()) again")
            recordAir(&s)
            emit(&s, out.map { [$0] } ?? [], commandAt: .now)
        }
        wake()
    }

    /// The card of this run as it is now (its memory after a reader's writes), in the field or
    /// out of it.
    public var currentCard: PN532Card? { state.withLock { $0.chip.currentCard } }

    /// Takes the card out of the field now.
    public func remove() {
        state.withLock { s in
            s.chip.remove()
            record(&s, .event, [], "remove")
        }
    }

    /// Presents `card` after `delay`, and removes it `duration` later if given.
    public func schedule(present card: PN532Card, after delay: Duration, for duration: Duration? = nil) {
        state.withLock { s in
            let at = ContinuousClock.now + delay
            s.schedule.append((at, .present(card)))
            if let duration { s.schedule.append((at + duration, .remove)) }
        }
        wake()
    }

    /// Removes the card after `delay`.
    public func schedule(removeAfter delay: Duration) {
        state.withLock { $0.schedule.append((ContinuousClock.now + delay, .remove)) }
        wake()
    }

    /// An external reader enters the field (target mode): see ``PN532ReaderScript``.
    public func startReader(_ script: PN532ReaderScript) {
        state.withLock { s in
            let out = s.chip.startReader(script)
            record(&s, .event, [], "reader arrives, \(script.steps.count) C-APDUs")
            recordAir(&s)
            send(&s, out)
        }
    }

    /// Queues a wire fault (see ``PN532WireFault``).
    public func inject(_ fault: PN532WireFault) {
        state.withLock { s in
            s.chip.inject(fault)
            record(&s, .event, [], "fault \(fault)")
        }
    }

    /// Closes the pty master as an unplugged reader would: libnfc's next read or write on
    /// the slave fails. The fake serves nothing afterwards; `stop()` still cleans up.
    public func unplug() {
        state.withLock { s in
            record(&s, .event, [], "unplug")
            s.running = false
        }
        wake()
        waitForThread()
        state.withLock { s in
            if s.master >= 0 {
                close(s.master)
                s.master = -1
            }
        }
        close(slave)
    }

    /// Stops serving, closes the pty and removes the symlink. Idempotent.
    public func stop() {
        let first = state.withLock { s in
            defer {
                s.stopped = true
                s.running = false
            }
            return !s.stopped
        }
        guard first else { return }
        wake()
        waitForThread()
        state.withLock { s in
            if s.master >= 0 {
                close(s.master)
                close(slave)
                s.master = -1
            }
        }
        if let linkPath { SymbolicLink.remove(linkPath, ifTo: slavePath) }
        close(wakePipe.read)
        close(wakePipe.write)
    }

    deinit { stop() }

    /// The wire log so far: every read chunk, every frame written, every event (less what
    /// ``takeFrames()`` took).
    public var frameLog: [PN532FrameLogEntry] { state.withLock { $0.log } }

    /// The log's entries since the last take, removed from it: for a follower that prints or
    /// traces them as they come (`virtual pn532`), so the log stays small however long the
    /// chip serves and each look copies only what is new.
    /// Calls `observer` after every entry the log gets (on the chip's thread, holding its
    /// state: keep it to a signal), so a follower can wait for frames instead of polling for
    /// them; `nil` stops it.
    public func observeLog(_ observer: (@Sendable () -> Void)?) {
        state.withLock { $0.logObserver = observer }
    }

    public func takeFrames() -> [PN532FrameLogEntry] {
        state.withLock { s in
            let taken = s.log
            s.log = []
            return taken
        }
    }
    /// The chip's state now (a copy).
    public var chip: PN532Chip { state.withLock { $0.chip } }

    // MARK: serving

    private func wake() {
        var b: UInt8 = 1
        _ = write(wakePipe.write, &b, 1)
    }

    private func waitForThread() {
        while !done.withLock({ $0 }) { usleep(1_000) }
    }

    private func record(
        _ s: inout State, _ direction: PN532FrameLogEntry.Direction, _ bytes: [UInt8], _ note: String = ""
    ) {
        let elapsed = ContinuousClock.now - epoch
        let us = elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000
        s.log.append(PN532FrameLogEntry(microseconds: us, direction: direction, bytes: bytes, note: note))
        s.logObserver?()
    }

    /// Moves the chip's air events into the log, stamped now.
    private func recordAir(_ s: inout State) {
        for event in s.chip.takeAir() {
            record(&s, .air, [], "")
            s.log[s.log.count - 1].air = event
        }
    }

    private func send(_ s: inout State, _ bytes: [UInt8]) {
        guard !bytes.isEmpty, s.master >= 0 else { return }
        record(&s, .chipToHost, bytes)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(s.master, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return
            }
            offset += n
        }
    }

    /// Writes what the chip answered: at once without timing, else each part when a real
    /// link would have delivered its last byte (``PN532LinkSchedule``).
    private func emit(
        _ s: inout State, _ outputs: [PN532ChipOutput], commandAt: ContinuousClock.Instant, baud: Int? = nil
    ) {
        guard timing == .real else {
            send(&s, outputs.flatMap(\.bytes))
            return
        }
        let rate = baud ?? s.chip.serialBaudRate
        for output in outputs {
            let due = s.link.due(output, commandAt: commandAt, baud: rate)
            s.schedule.append((due, .send(output.bytes)))
        }
    }

    /// Waits for the pty or the wake pipe until `deadline` (`nil`: no limit), to the
    /// microsecond where `ppoll` is there.
    private func wait(_ fds: inout [pollfd], until deadline: ContinuousClock.Instant?) -> Int32 {
        guard let deadline else { return poll(&fds, nfds_t(fds.count), -1) }
        let left = max(.zero, deadline - ContinuousClock.now)
        let c = left.components
        if let ppoll = PTYCalls.ppoll {
            var ts = timespec(tv_sec: Int(c.seconds), tv_nsec: Int(c.attoseconds / 1_000_000_000))
            return ppoll(&fds, nfds_t(fds.count), &ts, nil)
        }
        let ms =
            c.seconds * 1000 + c.attoseconds / 1_000_000_000_000_000
            + (c.attoseconds % 1_000_000_000_000_000 > 0 ? 1 : 0)
        return poll(&fds, nfds_t(fds.count), Int32(clamping: ms))
    }

    private func serve() {
        defer { done.withLock { $0 = true } }
        Self.nameThisThread()
        Self.raiseThisThreadsPriority()
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let deadline = state.withLock { s in s.schedule.map(\.at).min() }
            guard state.withLock({ $0.running }) else { return }
            var fds = [
                pollfd(fd: master, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0),
            ]
            let r = wait(&fds, until: deadline)
            guard state.withLock({ $0.running }) else { return }
            if r < 0 && errno != EINTR { return }
            if fds[1].revents & Int16(POLLIN) != 0 { _ = read(wakePipe.read, &buffer, buffer.count) }
            runSchedule()
            if fds[0].revents & Int16(POLLIN) != 0 {
                let n = read(master, &buffer, buffer.count)
                if n > 0 {
                    let chunk = Array(buffer[0..<n])
                    state.withLock { s in
                        record(&s, .hostToChip, chunk)
                        let baud = s.chip.serialBaudRate
                        let complete = s.link.received(chunk.count, at: .now, baud: baud)
                        let aborts = s.chip.aborts
                        let commands = s.chip.commandsTaken
                        let out = s.chip.receiveTimed(chunk)
                        if s.chip.commandsTaken != commands,
                            s.schedule.contains(where: { if case .send = $0.action { true } else { false } })
                        {
                            // A new command while an earlier one's answer is held for the link's
                            // timing: the host gave up on it (and flushes its input before every
                            // command), so it is never sent; libnfc took such a late answer for
                            // the next command's ("Command Code verification failed").
                            s.schedule.removeAll { if case .send = $0.action { true } else { false } }
                            record(&s, .event, [], "an earlier command's answer dropped: the host sent a new command")
                        }
                        if s.chip.aborts != aborts {
                            // The host aborted (its ACK): an answer held back for the link's
                            // timing is never sent. It was, and libnfc took an aborted READ's
                            // answer for its next command's ("Command Code verification failed").
                            s.schedule.removeAll {
                                if case .send(let bytes) = $0.action { bytes != PN532FrameEncoder.ack } else { false }
                            }
                        }
                        recordAir(&s)
                        emit(&s, out, commandAt: complete, baud: baud)
                        // A finite poll started: the chip answers "no target" when its time is up.
                        if let poll = s.chip.finitePoll,
                            !s.schedule.contains(where: {
                                if case .endPoll(poll.serial) = $0.action { true } else { false }
                            })
                        {
                            s.schedule.append((ContinuousClock.now + poll.duration, .endPoll(serial: poll.serial)))
                        }
                    }
                }
            } else if fds[0].revents & Int16(POLLHUP) != 0 {
                // Cannot happen while we hold the slave open; avoid a busy loop anyway.
                usleep(1_000)
            }
        }
    }

    private func runSchedule() {
        state.withLock { s in
            let now = ContinuousClock.now
            let due = s.schedule.filter { $0.at <= now }.sorted { $0.at < $1.at }
            s.schedule.removeAll { $0.at <= now }
            for item in due {
                switch item.action {
                case .present(let card):
                    let out = s.chip.presentTimed(card)
                    record(&s, .event, [], "present UID \(card.uid.map(\.pn532Hex).joined()) (scheduled)")
                    recordAir(&s)
                    emit(&s, out.map { [$0] } ?? [], commandAt: now)
                case .remove:
                    s.chip.remove()
                    record(&s, .event, [], "remove (scheduled)")
                case .endPoll(let serial):
                    let out = s.chip.pollTimeElapsed(serial: serial)
                    emit(
                        &s, out.isEmpty ? [] : [PN532ChipOutput(bytes: out, isAcknowledgement: false, air: .init())],
                        commandAt: now)
                case .send(let bytes):
                    send(&s, bytes)
                }
            }
        }
    }
}
