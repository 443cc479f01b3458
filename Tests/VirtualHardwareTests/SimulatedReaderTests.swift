import Foundation
import NFCBenchTestSupport
import NFCTags
import ReaderFrontend
import ReaderSession
import Synchronization
import Testing
import VirtualHardware

/// The simulated reader on a manual clock: tags arrive and leave on the scenario's
/// schedule and are read through the real NFC Forum procedures.
@Suite("Simulated reader")
struct SimulatedReaderTests {
    /// An NTAG213 holding `03 0B D1 01 07 55 04 61 2E 62 63 2F 78 FE` (URI https://a.bc/x) —
    /// written by hand: UID 04 11 22 / 33 44 55 66, BCC0 = 88⊕04⊕11⊕22 = BF, BCC1 = 33⊕44⊕55⊕66 = 44.
    static func ntag213() throws -> TagFile {
        var pages: [[UInt8]] = [
            [0x04, 0x11, 0x22, 0xBF], [0x33, 0x44, 0x55, 0x66], [0x44, 0x48, 0x00, 0x00], [0xE1, 0x10, 0x12, 0x00],
            [0x03, 0x0B, 0xD1, 0x01], [0x07, 0x55, 0x04, 0x61], [0x2E, 0x62, 0x63, 0x2F], [0x78, 0xFE, 0x00, 0x00],
        ]
        pages += Array(repeating: [0, 0, 0, 0], count: 45 - pages.count)
        pages[41] = [0x00, 0x00, 0x00, 0xBD]  // dynamic lock bytes, RFUI
        pages[42] = [0x04, 0x00, 0x00, 0xFF]  // CFG0: AUTH0 = FF (no protection)
        return TagFile(
            type: .ntag213,
            activation: try ISO14443AActivation(
                uid: [0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66], atqa: [0x44, 0x00], sak: 0),
            getVersion: [0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x0F, 0x03], pages: pages)
    }

    func scenario(_ steps: [Scenario.Step]) -> Scenario { Scenario(reader: "bench", steps: steps) }

    /// Collects the frontend's pushed polling events (``/ReaderSession/ReaderBackend/subscribe(_:_:)``):
    /// the simulated field is an in-memory device, so each event arrives on the thread that moved
    /// the manual clock, before `advance(by:)` returns; the test asserts right after, no waiting.
    final class Collector: Sendable {
        private let log = Mutex<[ReaderBackendEvent]>([])
        var events: [ReaderBackendEvent] { log.withLock { $0 } }
        func start(_ frontend: ReaderFrontend) throws -> any ReaderBackendSubscription {
            let subscription = frontend.subscribe(.iso14443) { [self] r in
                if case .success(let e?) = r { log.withLock { $0.append(e) } }
            }
            return try #require(subscription, "the simulated field pushes its events")
        }
    }

    /// The targets of a detection event (nil: none, or a loss).
    static func detected(_ e: ReaderBackendEvent?) -> [DetectedTarget]? {
        if case .detected(let t)? = e { t } else { nil }
    }

    /// A connection of another kind than the test's Type 2 tag: thrown, so the test fails.
    struct NotType2: Error {}

    @Test("A tag is detected at its step time, read through Type2TagReader, and lost at its remove step")
    func presentReadRemove() async throws {
        let clock = ManualClock()
        let reader = try SimulatedReader(
            scenario: scenario([
                .init(at: .milliseconds(300), action: .present(tag: "t", as: "A", faults: [])),
                .init(at: .milliseconds(2300), action: .remove("A")),
            ]),
            tags: ["t": try Self.ntag213()], clock: clock)
        let frontend = ReaderFrontend(device: reader.field, clock: clock)
        #expect(reader.identifier == "sim:bench")
        let c = Collector()
        let subscription = try c.start(frontend)
        clock.advance(by: .milliseconds(299))
        #expect(c.events.isEmpty)
        clock.advance(by: .milliseconds(1))
        #expect(c.events.count == 1)
        let target = try #require(Self.detected(c.events.first)?.first, "expected a detection, got \(c.events)")
        #expect(target.kind == .type2)
        #expect(target.uid == [0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66])
        let ndef = try frontend.withTag(target.id) { connection -> [UInt8] in
            guard case .type2(let t) = connection else { throw TagCommunicationError.malformedResponse("not type 2") }
            let r = Type2TagReader(transport: t)
            return try r.readNDEF()
        }
        #expect(ndef == [0xD1, 0x01, 0x07, 0x55, 0x04, 0x61, 0x2E, 0x62, 0x63, 0x2F, 0x78])
        clock.advance(by: .seconds(2))
        #expect(c.events.last == .lost(target.id))
        #expect(throws: TagCommunicationError.tagLost) { try frontend.withTag(target.id) { _ in 0 } }
        subscription.cancel()
    }

