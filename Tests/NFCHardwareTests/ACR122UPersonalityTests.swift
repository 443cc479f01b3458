import Foundation
import NFCHardware
import NFCTags
import ReaderFrontend
import ReaderSession
import Testing
import VirtualHardware

private func h(_ s: String) -> [UInt8] { [UInt8](hex: s.replacingOccurrences(of: " ", with: "")) ?? [] }

/// The ACR122U personality of the vpcd card, pure: the pseudo-APDUs code written for an
/// ACR122U sends, answered as the reader's firmware answers them (its PN532 inside).
@Suite("The vpcd card as an ACR122U (pure)")
struct ACR122UPersonalityTests {
    static func card(_ name: String, faults: [TagFault] = []) throws -> (TagFile, ACR122UPersonality) {
        var file = try BenchTags.load(name)
        if !faults.isEmpty { file.faults = faults }
        var p = try file.makeACR122UPersonality()
        p.enteredField()
        return (file, p)
    }

    @Test("A Type 2 tag: the part 3 ATR, FF CA the UID, FF B0 READ, FF D6 WRITE, both through the PN532")
    func type2PseudoAPDUs() throws {
        var (file, p) = try Self.card("ntag215-uri")
        #expect(p.atr == ATR.storageCard(standard: .iso14443APart3, cardName: .mifareUltralight).bytes)
        #expect(p.respond(to: h("FF CA 00 00 00")) == file.readerActivation.uid + [0x90, 0x00])
        #expect(p.respond(to: h("FF CA 01 00 00")) == [0x6A, 0x81], "a storage card has no ATS")
        #expect(p.respond(to: h("FF B0 00 04 10")) == Array(file.pages[4...7].joined()) + [0x90, 0x00])
        #expect(p.respond(to: h("FF B0 00 04 04")) == file.pages[4] + [0x90, 0x00])
        #expect(p.respond(to: h("FF D6 00 10 04 01 02 03 04")) == [0x90, 0x00])
        #expect(Array(p.respond(to: h("FF B0 00 10 04")).prefix(4)) == [1, 2, 3, 4])
        #expect(p.type2Core?.pages[0x10] == [1, 2, 3, 4])
        #expect(p.respond(to: h("FF D6 00 11 10") + [UInt8](repeating: 7, count: 16)) == [0x90, 0x00], "A0")
        #expect(p.type2Core?.pages[0x11] == [7, 7, 7, 7], "the compatibility write writes the first 4 bytes")
        #expect(p.respond(to: h("FF D6 00 00 04 00 00 00 00")) == [0x63, 0x00], "page 0 is read-only: 63 00")
        #expect(p.respond(to: h("FF C2 00 00 02 81 00 00")) == [0x63, 0x00], "no PC/SC 2.02 transparent exchange")
        #expect(p.respond(to: h("00 A4 04 00 07 D2 76 00 00 85 01 01 00")) == [0x63, 0x00], "no APDU to a Type 2")
    }

    @Test(
        "Direct transmit: GetFirmwareVersion, InCommunicateThru GET_VERSION, InDataExchange READ; the chip's refusal is 63 7F"
    )
    func directTransmit() throws {
        var (file, p) = try Self.card("ntag215-uri")
        #expect(p.respond(to: h("FF 00 00 00 02 D4 02")) == h("D5 03 32 01 06 07 90 00"))
        let version = p.respond(to: h("FF 00 00 00 03 D4 42 60"))
        #expect(version == h("D5 43 00") + (file.getVersion ?? []) + [0x90, 0x00], "\(version.hexString())")
        let read = p.respond(to: h("FF 00 00 00 05 D4 40 01 30 04"))
        #expect(read == h("D5 41 00") + Array(file.pages[4...7].joined()) + [0x90, 0x00])
        #expect(p.respond(to: h("FF 00 00 00 02 D4 FE")) == [0x63, 0x7F], "an unknown PN532 command")
        #expect(p.respond(to: h("FF 00 00 00 03 D5 02 00")) == [0x63, 0x00], "not a D4 frame")
        // The PN532's own timeout stays inside the D5 answer: READ past the end NAKs.
        #expect(Array(p.respond(to: h("FF 00 00 00 03 D4 42 30")).prefix(2)) == h("D5 43"))
    }

