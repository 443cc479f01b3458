import Dispatch
import ReaderSession
import ReaderSessionConformance
import Synchronization
import Testing

/// An app that creates its session with Core NFC's initialiser (no system argument) and notes
/// which system it got: the run's own, whatever other runs are doing.
private final class CurrentApp: NSObject, ConformanceApp, NFCTagReaderSessionDelegate, @unchecked Sendable {
    let env: ConformanceEnvironment
    let queue = DispatchQueue(label: "current-app")
    private var session: NFCTagReaderSession?
    private let sawOwn = Mutex<[Bool]>([])

    init(_ env: ConformanceEnvironment) { self.env = env }

    /// For each session made: was `NFCReaderSystem.current` this run's system?
    var ownSystem: [Bool] { sawOwn.withLock { $0 } }

    func scanTapped(_ request: ScanRequest) {
        queue.sync {
            let own = NFCReaderSystem.current === env.system
            sawOwn.withLock { $0.append(own) }
            session = NFCTagReaderSession(pollingOption: .iso14443, delegate: self, queue: queue)
            session?.begin()
        }
    }
    func didEnterBackground() {}
    func willEnterForeground() {}
    func tagReaderSession(_ session: NFCTagReaderSession, didDetect tags: [NFCTag]) { session.invalidate() }
    func tagReaderSession(_ session: NFCTagReaderSession, didInvalidateWithError error: any Error) {}
}

/// An app that makes and begins its session in a block it puts on the main queue itself (a
/// `DispatchQueue.main.async` from a Scan tap), and notes which system Core NFC's initialiser
/// found there: a block with no task, which no task-local reaches.
private final class MainQueueApp: NSObject, ConformanceApp, NFCTagReaderSessionDelegate, @unchecked Sendable {
    let env: ConformanceEnvironment
    private let sessions = Mutex<[NFCTagReaderSession]>([])
    private let sawOwn = Mutex<[Bool]>([])

    init(_ env: ConformanceEnvironment) { self.env = env }

    /// For each session made: was `NFCReaderSystem.current` this run's system?
    var ownSystem: [Bool] { sawOwn.withLock { $0 } }

    func scanTapped(_ request: ScanRequest) {
        DispatchQueue.main.async { [self] in
            let own = NFCReaderSystem.current === env.system
            sawOwn.withLock { $0.append(own) }
            if let session = NFCTagReaderSession(pollingOption: .iso14443, delegate: self, queue: DispatchQueue.main) {
                sessions.withLock { $0.append(session) }
                session.begin()
            }
        }
    }
    func didEnterBackground() {}
    func willEnterForeground() {}
    func tagReaderSession(_ session: NFCTagReaderSession, didDetect tags: [NFCTag]) { session.invalidate() }
    func tagReaderSession(_ session: NFCTagReaderSession, didInvalidateWithError error: any Error) {}
}

/// The apps the runs made.
private final class Made<App: Sendable>: Sendable {
    private let list = Mutex<[App]>([])
    func add(_ app: App) { list.withLock { $0.append(app) } }
    var all: [App] { list.withLock { $0 } }
}

/// Scan at 0 s, and again after each ending: three sessions that time out (201).
private let threeTimeouts = """
    {"format": "nfcbench-conformance", "version": 1, "duration_ms": 240000, "thermal": false,
     "steps": [{"at_ms": 0, "user": "scan"}, {"after_end_ms": 4000, "user": "scan"},
               {"after_end_ms": 4000, "user": "scan"}],
     "expect_endings": [201]}
    """

@Suite("Conformance runs side by side in one process: each run's system is current in its own scope")
struct ParallelRunsTests {
    @Test("Eight runs at once that do not wait for the main queue: each app's sessions run on its own system")
    func sideBySide() async throws {
        let s = try scenario(threeTimeouts)
        let harness = {
            var h = ConformanceHarness()
            h.waitsForMainQueue = false
            return h
        }()
        let apps = Made<CurrentApp>()
        let results = await withTaskGroup(of: ConformanceResult.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    await harness.run(s) { env in
                        let app = CurrentApp(env)
                        apps.add(app)
                        return app
                    }
                }
            }
            var out: [ConformanceResult] = []
            for await r in group { out.append(r) }
            return out
        }
        #expect(results.count == 8)
        for r in results {
            #expect(r.verdict == .pass, "\(r.breaches.map(\.what)) \(r.notes)")
            #expect(r.sessions.count == 3)
        }
        let seen = apps.all
        #expect(seen.count == 8)
        for app in seen { #expect(app.ownSystem == [true, true, true]) }
        // Nothing was installed process-wide by these runs (another suite's run may install its own).
        #expect(seen.allSatisfy { app in NFCReaderSystem.current !== app.env.system })
    }

    @Test(
        "Four runs at once that wait for the main queue take turns: an app's own DispatchQueue.main block finds its run's system"
    )
    func mainQueueRunsTakeTurns() async throws {
        // The main queue is one per process and its blocks carry no run (no task-local reaches
        // them): such runs are serialised (InstallGate), so each block sees its own run's
        // installed system. Run side by side, they would see one another's.
        let s = try scenario(threeTimeouts)
        let harness = ConformanceHarness()
        let apps = Made<MainQueueApp>()
        let results = await withTaskGroup(of: ConformanceResult.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    await harness.run(s) { env in
                        let app = MainQueueApp(env)
                        apps.add(app)
                        return app
                    }
                }
            }
            var out: [ConformanceResult] = []
            for await r in group { out.append(r) }
            return out
        }
        #expect(results.count == 4)
        for r in results {
            #expect(r.verdict == .pass, "\(r.breaches.map(\.what)) \(r.notes)")
            #expect(r.sessions.count == 3)
        }
        let seen = apps.all
        #expect(seen.count == 4)
        for app in seen { #expect(app.ownSystem == [true, true, true]) }
    }

    @Test("withCurrent: in scope on the task and its Task {} children, not beyond; an installed system is the fallback")
    func scope() async throws {
        let a = NFCReaderSystem(backend: ConformanceReader(clock: ManualClock()).frontend, clock: ManualClock())
        let b = NFCReaderSystem(backend: ConformanceReader(clock: ManualClock()).frontend, clock: ManualClock())
        // (Another suite's run may have a system installed meanwhile: only a and b are asserted.)
        #expect(NFCReaderSystem.current !== a)
        await NFCReaderSystem.withCurrent(a) {
            #expect(NFCReaderSystem.current === a)
            let child = await Task { NFCReaderSystem.current === a }.value
            #expect(child)
            NFCReaderSystem.withCurrent(b) { #expect(NFCReaderSystem.current === b) }
            #expect(NFCReaderSystem.current === a)
            let detached = await Task.detached { NFCReaderSystem.current === a }.value
            #expect(!detached)
        }
        #expect(NFCReaderSystem.current !== a)
    }
}
