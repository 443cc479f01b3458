import Foundation
import NFCBenchTestSupport
import NFCFiles
import NFCTags
import ReaderFrontend
import ReaderSession
import ReaderSessionLocks
import Synchronization
import Testing

/// What a delegate saw, in order.
private final class Seen: NSObject, NFCNDEFReaderSessionDelegate, NFCTagReaderSessionDelegate, @unchecked Sendable {
    let log = Mutex<[String]>([])
    var all: [String] { log.withLock { $0 } }
    func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession) { log.withLock { $0.append("active") } }
    func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
        log.withLock { $0.append("end:\((error as? NFCReaderError)?.code.rawValue ?? -1)") }
    }
    func tagReaderSessionDidBecomeActive(_ session: NFCTagReaderSession) { log.withLock { $0.append("active") } }
    func tagReaderSession(_ session: NFCTagReaderSession, didDetect tags: [NFCTag]) {
        log.withLock { $0.append("tags:\(tags.count)") }
    }
    func tagReaderSession(_ session: NFCTagReaderSession, didInvalidateWithError error: any Error) {
        log.withLock { $0.append("end:\((error as? NFCReaderError)?.code.rawValue ?? -1)") }
    }
}

private func ndef(_ bench: Bench, _ d: Seen) -> NFCNDEFReaderSession {
    NFCNDEFReaderSession(delegate: d, queue: nil, invalidateAfterFirstRead: false, system: bench.system)
}

private func tagSession(_ bench: Bench, _ d: Seen, _ config: [String] = []) throws -> NFCTagReaderSession {
    try #require(
        NFCTagReaderSession(
            configuration: .init(pollingOption: .iso14443, iso7816SelectIdentifiers: config), delegate: d, queue: nil,
            system: bench.system))
}

/// The next tag event of a tag session.
private func detected(_ it: inout AsyncStream<NFCTagReaderSessionEvent>.Iterator) async -> [NFCTag]? {
    while let e = await it.next() {
        switch e {
        case .didDetect(let tags): return tags
        case .didBecomeActive: continue
        case .didInvalidate: return nil
        }
    }
    return nil
}

private func failure(_ body: () async throws -> Void) async -> NFCReaderError.Code? {
    do {
        try await body()
        return nil
    } catch {
        return (error as? NFCReaderError)?.code
    }
}

@Suite("Reader-system model: foreground states, busy policy, quick restarts, scripted endings")
struct SystemModelTests {
    @Test("begin() in the background does nothing and reports nothing (reported); invalidate() later ends it with 200")
    func backgroundBegin() async throws {
        let bench = Bench(embedded: true)
        let d = Seen()
        bench.system.appDidEnterBackground()
        let s = ndef(bench, d)
        s.begin()
        bench.run()
        #expect(d.all.isEmpty)
        #expect(!s.isReady)
        #expect(bench.trace.events().contains { if case .beginIgnored = $0 { true } else { false } })
        bench.system.appDidBecomeActive()
        s.invalidate()
        bench.run()
        #expect(d.all == ["end:200"])
    }

    @Test("Inactive (a banner, Control Center) keeps a session and lets one begin; the background ends it with 202")
    func inactive() async throws {
        let bench = Bench(embedded: true)
        let d = Seen()
        bench.system.appWillResignActive()
        #expect(bench.system.appState == .inactive)
        let s = ndef(bench, d)
        s.begin()
        bench.run()
        #expect(d.all == ["active"])
        bench.system.appDidBecomeActive()
        bench.system.appWillResignActive()
        bench.run()
        #expect(s.isReady)
        bench.system.appDidEnterBackground()
        bench.run()
        #expect(d.all == ["active", "end:202"])
    }

