import Dispatch
import NFCTags
import ReaderSession
import Synchronization

/// Runs conformance scenarios against an app and judges the Core NFC calls it makes.
///
/// Each scenario gets its own environment: a ``ConformanceClock`` (virtual time), a
/// ``ConformanceReader`` (tags in the field through the NFCTags emulation cores), an
/// in-process arbiter, the thermal model (on unless the scenario switches it off), and an
/// `NFCReaderSystem` installed as `NFCReaderSystem.current` for the run (runs that install
/// are serialised process-wide). The harness steps from event to event — scenario steps
/// and armed timers in time order — and lets everything each one set off settle (delegate
/// calls, tag I/O, the app's `asyncAfter`) before the next, so a run is deterministic.
///
/// It judges only what it observes: each `begin()` and the user action behind it, sheets
/// presented, tag operations and their polling generation, calls on invalidated sessions
/// (see ``ConformanceRule``). Time is virtual: the app's timers must run on the harness's
/// clock (``ConformanceEnvironment/asyncAfter(_:on:_:)``). A call that comes from work the
/// harness did not start (a real-time timer, `DispatchQueue.main`, an async hop of the
/// app's own), a delegate queue that is `DispatchQueue.main`, or a Scan that brings no
/// `begin()` makes the verdict **inconclusive**, with the reason: never a silent pass.
public struct ConformanceHarness: Sendable {
    /// A begin counts as the user's when it comes this soon after a Scan tap (once per tap).
    public var userActionWindow: Duration
    /// The run stops (noted) after this many begins in one scenario: a runaway loop.
    public var maximumBegins: Int
    /// How long (real time) the harness waits for the app to settle after one event before
    /// noting it and moving on.
    public var settleTimeout: Duration
    /// The 203 rule ("wait for it to end; do not retry in a loop"): more than this many
    /// begins without a user action within ``busyRetryWindow`` after a 203 is a loop.
    /// Documented in `hardware/conformance/FORMAT.md`: 3.
    public var busyRetryLimit: Int
    /// See ``busyRetryLimit``: 10 s.
    public var busyRetryWindow: Duration

    public init(
        userActionWindow: Duration = .seconds(2), maximumBegins: Int = 500, settleTimeout: Duration = .seconds(5),
        busyRetryLimit: Int = 3, busyRetryWindow: Duration = .seconds(10)
    ) {
        self.userActionWindow = userActionWindow
        self.maximumBegins = maximumBegins
        self.settleTimeout = settleTimeout
        self.busyRetryLimit = busyRetryLimit
        self.busyRetryWindow = busyRetryWindow
    }

    /// Creates the app under test for one scenario run.
    public typealias AppFactory = @Sendable (ConformanceEnvironment) -> any ConformanceApp

    /// Runs every scenario in order with a fresh app each.
    public func run(_ scenarios: [ConformanceScenario], app: AppFactory) async -> [ConformanceResult] {
        var out: [ConformanceResult] = []
        for s in scenarios { out.append(await run(s, app: app)) }
        return out
    }

    /// Runs one scenario with a fresh app.
    public func run(_ scenario: ConformanceScenario, app makeApp: AppFactory) async -> ConformanceResult {
        await InstallGate.shared.withExclusive {
            await runInstalled(scenario, makeApp)
        }
    }

