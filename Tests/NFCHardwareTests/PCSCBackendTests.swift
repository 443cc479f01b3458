import Foundation
import NFCHardware
import NFCTags
import ReaderSession
import Synchronization
import Testing
import VirtualHardware

/// Every suite that drives the vpcd readers of one pcscd nests in here, so `.serialized`
/// keeps them from running at the same time.
@Suite("The virtual bench (pcscd + vpcd), one suite at a time", .serialized)
struct PCSCVirtualBenchSuites {}

/// The repository's `hardware/tags/` (found from this file's path).
enum BenchTags {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("hardware/tags")

    static func load(_ name: String) throws -> TagFile {
        try TagFile.load(path: directory.appendingPathComponent(name).path)
    }
}

/// Collects a backend's events on a task of its own.
final class BackendEventLog: Sendable {
    private let state = Mutex<(events: [ReaderBackendEvent], error: (any Error)?, finished: Bool)>(([], nil, false))
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(_ backend: PCSCReaderBackend) {
        let stream = backend.events(.iso14443)
        let t = Task { [self] in
            do {
                for try await e in stream { self.state.withLock { $0.events.append(e) } }
                self.state.withLock { $0.finished = true }
            } catch {
                self.state.withLock {
                    $0.error = error
                    $0.finished = true
                }
            }
        }
        task.withLock { $0 = t }
    }

    var events: [ReaderBackendEvent] { state.withLock { $0.events } }
    var error: (any Error)? { state.withLock { $0.error } }
    var finished: Bool { state.withLock { $0.finished } }
    var detected: [DetectedTarget] {
        events.flatMap { (e: ReaderBackendEvent) -> [DetectedTarget] in
            if case .detected(let t) = e { return t }
            return []
        }
    }
    var lost: [DetectedTargetID] { events.compactMap { if case .lost(let id) = $0 { id } else { nil } } }

    /// Polls (20 ms steps, real time: pcscd's own presence polling is real) until `done`.
    func wait(seconds: Double = 5, until done: (BackendEventLog) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if done(self) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return done(self)
    }

    func stop() { task.withLock { $0?.cancel() } }
}

extension PCSCVirtualBenchSuites {
    @Suite(
        "PCSCReaderBackend against pcscd and the vpcd card", .serialized,
        .enabled(if: PCSCBench.enabled, "needs pcscd with the vpcd reader: run through scripts/with-pcscd"))
    struct PCSCBackendTests {
        let reader = PCSCBench.reader0

        /// A card on slot 0, once pcscd has seen the reader empty (a card of an earlier test
        /// that left less than one pcscd poll ago would otherwise still be "present").
        func card(_ personality: any VirtualCardPersonality) async throws -> VirtualCard {
            let reader = self.reader
            let empty = try await onPCSCThread {
                try waitForReader(PCSCContext(), reader, seconds: 5) { !$0.flags.contains(.present) } != nil
            }
            try #require(empty, "the reader did not become empty")
            return VirtualCard(personality: personality, configuration: .init(port: 35963))
        }

        @Test("A T4T tag file on the vpcd card is detected as type4 with its UID and read through Type4TagReader")
        func detectsType4() async throws {
            let file = try BenchTags.load("t4t-uri.json")
            let vcard = try await card(try file.makeVirtualCardPersonality())
            let backend = PCSCReaderBackend(
                reader: reader, configuration: .init(presenceCheckInterval: .milliseconds(100)))
            let log = BackendEventLog(backend)
            defer {
                log.stop()
                vcard.stop()
            }
            vcard.start()
            #expect(await log.wait { $0.detected.count == 1 })
            let target = try #require(log.detected.first)
            #expect(target.kind == .type4)
            #expect(target.uid == file.activation.uid)
            #expect(target.atr?.prefix(4) == [0x3B, 0x81, 0x80, 0x01], "ATR carries the ATS's one historical byte")
            let message = try await onPCSCThread {
                try backend.withTag(target.id) { c -> [UInt8] in
                    guard case .iso7816(let t) = c else { throw PCSCBenchMissing(reason: "not an ISO 7816 connection") }
                    return try readType4NDEF(t)
                }
            }
            #expect(message == file.type4?.ndefMessage)
            #expect(try NFCNDEFMessage(bytes: message).records.count == 1)
        }