    @Test("The system ends sessions with 202 when told, and the next begin() at once")
    func scriptedEndings() async throws {
        let bench = Bench(embedded: true)
        let d = Seen()
        let s = ndef(bench, d)
        s.begin()
        bench.run()
        bench.system.terminateSessions()
        bench.run()
        #expect(d.all == ["active", "end:202"])
        bench.advanceTime(by: .seconds(5))
        bench.system.terminateNextBegin()
        let d2 = Seen()
        ndef(bench, d2).begin()
        bench.run()
        #expect(d2.all == ["end:202"])
        #expect(
            bench.trace.events().contains(.systemEnded(.readerSessionInvalidationErrorSessionTerminatedUnexpectedly)))
        let d3 = Seen()
        ndef(bench, d3).begin()
        bench.run()
        #expect(d3.all == ["active"])
    }

    @Test(
        "Busy policy queue: sessions wait in arrival order and become active as the reader frees; a queued one can be invalidated"
    )
    func queue() async throws {
        let bench = Bench(model: .oneRule(busyPolicy: .queue), embedded: true)
        let (a, b, c, x) = (Seen(), Seen(), Seen(), Seen())
        let first = ndef(bench, a)
        first.begin()
        let second = ndef(bench, b)
        second.begin()
        let gone = ndef(bench, x)
        gone.begin()
        let third = ndef(bench, c)
        third.begin()
        bench.run()
        #expect(a.all == ["active"])
        #expect(b.all.isEmpty && c.all.isEmpty)
        #expect(bench.trace.events().filter { $0 == .queued }.count == 3)
        gone.invalidate()
        bench.run()
        #expect(x.all == ["end:200"])
        first.invalidate()
        bench.run()
        #expect(b.all == ["active"])
        #expect(c.all.isEmpty)
        second.invalidate()
        bench.run()
        #expect(c.all == ["active"])
        // The queued session's limit counts from its activation (assumed).
        #expect(bench.trace.all.contains { $0.session == 4 && $0.event == .didBecomeActive })
    }

    @Test("Quick restart within 3 s of a sheet's end: 203 by default, never active, or a shorter limit (reported)")
    func quickRestart() async throws {
        func run(_ outcome: ReaderSystemModel.QuickRestartOutcome) async -> (Bench, Seen, NFCNDEFReaderSession) {
            let bench = Bench(thermal: ThermalModel(), model: .oneRule(quickRestartOutcome: outcome), embedded: true)
            let s = ndef(bench, Seen())
            s.begin()
            bench.run()
            s.invalidate()
            bench.run()
            bench.advanceTime(by: .milliseconds(500))
            let d = Seen()
            let again = ndef(bench, d)
            again.begin()
            bench.run()
            return (bench, d, again)
        }
        let (busy, dBusy, _) = await run(.systemIsBusy)
        #expect(dBusy.all == ["end:203"])
        #expect(
            busy.trace.events().contains { if case .quickRestart(_, .systemIsBusy) = $0 { true } else { false } })

        let (never, dNever, _) = await run(.neverActive)
        #expect(dNever.all.isEmpty)
        let other = Seen()
        ndef(never, other).begin()  // the never-active session holds the reader
        never.run()
        #expect(other.all == ["end:203"])
        never.advanceTime(by: .seconds(60))
        never.run()
        #expect(dNever.all == ["end:201"])

        let (shorter, dShorter, s) = await run(.shorterLimit)
        #expect(dShorter.all == ["active"])
        let limit = shorter.trace.all.compactMap { r -> Duration? in
            if case .thermal(_, let l?, _) = r.event, r.session == 2 { l } else { nil }
        }.first
        #expect(limit == .seconds(55))  // 60 s − 0.25 × the 20 field-s penalty
        s.invalidate()
    }

    @Test("begin() on an ended session delivers its ending again (reported); the model's alternative ignores it")
    func endingRepeated() async throws {
        let bench = Bench(embedded: true)
        let d = Seen()
        let s = ndef(bench, d)
        s.begin()
        bench.run()
        s.invalidate()
        bench.run()
        s.begin()
        bench.run()
        #expect(d.all == ["active", "end:200", "end:200"])
        #expect(bench.trace.events().contains(.endingRepeated(.readerSessionInvalidationErrorUserCanceled)))
        let quiet = Bench(model: .oneRule(invalidatedBegin: .ignored), embedded: true)
        let q = Seen()
        let t = ndef(quiet, q)
        t.begin()
        quiet.run()
        t.invalidate()
        quiet.run()
        t.begin()
        quiet.run()
        #expect(q.all == ["active", "end:200"])
    }

    @Test("Calls made from work the host did not start are marked; a main-queue delegate queue is reported")
    func hostWork() async throws {
        let calls = Mutex<[SessionCallRecord]>([])
        let clock = ManualClock()
        let system = NFCReaderSystem(
            backend: FakeBackend(), clock: clock, arbiter: SessionArbiter(fileLocks: false), thermal: .disabled,
            callObserver: { r in calls.withLock { $0.append(r) } })
        let fromHost = NFCNDEFReaderSession(
            delegate: Seen(), queue: nil, invalidateAfterFirstRead: false, system: system)
        HostWork.run { fromHost.begin() }
        let elsewhere = NFCNDEFReaderSession(
            delegate: Seen(), queue: .main, invalidateAfterFirstRead: false, system: system)
        try await offPool { elsewhere.begin() }
        let begins = calls.withLock { $0 }.filter { $0.call == .begin }
        #expect(begins.map(\.fromHostWork) == [true, false])
        #expect(begins.map(\.delegateQueueIsMain) == [false, true])
        fromHost.invalidate()
    }
}

