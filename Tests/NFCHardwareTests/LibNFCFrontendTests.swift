import Foundation
import NFCBenchTestSupport
import NFCTags
import ReaderFrontend
import ReaderSession
import Synchronization
import Testing
import VirtualHardware

@testable import NFCHardware

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

enum LibNFCFrontendBench {
    /// A virtual PN532 with `card` in the field, and a frontend that opens a
    /// ``LibNFCReaderDevice`` on it (real libnfc, `pn532_uart` driver) when polling starts.
    static func start(
        _ card: PN532Card?, tag: String, clock: any ReaderSessionClock = ContinuousReaderClock(),
        presence: Duration = .milliseconds(50)
    ) throws -> (VirtualPN532, ReaderFrontend) {
        let link = LibNFCTestBench.linkPath(tag)
        let fake = try VirtualPN532.start(ptyPath: link)
        if let card { fake.present(card) }
        let connstring = "pn532_uart:\(link)"
        let frontend = ReaderFrontend(
            identifier: connstring, clock: clock, configuration: .init(presenceInterval: presence),
            open: { () throws(NFCDeviceError) in try LibNFCReaderDevice(connstring: connstring) })
        return (fake, frontend)
    }

    static func card(_ tagFile: String) throws -> PN532Card { try PN532Card(tagFile: BenchTags.load(tagFile)) }

    /// Host frames (`D4 <code> …`) the virtual PN532 received from `index` on.
    static func hostCommands(_ fake: VirtualPN532, from index: Int = 0) -> [[UInt8]] {
        fake.frameLog.dropFirst(index).filter { $0.direction == .hostToChip }.compactMap { e -> [UInt8]? in
            guard let i = e.bytes.firstIndex(of: 0xD4), i + 1 < e.bytes.count else { return nil }
            return Array(e.bytes[(i + 1)...])
        }
    }
}

extension LibNFCInProcessTests {
    @Suite(
        "LibNFCReaderDevice under the reader frontend, against the virtual PN532", .serialized,
        .enabled(if: LibNFCTestBench.enabled))
    struct LibNFCFrontendTests {
        @Test("A virtual NTAG215 from hardware/tags: a first-read NDEF session reads it and ends with 204")
        func sessionReadsNTAG215() async throws {
            let file = try BenchTags.load("ntag215-uri")
            let (fake, frontend) = try LibNFCFrontendBench.start(try PN532Card(tagFile: file), tag: "session")
            defer {
                frontend.close()
                fake.stop()
            }
            let system = NFCReaderSystem(
                backend: frontend, arbiter: SessionArbiter(fileLocks: false), thermal: .disabled)
            final class Delegate: NSObject, NFCNDEFReaderSessionDelegate, @unchecked Sendable {
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
            let expected = Array(file.pages[4...].joined().dropFirst(2).prefix(0x19))
            #expect(messages == [try NFCNDEFMessage(bytes: expected)])
            #expect(end?.code == .readerSessionInvalidationErrorFirstNDEFTagRead)
            let record = try NFCNDEFMessage(bytes: expected).records.first
            #expect(record?.wellKnownTypeURIPayload()?.absoluteString == "https://example.com/nfcbench")
        }

        @Test(
            "Type 2 by SAK 00 with ATQA in wire order, reported once while it stays; the procedure identifies it (GET_VERSION), not the device"
        )
        func type2ReportedOnce() async throws {
            let (fake, frontend) = try LibNFCFrontendBench.start(
                try LibNFCFrontendBench.card("ntag213-text"), tag: "ident")
            defer {
                frontend.close()
                fake.stop()
            }
            let log = FrontendEventLog(frontend)
            defer { log.cancel() }
            #expect(await log.wait { !log.detections.isEmpty })
            let t = try #require(log.detections.first)
            #expect(t.kind == .type2)
            #expect(t.family == .type2)
            #expect(t.sak == 0x00)
            #expect(t.atqa == [0x44, 0x00], "wire order")
            #expect(frontend.target(t.id)?.classification.source == "NFC Forum Digital 2.0 §4.8.2 (table 22)")
            let getVersions = LibNFCFrontendBench.hostCommands(fake).filter { $0.starts(with: [0x42, 0x60]) }
            #expect(getVersions.isEmpty, "no GET_VERSION at detection")
            try await holds(for: .milliseconds(500), "one detection over ten presence checks: \(log.all)") {
                log.detections.count == 1
            }
            #expect(log.losses.isEmpty)
            let (version, text) = try await withTag(frontend, t.id) { c -> (TagVersion?, [UInt8]) in
                guard case .type2(let transport) = c else { return (nil, []) }
                var reader = Type2TagReader(transport: transport)
                let v = try reader.identify()
                return (v, try reader.readNDEF())
            }
            #expect(version?.product == .ntag213)
            #expect(try NFCNDEFMessage(bytes: text).records.first?.wellKnownTypeTextPayload().0 == "Hello, bench")
        }

        @Test("ISO-DEP by SAK 20, the ATS with its TL byte; the NDEF application reads through APDUs")
        func isoDEP() async throws {
            let (fake, frontend) = try LibNFCFrontendBench.start(try LibNFCFrontendBench.card("t4t-uri"), tag: "ident4")
            defer {
                frontend.close()
                fake.stop()
            }
            let log = FrontendEventLog(frontend)
            defer { log.cancel() }
            #expect(await log.wait { !log.detections.isEmpty })
            let t = try #require(log.detections.first)
            #expect(t.kind == .type4)
            #expect(t.family == .isoDEP)
            #expect(t.ats?.first == 0x06, "ATS with its TL byte")
            let message = try await withTag(frontend, t.id) { c -> [UInt8] in
                guard case .iso7816(let transport) = c else { return [] }
                return try readType4NDEF(AnyAPDU(transport))
            }
            #expect(
                try NFCNDEFMessage(bytes: message).records.first?.wellKnownTypeURIPayload()?.absoluteString
                    == "https://example.com/nfcbench/t4t")
        }

