import Foundation
import NFCBenchTestSupport
import NFCTags
import ReaderSession
import Testing

/// A reader that carries only READ, WRITE and GET_VERSION (a PC/SC reader without a
/// transparent exchange): the protocol's own `transceive`, which refuses any other frame.
private struct CommandsOnly: Type2TagTransport {
    let base: EmulatedType2Transport
    func read(page: UInt8) throws -> [UInt8] { try base.read(page: page) }
    func write(page: UInt8, data: [UInt8]) throws { try base.write(page: page, data: data) }
    func getVersion() throws -> [UInt8]? { try base.getVersion() }
    func reactivate() throws { try base.reactivate() }
}

@Suite("The iPhone's Type 2 discovery probe, step by step (Type2DiscoveryProbe)")
struct Type2ProbeLogicTests {
    static func core(_ name: String) throws -> FaultyType2Core {
        let url = TestPaths.tags.appendingPathComponent("\(name).json")
        let file = try TagFile.parse(bytes: Array(try Data(contentsOf: url)), file: name)
        return FaultyType2Core(core: try file.makeCore(), faults: file.faults)
    }

    @Test("The trace's timings sum to 692.428 ms (the trace: 692.427 ms from the first READ 02 to the last HLTA)")
    func traceDuration() {
        #expect(Type2DiscoveryProbe.traceDuration == .microseconds(692_428))
    }

    @Test("The message's READs go from page 8 as far as the NDEF TLV reaches, within the CC's data area")
    func ndefReads() {
        // The trace's tag: CC E1 10 12, TLV 03 43 at page 4 → pages 4-21: READ 08 0C 10 14.
        let page4: [UInt8] = [0x03, 0x43] + [UInt8](repeating: 0, count: 14)
        #expect(Type2DiscoveryProbe.ndefReadPages(cc: [0xE1, 0x10, 0x12, 0x00], page4: page4) == [8, 12, 16, 20])
        // A Lock Control TLV first (NTAG213's), then a 3-byte message: all within page 4-7.
        let locked: [UInt8] = [0x01, 0x03, 0xA0, 0x0C, 0x34, 0x03, 0x03, 0xD0, 0x00, 0x00, 0xFE] + [0, 0, 0, 0, 0]
        #expect(Type2DiscoveryProbe.ndefReadPages(cc: [0xE1, 0x10, 0x12, 0x00], page4: locked) == [])
        // A long message on a small tag stops at the CC's data area (Ultralight: 48 bytes, pages 4-15).
        let long: [UInt8] = [0x03, 0xFE] + [UInt8](repeating: 0, count: 14)
        #expect(Type2DiscoveryProbe.ndefReadPages(cc: [0xE1, 0x10, 0x06, 0x00], page4: long) == [8, 12])
    }

    @Test("A reader without a transparent exchange: the probe is skipped at 1A 00 and the tag is reported at once")
    func skippedWithoutRawFrames() throws {
        let t = CommandsOnly(base: EmulatedType2Transport(card: try Self.core("ntag215-uri")))
        let r = Type2DiscoveryProbe.run(on: t)
        #expect(r.outcomeName == "skipped")
        #expect(r.delivers)
        #expect(r.duration == .zero)
        #expect(r.reason?.contains("1A 00") == true)
        #expect(r.exchanges.map(\.step) == ["READ 02"])
    }

    @Test("Straight into the core: ntag215-uri passes, ntag215-probe-ack is unreadable at its ACK to 1A 00")
    func outcomes() throws {
        let good = Type2DiscoveryProbe.run(on: EmulatedType2Transport(card: try Self.core("ntag215-uri")))
        #expect(good.outcome == .passed)
        #expect(good.duration == .microseconds(683_299))
        let bad = Type2DiscoveryProbe.run(on: EmulatedType2Transport(card: try Self.core("ntag215-probe-ack")))
        #expect(bad.outcomeName == "unreadable")
        #expect(!bad.delivers)
        #expect(bad.exchanges.last?.answer == "ACK")
    }
}
