import Foundation
import ReaderSession
import ReaderSessionConformance
import ScanFeature
import Testing

/// The app's controller behind the harness's three user actions.
private final class BadgeScreen: ConformanceApp {
    let scanner: BadgeScanner
    // Its sessions run against the system the harness installs (NFCReaderSystem.current).
    init(_ env: ConformanceEnvironment) { scanner = BadgeScanner() }
    func scanTapped(_ request: ScanRequest) { scanner.scanTapped() }
    func didEnterBackground() {}
    func willEnterForeground() {}
}

/// A scenario of the app's own; its tags are nfcbench's shipped tag files, found by the
/// library wherever this package is (`ConformanceBenchData`).
private func scenario(_ json: String) throws -> ConformanceScenario {
    try ConformanceScenario(json: Data(json.utf8), name: "badge") { try ConformanceBenchData.tagFile($0) }
}

/// Runs a scenario and hands back the verdict and the screen's final state.
private func run(_ s: ConformanceScenario) async -> (ConformanceResult, BadgeScanner.State) {
    let screens = ScreenBox()
    let result = await ConformanceHarness().run(s) { env in
        let screen = BadgeScreen(env)
        screens.set(screen)
        return screen
    }
    return (result, screens.state)
}

private final class ScreenBox: @unchecked Sendable {
    private let lock = NSLock()
    private var screen: BadgeScreen?
    func set(_ s: BadgeScreen) { lock.withLock { screen = s } }
    var state: BadgeScanner.State { lock.withLock { screen?.scanner.state ?? .idle } }
}

@Suite("Badge scanner under the conformance harness")
struct BadgeScannerConformanceTests {
    @Test("A badge held to the phone after Scan is read; one sheet, no breach")
    func reads() async throws {
        let (r, state) = await run(
            try scenario(
                """
                {"format": "nfcbench-conformance", "version": 1, "duration_ms": 10000,
                 "steps": [{"at_ms": 0, "user": "scan"}, {"at_ms": 1500, "present": "ntag215-uri"}], "expect_endings": [204]}
                """))
        #expect(r.verdict == .pass)
        #expect(r.sheets == 1)
        #expect(state == .read("https://example.com/nfcbench"))
    }

    @Test("A timeout leaves the screen saying so, and nothing restarts in the next two minutes")
    func timeout() async throws {
        let (r, state) = await run(
            try scenario(
                """
                {"format": "nfcbench-conformance", "version": 1, "duration_ms": 180000,
                 "steps": [{"at_ms": 0, "user": "scan"}], "expect_endings": [201]}
                """))
        #expect(r.verdict == .pass)
        #expect(r.sessions.count == 1)
        #expect(state == .timedOut)
    }

    @Test("Busy while another app reads: the screen asks to retry and the app does not loop")
    func busy() async throws {
        let (r, state) = await run(
            try scenario(
                """
                {"format": "nfcbench-conformance", "version": 1, "duration_ms": 60000,
                 "steps": [{"at_ms": 0, "other_app_session_ms": 10000}, {"at_ms": 1000, "user": "scan"}], "expect_endings": [203]}
                """))
        #expect(r.verdict == .pass)
        #expect(r.breaches.isEmpty)
        #expect(state == .busy)
    }

    @Test("The conformance explorer finds no breach in the badge screen: seed 1, 500 generated runs, 60 s at most")
    func explored() async throws {
        let explorer = try ConformanceExplorer(
            tagDirectories: ConformanceBenchData.tagDirectories, seed: 1, runs: 500, budget: .seconds(60))
        let report = await explorer.explore { env in BadgeScreen(env) }
        #expect(report.passed, "\(report.counterexamples.map(\.scenario.fileText)) \(report.inconclusive?.notes ?? [])")
        #expect(report.runs >= 500)
    }

    @Test("The shipped single-tag scenarios (200–204, restarts, returns, busy) all pass")
    func shippedSingleTagScenarios() async throws {
        let suite = try ConformanceBenchData.builtinSuite()
        let single = suite.filter { s in
            s.name.hasPrefix("20")
                && s.steps.allSatisfy { step in
                    if case .user(.scan(let request)) = step.action { return !request.readWrite }
                    return true
                }
        }
        #expect(single.count >= 10)
        let results = await ConformanceHarness().run(single) { env in BadgeScreen(env) }
        for r in results {
            #expect(r.verdict == .pass, "\(r.scenario): \(r.breaches.map(\.what)) \(r.notes)")
        }
    }
}
