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
/// clock (``ConformanceEnvironment/asyncAfter(_:on:_:)``). After every event the harness also
/// waits for the main queue (a barrier block), so `DispatchQueue.main.async` blocks, a
/// `DispatchQueue.main` delegate queue and `@MainActor` work the app set off run at that
/// event's instant, and their calls count as the harness's. A call that comes from work the
/// harness did not start (a real-time timer such as `DispatchQueue.asyncAfter`, a
/// `RunLoop` timer, `Task.sleep`, a `Task {}` on the global executor, an async hop to a
/// queue of the app's own), or a Scan that brings no `begin()`, makes the verdict
/// **inconclusive**, with the reason: never a silent pass.
public struct ConformanceHarness: Sendable {
    /// A begin counts as the user's when it comes this soon after a Scan tap (once per tap).
    public var userActionWindow: Duration
    /// The run stops (noted) after this many begins in one scenario: a runaway loop.
    public var maximumBegins: Int
    /// Unused, kept so callers compile: the harness no longer waits in real time for a run to
    /// settle. It runs every hand-off itself on one thread (``/ReaderSession/EmbeddedReaderSessionExecutor``)
    /// until none is left, and awaits the main queue with a barrier block (bounded by
    /// ``mainQueueTimeout``).
    public var settleTimeout: Duration
    /// The 203 rule ("wait for it to end; do not retry in a loop"): more than this many
    /// begins without a user action within ``busyRetryWindow`` after a 203 is a loop.
    /// Documented in `hardware/conformance/FORMAT.md`: 3.
    public var busyRetryLimit: Int
    /// See ``busyRetryLimit``: 10 s.
    public var busyRetryWindow: Duration
    /// The run stops (noted) when more than this many hand-offs (delegate calls, completions,
    /// the app's timers' work) run at one virtual instant: a loop that takes no virtual time,
    /// such as `restartPolling()` after every failed read of a tag that stays in the field.
    public var maximumHandOffsPerInstant: Int
    /// How long (real time) the harness waits for the main queue to run a block before it
    /// notes that this process does not run the main queue.
    public var mainQueueTimeout: Duration = .seconds(30)
    /// False in a process whose main thread never runs the main queue (the nfcbench CLI's
    /// takes signals): the harness then does not wait for it, and a run whose app hands work
    /// to `DispatchQueue.main` is inconclusive, with the reason. True (the default) where the
    /// main queue runs, as in `swift test` and an app's own test process; if it turns out
    /// not to (no barrier block ran within ``mainQueueTimeout``), the run notes it and stops
    /// waiting for the main queue, and its verdict is inconclusive.
    public var waitsForMainQueue = true

    public init(
        userActionWindow: Duration = .seconds(2), maximumBegins: Int = 500, settleTimeout: Duration = .seconds(5),
        busyRetryLimit: Int = 3, busyRetryWindow: Duration = .seconds(10), maximumHandOffsPerInstant: Int = 20_000
    ) {
        self.maximumHandOffsPerInstant = maximumHandOffsPerInstant
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
        await run(scenario, app: makeApp, options: RunOptions()).result
    }

    /// Runs one scenario with a fresh app, with what the explorer needs beside the result.
    ///
    /// Each run's system is current in scope on the run's task (`NFCReaderSystem.withCurrent`),
    /// so runs side by side in one process each see their own. A run that waits for the main
    /// queue (``waitsForMainQueue``) also installs its system process-wide and claims the main
    /// queue, so that what the app runs there (a `DispatchQueue.main.async` block) finds it:
    /// such runs take turns (``InstallGate``); runs that do not wait for the main queue (the
    /// CLI's) run in parallel with any other.
    ///
    /// Why the main-queue runs cannot have a per-run context instead (issue 35): the shared
    /// resource is the main queue itself, one per process. A block the app enqueues there
    /// itself (`DispatchQueue.main.async { NFCTagReaderSession(…).begin() }`, a `RunLoop.main`
    /// timer) runs on the main thread with no Swift task, so no task-local reaches it, and
    /// nothing in the block says which run enqueued it. There, `NFCReaderSystem.current` (what
    /// Core NFC's initialisers, which take no system, use) can only be the one process-wide
    /// slot of `NFCReaderSystem.install`, and `HostWork.isActive` only the process-wide main
    /// claim: two such runs at once would put one run's sessions on the other's reader, clock
    /// and recorder. The hand-offs the harness routes to the main queue itself (a main-queue
    /// delegate's calls) do carry their run's system (``HandOffs`` binds it), but the app's own
    /// blocks cannot, so these runs stay serialised.
    func run(_ scenario: ConformanceScenario, app makeApp: AppFactory, options: RunOptions) async -> RunOutput {
        // A run on a virtual clock may finish without ever suspending: yield once per run so
        // that a long exploration (thousands of runs) leaves the caller's other tasks their
        // share of the cooperative pool. The run's result does not depend on when it starts.
        await Task.yield()
        guard waitsForMainQueue else { return await runInstalled(scenario, makeApp, options) }
        // Serialised on purpose: see above (one main queue per process, no run identity in its blocks).
        return await InstallGate.shared.withExclusive {
            await runInstalled(scenario, makeApp, options)
        }
    }

