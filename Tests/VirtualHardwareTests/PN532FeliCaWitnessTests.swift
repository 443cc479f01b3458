import Foundation
import NFCBenchTestSupport
import NFCFiles
import NFCTags
import Testing
import VirtualHardware

/// libnfc's own tools read the FeliCa Lite-S through the virtual PN532 (the bytes they need:
/// shared/reference/felica-iso15693.md §6.1-6.3).
@Suite("Virtual PN532: FeliCa against libnfc's tools", .serialized)
struct PN532FeliCaWitnessTests {
    static let tagsDirectory: String = TestPaths.tags.path

    static func card(_ name: String) throws -> PN532Card {
        try PN532Card(tagFile: try TagFile.load(path: tagsDirectory + "/" + name))
    }

    static let idLine = "ID (NFCID2): 01  2e  4c  e4  45  05  5b  87  "
    static let padLine = "Parameter (PAD): 00  f1  00  00  00  01  43  00  "
    static let scLine = "System Code (SC): 12  fc  "

    @Test(
        "nfc-list lists the Lite-S at 212 and at 424 kbit/s: IDm, PMm, system code",
        .enabled(if: LibNFCTool.shouldRun("nfc-list")))
    func nfcList() async throws {
        let folder = try TestFolder("pn532-felica-list")
        defer { folder.remove() }
        let link = folder.file("pn532")
        let fake = try VirtualPN532.start(ptyPath: link)
        defer { fake.stop() }
        fake.present(try Self.card("felica-lite-s-uri.json"))
        let r = try await LibNFCTool.run("nfc-list", [], device: link)
        #expect(r.status == 0, "\(r.output)")
        #expect(!r.output.contains("ISO14443A passive target"), "a FeliCa card does not answer 14443-A: \(r.output)")
        for rate in ["212", "424"] {
            #expect(r.output.contains("1 Felica (\(rate) kbps) passive target(s) found:"), "\(r.output)")
            #expect(r.output.contains("FeliCa (\(rate) kbps) target:"), "\(r.output)")
        }
        #expect(r.output.components(separatedBy: Self.idLine).count == 3, "\(r.output)")
        #expect(r.output.components(separatedBy: Self.padLine).count == 3, "\(r.output)")
        #expect(r.output.components(separatedBy: Self.scLine).count == 3, "\(r.output)")
        // B, SR, CT, iClass and Jewel probes stay silent: nothing else is found.
        #expect(!r.output.contains("ISO14443B"), "\(r.output)")
    }

    @Test(
        "nfc-poll finds the Lite-S (InAutoPoll 11), keeps it by Request Response, and sees it leave",
        .enabled(if: LibNFCTool.shouldRun("nfc-poll")))
    func nfcPoll() async throws {
        let folder = try TestFolder("pn532-felica-poll")
        defer { folder.remove() }
        let link = folder.file("pn532")
        let fake = try VirtualPN532.start(ptyPath: link)
        defer { fake.stop() }
        fake.present(try Self.card("felica-lite-s-uri.json"))
        let start = ContinuousClock.now
        fake.schedule(removeAfter: .milliseconds(700))
        let r = try await LibNFCTool.run("nfc-poll", [], device: link)
        let took = ContinuousClock.now - start
        #expect(!r.timedOut)
        #expect(r.output.contains("FeliCa (212 kbps) target:"), "\(r.output)")
        #expect(r.output.contains(Self.idLine) && r.output.contains(Self.padLine), "\(r.output)")
        #expect(r.output.contains("Waiting for card removing...") && r.output.contains("Target Released\ndone."))
        // Released by the removal, not at once (a card ignoring Request Response would be
        // "released" immediately and the string check alone would pass).
        #expect(took >= .milliseconds(600), "released after \(took)")
    }

    @Test(
        "nfc-read-forum-tag3 -o FILE writes the 29-byte NDEF message byte for byte and checks the attribute block",
        .enabled(if: LibNFCTool.shouldRun("nfc-read-forum-tag3")))
    func readForumTag3() async throws {
        let folder = try TestFolder("pn532-felica-tag3")
        defer { folder.remove() }
        let link = folder.file("pn532")
        let fake = try VirtualPN532.start(ptyPath: link)
        defer { fake.stop() }
        fake.present(try Self.card("felica-lite-s-uri.json"))
        let out = folder.file("ndef.bin")
        let r = try await LibNFCTool.run("nfc-read-forum-tag3", ["-o", out], device: link)
        #expect(r.status == 0, "\(r.output)")
        for line in [
            "* Mapping version: 1.0", "* Maximum nr of blocks to read  by Check  Command:   4 blocks",
            "* Maximum nr of blocks available for NDEF data:     13 blocks (208 bytes)",
            "* NDEF Access Attribute: Read/Write (0x01)", "* NDEF message length: 29 bytes", "* Checksum: ok (0x0040)",
            "29 bytes written to",
        ] {
            #expect(r.output.contains(line), "\(line): \(r.output)")
        }
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out)))
        #expect(bytes == [0xD1, 0x01, 0x19, 0x55, 0x04] + Array("example.com/nfcbench/t3t".utf8))
    }

    @Test(
        "nfc-read-forum-tag3 finds no Type 3 tag on the transit card (no system 12FC)",
        .enabled(if: LibNFCTool.shouldRun("nfc-read-forum-tag3")))
    func readForumTag3Transit() async throws {
        let folder = try TestFolder("pn532-felica-transit")
        defer { folder.remove() }
        let link = folder.file("pn532")
        let fake = try VirtualPN532.start(ptyPath: link)
        defer { fake.stop() }
        fake.present(try Self.card("felica-standard-transit.json"))
        let r = try await LibNFCTool.run("nfc-read-forum-tag3", ["-o", folder.file("x.bin")], device: link)
        // Its first Polling (FFFF) finds system 0003; the re-poll of 12FC finds nothing (a
        // card stays silent for a system it lacks), which the tool reports through nfc_perror
        // (utils/nfc-read-forum-tag3.c) and exits 1: it reads nothing.
        #expect(r.status == 1, "\(r.output)")
        #expect(r.output.contains("nfc_initiator_select_passive_target"), "\(r.output)")
        #expect(!r.output.contains("NDEF Attribute Block"), "\(r.output)")
    }

    @Test("An ISO 15693 file cannot go on a PN532: refused with the reason")
    func noISO15693() throws {
        do {
            _ = try Self.card("icode-slix-text.json")
            Issue.record("a PN532 took an ISO 15693 tag")
        } catch { #expect("\(error)".contains("ISO 15693"), "\(error)") }
    }
}
