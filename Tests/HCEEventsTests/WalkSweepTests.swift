import Foundation
import Testing

@testable import HCEEvents

private let visa = ContactlessPhone.DefaultApp(selectIdentifierPrefixes: [
    try! SelectIdentifierPrefix(hex: "A0000000031010")
])

@Suite("The walk's defaults and its sweep (issue 31), in virtual time")
struct WalkSweepTests {
    @Test("The walk's defaults: the launch 400 ms and the sheet 500 ms, both labelled assumed; the library keeps 0")
    func walkDefaults() {
        let p = HCEParameters.walkDefaults
        #expect(p.wakeLatency == .milliseconds(400))
        #expect(p.emulationStartLatency == .milliseconds(500))
        let facts = Dictionary(uniqueKeysWithValues: p.facts.map { ($0.key, $0) })
        #expect(facts["wake_latency"]?.source == "assumed")
        #expect(facts["wake_latency"]?.reference.contains("WWDC 2019") == true)
        #expect(facts["emulation_start_latency"]?.source == "assumed")
        #expect(HCEParameters().wakeLatency == .zero && HCEParameters().emulationStartLatency == .zero)
        // Every other number is the library's.
        var same = p
        same.wakeLatency = .zero
        same.emulationStartLatency = .zero
        #expect(same == HCEParameters())
    }

    @Test("At the walk's defaults a locked phone serves fewer readers than the best case (2 → 1 of 10)")
    func defaultsAreLessOptimistic() async throws {
        let profiles = try shippedProfiles()
        let best = await ReaderWalk(profiles: profiles, app: visa, locked: true).run().summary
        let assumed = await ReaderWalk(profiles: profiles, app: visa, parameters: .walkDefaults, locked: true).run()
            .summary
        #expect(best.servableWakes == 2)
        #expect(assumed.servableWakes == 1)
    }

    @Test("FROM..TO/STEP gives every step, TO included; bad ranges are refused")
    func values() throws {
        let s = try WalkSweep(.wake, from: .zero, to: .milliseconds(800), step: .milliseconds(100))
        #expect(s.values == (0...8).map { .milliseconds(100 * $0) })
        #expect(
            try WalkSweep(.sheet, from: .zero, to: .seconds(1), step: .milliseconds(300)).values.last
                == .milliseconds(900))
        #expect(throws: WalkSweep.Error.stepNotPositive) {
            try WalkSweep(.wake, from: .zero, to: .seconds(1), step: .zero)
        }
        #expect(throws: WalkSweep.Error.emptyRange) {
            try WalkSweep(.wake, from: .seconds(2), to: .seconds(1), step: .milliseconds(1))
        }
        #expect(throws: WalkSweep.Error.tooManyValues(10_001)) {
            try WalkSweep(.wake, from: .zero, to: .seconds(10), step: .milliseconds(1))
        }
    }

    @Test("Sweeping the launch: served readers fall from 2 to 1 of 10 as it grows; only this latency changes")
    func sweepWake() async throws {
        let walk = ReaderWalk(profiles: try shippedProfiles(), app: visa, parameters: .walkDefaults)
        let sweep = try WalkSweep(.wake, from: .zero, to: .milliseconds(800), step: .milliseconds(400))
        let rows = await sweep.run(walk)
        #expect(rows.map(\.value) == [.zero, .milliseconds(400), .milliseconds(800)])
        #expect(rows.map(\.served) == [2, 2, 1])
        #expect(rows.allSatisfy { $0.readers == 10 && $0.wakes == 10 && $0.uselessWakes == 10 - $0.served })
        #expect(rows.last?.servedReaders == ["emv-ecp-terminal"])
        #expect(
            rows[0].waitingTimeExtensions < rows[1].waitingTimeExtensions, "a longer launch holds the reader longer")
        // The row at the walk's own value is that walk's summary.
        let own = await walk.run().summary
        #expect(rows[1].served == own.servableWakes && rows[1].wakes == own.wakes)
    }

    @Test("Sweeping the authentication of a locked phone and the sheet")
    func sweepAuthAndSheet() async throws {
        let walk = ReaderWalk(
            profiles: try shippedProfiles(), app: visa, parameters: .walkDefaults, locked: true)
        let auth = await (try WalkSweep(.auth, from: .zero, to: .seconds(1), step: .milliseconds(500))).run(walk)
        #expect(auth.map(\.served) == [2, 1, 1])
        let sheet = await (try WalkSweep(.sheet, from: .zero, to: .milliseconds(500), step: .milliseconds(500))).run(
            ReaderWalk(profiles: try shippedProfiles(), app: visa, parameters: .walkDefaults))
        #expect(sheet.map(\.served) == [2, 2])
        #expect(
            WalkSweepParameter.allCases.map(\.key) == [
                "wake_latency", "authentication_latency", "emulation_start_latency",
            ])
        #expect(WalkSweepParameter.auth.value(in: .walkDefaults) == .seconds(1))
    }
}
