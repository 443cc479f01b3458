import Foundation
import NFCTags
import ReaderSession
import Synchronization

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

/// A reader in a test: targets are put in and taken out of its field by the test.
final class FakeBackend: ReaderBackend {
    let identifier: String
    private struct State {
        var continuation: AsyncThrowingStream<ReaderBackendEvent, any Error>.Continuation?
        var field: [(DetectedTarget, any FieldTag)] = []
        var restarts = 0
        var streams = 0
    }
    private let state = Mutex(State())

    init(identifier: String = "sim:test-\(UUID().uuidString.prefix(8))") { self.identifier = identifier }

    var restarts: Int { state.withLock { $0.restarts } }
    var streams: Int { state.withLock { $0.streams } }

    func events(_ options: NFCPollingOption) -> AsyncThrowingStream<ReaderBackendEvent, any Error> {
        let (stream, k) = AsyncThrowingStream<ReaderBackendEvent, any Error>.makeStream()
        let present = state.withLock { s in
            s.continuation = k
            s.streams += 1
            return s.field.map(\.0)
        }
        if !present.isEmpty { k.yield(.detected(present)) }
        return stream
    }

    func restartPolling() {
        let (k, present) = state.withLock { s in
            s.restarts += 1
            return (s.continuation, s.field.map(\.0))
        }
        if !present.isEmpty { k?.yield(.detected(present)) }
    }

    func withTag<R>(_ id: DetectedTargetID, _ body: (TagConnection) throws -> R) throws -> R {
        guard let tag = state.withLock({ s in s.field.first { $0.0.id == id }?.1 }) else {
            throw TagCommunicationError.tagLost
        }
        return try body(tag.connection)
    }

    /// Puts tags into the field (reported together).
    func present(_ tags: [(UInt64, any FieldTag)]) {
        let targets = tags.map {
            DetectedTarget(
                id: DetectedTargetID($0.0), kind: $0.1.kind, uid: [0x04, 0x11, 0x22, UInt8($0.0 & 0xFF)],
                atqa: [0x44, 0x00], sak: $0.1.kind == .type4 ? 0x20 : 0x00,
                ats: $0.1.kind == .type4 ? [0x06, 0x75, 0x77, 0x81, 0x02, 0x80] : nil)
        }
        let k = state.withLock { s in
            s.field += zip(targets, tags.map(\.1)).map { ($0, $1) }
            return s.continuation
        }
        k?.yield(.detected(targets))
    }

    /// Takes a tag out of the field; its transport fails with `tagLost` from now on.
    func remove(_ id: UInt64, announce: Bool = true) {
        let k = state.withLock { s in
            for (target, tag) in s.field where target.id.rawValue == id { tag.markRemoved() }
            s.field.removeAll { $0.0.id.rawValue == id }
            return s.continuation
        }
        if announce { k?.yield(.lost(DetectedTargetID(id))) }
    }

    /// The reader fails (unplugged).
    func fail() {
        state.withLock { $0.continuation }?.finish(throwing: TagCommunicationError.readerFailure("unplugged"))
    }
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

/// A virtual-time bench: manual clock, fake reader, in-process arbiter, trace.
struct Bench {
    let clock = ManualClock()
    let backend = FakeBackend()
    let trace = TraceLog()
    let system: NFCReaderSystem

    init(thermal: ThermalModel = .disabled) {
        let trace = self.trace
        system = NFCReaderSystem(
            backend: backend, clock: clock, arbiter: SessionArbiter(fileLocks: false), thermal: thermal,
            observer: { trace.record($0) })
    }
}

let uriMessage: [UInt8] = [0xD1, 0x01, 0x0C, 0x55, 0x04] + Array("example.com".utf8)
