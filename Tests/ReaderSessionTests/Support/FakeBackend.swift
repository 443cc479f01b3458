import Foundation
import NFCBenchTestSupport
import NFCTags
import ReaderFrontend
import ReaderSession
import Synchronization
import Testing

/// A tag the fake reader can hold in its field.
protocol FieldTag: AnyObject, Sendable {
    var kind: DetectedTarget.Kind { get }
    var connection: TagConnection { get }
    func markRemoved()
}

/// A Type 4 tag: NFCTags' T4T NDEF application emulation core behind an APDU transport.
final class MemoryType4Tag: FieldTag, APDUTransport {
    private let core: Mutex<Type4NDEFApplication>
    private let removed = Atomic<Bool>(false)
    init(ndef message: [UInt8]) throws { core = Mutex(try Type4NDEFApplication(ndefMessage: message)) }
    var kind: DetectedTarget.Kind { .type4 }
    var connection: TagConnection { .iso7816(self) }
    func markRemoved() { removed.store(true, ordering: .releasing) }
    func transmit(_ command: [UInt8]) throws -> [UInt8] {
        if removed.load(ordering: .acquiring) { throw TagCommunicationError.tagLost }
        return core.withLock { $0.respond(to: command) }
    }
}

/// A Type 2 tag in memory (NTAG213-like: 45 pages, CC `E1 10 12 00`), thread-safe;
/// `ndef: nil` is a freshly formatted tag (`03 00 FE`).
final class MemoryType2Tag: FieldTag, Type2TagTransport {
    private let pages: Mutex<[[UInt8]]>
    let removed = Atomic<Bool>(false)

    init(ndef message: [UInt8]?, readOnly: Bool = false) {
        var p = [[UInt8]](repeating: [0, 0, 0, 0], count: 45)
        p[0] = [0x04, 0x11, 0x22, 0xBB]
        p[3] = [0xE1, 0x10, 0x12, readOnly ? 0x0F : 0x00]
        var area: [UInt8] = message.map { [0x03, UInt8($0.count)] + $0 + [0xFE] } ?? [0x03, 0x00, 0xFE]
        while area.count % 4 != 0 { area.append(0) }
        for i in stride(from: 0, to: area.count, by: 4) { p[4 + i / 4] = Array(area[i..<(i + 4)]) }
        pages = Mutex(p)
    }

    func read(page: UInt8) throws -> [UInt8] {
        if removed.load(ordering: .acquiring) { throw TagCommunicationError.tagLost }
        return pages.withLock { p in (0..<4).flatMap { p[(Int(page) + $0) % p.count] } }
    }

    func write(page: UInt8, data: [UInt8]) throws {
        if removed.load(ordering: .acquiring) { throw TagCommunicationError.tagLost }
        guard data.count == 4, Int(page) < 45 else { throw TagCommunicationError.nak(0) }
        pages.withLock { $0[Int(page)] = data }
    }

    var kind: DetectedTarget.Kind { .type2 }
    var connection: TagConnection { .type2(self) }
    func markRemoved() { removed.store(true, ordering: .releasing) }

    func getVersion() throws -> [UInt8]? { [0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x0F, 0x03] }
    func reactivate() throws {}
}

/// A reader in a test: targets are put in and taken out of its field by the test. A thin
/// in-memory device under the real ``ReaderFrontend``, so the tests exercise the discovery
/// every reader uses.
final class FakeBackend: ReaderBackend {
    let device: FakeDevice
    let frontend: ReaderFrontend
    private let counts = Mutex((restarts: 0, streams: 0))

    init(identifier: String = "sim:test-\(UUID().uuidString.prefix(8))") {
        device = FakeDevice(name: identifier)
        frontend = ReaderFrontend(device: device, clock: ManualClock())
    }

    var identifier: String { frontend.identifier }
    var restarts: Int { counts.withLock { $0.restarts } }
    var streams: Int { counts.withLock { $0.streams } }

    func events(_ options: NFCPollingOption) -> AsyncThrowingStream<ReaderBackendEvent, any Error> {
        counts.withLock { $0.streams += 1 }
        let inner = StreamPull(frontend.events(options))
        return AsyncThrowingStream { [self] in
            pulls.withLock { $0.append(callingThreadName()) }
            return try await inner.next()
        }
    }