        @Test(
            "An NTAG213 tag file behind a storage-card ATR is type2, GET_VERSION says NTAG213, NDEF reads through Type2TagReader"
        )
        func detectsType2() async throws {
            let file = try BenchTags.load("ntag213-text.json")
            let vcard = try await card(try file.makeVirtualCardPersonality())
            let backend = PCSCReaderBackend(
                reader: reader, configuration: .init(presenceCheckInterval: .milliseconds(100)))
            let log = BackendEventLog(backend)
            defer {
                log.stop()
                vcard.stop()
            }
            vcard.start()
            #expect(await log.wait { $0.detected.count == 1 })
            let target = try #require(log.detected.first)
            #expect(target.kind == .type2)
            #expect(target.uid == file.activation.uid)
            let identification = try #require(backend.identification(of: target.id))
            #expect(identification.version?.bytes == file.getVersion)
            #expect(identification.contactless == .storageCard(standard: .iso14443APart3, cardName: .mifareUltralight))
            let expected = try Type2TagReader(transport: EmulatedType2Transport(core: file.makeCore())).readNDEF()
            let message = try await onPCSCThread {
                try backend.withTag(target.id) { c -> [UInt8] in
                    guard case .type2(let t) = c else { throw PCSCBenchMissing(reason: "not a Type 2 connection") }
                    return try Type2TagReader(transport: t).readNDEF()
                }
            }
            #expect(!message.isEmpty)
            #expect(message == expected)
        }

        @Test(
            "A tag left on the reader is reported once; restartPolling reports it again with a new id; removal is lost")
        func reportOnceThenLost() async throws {
            let file = try BenchTags.load("t4t-uri.json")
            let vcard = try await card(try file.makeVirtualCardPersonality())
            let backend = PCSCReaderBackend(
                reader: reader, configuration: .init(presenceCheckInterval: .milliseconds(50)))
            let log = BackendEventLog(backend)
            defer {
                log.stop()
                vcard.stop()
            }
            vcard.start()
            #expect(await log.wait { $0.detected.count == 1 })
            // Stay for several presence slices and pcscd polls, and touch the card meanwhile.
            let first = try #require(log.detected.first)
            _ = try await onPCSCThread { try backend.withTag(first.id) { _ in 0 } }
            try await Task.sleep(for: .milliseconds(1_200))
            #expect(log.detected.count == 1, "a tag left on the reader is reported once")
            backend.restartPolling()
            #expect(await log.wait { $0.detected.count == 2 })
            let second = try #require(log.detected.last)
            #expect(second.id != first.id)
            #expect(log.lost == [first.id], "restartPolling drops the old id")
            #expect(throws: TagCommunicationError.tagLost) { try backend.withTag(first.id) { _ in 0 } }
            vcard.remove()
            #expect(await log.wait { $0.lost.count == 2 })
            #expect(log.lost.last == second.id)
            #expect(throws: TagCommunicationError.tagLost) { try backend.withTag(second.id) { _ in 0 } }
            vcard.present()
            #expect(await log.wait { $0.detected.count == 3 }, "re-presented after removal: reported again")
            #expect(!log.finished)
        }

        @Test("A card pulled mid-read is TagCommunicationError.tagLost, and a read-write session's readNDEF gets 100")
        func pulledMidRead() async throws {
            let file = try BenchTags.load("t4t-uri.json")
            let vcard = try await card(try file.makeVirtualCardPersonality())
            let backend = PCSCReaderBackend(
                reader: reader, configuration: .init(presenceCheckInterval: .milliseconds(50)))
            defer { vcard.stop() }
            vcard.start()

            let system = NFCReaderSystem(
                backend: backend, arbiter: SessionArbiter(fileLocks: false), thermal: .disabled)
            let session = NFCNDEFReaderSession(
                delegate: PCSCRWDelegate(), queue: nil, invalidateAfterFirstRead: false, system: system)
            var it = session.events.makeAsyncIterator()
            session.begin()
            guard case .didBecomeActive? = await it.next() else {
                Issue.record("not active")
                return
            }
            guard case .didDetectTags(let tags)? = await it.next(), let tag = tags.first else {
                Issue.record("no tag delivered")
                return
            }
            try await session.connect(to: tag)
            // The SELECT of the NDEF application reaches the card, which then leaves the field.
            vcard.inject(.closeMidAPDU)
            do {
                _ = try await tag.readNDEF()
                Issue.record("readNDEF succeeded on a pulled card")
            } catch let error as NFCReaderError {
                #expect(error.code == .readerTransceiveErrorTagConnectionLost)
                #expect(error.code.rawValue == 100)
            }
            session.invalidate()

            // And at the transport level: the same fault gives .tagLost.
            vcard.present()
            let log = BackendEventLog(backend)
            defer { log.stop() }
            #expect(await log.wait { !$0.detected.isEmpty })
            let target = try #require(log.detected.last)
            vcard.inject(.closeMidAPDU)
            let outcome: Result<[UInt8], TagCommunicationError> = try await onPCSCThread {
                do {
                    return .success(
                        try backend.withTag(target.id) { c -> [UInt8] in
                            guard case .iso7816(let t) = c else { return [] }
                            return try t.transmit(Type4TagReader<PCSCAPDUTransport>.selectApplicationAPDU)
                        })
                } catch let e as TagCommunicationError {
                    return .failure(e)
                }
            }
            #expect(outcome == .failure(.tagLost))
        }

