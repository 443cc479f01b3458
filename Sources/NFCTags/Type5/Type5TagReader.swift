// NFC Forum Type 5 Tag (ISO/IEC 15693) NDEF procedures: the Capability Container in block 0
// (4 or 8 bytes), the TLVs as Type 2 has them (03 NDEF, FD proprietary, FE terminator, 00
// NULL), READ SINGLE or READ MULTIPLE as the CC's MBREAD bit allows, WRITE SINGLE with the
// length cleared first and set last (NFC Forum T5T 1.0 §4 and §7; AOSP rw_i93.c / rw_t5t).

/// Why a Type 5 Tag procedure failed. Errors compare by ``code`` only.
public struct Type5TagError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// The CC's magic is not `E1`/`E2`, its MLEN is 0, or read access is not granted.
        case ccInvalid
        /// The CC's major version (CC1 b7–6) is not 1.
        case unsupportedVersion(UInt8)
        /// No NDEF TLV in the T5T area.
        case noNDEF
        /// A TLV cannot be parsed or runs past the T5T area; its byte address.
        case tlvMalformed(offset: Int)
        /// The CC's write access (CC1 b1–0) is not `00`, or a block to write is locked.
        case readOnly
        /// The message does not fit.
        case messageTooLong(length: Int, maximum: Int)
        /// The tag answered with the error flag: ISO/IEC 15693-3's error code.
        case tagError(UInt8)
        /// The answer is not the command's.
        case malformedResponse
        /// The transport failed.
        case communication(TagCommunicationError)
    }

    public let code: Code
    public let reason: String
    public init(_ code: Code, _ reason: String = "") {
        self.code = code
        self.reason = reason
    }
    public static func == (lhs: Type5TagError, rhs: Type5TagError) -> Bool { lhs.code == rhs.code }

    public var description: String {
        let what: String =
            switch code {
            case .ccInvalid: "capability container invalid"
            case .unsupportedVersion(let v): "unsupported Type 5 mapping version \(v >> 6).\(v >> 4 & 3)"
            case .noNDEF: "no NDEF TLV on the tag"
            case .tlvMalformed(let o): "malformed TLV at byte \(o)"
            case .readOnly: "tag is read-only (CC write access or locked blocks)"
            case .messageTooLong(let l, let m): "NDEF message of \(l) bytes exceeds the maximum \(m)"
            case .tagError(let e): "tag error 0x\([e].hexString())"
            case .malformedResponse: "malformed response"
            case .communication(let e): "communication failed: \(e)"
            }
        return reason.isEmpty ? what : what + ": " + reason
    }
}

/// The Type 5 Tag Capability Container.
public struct Type5CapabilityContainer: Sendable, Hashable {
    /// The CC's bytes (4 or 8).
    public var bytes: [UInt8]
    public init(bytes: [UInt8]) throws(Type5TagError) {
        guard bytes.count >= 4, bytes[0] == 0xE1 || bytes[0] == 0xE2 else { throw Type5TagError(.ccInvalid) }
        if bytes[2] == 0 {
            guard bytes.count >= 8, Int(bytes[6]) << 8 | Int(bytes[7]) > 0 else { throw Type5TagError(.ccInvalid) }
            self.bytes = Array(bytes.prefix(8))
        } else {
            self.bytes = Array(bytes.prefix(4))
        }
        guard bytes[1] >> 6 == 1 else { throw Type5TagError(.unsupportedVersion(bytes[1])) }
        guard bytes[1] >> 2 & 0x03 == 0 else { throw Type5TagError(.ccInvalid, "read access not granted") }
    }
    /// 4 or 8.
    public var length: Int { bytes.count }
    /// The T5T area's size in bytes after the CC: MLEN × 8.
    public var areaSize: Int { (bytes.count == 8 ? Int(bytes[6]) << 8 | Int(bytes[7]) : Int(bytes[2])) * 8 }
    /// CC3 b0: READ MULTIPLE BLOCKS supported.
    public var supportsReadMultiple: Bool { bytes[3] & 0x01 != 0 }
    /// CC1 b1–0 = 00.
    public var isWritable: Bool { bytes[1] & 0x03 == 0 }
    /// `E2`: more than 256 blocks, the extended commands.
    public var usesExtendedCommands: Bool { bytes[0] == 0xE2 }
}

/// The NFC Forum Type 5 Tag procedures over an ``/NFCBase/ISO15693Transport``, in the
/// non-addressed mode with the high data rate flag (`02`), as a reader with one tag in its
/// field sends them.
public struct Type5TagReader {
    public let transport: any ISO15693Transport
    public init(transport: any ISO15693Transport) { self.transport = transport }