@Suite("Tag objects: one connection at a time, the connection limit, any MIFARE frame, ISO 7816 selection")
struct TagModelTests {
    @Test("connectedTag follows connect(to:); connecting to a second tag ends the first's connection (104 on it)")
    func oneConnection() async throws {
        let bench = Bench()
        let d = Seen()
        let s = try tagSession(bench, d)
        var it = s.events.makeAsyncIterator()
        s.begin()
        bench.backend.present([(1, MemoryType2Tag(ndef: uriMessage)), (2, MemoryType2Tag(ndef: uriMessage))])
        let tags = try #require(await detected(&it))
        #expect(tags.count == 2)
        #expect(s.connectedTag == nil)
        try await s.connect(to: tags[0])
        #expect(s.connectedTag?.ndefTag === tags[0].ndefTag)
        #expect(try await tags[0].ndefTag.readNDEF().bytes == uriMessage)
        try await s.connect(to: tags[1])
        #expect(s.connectedTag?.ndefTag === tags[1].ndefTag)
        #expect(await failure { _ = try await tags[0].ndefTag.readNDEF() } == .readerTransceiveErrorTagNotConnected)
        #expect(try await tags[1].ndefTag.readNDEF().bytes == uriMessage)
        #expect(
            bench.trace.events().contains {
                if case .connectionEnded(_, .anotherTagConnected) = $0 { true } else { false }
            })
        s.restartPolling()
        #expect(s.connectedTag == nil)
        s.invalidate()
    }

    @Test("An operation more than 30 s after connect(to:) fails with 100 and ends the connection (reported)")
    func connectionLimit() async throws {
        let bench = Bench()
        let s = try tagSession(bench, Seen())
        var it = s.events.makeAsyncIterator()
        s.begin()
        bench.backend.present([(1, MemoryType2Tag(ndef: uriMessage))])
        let tag = try #require(await detected(&it)?.first)
        try await s.connect(to: tag)
        bench.clock.advance(by: .seconds(29))
        #expect(try await tag.ndefTag.readNDEF().bytes == uriMessage)
        bench.clock.advance(by: .seconds(2))
        #expect(await failure { _ = try await tag.ndefTag.readNDEF() } == .readerTransceiveErrorTagConnectionLost)
        #expect(
            bench.trace.events().contains { if case .connectionEnded(_, .connectionLimit) = $0 { true } else { false } }
        )
        #expect(s.connectedTag == nil)
        s.invalidate()
    }

    @Test(
        "sendMiFareCommand reaches the NTAG core: FAST_READ, READ_SIG, PWD_AUTH answer; 105 before sending a long packet; a NAK is 100"
    )
    func miFareFrames() async throws {
        let clock = ManualClock()
        let field = EmulatedField(name: "sim:model-test")
        let frontend = ReaderFrontend(device: field, clock: clock)
        let trace = TraceLog()
        let system = NFCReaderSystem(
            backend: frontend, clock: clock, arbiter: SessionArbiter(fileLocks: false), thermal: .disabled,
            observer: { trace.record($0) })
        let d = Seen()
        let s = try #require(NFCTagReaderSession(pollingOption: .iso14443, delegate: d, queue: nil, system: system))
        var it = s.events.makeAsyncIterator()
        s.begin()
        let file = try TagFile.load(path: hardwareTag("ntag215-uri"))
        field.present([("A", try EmulatedTag(file: file))])
        guard let first = await detected(&it)?.first, case .miFare(let tag) = first else {
            Issue.record("no MIFARE tag")
            return
        }
        try await s.connect(to: first)
        #expect(try await tag.sendMiFareCommand(commandPacket: Data([0x3A, 0x04, 0x07])).count == 16)
        #expect(try await tag.sendMiFareCommand(commandPacket: Data([0x3C, 0x00])).count == 32)
        #expect(try await tag.sendMiFareCommand(commandPacket: Data([0x1B, 0xFF, 0xFF, 0xFF, 0xFF])).count == 2)
        let framesBefore = trace.events().filter { if case .frame = $0 { true } else { false } }.count
        #expect(
            await failure { _ = try await tag.sendMiFareCommand(commandPacket: Data(repeating: 0x30, count: 255)) }
                == .readerTransceiveErrorPacketTooLong)
        #expect(trace.events().filter { if case .frame = $0 { true } else { false } }.count == framesBefore)
        #expect(
            await failure { _ = try await tag.sendMiFareCommand(commandPacket: Data([0x1B, 1, 2, 3, 4])) }
                == .readerTransceiveErrorTagConnectionLost)
        #expect(
            trace.events().contains {
                if case .frame(_, command: [0x3C, 0x00], response: .some) = $0 { true } else { false }
            })
        s.invalidate()
    }

    @Test(
        "ISO 7816: the session SELECTs the declared AIDs in order (narrowed by its configuration); none answering → not delivered; none declared → NFCMiFareTag"
    )
    func selection() async throws {
        // Declared A0000000041010 and the NDEF application; the session narrows to the first.
        let bench = Bench(
            model: .oneRule(iso7816SelectIdentifiers: ["A0000000041010", "D2760000850101"]), embedded: true)
        let d = Seen()
        let s = try tagSession(bench, d, ["a0000000041010", "A0000000999999"])
        s.begin()
        bench.backend.present([(1, try MemoryType4Tag(ndef: uriMessage))])
        bench.run()
        #expect(d.all == ["active"])  // never delivered
        #expect(
            bench.trace.events().contains {
                if case .applicationSelection(_, ["A0000000041010"], nil) = $0 { true } else { false }
            })
        s.invalidate()
        bench.run()

        // Every declared AID: the NDEF application answers second.
        bench.advanceTime(by: .seconds(5))
        let all = try tagSession(bench, Seen())
        var it = all.events.makeAsyncIterator()
        all.begin()
        bench.backend.remove(1)
        bench.backend.present([(2, try MemoryType4Tag(ndef: uriMessage))])
        bench.run()
        let first = try #require(await detected(&it)?.first, "no tag delivered")
        let iso7816: (any NFCISO7816Tag)? = if case .iso7816(let t) = first { t } else { nil }
        let tag = try #require(iso7816, "not delivered as ISO 7816")
        #expect(tag.initialSelectedAID == "D2760000850101")
        all.invalidate()

        // Nothing declared: an ISO-DEP tag is an NFCMiFareTag of family DESFire.
        let plain = Bench(model: .oneRule())
        let p = try tagSession(plain, Seen())
        var pit = p.events.makeAsyncIterator()
        p.begin()
        plain.backend.present([(3, try MemoryType4Tag(ndef: uriMessage))])
        let t = try #require(await detected(&pit)?.first, "no tag delivered")
        let miFare: (any NFCMiFareTag)? = if case .miFare(let m) = t { m } else { nil }
        let m = try #require(miFare, "not delivered as MIFARE")
        #expect(m.mifareFamily == .desfire)
        try await p.connect(to: t)
        #expect(try await m.readNDEF().bytes == uriMessage)
        p.invalidate()
    }
}

