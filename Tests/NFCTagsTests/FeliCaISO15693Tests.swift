import Foundation
import NFCBenchTestSupport
import NFCFiles
import NFCTags
import Testing

/// The FeliCa (Type 3) and ISO 15693 (Type 5) cores and reader procedures, pure, with the
/// shipped tag files and the byte vectors of shared/reference/felica-iso15693.md.
@Suite("FeliCa / Type 3 and ISO 15693 / Type 5: cores, procedures, tag files")
struct FeliCaISO15693Tests {
    static let tagsDirectory: String = TestPaths.tags.path

    func load(_ name: String) throws -> TagFile { try TagFile.load(path: Self.tagsDirectory + "/" + name) }

    func feliCa(_ name: String) throws -> EmulatedFeliCaTransport {
        let file = try load(name)
        return EmulatedFeliCaTransport(card: FaultyFeliCaCore(core: try #require(file.feliCa), faults: file.faults))
    }

    func iso15693(_ name: String) throws -> EmulatedISO15693Transport {
        let file = try load(name)
        return EmulatedISO15693Transport(
            card: FaultyISO15693Core(core: try #require(file.iso15693), faults: file.faults))
    }

    static let idm: [UInt8] = [0x01, 0x2E, 0x4C, 0xE4, 0x45, 0x05, 0x5B, 0x87]
    static let pmm: [UInt8] = [0x00, 0xF1, 0x00, 0x00, 0x00, 0x01, 0x43, 0x00]
    static let t3tURI: [UInt8] = [0xD1, 0x01, 0x19, 0x55, 0x04] + Array("example.com/nfcbench/t3t".utf8)

    @Test(
        "Polling: wildcard and 12FC answer with IDm, PMm (and the system code for Request Code 01); another system is silence"
    )
    func polling() throws {
        let t = try feliCa("felica-lite-s-uri.json")
        #expect(try t.exchange([0x06, 0x00, 0xFF, 0xFF, 0x00, 0x00]) == [0x12, 0x01] + Self.idm + Self.pmm)
        #expect(
            try t.exchange([0x06, 0x00, 0xFF, 0xFF, 0x01, 0x00]) == [0x14, 0x01] + Self.idm + Self.pmm + [0x12, 0xFC])
        #expect(try t.exchange([0x06, 0x00, 0x12, 0xFF, 0x01, 0x00]).count == 20)
        #expect(throws: TagCommunicationError.noResponse) { try t.exchange([0x06, 0x00, 0x00, 0x03, 0x01, 0x00]) }
        // Request Response (libnfc's presence check): mode 00.
        #expect(try t.exchange([0x0A, 0x04] + Self.idm) == [0x0B, 0x05] + Self.idm + [0x00])
        // Another IDm: silence.
        #expect(throws: TagCommunicationError.noResponse) {
            try t.exchange([0x0A, 0x04] + [UInt8](repeating: 1, count: 8))
        }
    }

    @Test("Check of block 0 answers the reference's bytes; errors are in the status flags (A2, A6, A8)")
    func check() throws {
        let t = try feliCa("felica-lite-s-uri.json")
        let attr: [UInt8] = [
            0x10, 0x04, 0x01, 0x00, 0x0D, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x1D, 0x00, 0x40,
        ]
        // nfc-read-forum-tag3's first Check (reference §6.3).
        #expect(
            try t.exchange([0x10, 0x06] + Self.idm + [0x01, 0x0B, 0x00, 0x01, 0x80, 0x00])
                == [0x1D, 0x07] + Self.idm + [0x00, 0x00, 0x01] + attr)
        // Five blocks at once: more than the Lite-S's 4.
        let five =
            [0x06] + Self.idm + [0x01, 0x0B, 0x00, 0x05, 0x80, 0x01, 0x80, 0x02, 0x80, 0x03, 0x80, 0x04, 0x80, 0x05]
        #expect(try t.exchange([UInt8(five.count + 1)] + five).suffix(2) == [0xFF, 0xA2])
        // An unknown service; a block past the memory.
        let svc = [0x06] + Self.idm + [0x01, 0x0F, 0x09, 0x01, 0x80, 0x00]
        #expect(try t.exchange([UInt8(svc.count + 1)] + svc).suffix(2) == [0x01, 0xA6])
        let far = [0x06] + Self.idm + [0x01, 0x0B, 0x00, 0x01, 0x80, 0x40]
        #expect(try t.exchange([UInt8(far.count + 1)] + far).suffix(2) == [0x01, 0xA8])
        // Update through the read-only service 000B is refused.
        let ro = [0x08] + Self.idm + [0x01, 0x0B, 0x00, 0x01, 0x80, 0x01] + [UInt8](repeating: 0, count: 16)
        #expect(try t.exchange([UInt8(ro.count + 1)] + ro).suffix(2) == [0x01, 0xA6])
    }

    @Test("nfcpy's vectors: attribute block checksum, block-list elements")
    func nfcpyVectors() throws {
        let a = try Type3AttributeInformation(block: [
            0x10, 0x01, 0x01, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x10, 0x00, 0x28,
        ])
        #expect(a.length == 16 && a.nbr == 1 && a.nmaxb == 5 && a.isWritable)
        #expect(a.bytes.suffix(2) == [0x00, 0x28])
        #expect(throws: Type3TagError(.checksumMismatch(stored: 0x29, computed: 0x28))) {
            try Type3AttributeInformation(block: [
                0x10, 0x01, 0x01, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x10, 0x00, 0x29,
            ])
        }
    }

