import Foundation
import NFCBenchTestSupport
import NFCFiles
import NFCTags
import ReaderFrontend
import ReaderSession
import Synchronization
import Testing

/// The Done-when rules of the FeliCa / ISO 15693 issue, on the in-process field (the same
/// cores every device serves): Info.plist system codes, polling options, NDEF sessions.
@Suite("Sessions: FeliCa and ISO 15693 tags as Core NFC delivers them")
struct FeliCaISO15693SessionTests {
    static let tagsDirectory: String = TestPaths.tags.path

    static func tag(_ name: String) throws -> EmulatedTag {
        try EmulatedTag(file: try TagFile.load(path: tagsDirectory + "/" + name))
    }

    final class Seen: NSObject, NFCNDEFReaderSessionDelegate, NFCTagReaderSessionDelegate, @unchecked Sendable {
        let log = Mutex<[String]>([])
        let messages = Mutex<[NFCNDEFMessage]>([])
        var all: [String] { log.withLock { $0 } }
        func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession) { log.withLock { $0.append("active") } }
        func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {
            self.messages.withLock { $0 += messages }
            log.withLock { $0.append("ndef:\(messages.count)") }
        }
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

    /// A manual-clock system over an in-process field with `tags` in it; `embedded: true` runs
    /// it on an executor the test drives (``loop``), dispatch queues otherwise.
    struct Rig {
        let clock: ManualClock
        let field = EmulatedField(name: "sim:felica")
        let system: NFCReaderSystem
        let loop: EmbeddedReaderSessionExecutor?
        init(_ tags: [(String, EmulatedTag)], systemCodes: [String], embedded: Bool = false) {
            var model = ReaderSystemModel(invalidationDelay: .zero)
            model.feliCaSystemCodes = systemCodes
            let loop = embedded ? EmbeddedReaderSessionExecutor() : nil
            let clock = loop?.clock ?? ManualClock()
            self.loop = loop
            self.clock = clock
            let frontend = ReaderFrontend(device: field, clock: clock)
            system = NFCReaderSystem(
                backend: frontend, clock: clock, arbiter: SessionArbiter(fileLocks: false), thermal: .disabled,
                model: model, executor: loop)
            field.present(tags.map { (name: $0.0, tag: $0.1) })
        }

