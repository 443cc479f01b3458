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

/// The NFC Forum procedures over a ``TagConnection`` (Type 2 here until NFCTags'
/// `Type2TagReader` lands):
/// - Type 2 (NFC Forum T2T 1.0 §6): CC in page 3 (`E1`, version, size/8, access), TLVs from
///   page 4 (NULL `00`, Lock/Memory Control `01`/`02` skipped, NDEF `03`, Terminator `FE`);
///   writing puts `03 L message FE` at page 4.
/// - Type 4: NFCTags' `Type4TagReader` (NFC Forum T4T 2.0/3.0 §5.4); its errors map as
///   `Type4TagError` documents (400 read-only, 402 too large, transport → 100–105).
public struct BasicNDEFProcedures: NDEFTagProcedures {
    public init() {}

    public func queryNDEFStatus(_ connection: TagConnection) throws -> (status: NFCNDEFStatus, capacity: Int) {
        switch connection {
        case .type2(let t):
            guard let cc = try type2CC(t) else { return (.notSupported, 0) }
            return (cc.writable ? .readWrite : .readOnly, max(0, cc.dataSize - 4))
        case .iso7816(let t):
            guard let cc = try Self.type4Detect(t) else { return (.notSupported, 0) }
            return (cc.isWritable ? .readWrite : .readOnly, cc.maximumNDEFMessageSize)
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
            guard let cc = try Self.type4Detect(t) else { return .notNDEF }
            let bytes: [UInt8]
            do { bytes = try Self.t4Read(t, cc) } catch {
                throw Self.map(error, writing: false)
            }
            return bytes.isEmpty ? .empty : .message(NDEFMessageBytes(bytes))
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
            guard let cc = try Self.type4Detect(t) else { throw NFCReaderError(.ndefReaderSessionErrorTagNotWritable, detail: "no NDEF application") }
            do { try Self.t4Write(t, m, cc) } catch {
                throw Self.map(error, writing: true)
            }
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

    /// NDEF detection; `nil` when the target has no NDEF application or CC (not NDEF).
    private static func type4Detect(_ t: any APDUTransport) throws -> Type4CapabilityContainer? {
        do { return try t4Detect(t) } catch {
            switch error.code {
            case .communication(let e): throw NFCReaderError(e)
            case .applicationNotFound, .fileNotFound, .ccInvalid, .unsupportedVersion: return nil
            default: throw map(error, writing: false)
            }
        }
    }

    private static func t4Detect<T: APDUTransport>(_ t: T) throws(Type4TagError) -> Type4CapabilityContainer {
        try Type4TagReader(transport: t).detect()
    }

    private static func t4Read<T: APDUTransport>(_ t: T, _ cc: Type4CapabilityContainer) throws(Type4TagError) -> [UInt8] {
        try Type4TagReader(transport: t).readNDEF(capabilityContainer: cc)
    }

    private static func t4Write<T: APDUTransport>(_ t: T, _ m: [UInt8], _ cc: Type4CapabilityContainer) throws(Type4TagError) {
        try Type4TagReader(transport: t).writeNDEF(m, capabilityContainer: cc)
    }

    private static func map(_ e: Type4TagError, writing: Bool) -> NFCReaderError {
        switch e.code {
        case .communication(let c): NFCReaderError(c)
        case .readOnly: NFCReaderError(.ndefReaderSessionErrorTagNotWritable, detail: e.reason)
        case .messageTooLarge: NFCReaderError(.ndefReaderSessionErrorTagSizeTooSmall, detail: e.reason)
        default:
            NFCReaderError(writing ? .ndefReaderSessionErrorTagUpdateFailure : .readerTransceiveErrorTagResponseError,
                           detail: e.description)
        }
    }
}