@Suite("Heat kept beside the lock, the cross-process queue's order")
struct LockFolderTests {
    static func folder() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-heat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.path
    }

    /// One 10 s session on a system with a file-lock arbiter in `dir`; the heat at its begin.
    static func session(_ dir: String) async -> Double? {
        let loop = EmbeddedReaderSessionExecutor()
        let trace = TraceLog()
        let system = NFCReaderSystem(
            backend: FakeBackend(identifier: "sim:heat"), clock: loop.clock,
            arbiter: SessionArbiter(lockDirectory: dir),
            thermal: ThermalModel(),
            observer: { trace.record($0) }, executor: loop)
        let s = NFCNDEFReaderSession(delegate: Seen(), queue: nil, invalidateAfterFirstRead: false, system: system)
        s.begin()
        loop.run()
        loop.advanceTime(by: .seconds(10))
        s.invalidate()
        // The turnover (ReaderSystemModel.invalidationDelay): the reader is let go 2.5 s later.
        loop.advanceTime(by: .milliseconds(2500))
        #expect(system.pendingWork == 0)
        return trace.events().compactMap { if case .thermal(let h, _, _) = $0 { h } else { nil } }.first
    }

    @Test("Heat follows the lock folder: a second system on the same folder starts warm, one on another folder cold")
    func heat() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let start = ContinuousClock.now
        #expect(await Self.session(dir) == 0)
        let warm = try #require(await Self.session(dir))
        // Between processes heat cools in real time (CLOCK_BOOTTIME, τ = 120 s): 10 field-s,
        // less what the real time between the two sessions took off.
        let elapsed = Double((ContinuousClock.now - start).components.seconds) + 1
        let floor = 10 * exp(-elapsed / 120)
        #expect(warm >= floor && warm <= 10, "heat at the second begin: \(warm), at least \(floor)")
        let other = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: other) }
        #expect(await Self.session(other) == 0)
    }

    @Test("Across arbiters (as across processes), queued waiters get the reader in arrival order, by ticket")
    func ticketOrder() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let holder = SessionArbiter(lockDirectory: dir)
        let lease = try #require(
            matched { if case .acquired(let lease) = holder.acquire(reader: "sim:queue") { lease } else { nil } },
            "not acquired")
        let order = Mutex<[String]>([])
        let leases = Mutex<[String: ReaderLease]>([:])
        var tickets: [ReaderQueueTicket] = []
        for name in ["b", "c", "d"] {
            let arbiter = SessionArbiter(lockDirectory: dir)
            tickets.append(
                arbiter.enqueue(reader: "sim:queue", poll: .milliseconds(5)) { l in
                    order.withLock { $0.append(name) }
                    leases.withLock { $0[name] = l }
                })
            // Each takes its ticket before the next asks.
            try await wait(for: "ticket \(tickets.count) in the queue folder") {
                (try? FileManager.default.contentsOfDirectory(
                    atPath: dir + "/" + holder.lockName(for: "sim:queue") + ".queue"))?
                    .filter({ !$0.hasSuffix(".new") && $0 != "next" }).count == tickets.count
            }
        }
        lease.release()
        for expected in ["b", "c", "d"] {
            try await wait(for: "\(expected)'s lease") { leases.withLock({ $0[expected] }) != nil }
            leases.withLock { $0[expected] }?.release()
        }
        #expect(order.withLock { $0 } == ["b", "c", "d"])
        for t in tickets { t.cancel() }
    }
}

