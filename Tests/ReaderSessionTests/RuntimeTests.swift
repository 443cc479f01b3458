import Dispatch
import Foundation
import NFCBenchTestSupport
import NFCTags
import ReaderSession
import Synchronization
import Testing

/// Takes the next event of a session's sequence.
private func next<S: AsyncSequence & Sendable>(_ it: inout S.AsyncIterator, _: S.Type = S.self) async -> S.Element?
where S.Element: Sendable {
    try? await it.next()
}

private final class NDEFDelegate: NSObject, NFCNDEFReaderSessionDelegate, @unchecked Sendable {
    let log = Mutex<[String]>([])
    func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession) { log.withLock { $0.append("active") } }
    func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {
        log.withLock { $0.append("ndefs:\(messages.count)") }
    }
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
        log.withLock { $0.append("invalidate:\((error as? NFCReaderError)?.code.rawValue ?? -1)") }
    }
}

private final class RWDelegate: NSObject, NFCNDEFReaderSessionTagDelegate, @unchecked Sendable {
    func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [any NFCNDEFTag]) {}
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {}
}

private final class TagDelegate: NSObject, NFCTagReaderSessionDelegate, @unchecked Sendable {
    func tagReaderSession(_ session: NFCTagReaderSession, didDetect tags: [NFCTag]) {}
    func tagReaderSession(_ session: NFCTagReaderSession, didInvalidateWithError error: any Error) {}
}

private func code(_ e: NFCNDEFReaderSessionEvent?) -> NFCReaderError.Code? {
    if case .didInvalidate(let err) = e { err.code } else { nil }
}

private func isActive(_ e: NFCNDEFReaderSessionEvent?) -> Bool {
    if case .didBecomeActive = e { true } else { false }
}

