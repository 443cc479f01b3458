// GET_VERSION (60h) answers of NXP Type 2 tags: NTAG213/215/216 datasheet Rev 3.2 §10.1
// (Table "GET_VERSION response"), NTAG210/212 §10.1, MF0ULX1 Rev 3.2 §8.5.1 / §9.2,
// NTAG I2C (NT3H1101/NT3H1201) and NTAG I2C plus (NT3H2111/NT3H2211) §9.x.

/// A GET_VERSION answer that is not 8 bytes.
public struct TagVersionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The length received.
    public let length: Int
    public init(length: Int) { self.length = length }
    public var description: String { "GET_VERSION answer must be 8 bytes, got \(length)" }
}

/// The 8-byte GET_VERSION answer of an NXP Type 2 tag, decoded.
///
/// Layout: fixed header `00`, vendor ID (`04` NXP), product type (`03` MIFARE Ultralight,
/// `04` NTAG), product subtype, major and minor product version, storage size, protocol
/// type (`03`: ISO/IEC 14443-3 compliant). Example: NTAG216 `00 04 04 02 01 00 13 03`.
public struct TagVersion: Sendable, Hashable {
    /// The products this package recognises.
    public enum Product: String, Sendable, Hashable, CaseIterable {
        case ntag210, ntag212, ntag213, ntag215, ntag216
        /// NTAG 213 TT (tamper tag), same memory as NTAG213.
        case ntag213TT
        /// NTAG I2C 1k / 2k (NT3H1101 / NT3H1201) and NTAG I2C plus 1k / 2k (NT3H2111 / NT3H2211).
        case ntagI2C1k, ntagI2C2k, ntagI2CPlus1k, ntagI2CPlus2k
        /// MIFARE Ultralight EV1, 48 and 128 user bytes.
        case ultralightEV1MF0UL11, ultralightEV1MF0UL21

        /// A short human name ("NTAG216", "Ultralight EV1 MF0UL11").
        public var displayName: String {
            switch self {
            case .ntag210: "NTAG210"
            case .ntag212: "NTAG212"
            case .ntag213: "NTAG213"
            case .ntag215: "NTAG215"
            case .ntag216: "NTAG216"
            case .ntag213TT: "NTAG213 TT"
            case .ntagI2C1k: "NTAG I2C 1k"
            case .ntagI2C2k: "NTAG I2C 2k"
            case .ntagI2CPlus1k: "NTAG I2C plus 1k"
            case .ntagI2CPlus2k: "NTAG I2C plus 2k"
            case .ultralightEV1MF0UL11: "Ultralight EV1 MF0UL11"
            case .ultralightEV1MF0UL21: "Ultralight EV1 MF0UL21"
            }
        }

        /// User memory bytes (datasheet "user memory").
        public var userMemoryBytes: Int {
            switch self {
            case .ntag210, .ultralightEV1MF0UL11: 48
            case .ntag212, .ultralightEV1MF0UL21: 128
            case .ntag213, .ntag213TT: 144
            case .ntag215: 504
            case .ntag216, .ntagI2C1k, .ntagI2CPlus1k: 888
            case .ntagI2C2k, .ntagI2CPlus2k: 1904
            }
        }

        /// The factory CC size byte (CC byte 2); the NDEF data area is 8 × this many bytes.
        public var ccSizeByte: UInt8 {
            switch self {
            case .ntag210, .ultralightEV1MF0UL11: 0x06
            case .ntag212, .ultralightEV1MF0UL21: 0x10
            case .ntag213, .ntag213TT: 0x12
            case .ntag215: 0x3E
            case .ntag216, .ntagI2C1k, .ntagI2CPlus1k: 0x6D
            case .ntagI2C2k, .ntagI2CPlus2k: 0xEA
            }
        }

        /// The linear memory map; `nil` for the NTAG I2C family, whose memory is split in
        /// sectors (SECTOR_SELECT) and not modelled here.
        public var layout: Type2MemoryLayout? {
            switch self {
            case .ntag210: .ntag210
            case .ntag212: .ntag212
            case .ntag213, .ntag213TT: .ntag213
            case .ntag215: .ntag215
            case .ntag216: .ntag216
            case .ultralightEV1MF0UL11: .ultralightEV1MF0UL11
            case .ultralightEV1MF0UL21: .ultralightEV1MF0UL21
            case .ntagI2C1k, .ntagI2C2k, .ntagI2CPlus1k, .ntagI2CPlus2k: nil
            }
        }
    }

    /// The 8 bytes as received.
    public let bytes: [UInt8]

    /// Decodes an 8-byte answer; throws ``TagVersionError`` on any other length. Unknown
    /// combinations decode with ``product`` `nil`.
    public init(bytes: [UInt8]) throws(TagVersionError) {
        guard bytes.count == 8 else { throw TagVersionError(length: bytes.count) }
        self.bytes = bytes
    }

