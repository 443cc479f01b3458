// NFC Forum Type 3 Tag (FeliCa) NDEF procedures: the Attribute Information Block in block 0
// of system 12FC, Check through service 000B, Update through 0009, the write order with
// WriteF (NFC Forum T3T 1.0 §7; as nfcpy tt3.py and libnfc nfc-read-forum-tag3 do them).

/// Why a Type 3 Tag procedure failed. Errors compare by ``code`` only.
public struct Type3TagError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// No system 12FC answered Polling: not an NFC Forum Type 3 Tag.
        case noNDEF
        /// The Attribute Information Block's checksum is not the sum of its bytes 0–13.
        case checksumMismatch(stored: Int, computed: Int)
        /// Ver's major version is not 1.
        case unsupportedVersion(UInt8)
        /// Nbr or Nbw is 0, or Ln exceeds Nmaxb × 16.
        case attributeInvalid
        /// WriteF is `0F`: a write was interrupted; readers do not read the message.
        case writeInProgress
        /// RWFlag is `00`.
        case readOnly
        /// The message does not fit: its length and Nmaxb × 16.
        case messageTooLong(length: Int, maximum: Int)
        /// The card answered Check or Update with an error in its status flags.
        case status(sf1: UInt8, sf2: UInt8)
        /// The answer is not the command's (length, response code or IDm).
        case malformedResponse
        /// A write failed after the attribute block's WriteF was set: the blocks written.
        case writeInterrupted(writtenBlocks: [Int], cause: TagCommunicationError)
        /// The transport failed.
        case communication(TagCommunicationError)
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String = "") {
        self.code = code
        self.reason = reason
    }

    public static func == (lhs: Type3TagError, rhs: Type3TagError) -> Bool { lhs.code == rhs.code }

    public var description: String {
        let what: String =
            switch code {
            case .noNDEF: "no system 12FC answered Polling (not an NFC Forum Type 3 Tag)"
            case .checksumMismatch(let s, let c):
                "attribute block checksum 0x\(String(s, radix: 16)) is not the sum 0x\(String(c, radix: 16))"
            case .unsupportedVersion(let v): "unsupported Type 3 mapping version \(v >> 4).\(v & 0xF)"
            case .attributeInvalid: "attribute block invalid (Nbr, Nbw or Ln)"
            case .writeInProgress: "WriteF is 0F: a write did not finish"
            case .readOnly: "tag is read-only (RWFlag 00)"
            case .messageTooLong(let l, let m): "NDEF message of \(l) bytes exceeds the maximum \(m)"
            case .status(let a, let b): "status flags \([a, b].hexString(separator: " "))"
            case .malformedResponse: "malformed response"
            case .writeInterrupted(let blocks, let cause):
                "write interrupted by \(cause) after writing blocks [\(blocks.map(String.init).joined(separator: ", "))]"
            case .communication(let e): "communication failed: \(e)"
            }
        return reason.isEmpty ? what : what + ": " + reason
    }
}

/// The Type 3 Tag Attribute Information Block (block 0 of system 12FC, 16 bytes).
public struct Type3AttributeInformation: Sendable, Hashable {
    /// Ver: mapping version (`10` = 1.0).
    public var version: UInt8
    /// Nbr: most blocks one Check reads.
    public var nbr: Int
    /// Nbw: most blocks one Update writes.
    public var nbw: Int
    /// Nmaxb: blocks available for NDEF data.
    public var nmaxb: Int
    /// WriteF: `00` done, `0F` in progress.
    public var writeFlag: UInt8
    /// RWFlag: `00` read-only, `01` read/write.
    public var rwFlag: UInt8
    /// Ln: NDEF message length in bytes.
    public var length: Int

    public init(version: UInt8, nbr: Int, nbw: Int, nmaxb: Int, writeFlag: UInt8, rwFlag: UInt8, length: Int) {
        self.version = version
        self.nbr = nbr
        self.nbw = nbw
        self.nmaxb = nmaxb
        self.writeFlag = writeFlag
        self.rwFlag = rwFlag
        self.length = length
    }

