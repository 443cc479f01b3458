import NFCTags
import Testing

@Suite("ISO 14443-A activation and GET_VERSION")
struct IdentificationTests {
    @Test("ATQA 44 00 (wire order) announces a double-size UID: two cascade levels")
    func atqa() throws {
        let a = try ISO14443AActivation(
            uid: [0x04, 0x58, 0x69, 0xD2, 0x9C, 0x39, 0x80], atqa: [0x44, 0x00], sak: 0x00)
        #expect(a.announcedUIDSize == .double)
        #expect(a.cascadeLevels == 2 && a.atqaMatchesUID)
        #expect(a.isType2Platform && !a.supportsISODEP)
        let desfire = try ISO14443AActivation(
            uid: [1, 2, 3, 4, 5, 6, 7], atqa: [0x44, 0x03], sak: 0x20, ats: [0x06, 0x75])
        #expect(desfire.supportsISODEP && !desfire.isType2Platform)
        #expect(throws: ISO14443AActivationError.uidLength(5)) {
            try ISO14443AActivation(uid: [1, 2, 3, 4, 5], atqa: [0x44, 0x00], sak: 0)
        }
    }

    @Test("BCC0 and BCC1 of the Proxmark3 NTAG216 dump's pages 0-2")
    func bcc() throws {
        // From pm3_ntag216-empty.json: pages 045869BD D29C3980 F7480000.
        let header: [UInt8] = [0x04, 0x58, 0x69, 0xBD, 0xD2, 0x9C, 0x39, 0x80, 0xF7, 0x48, 0x00, 0x00]
        let u = try ISO14443AActivation.type2UID(fromPages: header)
        #expect(u.uid == [0x04, 0x58, 0x69, 0xD2, 0x9C, 0x39, 0x80])
        #expect(u.checkBytesValid)
        #expect(try ISO14443AActivation.type2UIDPages(uid: u.uid) == header)
    }

    @Test(
        "GET_VERSION table: NTAG213/215/216, Ultralight EV1, NTAG I2C",
        arguments: [
            ("0004040201000F03", TagVersion.Product.ntag213, 45, 144, 0x12 as UInt8),
            ("0004040201001103", .ntag215, 135, 504, 0x3E),
            ("0004040201001303", .ntag216, 231, 888, 0x6D),
            ("0004030101000B03", .ultralightEV1MF0UL11, 20, 48, 0x06),
            ("0004030101000E03", .ultralightEV1MF0UL21, 41, 128, 0x10),
        ])
    func version(hex: String, product: TagVersion.Product, pages: Int, user: Int, cc: UInt8) throws {
        let v = try TagVersion(bytes: [UInt8](hex: hex) ?? [])
        #expect(v.product == product)
        #expect(v.totalPages == pages && v.userMemoryBytes == user && v.ccSizeByte == cc)
        #expect(TagVersion.answer(for: product) == v)
    }

    @Test("NTAG216's storage byte 13 means between 512 and 1024 bytes; I2C is known without a linear map")
    func storageSize() throws {
        let v = try TagVersion(bytes: [0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x13, 0x03])
        #expect(v.storageSize == 512...1024)
        #expect(v.configurationPage == 0xE3)
        let i2c = try TagVersion(bytes: [0x00, 0x04, 0x04, 0x05, 0x02, 0x01, 0x13, 0x03])
        #expect(i2c.product == .ntagI2C1k && i2c.totalPages == nil && i2c.ccSizeByte == 0x6D)
        #expect(throws: TagVersionError(length: 7)) { try TagVersion(bytes: [0, 4, 4, 2, 1, 0, 0x13]) }
        #expect(try TagVersion(bytes: [0, 4, 4, 2, 9, 0, 0x13, 3]).product == nil)
    }
}