    /// A request's answer data (the flags byte dropped); the error flag throws `.tagError`.
    func request(_ frame: [UInt8]) throws(Type5TagError) -> [UInt8] {
        let r: [UInt8]
        do { r = try transport.request(frame) } catch let e as TagCommunicationError {
            throw Type5TagError(.communication(e))
        } catch { throw Type5TagError(.communication(.readerFailure("\(error)"))) }
        guard let flags = r.first else { throw Type5TagError(.malformedResponse, "empty answer") }
        if flags & 0x01 != 0 { throw Type5TagError(.tagError(r.count > 1 ? r[1] : 0x0F)) }
        return Array(r.dropFirst())
    }

    /// GET SYSTEM INFO's block size and count, `nil` when the tag does not answer it.
    public func systemInfo() throws(Type5TagError) -> (blockSize: Int, blockCount: Int)? {
        let d: [UInt8]
        do { d = try request([0x02, 0x2B]) } catch {
            if case .tagError = error.code { return nil }
            throw error
        }
        guard d.count >= 9 else { return nil }
        let info = d[0]
        var i = 9
        if info & 0x01 != 0 { i += 1 }
        if info & 0x02 != 0 { i += 1 }
        guard info & 0x04 != 0, d.count >= i + 2 else { return nil }
        return (Int(d[i + 1] & 0x1F) + 1, Int(d[i]) + 1)
    }

    /// READ SINGLE BLOCK (`20`, or `30` extended).
    public func readBlock(_ b: Int, extended: Bool = false) throws(Type5TagError) -> [UInt8] {
        try request(extended ? [0x02, 0x30, UInt8(b & 0xFF), UInt8(b >> 8)] : [0x02, 0x20, UInt8(b)])
    }

    /// READ MULTIPLE BLOCKS (`23`, or `33` extended): `count` blocks from `first`.
    public func readBlocks(_ first: Int, count: Int, extended: Bool = false) throws(Type5TagError) -> [UInt8] {
        try request(
            extended
                ? [
                    0x02, 0x33, UInt8(first & 0xFF), UInt8(first >> 8), UInt8((count - 1) & 0xFF),
                    UInt8((count - 1) >> 8),
                ]
                : [0x02, 0x23, UInt8(first), UInt8(count - 1)])
    }

    /// WRITE SINGLE BLOCK (`21`, or `31` extended).
    public func writeBlock(_ b: Int, _ data: [UInt8], extended: Bool = false) throws(Type5TagError) {
        _ = try request(
            (extended ? [0x02, 0x31, UInt8(b & 0xFF), UInt8(b >> 8)] : [0x02, 0x21, UInt8(b)]) + data)
    }

    /// The tag's layout: block size, CC, and the NDEF TLV's place.
    public struct Layout: Sendable, Hashable {
        public var blockSize: Int
        public var capabilityContainer: Type5CapabilityContainer
        /// Byte address of the NDEF TLV's T field, `nil` when there is none.
        public var ndefTLVAddress: Int?
        /// The NDEF message's length and the byte address of its first byte.
        public var ndefLength: Int
        public var ndefValueAddress: Int
        /// The most bytes an NDEF message may have: the area after the CC less the TLV's
        /// T and L fields (3 bytes of L past 254).
        public var maximumNDEFMessageSize: Int {
            let room =
                capabilityContainer.areaSize
                - ((ndefTLVAddress ?? capabilityContainer.length) - capabilityContainer.length)
            return room > 256 ? room - 4 : room - 2
        }
    }

