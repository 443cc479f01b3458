import Foundation
import NFCBenchTestSupport
import NFCHardware
import NFCTags
import ReaderFrontend
import ReaderSession
import Synchronization
import Testing
import VirtualHardware

/// Every suite that drives the vpcd readers of one pcscd nests in here, so `.serialized`
/// keeps them from running at the same time.
@Suite("The virtual bench (pcscd + vpcd), one suite at a time", .serialized)
struct PCSCVirtualBenchSuites {}

enum PCSCFrontendBench {
    /// A frontend that opens a ``PCSCReaderDevice`` on `reader` when polling starts.
    static func frontend(
        _ reader: String = PCSCBench.reader0, clock: any ReaderSessionClock = ContinuousReaderClock(),
        presence: Duration = .milliseconds(50)
    ) -> ReaderFrontend {
        ReaderFrontend(
            identifier: "pcsc:" + reader, clock: clock, configuration: .init(presenceInterval: presence),
            open: { () throws(NFCDeviceError) in try PCSCReaderDevice(reader: reader) })
    }

    /// A card on slot 0, once pcscd has seen the reader empty (a card of an earlier test
    /// that left less than one pcscd poll ago would otherwise still be "present").
    static func card(_ personality: any VirtualCardPersonality) async throws -> VirtualCard {
        let reader = PCSCBench.reader0
        let empty = try await offPool {
            try waitForReader(PCSCContext(), reader, seconds: 5) { !$0.flags.contains(.present) } != nil
        }
        try #require(empty, "the reader did not become empty")
        return VirtualCard(personality: personality, configuration: .init(port: 35963))
    }

    /// Waits (off the pool) until pcscd reports slot 0 without a card.
    static func readerEmpty() async throws -> Bool {
        try await offPool {
            try waitForReader(PCSCContext(), PCSCBench.reader0, seconds: 5) { !$0.flags.contains(.present) } != nil
        }
    }
}

extension PCSCVirtualBenchSuites {
    @Suite(
        "PCSCReaderDevice under the reader frontend, against pcscd and the vpcd card", .serialized,
        .enabled(if: PCSCBench.enabled, "needs pcscd with the vpcd reader: run through scripts/with-pcscd"))
    struct PCSCFrontendTests {
        @Test("A T4T tag file on the vpcd card: ISO-DEP by its ATR, with its UID (FF CA), read through Type4TagReader")
        func detectsType4() async throws {
            let file = try BenchTags.load("t4t-uri")
            let vcard = try await PCSCFrontendBench.card(try file.makeVirtualCardPersonality())
            let frontend = PCSCFrontendBench.frontend()
            let log = FrontendEventLog(frontend)
            defer {
                log.cancel()
                frontend.close()
                vcard.stop()
            }
            vcard.start()
            #expect(await log.wait { log.detections.count == 1 })
            let target = try #require(log.detections.first)
            #expect(target.kind == .type4 && target.family == .isoDEP)
            #expect(target.uid == file.activation.uid)
            #expect(target.sak == nil && target.atqa == nil, "PC/SC shows an ATR, not ATQA and SAK")
            #expect(target.atr?.prefix(4) == [0x3B, 0x81, 0x80, 0x01], "ATR carries the ATS's one historical byte")
            let message = try await withTag(frontend, target.id) { c -> [UInt8] in
                guard case .iso7816(let t) = c else { throw PCSCBenchMissing(reason: "not an ISO 7816 connection") }
                return try readType4NDEF(t)
            }
            #expect(message == file.type4?.ndefMessage)
            #expect(try NFCNDEFMessage(bytes: message).records.count == 1)
        }

