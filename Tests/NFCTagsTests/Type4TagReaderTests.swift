import NFCBenchTestSupport
import NFCTags
import Testing

private func h(_ s: String) -> [UInt8] { [UInt8](hex: s) ?? [] }
private func message(_ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) } }

/// An in-memory ISO-DEP link: C-APDUs go straight into an emulation core (or a closure),
/// with a log and an optional loss of the tag after a number of exchanges.
final class LoopbackTransport: APDUTransport {
    var tag: Type4NDEFApplication
    var log: [[UInt8]] = []
    var loseTagAfter: Int? = nil
    var override: (([UInt8]) throws -> [UInt8])? = nil

    init(_ tag: Type4NDEFApplication) { self.tag = tag }

    func transmit(_ command: [UInt8]) throws -> [UInt8] {
        if let n = loseTagAfter, log.count >= n { throw TagCommunicationError.tagLost }
        log.append(command)
        if let override { return try override(command) }
        return tag.respond(to: command)
    }
}

struct OtherFailure: Error {}

@Suite("Type 4 Tag reader procedures against the emulation core")
struct Type4TagReaderTests {
    @Test("Reads a mapping 2.0 tag with the T4T command sequence")
    func readV2() throws {
        let msg = message(100)
        let link = LoopbackTransport(try Type4NDEFApplication(ndefMessage: msg))
        let reader = Type4TagReader(transport: link)
        #expect(try reader.readNDEF() == msg)
        #expect(
            link.log == [
                h("00 A4 04 00 07 D2 76 00 00 85 01 01 00"), h("00 A4 00 0C 02 E1 03"), h("00 B0 00 00 0F"),
                h("00 A4 00 0C 02 E1 04"), h("00 B0 00 00 02"), h("00 B0 00 02 64"),
            ])
    }

    @Test("Detection returns the CC as the tag states it")
    func detectV2() throws {
        let link = LoopbackTransport(
            try Type4NDEFApplication(
                ndefMessage: [], maximumFileSize: 0x0800,
                maximumReadLength: 0x3B, maximumWriteLength: 0x34, fileID: 0xE105))
        let cc = try Type4TagReader(transport: link).detect()
        #expect(cc.ccLength == 15 && cc.mappingVersion == 0x20 && !cc.isExtendedFile)
        #expect(cc.maximumReadLength == 0x3B && cc.maximumWriteLength == 0x34)
        #expect(cc.ndefFileID == 0xE105 && cc.maximumNDEFFileSize == 0x0800 && cc.maximumNDEFMessageSize == 0x07FE)
        #expect(cc.isReadable && cc.isWritable)
        #expect(cc.bytes == h("00 0F 20 00 3B 00 34 04 06 E1 05 08 00 00 00"))
    }

    @Test("Takes the NDEF file id from the CC, not E104")
    func fileIDFromTLV() throws {
        let msg = message(10)
        let link = LoopbackTransport(try Type4NDEFApplication(ndefMessage: msg, fileID: 0x0001))
        #expect(try Type4TagReader(transport: link).readNDEF() == msg)
        #expect(link.log.contains(h("00 A4 00 0C 02 00 01")))
        #expect(!link.log.contains(h("00 A4 00 0C 02 E1 04")))
    }

    @Test("Writes NLEN 0, the message in MLc chunks, then NLEN")
    func writeV2() throws {
        let msg = message(600)
        let link = LoopbackTransport(try Type4NDEFApplication(ndefMessage: message(5), maximumWriteLength: 0x3B))
        try Type4TagReader(transport: link).writeNDEF(msg)
        #expect(link.tag.ndefMessage == msg)
        let updates = link.log.filter { $0[1] == 0xD6 }
        #expect(updates.first == h("00 D6 00 00 02 00 00"))
        #expect(updates.last == h("00 D6 00 00 02 02 58"))
        #expect(updates.count == 2 + 11)  // ceil(600 / 59) data chunks
        #expect(updates.dropFirst().dropLast().allSatisfy { $0[4] <= 0x3B })
        #expect(try Type4TagReader(transport: link).readNDEF() == msg)
    }

    @Test("An empty message (format) is one UPDATE BINARY: NLEN 0000, sent once")
    func formatIsOneUpdate() throws {
        let link = LoopbackTransport(try Type4NDEFApplication(ndefMessage: message(40)))
        try Type4TagReader(transport: link).writeNDEF([])
        #expect(link.log.filter { $0[1] == 0xD6 } == [h("00 D6 00 00 02 00 00")])
        #expect(link.tag.ndefMessage == [])
    }

    @Test("Refuses to write a read-only tag or a message larger than the file")
    func writeRefusals() throws {
        let ro = LoopbackTransport(try Type4NDEFApplication(ndefMessage: message(4), readOnly: true))
        let e1 = #expect(throws: Type4TagError.self) { try Type4TagReader(transport: ro).writeNDEF(message(3)) }
        #expect(e1?.code == .readOnly)
        #expect(!ro.log.contains { $0[1] == 0xD6 })
        let small = LoopbackTransport(try Type4NDEFApplication(ndefMessage: [], maximumFileSize: 64))
        #expect(try Type4TagReader(transport: small).maximumNDEFMessageSize() == 62)
        let e2 = #expect(throws: Type4TagError.self) { try Type4TagReader(transport: small).writeNDEF(message(63)) }
        #expect(e2?.code == .messageTooLarge)
    }

    @Test("Reads past 7FFF of a > 32 KiB mapping 3.0 file with READ BINARY ODO")
    func odoReadV3() throws {
        let msg = message(40_000)
        let link = LoopbackTransport(
            try Type4NDEFApplication(ndefMessage: msg, maximumFileSize: 0xF000, mappingVersion: 0x30))
        #expect(try Type4TagReader(transport: link).readNDEF() == msg)
        let plain = link.log.filter { $0[1] == 0xB0 }
        #expect(plain.allSatisfy { Int($0[2]) << 8 | Int($0[3]) <= 0x7FFF })
        // Chunks of 255 from offset 2: the first beyond 7FFF starts at 2 + 129 * 255 = 0x8081,
        // asking 252 data bytes + the 3-byte `53 81 FC` header.
        #expect(link.log.first { $0[1] == 0xB1 } == h("00 B1 00 00 05 54 03 00 80 81 FF"))
    }

    @Test("Reads and writes an ENDEF file (4-byte ENLEN) larger than 64 KiB")
    func endef() throws {
        let msg = message(70_000)
        let link = LoopbackTransport(
            try Type4NDEFApplication(ndefMessage: [], maximumFileSize: 80_000, mappingVersion: 0x30))
        let reader = Type4TagReader(transport: link, allowsExtendedLength: true)
        let cc = try reader.detect()
        #expect(cc.isExtendedFile && cc.ccLength == 17 && cc.maximumNDEFMessageSize == 79_996)
        try reader.writeNDEF(msg)
        #expect(link.tag.ndefMessage == msg)
        #expect(Array(link.tag.ndefFile.prefix(4)) == h("00 01 11 70"))
        #expect(try reader.readNDEF() == msg)
    }

    @Test("Assembles a message from a tag that answers one byte per READ BINARY")
    func oneByteReads() throws {
        let msg = message(20)
        let cc = h("00 0F 20 00 0F 00 0F 04 06 E1 04 00 40 00 00")
        let file = [0x00, 0x14] + msg + [UInt8](repeating: 0, count: 64 - 22)
        let link = LoopbackTransport(
            Type4NDEFApplication(
                rawCapabilityContainer: cc, ndefFileID: 0xE104, ndefFile: file, maximumReadLength: 1))
        link.tag.reportsEndOfFile = true
        #expect(try Type4TagReader(transport: link).readNDEF() == msg)
        #expect(link.log.filter { $0[1] == 0xB0 }.count == 15 + 2 + 20)
    }

    @Test(
        "Rejects CCs that break the T4T rules",
        arguments: [
            ("00 0F 20 00 01 00 FF 04 06 E1 04 08 00 00 00", Type4TagError.Code.ccInvalid),  // MLe 1
            ("00 0E 20 00 FF 00 FF 04 06 E1 04 08 00 00 00", .ccInvalid),  // CCLEN 14
            ("00 0F 20 00 FF 00 00 04 06 E1 04 08 00 00 00", .ccInvalid),  // MLc 0
            ("00 0F 20 00 FF 00 FF 05 06 E1 04 08 00 00 00", .ccInvalid),  // not a File Control TLV
            ("00 0F 20 00 FF 00 FF 04 06 E1 03 08 00 00 00", .ccInvalid),  // reserved file id
            ("00 0F 20 00 FF 00 FF 04 06 E1 04 00 04 00 00", .ccInvalid),  // max size 4
            // Major 4 (1.0 is read: Type4Mapping10Tests).
            ("00 0F 40 00 FF 00 FF 04 06 E1 04 08 00 00 00", .unsupportedVersion(0x40)),
            ("00 11 20 00 FF 00 FF 06 08 E1 04 00 01 00 00 00 00", .ccInvalid),  // ENDEF in 2.0
            ("00 0F 30 00 FF 00 FF 06 08 E1 04 00 01 00 00 00 00", .ccInvalid),  // CCLEN short of the ENDEF TLV
        ])
    func invalidCC(cc: String, code: Type4TagError.Code) {
        let link = LoopbackTransport(
            Type4NDEFApplication(
                rawCapabilityContainer: h(cc), ndefFileID: 0xE104, ndefFile: [0, 0, 0, 0, 0], mappingVersion: 0x30))
        let e = #expect(throws: Type4TagError.self) { try Type4TagReader(transport: link).detect() }
        #expect(e?.code == code)
    }

    @Test("NLEN beyond the CC's max size is refused before any read past it")
    func nlenBeyondFile() throws {
        let cc = h("00 0F 20 00 FF 00 FF 04 06 E1 04 00 40 00 00")  // max file 64: NLEN ≤ 62
        let link = LoopbackTransport(
            Type4NDEFApplication(
                rawCapabilityContainer: cc, ndefFileID: 0xE104, ndefFile: [0x00, 0x3F] + message(62)))
        let e = #expect(throws: Type4TagError.self) { try Type4TagReader(transport: link).readNDEF() }
        #expect(e?.code == .lengthOutOfRange)
        #expect(link.log.last == h("00 B0 00 00 02"))
    }

    @Test("A CC that claims a larger file than the tag has ends in the tag's status, not a crash")
    func ccLiesAboutSize() throws {
        let cc = h("00 0F 20 00 FF 00 FF 04 06 E1 04 08 00 00 00")  // claims 2048 bytes
        // NLEN 500, 100-byte file
        let link = LoopbackTransport(
            Type4NDEFApplication(
                rawCapabilityContainer: cc, ndefFileID: 0xE104, ndefFile: [0x01, 0xF4] + message(98)))
        let e = #expect(throws: Type4TagError.self) { try Type4TagReader(transport: link).readNDEF() }
        #expect(e?.code == .unexpectedStatus(.wrongP1P2))
    }

    @Test("Something that is not a Type 4 Tag gives applicationNotFound")
    func notType4() throws {
        let link = LoopbackTransport(try Type4NDEFApplication(ndefMessage: []))
        link.override = { _ in StatusWord.fileNotFound.bytes }
        let e = #expect(throws: Type4TagError.self) { try Type4TagReader(transport: link).detect() }
        #expect(e?.code == .applicationNotFound)
        #expect(link.log.count == 2)  // the 2.0 name, then the 1.0 name (T4T 2.0 §5.5)
    }

    @Test("A tag lost mid-read gives communication(.tagLost)")
    func tagLostMidRead() throws {
        let link = LoopbackTransport(try Type4NDEFApplication(ndefMessage: message(1000)))
        link.loseTagAfter = 7
        #expect(throws: Type4TagError.communication(.tagLost)) { try Type4TagReader(transport: link).readNDEF() }
    }

    @Test("A tag lost mid-write leaves NLEN 0, not a torn message")
    func tagLostMidWrite() throws {
        let link = LoopbackTransport(try Type4NDEFApplication(ndefMessage: message(30)))
        link.loseTagAfter = 7  // SELECT app, SELECT CC, READ CC, SELECT NDEF, NLEN 0, two 255-byte chunks
        #expect(throws: Type4TagError.communication(.tagLost)) {
            try Type4TagReader(transport: link).writeNDEF(message(600))
        }
        #expect(link.tag.ndefMessage == [])
    }

    @Test("Carrier errors and answers without SW1 SW2 map to communication errors")
    func otherFailures() throws {
        let link = LoopbackTransport(try Type4NDEFApplication(ndefMessage: []))
        link.override = { _ in throw OtherFailure() }
        let e1 = #expect(throws: Type4TagError.self) { try Type4TagReader(transport: link).detect() }
        try #require(
            matches { if case .communication(.readerFailure) = e1?.code { true } else { false } },
            "expected readerFailure, got \(String(describing: e1))")
        link.override = { _ in [0x90] }
        let e2 = #expect(throws: Type4TagError.self) { try Type4TagReader(transport: link).detect() }
        try #require(
            matches { if case .communication(.malformedResponse) = e2?.code { true } else { false } },
            "expected malformedResponse, got \(String(describing: e2))")
    }

    @Test(
        "A card declaring an ENDEF file of FFFFFFFE bytes and answering every READ: ENLEN over 1 MiB is refused before the message is read"
    )
    func hostileENLEN() throws {
        // CC: mapping 3.0, MLe FFFF, ENDEF TLV for E104 with FFFFFFFE bytes; every READ of the
        // NDEF file answers 11s, so ENLEN reads 11111111 (286 MB).
        let cc = h("00 11 30 FF FF 00 FF 06 08 E1 04 FF FF FF FE 00 00")
        let link = LoopbackTransport(try Type4NDEFApplication(ndefMessage: []))
        nonisolated(unsafe) var file: UInt16 = 0
        link.override = { c in
            switch (c[1], c.count > 6 ? Array(c[5...6]) : []) {
            case (0xA4, [0xE1, 0x03]): file = 0xE103
            case (0xA4, [0xE1, 0x04]): file = 0xE104
            case (0xA4, _): break
            default:
                let le = c.count == 5 ? Int(c[4]) : 256
                let offset = min(cc.count, Int(c[2]) << 8 | Int(c[3]))
                return (file == 0xE103 ? Array(cc[offset...].prefix(le)) : [UInt8](repeating: 0x11, count: le))
                    + [0x90, 0x00]
            }
            return [0x90, 0x00]
        }
        let reader = Type4TagReader(transport: link)
        let e = #expect(throws: Type4TagError.self) { try reader.readNDEF() }
        #expect(e?.code == .lengthOutOfRange, "\(String(describing: e))")
        #expect(e?.description.contains("reader's limit of 1048576 bytes") == true, "\(String(describing: e))")
        #expect(link.log.count < 10, "refused before reading the message: \(link.log.count) exchanges")
        // A smaller limit of the caller's own applies the same way.
        var small = Type4TagReader(transport: link)
        small.maximumMessageBytes = 100
        #expect(small.maximumMessageBytes == 100)
    }
}

