public import NFCTags
import ReaderSession

/// Forwards READ and GET_VERSION to the tag; records WRITEs and answers them ACK.
public final class DryRunType2Transport: Type2TagTransport {
    public let base: any Type2TagTransport
    private(set) var writes: [(page: UInt8, data: [UInt8])] = []
    public init(base: any Type2TagTransport) { self.base = base }
    public func read(page: UInt8) throws -> [UInt8] { try base.read(page: page) }
    public func write(page: UInt8, data: [UInt8]) throws { writes.append((page, data)) }
    public func getVersion() throws -> [UInt8]? { try base.getVersion() }
    public func reactivate() throws { try base.reactivate() }
    public func fastRead(from first: UInt8, to last: UInt8) throws -> [UInt8] {
        try base.fastRead(from: first, to: last)
    }
    public var fastReadPageLimit: Int { base.fastReadPageLimit }
    /// A dry run sends no raw frame: only READ and GET_VERSION reach the tag.
    public func transceive(_ frame: [UInt8]) throws -> Type2Answer {
        guard frame.first == 0x30 || frame.first == 0x60 else { throw TagCommunicationError.unsupportedCommand(frame) }
        return try base.transceive(frame)
    }
}

/// Forwards every APDU except UPDATE BINARY (`D6`), which it records and answers `90 00`.
public final class DryRunAPDUTransport: APDUTransport {
    public let base: any APDUTransport
    private(set) var updates: [[UInt8]] = []
    public init(base: any APDUTransport) { self.base = base }
    public var maximumResponseLength: Int { base.maximumResponseLength }
    public func transmit(_ command: [UInt8]) throws -> [UInt8] {
        if command.count >= 2, command[1] == 0xD6 {
            updates.append(command)
            return [0x90, 0x00]
        }
        return try base.transmit(command)
    }
}

extension TagConnection {
    public var isFeliCa: Bool {
        if case .felica = self { return true }
        return false
    }
}

/// The Type 3 / Type 5 NDEF procedures over a connection whose write commands (FeliCa
/// Update `08`, ISO 15693 WRITE `21`/`24`/`31`/`34`) are recorded, and sent only when
/// `send` (otherwise answered as a tag accepting them: a dry run).
public final class VicinityWriteRecorder: FeliCaTransport, ISO15693Transport {
    public let connection: TagConnection
    public let send: Bool
    private(set) var writes: [[UInt8]] = []

    public init(_ connection: TagConnection, send: Bool) {
        self.connection = connection
        self.send = send
    }

    public func exchange(_ frame: [UInt8]) throws -> [UInt8] {
        guard case .felica(let t) = connection else { throw TagCommunicationError.unsupportedCommand(frame) }
        guard frame.count >= 10, frame[1] == 0x08 else { return try t.exchange(frame) }
        if !send {
            writes.append(frame)
            return [0x0C, 0x09] + Array(frame[2..<10]) + [0x00, 0x00]
        }
        let r = try t.exchange(frame)
        writes.append(frame)
        return r
    }

    public func request(_ request: [UInt8]) throws -> [UInt8] {
        guard case .iso15693(let t) = connection else { throw TagCommunicationError.unsupportedCommand(request) }
        guard request.count >= 2, [0x21, 0x24, 0x31, 0x34].contains(request[1]) else { return try t.request(request) }
        if !send {
            writes.append(request)
            return [0x00]
        }
        let r = try t.request(request)
        writes.append(request)
        return r
    }

    public func writeNDEF(_ message: [UInt8]) throws {
        if connection.isFeliCa {
            try Type3TagReader(transport: self).writeNDEF(message)
        } else {
            try Type5TagReader(transport: self).writeNDEF(message)
        }
    }

    public func readNDEF() throws -> [UInt8] {
        if connection.isFeliCa { return try Type3TagReader(transport: self).readNDEF() }
        return try Type5TagReader(transport: self).readNDEF()
    }
}