    /// Parses block 0, checking the checksum (bytes 14–15 = the sum of bytes 0–13).
    public init(block: [UInt8]) throws(Type3TagError) {
        guard block.count == 16 else {
            throw Type3TagError(.malformedResponse, "attribute block of \(block.count) bytes")
        }
        let stored = Int(block[14]) << 8 | Int(block[15])
        let computed = block[0..<14].reduce(0) { $0 + Int($1) }
        guard stored == computed else { throw Type3TagError(.checksumMismatch(stored: stored, computed: computed)) }
        self.init(
            version: block[0], nbr: Int(block[1]), nbw: Int(block[2]), nmaxb: Int(block[3]) << 8 | Int(block[4]),
            writeFlag: block[9], rwFlag: block[10],
            length: Int(block[11]) << 16 | Int(block[12]) << 8 | Int(block[13]))
    }

    /// The 16 bytes, checksum included.
    public var bytes: [UInt8] {
        var b: [UInt8] = [
            version, UInt8(nbr & 0xFF), UInt8(nbw & 0xFF), UInt8(nmaxb >> 8 & 0xFF), UInt8(nmaxb & 0xFF), 0, 0, 0, 0,
            writeFlag, rwFlag, UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF),
        ]
        let sum = b.reduce(0) { $0 + Int($1) }
        b += [UInt8(sum >> 8 & 0xFF), UInt8(sum & 0xFF)]
        return b
    }

    /// The most NDEF bytes the tag holds: Nmaxb × 16.
    public var maximumNDEFMessageSize: Int { nmaxb * 16 }
    public var isWritable: Bool { rwFlag == 0x01 }
}

/// The NFC Forum Type 3 Tag procedures over a ``/NFCBase/FeliCaTransport``.
///
/// Read: Polling of system 12FC (Request Code 0; silence → ``Type3TagError/Code/noNDEF``),
/// Check of block 0 through service 000B, the attribute checks (checksum, Ver major 1,
/// Nbr ≥ 1, Ln ≤ Nmaxb × 16, WriteF 00), then Check of blocks 1…⌈Ln/16⌉ in chunks of Nbr.
/// Write: the attribute block with WriteF `0F`, the data blocks in chunks of Nbw through
/// service 0009, then the attribute block with WriteF `00` and the new Ln.
public struct Type3TagReader {
    public let transport: any FeliCaTransport
    public init(transport: any FeliCaTransport) { self.transport = transport }

    /// NDEF's system.
    public static let ndefSystemCode: [UInt8] = [0x12, 0xFC]
    static let readService: [UInt8] = [0x0B, 0x00]
    static let writeService: [UInt8] = [0x09, 0x00]

    private func exchange(_ frame: [UInt8]) throws(Type3TagError) -> [UInt8] {
        do { return try transport.exchange(frame) } catch let e as TagCommunicationError {
            throw Type3TagError(.communication(e))
        } catch { throw Type3TagError(.communication(.readerFailure("\(error)"))) }
    }

    /// Polls system 12FC and returns the NDEF system's IDm and PMm.
    public func pollNDEFSystem() throws(Type3TagError) -> (idm: [UInt8], pmm: [UInt8]) {
        let answer: [UInt8]
        do { answer = try transport.exchange([0x06, 0x00, 0x12, 0xFC, 0x00, 0x00]) } catch TagCommunicationError
            .noResponse
        {
            throw Type3TagError(.noNDEF)
        } catch let e as TagCommunicationError { throw Type3TagError(.communication(e)) } catch {
            throw Type3TagError(.communication(.readerFailure("\(error)")))
        }
        guard answer.count >= 18, answer[1] == 0x01 else { throw Type3TagError(.malformedResponse, "Polling") }
        return (Array(answer[2..<10]), Array(answer[10..<18]))
    }

    /// Check (06) of `blocks` through service 000B: 16 bytes a block.
    public func check(idm: [UInt8], blocks: [Int]) throws(Type3TagError) -> [UInt8] {
        var frame: [UInt8] = [0x06] + idm + [0x01] + Self.readService + [UInt8(blocks.count)]
        for b in blocks { frame += Self.blockElement(b) }
        frame.insert(UInt8(frame.count + 1), at: 0)
        let r = try exchange(frame)
        guard r.count >= 12, Int(r[0]) == r.count, r[1] == 0x07, Array(r[2..<10]) == idm else {
            throw Type3TagError(.malformedResponse, "Check answered \(r.hexString())")
        }
        guard r[10] == 0x00 else { throw Type3TagError(.status(sf1: r[10], sf2: r[11])) }
        guard r.count == 13 + 16 * blocks.count, Int(r[12]) == blocks.count else {
            throw Type3TagError(.malformedResponse, "Check answered \(r.count) bytes for \(blocks.count) blocks")
        }
        return Array(r[13...])
    }

