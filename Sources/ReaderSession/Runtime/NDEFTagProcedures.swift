public import NFCTags

/// Core NFC `NFCNDEFStatus`.
public enum NFCNDEFStatus: UInt, Sendable, Hashable {
    case notSupported = 1
    case readWrite = 2
    case readOnly = 3
}

/// The NDEF procedures the runtime runs over a ``/NFCBase/TagConnection``: status, read, write.
/// Errors are ``NFCReaderError`` or `TagCommunicationError` (mapped by the runtime).
public protocol NDEFTagProcedures: Sendable {
    /// Core NFC `queryNDEFStatus`: the status and the capacity in bytes of the NDEF message.
    func queryNDEFStatus(_ connection: TagConnection) throws -> (status: NFCNDEFStatus, capacity: Int)
    /// Reads the NDEF message: `.message`, `.empty` or `.notNDEF` (never `.failed`; throws).
    func readNDEF(_ connection: TagConnection) throws -> NDEFReadOutcome
    /// Writes `message` (raw NDEF bytes). 400 read-only, 402 too large, 401 update failed.
    func writeNDEF(_ message: NDEFMessageBytes, _ connection: TagConnection) throws
}

/// The NFC Forum procedures from NFCTags: ``/NFCTags/Type2TagReader`` (T2T 1.0: CC, TLV walk with
/// Lock/Memory Control areas skipped, safe-order writes, lock bits honoured) and
/// ``/NFCTags/Type4TagReader`` (T4T 2.0/3.0, and 1.0 tags through the 1.0 application name: NDEF
/// application, CC file, NDEF file id from the CC, MLe/MLc-bounded reads and writes, ODO
/// past 7FFF).
///
/// Errors: a carrier failure is rethrown as the `TagCommunicationError` it is (the runtime
/// maps it: 100 lost, 102 response error, 105 too long); a tag without an NDEF area reads
/// as `.notNDEF`; a CC, TLV or length that lies fails with 102; writes fail with 400
/// (read-only or locked), 402 (too large) or 401 (anything else; a Type 2 write cut short
/// names the pages it wrote in the error's detail).
public struct NFCForumNDEFProcedures: NDEFTagProcedures {
    public init() {}

    public func queryNDEFStatus(_ connection: TagConnection) throws -> (status: NFCNDEFStatus, capacity: Int) {
        switch connection {
        case .type2(let t):
            let reader = Type2TagReader(transport: t)
            let layout: Type2TagLayout
            do { layout = try reader.readLayout() } catch { return try Self.notNDEF(error, status: (.notSupported, 0)) }
            let locked = (try? reader.lockedPages()).map { !$0.isEmpty } ?? false
            let writable = layout.capabilityContainer.isWritable && !locked
            return (writable ? .readWrite : .readOnly, layout.maximumNDEFMessageSize)
        case .iso7816(let t):
            let reader = Type4TagReader(transport: AnyAPDUTransport(t))
            let cc: Type4CapabilityContainer
            do { cc = try reader.detect() } catch { return try Self.notNDEF(error, status: (.notSupported, 0)) }
            return (cc.writeAccess == 0x00 ? .readWrite : .readOnly, cc.maximumNDEFMessageSize)
        case .felica(let t):
            let a: Type3AttributeInformation
            do { a = try Type3TagReader(transport: t).readAttribute().attribute } catch {
                return try Self.notNDEF(error, status: (.notSupported, 0))
            }
            return (a.isWritable ? .readWrite : .readOnly, a.maximumNDEFMessageSize)
        case .iso15693(let t):
            let layout: Type5TagReader.Layout
            do { layout = try Type5TagReader(transport: t).readLayout() } catch {
                return try Self.notNDEF(error, status: (.notSupported, 0))
            }
            return (
                layout.capabilityContainer.isWritable ? .readWrite : .readOnly, layout.maximumNDEFMessageSize
            )
        }
    }

    public func readNDEF(_ connection: TagConnection) throws -> NDEFReadOutcome {
        let bytes: [UInt8]
        switch connection {
        case .type2(let t):
            do { bytes = try Type2TagReader(transport: t).readNDEF() } catch {
                if case .noNDEF = error.code { return .notNDEF }
                return try Self.notNDEF(error, status: .notNDEF)
            }
        case .iso7816(let t):
            do { bytes = try Type4TagReader(transport: AnyAPDUTransport(t)).readNDEF() } catch {
                return try Self.notNDEF(error, status: .notNDEF)
            }
        case .felica(let t):
            do { bytes = try Type3TagReader(transport: t).readNDEF() } catch {
                return try Self.notNDEF(error, status: .notNDEF)
            }
        case .iso15693(let t):
            do { bytes = try Type5TagReader(transport: t).readNDEF() } catch {
                return try Self.notNDEF(error, status: .notNDEF)
            }
        }
        return bytes.isEmpty ? .empty : .message(NDEFMessageBytes(bytes))
    }