        @Test(
            "An NTAG213 tag file behind a storage-card ATR is Type 2; no GET_VERSION at detection, the procedure asks it (NTAG213) and reads the NDEF"
        )
        func detectsType2() async throws {
            let file = try BenchTags.load("ntag213-text")
            let vcard = try await PCSCFrontendBench.card(try file.makeVirtualCardPersonality())
            let frontend = PCSCFrontendBench.frontend()
            let log = FrontendEventLog(frontend)
            defer {
                log.cancel()
                frontend.close()
                vcard.stop()
            }
            vcard.start()
            #expect(await log.wait { log.detections.count == 1 })
            let target = try #require(log.detections.first)
            #expect(target.kind == .type2 && target.family == .type2)
            #expect(target.uid == file.activation.uid)
            #expect(target.atr == ATR.storageCard(standard: .iso14443APart3, cardName: .mifareUltralight).bytes)
            let commands = vcard.events.compactMap { e -> [UInt8]? in
                if case .command(let c) = e.kind { c } else { nil }
            }
            #expect(commands == [[0xFF, 0xCA, 0x00, 0x00, 0x00]], "detection asks the UID and nothing else")
            let expected = try Type2TagReader(transport: EmulatedType2Transport(core: file.makeCore())).readNDEF()
            let (version, message) = try await withTag(frontend, target.id) { c -> (TagVersion?, [UInt8]) in
                guard case .type2(let t) = c else { throw PCSCBenchMissing(reason: "not a Type 2 connection") }
                var reader = Type2TagReader(transport: t)
                let v = try reader.identify()
                return (v, try reader.readNDEF())
            }
            #expect(version?.bytes == file.getVersion)
            #expect(!message.isEmpty)
            #expect(message == expected)
        }

        @Test("The MIFARE Classic 1K tag file behind its storage-card ATR is classified mifareClassic (PC/SC part 3)")
        func mifareClassic() async throws {
            let file = try BenchTags.load("mifare-classic-1k")
            let vcard = try await PCSCFrontendBench.card(try file.makeVirtualCardPersonality())
            let frontend = PCSCFrontendBench.frontend()
            let log = FrontendEventLog(frontend)
            defer {
                log.cancel()
                frontend.close()
                vcard.stop()
            }
            vcard.start()
            #expect(await log.wait { !log.detections.isEmpty })
            let t = try #require(log.detections.first)
            #expect(t.family == .mifareClassic && t.kind == .other)
            #expect(t.uid == file.activation.uid)
            #expect(frontend.target(t.id)?.classification.source == "PC/SC 2.02 part 3 §3.1.3.2.3")
        }

        @Test(
            "The release after a failed GET_VERSION (an Ultralight goes IDLE) re-activates it (SCardReconnect): the next read works"
        )
        func releaseAfterFailedGetVersion() async throws {
            let vcard = try await PCSCFrontendBench.card(
                try BenchTags.load("ultralight-blank").makeVirtualCardPersonality())
            let frontend = PCSCFrontendBench.frontend()
            let log = FrontendEventLog(frontend)
            defer {
                log.cancel()
                frontend.close()
                vcard.stop()
            }
            vcard.start()
            #expect(await log.wait { !log.detections.isEmpty })
            let t = try #require(log.detections.first)
            let error = await withTagError(frontend, t.id) { c in
                guard case .type2(let transport) = c else { throw UnexpectedConnection(c) }
                _ = try transport.getVersion()
            }
            #expect(error as? TagCommunicationError == .noResponse, "no answer from the ICC (64 01)")
            let resets = vcard.events.filter { $0.kind == .control(0x02) }.count
            #expect(resets == 1, "release reset the card once: \(vcard.events)")
            let page0 = try await withTag(frontend, t.id) { c -> [UInt8] in
                guard case .type2(let transport) = c else { return [] }
                return try transport.read(page: 0)
            }
            #expect(page0.count == 16)
            #expect(log.losses.isEmpty)
        }

