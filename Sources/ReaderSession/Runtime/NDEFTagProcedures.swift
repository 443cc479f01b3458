import NFCTags

/// Core NFC `NFCNDEFStatus`.
public enum NFCNDEFStatus: Int, Sendable, Hashable {
    case notSupported = 1
    case readWrite = 2
    case readOnly = 3
}

/// The NDEF procedures the runtime runs over a ``TagConnection``: status, read, write.
/// Errors are ``NFCReaderError`` or `TagCommunicationError` (mapped by the runtime).
public protocol NDEFTagProcedures: Sendable {
    /// Core NFC `queryNDEFStatus`: the status and the capacity in bytes of the NDEF message.
    func queryNDEFStatus(_ connection: TagConnection) throws -> (status: NFCNDEFStatus, capacity: Int)
    /// Reads the NDEF message: `.message`, `.empty` or `.notNDEF` (never `.failed`; throws).
    func readNDEF(_ connection: TagConnection) throws -> NDEFReadOutcome
    /// Writes `message` (raw NDEF bytes). 400 read-only, 402 too large, 401 update failed.
    func writeNDEF(_ message: NDEFMessageBytes, _ connection: TagConnection) throws
}

/// A small built-in implementation of the NFC Forum procedures, used until NFCTags'
/// `Type2TagReader`/`Type4TagReader` are wired in:
/// - Type 2 (NFC Forum T2T 1.0 §6): CC in page 3 (`E1`, version, size/8, access), TLVs from
///   page 4 (NULL `00`, Lock/Memory Control `01`/`02` skipped, NDEF `03`, Terminator `FE`);
///   writing puts `03 L message FE` at page 4.
/// - Type 4 (NFC Forum T4T 1.0 §5.4): SELECT `D2760000850101`, SELECT CC `E103`, READ BINARY
///   of the CC, SELECT the NDEF file, NLEN then the message in chunks of MLe; writing sets
///   NLEN 0, the message, then NLEN.
public struct BasicNDEFProcedures: NDEFTagProcedures {
    public init() {}

    public func queryNDEFStatus(_ connection: TagConnection) throws -> (status: NFCNDEFStatus, capacity: Int) {
        switch connection {
        case .type2(let t):
            guard let cc = try type2CC(t) else { return (.notSupported, 0) }
            return (cc.writable ? .readWrite : .readOnly, max(0, cc.dataSize - 4))
        case .iso7816(let t):
            guard let cc = try type4CC(t) else { return (.notSupported, 0) }
            return (cc.writable ? .readWrite : .readOnly, max(0, cc.maxFile - 2))
        }
    }

    public func readNDEF(_ connection: TagConnection) throws -> NDEFReadOutcome {
        switch connection {
        case .type2(let t):
            guard let cc = try type2CC(t) else { return .notNDEF }
            var data: [UInt8] = []
            var page: UInt8 = 4
            func need(_ n: Int) throws -> Bool {
                while data.count < n {
                    guard data.count < cc.dataSize else { return false }
                    let chunk = try t.read(page: page)
                    guard chunk.count == 16 else { throw TagCommunicationError.malformedResponse("READ returned \(chunk.count) bytes") }
                    data += chunk
                    page &+= 4
                }
                return true
            }
            var i = 0
            while try need(i + 1) {
                let tag = data[i]
                if tag == 0x00 { i += 1; continue }
                if tag == 0xFE { return .notNDEF }
                guard try need(i + 2) else { return .notNDEF }
                var length = Int(data[i + 1])
                var header = 2
                if length == 0xFF {
                    guard try need(i + 4) else { return .notNDEF }
                    length = Int(data[i + 2]) << 8 | Int(data[i + 3])
                    header = 4
                }
                if tag == 0x03 {
                    if length == 0 { return .empty }
                    guard i + header + length <= cc.dataSize, try need(i + header + length) else { return .notNDEF }
                    return .message(NDEFMessageBytes(Array(data[(i + header)..<(i + header + length)])))
                }
                i += header + length
            }
            return .notNDEF
        case .iso7816(let t):
            guard let cc = try type4CC(t) else { return .notNDEF }
            guard try selectFile(t, cc.fileID) else { return .notNDEF }
            let nlenBytes = try readBinary(t, offset: 0, count: 2)
            guard nlenBytes.count == 2 else { return .notNDEF }
            let nlen = Int(nlenBytes[0]) << 8 | Int(nlenBytes[1])
            if nlen == 0 { return .empty }
            guard nlen <= cc.maxFile - 2 else { return .notNDEF }
            var message: [UInt8] = []
            while message.count < nlen {
                let n = min(cc.mle, nlen - message.count, 255)
                let part = try readBinary(t, offset: 2 + message.count, count: n)
                guard !part.isEmpty else { throw NFCReaderError(.readerTransceiveErrorTagResponseError) }
                message += part
            }
            return .message(NDEFMessageBytes(Array(message.prefix(nlen))))
        }
    }

