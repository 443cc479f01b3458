/// ISO/IEC 14443-3 (§6.2.4, Annex B) CRC_A over `bytes`: initial value `6363`, reflected
/// polynomial `8408`, no final XOR; returned low byte first, as it goes on the air.
/// E.g. GET_VERSION `60` → `F8 32`, READ page 0 `30 00` → `02 A8`, HLTA `50 00` → `57 CD`.
public func iso14443CRCA(_ bytes: some Sequence<UInt8>) -> [UInt8] {
    var crc: UInt16 = 0x6363
    for byte in bytes {
        var b = byte ^ UInt8(truncatingIfNeeded: crc)
        b ^= b << 4
        crc = (crc >> 8) ^ (UInt16(b) << 8) ^ (UInt16(b) << 3) ^ (UInt16(b) >> 4)
    }
    return [UInt8(truncatingIfNeeded: crc), UInt8(truncatingIfNeeded: crc >> 8)]
}