        @Test(
            "A tag left on the reader is reported once; restartPolling reports it again with a new id; removal is lost; back is new"
        )
        func reportOnceThenLost() async throws {
            let file = try BenchTags.load("t4t-uri")
            let vcard = try await PCSCFrontendBench.card(try file.makeVirtualCardPersonality())
            let frontend = PCSCFrontendBench.frontend()
            let log = FrontendEventLog(frontend)
            defer {
                log.cancel()
                frontend.close()
                vcard.stop()
            }
            vcard.start()
            #expect(await log.wait { log.detections.count == 1 })
            // Stay for several presence checks and pcscd polls, and touch the card meanwhile.
            let first = try #require(log.detections.first)
            _ = try await withTag(frontend, first.id) { _ in 0 }
            try await holds(for: .milliseconds(1_200), "a tag left on the reader is reported once") {
                log.detections.count == 1
            }
            frontend.restartPolling()
            #expect(await log.wait { log.detections.count == 2 })
            let second = try #require(log.detections.last)
            #expect(second.id != first.id)
            #expect(log.losses.isEmpty, "a restart re-reports; it loses nothing")
            #expect(await withTagError(frontend, first.id) { _ in } as? TagCommunicationError == .tagLost)
            _ = try await withTag(frontend, second.id) { c -> [UInt8] in
                guard case .iso7816(let t) = c else { return [] }
                return try t.transmit(Type4TagReader<PCSCAPDUTransport>.selectApplicationAPDU)
            }
            vcard.remove()
            #expect(await log.wait { log.losses == [second.id] })
            #expect(await withTagError(frontend, second.id) { _ in } as? TagCommunicationError == .tagLost)
            vcard.present()
            #expect(await log.wait { log.detections.count == 3 }, "re-presented after removal: reported again")
            #expect(log.finished == nil)
        }

        @Test("A card pulled mid-read is TagCommunicationError.tagLost, and a read-write session's readNDEF gets 100")
        func pulledMidRead() async throws {
            let file = try BenchTags.load("t4t-uri")
            let vcard = try await PCSCFrontendBench.card(try file.makeVirtualCardPersonality())
            let frontend = PCSCFrontendBench.frontend()
            defer {
                frontend.close()
                vcard.stop()
            }
            vcard.start()

            let system = NFCReaderSystem(
                backend: frontend, arbiter: SessionArbiter(fileLocks: false), thermal: .disabled)
            let session = NFCNDEFReaderSession(
                delegate: PCSCRWDelegate(), queue: nil, invalidateAfterFirstRead: false, system: system)
            var it = session.events.makeAsyncIterator()
            session.begin()
            try #require(
                await matchesAsync { if case .didBecomeActive? = await it.next() { true } else { false } }, "not active"
            )
            let tags = try #require(
                await matchedAsync { if case .didDetectTags(let tags)? = await it.next() { tags } else { nil } },
                "no tags delivered")
            let tag = try #require(tags.first, "no tag delivered")
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
            while let e = await it.next() { if case .didInvalidate = e { break } }

