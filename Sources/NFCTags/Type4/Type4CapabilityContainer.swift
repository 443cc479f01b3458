/// The Capability Container file `E103` of an NFC Forum Type 4 Tag (T4T 2.0 §5.1, T4T 3.0
/// §4.7): CCLEN, mapping version, MLe, MLc, then the NDEF File Control TLV (`04`, 6 bytes:
/// file id, 2-byte max NDEF file size, read and write access) or, from mapping 3.0, the
/// ENDEF File Control TLV (`06`, 8 bytes: file id, 4-byte max ENDEF file size, access).
///
/// Mapping versions with major 1, 2 and 3 are accepted: a 1.0 CC has the 2.0 layout, and a
/// T4T 2.0 reader reads 1.0 tags (T4T 2.0 §5.1.1 version treatment, §5.5 coexistence of
/// 1.0 and 2.0; nfcpy `tt4.py` and Android `rw_t4t.c` accept major 1 too).
public struct Type4CapabilityContainer: Sendable, Hashable, CustomStringConvertible {
    /// CCLEN: bytes in the CC file, 000F–FFFE.
    public let ccLength: Int
    /// The mapping version byte: major in the high nibble (`10` = 1.0, `20` = 2.0, `30` = 3.0).
    public let mappingVersion: UInt8
    /// MLe: the most response data bytes one READ BINARY may return (000F–FFFF).
    public let maximumReadLength: Int
    /// MLc: the most command data bytes one UPDATE BINARY may carry (0001–FFFF).
    public let maximumWriteLength: Int
    /// The NDEF file's identifier, as the TLV says (E104 is only customary).
    public let ndefFileID: UInt16
    /// Maximum NDEF file size in bytes, length field (NLEN/ENLEN) included.
    public let maximumNDEFFileSize: Int
    /// `00`: read access granted without security; `80`–`FE` proprietary.
    public let readAccess: UInt8
    /// `00`: write access granted; `FF`: no write access (read-only); `80`–`FE` proprietary.
    public let writeAccess: UInt8
    /// `true` when the CC holds an ENDEF File Control TLV (`06`): 4-byte ENLEN.
    public let isExtendedFile: Bool

    /// The mapping major version (1, 2 or 3).
    public var majorVersion: Int { Int(mappingVersion >> 4) }
    /// Size of the length field that opens the NDEF file: 2 (NLEN) or 4 (ENLEN).
    public var lengthFieldSize: Int { isExtendedFile ? 4 : 2 }
    /// The longest NDEF message the file can hold.
    public var maximumNDEFMessageSize: Int { maximumNDEFFileSize - lengthFieldSize }
    public var isReadable: Bool { readAccess == 0x00 }
    public var isWritable: Bool { writeAccess == 0x00 }

    /// Builds a CC. Mapping 3.0 gets the ENDEF TLV when `extendedFile` is true (required
    /// for files over FFFE bytes); mapping 2.0 always gets the NDEF TLV.
    /// - Throws: ``Type4TagError/Code/ccInvalid`` for values a reader must reject.
    public init(
        mappingVersion: UInt8 = 0x20, maximumReadLength: Int = 0xFF, maximumWriteLength: Int = 0xFF,
        ndefFileID: UInt16 = 0xE104, maximumNDEFFileSize: Int, readAccess: UInt8 = 0x00,
        writeAccess: UInt8 = 0x00, extendedFile: Bool? = nil
    ) throws(Type4TagError) {
        let extended = extendedFile ?? (mappingVersion >> 4 >= 3 && maximumNDEFFileSize > 0xFFFE)
        let ccLength = extended ? 17 : 15
        try self.init(
            ccLength: ccLength, mappingVersion: mappingVersion, maximumReadLength: maximumReadLength,
            maximumWriteLength: maximumWriteLength, ndefFileID: ndefFileID,
            maximumNDEFFileSize: maximumNDEFFileSize, readAccess: readAccess, writeAccess: writeAccess,
            isExtendedFile: extended)
    }

    /// Parses CC file bytes (at least as far as the first File Control TLV).
    /// - Throws: ``Type4TagError`` `.ccInvalid(reason)` or `.unsupportedVersion`.
    public init(bytes: [UInt8]) throws(Type4TagError) {
        guard bytes.count >= 15 else { throw .ccInvalid("CC has \(bytes.count) bytes; at least 15") }
        func u16(_ i: Int) -> Int { Int(bytes[i]) << 8 | Int(bytes[i + 1]) }
        let t = bytes[7]
        let l = Int(bytes[8])
        let extended: Bool
        switch (t, l) {
        case (0x04, 6): extended = false
        case (0x06, 8): extended = true
        case (0x04, _), (0x06, _): throw .ccInvalid("File Control TLV \([t].hexString()) with length \(l)")
        default: throw .ccInvalid("first TLV is \([t].hexString()), not an (E)NDEF File Control TLV")
        }
        guard bytes.count >= 9 + l else {
            throw .ccInvalid("TLV needs \(9 + l) CC bytes; got \(bytes.count)")
        }
        let v = bytes[9...]
        let s = v.startIndex
        let size =
            extended
            ? Int(v[s + 2]) << 24 | Int(v[s + 3]) << 16 | Int(v[s + 4]) << 8 | Int(v[s + 5])
            : Int(v[s + 2]) << 8 | Int(v[s + 3])
        try self.init(
            ccLength: u16(0), mappingVersion: bytes[2], maximumReadLength: u16(3),
            maximumWriteLength: u16(5), ndefFileID: UInt16(v[s]) << 8 | UInt16(v[s + 1]),
            maximumNDEFFileSize: size, readAccess: v[s + l - 2], writeAccess: v[s + l - 1],
            isExtendedFile: extended)
        guard 9 + l <= ccLength else {
            throw .ccInvalid("CCLEN \(ccLength) does not cover the File Control TLV (\(9 + l) bytes)")
        }
    }