/// A loopback that says it carries extended-length APDUs (a PC/SC reader announcing
/// `dwMaxAPDUDataSize`).
final class ExtendedLoopback: APDUTransport {
    let inner: LoopbackTransport
    let maximumResponseLength: Int
    init(_ tag: Type4NDEFApplication, maximumResponseLength: Int) {
        inner = LoopbackTransport(tag)
        self.maximumResponseLength = maximumResponseLength
    }
    func transmit(_ command: [UInt8]) throws -> [UInt8] { try inner.transmit(command) }
}

@Suite("Type 4 reads with the largest Le the CC and the reader allow")
struct Type4LargestLeTests {
    @Test(
        "MLe 1000h: a short-APDU reader reads 256 bytes at a time, an extended-length one all 3000 in one READ BINARY")
    func largestLe() throws {
        let msg = message(3000)
        let tag = { try Type4NDEFApplication(ndefMessage: msg, maximumFileSize: 0x1000, maximumReadLength: 0x1000) }
        let short = LoopbackTransport(try tag())
        #expect(try Type4TagReader(transport: short).readNDEF() == msg)
        #expect(short.log.filter { $0[1] == 0xB0 }.count == 2 + 12)  // CC, NLEN, then ⌈3000 / 256⌉
        let long = ExtendedLoopback(try tag(), maximumResponseLength: 65536)
        #expect(try Type4TagReader(transport: long).readNDEF() == msg)
        let reads = long.inner.log.filter { $0[1] == 0xB0 }
        #expect(reads.count == 3)
        #expect(reads.last == h("00 B0 00 02 00 0B B8"))  // extended Le 0BB8 = 3000
    }

    @Test("MLe FFh keeps every reader at 255 bytes a READ BINARY")
    func mleBounds() throws {
        let msg = message(600)
        let long = ExtendedLoopback(try Type4NDEFApplication(ndefMessage: msg), maximumResponseLength: 65536)
        #expect(try Type4TagReader(transport: long).readNDEF() == msg)
        #expect(long.inner.log.filter { $0[1] == 0xB0 }.dropFirst(2).map { $0.last } == [0xFF, 0xFF, 0x5A])
    }
}
