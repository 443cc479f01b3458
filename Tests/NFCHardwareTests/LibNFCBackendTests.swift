import Foundation
import NFCHardware
import NFCTags
import ReaderSession
import Synchronization
import Testing
import VirtualHardware

/// Collects a backend's events on a task of its own, so tests can wait for them with a deadline.
final class LibNFCBackendEventLog: Sendable {
    private let events = Mutex<[ReaderBackendEvent]>([])
    private let failure = Mutex<(any Error)?>(nil)
    private let finishedAt = Mutex<ContinuousClock.Instant?>(nil)
    let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(_ stream: AsyncThrowingStream<ReaderBackendEvent, any Error>) {
        let t = Task { [self] in
            do {
                for try await e in stream { events.withLock { $0.append(e) } }
            } catch {
                failure.withLock { $0 = error }
            }
            finishedAt.withLock { $0 = .now }
        }
        task.withLock { $0 = t }
    }

    var all: [ReaderBackendEvent] { events.withLock { $0 } }
    var error: (any Error)? { failure.withLock { $0 } }
    var finished: ContinuousClock.Instant? { finishedAt.withLock { $0 } }
    var detections: [DetectedTarget] {
        all.flatMap { e -> [DetectedTarget] in if case .detected(let d) = e { d } else { [] } }
    }
    var losses: [DetectedTargetID] {
        all.compactMap { e -> DetectedTargetID? in if case .lost(let id) = e { id } else { nil } }
    }