            // And at the transport level: the same fault gives .tagLost.
            vcard.present()
            let log = FrontendEventLog(frontend)
            defer { log.cancel() }
            #expect(await log.wait { !log.detections.isEmpty })
            let target = try #require(log.detections.last)
            vcard.inject(.closeMidAPDU)
            let error = await withTagError(frontend, target.id) { c in
                guard case .iso7816(let t) = c else { throw UnexpectedConnection(c) }
                _ = try t.transmit(Type4TagReader<PCSCAPDUTransport>.selectApplicationAPDU)
            }
            #expect(error as? TagCommunicationError == .tagLost, "pcscd answers: the card left, not the service")
        }

        @Test(
            "Through the frontend the vpcd card's transport still times its own round trips (measure apdu's SCardTransmit loop), and a card pulled mid-run is tagLost, which the frontend sees"
        )
        func repeatingThroughFrontend() async throws {
            // The card leaves the field after 80 commands: past detection's few and the first 50 SELECTs.
            var file = try BenchTags.load("t4t-uri")
            file.faults = [TagFault(.afterCommands(80), kind: .tagLost)]
            let vcard = try await PCSCFrontendBench.card(try file.makeVirtualCardPersonality())
            let frontend = PCSCFrontendBench.frontend()
            let log = FrontendEventLog(frontend)
            defer {
                log.cancel()
                frontend.close()
                vcard.stop()
            }
            vcard.start()
            #expect(await log.wait { log.detections.count == 1 })
            let target = try #require(log.detections.first)
            let select = Type4TagReader<PCSCAPDUTransport>.selectApplicationAPDU
            @Sendable func run(_ c: TagConnection, count: Int) throws -> [[UInt8]] {
                guard case .iso7816(let t) = c, let r = t as? any RepeatingAPDUTransport else {
                    throw PCSCBenchMissing(reason: "the frontend's ISO 7816 transport does not repeat APDUs itself")
                }
                var exchanges = TimedAPDUExchanges()
                try r.transmitRepeatedly(select, count: count, into: &exchanges, shouldStop: { false })
                return (0..<exchanges.count).map { Array(exchanges.response($0)) }
            }
            let answers = try await withTag(frontend, target.id) { c in try run(c, count: 50) }
            #expect(answers.count == 50 && answers.allSatisfy { $0 == [0x90, 0x00] })
            let error = await withTagError(frontend, target.id) { c in _ = try run(c, count: 100) }
            #expect(error as? TagCommunicationError == .tagLost, "\(String(describing: error))")
            #expect(await log.wait { log.losses == [target.id] }, "the frontend learns of the loss: \(log.all)")
            #expect(!vcard.isConnected, "it stays out of the field")
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
            let frontend = PCSCFrontendBench.frontend()
            defer { frontend.close() }
            for (name, app, fault) in cases {
                let vcard = try await PCSCFrontendBench.card(ISO14443Part4Personality(core: app))
                let log = FrontendEventLog(frontend)
                vcard.start()
                #expect(await log.wait { !log.detections.isEmpty }, "\(name): detected")
                guard let target = log.detections.first else {
                    log.cancel()
                    vcard.stop()
                    continue
                }
                if let fault { vcard.inject(fault) }
                let error = await withTagError(frontend, target.id) { c in
                    guard case .iso7816(let t) = c else { throw UnexpectedConnection(c) }
                    _ = try readType4NDEF(t)
                }
                #expect(error is Type4TagError, "\(name): \(String(describing: error))")
                vcard.stop()
                #expect(await log.wait { !log.losses.isEmpty }, "\(name): lost")
                log.cancel()
            }
        }

        @Test(
            "A tag file's faults on the vpcd card (the shared wrapper): tag_lost takes the card out of the field, no_answer is the reader's 63 00"
        )
        func tagFileFaults() async throws {
            // Type 2, lost while page 8 is read: READ BINARY 8 gets no answer, the card leaves.
            var lost = try BenchTags.load("ntag215-uri")
            lost.faults = [TagFault(.pageRead(8), kind: .tagLost)]
            let vcard = try await PCSCFrontendBench.card(try lost.makeVirtualCardPersonality())
            let frontend = PCSCFrontendBench.frontend()
            defer { frontend.close() }
            let log = FrontendEventLog(frontend)
            vcard.start()
            #expect(await log.wait { !log.detections.isEmpty })
            let t = try #require(log.detections.first)
            let error = await withTagError(frontend, t.id) { c in
                guard case .type2(let transport) = c else { throw UnexpectedConnection(c) }
                _ = try transport.read(page: 4)
                _ = try transport.read(page: 8)
            }
            #expect(error as? TagCommunicationError == .tagLost, "\(String(describing: error))")
            #expect(await log.wait { log.losses == [t.id] }, "pcscd saw the card leave: \(log.all)")
            #expect(!vcard.isConnected, "it stays out of the field")
            log.cancel()
            vcard.stop()

            // Type 2, no answer to the first READ of page 4: 63 00 once; the tag answers again after.
            var silent = try BenchTags.load("ntag215-uri")
            silent.faults = [TagFault(.pageRead(4), kind: .noAnswer)]
            let vcard2 = try await PCSCFrontendBench.card(try silent.makeVirtualCardPersonality())
            defer { vcard2.stop() }
            let log2 = FrontendEventLog(frontend)
            defer { log2.cancel() }
            vcard2.start()
            #expect(await log2.wait { !log2.detections.isEmpty })
            let t2 = try #require(log2.detections.first)
            let first = await withTagError(frontend, t2.id) { c in
                guard case .type2(let transport) = c else { throw UnexpectedConnection(c) }
                _ = try transport.read(page: 4)
            }
            #expect(first as? TagCommunicationError == .nak(0), "63 00 from the reader")
            let answers = vcard2.events.compactMap { e -> [UInt8]? in
                if case .response(let r) = e.kind { r } else { nil }
            }
            #expect(answers.last == [0x63, 0x00])
            let page4 = try await withTag(frontend, t2.id) { c -> [UInt8] in
                guard case .type2(let transport) = c else { return [] }
                return try transport.read(page: 4)
            }
            #expect(page4.prefix(4) == silent.pages[4][...], "the fault fired once")
            #expect(log2.losses.isEmpty)
        }

        @Test(
            "Presence checks run on the injected clock: after pcscd saw the card leave, the loss waits for the ManualClock"
        )
        func presenceOnManualClock() async throws {
            let clock = ManualClock()
            let vcard = try await PCSCFrontendBench.card(try BenchTags.load("t4t-uri").makeVirtualCardPersonality())
            let frontend = PCSCFrontendBench.frontend(clock: clock, presence: .milliseconds(250))
            let log = FrontendEventLog(frontend)
            defer {
                log.cancel()
                frontend.close()
                vcard.stop()
            }
            vcard.start()
            #expect(await log.wait { !log.detections.isEmpty })
            let t = try #require(log.detections.first)
            #expect(await log.wait { clock.pendingTimers == 1 }, "the device thread waits for the clock")
            vcard.remove()
            #expect(try await PCSCFrontendBench.readerEmpty(), "pcscd saw the card leave")
            #expect(log.losses.isEmpty, "no presence check while the clock stands still")
            clock.advance(by: .milliseconds(250))
            #expect(await log.wait(.seconds(2)) { log.losses == [t.id] }, "\(log.all)")
        }

        @Test("A status wait in sense is ended by cancel() (SCardCancel), and close() ends the frontend's at once")
        func senseCancelled() async throws {
            #expect(try await PCSCFrontendBench.readerEmpty())
            let device = try await offPool { try PCSCReaderDevice(reader: PCSCBench.reader0) }
            let waiting = Task { try await offPool { try device.sense([.iso14443A], timeout: .seconds(20)) } }
            await pause(.milliseconds(300), because: "the cancel should meet sense inside pcscd's status wait")
            let cancelled = ContinuousClock.now
            try await offPool { device.cancel() }
            #expect(try await waiting.value.isEmpty)
            #expect(ContinuousClock.now - cancelled < .seconds(2), "not its 20 s timeout")
            try await offPool { device.close() }

            let frontend = PCSCFrontendBench.frontend()
            let log = FrontendEventLog(frontend)
            defer { log.cancel() }
            await pause(.milliseconds(300), because: "the device thread must be in pcscd's status wait before close")
            let closing = ContinuousClock.now
            try await offPool { frontend.close() }
            #expect(ContinuousClock.now - closing < .seconds(1), "SCardCancel ends the device thread's wait")
            #expect(await log.wait { log.finished != nil })
        }

        @Test(
            "A cancel() that comes before sense reaches pcscd's status wait still ends it (SCardCancel alone is lost then), and only that sense"
        )
        func cancelBeforeWait() async throws {
            #expect(try await PCSCFrontendBench.readerEmpty())
            let device = try await offPool { try PCSCReaderDevice(reader: PCSCBench.reader0) }
            defer { device.close() }
            let started = ContinuousClock.now
            let field = try await offPool {
                device.cancel()  // no SCardGetStatusChange in progress: pcsc-lite forgets this SCardCancel
                return try device.sense([.iso14443A], timeout: .seconds(20))
            }
            #expect(field.isEmpty)
            #expect(ContinuousClock.now - started < .seconds(2), "not its 20 s timeout")
            let next = ContinuousClock.now
            #expect(try await offPool { try device.sense([.iso14443A], timeout: .milliseconds(600)) }.isEmpty)
            #expect(
                ContinuousClock.now - next >= .milliseconds(600), "the cancel was taken: the next sense waits its time")
        }

        @Test("No such reader: the device refuses to open (.gone, naming the readers pcscd has) and the stream ends")
        func unknownReader() async throws {
            let refused: (any Error)?
            do {
                _ = try await offPool { try PCSCReaderDevice(reader: "No Such Reader 00 00") }
                refused = nil
            } catch {
                refused = error
            }
            let e = try #require(
                refused as? NFCDeviceError, "expected NFCDeviceError, got \(String(describing: refused))")
            #expect(e.kind == .gone)
            #expect(e.reason.contains("pcsc:\(PCSCBench.reader0)"))
            let frontend = PCSCFrontendBench.frontend("No Such Reader 00 00")
            defer { frontend.close() }
            let log = FrontendEventLog(frontend)
            #expect(await log.wait { log.finished != nil })
            #expect(log.deviceError?.kind == .gone)
        }

        @Test(
            "pcscd killed under an exchange loop (a private pcscd): the exchange fails with 'pcscd stopped' and the stream with .serviceStopped"
        )
        func pcscdKilled() async throws {
            let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
            let script = BenchTags.directory.deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("scripts/with-pcscd").path
            let r = try await offPool {
                try run(
                    "/usr/bin/env",
                    [
                        "NFCBENCH_PRIVATE_PCSCD=1", "timeout", "120", script, exe, "--testing-library", "swift-testing",
                        "--filter", "PCSCServiceDeathTests",
                    ])
            }
            if r.status == 69 && r.output.contains("with-pcscd:") {
                if PCSCBench.isCI { Issue.record("the private pcscd bench is missing: \(r.output)") }
                try Test.cancel("the private pcscd bench is missing (run under scripts/with-pcscd): \(r.output)")
            }
            #expect(r.status == 0, "\(r.output.suffix(3000))")
            #expect(r.output.contains("pcscd killed: device error serviceStopped"), "\(r.output.suffix(3000))")
        }
    }
}

