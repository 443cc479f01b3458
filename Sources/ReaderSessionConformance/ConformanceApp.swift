public import Dispatch
public import ReaderSession
import Synchronization

/// What the user asks for when tapping Scan.
public struct ScanRequest: Sendable, Hashable {
    /// Which Core NFC session the feature uses.
    public enum Session: String, Sendable, Hashable, CaseIterable {
        /// `NFCNDEFReaderSession`.
        case ndef
        /// `NFCTagReaderSession` (ISO 14443), with `iso7816SelectIdentifiers`.
        case tag
    }
    /// How many tags the user means to read in this session (a guided sequence when > 1).
    public var tagCount: Int
    /// True when the app is asked for tag objects (read-write NDEF or tag session) rather
    /// than messages; always true for a sequence.
    public var readWrite: Bool
    public var session: Session
    /// Frames the feature sends to each tag after reading it: `sendMiFareCommand` on a
    /// MIFARE tag, `sendCommand(apdu:)` on an ISO 7816 tag (a "read the signature" or
    /// "configure the tag" feature).
    public var commands: [[UInt8]]
    /// The session configuration's `iso7816SelectIdentifiers` (empty: all the app declares).
    public var selectIdentifiers: [String]
    /// Read every tag found together, one after the other (connect, read, next), instead of
    /// asking the user to present one.
    public var readAll: Bool
    /// Time between two commands (a slow, long exchange with one tag).
    public var commandInterval: Duration

    public init(
        tagCount: Int = 1, readWrite: Bool = false, session: Session = .ndef, commands: [[UInt8]] = [],
        selectIdentifiers: [String] = [], readAll: Bool = false, commandInterval: Duration = .zero
    ) {
        self.tagCount = max(1, tagCount)
        self.session = session
        self.readWrite = readWrite || tagCount > 1 || session == .tag
        self.commands = commands
        self.selectIdentifiers = selectIdentifiers
        self.readAll = readAll
        self.commandInterval = commandInterval
    }
}

/// The app under test, as the harness sees it: ordinary code behind the three things a
/// user does to it. The harness calls these from its own task, one at a time, never
/// concurrently with each other; the app hops to its own queue if it needs to.
///
/// The app creates Core NFC-shaped sessions itself with the public initialisers
/// (`NFCNDEFReaderSession(delegate:queue:invalidateAfterFirstRead:)`,
/// `NFCTagReaderSession(pollingOption:delegate:queue:)`), against the system the harness
/// installs (``/ReaderSession/NFCReaderSystem/current``, or ``ConformanceEnvironment/system``), and waits
/// with ``ConformanceEnvironment/asyncAfter(_:on:_:)`` (virtual time) rather than
/// `DispatchQueue.asyncAfter` (real time, invisible to the harness). Delegate queues may be
/// the app's own serial queues, `nil` or `DispatchQueue.main`; the harness waits for the
/// main queue after every event, so UI updates through `DispatchQueue.main.async` run at the
/// event's instant. Work the app hands to its own queues with `async` outside these paths,
/// and `Task {}` work on the global executor, is not waited for: use
/// ``ConformanceEnvironment/async(on:_:)``.
public protocol ConformanceApp: AnyObject, Sendable {
    /// The user taps the app's Scan button (UIKit: a button action).
    func scanTapped(_ request: ScanRequest)
    /// UIKit `sceneDidEnterBackground(_:)`: the app left the foreground.
    func didEnterBackground()
    /// UIKit `sceneWillEnterForeground(_:)`: the app is coming back.
    func willEnterForeground()
    /// UIKit `sceneWillResignActive(_:)`: still in the foreground, no longer active.
    func willResignActive()
    /// UIKit `sceneDidBecomeActive(_:)`.
    func didBecomeActive()
    /// UIKit `scene(_:continue:)` (or `application(_:continue:restorationHandler:)`): the user
    /// tapped a background-read notification for one of the app's universal links, and the
    /// system hands the app the tag's NDEF message (`userActivity.ndefMessagePayload`). From
    /// the background it comes between `willEnterForeground()` and `didBecomeActive()`.
    /// The default does nothing (an app that does not handle background reads).
    func continueUserActivity(_ userActivity: NSUserActivity)
}

extension ConformanceApp {
    public func willResignActive() {}
    public func didBecomeActive() {}
    public func continueUserActivity(_ userActivity: NSUserActivity) {}
}