    /// Waits until `condition` holds (checked every 10 ms), at most `limit`.
    func wait(_ limit: Duration = .seconds(5), until condition: () -> Bool) async -> Bool {
        let end = ContinuousClock.now + limit
        while ContinuousClock.now < end {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    func cancel() { task.withLock { $0 }?.cancel() }
}

/// A Type 2 core that leaves the field after `writes` WRITE frames (it goes silent, as a
/// tag pulled away mid-write does).
struct LeavesAfterWrites: PN532Type2Responder {
    var core: NTAG21xCore
    var writes: Int
    var seen = 0
    mutating func respond(to frame: [UInt8]) -> Type2Answer {
        if frame.first == 0xA2 {
            if seen == writes { return .silent }
            seen += 1
        }
        if seen == writes && writes > 0 && frame.first == 0x30 { return .silent }
        return core.respond(to: frame)
    }
    mutating func halt() { core.halt() }
    mutating func wakeUp() { core.wakeUp() }
}

enum LibNFCBackendBench {
    static let tags = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("hardware/tags").path

    static func tagFile(_ name: String) throws -> TagFile { try TagFile.load(path: "\(tags)/\(name).json") }

    /// A virtual PN532 with `card` in the field and a backend on it.
    static func start(_ card: PN532Card?, tag: String) throws -> (VirtualPN532, LibNFCReaderBackend) {
        let link = LibNFCTestBench.linkPath(tag)
        let fake = try VirtualPN532.start(ptyPath: link)
        if let card { fake.present(card) }
        let backend = try LibNFCReaderBackend(connstring: "pn532_uart:\(link)", presenceInterval: .milliseconds(50))
        return (fake, backend)
    }
}

extension LibNFCInProcessTests {
    @Suite("LibNFCReaderBackend against the virtual PN532", .serialized, .enabled(if: LibNFCTestBench.enabled))
    struct LibNFCBackendTests {
        @Test(
            "A virtual NTAG215 from hardware/tags is identified (SAK 00, GET_VERSION) and a first-read NDEF session reads it and ends with 204"
        )
        func sessionReadsNTAG215() async throws {
            let file = try LibNFCBackendBench.tagFile("ntag215-uri")
            let (fake, backend) = try LibNFCBackendBench.start(try PN532Card(tagFile: file), tag: "session")
            defer { fake.stop() }
            let system = NFCReaderSystem(
                backend: backend, arbiter: SessionArbiter(fileLocks: false), thermal: .disabled)
            final class Delegate: NFCNDEFReaderSessionDelegate, @unchecked Sendable {
                func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}
                func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {}
            }
            let delegate = Delegate()
            let session = NFCNDEFReaderSession(
                delegate: delegate, queue: nil, invalidateAfterFirstRead: true, system: system)
            var events = session.events.makeAsyncIterator()
            session.begin()
            var messages: [NFCNDEFMessage] = []
            var end: NFCReaderError?
            while let e = await events.next() {
                if case .didDetectNDEFs(let m) = e { messages = m }
                if case .didInvalidate(let err) = e { end = err }
            }
            let expected = try #require(
                file.pages.count > 10 ? Array(file.pages[4...].joined().dropFirst(2).prefix(0x19)) : nil)
            #expect(messages == [try NFCNDEFMessage(bytes: expected)])
            #expect(end?.code == .readerSessionInvalidationErrorFirstNDEFTagRead)
            let record = try NFCNDEFMessage(bytes: expected).records.first
            #expect(record?.wellKnownTypeURIPayload()?.absoluteString == "https://example.com/nfcbench")
        }

        @Test(
            "Identification: Type 2 with its GET_VERSION product, Type 4 from SAK 20; a tag left in the field is reported once"
        )
        func identifiesAndReportsOnce() async throws {
            let (fake, backend) = try LibNFCBackendBench.start(
                try PN532Card(tagFile: LibNFCBackendBench.tagFile("ntag213-text")), tag: "ident")
            defer { fake.stop() }
            let log = LibNFCBackendEventLog(backend.events(.iso14443))
            #expect(await log.wait { !log.detections.isEmpty })
            let t = try #require(log.detections.first)
            #expect(t.kind == .type2)
            #expect(t.sak == 0x00)
            #expect(t.atqa == [0x44, 0x00], "wire order")
            #expect(backend.tagVersion(of: t.id)?.product == .ntag213)
            try await Task.sleep(for: .milliseconds(500))
            #expect(log.detections.count == 1, "ten presence checks later it is still one detection: \(log.all)")
            #expect(log.losses.isEmpty)
            let text = try backend.withTag(t.id) { c -> [UInt8] in
                guard case .type2(let transport) = c else { return [] }
                return try Type2TagReader(transport: transport).readNDEF()
            }
            #expect(try NFCNDEFMessage(bytes: text).records.first?.wellKnownTypeTextPayload().0 == "Hello, bench")
            log.cancel()

            let (fake4, backend4) = try LibNFCBackendBench.start(
                try PN532Card(tagFile: LibNFCBackendBench.tagFile("t4t-uri")), tag: "ident4")
            defer { fake4.stop() }
            let log4 = LibNFCBackendEventLog(backend4.events(.iso14443))
            #expect(await log4.wait { !log4.detections.isEmpty })
            let t4 = try #require(log4.detections.first)
            #expect(t4.kind == .type4)
            #expect(t4.ats?.first == 0x06, "ATS with its TL byte")
            let message = try backend4.withTag(t4.id) { c -> [UInt8] in
                guard case .iso7816(let transport) = c else { return [] }
                struct T: APDUTransport {
                    let base: any APDUTransport
                    func transmit(_ c: [UInt8]) throws -> [UInt8] { try base.transmit(c) }
                }
                return try Type4TagReader(transport: T(base: transport)).readNDEF()
            }
            #expect(
                try NFCNDEFMessage(bytes: message).records.first?.wellKnownTypeURIPayload()?.absoluteString
                    == "https://example.com/nfcbench/t4t")
            log4.cancel()
        }

