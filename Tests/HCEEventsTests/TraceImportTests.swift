import NFCTags
import Testing

@testable import HCEEvents

@Suite(
    "Proxmark3 trace import",
    .enabled(if: corpusRequired, "corpus not found in Tests/Fixtures/corpus (set CI=true to make this fail)"))
struct TraceImportTests {
    @Test(
        "Visa/Apple ECP trace: ECP frame, RATS/ATS, three APDUs unwrapped, chained answer joined, times from timestamps"
    )
    func visaECP() throws {
        let trace = try ProxmarkTrace(bytes: corpusBytes("pm3_hf_visa_apple_ecp.trace"))
        #expect(trace.frames.count == 34)
        #expect(trace.frames[0].timestamp == 104_314_499)
        let r = try ProxmarkProfileImporter.profile(from: trace, name: "visa", source: "test")
        let p = r.profile
        #expect(p.ecp == hex("6A02C801000300027900000000"))
        #expect(p.rats == hex("E050"))
        #expect(p.ats == hex("0578807002"))
        // RATS at 128 289 171: (128289171 - 104314499) / 13.56 = 1 768 043.66 µs.
        #expect(p.activationOffset == .microseconds(1_768_044))
        #expect(
            p.steps.map(\.apdu) == [
                hex("00A404000E325041592E5359532E444446303100"),
                hex("00A4040007A000000003101000"),
                hex(
                    "80A8000037833532804000000000000100000000000000082600000000000826211014002"
                        + "5F8439A000000000000000000000000000000000000000000"),
            ])
        // 131308035 - 104314499 = 26 993 536 periods = 1 990 673.75 µs; 132528371: 2 080 669.03.
        #expect(
            p.steps.map(\.offset) == [.microseconds(1_990_674), .microseconds(2_080_669), .microseconds(2_248_398)])
        // PPSE 90 00; Visa SELECT answered in two I-blocks (13 … then 02 … 90 00); GPO 69 86 after S(WTX).
        #expect(p.steps.map(\.expectedStatusWords) == [["9000"], ["9000"], ["6986"]])
        #expect(r.wtxRequests == 1)
        #expect(r.damagedFrames == 0)
        #expect(r.reactivations == 0)
        #expect(p.reachesISODEP)
    }

    @Test(
        "DESFire sniff: CID stripped, native commands kept, unanswered commands, R(NAK), DESELECT and the damaged frames counted"
    )
    func desfire() throws {
        let trace = try ProxmarkTrace(bytes: corpusBytes("pm3_hf_mfdes_sniff.trace"))
        let r = try ProxmarkProfileImporter.profile(from: trace, name: "desfire", source: "test")
        let p = r.profile
        #expect(p.rats == hex("E080"))
        #expect(p.ats == hex("067577810280"))
        #expect(p.steps.count == 8)
        #expect(p.steps.first?.apdu == hex("00A4040007D2760000850100"))
        #expect(p.steps.first?.expectedStatusWords == ["9000"])
        #expect(p.steps[1].apdu == hex("905A0000034F49D300"))
        #expect(p.steps[2].expectedStatusWords == ["91AF"])
        // 18613795 - 16618851 = 1 994 944 periods = 147 119.76 µs.
        #expect(p.steps.first?.offset == .microseconds(147_120))
        #expect(p.steps[6].expectedStatusWords.isEmpty)  // 90 BD … never answered
        #expect(p.steps[7].apdu == hex("905A00000300000000"))
        #expect(r.rNAKs == 2)  // BA 00 BE D9 twice (the third BA 00 has no CRC)
        #expect(r.deselects == 2)  // CA 00 twice
        #expect(r.damagedFrames == 2)  // 0A 00 50 00 57 CD (bad CRC) and BA 00
        #expect(r.reactivations == 1)
        #expect(p.ecp == nil)
    }

    @Test("A truncated record is a typed error, not a crash")
    func truncated() throws {
        let bytes = try corpusBytes("pm3_hf_mfdes_sniff.trace")
        for cut in [1, 7, 9, 19] {
            #expect(throws: ProxmarkTrace.Error.self) { try ProxmarkTrace(bytes: Array(bytes.prefix(cut))) }
        }
        #expect(throws: ProxmarkTrace.Error.empty) { try ProxmarkTrace(bytes: []) }
    }

    @Test("CRC_A of the ISO 14443-3 examples")
    func crc() {
        #expect(ProxmarkTrace.crcA([0x50, 0x00]) == [0x57, 0xCD])  // HLTA
        #expect(ProxmarkTrace.crcA([0xE0, 0x50]) == [0xBC, 0xA5])  // RATS in the ECP trace
    }
}

/// Issue 13 inputs 4 and 5: traces built by hand, frames with their CRCs written out
/// (CRC_A, CRC_B and the FeliCa CRC computed outside this code base).
@Suite("Proxmark3 trace import: technologies and answers that are not ISO 7816-4")
struct TraceImportTechnologyTests {
    /// One record per frame: timestamp 1000 × index, duration 100, parity bytes zero.
    static func trace(_ frames: [(fromTag: Bool, hex: String)]) throws -> ProxmarkTrace {
        var bytes: [UInt8] = []
        for (i, f) in frames.enumerated() {
            let b = hex(f.hex.replacingOccurrences(of: " ", with: ""))
            let ts = UInt32(1000 * i)
            let len = UInt16(b.count) | (f.fromTag ? 0x8000 : 0)
            bytes += [UInt8(ts & 0xFF), UInt8(ts >> 8 & 0xFF), UInt8(ts >> 16 & 0xFF), UInt8(ts >> 24), 100, 0]
            bytes += [UInt8(len & 0xFF), UInt8(len >> 8)] + b + [UInt8](repeating: 0, count: (b.count + 7) / 8)
        }
        return try ProxmarkTrace(bytes: bytes)
    }