    private init(
        ccLength: Int, mappingVersion: UInt8, maximumReadLength: Int, maximumWriteLength: Int,
        ndefFileID: UInt16, maximumNDEFFileSize: Int, readAccess: UInt8, writeAccess: UInt8,
        isExtendedFile: Bool
    ) throws(Type4TagError) {
        let major = mappingVersion >> 4
        guard (1...3).contains(major) else { throw .unsupportedVersion(mappingVersion) }
        guard (0x000F...0xFFFE).contains(ccLength) else { throw .ccInvalid("CCLEN \(ccLength) outside 000F…FFFE") }
        guard (0x000F...0xFFFF).contains(maximumReadLength) else {
            throw .ccInvalid("MLe \(maximumReadLength) outside 000F…FFFF")
        }
        guard (0x0001...0xFFFF).contains(maximumWriteLength) else {
            throw .ccInvalid("MLc \(maximumWriteLength) outside 0001…FFFF")
        }
        // 0000 is reserved from mapping 2.0 on; a 1.0 tag may use it (Android's
        // rw_t4t_validate_cc_file refuses it only for 2.0 and 3.0).
        let reserved: [UInt16] =
            major == 1 ? [0xE102, 0xE103, 0x3F00, 0x3FFF, 0xFFFF] : [0x0000, 0xE102, 0xE103, 0x3F00, 0x3FFF, 0xFFFF]
        guard !reserved.contains(ndefFileID) else {
            throw .ccInvalid(
                "NDEF file id \([UInt8(ndefFileID >> 8), UInt8(ndefFileID & 0xFF)].hexString()) is reserved")
        }
        if isExtendedFile {
            guard major >= 3 else { throw .ccInvalid("ENDEF File Control TLV in a mapping \(major).x CC") }
            guard (0x0000_FFFF...0xFFFF_FFFE).contains(maximumNDEFFileSize) else {
                throw .ccInvalid("max ENDEF file size \(maximumNDEFFileSize) outside 0000FFFF…FFFFFFFE")
            }
        } else {
            guard (0x0005...0xFFFE).contains(maximumNDEFFileSize) else {
                throw .ccInvalid("max NDEF file size \(maximumNDEFFileSize) outside 0005…FFFE")
            }
        }
        guard readAccess == 0x00 || (0x80...0xFE).contains(readAccess) else {
            throw .ccInvalid("read access \([readAccess].hexString()) is RFU")
        }
        guard writeAccess == 0x00 || writeAccess >= 0x80 else {
            throw .ccInvalid("write access \([writeAccess].hexString()) is RFU")
        }
        self.ccLength = ccLength
        self.mappingVersion = mappingVersion
        self.maximumReadLength = maximumReadLength
        self.maximumWriteLength = maximumWriteLength
        self.ndefFileID = ndefFileID
        self.maximumNDEFFileSize = maximumNDEFFileSize
        self.readAccess = readAccess
        self.writeAccess = writeAccess
        self.isExtendedFile = isExtendedFile
    }

    /// The CC file bytes: 15 (NDEF TLV) or 17 (ENDEF TLV).
    public var bytes: [UInt8] {
        func be(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).reversed().map { UInt8((v >> ($0 * 8)) & 0xFF) } }
        var out = be(ccLength, 2) + [mappingVersion] + be(maximumReadLength, 2) + be(maximumWriteLength, 2)
        out += isExtendedFile ? [0x06, 0x08] : [0x04, 0x06]
        out += be(Int(ndefFileID), 2) + be(maximumNDEFFileSize, isExtendedFile ? 4 : 2)
        out += [readAccess, writeAccess]
        return out
    }

    public var description: String {
        "T4T \(mappingVersion >> 4).\(mappingVersion & 0xF) MLe \(maximumReadLength) MLc \(maximumWriteLength) "
            + "\(isExtendedFile ? "ENDEF" : "NDEF") file \([UInt8(ndefFileID >> 8), UInt8(ndefFileID & 0xFF)].hexString()) "
            + "max \(maximumNDEFFileSize) bytes, access \([readAccess, writeAccess].hexString(separator: "/"))"
    }
}