    /// Update (08) of `blocks` through service 0009 with `data` (16 bytes a block).
    public func update(idm: [UInt8], blocks: [Int], data: [UInt8]) throws(Type3TagError) {
        var frame: [UInt8] = [0x08] + idm + [0x01] + Self.writeService + [UInt8(blocks.count)]
        for b in blocks { frame += Self.blockElement(b) }
        frame += data
        frame.insert(UInt8(frame.count + 1), at: 0)
        let r = try exchange(frame)
        guard r.count == 12, r[0] == 0x0C, r[1] == 0x09, Array(r[2..<10]) == idm else {
            throw Type3TagError(.malformedResponse, "Update answered \(r.hexString())")
        }
        guard r[10] == 0x00 else { throw Type3TagError(.status(sf1: r[10], sf2: r[11])) }
    }

    /// A block-list element for entry 0 of the service list: `80 bb` below 256, else the
    /// 3-byte form `00 lo hi` (little-endian, nfcpy `BlockCode`).
    static func blockElement(_ b: Int) -> [UInt8] {
        b < 256 ? [0x80, UInt8(b)] : [0x00, UInt8(b & 0xFF), UInt8(b >> 8 & 0xFF)]
    }

    /// The attribute block of the NDEF system and that system's IDm.
    public func readAttribute() throws(Type3TagError) -> (idm: [UInt8], attribute: Type3AttributeInformation) {
        let (idm, _) = try pollNDEFSystem()
        let a = try Type3AttributeInformation(block: check(idm: idm, blocks: [0]))
        guard a.version >> 4 == 1 else { throw Type3TagError(.unsupportedVersion(a.version)) }
        guard a.nbr >= 1, a.nbw >= 1, a.length <= a.maximumNDEFMessageSize else {
            throw Type3TagError(.attributeInvalid)
        }
        return (idm, a)
    }

    /// The NDEF message (empty for Ln = 0).
    public func readNDEF() throws(Type3TagError) -> [UInt8] {
        let (idm, a) = try readAttribute()
        guard a.writeFlag == 0x00 else { throw Type3TagError(.writeInProgress) }
        let count = (a.length + 15) / 16
        var data: [UInt8] = []
        var next = 1
        while next <= count {
            let chunk = Array(next...min(count, next + a.nbr - 1))
            data += try check(idm: idm, blocks: chunk)
            next += chunk.count
        }
        return Array(data.prefix(a.length))
    }

    /// Writes `message` in the T3T order: WriteF 0F, data, WriteF 00 with the new Ln.
    public func writeNDEF(_ message: [UInt8]) throws(Type3TagError) {
        let (idm, a) = try readAttribute()
        guard a.isWritable else { throw Type3TagError(.readOnly) }
        guard message.count <= a.maximumNDEFMessageSize else {
            throw Type3TagError(.messageTooLong(length: message.count, maximum: a.maximumNDEFMessageSize))
        }
        var start = a
        start.writeFlag = 0x0F
        try update(idm: idm, blocks: [0], data: start.bytes)
        var written: [Int] = [0]
        let padded = message + [UInt8](repeating: 0, count: (16 - message.count % 16) % 16)
        let count = padded.count / 16
        var next = 1
        do {
            while next <= count {
                let chunk = Array(next...min(count, next + a.nbw - 1))
                let bytes = Array(padded[((next - 1) * 16)..<((next - 1 + chunk.count) * 16)])
                try update(idm: idm, blocks: chunk, data: bytes)
                written += chunk
                next += chunk.count
            }
            var done = a
            done.writeFlag = 0x00
            done.length = message.count
            try update(idm: idm, blocks: [0], data: done.bytes)
        } catch {
            if case .communication(let cause) = error.code {
                throw Type3TagError(.writeInterrupted(writtenBlocks: written, cause: cause))
            }
            throw error
        }
    }
}
