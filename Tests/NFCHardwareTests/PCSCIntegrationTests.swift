import Foundation
import NFCBenchTestSupport
import NFCHardware
import NFCTags
import Testing
import VirtualHardware

// Against the real pcscd with the vpcd reader: run through `scripts/with-pcscd`
// (`scripts/with-pcscd swift test --filter PCSC`). Without it the suite is skipped with a
// message, except under CI=true, where it fails.

/// A tiny T4T NDEF application for these tests (NFC Forum T4T 1.0 §5): SELECT by AID
/// D2760000850101, SELECT E103/E104 by file ID, READ BINARY.
struct PCSCTestNDEFApplication: VirtualAPDUResponder {
    static let message: [UInt8] = [0xD1, 0x01, 0x0C, 0x55, 0x04] + Array("example.org".utf8)
    var files: [UInt16: [UInt8]] = [
        0xE103: [UInt8](hex: "00 0F 20 00 3B 00 34 04 06 E1 04 08 00 00 00")!,
        0xE104: [0x00, UInt8(message.count)] + message,
    ]
    var applicationSelected = false
    var file: UInt16? = nil

    mutating func respond(to apdu: [UInt8]) -> [UInt8] {
        guard apdu.count >= 4 else { return [0x67, 0x00] }
        switch (apdu[0], apdu[1], apdu[2], apdu[3]) {
        case (0x00, 0xA4, 0x04, 0x00):
            guard apdu.count >= 12, Array(apdu[5..<12]) == [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01] else {
                return [0x6A, 0x82]
            }
            applicationSelected = true
            file = nil
            return [0x90, 0x00]
        case (0x00, 0xA4, 0x00, 0x0C):
            guard applicationSelected, apdu.count >= 7 else { return [0x6A, 0x82] }
            let id = UInt16(apdu[5]) << 8 | UInt16(apdu[6])
            guard files[id] != nil else { return [0x6A, 0x82] }
            file = id
            return [0x90, 0x00]
        case (0x00, 0xB0, let p1, let p2):
            guard let file, let data = files[file], apdu.count == 5 else { return [0x69, 0x86] }
            let offset = Int(p1) << 8 | Int(p2)
            guard offset <= data.count else { return [0x6B, 0x00] }
            return Array(data[offset...].prefix(Int(apdu[4]))) + [0x90, 0x00]
        default:
            return [0x6D, 0x00]
        }
    }

    mutating func reset() {
        applicationSelected = false
        file = nil
    }
}

/// A 45-page Type 2 image with READ, WRITE (pages 4–39) and GET_VERSION.
struct PCSCTestType2Core: VirtualType2Responder {
    var pages: [[UInt8]] =
        [
            [0x04, 0xA1, 0xB2, 0x88 ^ 0x04 ^ 0xA1 ^ 0xB2], [0xC3, 0xD4, 0xE5, 0xF6],
            [0xC3 ^ 0xD4 ^ 0xE5 ^ 0xF6, 0x48, 0, 0], [0xE1, 0x10, 0x12, 0x00],
        ]
        + Array(repeating: [0, 0, 0, 0], count: 41)
    static let version: [UInt8] = [0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x0F, 0x03]
    mutating func respond(to frame: [UInt8]) -> Type2Answer {
        switch frame.first {
        case 0x30? where frame.count == 2 && Int(frame[1]) < pages.count:
            return .data((0..<4).flatMap { pages[(Int(frame[1]) + $0) % pages.count] })
        case 0xA2? where frame.count == 6 && (4...39).contains(Int(frame[1])):
            pages[Int(frame[1])] = Array(frame[2...5])
            return .ack
        case 0x60? where frame.count == 1:
            return .data(Self.version)
        default:
            return .nak(0)
        }
    }
}

enum PCSCBench {
    static let reader0 = "Virtual PCD 00 00"
    static let reader1 = "Virtual PCD 00 01"
    static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"

    /// Why the bench is missing, or nil when pcscd serves the vpcd reader.
    static let problem: String? = {
        do {
            let readers = try PCSCContext().readers()
            return readers.contains(reader0) && readers.contains(reader1)
                ? nil : "pcscd runs without the vpcd reader (readers: \(readers)); use scripts/with-pcscd"
        } catch {
            return "no pcscd (\(error)); run the tests through scripts/with-pcscd"
        }
    }()

    static var enabled: Bool { problem == nil || isCI }
}

/// Waits (blocking) until `reader`'s state satisfies `done`, or `seconds` pass.
func waitForReader(
    _ context: PCSCContext, _ reader: String, seconds: Double = 5, until done: (PCSCReaderState) -> Bool
) throws -> PCSCReaderState? {
    let deadline = Date().addingTimeInterval(seconds)
    var known = PCSCReaderState.unaware(reader)
    while Date() < deadline {
        switch try context.waitForStatusChange(readers: [known], timeout: .milliseconds(250)) {
        case .changed(let states):
            known = states[0]
            if done(known) { return known }
        case .timeout, .cancelled:
            if done(known) { return known }
        }
    }
    return nil
}

