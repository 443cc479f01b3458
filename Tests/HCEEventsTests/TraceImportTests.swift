import NFCTags
import Testing

@testable import HCEEvents

@Suite(
    "Proxmark3 trace import",
    .enabled(if: corpusRequired, "shared corpus not found beside the package (set CI=true to make this fail)"))
struct TraceImportTests {
    @Test(
        "Visa/Apple ECP trace: ECP frame, RATS/ATS, three APDUs unwrapped, chained answer joined, times from timestamps"
    )
    func visaECP() throws {
        let trace = try ProxmarkTrace(bytes: corpusBytes("pm3_hf_visa_apple_ecp.trace"))
        #expect(trace.frames.count == 34)
        #expect(trace.frames[0].timestamp == 104_314_499)
        let r = ProxmarkProfileImporter.profile(from: trace, name: "visa", source: "test")
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
        let r = ProxmarkProfileImporter.profile(from: trace, name: "desfire", source: "test")
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
