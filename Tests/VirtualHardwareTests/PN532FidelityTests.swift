import Foundation
import NFCBenchTestSupport
import NFCTags
import Testing
import VirtualHardware

/// libnfc's own tools (Debian libnfc-bin, libnfc-examples) against the virtual PN532.
@Suite("Virtual PN532 against libnfc's tools", .serialized)
struct PN532FidelityTests {
    @Test("nfc-list prints the UID, ATQA and SAK of the presented NTAG", .enabled(if: LibNFCTool.shouldRun("nfc-list")))
    func nfcListShowsTheTag() async throws {
        let folder = try TestFolder("pn532-list")
        defer { folder.remove() }
        let link = folder.file("pn532")
        let fake = try VirtualPN532.start(ptyPath: link)
        defer { fake.stop() }
        fake.present(try PN532TestCards.ntag215())
        let result = try await LibNFCTool.run("nfc-list", [], device: link)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("1 ISO14443A passive target(s) found"))
        #expect(result.output.contains("UID (NFCID1): 04  a1  b2  c3  d4  e5  f6"), "\(result.output)")
        #expect(result.output.contains("ATQA (SENS_RES): 00  44"))
        #expect(result.output.contains("SAK (SEL_RES): 00"))
    }
}

extension PN532FidelityTests {
    @Test("nfc-poll detects the presented NTAG and sees it leave", .enabled(if: LibNFCTool.shouldRun("nfc-poll")))
    func nfcPollDetectsTheTag() async throws {
        let folder = try TestFolder("pn532-poll")
        defer { folder.remove() }
        let link = folder.file("pn532")
        let fake = try VirtualPN532.start(ptyPath: link)
        defer { fake.stop() }
        fake.present(try PN532TestCards.ntag215())
        fake.schedule(removeAfter: .milliseconds(700))
        let result = try await LibNFCTool.run("nfc-poll", [], device: link)
        #expect(!result.timedOut)
        #expect(result.output.contains("ISO/IEC 14443A (106 kbps) target:"), "\(result.output)")
        #expect(result.output.contains("UID (NFCID1): 04  a1  b2  c3  d4  e5  f6"))
        #expect(
            result.output.contains("Waiting for card removing...") && result.output.contains("Target Released\ndone."),
            "\(result.output)")
    }

    @Test(
        "nfc-mfultralight r dumps the NTAG215 image, PWD/PACK pages aside",
        .enabled(if: LibNFCTool.shouldRun("nfc-mfultralight")))
    func nfcMfultralightDumpsTheImage() async throws {
        let folder = try TestFolder("pn532-mfu")
        defer { folder.remove() }
        let link = folder.file("pn532")
        let fake = try VirtualPN532.start(ptyPath: link)
        defer { fake.stop() }
        let pages = PN532TestNTAG215.image()
        fake.present(try PN532TestCards.ntag215(PN532TestNTAG215.core(pages: pages)))
        let dump = folder.file("dump.mfd")
        let result = try await LibNFCTool.run("nfc-mfultralight", ["r", dump], device: link)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("NTAG215"), "\(result.output)")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dump)))
        #expect(bytes.count == PN532TestNTAG215.pageCount * 4)
        let expected = (0..<PN532TestNTAG215.pageCount).flatMap { pages[$0] }
        func masked(_ b: [UInt8]) -> [UInt8] { Array(b.prefix(133 * 4)) }
        #expect(masked(bytes) == masked(expected))
    }

    @Test(
        "nfc-emulate-forum-tag4 answers the simulated reader's SELECTs and READ BINARY, then sees it leave",
        .enabled(if: LibNFCTool.shouldRun("nfc-emulate-forum-tag4")))
    func forumTag4AnswersTheReader() async throws {
        let folder = try TestFolder("pn532-tag4")
        defer { folder.remove() }
        let link = folder.file("pn532")
        let fake = try VirtualPN532.start(ptyPath: link)
        defer { fake.stop() }
        let ok: [UInt8] = [0x90, 0x00]
        fake.startReader(
            PN532ReaderScript(steps: [
                .init(command: [UInt8](hex: "00 A4 04 00 07 D2 76 00 00 85 01 01 00")!, expectedResponse: ok),
                .init(command: [UInt8](hex: "00 A4 00 0C 02 E1 03")!, expectedResponse: ok),
                .init(command: [UInt8](hex: "00 B0 00 00 0F")!),
                .init(command: [UInt8](hex: "00 A4 00 0C 02 E1 04")!, expectedResponse: ok),
                .init(command: [UInt8](hex: "00 B0 00 00 02")!),
            ]))
        let result = try await LibNFCTool.run("nfc-emulate-forum-tag4", [], device: link, timeout: .seconds(10))
        #expect(!result.timedOut, "\(result.output)")
        #expect(result.output.contains("Target Released"), "\(result.output)")
        let exchanges = fake.chip.readerExchanges
        #expect(exchanges.count == 5)
        #expect(exchanges.allSatisfy { $0.matched }, "\(exchanges)")
        // The CC file (NFC Forum T4T 2.0 §5.1): CCLEN 000F, mapping version 2.0, NDEF file E104.
        let cc = exchanges.count > 2 ? exchanges[2].response ?? [] : []
        #expect(
            cc.count == 17 && cc.prefix(3) == [0x00, 0x0F, 0x20] && cc.suffix(2) == [0x90, 0x00],
            "\(cc.hexString(separator: " "))")
        #expect(cc.count == 17 && Array(cc[9..<11]) == [0xE1, 0x04])
        #expect(fake.chip.readerFinished)
    }
}