    private func runInstalled(_ scenario: ConformanceScenario, _ makeApp: AppFactory) async -> ConformanceResult {
        let clock = ConformanceClock()
        let hops = PendingHops()
        let recorder = ConformanceRecorder(
            scenario: scenario.name, clock: clock, userActionWindow: userActionWindow,
            busyRetryLimit: busyRetryLimit, busyRetryWindow: busyRetryWindow)
        let reader = ConformanceReader(clock: clock, pollingOwner: { recorder.lastBegun })
        var model = ReaderSystemModel()
        model.busyPolicy = scenario.busyPolicy
        model.iso7816SelectIdentifiers = scenario.selectIdentifiers
        let system = NFCReaderSystem(
            backend: reader.frontend, clock: clock, arbiter: SessionArbiter(fileLocks: false),
            thermal: scenario.thermal ? ThermalModel() : .disabled, model: model,
            observer: { recorder.trace($0) }, callObserver: { recorder.call($0) })
        NFCReaderSystem.install(system)
        defer { NFCReaderSystem.install(nil) }
        let env = ConformanceEnvironment(system: system, clock: clock, hops: hops)
        let app = HostWork.run { makeApp(env) }
        let other = OtherApp(system: system)
        var appState = NFCReaderSystem.AppState.foreground

        func settle() async {
            let start = ContinuousClock.now
            var spins = 0
            while true {
                let e1 = reader.eventCount
                let h1 = hops.started
                let idle = reader.isIdle(ended: recorder.endedSessions) && hops.count == 0 && system.pendingWork == 0
                if idle && hops.started == h1 && reader.eventCount == e1 { return }
                spins += 1
                if spins < 64 { await Task.yield() } else { try? await Task.sleep(for: .microseconds(100)) }
                if ContinuousClock.now - start > settleTimeout {
                    recorder.note("did not settle within \(settleTimeout) of real time at t=\(format(clock.now))")
                    return
                }
            }
        }

        var index = 0
        var previousStep = Duration.zero
        var iterations = 0
        await settle()
        while true {
            iterations += 1
            if recorder.appBegins > maximumBegins || iterations > 200_000 {
                recorder.note("stopped at t=\(format(clock.now)): runaway (\(recorder.appBegins) begins)")
                break
            }
            // When the next step is due (nil: waiting for a session to end, or no step left).
            var stepTime: Duration? = nil
            if index < scenario.steps.count {
                switch scenario.steps[index].when {
                case .at(let t): stepTime = max(t, previousStep)
                case .afterSessionEnd(let d):
                    if !recorder.appSessionActive { stepTime = max(previousStep, (recorder.lastAppEnd ?? .zero) + d) }
                }
            }
            let horizon = min(stepTime ?? scenario.duration, scenario.duration)
            if let next = clock.nextDeadline, next <= horizon {
                // Timers due at a step's instant fire before the step.
                HostWork.run { _ = clock.fireNext(upTo: horizon) }
                await settle()
                continue
            }
            guard let due = stepTime, due <= scenario.duration else {
                HostWork.run { _ = clock.fireNext(upTo: scenario.duration) }
                break
            }
            HostWork.run { _ = clock.fireNext(upTo: due) }
            let step = scenario.steps[index]
            index += 1
            previousStep = due
            switch step.action {
            case .user(let u):
                recorder.userAction(u)
                HostWork.run {
                    switch u {
                    case .scan(let request): app.scanTapped(request)
                    case .done: system.userTappedDone()
                    case .background:
                        system.appDidEnterBackground()
                        app.didEnterBackground()
                        appState = .background
                    case .foreground:
                        system.appDidBecomeActive()
                        if appState == .background { app.willEnterForeground() }
                        app.didBecomeActive()
                        appState = .foreground
                    case .inactive:
                        if appState == .background {
                            app.willEnterForeground()
                        } else {
                            app.willResignActive()
                        }
                        system.appWillResignActive()
                        appState = .inactive
                    }
                }
            case .system(let action):
                recorder.systemAction(action)
                switch action {
                case .terminate: system.terminateSessions()
                case .terminateNextBegin: system.terminateNextBegin()
                case .busyPolicy(let p): system.setBusyPolicy(p)
                }
            case .otherAppSession(let length):
                recorder.expectForeignBegin()
                HostWork.run { other.begin(for: length, clock: clock) }
            case .present(let list):
                var batch: [(name: String, file: TagFile, faults: [TagFault])] = []
                for item in list {
                    if let file = scenario.tags[item.tag] {
                        batch.append((item.name, file, item.faults))
                    } else {
                        recorder.note("tag '\(item.tag)' was not loaded")
                    }
                }
                do { try reader.present(batch) } catch { recorder.note("tag could not be presented: \(error)") }
            case .remove(let name):
                reader.remove(name)
            }
            await settle()
        }
        if hops.mainQueueHops > 0 {
            recorder.note(
                "the app handed \(hops.mainQueueHops) piece(s) of work to DispatchQueue.main through the environment: a test process may never run the main queue, so what the app did there may be missing; use its own serial queue"
            )
        }
        recorder.freeze()
        return recorder.result(description: scenario.description, duration: scenario.duration, scenario: scenario)
    }
}

func format(_ d: Duration) -> String {
    let c = d.components
    let ms = c.seconds * 1000 + c.attoseconds / 1_000_000_000_000_000
    let sign = ms < 0 ? "-" : ""
    let a = abs(ms)
    let frac = String(a % 1000)
    return "\(sign)\(a / 1000).\(String(repeating: "0", count: 3 - frac.count))\(frac) s"
}

/// Another app's reader session: begins when told, ends itself after its length. The
/// harness excludes it from judging.
private final class OtherApp: NFCTagReaderSessionDelegate, @unchecked Sendable {
    let system: NFCReaderSystem
    private let sessions = Mutex<[NFCTagReaderSession]>([])

    init(system: NFCReaderSystem) {
        self.system = system
    }

    func begin(for length: Duration, clock: ConformanceClock) {
        guard let s = NFCTagReaderSession(pollingOption: .iso14443, delegate: self, queue: nil, system: system) else {
            return
        }
        sessions.withLock { $0.append(s) }
        s.alertMessage = "Another app is reading"
        s.begin()
        _ = clock.schedule(at: clock.now + length) { s.invalidate() }
    }

    func tagReaderSession(_ session: NFCTagReaderSession, didDetect tags: [NFCTag]) {}
    func tagReaderSession(_ session: NFCTagReaderSession, didInvalidateWithError error: any Error) {}
}

/// Serialises runs that install their system as `NFCReaderSystem.current`.
final class InstallGate: Sendable {
    static let shared = InstallGate()
    private struct State {
        var busy = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    func withExclusive<T: Sendable>(_ body: () async -> T) async -> T {
        await withCheckedContinuation { (k: CheckedContinuation<Void, Never>) in
            let now: Bool = state.withLock { s in
                if s.busy {
                    s.waiters.append(k)
                    return false
                }
                s.busy = true
                return true
            }
            if now { k.resume() }
        }
        let r = await body()
        let next: CheckedContinuation<Void, Never>? = state.withLock { s in
            if s.waiters.isEmpty {
                s.busy = false
                return nil
            }
            return s.waiters.removeFirst()
        }
        next?.resume()
        return r
    }
}