        func session(_ option: NFCTagReaderSession.PollingOption, codes: [String] = [], _ d: Seen) throws
            -> NFCTagReaderSession
        {
            try #require(
                NFCTagReaderSession(
                    configuration: .init(pollingOption: option, feliCaSystemCodes: codes), delegate: d, queue: nil,
                    system: system))
        }
    }

    /// The first tag event, or nil when the session ended first. Gives up after 5 s.
    static func firstTags(_ s: NFCTagReaderSession) async -> [NFCTag]? {
        var it = s.events.makeAsyncIterator()
        while let e = await it.next() {
            switch e {
            case .didDetect(let tags): return tags
            case .didBecomeActive: continue
            case .didInvalidate: return nil
            }
        }
        return nil
    }

    @Test(
        ".iso18092 with 12FC delivers the Lite-S as .feliCa with currentSystemCode 12FC and its IDm; it reads as NDEF")
    func liteS() async throws {
        let rig = Rig([("lite", try Self.tag("felica-lite-s-uri.json"))], systemCodes: ["12FC", "0003"])
        let d = Seen()
        let s = try rig.session(.iso18092, codes: ["12FC"], d)
        s.begin()
        let tags = try #require(await Self.firstTags(s))
        guard tags.count == 1, case .feliCa(let felica) = tags[0] else {
            Issue.record("not delivered as .feliCa: \(tags)")
            return
        }
        #expect(felica.currentSystemCode == Data([0x12, 0xFC]))
        #expect(felica.currentIDm == Data([0x01, 0x2E, 0x4C, 0xE4, 0x45, 0x05, 0x5B, 0x87]))
        #expect(felica.type == .feliCa && felica.asNFCFeliCaTag() != nil && felica.asNFCMiFareTag() == nil)
        try await s.connect(to: tags[0])
        let message = try await felica.readNDEF()
        #expect(message.records.first?.wellKnownTypeURIPayload()?.absoluteString == "https://example.com/nfcbench/t3t")
        let (status, capacity) = try await felica.queryNDEFStatus()
        #expect(status == .readWrite && capacity == 208)
        // Read Without Encryption of block 0 through 000B: the attribute block, status 00 00.
        let (sf1, sf2, blocks) = try await felica.readWithoutEncryption(
            serviceCodeList: [Data([0x0B, 0x00])], blockList: [Data([0x80, 0x00])])
        #expect(sf1 == 0 && sf2 == 0 && blocks.first?.prefix(2) == Data([0x10, 0x04]))
        // A block past the memory: the error is in the status flags, not thrown.
        let (e1, e2, none) = try await felica.readWithoutEncryption(
            serviceCodeList: [Data([0x0B, 0x00])], blockList: [Data([0x80, 0x40])])
        #expect(e1 != 0 && e2 == 0xA8 && none.isEmpty)
        #expect(try await felica.requestSystemCode() == [Data([0x12, 0xFC])])
        #expect(try await felica.requestResponse() == 0)
        // sendFeliCaCommand: the packet starts at the command code; LEN is added.
        let answer = try await felica.sendFeliCaCommand(commandPacket: Data([0x04] + [UInt8](felica.currentIDm)))
        #expect(answer.first == 0x05)
        // Polling a code outside the Info.plist list, or the wildcard: 2, nothing sent.
        for code in [Data([0xFF, 0xFF]), Data([0x88, 0xB4])] {
            do {
                _ = try await felica.polling(systemCode: code, requestCode: .systemCode, timeSlot: .max1)
                Issue.record("polling \(code as NSData) succeeded")
            } catch { #expect((error as? NFCReaderError)?.code == .readerErrorSecurityViolation) }
        }
        let (pmm, rd) = try await felica.polling(
            systemCode: Data([0x12, 0xFC]), requestCode: .systemCode, timeSlot: .max1)
        #expect(pmm == Data([0x00, 0xF1, 0x00, 0x00, 0x00, 0x01, 0x43, 0x00]) && rd == Data([0x12, 0xFC]))
        s.invalidate()
    }

    @Test("With 0003 only: the transit card is delivered and the Lite-S is not")
    func transitOnly() async throws {
        let rig = Rig(
            [
                ("lite", try Self.tag("felica-lite-s-uri.json")),
                ("transit", try Self.tag("felica-standard-transit.json")),
            ],
            systemCodes: ["12FC", "0003"])
        let d = Seen()
        let s = try rig.session(.iso18092, codes: ["0003"], d)
        s.begin()
        let tags = try #require(await Self.firstTags(s))
        #expect(tags.count == 1)
        let t = try #require(matched { if case .feliCa(let t) = tags.first { t } else { nil } }, "not FeliCa")
        #expect(t.currentSystemCode == Data([0x00, 0x03]))
        #expect(t.currentIDm == Data([0x01, 0x01, 0x05, 0x01, 0x86, 0x04, 0x02, 0x02]))
        try await s.connect(to: tags[0])
        let (sf1, _, blocks) = try await t.readWithoutEncryption(
            serviceCodeList: [Data([0x0F, 0x09])], blockList: [Data([0x80, 0x00]), Data([0x80, 0x01])])
        #expect(sf1 == 0 && blocks.count == 2)
        s.invalidate()
    }

    @Test("A system code no tag has: nothing delivered, the session times out with 201")
    func noMatchTimesOut() async throws {
        let rig = Rig([("lite", try Self.tag("felica-lite-s-uri.json"))], systemCodes: ["FE00"], embedded: true)
        let loop = try #require(rig.loop)
        let d = Seen()
        let s = try rig.session(.iso18092, d)
        s.begin()
        loop.run()
        #expect(d.all == ["active"])
        // The Polling of FE00 happened and found nothing: the tag is not delivered.
        #expect(rig.system.pendingWork == 0)
        loop.advanceTime(by: .seconds(59))
        #expect(d.all == ["active"])
        loop.advanceTime(by: .seconds(1))
        #expect(d.all == ["active", "end:201"])
    }

    @Test(".iso18092 without a valid system code in the Info.plist ends at begin() with 2")
    func noValidCode() async throws {
        for codes in [[], ["12FF"], ["FFFF"]] {
            let rig = Rig([("lite", try Self.tag("felica-lite-s-uri.json"))], systemCodes: codes, embedded: true)
            let d = Seen()
            try rig.session(.iso18092, d).begin()
            try #require(rig.loop).run()
            #expect(d.all == ["end:2"], "\(codes)")
        }
    }

    @Test(".iso15693 delivers the SLIX as .iso15693; tag errors are 102 with the ISO 15693 error code")
    func slix() async throws {
        let rig = Rig([("slix", try Self.tag("icode-slix-text.json"))], systemCodes: [])
        let d = Seen()
        let s = try rig.session(.iso15693, d)
        s.begin()
        let tags = try #require(await Self.firstTags(s))
        let v = try #require(
            matched { if case .iso15693(let v) = tags.first { v } else { nil } }, "not delivered as .iso15693: \(tags)")
        #expect(v.identifier == Data([0xE0, 0x04, 0x01, 0x00, 0x8A, 0x5C, 0x98, 0x2E]))
        #expect(v.icManufacturerCode == 0x04 && v.icSerialNumber == Data([0x01, 0x00, 0x8A, 0x5C, 0x98, 0x2E]))
        try await s.connect(to: tags[0])
        #expect(
            try await v.readSingleBlock(requestFlags: [.highDataRate], blockNumber: 0)
                == Data([0xE1, 0x40, 0x0D, 0x00]))
        let info = try await v.systemInfo(requestFlags: [.highDataRate])
        #expect(info.blockSize == 4 && info.totalBlocks == 28 && info.icReference == 1)
        let two = try await v.readMultipleBlocks(
            requestFlags: [.highDataRate], blockRange: NSRange(location: 0, length: 2))
        #expect(two.count == 2 && two[0] == Data([0xE1, 0x40, 0x0D, 0x00]))
        do {
            _ = try await v.readSingleBlock(requestFlags: [.highDataRate], blockNumber: 40)
            Issue.record("read past the memory")
        } catch let e as NFCReaderError {
            #expect(e.code == .readerTransceiveErrorTagResponseError)
            #expect(e.userInfo[NFCISO15693TagResponseErrorKey] as? Int == 0x10)
        }
        let (flags, data) = try await v.sendRequest(requestFlags: 0x02, commandCode: 0x2B, data: nil)
        #expect(flags.isEmpty && data?.count == 14)
        let message = try await v.readNDEF()
        #expect(message.records.count == 1)
        s.invalidate()
    }

    @Test("An NDEF session reads the Lite-S and the SLIX (204 after the first read)")
    func ndefSessions() async throws {
        for name in ["felica-lite-s-uri.json", "icode-slix-text.json", "st25tv-uri.json"] {
            let rig = Rig([("t", try Self.tag(name))], systemCodes: [], embedded: true)
            let d = Seen()
            let s = NFCNDEFReaderSession(delegate: d, queue: nil, invalidateAfterFirstRead: true, system: rig.system)
            s.begin()
            try #require(rig.loop).run()
            #expect(d.all == ["active", "ndef:1", "end:204"], "\(name)")
            #expect(d.messages.withLock { $0.first?.records.count } == 1, "\(name)")
        }
    }
}