    @Test("Type 3 read of felica-lite-s-uri.json: the URI; write then read back, in the WriteF order")
    func type3ReadWrite() throws {
        let t = try feliCa("felica-lite-s-uri.json")
        let reader = Type3TagReader(transport: t)
        #expect(try reader.readNDEF() == Self.t3tURI)
        let message = [0xD1, 0x01, 0x2A, 0x55, 0x04] + Array("example.com/a/longer/message/for/type/3/".utf8) + [0x41]
        try reader.writeNDEF(message)
        #expect(try reader.readNDEF() == message)
        let a = try reader.readAttribute().attribute
        #expect(a.length == message.count && a.writeFlag == 0)
        // Too long: Nmaxb 13 × 16 = 208 bytes.
        #expect(throws: Type3TagError(.messageTooLong(length: 209, maximum: 208))) {
            try reader.writeNDEF([UInt8](repeating: 0, count: 209))
        }
        #expect(try Type3TagReader(transport: try feliCa("felica-lite-s-blank.json")).readNDEF().isEmpty)
    }

    @Test("The transit card has no NDEF system (noNDEF); its history blocks read through service 090F")
    func transit() throws {
        let t = try feliCa("felica-standard-transit.json")
        #expect(throws: Type3TagError(.noNDEF)) { try Type3TagReader(transport: t).readNDEF() }
        let poll = try t.exchange([0x06, 0x00, 0x00, 0x03, 0x01, 0x00])
        let idm = Array(poll[2..<10])
        let check = [0x06] + idm + [0x01, 0x0F, 0x09, 0x02, 0x80, 0x00, 0x80, 0x01]
        let r = try t.exchange([UInt8(check.count + 1)] + check)
        #expect(r[10] == 0x00 && r.count == 13 + 32)
        #expect(try t.exchange([0x0A, 0x0C] + idm) == [0x0D, 0x0D] + idm + [0x01, 0x00, 0x03])
    }

    @Test("A fault on block 1 loses the Lite-S once per load")
    func feliCaFault() throws {
        let t = try feliCa("felica-lite-s-flaky.json")
        #expect(throws: Type3TagError(.communication(.tagLost))) { try Type3TagReader(transport: t).readNDEF() }
        var again = t.card
        again.enterField()
        #expect(try Type3TagReader(transport: EmulatedFeliCaTransport(card: again)).readNDEF() == Self.t3tURI)
    }

    @Test("ISO 15693: Inventory, GET SYSTEM INFO as a real SLIX answers it, READ SINGLE with the option flag, errors")
    func iso15693Core() throws {
        let t = try iso15693("icode-slix-text.json")
        let uidOnAir: [UInt8] = [0x2E, 0x98, 0x5C, 0x8A, 0x00, 0x01, 0x04, 0xE0]
        #expect(try t.request([0x26, 0x01, 0x00]) == [0x00, 0x00] + uidOnAir)
        // NXP community 2093136 (ACR1552): 00 0F 2E 98 5C 8A 00 01 04 E0 00 00 1B 03 01.
        #expect(try t.request([0x02, 0x2B]) == [0x00, 0x0F] + uidOnAir + [0x00, 0x00, 0x1B, 0x03, 0x01])
        #expect(try t.request([0x42, 0x20, 0x00]) == [0x00, 0x00, 0xE1, 0x40, 0x0D, 0x00])
        #expect(try t.request([0x22, 0x20] + uidOnAir + [0x00]) == [0x00, 0xE1, 0x40, 0x0D, 0x00])
        #expect(throws: TagCommunicationError.noResponse) {
            try t.request([0x22, 0x20] + [UInt8](repeating: 0, count: 8) + [0])
        }
        #expect(try t.request([0x02, 0x20, 0x1C]) == [0x01, 0x10])
        #expect(try t.request([0x02, 0xA5, 0x04]) == [0x01, 0x01])
        #expect(try t.request([0x02, 0x22, 0x1B]) == [0x00])
        #expect(try t.request([0x02, 0x21, 0x1B, 1, 2, 3, 4]) == [0x01, 0x12])
    }

    @Test(
        "Type 5 read: the SLIX's text record with READ SINGLE, the ST25TV's URI with READ MULTIPLE; write then read back"
    )
    func type5ReadWrite() throws {
        let slix = try iso15693("icode-slix-text.json")
        let text = try Type5TagReader(transport: slix).readNDEF()
        let message = try NFCNDEFMessage(bytes: text)
        #expect(message.records.count == 1)
        #expect(String(decoding: text.suffix(24), as: UTF8.self) == "Hello from an ICODE SLIX")
        let st = try iso15693("st25tv-uri.json")
        let layout = try Type5TagReader(transport: st).readLayout()
        #expect(layout.capabilityContainer.supportsReadMultiple && layout.blockSize == 4)
        #expect(
            try Type5TagReader(transport: st).readNDEF() == [0xD1, 0x01, 0x19, 0x55, 0x04]
                + Array("example.com/nfcbench/t5t".utf8))
        let new = [0xD1, 0x01, 0x08, 0x55, 0x04] + Array("ab.c/xyz".utf8)
        try Type5TagReader(transport: slix).writeNDEF(new)
        #expect(try Type5TagReader(transport: slix).readNDEF() == new)
        #expect(slix.core.blocks[0] == [0xE1, 0x40, 0x0D, 0x00], "the CC is never written")
        #expect(throws: Type5TagError(.messageTooLong(length: 103, maximum: 102))) {
            try Type5TagReader(transport: slix).writeNDEF([UInt8](repeating: 0, count: 103))
        }
    }

    @Test("Tag files: every FeliCa / ISO 15693 file shows in tag show's report; bad ones are refused with the field")
    func tagFiles() throws {
        for name in ["felica-lite-s-uri.json", "felica-lite-s-blank.json", "icode-slix-text.json", "st25tv-uri.json"] {
            let r = TagReport(file: try load(name))
            #expect(r.isReadable, "\(name): \(r.text)")
        }
        let transit = TagReport(file: try load("felica-standard-transit.json"))
        #expect(transit.ndefMessageBytes == nil && transit.type3ReadError == nil)
        let wildcard =
            #"{"format": "nfcbench-tag", "version": 1, "type": "felica_lite_s", "idm": "012E4CE445055B87", "pmm": "00F1000000014300", "systems": [{"code": "12FF", "blocks": ["00000000000000000000000000000000"]}]}"#
        do {
            _ = try TagFile.parse(wildcard)
            Issue.record("a wildcard system code loaded")
        } catch { #expect(error.field?.hasPrefix("systems") == true, "\(error)") }
        let badUID =
            #"{"format": "nfcbench-tag", "version": 1, "type": "icode_slix", "uid": "04A23B915C6E8001", "block_size": 4, "blocks": ["00000000"]}"#
        do {
            _ = try TagFile.parse(badUID)
            Issue.record("a UID without E0 loaded")
        } catch { #expect(error.field == "uid") }
        let typeA =
            #"{"format": "nfcbench-tag", "version": 1, "type": "icode_slix", "uid": "E004010000000001", "atqa": "4400", "block_size": 4, "blocks": ["00000000"]}"#
        do {
            _ = try TagFile.parse(typeA)
            Issue.record("an ISO 15693 file with an ATQA loaded")
        } catch { #expect(error.field == "atqa") }
    }
}