@Suite("Runtime with a manual clock and an in-test reader")
struct RuntimeTests {
    @Test(
        "A session follows a reader's event stream on a thread of its own, never the shared pool (Core NFC's delivery does not wait for the app's tasks)"
    )
    func followsOnItsOwnThread() async throws {
        let bench = Bench()
        let session = NFCNDEFReaderSession(
            delegate: NDEFDelegate(), queue: nil, invalidateAfterFirstRead: true, system: bench.system)
        var it = session.events.makeAsyncIterator()
        session.begin()
        #expect(isActive(await it.next()))
        bench.backend.present([(1, MemoryType2Tag(ndef: uriMessage))])
        _ = try #require(
            await matchedAsync { if case .didDetectNDEFs(let m) = await it.next() { m } else { nil } },
            "no didDetectNDEFs")
        #expect(code(await it.next()) == .readerSessionInvalidationErrorFirstNDEFTagRead)
        let threads = bench.backend.pulledOn
        #expect(!threads.isEmpty)
        #expect(threads.allSatisfy { $0 == "nfcbench.poll" }, "\(threads)")
    }

    @Test(
        "Read-only session: a tag with a message is delivered, then 204; the delegate sees active first, invalidate last"
    )
    func readOnlyFirstRead() async throws {
        let bench = Bench()
        let delegate = NDEFDelegate()
        let session = NFCNDEFReaderSession(
            delegate: delegate, queue: nil, invalidateAfterFirstRead: true, system: bench.system)
        var it = session.events.makeAsyncIterator()
        session.alertMessage = "Hold your iPhone near the tag"
        session.begin()
        #expect(session.isReady)
        #expect(isActive(await it.next()))
        bench.backend.present([(1, MemoryType2Tag(ndef: nil)), (2, MemoryType2Tag(ndef: uriMessage))])
        let messages = try #require(
            await matchedAsync { if case .didDetectNDEFs(let messages) = await it.next() { messages } else { nil } },
            "no didDetectNDEFs")
        #expect(messages.map(\.bytes) == [uriMessage])
        #expect(messages.first?.records.first?.wellKnownTypeURIPayload()?.absoluteString == "https://example.com")
        #expect(code(await it.next()) == .readerSessionInvalidationErrorFirstNDEFTagRead)
        #expect(await it.next() == nil)
        #expect(!session.isReady)
        #expect(delegate.log.withLock { $0 } == ["active", "ndefs:1", "invalidate:204"])
        let events = bench.trace.events()
        #expect(
            events.first == .sessionBegan(kind: .ndef(invalidateAfterFirstRead: true), reader: bench.backend.identifier)
        )
        #expect(
            events.last == .didInvalidateWithError(.readerSessionInvalidationErrorFirstNDEFTagRead, errorMessage: nil))
        #expect(events.contains(.alertMessage("Hold your iPhone near the tag")))
        // The Type 2 procedure's READs are in the trace (the CC sits in the block READ 00 returns).
        #expect(
            events.contains { if case .frame(_, command: let c, response: _) = $0 { c.first == 0x30 } else { false } })
        #expect(events.contains(.ndefRead(DetectedTargetID(1), .empty)))
    }

    @Test("The 60 s limit ends the session with 201 at exactly 60 s of virtual time")
    func timeLimit() async throws {
        let bench = Bench()
        let delegate = NDEFDelegate()
        let session = NFCNDEFReaderSession(
            delegate: delegate, queue: nil, invalidateAfterFirstRead: false, system: bench.system)
        var it = session.events.makeAsyncIterator()
        bench.clock.advance(by: .seconds(5))
        session.begin()
        #expect(isActive(await it.next()))
        bench.clock.advance(by: .seconds(59))
        #expect(session.isReady)
        bench.clock.advance(by: .seconds(1))
        #expect(code(await it.next()) == .readerSessionInvalidationErrorSessionTimeout)
        let end = bench.trace.all.last
        #expect(end?.event == .didInvalidateWithError(.readerSessionInvalidationErrorSessionTimeout, errorMessage: nil))
        #expect(end?.tMicroseconds == 60_000_000)
        #expect(bench.clock.pendingTimers == 0)
    }

    @Test(
        "A second session while one is active gets only didInvalidate 203; after the first ends (and the quick-restart window) a new one starts"
    )
    func busy() async throws {
        let bench = Bench()
        let d = NDEFDelegate()
        let first = NFCNDEFReaderSession(delegate: d, queue: nil, invalidateAfterFirstRead: false, system: bench.system)
        let second = NFCNDEFReaderSession(
            delegate: d, queue: nil, invalidateAfterFirstRead: false, system: bench.system)
        var a = first.events.makeAsyncIterator()
        var b = second.events.makeAsyncIterator()
        first.begin()
        #expect(isActive(await a.next()))
        second.begin()
        #expect(code(await b.next()) == .readerSessionInvalidationErrorSystemIsBusy)
        #expect(await b.next() == nil)
        second.begin()  // no reuse
        first.invalidate(errorMessage: "Done here")
        let e = try #require(
            await matchedAsync { if case .didInvalidate(let e) = await a.next() { e } else { nil } }, "no end")
        #expect(e.code == .readerSessionInvalidationErrorUserCanceled)
        #expect(e.detail == "Done here")
        bench.clock.advance(by: .seconds(3))
        let third = NFCNDEFReaderSession(delegate: d, queue: nil, invalidateAfterFirstRead: false, system: bench.system)
        var c = third.events.makeAsyncIterator()
        third.begin()
        #expect(isActive(await c.next()))
        third.invalidate()
        #expect(code(await c.next()) == .readerSessionInvalidationErrorUserCanceled)
    }

    @Test("Done ends with 200 and leaving the foreground with 202, through the system")
    func doneAndBackground() async throws {
        let bench = Bench()
        let d = NDEFDelegate()
        let s1 = NFCNDEFReaderSession(delegate: d, queue: nil, invalidateAfterFirstRead: false, system: bench.system)
        var a = s1.events.makeAsyncIterator()
        s1.begin()
        #expect(isActive(await a.next()))
        bench.system.userTappedDone()
        #expect(code(await a.next()) == .readerSessionInvalidationErrorUserCanceled)
        bench.clock.advance(by: .seconds(3))
        let s2 = NFCNDEFReaderSession(delegate: d, queue: nil, invalidateAfterFirstRead: false, system: bench.system)
        var b = s2.events.makeAsyncIterator()
        s2.begin()
        #expect(isActive(await b.next()))
        bench.system.appDidEnterBackground()
        #expect(code(await b.next()) == .readerSessionInvalidationErrorSessionTerminatedUnexpectedly)
        #expect(bench.system.activeSessionCount == 0)
    }

    @Test("A reader that fails ends the session with 202")
    func readerFails() async throws {
        let bench = Bench()
        let d = NDEFDelegate()
        let s = NFCNDEFReaderSession(delegate: d, queue: nil, invalidateAfterFirstRead: false, system: bench.system)
        var a = s.events.makeAsyncIterator()
        s.begin()
        #expect(isActive(await a.next()))
        bench.backend.fail()
        #expect(code(await a.next()) == .readerSessionInvalidationErrorSessionTerminatedUnexpectedly)
    }

    @Test(
        "Read-write session: connect and read, restartPolling stales the tag (104), empty tag → 403, write then read back"
    )
    func readWrite() async throws {
        let bench = Bench()
        let d = RWDelegate()
        let s = NFCNDEFReaderSession(delegate: d, queue: nil, invalidateAfterFirstRead: true, system: bench.system)
        #expect(s.isReadWrite)
        var it = s.events.makeAsyncIterator()
        s.begin()
        #expect(isActive(await it.next()))
        bench.backend.present([(1, MemoryType2Tag(ndef: uriMessage)), (2, MemoryType2Tag(ndef: nil))])
        let tags = try #require(
            await matchedAsync {
                if case .didDetectTags(let tags) = await it.next(), tags.count == 2 { tags } else { nil }
            },
            "no tags")
        await #expect(throws: NFCReaderError(.readerTransceiveErrorTagNotConnected)) { try await tags[0].readNDEF() }
        try await s.connect(to: tags[0])
        #expect(try await tags[0].readNDEF().bytes == uriMessage)
        #expect(tags[0].isAvailable)
        try await s.connect(to: tags[1])
        await #expect(throws: NFCReaderError(.ndefReaderSessionErrorZeroLengthMessage)) { try await tags[1].readNDEF() }
        let (status, capacity) = try await tags[1].queryNDEFStatus()
        // NTAG213 data area 144 bytes, no control TLVs: T (1) + 1-byte L + 142 bytes of message.
        #expect(status == .readWrite && capacity == 142)
        try await tags[1].writeNDEF(try NFCNDEFMessage(bytes: uriMessage))
        #expect(try await tags[1].readNDEF().bytes == uriMessage)

        s.restartPolling()
        #expect(!tags[0].isAvailable)
        await #expect(throws: NFCReaderError(.readerTransceiveErrorTagNotConnected)) { try await tags[0].readNDEF() }
        let again = try #require(
            await matchedAsync { if case .didDetectTags(let again) = await it.next() { again } else { nil } },
            "no rediscovery")
        #expect(again.count == 2)
        #expect(bench.backend.restarts == 1)
        s.invalidate()
        #expect(code(await it.next()) == .readerSessionInvalidationErrorUserCanceled)
        await #expect(throws: NFCReaderError(.readerTransceiveErrorSessionInvalidated)) {
            try await again[0].readNDEF()
        }
    }

    @Test("Tag session: a tag removed mid-session fails the operation with 100 and the session stays valid")
    func removedTag() async throws {
        let bench = Bench()
        let d = TagDelegate()
        let s = try #require(
            NFCTagReaderSession(pollingOption: [.iso14443], delegate: d, queue: nil, system: bench.system))
        var it = s.events.makeAsyncIterator()
        s.begin()
        try #require(
            await matchesAsync { if case .didBecomeActive = await it.next() { true } else { false } }, "not active")
        bench.backend.present([(7, MemoryType2Tag(ndef: uriMessage))])
        let tags = try #require(
            await matchedAsync { if case .didDetect(let tags) = await it.next() { tags } else { nil } }, "no tags")
        let first = try #require(tags.first, "no tags")
        let tag = try #require(matched { if case .miFare(let tag) = first { tag } else { nil } }, "no MIFARE tag")
        try await s.connect(to: first)
        #expect(
            try await tag.sendMiFareCommand(commandPacket: Data([0x30, 0x03])).prefix(4)
                == Data([0xE1, 0x10, 0x12, 0x00]))
        await #expect(throws: NFCReaderError(.readerErrorUnsupportedFeature)) {
            try await tag.sendMiFareCommand(commandPacket: Data([0x1B, 0, 0, 0, 0]))
        }
        bench.backend.remove(7, announce: false)
        await #expect(throws: NFCReaderError(.readerTransceiveErrorTagConnectionLost)) { try await tag.readNDEF() }
        #expect(s.isReady)
        s.invalidate()
        let e = try #require(
            await matchedAsync { if case .didInvalidate(let e) = await it.next() { e } else { nil } }, "no end")
        #expect(e.code == .readerSessionInvalidationErrorUserCanceled)
    }

    @Test(
        "Tag session: a Type 4 tag arrives as .iso7816 after the session selected the declared NDEF AID; SELECT by APDU and readNDEF go through NFCTags' T4T reader"
    )
    func type4() async throws {
        let bench = Bench()
        let s = try #require(
            NFCTagReaderSession(pollingOption: [.iso14443], delegate: TagDelegate(), queue: nil, system: bench.system))
        var it = s.events.makeAsyncIterator()
        s.begin()
        try #require(
            await matchesAsync { if case .didBecomeActive = await it.next() { true } else { false } }, "not active")
        bench.backend.present([(9, try MemoryType4Tag(ndef: uriMessage))])
        let tags = try #require(
            await matchedAsync { if case .didDetect(let tags) = await it.next() { tags } else { nil } }, "no tags")
        let first = try #require(tags.first, "no tags")
        let tag = try #require(matched { if case .iso7816(let tag) = first { tag } else { nil } }, "no ISO 7816 tag")
        #expect(tag.historicalBytes == Data([0x80]))
        #expect(tag.initialSelectedAID == "D2760000850101")
        try await s.connect(to: first)
        let select = NFCISO7816APDU(
            instructionClass: 0, instructionCode: 0xA4, p1Parameter: 4, p2Parameter: 0,
            data: Data([0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01]), expectedResponseLength: 256)
        let (_, sw1, sw2) = try await tag.sendCommand(apdu: select)
        #expect((sw1, sw2) == (0x90, 0x00))
        #expect(try await tag.readNDEF().bytes == uriMessage)
        let (status, _) = try await tag.queryNDEFStatus()
        #expect(status == .readWrite)
        s.invalidate()
        try #require(await matchesAsync { if case .didInvalidate = await it.next() { true } else { false } }, "no end")
        #expect(
            bench.trace.events().contains {
                if case .frame(_, command: let c, response: [0x90, 0x00]) = $0 {
                    c.prefix(2) == [0x00, 0xA4]
                } else {
                    false
                }
            })
    }

    @Test("An empty polling option is refused like Core NFC (nil)")
    func emptyPollingOption() {
        #expect(
            NFCTagReaderSession(pollingOption: [], delegate: TagDelegate(), queue: nil, system: Bench().system) == nil)
    }

    @Test("Without a system, begin ends with 1 readerErrorUnsupportedFeature")
    func noSystem() async {
        let s = NFCNDEFReaderSession(delegate: NDEFDelegate(), queue: nil, invalidateAfterFirstRead: true, system: nil)
        var it = s.events.makeAsyncIterator()
        s.begin()
        #expect(code(await it.next()) == .readerErrorUnsupportedFeature)
    }

    @Test(
        "Sessions begun 3 s after each other's timeout (past the quick-restart window) get shorter limits and then 203, all reported in the trace"
    )
    func thermal() async throws {
        let bench = Bench(thermal: ThermalModel())
        let d = NDEFDelegate()
        var limits: [Duration] = []
        var last: NFCReaderError.Code?
        for _ in 0..<12 {
            let s = NFCNDEFReaderSession(delegate: d, queue: nil, invalidateAfterFirstRead: false, system: bench.system)
            var it = s.events.makeAsyncIterator()
            s.begin()
            guard isActive(await it.next()) else {
                last = .readerSessionInvalidationErrorSystemIsBusy
                break
            }
            let granted = bench.trace.all.compactMap { r -> Duration? in
                if case .thermal(_, let l, _) = r.event, r.tMicroseconds == 0 { l } else { nil }
            }.last
            let limit = try #require(granted, "no thermal record at begin")
            limits.append(limit)
            bench.clock.advance(by: limit)
            last = code(await it.next())
            #expect(last == .readerSessionInvalidationErrorSessionTimeout)
            bench.clock.advance(by: .seconds(3))
        }
        #expect(limits.first == .seconds(60))
        #expect(limits.count >= 4)
        #expect(zip(limits, limits.dropFirst()).allSatisfy { $0 > $1 })
        #expect(limits.dropFirst().first.map { $0 > .seconds(45) && $0 < .seconds(46) } == true)  // 60 − 0.25 × 58.5
        #expect(last == .readerSessionInvalidationErrorSystemIsBusy)
        #expect(bench.trace.events().contains(.thermal(heat: 0, timeLimit: .seconds(60), enabled: true)))
        #expect(bench.trace.events().contains { if case .thermal(_, nil, _) = $0 { true } else { false } })
        // The end of each session predicts the next limit in a field of its own.
        #expect(bench.trace.events().contains { if case .thermalAfter(_, .some, true) = $0 { true } else { false } })
    }
}
