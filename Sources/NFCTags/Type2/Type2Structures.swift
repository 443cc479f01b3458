// The on-tag structures of an NFC Forum Type 2 Tag: capability container and TLV blocks
// (NFC Forum Type 2 Tag Technical Specification 1.0, §6.1 and §2.3).

/// The capability container, page 3: `E1`, version, size, access (T2T 1.0 §6.1).
public struct Type2CapabilityContainer: Sendable, Hashable, CustomStringConvertible {
    /// The 4 CC bytes.
    public let bytes: [UInt8]

    /// Checks magic `E1`, mapping major version ≤ 1, size ≠ 0 and read access `0h`.
    /// Throws ``Type2TagError`` `.ccInvalid` or `.unsupportedVersion`.
    public init(bytes: [UInt8]) throws(Type2TagError) {
        guard bytes.count == 4 else { throw Type2TagError(.ccInvalid, "CC must be 4 bytes, got \(bytes.count)") }
        guard bytes[0] == 0xE1 else {
            throw Type2TagError(.ccInvalid, "magic number \([bytes[0]].hexString()), expected E1")
        }
        guard bytes[1] >> 4 <= 1 else { throw Type2TagError(.unsupportedVersion(bytes[1])) }
        guard bytes[2] != 0 else { throw Type2TagError(.ccInvalid, "data area size 0") }
        guard bytes[3] >> 4 == 0 else {
            throw Type2TagError(.ccInvalid, "read access \(bytes[3] >> 4)h is not granted (0h)")
        }
        self.bytes = bytes
    }

    /// Major mapping version (CC byte 1 high nibble, 1 for T2T 1.0).
    public var majorVersion: UInt8 { bytes[1] >> 4 }
    /// Minor mapping version (CC byte 1 low nibble).
    public var minorVersion: UInt8 { bytes[1] & 0xF }
    /// CC byte 2, MLEN.
    public var sizeByte: UInt8 { bytes[2] }
    /// The data area in bytes: 8 × MLEN, from page 4 on (T2T 1.0 §6.1, for every MLEN).
    public var dataAreaSize: Int { 8 * Int(bytes[2]) }
    /// Read access (CC byte 3 high nibble): `0h` granted.
    public var readAccess: UInt8 { bytes[3] >> 4 }
    /// Write access (CC byte 3 low nibble): `0h` granted, `Fh` none; others proprietary.
    public var writeAccess: UInt8 { bytes[3] & 0xF }
    /// Write access is `0h`.
    public var isWritable: Bool { writeAccess == 0 }

    public var description: String {
        "CC \(bytes.hexString(separator: " ")): version \(majorVersion).\(minorVersion), "
            + "data area \(dataAreaSize) bytes, " + (isWritable ? "read/write" : "read-only")
    }
}

/// Bytes a Lock Control or Memory Control TLV sets apart (T2T 1.0 §2.3.1, §2.3.2):
/// they are skipped when TLVs and NDEF data are read or written.
public struct Type2ReservedArea: Sendable, Hashable {
    /// What the area holds.
    public enum Kind: Sendable, Hashable {
        /// Dynamic lock bits: `bitCount` bits, each locking `bytesLockedPerBit` bytes from byte 64 (page 16) on.
        case dynamicLockBits(bitCount: Int, bytesLockedPerBit: Int)
        /// Reserved memory (Memory Control TLV).
        case reserved
    }

    public let kind: Kind
    /// First byte address (page × 4 + byte).
    public let address: Int
    /// Size in bytes.
    public let size: Int
    /// The byte addresses.
    public var range: Range<Int> { address..<(address + size) }

    public init(kind: Kind, address: Int, size: Int) {
        self.kind = kind
        self.address = address
        self.size = size
    }

    /// Decodes the 3-byte value of a Lock Control (`01`) or Memory Control (`02`) TLV:
    /// byte 0 = page address (high nibble) and byte offset (low nibble); byte 1 = size
    /// (lock bits, or bytes; `0` means 256); byte 2 = bytes locked per lock bit as 2^high
    /// nibble, bytes per page as 2^low nibble. Address = page address × 2^(low nibble) + byte offset.
    public static func decode(controlValue v: [UInt8], lock: Bool) -> Type2ReservedArea? {
        guard v.count == 3 else { return nil }
        let bytesPerPage = 1 << Int(v[2] & 0xF)
        let address = Int(v[0] >> 4) * bytesPerPage + Int(v[0] & 0xF)
        let size = v[1] == 0 ? 256 : Int(v[1])
        if lock {
            return Type2ReservedArea(
                kind: .dynamicLockBits(bitCount: size, bytesLockedPerBit: 1 << Int(v[2] >> 4)),
                address: address, size: (size + 7) / 8)
        }
        return Type2ReservedArea(kind: .reserved, address: address, size: size)
    }
}

/// One TLV block found in the data area (T2T 1.0 §2.3).
public struct Type2TLV: Sendable, Hashable, CustomStringConvertible {
    /// The block's type.
    public enum Kind: Sendable, Hashable {
        case null, lockControl, memoryControl, ndef, proprietary, terminator
        /// An RFU type (`04h`–`FCh`), skipped by its length.
        case unknown(UInt8)

