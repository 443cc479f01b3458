public import NFCTags

/// A Type 2 Tag over a libnfc device and its selected ISO 14443A target.
///
/// Every command goes raw (easy framing and chip CRC off, as `nfc-mfultralight` does for
/// GET_VERSION), with the CRC_A appended and checked here, so a 4-bit NAK (one byte
/// back) is told apart from silence (`NFC_ERFTRANS`). ``reactivate()`` re-selects the tag
/// by UID with the chip's framing back on. Errors are ``/NFCBase/TagCommunicationError``.
///
/// The device's owner puts the chip's framing and CRC back after use (``LibNFCReaderDevice``
/// does in `release`), and wakes the tag when ``leftTagIdle``.
public final class LibNFCType2Transport: Type2TagTransport {
    public let device: LibNFCDevice
    public private(set) var target: LibNFCTarget
    /// Per-command answer timeout.
    public var timeout: TransceiveTimeout
    /// The tag NAKed a command or did not answer one since the last (re)activation, so it
    /// is IDLE and answers nothing until it is selected again (NTAG21x datasheet §9.3; an
    /// Ultralight without GET_VERSION stays silent to `60` and goes IDLE the same way).
    public private(set) var leftTagIdle = false

    /// Switches the device to raw exchanges; throws ``/NFCBase/TagCommunicationError/readerFailure(_:)``.
    public init(device: LibNFCDevice, target: LibNFCTarget, timeout: TransceiveTimeout = .after(.milliseconds(100)))
        throws
    {
        self.device = device
        self.target = target
        self.timeout = timeout
        try rawMode(true)
    }

    private func rawMode(_ raw: Bool) throws {
        do {
            try device.setProperty(.easyFraming, !raw)
            try device.setProperty(.handleCRC, !raw)
        } catch let e as LibNFCError {
            throw e.tagCommunicationError
        }
    }

    /// One command frame out (CRC_A added), the answer back: `.ack`/`.nak` for a 4-bit
    /// answer, the data (CRC_A checked and removed) otherwise.
    func exchange(_ frame: [UInt8]) throws -> Type2Answer {
        let answer: [UInt8]
        do {
            answer = try device.transceive(frame + iso14443CRCA(frame), timeout: timeout)
        } catch let e as LibNFCError {
            let error = e.tagCommunicationError
            if error == .noResponse { leftTagIdle = true }
            throw error
        }
        switch answer.count {
        case 0:
            leftTagIdle = true
            throw TagCommunicationError.noResponse
        case 1:
            if answer[0] & 0x0F == 0x0A { return .ack }
            leftTagIdle = true
            return .nak(answer[0] & 0x0F)
        case 2: throw TagCommunicationError.malformedResponse("2-byte answer \(answer.hexString(separator: " "))")
        default:
            let data = Array(answer.dropLast(2))
            guard iso14443CRCA(data) == Array(answer.suffix(2)) else {
                throw TagCommunicationError.malformedResponse("CRC_A mismatch in \(answer.hexString(separator: " "))")
            }
            return .data(data)
        }
    }

    public func read(page: UInt8) throws -> [UInt8] {
        switch try exchange([0x30, page]) {
        case .data(let d) where d.count == 16: return d
        case .data(let d): throw TagCommunicationError.malformedResponse("READ returned \(d.count) bytes")
        case .nak(let v): throw TagCommunicationError.nak(v)
        case .ack: throw TagCommunicationError.malformedResponse("READ answered ACK")
        case .silent: throw TagCommunicationError.noResponse
        }
    }

    public func write(page: UInt8, data: [UInt8]) throws {
        guard data.count == 4 else { throw TagCommunicationError.packetTooLong(data.count) }
        switch try exchange([0xA2, page] + data) {
        case .ack: return
        case .nak(let v): throw TagCommunicationError.nak(v)
        case .data(let d): throw TagCommunicationError.malformedResponse("WRITE answered \(d.count) bytes")
        case .silent: throw TagCommunicationError.noResponse
        }
    }

    /// 65 pages: a PN53x answer carries at most 264 bytes after its TFI (UM0701-02 §6.2.1.3,
    /// extended information frame; libnfc 1.8.0 `PN53x_EXTENDED_FRAME__DATA_MAX_LEN`), of which
    /// the command code, the status byte and the tag's CRC_A (raw exchange) leave 260.
    public var fastReadPageLimit: Int { 65 }

