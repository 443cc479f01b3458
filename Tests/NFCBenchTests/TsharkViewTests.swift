import Foundation
import NFCTrace
import Testing

/// The tshark witness itself (``TsharkView``): one `-T fields` reading per file must catch
/// what the `-V` reading it replaced caught, malformed packets and missing comments, and a
/// view reused for the same bytes must never stand in for other bytes.
@Suite("TsharkView: one tshark run per file still sees malformed packets and comments")
struct TsharkViewTests {
    /// REQA, ATQA, RATS on the ISO 14443 interface.
    static func activation(comment: String?) -> [(ISO14443LinkType.Event, [UInt8], String?)] {
        [
            (.pcdToPICCCRCDropped, [0x26], comment), (.piccToPCDCRCDropped, [0x44, 0x00], nil),
            (.pcdToPICCCRCDropped, [0xE0, 0x50], nil),
        ]
    }

    static func file(_ packets: [(ISO14443LinkType.Event, [UInt8], String?)]) -> [UInt8] {
        var bytes = Pcapng.sectionHeader() + Pcapng.interfaceDescription(linkType: ISO14443LinkType.linkType)
        for (i, (event, data, comment)) in packets.enumerated() {
            bytes += Pcapng.enhancedPacket(
                timestampMicroseconds: Int64(1_000 * i), data: ISO14443LinkType.packet(event, data), comment: comment)
        }
        return bytes
    }

    static let ats: [UInt8] = [0x05, 0x78, 0x80, 0x70, 0x02]
    static let selectNDEF: [UInt8] = [
        0x02, 0x00, 0xA4, 0x04, 0x00, 0x07, 0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01, 0x00,
    ]

    @Test(
        "A truncated ATS and a truncated SELECT are malformed; a packet without a comment adds none; same bytes, same view"
    )
    func malformedAndComments() async throws {
        let dir = try TraceCLITests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        func path(_ n: String) -> String { dir.appendingPathComponent(n).path }
        // Packet 4: an ATS whose TL says 5 bytes, 2 there (ISO 14443 throws); packet 10: a
        // SELECT whose Lc says 7 bytes, 2 there (ISO 7816, reached through the decode-as).
        let bad = Self.file(
            Self.activation(comment: "REQA, said so") + [(.piccToPCDCRCDropped, [0x05, 0x78], nil)]
                + Self.activation(comment: nil) + [
                    (.piccToPCDCRCDropped, Self.ats, nil), (.pcdToPICCCRCDropped, Self.selectNDEF, "SELECT"),
                    (.pcdToPICCCRCDropped, [0x03, 0x00, 0xA4, 0x04, 0x00, 0x07, 0xD2, 0x76], nil),
                ])
        try Data(bad).write(to: URL(fileURLWithPath: path("bad.pcapng")))
        let v = try await TsharkView.view(path("bad.pcapng"))
        #expect(v.rows.count == 10, "\(v.info)")
        #expect(v.malformedFrames == ["4", "10"], "\(v.info)")
        #expect(!v.malformedFree)
        #expect(v.comments == ["REQA, said so", "SELECT"], "packets without a comment add none")
        #expect(v.rows.contains { $0["iso7816.apdu.ins"] == "0xa4" && $0["iso7816.apdu.body"] == "d2760000850101" })

        // The same bytes under another name: the view already read. Other bytes (the
        // malformed packets and the comments left out): tshark reads them, and says so.
        try Data(bad).write(to: URL(fileURLWithPath: path("copy.pcapng")))
        #expect(try await TsharkView.view(path("copy.pcapng")).rows == v.rows)
        let good = Self.file(
            Self.activation(comment: nil) + [
                (.piccToPCDCRCDropped, Self.ats, nil), (.pcdToPICCCRCDropped, Self.selectNDEF, nil),
            ])
        try Data(good).write(to: URL(fileURLWithPath: path("good.pcapng")))
        let g = try await TsharkView.view(path("good.pcapng"))
        #expect(g.rows.count == 5, "\(g.info)")
        #expect(g.malformedFree, "\(g.info)")
        #expect(g.comments.isEmpty, "\(g.comments)")
        #expect(!g.comments.contains("SELECT"), "a check for the SELECT's comment fails on this file")
    }
}