        @Test(
            "A MIFARE Classic card (SAK 08) is classified mifareClassic by the frontend (AN10833), stays present, and is not read as a Type 2 tag"
        )
        func mifareClassic() async throws {
            let file = try BenchTags.load("mifare-classic-1k")
            let (fake, frontend) = try LibNFCFrontendBench.start(try PN532Card(tagFile: file), tag: "classic")
            defer {
                frontend.close()
                fake.stop()
            }
            let log = FrontendEventLog(frontend)
            defer { log.cancel() }
            #expect(await log.wait { !log.detections.isEmpty })
            let t = try #require(log.detections.first)
            #expect(t.family == .mifareClassic)
            #expect(t.kind == .other, "not a Type 2 tag, though SAK b7b6 = 00")
            #expect(t.sak == 0x08 && t.atqa == file.activation.atqa && t.uid == file.activation.uid)
            #expect(frontend.target(t.id)?.classification.source == "NXP AN10833 §3 (table 4)")
            let error = await withTagError(frontend, t.id) { _ in }
            let why = try #require(
                matched { if case .readerFailure(let why)? = error as? TagCommunicationError { why } else { nil } },
                "expected readerFailure, got \(String(describing: error))")
            #expect(why.contains("mifareClassic"))
            // libnfc checks a MIFARE Classic's presence by selecting it again.
            try await holds(for: .milliseconds(300), "no loss, one detection: \(log.all)") {
                log.losses.isEmpty && log.detections.count == 1
            }
            fake.remove()
            #expect(await log.wait { log.losses == [t.id] })
        }

