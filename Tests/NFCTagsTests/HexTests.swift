import NFCTags
import Testing

@Suite("Hex text")
struct HexTests {
    @Test(
        "Parses spaced, packed and mixed-case hex",
        arguments: [
            ("D2 76 00 00 85 01 01", [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01] as [UInt8]),
            ("d2760000850101", [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01]),
            ("04:a2-3B", [0x04, 0xA2, 0x3B]),
            ("", []),
        ])
    func parses(text: String, bytes: [UInt8]) {
        #expect([UInt8](hex: text) == bytes)
    }

    @Test(
        "Rejects odd digit counts, split bytes and non-hex characters",
        arguments: ["D", "D 2", "0x12", "GG", "12 3"])
    func rejects(text: String) {
        #expect([UInt8](hex: text) == nil)
    }

    @Test("Formats uppercase with an optional separator")
    func formats() {
        #expect([0x00, 0xAB, 0x5F].hexString() == "00AB5F")
        #expect([0x00, 0xAB, 0x5F].hexString(separator: " ") == "00 AB 5F")
        #expect([UInt8]().hexString(separator: ":") == "")
        #expect([0xFF].hexString(separator: ", ") == "FF")
        #expect([0x01, 0x23, 0x45].hexString(separator: ", ") == "01, 23, 45")
        let bytes: [UInt8] = [0x9F, 0x90, 0x00, 0x6A]
        #expect(bytes[1...2].hexString() == "9000", "a slice starts at its own index")
        #expect([0xD2, 0x76].hexString(separator: "é") == "D2é76", "a separator of two UTF-8 bytes")
        let all = (0...255).map { UInt8($0) }
        #expect([UInt8](hex: all.hexString()) == all, "every byte round-trips through the parser")
    }
}