/// A tag file shipped in `hardware/tags/`.
func hardwareTag(_ name: String) -> String {
    TestPaths.tags.appendingPathComponent("\(name).json").path
}

/// Issue 31 (fidelity review 2026-12-01): each test is a row where the bench said what an
/// iPhone would contradict; each fails on the model before the issue.
@Suite("Fidelity round 3: permissible AIDs, declarations, the CRC_A, the session turnover")
struct FidelityRound3Tests {
    /// `00 A4 04 00 Lc AID 00`.
    static func selectByName(_ aid: [UInt8]) -> NFCISO7816APDU {
        NFCISO7816APDU(
            instructionClass: 0x00, instructionCode: 0xA4, p1Parameter: 0x04, p2Parameter: 0x00, data: Data(aid),
            expectedResponseLength: 256)
    }

    @Test(
        "sendCommand: a SELECT by name of an AID outside select-identifiers fails with 2 and never reaches the tag; a listed one goes through (NFCISO7816Tag.h)"
    )
    func permissibleSelection() async throws {
        let bench = Bench(model: ReaderSystemModel(iso7816SelectIdentifiers: ["D2760000850101"]))
        let s = try tagSession(bench, Seen())
        var it = s.events.makeAsyncIterator()
        s.begin()
        bench.backend.present([(1, try MemoryType4Tag(ndef: uriMessage))])
        guard let first = await detected(&it)?.first, case .iso7816(let tag) = first else {
            Issue.record("not delivered as ISO 7816")
            return
        }
        try await s.connect(to: first)
        func selects(_ aid: [UInt8]) -> Int {
            bench.trace.events().filter {
                if case .frame(_, let command, _) = $0, command.starts(with: [0x00, 0xA4, 0x04, 0x00]),
                    command.dropFirst(5).starts(with: aid)
                {
                    true
                } else {
                    false
                }
            }.count
        }
        let ppse: [UInt8] = Array("2PAY.SYS.DDF01".utf8)
        #expect(
            await failure {
                let _: NFCISO7816ResponseAPDU = try await tag.sendCommand(apdu: Self.selectByName(ppse))
            } == .readerErrorSecurityViolation)
        #expect(selects(ppse) == 0, "the refused SELECT must not reach the tag")
        let ndefApp: [UInt8] = [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01]
        let before = selects(ndefApp)
        let r: NFCISO7816ResponseAPDU = try await tag.sendCommand(apdu: Self.selectByName(ndefApp))
        #expect([r.statusWord1, r.statusWord2] == [0x90, 0x00])
        #expect(selects(ndefApp) == before + 1)
        s.invalidate()
    }

    @Test(
        "Declarations: no entitlement for the format → 2; no valid select-identifier → 2 and invalid ones are dropped; radio off / ineligible / access not accepted → 6 / 7 / 8; no usage description → no tag delivered"
    )
    func declarations() async throws {
        func firstEnding(_ model: ReaderSystemModel, tag: Bool) async throws -> [String] {
            let bench = Bench(model: model, embedded: true)
            let d = Seen()
            if tag { try tagSession(bench, d).begin() } else { ndef(bench, d).begin() }
            bench.run()
            return d.all
        }
        #expect(try await firstEnding(ReaderSystemModel(readerSessionFormats: [.tag]), tag: false) == ["end:2"])
        #expect(try await firstEnding(ReaderSystemModel(readerSessionFormats: [.ndef]), tag: true) == ["end:2"])
        #expect(
            try await firstEnding(ReaderSystemModel(iso7816SelectIdentifiers: ["D276", "ZZ"]), tag: true) == ["end:2"])
        #expect(try await firstEnding(ReaderSystemModel(availability: .radioDisabled), tag: false) == ["end:6"])
        #expect(try await firstEnding(ReaderSystemModel(availability: .ineligible), tag: true) == ["end:7"])
        #expect(try await firstEnding(ReaderSystemModel(availability: .accessNotAccepted), tag: false) == ["end:8"])

        // One invalid entry among valid ones: dropped, and the trace says so.
        let mixed = Bench(
            model: ReaderSystemModel(iso7816SelectIdentifiers: ["A000", "D2760000850101"]), embedded: true)
        let m = Seen()
        try tagSession(mixed, m).begin()
        mixed.run()
        #expect(m.all == ["active"])
        #expect(mixed.trace.events().contains(.selectIdentifiersDropped(["A000"])))

        // No NFCReaderUsageDescription: the session runs, the tag is never delivered.
        let bench = Bench(
            model: ReaderSystemModel(iso7816SelectIdentifiers: ["D2760000850101"], hasUsageDescription: false),
            embedded: true)
        let d = Seen()
        let s = ndef(bench, d)
        s.begin()
        bench.backend.present([(1, MemoryType2Tag(ndef: uriMessage))])
        bench.run()
        #expect(bench.trace.events().contains { if case .detectionWithheld = $0 { true } else { false } })
        #expect(d.all == ["active"])
        #expect(!bench.trace.events().contains { if case .didDetectNDEFs = $0 { true } else { false } })
        bench.advanceTime(by: .seconds(61))
        bench.run()
        #expect(d.all == ["active", "end:201"])
    }

    @Test(
        "sendMiFareCommand: a frame with its CRC_A appended (Apple's page) and one without (the reports) both work by default; each literal reading is one parameter away"
    )
    func miFareCRC() async throws {
        /// "16" (bytes back) or "100" (the code it failed with).
        func answers(_ crc: ReaderSystemModel.MiFareCRC?, _ frame: [UInt8]) async throws -> String {
            let clock = ManualClock()
            let field = EmulatedField(name: "sim:model-test")
            let frontend = ReaderFrontend(device: field, clock: clock)
            var model = ReaderSystemModel()
            if let crc { model.miFareCRC = crc }
            let system = NFCReaderSystem(
                backend: frontend, clock: clock, arbiter: SessionArbiter(fileLocks: false), thermal: .disabled,
                model: model)
            let s = try #require(
                NFCTagReaderSession(pollingOption: .iso14443, delegate: Seen(), queue: nil, system: system))
            var it = s.events.makeAsyncIterator()
            s.begin()
            field.present([("A", try EmulatedTag(file: try TagFile.load(path: hardwareTag("ntag215-uri"))))])
            guard let first = await detected(&it)?.first, case .miFare(let tag) = first else {
                return "no MIFARE tag"
            }
            try await s.connect(to: first)
            defer { s.invalidate() }
            do {
                return "\(try await tag.sendMiFareCommand(commandPacket: Data(frame)).count) B"
            } catch {
                return "\((error as? NFCReaderError)?.code.rawValue ?? -1)"
            }
        }
        let withCRC: [UInt8] = [0x30, 0x04, 0x26, 0xEE]
        #expect(iso14443CRCA([0x30, 0x04]) == [0x26, 0xEE])
        #expect(try await answers(nil, withCRC) == "16 B")
        #expect(try await answers(nil, [0x30, 0x04]) == "16 B")
        #expect(try await answers(.appended, withCRC) == "16 B")
        #expect(try await answers(.appended, [0x30, 0x04]) == "100")
        #expect(try await answers(.omitted, withCRC) == "100")
        #expect(try await answers(.omitted, [0x30, 0x04]) == "16 B")
    }

    @Test(
        "invalidate(): the session stops at once and didInvalidateWithError comes 2.5 s later (reported, the CLI's and the harness's default); the reader stays held until then; 0 s is the library default"
    )
    func turnoverDelay() async throws {
        let bench = Bench(model: .reportedTurnover, embedded: true)
        let d = Seen()
        let s = ndef(bench, d)
        s.begin()
        bench.run()
        s.invalidate()
        bench.run()
        #expect(!s.isReady)
        #expect(d.all == ["active"])
        let other = Seen()
        NFCNDEFReaderSession(delegate: other, queue: nil, invalidateAfterFirstRead: false, system: bench.system).begin()
        bench.run()
        #expect(other.all == ["end:203"], "the reader is still held while the sheet closes")
        bench.advanceTime(by: .milliseconds(2499))
        bench.run()
        #expect(d.all == ["active"])
        bench.advanceTime(by: .milliseconds(1))
        bench.run()
        #expect(d.all == ["active", "end:200"])

        let old = Bench(model: ReaderSystemModel(invalidationDelay: .zero), embedded: true)
        let o = Seen()
        let t = ndef(old, o)
        t.begin()
        old.run()
        t.invalidate()
        old.run()
        #expect(o.all == ["active", "end:200"])
    }

    @Test(
        "A begin() while the same app's session is active kicks that one out with 202, and the new one meets the quick restart (203); another app's session meets the busy policy (reported)"
    )
    func kickOut() async throws {
        let bench = Bench(model: .reportedTurnover, embedded: true)
        let (a, b, c) = (Seen(), Seen(), Seen())
        ndef(bench, a).begin()
        bench.run()
        ndef(bench, b).begin()
        bench.run()
        #expect(a.all == ["active", "end:202"])
        #expect(b.all == ["end:203"])
        #expect(bench.trace.events().contains { if case .kickedOut = $0 { true } else { false } })
        // After a back-off past the quick-restart window, a begin works.
        bench.advanceTime(by: .seconds(4))
        ndef(bench, c).begin()
        bench.run()
        #expect(c.all == ["active"])

        // The old model: the second begin() meets the busy policy (203) and the first runs on.
        let old = Bench(model: ReaderSystemModel(sameAppBegin: .busyPolicy), embedded: true)
        let (x, y) = (Seen(), Seen())
        ndef(old, x).begin()
        old.run()
        ndef(old, y).begin()
        old.run()
        #expect(x.all == ["active"])
        #expect(y.all == ["end:203"])
    }

    @Test(
        "Labels: begin() in the background is assumed; the 30 s tag limit is assumed for Type 2 and Type 4; every fact says what its source covers"
    )
    func labels() {
        let facts = Dictionary(uniqueKeysWithValues: ReaderSystemModel().facts.map { ($0.key, $0) })
        #expect(facts["background_begin"]?.source == .assumed)
        #expect(facts["background_begin"]?.reference.contains("Android") == true)
        #expect(facts["tag_connection_limit_s"]?.source == .assumed)
        #expect(facts["tag_connection_limit_s"]?.covers.contains("ISO 15693") == true)
        #expect(facts["mifare_crc"] != nil)
        for f in ReaderSystemModel().facts {
            #expect(!f.covers.isEmpty, "\(f.key) says nothing of what its source covers")
        }
    }

    @Test("Every stored parameter of the model has a fact (a new parameter without one fails here)")
    func everyParameterHasAFact() {
        let model = ReaderSystemModel()
        let keys = Set(model.facts.map(\.key))
        for child in Mirror(reflecting: model).children {
            guard let name = child.label else { continue }
            let named = ReaderSystemModel.factKeysByProperty[name]
            #expect(named != nil, "\(name) has no entry in factKeysByProperty")
            for k in named ?? [] { #expect(keys.contains(k), "\(name): \(k) is not in facts") }
        }
    }
}
