import NFCTags
import Testing

private func h(_ s: String) -> [UInt8] { [UInt8](hex: s) ?? [] }

/// ATRs below are copied from pcsc-tools' smartcard_list.txt (real cards and readers).
@Suite("ATRs and PC/SC part 3 contactless forms")
struct ATRTests {
    @Test(
        "Reads standard and card name from real storage-card ATRs",
        arguments: [
            (
                "3B 8F 80 01 80 4F 0C A0 00 00 03 06 03 00 01 00 00 00 00 6A", PCSCStandard.iso14443APart3,
                PCSCCardName.mifareClassic1K
            ),
            ("3B 8F 80 01 80 4F 0C A0 00 00 03 06 03 00 02 00 00 00 00 69", .iso14443APart3, .mifareClassic4K),
            ("3B 8F 80 01 80 4F 0C A0 00 00 03 06 03 00 03 00 00 00 00 68", .iso14443APart3, .mifareUltralight),
            ("3B 8F 80 01 80 4F 0C A0 00 00 03 06 11 00 3B 00 00 00 00 42", .felica, .felica),
            (
                "3B 8F 80 01 80 4F 0C A0 00 00 03 06 0B 00 12 00 00 00 00 71", .iso15693Part3,
                PCSCCardName(rawValue: 0x0012)
            ),
            ("3B 8F 80 01 80 4F 0C A0 00 00 03 06 40 00 00 00 00 00 00 28", .lowFrequency, .notGiven),
        ])
    func storageCards(hex: String, standard: PCSCStandard, name: PCSCCardName) throws {
        let atr = try ATR(bytes: h(hex))
        #expect(atr.contactless == .storageCard(standard: standard, cardName: name))
        #expect(atr.protocols == [0, 1])
        #expect(ATR.storageCard(standard: standard, cardName: name).bytes == h(hex))
    }

    @Test(
        "Reads the historical bytes of real ISO 14443-4 ATRs",
        arguments: [
            ("3B 81 80 01 80 80", "80"),  // MIFARE DESFire
            ("3B 80 80 01 01", ""),  // Type B without historical bytes
            ("3B 84 80 01 00 00 90 00 95", "00 00 90 00"),  // German test passport
            ("3B 88 80 01 00 00 00 00 00 71 81 00 F9", "00 00 00 00 00 71 81 00"),
        ])
    func iso14443_4(hex: String, historical: String) throws {
        let atr = try ATR(bytes: h(hex))
        #expect(atr.contactless == .iso14443_4(historicalBytes: h(historical)))
        #expect(try ATR.iso14443_4(historicalBytes: h(historical)).bytes == h(hex))
    }

    @Test("Parses contact ATRs: T=0 without TCK, and T=1 with TA/TB/TD groups")
    func contact() throws {
        let visa = try ATR(bytes: h("3B 6E 00 00 80 31 80 66 B0 84 12 01 6E 01 83 00 90 00"))
        #expect(visa.tck == nil && visa.protocols == [0] && visa.contactless == nil)
        #expect(visa.interfaceGroups == [ATR.InterfaceGroup(tb: 0x00, tc: 0x00)])
        #expect(visa.historicalBytes == h("80 31 80 66 B0 84 12 01 6E 01 83 00 90 00"))
        let javaCard = try ATR(bytes: h("3B 9F 95 81 31 FE 9F 00 66 46 53 05 10 00 FF 71 DF 00 00 00 00 00 EC"))
        #expect(javaCard.interfaceGroups.first?.ta == 0x95)
        #expect(javaCard.interfaceGroups.count == 3 && javaCard.interfaceGroups[2].ta == 0xFE)
        #expect(javaCard.protocols == [1] && javaCard.tck == 0xEC)
        #expect(javaCard.historicalBytes.count == 15 && javaCard.contactless == nil)
    }

    @Test(
        "Rejects broken ATRs with the matching code",
        arguments: [
            ("3B", ATRError.Code.tooShort),
            ("3C 00", .invalidTS),
            ("3B 8F 80 01 80 4F 0C A0 00 00 03 06 03 00 01 00 00 00 00 6B", .checksumMismatch),
            ("3B 8F 80 01 80 4F", .truncated),
            ("3B 81 80 01 80", .truncated),
            ("3B 81 80 01 80 80 00", .trailingBytes),
            ("3B 02 14 50 00", .trailingBytes),
            ("3B 0F" + String(repeating: " 00", count: 32), .tooLong),
        ])
    func rejects(hex: String, code: ATRError.Code) {
        #expect(throws: ATRError(code, "")) { try ATR(bytes: h(hex)) }
    }

    @Test("Builders refuse more than 15 historical bytes; names come from the part 3 tables")
    func builderLimitsAndNames() {
        #expect(throws: ATRError(.historicalBytesTooLong, "")) {
            try ATR.iso14443_4(historicalBytes: [UInt8](repeating: 0, count: 16))
        }
        #expect(PCSCCardName(rawValue: 0x003A).name == "MIFARE Ultralight C")
        #expect(PCSCCardName.mifareMini.name == "MIFARE Mini")
        #expect(PCSCCardName(rawValue: 0x0100).name == "unknown card name 0100")
        #expect(PCSCStandard.iso14443APart3.name == "ISO 14443 A, part 3")
        #expect(PCSCStandard(rawValue: 0x04).name == "RFU (04)")
    }
}