    public func fastRead(from first: UInt8, to last: UInt8) throws -> [UInt8] {
        let count = 4 * (Int(last) - Int(first) + 1)
        guard count > 0, count / 4 <= fastReadPageLimit else { throw TagCommunicationError.packetTooLong(count) }
        switch try exchange([0x3A, first, last]) {
        case .data(let d) where d.count == count: return d
        case .data(let d):
            throw TagCommunicationError.malformedResponse("FAST_READ returned \(d.count) bytes, not \(count)")
        case .nak(let v): throw TagCommunicationError.nak(v)
        case .ack: throw TagCommunicationError.malformedResponse("FAST_READ answered ACK")
        case .silent: throw TagCommunicationError.noResponse
        }
    }

    public func getVersion() throws -> [UInt8]? {
        switch try exchange([0x60]) {
        case .data(let d) where d.count == 8: return d
        case .data(let d): throw TagCommunicationError.malformedResponse("GET_VERSION returned \(d.count) bytes")
        case .nak(let v): throw TagCommunicationError.nak(v)
        case .ack: throw TagCommunicationError.malformedResponse("GET_VERSION answered ACK")
        case .silent: throw TagCommunicationError.noResponse
        }
    }

    /// Any command frame, raw (`nfc_initiator_transceive_bytes` with the CRC_A added here):
    /// FAST_READ, READ_SIG, PWD_AUTH, READ_CNT… Silence is ``/NFCBase/Type2Answer/silent``.
    public func transceive(_ frame: [UInt8]) throws -> Type2Answer {
        do { return try exchange(frame) } catch TagCommunicationError.noResponse { return .silent }
    }

    /// Re-selects the tag by its UID (`nfc_initiator_select_passive_target`), then goes
    /// back to raw exchanges. `.tagLost` when it no longer answers.
    public func reactivate() throws {
        try rawMode(false)
        let found: LibNFCTarget?
        do {
            found = try device.selectPassiveTarget(target.modulation, uid: target.uid)
        } catch let e as LibNFCError {
            throw e.tagCommunicationError
        }
        guard let found else { throw TagCommunicationError.tagLost }
        target = found
        leftTagIdle = false
        try rawMode(true)
    }
}

/// ISO-DEP over a libnfc device: easy framing on, so the chip runs T=CL and one
/// `nfc_initiator_transceive_bytes` carries one APDU each way.
public final class LibNFCAPDUTransport: APDUTransport {
    public let device: LibNFCDevice
    public var timeout: TransceiveTimeout

    public init(device: LibNFCDevice, timeout: TransceiveTimeout = .after(.seconds(1))) throws {
        self.device = device
        self.timeout = timeout
        do { try device.setProperty(.easyFraming, true) } catch let e as LibNFCError { throw e.tagCommunicationError }
    }

    /// 256: a short Le. A PN53x answer carries 262 R-APDU bytes at most (264 after the TFI
    /// less the command code and status, UM0701-02 §6.2.1.3), so an extended Le would gain 4
    /// bytes and ask the card for extended-length support: short APDUs it is.
    public var maximumResponseLength: Int { 256 }

    /// At most 262 command bytes (PN53x InDataExchange); longer → `.packetTooLong`.
    public func transmit(_ command: [UInt8]) throws -> [UInt8] {
        guard command.count <= 262 else { throw TagCommunicationError.packetTooLong(command.count) }
        do {
            let answer = try device.transceive(command, timeout: timeout)
            guard answer.count >= 2 else {
                throw TagCommunicationError.malformedResponse("R-APDU of \(answer.count) bytes, no SW1 SW2")
            }
            return answer
        } catch let e as LibNFCError {
            throw e.tagCommunicationError
        }
    }
}

/// A FeliCa card through libnfc: `nfc_initiator_transceive_bytes` with easy framing on (a
/// PN53x InDataExchange), frames LEN first as JIS X 6319-4 has them; the chip adds the
/// preamble, SYNC and CRC. At most 254 bytes a frame; a timeout is `.noResponse` (the card
/// stays silent for a system it lacks or an IDm not its own).
public final class LibNFCFeliCaTransport: FeliCaTransport {
    public let device: LibNFCDevice
    public var timeout: TransceiveTimeout

    public init(device: LibNFCDevice, timeout: TransceiveTimeout = .after(.milliseconds(300))) throws {
        self.device = device
        self.timeout = timeout
        do {
            try device.setProperty(.easyFraming, true)
            try device.setProperty(.handleCRC, true)
        } catch let e as LibNFCError { throw e.tagCommunicationError }
    }

    public func exchange(_ frame: [UInt8]) throws -> [UInt8] {
        guard frame.count <= 254 else { throw TagCommunicationError.packetTooLong(frame.count) }
        do {
            let answer = try device.transceive(frame, timeout: timeout)
            guard let len = answer.first, Int(len) == answer.count else {
                throw TagCommunicationError.malformedResponse("FeliCa answer \(answer.hexString()) with a wrong LEN")
            }
            return answer
        } catch let e as LibNFCError {
            throw e.tagCommunicationError
        }
    }
}