        @Test("restartPolling reports the tag again under a new id and the old id is refused; removal reports .lost")
        func restartAndRemoval() async throws {
            let (fake, backend) = try LibNFCBackendBench.start(
                try PN532Card(tagFile: LibNFCBackendBench.tagFile("ntag215-uri")), tag: "restart")
            defer { fake.stop() }
            let log = LibNFCBackendEventLog(backend.events(.iso14443))
            #expect(await log.wait { log.detections.count == 1 })
            let first = try #require(log.detections.first)
            backend.restartPolling()
            #expect(await log.wait { log.detections.count == 2 })
            let second = try #require(log.detections.last)
            #expect(second.id != first.id)
            #expect(second.uid == first.uid)
            #expect(throws: TagCommunicationError.tagLost) { try backend.withTag(first.id) { _ in 0 } }
            let cc = try backend.withTag(second.id) { c -> [UInt8] in
                guard case .type2(let t) = c else { return [] }
                return try t.read(page: 3)
            }
            #expect(cc.prefix(4) == [0xE1, 0x10, 0x3E, 0x00])
            fake.remove()
            #expect(await log.wait { log.losses == [second.id] }, "\(log.all)")
            log.cancel()
        }

        @Test("A tag pulled mid-read fails the read with a carrier error (Core NFC 100), not with bad data")
        func pulledMidRead() async throws {
            let (fake, backend) = try LibNFCBackendBench.start(
                try PN532Card(tagFile: LibNFCBackendBench.tagFile("ntag215-uri")), tag: "pulled")
            defer { fake.stop() }
            let log = LibNFCBackendEventLog(backend.events(.iso14443))
            #expect(await log.wait { !log.detections.isEmpty })
            let t = try #require(log.detections.first)
            let error = #expect(throws: TagCommunicationError.self) {
                try backend.withTag(t.id) { c in
                    guard case .type2(let transport) = c else { return }
                    _ = try transport.read(page: 4)
                    fake.remove()
                    _ = try transport.read(page: 8)
                }
            }
            #expect(error == .noResponse || error == .tagLost, "both are readerTransceiveErrorTagConnectionLost (100)")
            log.cancel()
        }

        @Test("A tag leaving mid-write gives writeInterrupted naming exactly the pages written")
        func pulledMidWrite() async throws {
            let core = try LibNFCBackendBench.tagFile("ntag215-uri").makeCore()
            let card = PN532Card(
                uid: [0x04, 0xA2, 0x3B, 0x91, 0x5C, 0x6E, 0x80], atqa: [0x44, 0x00], sak: 0,
                function: .type2(LeavesAfterWrites(core: core, writes: 2)))
            let (fake, backend) = try LibNFCBackendBench.start(card, tag: "midwrite")
            defer { fake.stop() }
            let log = LibNFCBackendEventLog(backend.events(.iso14443))
            #expect(await log.wait { !log.detections.isEmpty })
            let t = try #require(log.detections.first)
            let message = NFCNDEFMessage(records: [
                try #require(
                    NFCNDEFPayload.wellKnownTypeTextPayload(
                        string: String(repeating: "x", count: 40), locale: Locale(identifier: "en")))
            ]).bytes
            let error = #expect(throws: Type2TagError.self) {
                try backend.withTag(t.id) { c in
                    guard case .type2(let transport) = c else { return }
                    try Type2TagReader(transport: transport).writeNDEF(message)
                }
            }
            guard case .writeInterrupted(let pages, let cause)? = error?.code else {
                Issue.record("expected writeInterrupted, got \(String(describing: error))")
                return
            }
            #expect(pages == [4, 5])
            #expect(cause == .noResponse)
            log.cancel()
        }

        @Test("Closing the pty under a running stream finishes it with a reader failure within 1 s")
        func unplugged() async throws {
            let (fake, backend) = try LibNFCBackendBench.start(
                try PN532Card(tagFile: LibNFCBackendBench.tagFile("ntag215-uri")), tag: "unplug")
            defer { fake.stop() }
            let log = LibNFCBackendEventLog(backend.events(.iso14443))
            #expect(await log.wait { !log.detections.isEmpty })
            let pulled = ContinuousClock.now
            fake.unplug()
            #expect(await log.wait(.seconds(3)) { log.finished != nil })
            let took = try #require(log.finished) - pulled
            #expect(took < .seconds(1), "took \(took)")
            guard case .readerFailure(let why)? = log.error as? TagCommunicationError else {
                Issue.record("expected readerFailure, got \(String(describing: log.error))")
                return
            }
            #expect(why.contains(backend.identifier))
        }

        @Test("Unplugged while no tag is in the field (blocked in the endless poll) also ends the stream within 1 s")
        func unpluggedWhilePolling() async throws {
            let (fake, backend) = try LibNFCBackendBench.start(nil, tag: "unplug-poll")
            defer { fake.stop() }
            let log = LibNFCBackendEventLog(backend.events(.iso14443))
            try await Task.sleep(for: .milliseconds(300))
            let pulled = ContinuousClock.now
            fake.unplug()
            #expect(await log.wait(.seconds(3)) { log.finished != nil })
            #expect(try #require(log.finished) - pulled < .seconds(1))
            #expect(log.error is TagCommunicationError)
        }

        @Test("A corrupt frame from the chip is a typed error for that exchange; the stream survives it")
        func corruptFrame() async throws {
            let (fake, backend) = try LibNFCBackendBench.start(
                try PN532Card(tagFile: LibNFCBackendBench.tagFile("ntag215-uri")), tag: "corrupt")
            defer { fake.stop() }
            let log = LibNFCBackendEventLog(backend.events(.iso14443))
            #expect(await log.wait { !log.detections.isEmpty })
            let t = try #require(log.detections.first)
            let error = #expect(throws: TagCommunicationError.self) {
                try backend.withTag(t.id) { c in
                    guard case .type2(let transport) = c else { return }
                    fake.inject(.corruptResponseChecksum)
                    _ = try transport.read(page: 4)
                }
            }
            #expect(error != nil)
            try await Task.sleep(for: .milliseconds(300))
            #expect(log.finished == nil, "one bad frame is not an unplugged reader")
            let again = try backend.withTag(t.id) { c -> [UInt8] in
                guard case .type2(let tr) = c else { return [] }
                return try tr.read(page: 3)
            }
            #expect(again.count == 16)
            log.cancel()
        }

        @Test("A CC, a TLV or a length that lies is a typed error, and no READ goes past the data area")
        func lyingStructures() async throws {
            var file = try LibNFCBackendBench.tagFile("ntag215-uri")
            // CC: data area of 0x10 × 8 = 128 bytes (pages 4–35); NDEF TLV claims 0x0200 bytes.
            file.pages[3] = [0xE1, 0x10, 0x10, 0x00]
            file.pages[4] = [0x03, 0xFF, 0x02, 0x00]
            let (fake, backend) = try LibNFCBackendBench.start(try PN532Card(tagFile: file), tag: "lies")
            defer { fake.stop() }
            let log = LibNFCBackendEventLog(backend.events(.iso14443))
            #expect(await log.wait { !log.detections.isEmpty })
            let t = try #require(log.detections.first)
            let before = fake.frameLog.count
            let error = #expect(throws: Type2TagError.self) {
                try backend.withTag(t.id) { c in
                    guard case .type2(let transport) = c else { return }
                    _ = try Type2TagReader(transport: transport).readNDEF()
                }
            }
            #expect(error?.code == .lengthBeyondDataArea)
            // READ frames are InCommunicateThru (D4 42) 30 PAGE; none may start at page ≥ 36.
            let reads = fake.frameLog.dropFirst(before).filter { $0.direction == .hostToChip }.compactMap {
                e -> UInt8? in
                guard let i = e.bytes.firstIndex(of: 0xD4), i + 3 < e.bytes.count, e.bytes[i + 1] == 0x42,
                    e.bytes[i + 2] == 0x30
                else { return nil }
                return e.bytes[i + 3]
            }
            #expect(!reads.isEmpty)
            #expect(reads.allSatisfy { $0 < 36 }, "pages read: \(reads)")

            log.cancel()
        }
    }
}
