import Foundation
import NFCBenchTestSupport
import NFCTags
import ReaderFrontend
import ReaderSession
import Synchronization
import Testing

/// A device that does not report field changes (like libnfc and PC/SC): the frontend's
/// thread senses it and checks presence on the injected clock. Records the thread of every call.
final class PolledFakeDevice: NFCDevice, @unchecked Sendable {
    let name = "fake:polled"
    let traits = NFCDeviceTraits(
        reportsFieldChanges: false, showsActivation: true, presenceInterval: .milliseconds(100))
    private let condition = NSCondition()
    private var field: [SensedTarget] = []
    private var cancelled = false
    private var threads: Set<String> = []
    private var calls: [String] = []
    private(set) var closed = false

    private func note(_ call: String) {
        threads.insert("\(Unmanaged.passUnretained(Thread.current).toOpaque())")
        calls.append(call)
    }

    func put(_ t: SensedTarget) {
        condition.lock()
        field.append(t)
        condition.broadcast()
        condition.unlock()
    }

    func take(_ presentation: UInt64) {
        condition.lock()
        field.removeAll { $0.presentation == presentation }
        condition.unlock()
    }

    var threadCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return threads.count
    }

    var callLog: [String] {
        condition.lock()
        defer { condition.unlock() }
        return calls
    }

    func sense(_ technologies: Set<NFCTechnology>, timeout: Duration?) throws(NFCDeviceError) -> [SensedTarget] {
        condition.lock()
        defer { condition.unlock() }
        note("sense")
        let until = Date().addingTimeInterval(
            timeout.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 } ?? 3600)
        while field.isEmpty && !cancelled {
            if !condition.wait(until: until) { break }
        }
        cancelled = false
        return field
    }

    func isPresent(_ target: SensedTarget) throws(NFCDeviceError) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        note("isPresent")
        return field.contains { $0.presentation == target.presentation }
    }

    func connect(_ target: SensedTarget, as proto: TagProtocol) throws(TagCommunicationError) -> TagConnection {
        condition.lock()
        defer { condition.unlock() }
        note("connect")
        return .iso7816(Echo())
    }

    func reactivate(_ target: SensedTarget) throws(TagCommunicationError) {
        condition.lock()
        defer { condition.unlock() }
        note("reactivate")
    }

    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    func close() {
        condition.lock()
        defer { condition.unlock() }
        note("close")
        closed = true
    }

    struct Echo: APDUTransport {
        func transmit(_ command: [UInt8]) throws -> [UInt8] { command + [0x90, 0x00] }
    }
}

/// The next event, or nil when none comes within `limit` of real time.
func nextEvent(
    _ it: inout AsyncThrowingStream<ReaderBackendEvent, any Error>.AsyncIterator, within limit: Duration = .seconds(5)
) async throws -> ReaderBackendEvent? {
    let box = UnsafeIterator(it)
    defer { it = box.iterator }
    return try await withTimeout(limit) { try await box.next() }
}

/// Lets a task group drive an iterator the test owns (one consumer at a time).
final class UnsafeIterator: @unchecked Sendable {
    var iterator: AsyncThrowingStream<ReaderBackendEvent, any Error>.AsyncIterator
    init(_ it: AsyncThrowingStream<ReaderBackendEvent, any Error>.AsyncIterator) { iterator = it }
    func next() async throws -> ReaderBackendEvent? { try await iterator.next() }
}

@Suite("The frontend's device thread: one thread for every device call, presence on the injected clock")
struct FrontendThreadTests {
    @Test("Removal is seen at the next presence check, in virtual time; exchanges run on the device thread")
    func presenceInVirtualTime() async throws {
        let clock = ManualClock()
        let device = PolledFakeDevice()
        let frontend = ReaderFrontend(identifier: device.name, clock: clock, open: { device })
        var it = frontend.events(.iso14443).makeAsyncIterator()
        device.put(SensedTarget(presentation: 1, uid: [1, 2, 3, 4], sak: 0x20))
        let found = try #require(
            await matchedAsync { if case .detected(let found)? = try await nextEvent(&it) { found } else { nil } },
            "no detection")
        #expect(found.first?.kind == .type4)
        let id = try #require(found.first?.id)
        let answer = try await Task.detached {
            try frontend.withTag(id) { c -> [UInt8] in
                guard case .iso7816(let t) = c else { return [] }
                return try t.transmit([0x00, 0xA4])
            }
        }.value
        #expect(answer == [0x00, 0xA4, 0x90, 0x00])
        device.take(1)
        clock.advance(by: .milliseconds(100))
        #expect(try await nextEvent(&it) == .lost(id))
        frontend.close()
        #expect(device.closed)
        #expect(device.threadCount == 1, "every call on one thread: \(device.callLog)")
        #expect(device.callLog.last == "close", "nothing after close: \(device.callLog)")
    }

    @Test("A stale id fails with tagLost without reaching the device")
    func staleID() async throws {
        let device = PolledFakeDevice()
        let frontend = ReaderFrontend(identifier: device.name, clock: ManualClock(), open: { device })
        defer { frontend.close() }
        var it = frontend.events(.iso14443).makeAsyncIterator()
        device.put(SensedTarget(presentation: 1, uid: [1, 2, 3, 4], sak: 0x00))
        _ = try await nextEvent(&it)
        let stale = DetectedTargetID(99)
        await #expect(throws: TagCommunicationError.tagLost) {
            try await Task.detached { try frontend.withTag(stale) { _ in 0 } }.value
        }
        #expect(!device.callLog.contains("connect"))
    }
}