    private func runInstalled(_ scenario: ConformanceScenario, _ makeApp: AppFactory, _ options: RunOptions) async
        -> RunOutput
    {
        let clock = ConformanceClock()
        let waitsForMain = waitsForMainQueue
        let handOffs = HandOffs(clock: clock, waitsForMain: waitsForMain)
        let hops = PendingHops(executor: handOffs)
        let recorder = ConformanceRecorder(
            scenario: scenario.name, clock: clock, userActionWindow: userActionWindow,
            busyRetryLimit: busyRetryLimit, busyRetryWindow: busyRetryWindow,
            keepRecords: !scenario.expectEvents.isEmpty, timeline: options.timeline)
        let reader = ConformanceReader(clock: clock, pollingOwner: { recorder.lastBegun })
        // The phone's reported turnover (2.5 s from invalidate() to its ending, a same-app
        // begin() kicking the active session out): restart logic is what the harness judges.
        var model = ReaderSystemModel.reportedTurnover
        // The iPhone's Type 2 discovery (0.69 s of frames) before a Type 2 tag is reported.
        model.type2Probe = .iphone
        model.busyPolicy = scenario.busyPolicy
        model.iso7816SelectIdentifiers = scenario.selectIdentifiers
        model.readerSessionFormats = scenario.readerSessionFormats
        model.hasUsageDescription = scenario.hasUsageDescription
        model.availability = scenario.availability
        let system = NFCReaderSystem(
            backend: reader.frontend, clock: clock, arbiter: SessionArbiter(fileLocks: false),
            thermal: scenario.thermal ? ThermalModel() : .disabled, model: model,
            observer: { recorder.trace($0) }, callObserver: { recorder.call($0) }, executor: handOffs)
        handOffs.bind(system)
        if waitsForMain {
            // The main queue is the harness's during the run: it waits for the main queue after
            // every event, so the app's DispatchQueue.main blocks run at that event's instant.
            NFCReaderSystem.install(system)
            HostWork.claimMainQueue(true)
        }
        defer {
            if waitsForMain {
                HostWork.claimMainQueue(false)
                NFCReaderSystem.install(nil)
            }
        }
        return await NFCReaderSystem.withCurrent(system) {
            await drive(scenario, makeApp, options, clock, handOffs, hops, recorder, reader, system)
        }
    }