/// Runs only inside `pcscdKilled`'s private pcscd (`NFCBENCH_PRIVATE_PCSCD=1` under
/// scripts/with-pcscd), where killing pcscd harms no other test.
@Suite(
    "PCSCReaderDevice when its pcscd dies (private pcscd only)",
    .enabled(if: ProcessInfo.processInfo.environment["NFCBENCH_PRIVATE_PCSCD"] == "1"))
struct PCSCServiceDeathTests {
    /// The pcscd of this network namespace (the private one), by pid.
    static func privatePCSCD() throws -> Int32? {
        let mine = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/net")
        for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc") {
            guard let pid = Int32(entry),
                let comm = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8),
                comm.trimmingCharacters(in: .whitespacesAndNewlines) == "pcscd",
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/ns/net")) == mine
            else { continue }
            return pid
        }
        return nil
    }

    @Test("pcscd SIGKILLed while an exchange loop runs")
    func killed() async throws {
        let vcard = try await PCSCFrontendBench.card(try BenchTags.load("t4t-uri").makeVirtualCardPersonality())
        defer { vcard.stop() }
        let frontend = PCSCFrontendBench.frontend()
        defer { frontend.close() }
        let log = FrontendEventLog(frontend)
        defer { log.cancel() }
        vcard.start()
        #expect(await log.wait { !log.detections.isEmpty })
        let t = try #require(log.detections.first)
        let exchanges = Atomic<Int>(0)
        let loop = Task {
            await withTagError(frontend, t.id) { c in
                guard case .iso7816(let transport) = c else { throw UnexpectedConnection(c) }
                while true {
                    _ = try transport.transmit(Type4TagReader<PCSCAPDUTransport>.selectApplicationAPDU)
                    exchanges.add(1, ordering: .relaxed)
                }
            }
        }
        try await wait(for: "the exchange loop to run") { exchanges.load(ordering: .relaxed) >= 5 }
        let pid = try #require(try Self.privatePCSCD(), "no pcscd in this namespace")
        let killedAt = ContinuousClock.now
        kill(pid, SIGKILL)
        let error = await loop.value
        let why = try #require(
            matched { if case .readerFailure(let why)? = error as? TagCommunicationError { why } else { nil } },
            "expected readerFailure, got \(String(describing: error))")
        #expect(why == "pcscd stopped")
        #expect(await log.wait(.seconds(3)) { log.finished != nil })
        #expect(try #require(log.finished) - killedAt < .seconds(2))
        let e = try #require(log.deviceError, "\(String(describing: log.error))")
        #expect(e.kind == .serviceStopped)
        #expect(e.reason.contains("pcscd stopped"))
        print("pcscd killed: device error \(e.kind.rawValue): \(e.reason)")
    }
}