    /// Reads bytes of the T5T area through whole blocks.
    final class Memory {
        let reader: Type5TagReader
        let blockSize: Int
        let multiple: Bool
        let extended: Bool
        var cache: [Int: [UInt8]] = [:]
        var limit: Int = .max
        init(_ reader: Type5TagReader, blockSize: Int, multiple: Bool, extended: Bool) {
            self.reader = reader
            self.blockSize = blockSize
            self.multiple = multiple
            self.extended = extended
        }
        func block(_ b: Int, upTo last: Int) throws(Type5TagError) -> [UInt8] {
            if let c = cache[b] { return c }
            if multiple && last > b {
                let count = min(last - b + 1, max(1, 128 / blockSize))
                let d = try reader.readBlocks(b, count: count, extended: extended)
                guard d.count == count * blockSize else { throw Type5TagError(.malformedResponse, "READ MULTIPLE") }
                for k in 0..<count { cache[b + k] = Array(d[(k * blockSize)..<((k + 1) * blockSize)]) }
            } else {
                let d = try reader.readBlock(b, extended: extended)
                guard d.count == blockSize else { throw Type5TagError(.malformedResponse, "READ SINGLE") }
                cache[b] = d
            }
            return cache[b]!
        }
        func bytes(_ r: Range<Int>) throws(Type5TagError) -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(r.count)
            let last = min(limit, (r.upperBound - 1) / blockSize)
            var a = r.lowerBound
            while a < r.upperBound {
                let blk = try block(a / blockSize, upTo: last)
                let from = a % blockSize
                let n = min(blockSize - from, r.upperBound - a)
                out += blk[from..<(from + n)]
                a += n
            }
            return out
        }
    }

    /// Block size (GET SYSTEM INFO, else the length of block 0's answer), CC, TLV walk.
    public func readLayout() throws(Type5TagError) -> Layout {
        try layoutAndMemory().layout
    }

    func layoutAndMemory() throws(Type5TagError) -> (layout: Layout, memory: Memory) {
        let info = try systemInfo()
        let first = try readBlock(0)
        let blockSize = info?.blockSize ?? first.count
        guard blockSize > 0, first.count == blockSize else { throw Type5TagError(.malformedResponse, "block 0") }
        var ccBytes = first
        if ccBytes.count < 8 && ccBytes.count >= 3 && ccBytes[2] == 0 { ccBytes += try readBlock(1) }
        let cc = try Type5CapabilityContainer(bytes: ccBytes)
        let memory = Memory(
            self, blockSize: blockSize, multiple: cc.supportsReadMultiple, extended: cc.usesExtendedCommands)
        memory.cache[0] = first
        let end = cc.length + cc.areaSize
        memory.limit = (end - 1) / blockSize
        var a = cc.length
        while a < end {
            let t = try memory.bytes(a..<(a + 1))[0]
            if t == 0x00 {
                a += 1
                continue
            }
            if t == 0xFE { break }
            guard a + 1 < end else { throw Type5TagError(.tlvMalformed(offset: a)) }
            var l = Int(try memory.bytes((a + 1)..<(a + 2))[0])
            var v = a + 2
            if l == 0xFF {
                guard a + 3 < end else { throw Type5TagError(.tlvMalformed(offset: a)) }
                let two = try memory.bytes((a + 2)..<(a + 4))
                l = Int(two[0]) << 8 | Int(two[1])
                v = a + 4
            }
            guard v + l <= end else { throw Type5TagError(.tlvMalformed(offset: a), "length \(l) runs past the area") }
            if t == 0x03 {
                return (
                    Layout(
                        blockSize: blockSize, capabilityContainer: cc, ndefTLVAddress: a, ndefLength: l,
                        ndefValueAddress: v),
                    memory
                )
            }
            a = v + l
        }
        return (
            Layout(
                blockSize: blockSize, capabilityContainer: cc, ndefTLVAddress: nil, ndefLength: 0,
                ndefValueAddress: cc.length), memory
        )
    }

    /// The NDEF message (empty for `03 00`). No NDEF TLV throws `.noNDEF`.
    public func readNDEF() throws(Type5TagError) -> [UInt8] {
        let (layout, memory) = try layoutAndMemory()
        guard layout.ndefTLVAddress != nil else { throw Type5TagError(.noNDEF) }
        return try memory.bytes(layout.ndefValueAddress..<(layout.ndefValueAddress + layout.ndefLength))
    }

    /// Writes `message` as the NDEF TLV (where the current one is, else right after the CC):
    /// the TLV's length set to 0 first, then the message and a terminator, then the length
    /// (AOSP rw_t5t update order). Only blocks whose bytes change are written.
    public func writeNDEF(_ message: [UInt8]) throws(Type5TagError) {
        let (layout, memory) = try layoutAndMemory()
        let cc = layout.capabilityContainer
        guard cc.isWritable else { throw Type5TagError(.readOnly) }
        guard message.count <= layout.maximumNDEFMessageSize else {
            throw Type5TagError(.messageTooLong(length: message.count, maximum: layout.maximumNDEFMessageSize))
        }
        let at = layout.ndefTLVAddress ?? cc.length
        let end = cc.length + cc.areaSize
        let lengthField: [UInt8] =
            message.count > 254
            ? [0xFF, UInt8(message.count >> 8), UInt8(message.count & 0xFF)] : [UInt8(message.count)]
        let zeroLength: [UInt8] = message.count > 254 ? [0xFF, 0, 0] : [0]
        var stream: [UInt8] = [0x03] + lengthField + message
        if at + stream.count < end { stream.append(0xFE) }
        let bs = layout.blockSize
        func put(_ bytes: [UInt8], at start: Int) throws(Type5TagError) {
            var a = start
            while a < start + bytes.count {
                let b = a / bs
                var blk = try memory.block(b, upTo: b)
                let from = a % bs
                let n = min(bs - from, start + bytes.count - a)
                let old = blk
                blk.replaceSubrange(from..<(from + n), with: bytes[(a - start)..<(a - start + n)])
                if blk != old {
                    do { try writeBlock(b, blk, extended: cc.usesExtendedCommands) } catch {
                        if case .tagError(0x12) = error.code { throw Type5TagError(.readOnly, "block \(b) is locked") }
                        throw error
                    }
                    memory.cache[b] = blk
                }
                a += n
            }
        }
        try put([0x03] + zeroLength, at: at)
        try put(Array(stream.dropFirst(1 + lengthField.count)), at: at + 1 + lengthField.count)
        try put([0x03] + lengthField, at: at)
    }
}