    public func writeNDEF(_ message: NDEFMessageBytes, _ connection: TagConnection) throws {
        let m = message.bytes
        switch connection {
        case .type2(let t):
            guard let cc = try type2CC(t) else { throw NFCReaderError(.ndefReaderSessionErrorTagNotWritable) }
            guard cc.writable else { throw NFCReaderError(.ndefReaderSessionErrorTagNotWritable) }
            var tlv: [UInt8] = m.count < 0xFF ? [0x03, UInt8(m.count)] : [0x03, 0xFF, UInt8(m.count >> 8), UInt8(m.count & 0xFF)]
            tlv += m
            if tlv.count < cc.dataSize { tlv.append(0xFE) }
            guard tlv.count <= cc.dataSize else { throw NFCReaderError(.ndefReaderSessionErrorTagSizeTooSmall) }
            while tlv.count % 4 != 0 { tlv.append(0x00) }
            var page: UInt8 = 4
            var i = 0
            while i < tlv.count {
                do { try t.write(page: page, data: Array(tlv[i..<(i + 4)])) } catch TagCommunicationError.nak {
                    throw NFCReaderError(.ndefReaderSessionErrorTagUpdateFailure)
                }
                page &+= 1
                i += 4
            }
        case .iso7816(let t):
            guard let cc = try type4CC(t), cc.writable else { throw NFCReaderError(.ndefReaderSessionErrorTagNotWritable) }
            guard m.count + 2 <= cc.maxFile else { throw NFCReaderError(.ndefReaderSessionErrorTagSizeTooSmall) }
            guard try selectFile(t, cc.fileID) else { throw NFCReaderError(.ndefReaderSessionErrorTagUpdateFailure) }
            try updateBinary(t, offset: 0, [0, 0])
            var off = 0
            while off < m.count {
                let n = min(cc.mlc, m.count - off, 255)
                try updateBinary(t, offset: 2 + off, Array(m[off..<(off + n)]))
                off += n
            }
            try updateBinary(t, offset: 0, [UInt8(m.count >> 8), UInt8(m.count & 0xFF)])
        }
    }

    // MARK: Type 2

    private struct Type2CC { var dataSize: Int; var writable: Bool }

    private func type2CC(_ t: any Type2TagTransport) throws -> Type2CC? {
        let p = try t.read(page: 3)
        guard p.count >= 4, p[0] == 0xE1, p[1] >> 4 == 1 else { return nil }
        return Type2CC(dataSize: Int(p[2]) * 8, writable: p[3] & 0x0F == 0)
    }

    // MARK: Type 4

    private struct Type4CC { var mle: Int; var mlc: Int; var fileID: [UInt8]; var maxFile: Int; var writable: Bool }

    private func type4CC(_ t: any APDUTransport) throws -> Type4CC? {
        let app: [UInt8] = [0x00, 0xA4, 0x04, 0x00, 0x07, 0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01, 0x00]
        guard Self.ok(try t.transmit(app)) else { return nil }
        guard try selectFile(t, [0xE1, 0x03]) else { return nil }
        let cc = try readBinary(t, offset: 0, count: 15)
        guard cc.count >= 15, cc[7] == 0x04, cc[8] >= 6 else { return nil }
        let mle = max(1, Int(cc[3]) << 8 | Int(cc[4]))
        let mlc = max(1, Int(cc[5]) << 8 | Int(cc[6]))
        let maxFile = Int(cc[11]) << 8 | Int(cc[12])
        return Type4CC(mle: mle, mlc: mlc, fileID: [cc[9], cc[10]], maxFile: maxFile, writable: cc[14] == 0x00)
    }

    private func selectFile(_ t: any APDUTransport, _ id: [UInt8]) throws -> Bool {
        Self.ok(try t.transmit([0x00, 0xA4, 0x00, 0x0C, 0x02] + id))
    }

    private func readBinary(_ t: any APDUTransport, offset: Int, count: Int) throws -> [UInt8] {
        let r = try t.transmit([0x00, 0xB0, UInt8((offset >> 8) & 0x7F), UInt8(offset & 0xFF), UInt8(count & 0xFF)])
        guard Self.ok(r) else { throw NFCReaderError(.readerTransceiveErrorTagResponseError, detail: "READ BINARY \(Array(r.suffix(2)).hexString())") }
        return Array(r.dropLast(2))
    }

    private func updateBinary(_ t: any APDUTransport, offset: Int, _ data: [UInt8]) throws {
        let r = try t.transmit([0x00, 0xD6, UInt8((offset >> 8) & 0x7F), UInt8(offset & 0xFF), UInt8(data.count)] + data)
        guard Self.ok(r) else { throw NFCReaderError(.ndefReaderSessionErrorTagUpdateFailure, detail: "UPDATE BINARY \(Array(r.suffix(2)).hexString())") }
    }

    private static func ok(_ r: [UInt8]) -> Bool {
        r.count >= 2 && r[r.count - 2] == 0x90 && r[r.count - 1] == 0x00
    }
}
