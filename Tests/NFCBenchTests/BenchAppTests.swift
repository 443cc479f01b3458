import Foundation
import NFCBenchTestSupport
import NFCFiles
import NFCTags
import NFCTrace
import ReaderFrontend
import ReaderSession
import Synchronization
import Testing
import VirtualHardware

@testable import nfcbench

/// The bench's built-in app (`session --mode ndef-rw|tag`) and its status line, in virtual
/// time: the simulated reader, the session and the app's restart timer all run on one
/// `ManualClock`, stepped from one armed timer to the next by an `EmbeddedReaderSessionExecutor`,
/// which also runs every hand-off (backend events, delegate calls, the app's reads) on the
/// test's thread: nothing is waited for in real time.
@Suite("Session runner: the bench app's restart and the status line")
struct BenchAppTests {
    /// Records when (on the session's clock) the app asked the reader to restart polling.
    final class RestartLog: ReaderBackend, @unchecked Sendable {
        let base: ReaderFrontend
        let clock: ManualClock
        private let times = Mutex<[Duration]>([])
        init(_ base: ReaderFrontend, clock: ManualClock) {
            self.base = base
            self.clock = clock
        }
        var restarts: [Duration] { times.withLock { $0 } }
        var identifier: String { base.identifier }
        func events(_ options: NFCPollingOption) -> AsyncThrowingStream<ReaderBackendEvent, any Error> {
            base.events(options)
        }
        /// Pushed, as the frontend pushes an in-memory device's events: what the runtime reads
        /// under the executor.
        func subscribe(
            _ options: NFCPollingOption, _ handler: @escaping @Sendable (Result<ReaderBackendEvent?, any Error>) -> Void
        ) -> (any ReaderBackendSubscription)? {
            base.subscribe(options, handler)
        }
        func restartPolling() {
            times.withLock { $0.append(clock.now) }
            base.restartPolling()
        }
        func withTag<R>(_ id: DetectedTargetID, _ body: (TagConnection) throws -> R) throws -> R {
            try base.withTag(id, body)
        }
    }

    final class Ending: @unchecked Sendable {
        private let lock = NSLock()
        private var code: NFCReaderError.Code?
        func set(_ c: NFCReaderError.Code) { lock.withLock { code = c } }
        var value: NFCReaderError.Code? { lock.withLock { code } }
    }

    struct Bench {
        let loop = EmbeddedReaderSessionExecutor()
        var clock: ManualClock { loop.clock }
        let frontend: ReaderFrontend
        let log: RestartLog
        let runner: SessionRunner
        let ending = Ending()

        init(steps: [Scenario.Step], mode: SessionRunner.Mode, limit: Duration) throws {
            let tag = try TagFile.load(
                path: NFCBench.packageRoot.appendingPathComponent("hardware/tags/ntag215-uri.json").path)
            let reader = try SimulatedReader(
                scenario: Scenario(reader: "bounce", steps: steps), tags: ["ntag215-uri": tag], clock: loop.clock)
            frontend = ReaderFrontend(device: reader.field, clock: loop.clock)
            log = RestartLog(frontend, clock: loop.clock)
            var options = SessionRunner.Options()
            options.mode = mode
            options.timeLimit = limit
            options.thermal = false
            // The bounce's 200 ms stays are shorter than the iPhone's Type 2 discovery (0.68 s):
            // these tests time the bench app's own timers, so the probe is off.
            options.type2Probe = .off
            options.statusLine = true
            let trace = try TraceWriter(path: nil, header: Traces.header(command: "session", device: "sim:bounce"))
            // The status line is read through its `text`; nothing is drawn.
            runner = SessionRunner(
                backend: log, options: options, trace: trace, clock: loop.clock,
                arbiter: SessionArbiter(fileLocks: false), statusOutput: { _ in }, executor: loop)
        }

        /// Nothing is on its way once the executor has run what was handed over: no backend
        /// event, session hand-off or app read is left.
        func expectDrained(sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(loop.isIdle, sourceLocation: sourceLocation)
            #expect(runner.system.pendingWork == 0, sourceLocation: sourceLocation)
            #expect(runner.appWork.value == 0, "the app's read finished", sourceLocation: sourceLocation)
        }