    public func writeNDEF(_ message: NDEFMessageBytes, _ connection: TagConnection) throws {
        switch connection {
        case .type2(let t):
            do { try Type2TagReader(transport: t).writeNDEF(message.bytes) } catch {
                switch error.code {
                case .communication(let e): throw e
                case .readOnly, .pagesLocked:
                    throw NFCReaderError(.ndefReaderSessionErrorTagNotWritable, detail: error.description)
                case .messageTooLong:
                    throw NFCReaderError(.ndefReaderSessionErrorTagSizeTooSmall, detail: error.description)
                case .writeInterrupted(_, let cause) where cause == .tagLost || cause == .noResponse:
                    throw NFCReaderError(.readerTransceiveErrorTagConnectionLost, detail: error.description)
                case .ccInvalid, .unsupportedVersion, .noNDEF:
                    throw NFCReaderError(.ndefReaderSessionErrorTagNotWritable, detail: error.description)
                default: throw NFCReaderError(.ndefReaderSessionErrorTagUpdateFailure, detail: error.description)
                }
            }
        case .iso7816(let t):
            do { try Type4TagReader(transport: AnyAPDUTransport(t)).writeNDEF(message.bytes) } catch {
                switch error.code {
                case .communication(let e): throw e
                case .readOnly, .accessDenied, .applicationNotFound, .ccInvalid, .unsupportedVersion, .fileNotFound:
                    throw NFCReaderError(.ndefReaderSessionErrorTagNotWritable, detail: error.description)
                case .messageTooLarge:
                    throw NFCReaderError(.ndefReaderSessionErrorTagSizeTooSmall, detail: error.description)
                default: throw NFCReaderError(.ndefReaderSessionErrorTagUpdateFailure, detail: error.description)
                }
            }
        case .felica(let t):
            do { try Type3TagReader(transport: t).writeNDEF(message.bytes) } catch {
                switch error.code {
                case .communication(let e): throw e
                case .readOnly, .noNDEF, .unsupportedVersion, .attributeInvalid, .checksumMismatch:
                    throw NFCReaderError(.ndefReaderSessionErrorTagNotWritable, detail: error.description)
                case .messageTooLong:
                    throw NFCReaderError(.ndefReaderSessionErrorTagSizeTooSmall, detail: error.description)
                case .writeInterrupted(_, let cause) where cause == .tagLost || cause == .noResponse:
                    throw NFCReaderError(.readerTransceiveErrorTagConnectionLost, detail: error.description)
                default: throw NFCReaderError(.ndefReaderSessionErrorTagUpdateFailure, detail: error.description)
                }
            }
        case .iso15693(let t):
            do { try Type5TagReader(transport: t).writeNDEF(message.bytes) } catch {
                switch error.code {
                case .communication(let e): throw e
                case .readOnly, .ccInvalid, .unsupportedVersion:
                    throw NFCReaderError(.ndefReaderSessionErrorTagNotWritable, detail: error.description)
                case .messageTooLong:
                    throw NFCReaderError(.ndefReaderSessionErrorTagSizeTooSmall, detail: error.description)
                default: throw NFCReaderError(.ndefReaderSessionErrorTagUpdateFailure, detail: error.description)
                }
            }
        }
    }

    /// A tag without an NDEF area answers `status`; a carrier failure is rethrown; a lying
    /// CC, TLV or length is 102.
    private static func notNDEF<T>(_ error: Type2TagError, status: T) throws -> T {
        switch error.code {
        case .communication(let e): throw e
        case .ccInvalid, .unsupportedVersion, .noNDEF: return status
        default: throw NFCReaderError(.readerTransceiveErrorTagResponseError, detail: error.description)
        }
    }

    private static func notNDEF<T>(_ error: Type3TagError, status: T) throws -> T {
        switch error.code {
        case .communication(let e): throw e
        case .noNDEF, .unsupportedVersion: return status
        default: throw NFCReaderError(.readerTransceiveErrorTagResponseError, detail: error.description)
        }
    }

    private static func notNDEF<T>(_ error: Type5TagError, status: T) throws -> T {
        switch error.code {
        case .communication(let e): throw e
        case .ccInvalid, .unsupportedVersion, .noNDEF: return status
        default: throw NFCReaderError(.readerTransceiveErrorTagResponseError, detail: error.description)
        }
    }

    private static func notNDEF<T>(_ error: Type4TagError, status: T) throws -> T {
        switch error.code {
        case .communication(let e): throw e
        case .applicationNotFound, .ccInvalid, .unsupportedVersion, .fileNotFound: return status
        default: throw NFCReaderError(.readerTransceiveErrorTagResponseError, detail: error.description)
        }
    }
}

/// `Type4TagReader` is generic over a concrete transport; this carries an existential one.
struct AnyAPDUTransport: APDUTransport {
    let base: any APDUTransport
    init(_ base: any APDUTransport) { self.base = base }
    func transmit(_ command: [UInt8]) throws -> [UInt8] { try base.transmit(command) }
    var maximumResponseLength: Int { base.maximumResponseLength }
}