func run(_ tool: String, _ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    process.standardError = out
    let inPipe = Pipe()
    process.standardInput = inPipe
    try process.run()
    if let input { inPipe.fileHandleForWriting.write(Data(input.utf8)) }
    try inPipe.fileHandleForWriting.close()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

// Nested in PCSCVirtualBenchSuites (PCSCBackendTests.swift), whose .serialized keeps it from
// running beside the backend suite on the same vpcd readers.
extension PCSCVirtualBenchSuites {
    @Suite(
        "PC/SC against pcscd and the virtual card on vpcd", .serialized,
        .enabled(if: PCSCBench.enabled, "needs pcscd with the vpcd reader: run through scripts/with-pcscd"))
    struct PCSCIntegrationTests {
        static let selectNDEF: [UInt8] = [UInt8](hex: "00 A4 04 00 07 D2 76 00 00 85 01 01 00")!
        static let selectE104: [UInt8] = [UInt8](hex: "00 A4 00 0C 02 E1 04")!

        /// Starts a T4T card on slot `port`, waits until pcscd reports it, runs `body` on a
        /// thread of its own, then removes the card and waits until pcscd saw it go.
        func withCard<T: Sendable>(
            _ personality: some VirtualCardPersonality, port: UInt16 = 35963, reader: String = PCSCBench.reader0,
            quickAck: Bool = true,
            _ body: @escaping @Sendable (VirtualCard, PCSCContext) throws -> T
        ) async throws -> T {
            if let problem = PCSCBench.problem { throw PCSCBenchMissing(reason: problem) }
            var configuration = VirtualCard.Configuration(port: port)
            configuration.quickAck = quickAck
            let card = VirtualCard(personality: personality, configuration: configuration)
            return try await offPool {
                let context = try PCSCContext()
                card.start()
                defer {
                    card.stop()
                    _ = try? waitForReader(context, reader) { $0.flags.contains(.empty) }
                }
                guard try waitForReader(context, reader, until: { $0.hasCard }) != nil else {
                    throw PCSCBenchMissing(reason: "pcscd never reported the virtual card in \(reader)")
                }
                return try body(card, context)
            }
        }

        static var ndefCard: ISO14443Part4Personality<PCSCTestNDEFApplication> {
            ISO14443Part4Personality(core: PCSCTestNDEFApplication(), historicalBytes: [0x80])
        }

        @Test("pcsc_scan -n -t 2 shows the virtual card's ATR; scriptor's SELECT NDEF answers 90 00")
        func otherPeoplesClients() async throws {
            let atr = Self.ndefCard.atr.hexString(separator: " ")
            let (scan, script) = try await withCard(Self.ndefCard) { _, _ in
                (
                    try run("/usr/bin/timeout", ["-k", "1", "10", "/usr/bin/pcsc_scan", "-n", "-t", "2"]),
                    try run(
                        "/usr/bin/scriptor", ["-r", PCSCBench.reader0],
                        input: "00 A4 04 00 07 D2 76 00 00 85 01 01 00\n")
                )
            }
            #expect(scan.output.contains(atr), "pcsc_scan printed: \(scan.output.suffix(600))")
            #expect(script.output.contains("< 90 00"), "scriptor printed: \(script.output)")
        }

        @Test("pyscard and PCSCCard read the same NDEF file bytes")
        func pyscardAgrees() async throws {
            let script = """
                from smartcard.System import readers
                from smartcard.util import toHexString
                r = [x for x in readers() if str(x) == '\(PCSCBench.reader0)'][0]
                c = r.createConnection(); c.connect()
                def tx(a):
                    d, s1, s2 = c.transmit(a); assert (s1, s2) == (0x90, 0), (a, s1, s2); return d
                tx([0x00,0xA4,0x04,0x00,0x07,0xD2,0x76,0x00,0x00,0x85,0x01,0x01,0x00])
                tx([0x00,0xA4,0x00,0x0C,0x02,0xE1,0x04])
                n = tx([0x00,0xB0,0x00,0x00,0x02])
                print(toHexString(n + tx([0x00,0xB0,0x00,0x02,(n[0] << 8) | n[1]])))
                """
            let (python, ours) = try await withCard(Self.ndefCard) { _, context in
                let py = try run("/usr/bin/python3", ["-c", script])
                let card = try context.connect(reader: PCSCBench.reader0)
                defer { try? card.disconnect() }
                let t = PCSCAPDUTransport(card: card)
                _ = try t.transmit(Self.selectNDEF)
                _ = try t.transmit(Self.selectE104)
                let nlen = try t.transmit([0x00, 0xB0, 0x00, 0x00, 0x02]).dropLast(2)
                let length = UInt8(truncatingIfNeeded: Int(nlen.first ?? 0) << 8 | Int(nlen.last ?? 0))
                let body = try t.transmit([0x00, 0xB0, 0x00, 0x02, length]).dropLast(2)
                return (py, Array(nlen + body))
            }
            #expect(python.status == 0, "pyscard failed: \(python.output)")
            #expect(python.output.trimmingCharacters(in: .whitespacesAndNewlines) == ours.hexString(separator: " "))
            #expect(Array(ours.dropFirst(2)) == PCSCTestNDEFApplication.message)
        }

        @Test("A card pulled mid-transmit is tagLost: the 0-byte answer, then SCARD_W_REMOVED_CARD")
        func pulledMidTransmit() async throws {
            let (first, second) = try await withCard(Self.ndefCard) { card, context in
                let pcsc = try context.connect(reader: PCSCBench.reader0)
                defer { try? pcsc.disconnect() }
                let t = PCSCAPDUTransport(card: pcsc)
                #expect(try t.transmit(Self.selectNDEF) == [0x90, 0x00])
                card.inject(.closeMidAPDU)
                func error(_ body: () throws -> [UInt8]) -> TagCommunicationError? {
                    do {
                        _ = try body()
                        return nil
                    } catch { return error as? TagCommunicationError }
                }
                let first = error { try t.transmit(Self.selectNDEF) }
                card.remove()  // stay out, so pcscd reports the removal
                _ = try waitForReader(context, PCSCBench.reader0) { $0.flags.contains(.empty) }
                let second = error { try t.transmit(Self.selectNDEF) }
                #expect(throws: PCSCError.removedCard) { try pcsc.transmit(Self.selectNDEF) }
                return (first, second)
            }
            #expect(first == .tagLost)
            #expect(second == .tagLost)
        }

        @Test(
            "transmitRepeatedly: every SELECT timed and answered 90 00, shouldStop honoured, a card pulled mid-run is tagLost with the round trips before it kept"
        )
        func repeatedTransmit() async throws {
            let (full, stopped, kept, failure) = try await withCard(Self.ndefCard) { card, context in
                let pcsc = try context.connect(reader: PCSCBench.reader0)
                defer { try? pcsc.disconnect() }
                let t = PCSCAPDUTransport(card: pcsc)
                var full = TimedAPDUExchanges()
                let before = ContinuousClock.now
                try t.transmitRepeatedly(Self.selectNDEF, count: 300, into: &full, shouldStop: { false })
                let after = ContinuousClock.now
                #expect(full.starts.first.map { $0 >= before } == true)
                #expect(zip(full.starts, full.durations).allSatisfy { $0 + $1 <= after })
                #expect(zip(full.starts, full.starts.dropFirst()).allSatisfy { $0 < $1 })
                #expect(full.durations.allSatisfy { $0 > .zero })
                var asked = 0
                var stopped = TimedAPDUExchanges()
                try t.transmitRepeatedly(
                    Self.selectNDEF, count: 300, into: &stopped,
                    shouldStop: {
                        asked += 1
                        return asked > 5
                    })
                var kept = TimedAPDUExchanges()
                try t.transmitRepeatedly(Self.selectNDEF, count: 3, into: &kept, shouldStop: { false })
                card.inject(.closeMidAPDU)
                var failure: TagCommunicationError? = nil
                do {
                    try t.transmitRepeatedly(Self.selectNDEF, count: 10, into: &kept, shouldStop: { false })
                } catch {
                    failure = error as? TagCommunicationError
                }
                return (full, stopped, kept, failure)
            }
            #expect(full.count == 300)
            #expect((0..<full.count).allSatisfy { Array(full.response($0)) == [0x90, 0x00] })
            #expect(stopped.count == 5)
            #expect(kept.count == 3)
            #expect(failure == .tagLost)
        }

        @Test("waitForStatusChange sees removal and insertion, with the event counter growing")
        func insertionAndRemoval() async throws {
            let atr = Self.ndefCard.atr
            let (present, removed, back) = try await withCard(Self.ndefCard) { card, context in
                let present = try waitForReader(context, PCSCBench.reader0) { $0.hasCard }
                card.remove()
                let removed = try waitForReader(context, PCSCBench.reader0) { $0.flags.contains(.empty) }
                card.present()
                let back = try waitForReader(context, PCSCBench.reader0) { $0.hasCard }
                return (present, removed, back)
            }
            let p = try #require(present)
            let r = try #require(removed)
            let b = try #require(back)
            #expect(p.atr == atr)
            #expect(r.atr.isEmpty || !r.flags.contains(.present))
            #expect(r.eventCount == p.eventCount &+ 1)
            #expect(b.eventCount == p.eventCount &+ 2)
            #expect(b.atr == atr)
        }

        @Test("A status wait is cancelled by SCardCancel from another thread")
        func cancellable() async throws {
            if let problem = PCSCBench.problem { throw PCSCBenchMissing(reason: problem) }
            let context = try PCSCContext()
            let current = try await offPool {
                try context.waitForStatusChange(readers: [.unaware(PCSCBench.reader0)], timeout: .seconds(1))
            }
            let states = try #require(
                matched { if case .changed(let states) = current { states } else { nil } },
                "no initial state: \(current)")
            let waiter = Task {
                try await offPool { try context.waitForStatusChange(readers: states, timeout: .seconds(30)) }
            }
            await pause(.milliseconds(200), because: "the waiter must be in pcscd's status wait before the cancel")
            let started = ContinuousClock.now
            try await offPool { try context.cancel() }
            #expect(try await waiter.value == .cancelled)
            #expect(ContinuousClock.now - started < .seconds(2), "not its 30 s timeout")
            // A released context cancels nothing and fails no one.
            context.release()
            try context.cancel()
        }

        @Test("A Type 2 image behind a storage-card ATR: UID, READ BINARY, UPDATE BINARY, GET_VERSION")
        func storageCard() async throws {
            let personality = StorageCardPersonality(core: PCSCTestType2Core())
            let result = try await withCard(personality, port: 35964, reader: PCSCBench.reader1) { card, context in
                let pcsc = try context.connect(reader: PCSCBench.reader1)
                defer { try? pcsc.disconnect() }
                let t2 = PCSCType2TagTransport(card: pcsc)
                let uid = try pcsc.uid()
                let page3 = try t2.read(page: 3)
                try t2.write(page: 5, data: [0xCA, 0xFE, 0xBA, 0xBE])
                let page5 = try t2.read(page: 5)
                let version = try t2.getVersion()
                // Any other frame goes through the transparent exchange (sendMiFareCommand's carrier).
                // This core NAKs FAST_READ; through PC/SC part 3 the 4-bit NAK arrives as no
                // answer from the tag (the reader hides it), which sendMiFareCommand reports as 100.
                let raw = try t2.transceive([0x3A, 0x00, 0x01])
                #expect(raw == .silent)
                #expect(try t2.transceive([0x60]) == .data(PCSCTestType2Core.version))
                var nak: TagCommunicationError? = nil
                do { try t2.write(page: 2, data: [0, 0, 0, 0]) } catch let e as TagCommunicationError { nak = e }
                let stored = card.withPersonality { ($0 as? StorageCardPersonality<PCSCTestType2Core>)?.core.pages[5] }
                return (uid, page3, page5, version, nak, pcsc.transparentExchangeKind, try pcsc.status().atr, stored)
            }
            #expect(result.0 == [UInt8](hex: "04 A1 B2 C3 D4 E5 F6"))
            #expect(result.1.prefix(4) == [0xE1, 0x10, 0x12, 0x00] && result.1.count == 16)
            #expect(result.2.prefix(4) == [0xCA, 0xFE, 0xBA, 0xBE])
            #expect(result.3 == PCSCTestType2Core.version)
            #expect(result.4 == .nak(0))
            #expect(result.5 == .pcscPart3)
            #expect(result.6 == ATR.storageCard(standard: .iso14443APart3, cardName: .mifareUltralight).bytes)
            #expect(result.7 == [0xCA, 0xFE, 0xBA, 0xBE])
        }

        @Test("APDU round trip: median of 1000 SELECTs with TCP_QUICKACK, and of 40 without")
        func roundTrip() async throws {
            func median(quickAck: Bool, count: Int) async throws -> Duration {
                try await withCard(Self.ndefCard, quickAck: quickAck) { _, context in
                    let pcsc = try context.connect(reader: PCSCBench.reader0)
                    defer { try? pcsc.disconnect() }
                    _ = try pcsc.transmit(Self.selectNDEF)
                    let clock = ContinuousClock()
                    var samples: [Duration] = []
                    for _ in 0..<count {
                        let start = clock.now
                        let r = try pcsc.transmit(Self.selectNDEF)
                        samples.append(clock.now - start)
                        #expect(r == [0x90, 0x00])
                    }
                    return samples.sorted()[count / 2]
                }
            }
            let fast = try await median(quickAck: true, count: 1000)
            let slow = try await median(quickAck: false, count: 40)
            print("vpcd APDU round trip median: \(fast) with TCP_QUICKACK (1000 SELECTs), \(slow) without (40)")
            #expect(fast < slow, "re-arming TCP_QUICKACK must beat the delayed ACK")
        }
    }
}

struct PCSCBenchMissing: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}
