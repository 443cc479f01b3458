import NFCBenchTestSupport
import NFCTags
import ReaderFrontend
import ReaderSession
import Testing

/// `firstTarget(timeout:)` times out on the frontend's clock: a ``ManualClock`` drives the
/// timeout in virtual time, with no real-time wait anywhere (issue 35). ``ArmingClock`` says
/// when the timeout is armed, so the tests move time on only once `firstTarget` waits.
@Suite("Frontend: firstTarget's timeout in virtual time")
struct FirstTargetTimeoutTests {
    @Test(
        "No target: the timeout fires once the virtual clock reaches it, not a nanosecond before",
        .timeLimit(.minutes(1)))
    func timesOutInVirtualTime() async throws {
        let clock = ArmingClock()
        clock.manual.advance(by: .seconds(7))  // the deadline counts from the call, not from zero
        let frontend = ReaderFrontend(device: EmulatedField(name: "empty"), clock: clock)
        defer { frontend.close() }
        let waiting = Task { try await frontend.firstTarget(timeout: .seconds(10)) }
        await clock.armed(at: .seconds(17))
        clock.manual.advance(by: .seconds(10) - .nanoseconds(1))
        #expect(clock.manual.pendingTimers == 1, "not fired a nanosecond before the deadline")
        clock.manual.advance(by: .nanoseconds(1))
        #expect(clock.manual.pendingTimers == 0)
        await #expect(throws: FrontendError.noTarget("empty", .seconds(10))) { try await waiting.value }
        #expect(clock.deadlines == [.seconds(17)])
    }

    @Test(
        "A tag presented a nanosecond before the deadline is the target, and the timeout's timer is disarmed",
        .timeLimit(.minutes(1)))
    func targetBeforeTheDeadline() async throws {
        let clock = ArmingClock()
        let field = EmulatedField(name: "late")
        let frontend = ReaderFrontend(device: field, clock: clock)
        defer { frontend.close() }
        let waiting = Task { try await frontend.firstTarget(timeout: .seconds(10), polling: .iso14443) }
        await clock.armed(at: .seconds(10))
        clock.manual.advance(by: .seconds(10) - .nanoseconds(1))
        field.present([(name: "A", tag: try PushedEventsTests.ntag213())])
        let target = try await waiting.value
        #expect(target.kind == .type2)
        #expect(target.uid == [0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66])
        #expect(clock.manual.pendingTimers == 0, "the timeout's timer is cancelled once a target is found")
        #expect(clock.manual.now == .seconds(10) - .nanoseconds(1))
    }
}