    /// The kernel's name of each thread the session pulled an event of the stream on.
    var pulledOn: [String] { pulls.withLock { $0 } }
    private let pulls = Mutex<[String]>([])

    /// Pushed polling (what the runtime reads under an executor, ``EmbeddedReaderSessionExecutor``):
    /// each field change reaches the session on the thread that made it.
    func subscribe(
        _ options: NFCPollingOption, _ handler: @escaping @Sendable (Result<ReaderBackendEvent?, any Error>) -> Void
    ) -> (any ReaderBackendSubscription)? {
        counts.withLock { $0.streams += 1 }
        return frontend.subscribe(options, handler)
    }

    func restartPolling() {
        counts.withLock { $0.restarts += 1 }
        frontend.restartPolling()
    }

    func withTag<R>(_ id: DetectedTargetID, _ body: (TagConnection) throws -> R) throws -> R {
        try frontend.withTag(id, body)
    }

    /// Puts tags into the field (sensed together); the number is the presentation key.
    func present(_ tags: [(UInt64, any FieldTag)]) { device.present(tags) }

    /// Takes a tag out of the field; its transport fails with `tagLost` from now on.
    /// `announce: false` leaves it listed, as a reader that has not noticed yet.
    func remove(_ id: UInt64, announce: Bool = true) { device.remove(id, announce: announce) }

    /// The reader fails (unplugged).
    func fail() { device.fail() }
}

/// The fake's device: a field of ``FieldTag``s, keyed by the test's numbers.
final class FakeDevice: NFCDevice {
    let name: String
    let traits = NFCDeviceTraits(reportsFieldChanges: true, showsActivation: true)
    private struct State {
        var field: [(UInt64, any FieldTag, listed: Bool)] = []
        var failed = false
        var observer: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())

    init(name: String) { self.name = name }

    func present(_ tags: [(UInt64, any FieldTag)]) {
        let o = state.withLock { s in
            s.field += tags.map { ($0.0, $0.1, true) }
            return s.observer
        }
        o?()
    }

    func remove(_ id: UInt64, announce: Bool) {
        let o = state.withLock { s in
            for (key, tag, _) in s.field where key == id { tag.markRemoved() }
            if announce { s.field.removeAll { $0.0 == id } }
            return s.observer
        }
        o?()
    }

    func fail() {
        let o = state.withLock { s in
            s.failed = true
            return s.observer
        }
        o?()
    }

    func sense(_ technologies: Set<NFCTechnology>, timeout: Duration?) throws(NFCDeviceError) -> [SensedTarget] {
        let (failed, field) = state.withLock { ($0.failed, $0.field) }
        if failed { throw NFCDeviceError(.gone, "\(name): unplugged") }
        return field.map { key, tag, _ in
            SensedTarget(
                presentation: key, uid: [0x04, 0x11, 0x22, UInt8(key & 0xFF)], atqa: [0x44, 0x00],
                sak: tag.kind == .type4 ? 0x20 : 0x00,
                ats: tag.kind == .type4 ? [0x06, 0x75, 0x77, 0x81, 0x02, 0x80] : nil)
        }
    }

    func isPresent(_ target: SensedTarget) throws(NFCDeviceError) -> Bool {
        state.withLock { s in s.field.contains { $0.0 == target.presentation } }
    }

    func connect(_ target: SensedTarget, as proto: TagProtocol) throws(TagCommunicationError) -> TagConnection {
        guard let tag = state.withLock({ s in s.field.first { $0.0 == target.presentation }?.1 }) else {
            throw .tagLost
        }
        return tag.connection
    }

    func reactivate(_ target: SensedTarget) throws(TagCommunicationError) {}
    func cancel() {}
    func observeField(_ onChange: (@Sendable () -> Void)?) { state.withLock { $0.observer = onChange } }
    func close() {}
}