    /// The run itself, with its system current (``runInstalled(_:_:_:)``).
    private func drive(
        _ scenario: ConformanceScenario, _ makeApp: AppFactory, _ options: RunOptions, _ clock: ConformanceClock,
        _ handOffs: HandOffs, _ hops: PendingHops, _ recorder: ConformanceRecorder, _ reader: ConformanceReader,
        _ system: NFCReaderSystem
    ) async -> RunOutput {
        let waitsForMain = waitsForMainQueue
        let env = ConformanceEnvironment(system: system, clock: clock, hops: hops)
        let app = HostWork.run { makeApp(env) }
        let other = OtherApp(system: system)
        var appState = NFCReaderSystem.AppState.foreground
        var phone = scenario.backgroundReading.map(BackgroundPhone.init)

        // Runs what one event set off until nothing is left, on this thread: the hand-offs
        // (delegate calls, pushed reader events, tag I/O, the app's timers' work), then what
        // the app put on the main queue in answer, then what that set off, and so on. Nothing
        // here polls or sleeps: the session's polling reaches it pushed (the reader is an
        // in-memory field), and the main queue is awaited with one barrier block at a time.
        // False when the app ran away at one instant (a loop in no virtual time).
        var mainQueueRuns = waitsForMain
        func settle() async -> Bool {
            var ran = 0
            var barriers = 0
            var needsBarrier = true
            while true {
                let n = handOffs.drain(limit: maximumHandOffsPerInstant + 1 - ran)
                ran += n
                if ran > maximumHandOffsPerInstant || barriers > maximumHandOffsPerInstant {
                    recorder.note(
                        "stopped at t=\(format(clock.now)): runaway (more than \(maximumHandOffsPerInstant) delegate calls, completions and timers' work at one instant)"
                    )
                    return false
                }
                if n > 0 { needsBarrier = true }
                // Where the main queue does not run, its hand-offs are noted at the end instead.
                guard mainQueueRuns else { return true }
                if !needsBarrier && handOffs.isEmpty { return true }
                // The main queue: what the app enqueued there in answer (UI updates with
                // DispatchQueue.main.async, MainActor tasks, a main-queue delegate's calls)
                // runs now, before a block the harness enqueues after it.
                barriers += 1
                if await MainQueueBarrier.pass(within: mainQueueTimeout) {
                    needsBarrier = false
                } else {
                    mainQueueRuns = false
                    recorder.note(
                        "the main queue did not run within \(mainQueueTimeout) of real time at t=\(format(clock.now)): this process does not run DispatchQueue.main (a blocked main thread), so what the app does there is missing from the verdict"
                    )
                    return true
                }
            }
        }

        var index = 0
        var previousStep = Duration.zero
        var iterations = 0
        var situation: RunSituation? = nil
        var alive = await settle()
        while alive {
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
                case .afterPrevious(let d): stepTime = previousStep + d
                case .afterSessionEnd(let d):
                    if !recorder.appSessionActive { stepTime = max(previousStep, (recorder.lastAppEnd ?? .zero) + d) }
                }
            }
            let horizon = min(stepTime ?? scenario.duration, scenario.duration)
            if let next = clock.nextDeadline, next <= horizon {
                // Timers due at a step's instant fire before the step.
                HostWork.run { _ = clock.fireNext(upTo: horizon) }
                alive = await settle()
                continue
            }
            guard let due = stepTime, due <= scenario.duration else {
                HostWork.run { _ = clock.fireNext(upTo: scenario.duration) }
                break
            }
            HostWork.run { _ = clock.fireNext(upTo: due) }
            let step = scenario.steps[index]
            if options.timeline { recorder.step(index, scenario.stepJSON(index)) }
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
                    case .tapNotification:
                        Self.tapNotification(
                            &phone, app: app, system: system, appState: &appState, recorder: recorder, now: clock.now)
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
                case .heat(let h): system.addHeat(h)
                }
            case .otherAppSession(let length):
                recorder.expectForeignBegin()
                HostWork.run { other.begin(for: length, clock: clock) }
            case .present(let list):
                var batch: [(name: String, file: TagFile, faults: [TagFault])] = []
                var tagNames: [String] = []
                for item in list {
                    if let file = scenario.tags[item.tag] {
                        batch.append((item.name, file, item.faults))
                        tagNames.append(item.tag)
                    } else {
                        recorder.note("tag '\(item.tag)' was not loaded")
                    }
                }
                // Background reading looks at the tags as they enter, unless a session is in progress.
                let inProgress = system.sessionInProgress
                do { try reader.present(batch, tagNames: tagNames) } catch {
                    recorder.note("tag could not be presented: \(error)")
                }
                if phone != nil {
                    for e in phone!.present(batch, sessionInProgress: inProgress, at: clock.now) {
                        recorder.background(e)
                    }
                }
            case .remove(let name):
                reader.remove(name)
            }
            alive = await settle()
            if alive, index - 1 == options.situationAfterStep {
                situation = RunSituation(
                    recorder: recorder.situation(now: clock.now, quickRestartWindow: system.model.quickRestartWindow),
                    timers: clock.armedDeadlines.map { $0 - clock.now }, appState: system.appState,
                    field: reader.tagsInField, busyPolicy: system.busyPolicy,
                    nextLimit: Self.limitBucket(system.thermalModel.decision(at: clock.now)))
            }
        }
        if handOffs.unwaitedMainHandOffs > 0 {
            recorder.note(
                "the app handed \(handOffs.unwaitedMainHandOffs) piece(s) of work to DispatchQueue.main (its delegate queue, or through the environment), which this process does not run: what the app did there is missing from the verdict; run it where the main queue runs (swift test) or use its own serial queue"
            )
        }
        recorder.freeze()
        let result = recorder.result(description: scenario.description, duration: scenario.duration, scenario: scenario)
        return RunOutput(result: result, situation: situation, timeline: recorder.timeline)
    }

    /// The limit a `begin()` would get now, to the whole second (nil: refused).
    private static func limitBucket(_ d: ThermalModel.Decision) -> Int64? {
        if case .granted(let l) = d { return l.components.seconds }
        return nil
    }
}

