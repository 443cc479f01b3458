import Foundation
import NFCTags
import Testing
import VirtualHardware

/// libnfc's own tools (Debian libnfc-bin, libnfc-examples) against the virtual PN532.
@Suite("Virtual PN532 against libnfc's tools", .serialized)
struct PN532FidelityTests {
    @Test("nfc-list prints the UID, ATQA and SAK of the presented NTAG", .enabled(if: LibNFCTool.shouldRun("nfc-list")))
    func nfcListShowsTheTag() throws {
        let link = pn532TestLinkPath("list")
        let fake = try VirtualPN532.start(ptyPath: link)
        defer { fake.stop() }
        fake.present(PN532TestCards.ntag215())
        let result = try LibNFCTool.run("nfc-list", [], device: link)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("1 ISO14443A passive target(s) found"))
        #expect(result.output.contains("UID (NFCID1): 04  a1  b2  c3  d4  e5  f6"), "\(result.output)")
        #expect(result.output.contains("ATQA (SENS_RES): 00  44"))
        #expect(result.output.contains("SAK (SEL_RES): 00"))
    }
}