    /// Byte 0, fixed header (`00`).
    public var header: UInt8 { bytes[0] }
    /// Byte 1, vendor ID (`04` = NXP Semiconductors).
    public var vendorID: UInt8 { bytes[1] }
    /// Byte 2, product type (`03` MIFARE Ultralight, `04` NTAG).
    public var productType: UInt8 { bytes[2] }
    /// Byte 3, product subtype (`01` 17 pF, `02` 50 pF, `05` NTAG I2C).
    public var productSubtype: UInt8 { bytes[3] }
    /// Byte 4, major product version.
    public var majorProductVersion: UInt8 { bytes[4] }
    /// Byte 5, minor product version.
    public var minorProductVersion: UInt8 { bytes[5] }
    /// Byte 6, storage size: bits 7–1 = n; bit 0 clear → exactly 2ⁿ bytes, set → between
    /// 2ⁿ and 2ⁿ⁺¹ bytes.
    public var storageSizeByte: UInt8 { bytes[6] }
    /// Byte 7, protocol type (`03` = ISO/IEC 14443-3 compliant).
    public var protocolType: UInt8 { bytes[7] }

    /// The user-memory size the storage byte announces: exact, or a half-open range.
    public var storageSize: ClosedRange<Int> {
        let n = Int(storageSizeByte >> 1)
        let low = n < 30 ? 1 << n : Int.max / 2
        return storageSizeByte & 1 == 0 ? low...low : low...(low * 2)
    }

    /// The product, or `nil` for an answer not in the tables above.
    public var product: Product? {
        guard header == 0x00, vendorID == 0x04, protocolType == 0x03 else { return nil }
        switch (productType, productSubtype, majorProductVersion, minorProductVersion, storageSizeByte) {
        case (0x04, 0x01, 0x01, 0x00, 0x0B): return .ntag210
        case (0x04, 0x01, 0x01, 0x00, 0x0E): return .ntag212
        case (0x04, 0x02, 0x01, 0x00, 0x0F): return .ntag213
        case (0x04, 0x02, 0x01, 0x00, 0x11): return .ntag215
        case (0x04, 0x02, 0x01, 0x00, 0x13): return .ntag216
        case (0x04, 0x02, 0x03, 0x00, 0x0F): return .ntag213TT
        case (0x04, 0x05, 0x02, 0x01, 0x13): return .ntagI2C1k
        case (0x04, 0x05, 0x02, 0x01, 0x15): return .ntagI2C2k
        case (0x04, 0x05, 0x02, 0x02, 0x13): return .ntagI2CPlus1k
        case (0x04, 0x05, 0x02, 0x02, 0x15): return .ntagI2CPlus2k
        case (0x03, 0x01...0x02, 0x01, 0x00, 0x0B): return .ultralightEV1MF0UL11
        case (0x03, 0x01...0x02, 0x01, 0x00, 0x0E): return .ultralightEV1MF0UL21
        default: return nil
        }
    }

    /// Total pages (READ range), `nil` when unknown or sectored.
    public var totalPages: Int? { product?.layout?.totalPages }
    /// User memory bytes, `nil` when the product is unknown.
    public var userMemoryBytes: Int? { product?.userMemoryBytes }
    /// The factory CC size byte, `nil` when the product is unknown.
    public var ccSizeByte: UInt8? { product?.ccSizeByte }
    /// First configuration page (CFG0), `nil` when unknown or absent.
    public var configurationPage: Int? { product?.layout?.configurationPage }

    /// The GET_VERSION answer an emulated product gives (the datasheet values above).
    public static func answer(for product: Product) -> TagVersion {
        let b: [UInt8] =
            switch product {
            case .ntag210: [0x00, 0x04, 0x04, 0x01, 0x01, 0x00, 0x0B, 0x03]
            case .ntag212: [0x00, 0x04, 0x04, 0x01, 0x01, 0x00, 0x0E, 0x03]
            case .ntag213: [0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x0F, 0x03]
            case .ntag215: [0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x11, 0x03]
            case .ntag216: [0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x13, 0x03]
            case .ntag213TT: [0x00, 0x04, 0x04, 0x02, 0x03, 0x00, 0x0F, 0x03]
            case .ntagI2C1k: [0x00, 0x04, 0x04, 0x05, 0x02, 0x01, 0x13, 0x03]
            case .ntagI2C2k: [0x00, 0x04, 0x04, 0x05, 0x02, 0x01, 0x15, 0x03]
            case .ntagI2CPlus1k: [0x00, 0x04, 0x04, 0x05, 0x02, 0x02, 0x13, 0x03]
            case .ntagI2CPlus2k: [0x00, 0x04, 0x04, 0x05, 0x02, 0x02, 0x15, 0x03]
            case .ultralightEV1MF0UL11: [0x00, 0x04, 0x03, 0x01, 0x01, 0x00, 0x0B, 0x03]
            case .ultralightEV1MF0UL21: [0x00, 0x04, 0x03, 0x01, 0x01, 0x00, 0x0E, 0x03]
            }
        return TagVersion(checked: b)
    }

    private init(checked bytes: [UInt8]) { self.bytes = bytes }
}

extension TagVersion: CustomStringConvertible {
    public var description: String {
        (product?.displayName ?? "unknown product") + " (" + bytes.hexString(separator: " ") + ")"
    }
}