    @Test("4. WUPB 05 00 08 + CRC_B and an ATQB: ISO14443B, no ISO-DEP, the ATQB noted")
    func typeB() throws {
        let r = try ProxmarkProfileImporter.profile(
            from: Self.trace([(false, "05 00 08 39 73"), (true, "50 12 34 56 78 00 00 00 00 00 71 85 EE 14")]),
            name: "b", source: "test")
        #expect(r.profile.technology == .iso14443B)
        #expect(!r.profile.reachesISODEP && r.profile.steps.isEmpty)
        #expect(r.profile.note?.contains("ATQB 50 12 34 56 78 00 00 00 00 00 71 85") == true)
        #expect(r.damagedFrames == 0)
    }

    @Test("4. REQB, ATQB, ATTRIB, then an I-block with CRC_B: ISO14443B reaching ISO-DEP, the APDU and its 90 00")
    func typeBISODEP() throws {
        let r = try ProxmarkProfileImporter.profile(
            from: Self.trace([
                (false, "05 00 00 71 FF"), (true, "50 12 34 56 78 00 00 00 00 00 71 85 EE 14"),
                (false, "1D 12 34 56 78 00 08 01 00 D8 62"), (true, "00 78 F0"),
                (false, "02 00 A4 04 00 07 A0 00 00 00 03 10 10 00 D4 2B"), (true, "02 90 00 29 6A"),
            ]), name: "b", source: "test")
        #expect(r.profile.technology == .iso14443B)
        #expect(r.profile.reachesISODEP)
        #expect(r.profile.rats == nil)
        #expect(r.profile.steps.map(\.apdu) == [hex("00A4040007A000000003101000")])
        #expect(r.profile.steps.map(\.expectedStatusWords) == [["9000"]])
        #expect(r.profile.activationOffset == .microseconds(147))  // 2000 periods / 13.56 MHz
        #expect(r.profile.note?.contains("ATTRIB 1D 12 34 56 78 00 08 01 00") == true)
    }

    @Test("4. FeliCa Polling and its answer: FeliCa, no steps")
    func felica() throws {
        let r = try ProxmarkProfileImporter.profile(
            from: Self.trace([
                (false, "06 00 FF FF 01 00 3A 10"),
                (true, "14 01 01 2E 3D 4C 5B 6A 79 88 03 01 4B 02 4F 49 93 FF 00 03 E4 A5"),
            ]), name: "f", source: "test")
        #expect(r.profile.technology == .felica)
        #expect(!r.profile.reachesISODEP && r.profile.steps.isEmpty)
        #expect(r.damagedFrames == 0)
    }

    @Test("4. WUPA and WUPB polled, nobody answered: the first polled (A), the other noted")
    func polledBoth() throws {
        let r = try ProxmarkProfileImporter.profile(
            from: Self.trace([(false, "52"), (false, "05 00 08 39 73"), (false, "52")]), name: "ab", source: "test")
        #expect(r.profile.technology == .iso14443A)
        #expect(r.profile.note?.contains("also polled with ISO14443B (1×)") == true)
    }

    @Test("4. No frame of any known technology: refused, saying why")
    func refused() throws {
        #expect(throws: ProxmarkProfileImporter.Failure.self) {
            try ProxmarkProfileImporter.profile(
                from: Self.trace([(false, "01 02 03"), (true, "04")]), name: "x", source: "test")
        }
    }

    @Test("5. Native DESFire answers (a status byte first, a MAC last) give no expect_sw; the raw answer is kept")
    func nativeAnswers() throws {
        let r = try ProxmarkProfileImporter.profile(
            from: Self.trace([
                (false, "E0 80 31 73"), (true, "06 75 77 81 02 80 02 F0"),
                // 5A 00 00 01 (native SelectApplication) → 00 (status byte only).
                (false, "02 5A 00 00 01 EF 0E"), (true, "02 00 10 2D"),
                // BD … (native ReadData) → 00, 16 data bytes, a MAC ending 90 00 (no status word).
                (false, "03 BD 01 00 00 00 10 00 00 7C CE"),
                (true, "03 00 20 21 22 23 24 25 26 27 28 29 2A 2B 2C 2D 2E 2F 12 34 90 00 E5 0C"),
                // 90 5A … (ISO-wrapped) → 91 00: a status word.
                (false, "02 90 5A 00 00 03 01 02 03 00 0A AB"), (true, "02 91 00 29 10"),
            ]), name: "desfire", source: "test")
        let steps = r.profile.steps
        #expect(steps.map(\.expectedStatusWords) == [[], [], ["9100"]])
        #expect(
            steps[0].note
                == "the card answered 00 (1 byte(s)), not an ISO 7816-4 response (1 byte(s), no room for SW1 SW2): "
                + "kept raw, no expect_sw")
        #expect(
            steps[1].note
                == "the card answered 00 20 21 22 23 24 25 26 27 28 29 2A 2B 2C 2D 2E 2F 12 34 90 00 (21 byte(s)), not an "
                + "ISO 7816-4 response (the command BD01000000100000 is not an ISO 7816-4 command APDU): kept raw, no expect_sw"
        )
        #expect(r.rawAnswers == 2)
        #expect(r.profile.note?.contains("2 answer(s) are not ISO 7816-4 responses") == true)
    }
}