        @Test("Garbage answers (wrong SW, short CC, NLEN beyond the file) are typed errors, never a crash")
        func garbage() async throws {
            let message: [UInt8] = [0xD1, 0x01, 0x04, 0x54, 0x02, 0x65, 0x6E, 0x41]
            let shortCC = Type4NDEFApplication(
                rawCapabilityContainer: [0x00, 0x0F, 0x20, 0x00], ndefFileID: 0xE104, ndefFile: [0x00, 0x08] + message)
            let longNLEN = Type4NDEFApplication(
                rawCapabilityContainer: [UInt8](hex: "00 0F 20 00 FF 00 FF 04 06 E1 04 00 20 00 00")!,
                ndefFileID: 0xE104, ndefFile: [0x00, 0x1F] + message)
            let good = try Type4NDEFApplication(ndefMessage: message)
            let cases: [(String, Type4NDEFApplication, VirtualCardFault?)] = [
                ("wrong SW to SELECT", good, .replace([0x6F, 0x00])),
                ("short answer", good, .replace([0x90])),
                ("short CC", shortCC, nil),
                ("NLEN beyond the file", longNLEN, nil),
            ]
            let backend = PCSCReaderBackend(
                reader: reader, configuration: .init(presenceCheckInterval: .milliseconds(50)))
            for (name, app, fault) in cases {
                let vcard = try await card(ISO14443Part4Personality(core: app))
                let log = BackendEventLog(backend)
                vcard.start()
                #expect(await log.wait { !$0.detected.isEmpty }, "\(name): detected")
                guard let target = log.detected.first else {
                    log.stop()
                    vcard.stop()
                    continue
                }
                if let fault { vcard.inject(fault) }
                let error: (any Error)? = try await onPCSCThread {
                    do {
                        _ = try backend.withTag(target.id) { c -> [UInt8] in
                            guard case .iso7816(let t) = c else { return [] }
                            return try readType4NDEF(t)
                        }
                        return nil
                    } catch {
                        return error
                    }
                }
                #expect(error is Type4TagError, "\(name): \(String(describing: error))")
                vcard.stop()
                #expect(await log.wait { !$0.lost.isEmpty }, "\(name): lost")
                log.stop()
            }
        }

        @Test("No such reader: the stream finishes with readerGone")
        func unknownReader() async throws {
            let backend = PCSCReaderBackend(reader: "No Such Reader 00 00")
            let log = BackendEventLog(backend)
            defer { log.stop() }
            #expect(await log.wait { $0.finished })
            #expect(log.error as? PCSCReaderBackendError == .readerGone("No Such Reader 00 00"))
        }
    }
}

final class PCSCRWDelegate: NFCNDEFReaderSessionTagDelegate, Sendable {
    func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [any NFCNDEFTag]) {}
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {}
}

/// Opens the existential for the generic reader.
func readType4NDEF(_ transport: some APDUTransport) throws -> [UInt8] {
    try Type4TagReader(transport: transport).readNDEF()
}

extension Type4TagReader {
    /// SELECT of the NDEF Tag Application by name (T4T §5.4.2), Le present.
    static var selectApplicationAPDU: [UInt8] { [0x00, 0xA4, 0x04, 0x00, 0x07] + ndefApplicationAID + [0x00] }
}

@Suite("PCSCCardIdentification.classify (pure)")
struct PCSCBackendClassifyTests {
    @Test(
        "Part 3 ATRs: Ultralight storage card → type2, Classic → other, ISO 14443-4 → type4, contact ATR → other, bytes of junk → other"
    )
    func classify() throws {
        let ul = ATR.storageCard(standard: .iso14443APart3, cardName: .mifareUltralight).bytes
        #expect(PCSCCardIdentification.classify(atr: ul).kind == .type2)
        let classic = ATR.storageCard(standard: .iso14443APart3, cardName: .mifareClassic1K).bytes
        #expect(PCSCCardIdentification.classify(atr: classic).kind == .other)
        let t4 = try ATR.iso14443_4(historicalBytes: [0x80]).bytes
        #expect(PCSCCardIdentification.classify(atr: t4).kind == .type4)
        #expect(
            PCSCCardIdentification.classify(
                atr: [UInt8](hex: "3B 9F 95 81 31 FE 9F 00 66 46 53 05 10 00 11 71 DF 00 00 00 6A 82 5E")!
            ).kind == .other)
        for junk: [UInt8] in [[], [0x3B], [0xFF, 0xFF, 0xFF], [0x3B, 0x8F, 0x80]] {
            #expect(PCSCCardIdentification.classify(atr: junk).kind == .other)
        }
    }

    @Test("ATS historical bytes: TL T0 TA TB TC then the rest; malformed ATS gives none")
    func historicalBytes() throws {
        let file = try BenchTags.load("t4t-uri.json")
        let personality = try file.makeVirtualCardPersonality()
        #expect(personality.atr == (try ATR.iso14443_4(historicalBytes: [0x80]).bytes))
    }
}