    @Test("Escapes: the firmware version, LED and buzzer (nfcpy's acr122 frames), the PICC parameter")
    func escapes() throws {
        var (_, p) = try Self.card("ultralight-blank")
        #expect(p.respond(to: h("FF 00 48 00 00")) == Array("ACR122U203".utf8), "no status word")
        #expect(p.respond(to: h("FF 00 40 0E 04 00 00 00 00")) == [0x90, 0x02], "green on, red off")
        #expect(p.respond(to: h("FF 00 40 0D 04 03 00 01 01")) == [0x90, 0x01], "red on, green off")
        #expect(p.respond(to: h("FF 00 40 0C 04 00 00 00 00")) == [0x90, 0x00])
        #expect(p.respond(to: h("FF 00 50 00 00")) == [0x90, 0xFF])
        #expect(p.respond(to: h("FF 00 51 7F 00")) == [0x90, 0x7F])
        #expect(p.respond(to: h("FF 00 52 00 00")) == [0x90, 0x00])
        #expect(p.respond(to: h("FF 82 00 00 06 FF FF FF FF FF FF")) == [0x90, 0x00])
        #expect(p.respond(to: h("FF 86 00 00 05 01 00 04 60 00")) == [0x63, 0x00])
    }

    @Test("A Type 4 tag: APDUs through InDataExchange (the PN532 runs T=CL), FF CA 01 the historical bytes")
    func type4() throws {
        var (file, p) = try Self.card("t4t-uri")
        #expect(p.respond(to: h("FF CA 00 00 00")) == file.readerActivation.uid + [0x90, 0x00])
        let select = p.respond(to: h("00 A4 04 00 07 D2 76 00 00 85 01 01 00"))
        #expect(select == [0x90, 0x00])
        #expect(p.respond(to: h("00 A4 00 0C 02 E1 04")) == [0x90, 0x00])
        let nlen = p.respond(to: h("00 B0 00 00 02"))
        #expect(nlen.count == 4 && nlen.suffix(2) == [0x90, 0x00])
        #expect(p.atr == (try file.makeVirtualCardPersonality()).atr, "the same part 3 ATR")
    }

    @Test(
        "Faults: no_answer is 63 00 to READ BINARY; tag_lost leaves the field; back again it is the same tag, the faults spent"
    )
    func faults() throws {
        var (_, p) = try Self.card(
            "ntag215-uri", faults: [TagFault(.pageRead(8), kind: .noAnswer), TagFault(.firstWrite, kind: .tagLost)])
        #expect(p.respond(to: h("FF B0 00 08 10")) == [0x63, 0x00], "the card timed out")
        #expect(p.respond(to: h("FF B0 00 08 10")).suffix(2) == [0x90, 0x00], "once")
        #expect(p.respond(to: h("FF D6 00 10 04 01 02 03 04")) == [0x63, 0x00])
        #expect(p.hasLeftField)
        p.enteredField()
        #expect(!p.hasLeftField)
        #expect(p.respond(to: h("FF D6 00 10 04 01 02 03 04")) == [0x90, 0x00], "the write fault is spent")
    }
}

extension PCSCVirtualBenchSuites {
    @Suite(
        "The ACR122U personality behind pcscd: the PC/SC client reads and writes through it", .serialized,
        .enabled(if: PCSCBench.enabled, "needs pcscd with the vpcd reader: run through scripts/with-pcscd"))
    struct ACR122UBenchTests {
        @Test("Type 2: detected by its ATR, GET_VERSION through the direct transmit, the NDEF read and written")
        func type2() async throws {
            let file = try BenchTags.load("ntag213-text")
            let vcard = try await PCSCFrontendBench.card(try file.makeACR122UPersonality())
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
            #expect(target.kind == .type2 && target.uid == file.readerActivation.uid)
            let new: [UInt8] = [0xD1, 0x01, 0x05, 0x54, 0x02, 0x65, 0x6E, 0x4F, 0x4B]
            let (version, message) = try await withTag(frontend, target.id) { c -> (TagVersion?, [UInt8]) in
                guard case .type2(let t) = c else { throw PCSCBenchMissing(reason: "not a Type 2 connection") }
                var reader = Type2TagReader(transport: t)
                let v = try reader.identify()
                try reader.writeNDEF(new)
                return (v, try reader.readNDEF())
            }
            #expect(version?.bytes == file.getVersion)
            #expect(message == new)
            let commands = vcard.events.compactMap { e -> [UInt8]? in
                if case .command(let c) = e.kind { c } else { nil }
            }
            #expect(commands.contains(h("FF 00 00 00 03 D4 42 60")), "GET_VERSION through the PN532")
            #expect(commands.contains { $0.starts(with: h("FF D6 00")) }, "WRITE as UPDATE BINARY")
        }
    }
}