        init(_ t: UInt8) {
            switch t {
            case 0x00: self = .null
            case 0x01: self = .lockControl
            case 0x02: self = .memoryControl
            case 0x03: self = .ndef
            case 0xFD: self = .proprietary
            case 0xFE: self = .terminator
            default: self = .unknown(t)
            }
        }
    }

    public let kind: Kind
    /// Byte address of the T field (page × 4 + byte).
    public let address: Int
    /// Length of the value in bytes (0 for NULL and Terminator).
    public let length: Int
    /// Byte address of the first value byte (reserved areas skipped), `nil` without a value.
    public let valueAddress: Int?
    /// For Lock and Memory Control TLVs, the area they declare.
    public let area: Type2ReservedArea?

    public var description: String {
        let name: String =
            switch kind {
            case .null: "NULL"
            case .lockControl: "Lock Control"
            case .memoryControl: "Memory Control"
            case .ndef: "NDEF"
            case .proprietary: "Proprietary"
            case .terminator: "Terminator"
            case .unknown(let t): "RFU \([t].hexString())"
            }
        var s = "\(name) at page \(address / 4) byte \(address % 4)"
        switch kind {
        case .null, .terminator: break
        default: s += ", length \(length)"
        }
        if let area {
            // Inclusive, as people write ranges (bytes 160-161), never Swift's half-open `..<`.
            let last = area.address + area.size - 1
            s +=
                area.size <= 1
                ? ", area byte \(area.address)" : ", area bytes \(area.address)-\(last)"
        }
        return s
    }
}

/// A TLV the walk stepped over instead of refusing the tag (NFC Forum T2T 1.0 §2.3).
public struct Type2TLVWarning: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// A Lock Control or Memory Control TLV whose length is not 3 (T2T 1.0 §2.3.1 and
        /// §2.3.2 fix L = 3 and say nothing of another L): skipped by its own length, as
        /// nfcpy's `tt2.py` does, and no area is reserved for it.
        case controlTLVLength
    }

    public let kind: Kind
    /// Byte address of the TLV's T field (page × 4 + byte).
    public let address: Int
    public let message: String
    public var description: String { message }

    public init(kind: Kind, address: Int, message: String) {
        self.kind = kind
        self.address = address
        self.message = message
    }
}

/// The dynamic lock bits a reader honours, and where they came from.
public struct Type2DynamicLock: Sendable, Hashable {
    /// Where the location was learned.
    public enum Source: Sendable, Hashable {
        /// A Lock Control TLV.
        case lockControlTLV
        /// The product's datasheet (GET_VERSION identified it).
        case datasheet
        /// T2T 1.0 §2.3.1 default: right after the data area, (size − 48) / 8 bits, 8 bytes a bit.
        case nfcForumDefault
    }

    public let source: Source
    /// Byte address of the first lock byte.
    public let address: Int
    /// Lock bits.
    public let bitCount: Int
    /// Bytes each bit locks, from byte 64 (page 16) on.
    public let bytesLockedPerBit: Int
}

/// What a reader learns from the CC and the TLV walk.
public struct Type2TagLayout: Sendable, Hashable {
    /// Page 3.
    public let capabilityContainer: Type2CapabilityContainer
    /// Page 2 bytes 2–3: static lock bits for the CC (byte 2 bit 3) and pages 4–15.
    public let staticLockBytes: [UInt8]
    /// The TLV blocks in order, up to and including a Terminator.
    public let tlvs: [Type2TLV]
    /// Areas declared by Lock and Memory Control TLVs.
    public let reservedAreas: [Type2ReservedArea]
    /// The dynamic lock bits in force, `nil` when the tag has none.
    public let dynamicLock: Type2DynamicLock?
    /// Byte address where an NDEF TLV starts or would be written.
    public let ndefTLVAddress: Int?
    /// The largest NDEF message a write can store: the bytes from ``ndefTLVAddress`` to the
    /// end of the data area, reserved bytes excluded, minus the NDEF TLV's T field and its
    /// length field (1 byte for messages up to 254 bytes, 3 bytes `FF xx yy` above). A
    /// Terminator is added only when room remains. NTAG216 (CC `6D`, data area 872):
    /// 872 − 1 − 3 = 868. NTAG213 with a Lock Control TLV (CC `12`): 144 − 5 − 1 − 1 = 137.
    public let maximumNDEFMessageSize: Int
    /// TLVs the walk stepped over instead of refusing the tag, in order.
    public let warnings: [Type2TLVWarning]

    /// The data area in bytes (8 × MLEN).
    public var dataAreaSize: Int { capabilityContainer.dataAreaSize }
    /// Byte addresses of the data area: 16 ..< 16 + size.
    public var dataArea: Range<Int> { 16..<(16 + dataAreaSize) }
    /// The first NDEF TLV.
    public var ndef: Type2TLV? { tlvs.first { $0.kind == .ndef } }
    /// The Terminator TLV, if any.
    public var terminator: Type2TLV? { tlvs.first { $0.kind == .terminator } }

    /// The largest message for `available` bytes of T + L + V.
    static func maximumMessage(available n: Int) -> Int {
        max(0, max(min(n - 2, 254), n - 4))
    }
}