final class PCSCRWDelegate: NSObject, NFCNDEFReaderSessionTagDelegate, Sendable {
    func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [any NFCNDEFTag]) {}
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {}
}

@Suite("The vpcd card of a tag file (pure)")
struct VPCDTagFileCardTests {
    @Test("ATS historical bytes: TL T0 TA TB TC then the rest; malformed ATS gives none")
    func historicalBytes() throws {
        let file = try BenchTags.load("t4t-uri")
        let personality = try file.makeVirtualCardPersonality()
        #expect(personality.atr == (try ATR.iso14443_4(historicalBytes: [0x80]).bytes))
    }

    @Test(
        "ISO-DEP faults through the reader: no_answer is 63 00, corrupt_reply inverts the first byte, tag_lost leaves")
    func isoDEPFaults() throws {
        var file = try BenchTags.load("t4t-uri")
        file.faults = [
            TagFault(.ndefFileRead(offset: 0), kind: .noAnswer), TagFault(.afterCCRead, kind: .corruptReply),
            TagFault(.firstWrite, kind: .tagLost),
        ]
        var card = try file.makeVirtualCardPersonality()
        card.enteredField()
        let select = Type4TagReader<PCSCAPDUTransport>.selectApplicationAPDU
        #expect(card.respond(to: select) == [0x90, 0x00])
        #expect(card.respond(to: [0x00, 0xA4, 0x00, 0x0C, 0x02, 0xE1, 0x03]) == [0x90, 0x00])
        let cc = card.respond(to: [0x00, 0xB0, 0x00, 0x00, 0x0F])
        #expect(cc.suffix(2) == [0x90, 0x00])
        // The command after the CC read: its answer's first byte inverted (90 → 6F).
        #expect(card.respond(to: [0x00, 0xA4, 0x00, 0x0C, 0x02, 0xE1, 0x04]) == [0x6F, 0x00])
        #expect(card.respond(to: [0x00, 0xB0, 0x00, 0x00, 0x02]) == [0x63, 0x00], "no_answer: the reader's 63 00")
        #expect(card.respond(to: [0x00, 0xB0, 0x00, 0x00, 0x02]).suffix(2) == [0x90, 0x00], "once")
        #expect(!card.hasLeftField)
        _ = card.respond(to: [0x00, 0xD6, 0x00, 0x00, 0x02, 0x00, 0x00])
        #expect(card.hasLeftField, "tag_lost on the first write")
        card.enteredField()
        #expect(!card.hasLeftField, "presented again: the tag is back")
        // Once per load of the file: the faults that fired stay spent on the next presentation.
        #expect(card.respond(to: select) == [0x90, 0x00])
        #expect(card.respond(to: [0x00, 0xA4, 0x00, 0x0C, 0x02, 0xE1, 0x04]) == [0x90, 0x00])
        #expect(card.respond(to: [0x00, 0xB0, 0x00, 0x00, 0x02]).suffix(2) == [0x90, 0x00], "no_answer spent")
        #expect(card.respond(to: [0x00, 0xD6, 0x00, 0x00, 0x02, 0x00, 0x00]) == [0x90, 0x00], "tag_lost spent")
        #expect(!card.hasLeftField)
    }

    @Test("Type 2 faults through the reader: no_answer is 63 00 to READ BINARY, corrupt_reply shifts the bytes")
    func type2Faults() throws {
        var file = try BenchTags.load("ntag215-uri")
        file.faults = [TagFault(.pageRead(8), kind: .noAnswer), TagFault(.pageRead(4), kind: .corruptReply)]
        var card = try file.makeVirtualCardPersonality()
        card.enteredField()
        #expect(card.respond(to: [0xFF, 0xB0, 0x00, 0x08, 0x10]) == [0x63, 0x00])
        let page8 = card.respond(to: [0xFF, 0xB0, 0x00, 0x08, 0x10])
        #expect(Array(page8.prefix(16)) == Array(file.pages[8...11].joined()), "once")
        let page4 = card.respond(to: [0xFF, 0xB0, 0x00, 0x04, 0x10])
        #expect(page4.suffix(2) == [0x90, 0x00])
        #expect(page4.count == 18)
        #expect(Array(page4.prefix(16)) != Array(file.pages[4...7].joined()), "corrupt bytes")
    }
}