/// What a run gives beyond its result (``ConformanceExplorer``'s needs).
struct RunOptions: Sendable {
    /// Capture the run's situation right after this step (0-based) settled.
    var situationAfterStep: Int? = nil
    /// Keep the replay's lines (steps, the app's trace records, breaches).
    var timeline = false
}

struct RunOutput: Sendable {
    var result: ConformanceResult
    /// Nil unless asked for and the step was reached.
    var situation: RunSituation?
    var timeline: [ConformanceReplayLine]
}

/// Everything a run shows that could change what comes next, without absolute time or
/// history: the judging's state, timers due (relative to now), the app's foreground state,
/// the tags in the field, the busy policy and the thermal model's next limit. Two runs in
/// the same situation are taken to be in the same state (``ConformanceExplorer``).
struct RunSituation: Hashable {
    var recorder: RecorderSituation
    var timers: [Duration]
    var appState: NFCReaderSystem.AppState
    var field: [String]
    var busyPolicy: ReaderSystemModel.BusyPolicy
    var nextLimit: Int64?
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
private final class OtherApp: NSObject, NFCTagReaderSessionDelegate, Sendable {
    let system: NFCReaderSystem
    private let sessions = Mutex<[NFCTagReaderSession]>([])

    init(system: NFCReaderSystem) {
        self.system = system
    }

    func begin(for length: Duration, clock: ConformanceClock) {
        // Another app's session: a begin() of the app under test meets the busy policy, not a kick-out.
        guard
            let s = system.asApp(
                "another app",
                { NFCTagReaderSession(pollingOption: .iso14443, delegate: self, queue: nil, system: system) })
        else {
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

/// A block on the main queue, awaited: once it has run, so has everything enqueued there
/// before it. No polling: the block resumes the waiting task; a real-time timer resumes it
/// with false after `timeout` (a process whose main thread never runs the main queue).
enum MainQueueBarrier {
    private final class Once: Sendable {
        private let k: Mutex<CheckedContinuation<Bool, Never>?>
        init(_ k: CheckedContinuation<Bool, Never>) { self.k = Mutex(k) }
        func resume(_ value: Bool) {
            let c = k.withLock { c in
                defer { c = nil }
                return c
            }
            c?.resume(returning: value)
        }
    }

    static func pass(within timeout: Duration) async -> Bool {
        await withCheckedContinuation { (k: CheckedContinuation<Bool, Never>) in
            let once = Once(k)
            DispatchQueue.main.async { once.resume(true) }
            let c = timeout.components
            let ns = c.seconds * 1_000_000_000 + c.attoseconds / 1_000_000_000
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: ns))) { once.resume(false) }
        }
    }
}

/// Serialises runs that install their system as `NFCReaderSystem.current` process-wide (those
/// that wait for the main queue, which has no task to carry a system in scope). The two
/// process-wide values it guards, `NFCReaderSystem.install`'s slot and `HostWork`'s main-queue
/// claim, exist because the main queue is one per process and its blocks carry no run: a
/// task-local context cannot replace them (``ConformanceHarness``'s `run(_:app:options:)`).
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