    @Test("A tag_lost fault takes the tag out of the field mid-read and reports it lost")
    func tagLostMidRead() async throws {
        let clock = ManualClock()
        let reader = try SimulatedReader(
            scenario: scenario([
                .init(
                    at: .zero, action: .present(tag: "t", as: "A", faults: [TagFault(afterCommands: 1, kind: .tagLost)])
                )
            ]),
            tags: ["t": try Self.ntag213()], clock: clock)
        let frontend = ReaderFrontend(device: reader.field, clock: clock)
        let c = Collector()
        let subscription = try c.start(frontend)
        clock.advance(by: .zero)
        let target = try #require(Self.detected(c.events.first)?.first, "no detection")
        #expect(throws: Type2TagError.self) {
            try frontend.withTag(target.id) { connection in
                guard case .type2(let t) = connection else { throw NotType2() }
                let r = Type2TagReader(transport: t)
                _ = try r.readNDEF()
            }
        }
        #expect(c.events.last == .lost(target.id))
        #expect(reader.tagsInField.isEmpty)
        subscription.cancel()
    }

    @Test("restartPolling reports the tags still in the field again, under new ids")
    func restartPolling() async throws {
        let clock = ManualClock()
        let reader = try SimulatedReader(
            scenario: scenario([
                .init(at: .zero, action: .present(tag: "t", as: "A", faults: [])),
                .init(at: .zero, action: .present(tag: "t", as: "B", faults: [])),
            ]),
            tags: ["t": try Self.ntag213()], clock: clock)
        let frontend = ReaderFrontend(device: reader.field, clock: clock)
        let c = Collector()
        let subscription = try c.start(frontend)
        clock.advance(by: .zero)
        let first = try #require(Self.detected(c.events.first), "no detection")
        #expect(first.count == 2, "two tags arriving together are detected together")
        frontend.restartPolling()
        #expect(c.events.count == 2)
        let again = try #require(Self.detected(c.events.last), "no re-detection")
        #expect(again.count == 2)
        #expect(Set(again.map(\.id)).isDisjoint(with: first.map(\.id)))
        #expect(throws: TagCommunicationError.tagLost) { try frontend.withTag(first[0].id) { _ in 0 } }
        subscription.cancel()
    }

    @Test(
        "firstTarget's timeout runs on the scenario's clock: 200 ms ends before the tag at 300 ms, 1 s finds it",
        .timeLimit(.minutes(1)), arguments: [200, 1000])
    func firstTargetInVirtualTime(timeoutMs: Int) async throws {
        let clock = ArmingClock()
        let reader = try SimulatedReader(
            scenario: scenario([.init(at: .milliseconds(300), action: .present(tag: "t", as: "A", faults: []))]),
            tags: ["t": try Self.ntag213()], clock: clock)
        let frontend = ReaderFrontend(device: reader.field, clock: clock)
        defer { frontend.close() }
        let timeout = Duration.milliseconds(timeoutMs)
        let waiting = Task { try await frontend.firstTarget(timeout: timeout) }
        await clock.armed(at: timeout)
        // Both timers are due within 400 ms; they fire in deadline order, on this thread.
        clock.manual.advance(by: .milliseconds(400))
        if timeout < .milliseconds(300) {
            await #expect(throws: FrontendError.noTarget("sim:bench", timeout)) { try await waiting.value }
        } else {
            let target = try await waiting.value
            #expect(target.uid == [0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66])
            #expect(clock.manual.pendingTimers == 0, "the timeout is disarmed once the tag is found")
        }
    }

    @Test("A scenario naming a tag file that was not loaded is refused")
    func missingTag() {
        #expect(throws: DataFileError(.notFound, field: "steps", "no tag file loaded for 'nope'")) {
            _ = try SimulatedReader(
                scenario: scenario([.init(at: .zero, action: .present(tag: "nope", as: "A", faults: []))]),
                tags: [:], clock: ManualClock())
        }
    }
}