        /// Begins the app's session and steps virtual time timer by timer until it ends or
        /// `until` is reached; `at` runs once when the clock first reaches its instant.
        func run(until: Duration, at check: Duration? = nil, _ probe: () -> Void = {}) -> NFCReaderError.Code? {
            let ending = ending
            let app = runner.beginApp { ending.set($0) }
            var probed = false
            loop.run()
            expectDrained()
            while ending.value == nil {
                let next = clock.nextDeadline ?? until
                if let check, !probed, check <= next {
                    loop.advanceTime(to: check)
                    expectDrained()
                    probe()
                    probed = true
                    continue
                }
                guard next <= until else { break }
                loop.advanceTime(to: next)
                expectDrained()
            }
            withExtendedLifetime(app) {}
            return ending.value
        }
    }

    /// A tag read at 300 ms that leaves and comes back every 200 ms until 1.5 s, then stays.
    static let bounce: [Scenario.Step] = [
        .init(at: .milliseconds(300), action: .present(tag: "ntag215-uri", as: "A", faults: [])),
        .init(at: .milliseconds(500), action: .remove("A")),
        .init(at: .milliseconds(700), action: .present(tag: "ntag215-uri", as: "A", faults: [])),
        .init(at: .milliseconds(900), action: .remove("A")),
        .init(at: .milliseconds(1100), action: .present(tag: "ntag215-uri", as: "A", faults: [])),
        .init(at: .milliseconds(1300), action: .remove("A")),
        .init(at: .milliseconds(1500), action: .present(tag: "ntag215-uri", as: "A", faults: [])),
    ]

    @Test(
        "A tag that bounces within the app's 1 s wait postpones its one restart; restarts never multiply",
        arguments: [SessionRunner.Mode.ndefRW, .tag])
    func oneRestartTimer(mode: SessionRunner.Mode) throws {
        let bench = try Bench(steps: Self.bounce, mode: mode, limit: .seconds(5))
        let code = bench.run(until: .seconds(6))
        #expect(code == .readerSessionInvalidationErrorSessionTimeout)
        // Detections at 0.3 (read), 0.7, 1.1 and 1.5 s each re-arm the one timer: the first
        // restart is 1 s after the last of them, then one a second while the tag stays
        // (each restart re-detects it). Before, every bounce added a loop of its own.
        #expect(bench.log.restarts == [.milliseconds(2500), .milliseconds(3500), .milliseconds(4500)])
        #expect(bench.runner.reads.value == 1, "the tag is read once, not again after each bounce")
        #expect(bench.clock.pendingTimers == 0, "the session's end disarms the app's timer")
    }

    @Test(
        "The status line counts the app's reads in read-write and tag modes",
        arguments: [SessionRunner.Mode.ndefRW, .tag])
    func statusCountsReads(mode: SessionRunner.Mode) throws {
        let steps: [Scenario.Step] = [
            .init(at: .milliseconds(300), action: .present(tag: "ntag215-uri", as: "A", faults: []))
        ]
        let bench = try Bench(steps: steps, mode: mode, limit: .seconds(5))
        var text: String?
        let code = bench.run(until: .seconds(6), at: .milliseconds(4200)) { text = bench.runner.status?.text }
        #expect(code == .readerSessionInvalidationErrorSessionTimeout)
        let line = try #require(text)
        #expect(line.contains("Tag 1 read"), "\(line)")
        #expect(line.contains("1 tag read"), "\(line)")
        // 0.8 s to go reads as a countdown does: 1 s left.
        #expect(line.contains("  1 s left"), "\(line)")
    }

    @Test("Seconds left count down as a person reads a countdown: rounded up, 0 only at the end")
    func secondsLeft() {
        #expect(StatusLine.secondsLeft(.milliseconds(200)) == 1)
        #expect(StatusLine.secondsLeft(.milliseconds(999)) == 1)
        #expect(StatusLine.secondsLeft(.seconds(1)) == 1)
        #expect(StatusLine.secondsLeft(.milliseconds(1001)) == 2)
        #expect(StatusLine.secondsLeft(.seconds(60)) == 60)
        #expect(StatusLine.secondsLeft(.zero) == 0)
        #expect(StatusLine.secondsLeft(.milliseconds(-5)) == 0)
        #expect(
            StatusLine.text(alert: "Hold", left: .milliseconds(300), reads: 2)
                == "[ Hold ]  1 s left  · 2 tags read  · Ctrl-C = Done")
    }
}