/// What the harness gives an app under test: the reader system its sessions run against
/// and virtual-time helpers. One environment per scenario run.
public final class ConformanceEnvironment: Sendable {
    /// The system the scenario runs (also ``/ReaderSession/NFCReaderSystem/current`` on the run's
    /// task, in its hand-offs and in the tasks the app starts with `Task {}`, while the scenario runs).
    public let system: NFCReaderSystem
    let clock: ConformanceClock
    let hops: PendingHops

    init(system: NFCReaderSystem, clock: ConformanceClock, hops: PendingHops) {
        self.system = system
        self.clock = clock
        self.hops = hops
    }

    /// Virtual time since the scenario's start.
    public var now: Duration { clock.now }

    /// `DispatchQueue.asyncAfter` in virtual time: runs `work` on `queue` once `delay` has
    /// passed on the scenario's clock, unless the returned timer is cancelled first.
    @discardableResult
    public func asyncAfter(_ delay: Duration, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void)
        -> ReaderSessionTimer
    {
        let hops = self.hops
        return clock.schedule(at: clock.now + max(.zero, delay)) { hops.async(on: queue, work) }
    }

    /// `queue.async(work)`, counted so the harness waits for it before moving time on.
    public func async(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        hops.async(on: queue, work)
    }
}

/// Hand-offs the harness itself started (app timers, the other app's delegate); their work
/// is marked as the host's (``ReaderSession/HostWork``) and runs through the run's
/// ``HandOffs``.
final class PendingHops: Sendable {
    private let counter = AtomicCounter()
    private let total = AtomicCounter()
    private let executor: HandOffs
    init(executor: HandOffs) { self.executor = executor }
    /// Hand-offs in flight.
    var count: Int { counter.value }
    /// Hand-offs ever started.
    var started: Int { total.value }
    func async(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        total.add(1)
        counter.add(1)
        executor.async(on: queue) {
            HostWork.run { work() }
            self.counter.add(-1)
        }
    }
}

/// A run's asynchronous hand-offs (the session runtime's, through
/// ``ReaderSession/ReaderSessionExecutor``, and the harness's own): an
/// ``ReaderSession/EmbeddedReaderSessionExecutor`` that the harness runs on its own thread,
/// each job on its queue (`queue.sync`), serially with whatever else runs there, in the order
/// handed over, with no thread hop. `DispatchQueue.main`'s go to the main queue (`async`),
/// marked as the host's work and counted; the harness waits for them with a barrier block.
final class HandOffs: ReaderSessionExecutor {
    private let embedded: EmbeddedReaderSessionExecutor
    private let system = Mutex<NFCReaderSystem?>(nil)
    private let onMain = AtomicCounter()
    private let mainUnwaited = AtomicCounter()
    /// False where the main queue does not run (the harness does not wait for it): main-queue
    /// hand-offs are then only counted, for the note.
    let waitsForMain: Bool

    init(clock: ManualClock, waitsForMain: Bool = true) {
        self.embedded = EmbeddedReaderSessionExecutor(clock: clock)
        self.waitsForMain = waitsForMain
    }

    /// The run's system, current (`NFCReaderSystem.withCurrent`) in the main queue's hand-offs:
    /// the main thread has no task to carry the run's scope.
    func bind(_ system: NFCReaderSystem) { self.system.withLock { $0 = system } }

    /// Hand-offs sent to a main queue that the harness does not wait for.
    var unwaitedMainHandOffs: Int { mainUnwaited.value }

    func async(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        if queue.label == DispatchQueue.main.label {
            let system = self.system.withLock { $0 }
            guard waitsForMain else {
                mainUnwaited.add(1)
                return queue.async { NFCReaderSystem.withCurrent(system) { work() } }
            }
            onMain.add(1)
            return queue.async {
                NFCReaderSystem.withCurrent(system) { HostWork.run { work() } }
                self.onMain.add(-1)
            }
        }
        embedded.async(on: queue, work)
    }

    /// True when nothing waits: no hand-off in the list, none on the main queue.
    var isEmpty: Bool { embedded.isIdle && onMain.value == 0 }

    /// Runs the hand-offs waiting now and those they hand over, at most `limit` (a runaway
    /// loop at one instant stops there); returns how many ran. Call it from one thread only.
    func drain(limit: Int = .max) -> Int { embedded.run(limit: limit) }
}