/// Collects trace records.
final class TraceLog: Sendable {
    private let records = Mutex<[SessionTraceRecord]>([])
    func record(_ r: SessionTraceRecord) { records.withLock { $0.append(r) } }
    var all: [SessionTraceRecord] { records.withLock { $0 } }
    func events(session: UInt64? = nil) -> [SessionTraceEvent] {
        all.filter { session == nil || $0.session == session }.map(\.event)
    }
}

extension ReaderSystemModel {
    /// The model with the session turnover in the same instant and a same-app `begin()`
    /// meeting the busy policy, said explicitly (the library's defaults; the CLI and the
    /// harness play ``ReaderSystemModel/reportedTurnover``): the rule tests that use it
    /// exercise one other rule each; the turnover delay and the kick-out have tests of their
    /// own (`FidelityRound3Tests`).
    static func oneRule(
        busyPolicy: BusyPolicy = .refuse, quickRestartOutcome: QuickRestartOutcome = .systemIsBusy,
        invalidatedBegin: InvalidatedBegin = .endingRepeated, iso7816SelectIdentifiers: [String] = []
    ) -> ReaderSystemModel {
        ReaderSystemModel(
            busyPolicy: busyPolicy, sameAppBegin: .busyPolicy, quickRestartOutcome: quickRestartOutcome,
            invalidatedBegin: invalidatedBegin, invalidationDelay: .zero,
            iso7816SelectIdentifiers: iso7816SelectIdentifiers)
    }
}

/// A virtual-time bench: manual clock, fake reader, in-process arbiter, trace.
///
/// `embedded: true` runs the system on an ``EmbeddedReaderSessionExecutor``: nothing happens
/// between the test's calls until it calls ``run()`` or ``advanceTime(by:)``, which run every
/// hand-off (delegate calls, pushed reader events, tag I/O) on the test's thread, so the test
/// asserts right after without waiting. Without it the system runs on dispatch queues, as in
/// production, and a test awaits the session's events.
struct Bench {
    let clock: ManualClock
    let backend = FakeBackend()
    let trace = TraceLog()
    let system: NFCReaderSystem
    /// The executor the test drives (nil: dispatch queues).
    let loop: EmbeddedReaderSessionExecutor?

    /// - Parameter model: the app declares the NFC Forum NDEF application as its ISO 7816
    ///   select-identifier unless a test says otherwise.
    init(
        thermal: ThermalModel = .disabled,
        model: ReaderSystemModel = .oneRule(iso7816SelectIdentifiers: ["D2760000850101"]), embedded: Bool = false
    ) {
        let trace = self.trace
        let loop = embedded ? EmbeddedReaderSessionExecutor() : nil
        let clock = loop?.clock ?? ManualClock()
        self.loop = loop
        self.clock = clock
        system = NFCReaderSystem(
            backend: backend, clock: clock, arbiter: SessionArbiter(fileLocks: false), thermal: thermal, model: model,
            observer: { trace.record($0) }, executor: loop)
    }

    /// Runs every hand-off waiting (and those they hand over); an embedded bench only.
    func run(sourceLocation: SourceLocation = #_sourceLocation) {
        guard let loop else {
            Issue.record("run() on a bench without an executor", sourceLocation: sourceLocation)
            return
        }
        loop.run()
        #expect(system.pendingWork == 0, "hand-offs left after run()", sourceLocation: sourceLocation)
    }

    /// Moves virtual time, firing due timers in order and running what each sets off; an
    /// embedded bench only (a plain one moves its clock).
    func advanceTime(by d: Duration) {
        if let loop { loop.advanceTime(by: d) } else { clock.advance(by: d) }
    }
}

let uriMessage: [UInt8] = [0xD1, 0x01, 0x0C, 0x55, 0x04] + Array("example.com".utf8)

/// One stream's iterator, pulled by its one consumer (the session's follower task).
// unchecked: only the stream's single consumer calls next(), one call at a time
private final class StreamPull: @unchecked Sendable {
    private var iterator: AsyncThrowingStream<ReaderBackendEvent, any Error>.AsyncIterator
    init(_ stream: AsyncThrowingStream<ReaderBackendEvent, any Error>) { iterator = stream.makeAsyncIterator() }
    func next() async throws -> ReaderBackendEvent? { try await iterator.next() }
}