        @Test("restartPolling reports the tag again under a new id and the old id is refused; removal reports .lost")
        func restartAndRemoval() async throws {
            let (fake, frontend) = try LibNFCFrontendBench.start(
                try LibNFCFrontendBench.card("ntag215-uri"), tag: "restart")
            defer {
                frontend.close()
                fake.stop()
            }
            let log = FrontendEventLog(frontend)
            defer { log.cancel() }
            #expect(await log.wait { log.detections.count == 1 })
            let first = try #require(log.detections.first)
            frontend.restartPolling()
            #expect(await log.wait { log.detections.count == 2 })
            let second = try #require(log.detections.last)
            #expect(second.id != first.id)
            #expect(second.uid == first.uid)
            #expect(log.losses.isEmpty, "a restart re-reports; it loses nothing")
            let stale = await withTagError(frontend, first.id) { _ in }
            #expect(stale as? TagCommunicationError == .tagLost)
            let cc = try await withTag(frontend, second.id) { c -> [UInt8] in
                guard case .type2(let t) = c else { return [] }
                return try t.read(page: 3)
            }
            #expect(cc.prefix(4) == [0xE1, 0x10, 0x3E, 0x00])
            fake.remove()
            #expect(await log.wait { log.losses == [second.id] }, "\(log.all)")
            fake.present(try LibNFCFrontendBench.card("ntag215-uri"))
            #expect(await log.wait { log.detections.count == 3 }, "presented again: a new presentation")
            #expect(Set(log.detections.map(\.id)).count == 3)
        }

        @Test("A tag pulled mid-read fails the read with a carrier error (Core NFC 100), not with bad data")
        func pulledMidRead() async throws {
            let (fake, frontend) = try LibNFCFrontendBench.start(
                try LibNFCFrontendBench.card("ntag215-uri"), tag: "pulled")
            defer {
                frontend.close()
                fake.stop()
            }
            let log = FrontendEventLog(frontend)
            defer { log.cancel() }
            #expect(await log.wait { !log.detections.isEmpty })
            let t = try #require(log.detections.first)
            let error = await withTagError(frontend, t.id) { c in
                guard case .type2(let transport) = c else { throw UnexpectedConnection(c) }
                _ = try transport.read(page: 4)
                fake.remove()
                _ = try transport.read(page: 8)
            }
            let e = error as? TagCommunicationError
            #expect(e == .noResponse || e == .tagLost, "both are readerTransceiveErrorTagConnectionLost (100)")
            #expect(await log.wait { log.losses == [t.id] })
        }

