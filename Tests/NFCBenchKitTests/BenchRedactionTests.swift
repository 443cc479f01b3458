import NFCBenchKit
import ReaderSession
import Testing

/// What `--redact` shows in place of a tag's UID and content (``BenchRedaction``), pure.
@Suite("--redact's text: UIDs in every spelling, APDUs and frames with their content hidden")
struct BenchRedactionTests {
    static let uid: [UInt8] = [0x04, 0xA2, 0x3B, 0x91, 0x5C, 0x6E, 0x80]

    @Test(
        "scrub replaces a UID run together, spaced, with colons or dashes, in either case",
        arguments: ["04A23B915C6E80", "04 A2 3B 91 5C 6E 80", "04:a2:3b:91:5c:6e:80", "04-A2-3B-91-5C-6E-80"])
    func scrub(spelling: String) {
        #expect(BenchRedaction.scrub("UID is \(spelling).", [Self.uid]) == "UID is redacted:7 bytes.")
    }

    @Test("APDUs keep CLA INS P1 P2, Lc and Le and the status word; data fields become their length")
    func apdus() {
        #expect(BenchRedaction.commandAPDU([0x00, 0xB0, 0x00, 0x00, 0x0F]) == "00 B0 00 00 0F")
        #expect(
            BenchRedaction.commandAPDU([0x00, 0xD6, 0x00, 0x02, 0x03, 0x61, 0x62, 0x63])
                == "00 D6 00 02 03 redacted:3 bytes")
        #expect(
            BenchRedaction.commandAPDU([0x00, 0xA4, 0x04, 0x00, 0x02, 0xD2, 0x76, 0x00])
                == "00 A4 04 00 02 redacted:2 bytes 00")
        #expect(BenchRedaction.responseAPDU([0x04, 0xA2, 0x90, 0x00]) == "redacted:2 bytes 90 00")
        #expect(BenchRedaction.responseAPDU([0x6A, 0x82]) == "6A 82")
    }

    @Test("A Type 2 WRITE keeps its code and page; PWD_AUTH only its code; a READ stays whole")
    func frames() {
        #expect(BenchRedaction.frame([0xA2, 0x04, 0x03, 0x0F, 0xD1, 0x01]) == "A2 04 redacted:4 bytes")
        #expect(BenchRedaction.frame([0x1B, 0xFF, 0xFF, 0xFF, 0xFF]) == "1B redacted:4 bytes")
        #expect(BenchRedaction.frame([0x30, 0x04]) == "30 04")
    }

    @Test("poll's departure line and JSON under --redact: the UID's length, not the UID")
    func pollDeparture() {
        let t = DetectedTarget(id: DetectedTargetID(1), kind: .type2, uid: Self.uid, atqa: [0x44, 0x00], sak: 0)
        let left = PollReport.departure(t, arrivedAt: .zero, at: .seconds(2), redact: true)
        #expect(left.line == "- 2.000s UID redacted:7 bytes left (in the field 2.000s)")
        #expect(left.json["uid"]?.stringValue == "redacted:7 bytes")
        let arrived = PollReport.arrival(t, at: .zero, redact: true)
        #expect(arrived.line == "+ 0.000s ISO14443A UID redacted:7 bytes ATQA 0044 SAK 00 (Type 2)")
        #expect(arrived.json["uid"]?.stringValue == "redacted:7 bytes")
        #expect(PollReport.departure(t, arrivedAt: .zero, at: .zero).line.contains("04A23B915C6E80"))
    }
}