        @Test("A tag leaving mid-write gives writeInterrupted naming exactly the pages written")
        func pulledMidWrite() async throws {
            let core = try BenchTags.load("ntag215-uri").makeCore()
            let card = PN532Card(
                uid: [0x04, 0xA2, 0x3B, 0x91, 0x5C, 0x6E, 0x80], atqa: [0x44, 0x00], sak: 0,
                function: .type2(LeavesAfterWrites(core: core, writes: 2)))
            let (fake, frontend) = try LibNFCFrontendBench.start(card, tag: "midwrite")
            defer {
                frontend.close()
                fake.stop()
            }
            let log = FrontendEventLog(frontend)
            defer { log.cancel() }
            #expect(await log.wait { !log.detections.isEmpty })
            let t = try #require(log.detections.first)
            let message = NFCNDEFMessage(records: [
                try #require(
                    NFCNDEFPayload.wellKnownTypeTextPayload(
                        string: String(repeating: "x", count: 40), locale: Locale(identifier: "en")))
            ]).bytes
            let error = await withTagError(frontend, t.id) { c in
                guard case .type2(let transport) = c else { throw UnexpectedConnection(c) }
                try Type2TagReader(transport: transport).writeNDEF(message)
            }
            let (pages, cause) = try #require(
                matched {
                    if case .writeInterrupted(let pages, let cause)? = (error as? Type2TagError)?.code {
                        (pages, cause)
                    } else {
                        nil
                    }
                }, "expected writeInterrupted, got \(String(describing: error))")
            #expect(pages == [4, 5])
            #expect(cause == .noResponse)
        }

        @Test(
            "A tag file's tag_lost fault (the shared card-side wrapper): the read fails where the file says and the frontend reports the tag lost"
        )
        func tagFileFault() async throws {
            var file = try BenchTags.load("ntag215-uri")
            file.faults = [TagFault(.pageRead(8), kind: .tagLost)]
            let (fake, frontend) = try LibNFCFrontendBench.start(try PN532Card(tagFile: file), tag: "fault")
            defer {
                frontend.close()
                fake.stop()
            }
            let log = FrontendEventLog(frontend)
            defer { log.cancel() }
            #expect(await log.wait { !log.detections.isEmpty })
            let t = try #require(log.detections.first)
            final class Pages: Sendable { let read = Mutex<[UInt8]>([]) }
            let pages = Pages()
            let error = await withTagError(frontend, t.id) { c in
                guard case .type2(let transport) = c else { throw UnexpectedConnection(c) }
                for page in stride(from: 0, through: 12, by: 4) {
                    _ = try transport.read(page: UInt8(page))
                    pages.read.withLock { $0.append(UInt8(page)) }
                }
            }
            #expect(pages.read.withLock { $0 } == [0, 4], "READ 8 covers page 8: the tag leaves there")
            let e = error as? TagCommunicationError
            #expect(e == .noResponse || e == .tagLost, "\(String(describing: error))")
            #expect(await log.wait { log.losses == [t.id] }, "the tag left the field: \(log.all)")
        }

        @Test("The release after a NAKed GET_VERSION wakes the Ultralight again: it stays present and reads")
        func releaseAfterNAK() async throws {
            let (fake, frontend) = try LibNFCFrontendBench.start(
                try LibNFCFrontendBench.card("ultralight-blank"), tag: "nak")
            defer {
                frontend.close()
                fake.stop()
            }
            let log = FrontendEventLog(frontend)
            defer { log.cancel() }
            #expect(await log.wait { !log.detections.isEmpty })
            let t = try #require(log.detections.first)
            let before = fake.frameLog.count
            let error = await withTagError(frontend, t.id) { c in
                guard case .type2(let transport) = c else { throw UnexpectedConnection(c) }
                _ = try transport.getVersion()
            }
            // An Ultralight NAKs GET_VERSION and goes IDLE; on a loaded machine the NAK can miss the
            // transport's 100 ms answer timeout, which leaves the tag IDLE the same way.
            let e = error as? TagCommunicationError
            #expect(e == .nak(0) || e == .noResponse, "\(String(describing: error))")
            let after = LibNFCFrontendBench.hostCommands(fake, from: before)
            let nak = try #require(after.firstIndex { $0.starts(with: [0x42, 0x60]) })
            #expect(
                after[(nak + 1)...].contains { $0.first == 0x4A }, "release selects it again (InListPassiveTarget)")
            try await holds(for: .milliseconds(300), "six presence checks (READ 0) find it: \(log.all)") {
                log.losses.isEmpty
            }
            let page0 = try await withTag(frontend, t.id) { c -> [UInt8] in
                guard case .type2(let transport) = c else { return [] }
                return try transport.read(page: 0)
            }
            #expect(page0.count == 16)
        }

        @Test(
            "Presence checks run on the injected clock: a removed tag is reported lost only when the ManualClock reaches the next check"
        )
        func presenceOnManualClock() async throws {
            let clock = ManualClock()
            let (fake, frontend) = try LibNFCFrontendBench.start(
                try LibNFCFrontendBench.card("ntag215-uri"), tag: "clock", clock: clock, presence: .milliseconds(100))
            defer {
                frontend.close()
                fake.stop()
            }
            let log = FrontendEventLog(frontend)
            defer { log.cancel() }
            #expect(await log.wait { !log.detections.isEmpty })
            let t = try #require(log.detections.first)
            #expect(await log.wait { clock.pendingTimers == 1 }, "the device thread waits for the clock")
            #expect(clock.nextDeadline == clock.now + .milliseconds(100))
            fake.remove()
            let quiet = fake.frameLog.count
            // With a running clock this would be two presence checks; the manual clock stands still.
            try await holds(for: .milliseconds(200), "no frame and no loss while the clock stands") {
                LibNFCFrontendBench.hostCommands(fake, from: quiet).isEmpty && log.losses.isEmpty
            }
            clock.advance(by: .milliseconds(100))
            #expect(await log.wait(.seconds(2)) { log.losses == [t.id] }, "\(log.all)")
            #expect(clock.now == .milliseconds(100))
        }

        @Test("Closing the pty under a running stream ends it with a device error (.gone) naming the reader within 1 s")
        func unplugged() async throws {
            let (fake, frontend) = try LibNFCFrontendBench.start(
                try LibNFCFrontendBench.card("ntag215-uri"), tag: "unplug")
            defer {
                frontend.close()
                fake.stop()
            }
            let log = FrontendEventLog(frontend)
            defer { log.cancel() }
            #expect(await log.wait { !log.detections.isEmpty })
            let pulled = ContinuousClock.now
            fake.unplug()
            #expect(await log.wait(.seconds(3)) { log.finished != nil })
            let took = try #require(log.finished) - pulled
            #expect(took < .seconds(1), "took \(took)")
            let e = try #require(log.deviceError, "\(String(describing: log.error))")
            #expect(e.kind == .gone)
            #expect(e.reason.contains(frontend.identifier))
        }

        @Test("Unplugged while no tag is in the field (the device inside a poll) also ends the stream within 1 s")
        func unpluggedWhilePolling() async throws {
            let (fake, frontend) = try LibNFCFrontendBench.start(nil, tag: "unplug-poll")
            defer {
                frontend.close()
                fake.stop()
            }
            let log = FrontendEventLog(frontend)
            defer { log.cancel() }
            #expect(await log.wait { LibNFCFrontendBench.hostCommands(fake).contains { $0.first == 0x60 } })
            let pulled = ContinuousClock.now
            fake.unplug()
            #expect(await log.wait(.seconds(3)) { log.finished != nil })
            #expect(try #require(log.finished) - pulled < .seconds(1))
            #expect(log.deviceError?.kind == .gone, "\(String(describing: log.error))")
        }

        @Test("A corrupt frame from the chip is a typed error for that exchange; the stream survives it")
        func corruptFrame() async throws {
            let (fake, frontend) = try LibNFCFrontendBench.start(
                try LibNFCFrontendBench.card("ntag215-uri"), tag: "corrupt")
            defer {
                frontend.close()
                fake.stop()
            }
            let log = FrontendEventLog(frontend)
            defer { log.cancel() }
            #expect(await log.wait { !log.detections.isEmpty })
            let t = try #require(log.detections.first)
            let error = await withTagError(frontend, t.id) { c in
                guard case .type2(let transport) = c else { throw UnexpectedConnection(c) }
                fake.inject(.corruptResponseChecksum)
                _ = try transport.read(page: 4)
            }
            #expect(error is TagCommunicationError)
            try await holds(for: .milliseconds(300), "one bad frame is not an unplugged reader") { log.finished == nil }
            let again = try await withTag(frontend, t.id) { c -> [UInt8] in
                guard case .type2(let tr) = c else { return [] }
                return try tr.read(page: 3)
            }
            #expect(again.count == 16)
            // A corrupt frame during a presence check is retried, not taken for an unplugged reader.
            fake.inject(.corruptResponseChecksum)
            try await holds(for: .milliseconds(200), "a corrupt presence check is retried: \(log.all)") {
                log.finished == nil && log.losses.isEmpty
            }
        }

        @Test("A CC, a TLV or a length that lies is a typed error, and no READ goes past the data area")
        func lyingStructures() async throws {
            var file = try BenchTags.load("ntag215-uri")
            // CC: data area of 0x10 × 8 = 128 bytes (pages 4–35); NDEF TLV claims 0x0200 bytes.
            file.pages[3] = [0xE1, 0x10, 0x10, 0x00]
            file.pages[4] = [0x03, 0xFF, 0x02, 0x00]
            let (fake, frontend) = try LibNFCFrontendBench.start(try PN532Card(tagFile: file), tag: "lies")
            defer {
                frontend.close()
                fake.stop()
            }
            let log = FrontendEventLog(frontend)
            defer { log.cancel() }
            #expect(await log.wait { !log.detections.isEmpty })
            let t = try #require(log.detections.first)
            let before = fake.frameLog.count
            let error = await withTagError(frontend, t.id) { c in
                guard case .type2(let transport) = c else { throw UnexpectedConnection(c) }
                _ = try Type2TagReader(transport: transport).readNDEF()
            }
            #expect((error as? Type2TagError)?.code == .lengthBeyondDataArea)
            // READ frames are InCommunicateThru (42) 30 PAGE; none may start at page ≥ 36.
            let reads = LibNFCFrontendBench.hostCommands(fake, from: before).compactMap { c -> UInt8? in
                c.count >= 3 && c[0] == 0x42 && c[1] == 0x30 ? c[2] : nil
            }
            #expect(!reads.isEmpty)
            #expect(reads.allSatisfy { $0 < 36 }, "pages read: \(reads)")
        }
    }

    @Suite("LibNFCReaderDevice alone, against the virtual PN532", .serialized, .enabled(if: LibNFCTestBench.enabled))
    struct LibNFCReaderDeviceTests {
        @Test("A sense is bounded by its timeout (a finite poll), and cancel() (nfc_abort_command) ends an endless one")
        func boundedAndCancellable() async throws {
            let link = LibNFCTestBench.linkPath("sense")
            let fake = try VirtualPN532.start(ptyPath: link)
            defer { fake.stop() }
            let device = try await offPool { try LibNFCReaderDevice(connstring: "pn532_uart:\(link)") }
            defer { device.close() }
            // 500 ms for ISO 14443-A: 1 poll of (ISO 14443-4A + 106A) × 150 ms = 300 ms.
            #expect(LibNFCReaderDevice.pollCount(.milliseconds(500), modulations: [.iso14443a]) == 1)
            #expect(LibNFCReaderDevice.pollCount(.seconds(3), modulations: [.iso14443a]) == 10)
            #expect(LibNFCReaderDevice.pollCount(nil, modulations: [.iso14443a]) == nil)
            let started = ContinuousClock.now
            let empty = try await offPool { try device.sense([.iso14443A], timeout: .milliseconds(500)) }
            let took = ContinuousClock.now - started
            #expect(empty.isEmpty)
            #expect(took >= .milliseconds(250) && took < .seconds(2), "\(took)")

            let polls = LibNFCFrontendBench.hostCommands(fake).count
            let endless = Task { try await offPool { try device.sense([.iso14443A], timeout: nil) } }
            // Cancel once the poll is on the wire (an abort before the call starts waiting is lost).
            try await wait(for: "InAutoPoll on the wire") {
                LibNFCFrontendBench.hostCommands(fake).dropFirst(polls).contains(where: { $0.first == 0x60 })
            }
            await pause(
                .milliseconds(50), because: "libnfc must be waiting for the poll's answer, or the abort is lost")
            let cancelled = ContinuousClock.now
            device.cancel()
            #expect(try await endless.value.isEmpty)
            #expect(ContinuousClock.now - cancelled < .seconds(1))
            // The device works afterwards, and reports what it sees.
            fake.present(try LibNFCFrontendBench.card("t4t-uri"))
            let found = try await offPool { try device.sense([.iso14443A], timeout: .milliseconds(500)) }
            let t = try #require(found.first)
            #expect(t.technology == .iso14443A && t.sak == 0x20 && t.atqa == [0x44, 0x03])
            #expect(t.ats?.first.map(Int.init) == t.ats?.count, "TL counts the whole ATS")
            #expect(try await offPool { try device.isPresent(t) })
            let again = try await offPool { try device.sense([.iso14443A], timeout: .zero) }
            #expect(again.map(\.presentation) == [t.presentation], "still there: the same presentation")
        }

        @Test(
            "libnfc's driver list comes from the installed libnfc (nfc_drivers): sorted, every name one of libnfc 1.8.0's"
        )
        func driverNames() {
            let names = LibNFCContext.driverNames
            #expect(names == names.sorted())
            #expect(names.contains("pn532_uart"))
            // libnfc 1.8.0 nfc.c:161-194 registers at most these.
            let known: Set = [
                "pn53x_usb", "pcsc", "acr122_pcsc", "acr122_usb", "ACR122S", "pn532_uart", "pn532_spi", "pn532_i2c",
                "arygon", "pn71xx",
            ]
            #expect(names.allSatisfy(known.contains), "\(names)")
            #expect(!names.contains("pn533_usb"), "a kernel module's name, not a libnfc driver")
        }
    }
}

/// `any APDUTransport` as a concrete type for `Type4TagReader<Transport>`.
struct AnyAPDU: APDUTransport {
    let base: any APDUTransport
    init(_ base: any APDUTransport) { self.base = base }
    func transmit(_ c: [UInt8]) throws -> [UInt8] { try base.transmit(c) }
}
