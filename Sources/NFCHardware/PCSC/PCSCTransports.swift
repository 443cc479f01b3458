public import NFCTags

/// An ISO/IEC 14443-4 tag reached through a PC/SC reader: each APDU is one `SCardTransmit`.
///
/// Errors are ``/NFCBase/TagCommunicationError`` (``PCSCError/tagCommunicationError``), plus the
/// vpcd/pcscd case of a card that leaves mid-exchange: `SCardTransmit` succeeds with 0 bytes
/// and the next call fails with `SCARD_W_REMOVED_CARD`; both are `.tagLost`, unless the
/// status check made right then finds pcscd or the reader gone (`.readerFailure`).
/// Blocking: call it from the thread that owns the card's context.
public struct PCSCAPDUTransport: RepeatingAPDUTransport, Sendable {
    public let card: PCSCCard
    public init(card: PCSCCard) { self.card = card }

    /// 256 (a short Le) unless the reader announces a larger `dwMaxAPDUDataSize` (PC/SC part 10
    /// FEATURE_GET_TLV_PROPERTIES, ``PCSCCard/maximumAPDUDataSize``): then extended Le up to it.
    public var maximumResponseLength: Int { max(256, min(65536, card.maximumAPDUDataSize ?? 256)) }

    /// `SCardTransmit` of `command`; the response APDU with its status word.
    /// - Throws: ``/NFCBase/TagCommunicationError``: `.tagLost` for an empty answer or a removed card,
    ///   `.packetTooLong` for a command over 65544 bytes (the PC/SC client's limit).
    public func transmit(_ command: [UInt8]) throws -> [UInt8] {
        guard command.count <= 65_544 else { throw TagCommunicationError.packetTooLong(command.count) }
        let answer: [UInt8]
        do {
            answer = try card.transmit(command)
        } catch {
            throw Self.checked(error, card)
        }
        guard !answer.isEmpty else { throw card.lossCause() }
        return answer
    }

    /// ``PCSCCard/transmitRepeatedly(_:count:into:shouldStop:)``: each round trip timed right
    /// around `SCardTransmit`. Errors as ``transmit(_:)``.
    public func transmitRepeatedly(
        _ command: [UInt8], count: Int, into exchanges: inout TimedAPDUExchanges, shouldStop: () -> Bool
    ) throws {
        guard command.count <= 65_544 else { throw TagCommunicationError.packetTooLong(command.count) }
        let completed: Bool
        do {
            completed = try card.transmitRepeatedly(command, count: count, into: &exchanges, shouldStop: shouldStop)
        } catch {
            throw Self.checked(error, card)
        }
        guard completed else { throw card.lossCause() }
    }

    /// `error` in the tag vocabulary; a loss or a reader failure is checked against pcscd
    /// at once (``PCSCCard/lossCause(otherwise:)``), so pcscd's death reads "pcscd stopped".
    static func checked(_ error: PCSCError, _ card: PCSCCard) -> TagCommunicationError {
        let e = error.tagCommunicationError
        switch e {
        case .tagLost, .readerFailure: return card.lossCause(otherwise: e)
        default: return e
        }
    }
}

/// A Type 2 tag (MIFARE Ultralight, NTAG21x) reached through a PC/SC contactless reader's
/// storage-card pseudo-APDUs (PC/SC 2.02 part 3 §3.2.2.1.8–9):
/// READ BINARY `FF B0 00 <page> 10` (16 bytes = the T2T READ), UPDATE BINARY
/// `FF D6 00 <page> 04 <4 bytes>` (the T2T WRITE), and GET_VERSION through the reader's
/// transparent exchange (``PCSCCard/transparentExchange(_:)``).
///
/// A failed READ/UPDATE (`63 00`, `65 81`, `6A 82`…) is reported as `.nak(0)` for
/// `63 00`/`65 81` (the reader hides the tag's 4-bit NAK code) and `.malformedResponse`
/// otherwise.
public struct PCSCType2TagTransport: Type2TagTransport, Sendable {
    public let card: PCSCCard
    public init(card: PCSCCard) { self.card = card }

    private func exchange(_ apdu: [UInt8]) throws -> (data: [UInt8], sw: UInt16) {
        let r = try PCSCAPDUTransport(card: card).transmit(apdu)
        guard r.count >= 2 else { throw TagCommunicationError.malformedResponse("answer shorter than a status word") }
        return (Array(r.dropLast(2)), UInt16(r[r.count - 2]) << 8 | UInt16(r[r.count - 1]))
    }

    private func failure(_ what: String, _ sw: UInt16) -> TagCommunicationError {
        switch sw {
        case 0x6300, 0x6581:
            card.noteTagLeftIdle()
            return .nak(0)
        default: return .malformedResponse("\(what) answered SW \(String(sw, radix: 16, uppercase: true))")
        }
    }

    /// READ BINARY `FF B0 00 <page> 10`: exactly 16 bytes.
    public func read(page: UInt8) throws -> [UInt8] {
        let (data, sw) = try exchange([0xFF, 0xB0, 0x00, page, 0x10])
        guard sw == 0x9000 else { throw failure("READ BINARY", sw) }
        guard data.count == 16 else {
            throw TagCommunicationError.malformedResponse("READ BINARY gave \(data.count) bytes, not 16")
        }
        return data
    }

    /// UPDATE BINARY `FF D6 00 <page> 04 <data>`; `data` must be 4 bytes.
    public func write(page: UInt8, data: [UInt8]) throws {
        guard data.count == 4 else { throw TagCommunicationError.packetTooLong(data.count) }
        let (_, sw) = try exchange([0xFF, 0xD6, 0x00, page, 0x04] + data)
        guard sw == 0x9000 else { throw failure("UPDATE BINARY", sw) }
    }

    /// FAST_READ needs the reader's transparent exchange, known once GET_VERSION went
    /// through it (``PCSCCard/transparentExchangeKind``); its answer rides in one short
    /// response APDU (256 bytes): less the Generic Error Status `C0 03 …` and the ICC response
    /// header `97 81 L`, 248 tag bytes (62 pages) for PC/SC part 3's Transparent Exchange
    /// (§3.2.4.1); less `D5 43 <status>`, 253 (63 pages) for the ACR122U's InCommunicateThru.
    /// 0 before GET_VERSION and for a reader with neither: READ BINARY then.
    public var fastReadPageLimit: Int {
        switch card.transparentExchangeKind {
        case .pcscPart3?: 62
        case .acr122uPseudoAPDU?: 63
        case .unsupported?, nil: 0
        }
    }

    /// FAST_READ `3A <first> <last>` through the transparent exchange. A tag that NAKs it (a
    /// 4-bit answer) is IDLE afterwards; behind part 3 a NAK reads as no answer.
    public func fastRead(from first: UInt8, to last: UInt8) throws -> [UInt8] {
        let count = 4 * (Int(last) - Int(first) + 1)
        guard count > 0, count / 4 <= fastReadPageLimit else { throw TagCommunicationError.packetTooLong(count) }
        let answer: [UInt8]?
        do {
            answer = try card.transparentExchange([0x3A, first, last])
        } catch let e as PCSCError {
            throw PCSCAPDUTransport.checked(e, card)
        } catch let e as TagCommunicationError {
            if case .noResponse = e { card.noteTagLeftIdle() }
            throw e
        }
        guard let answer else { throw TagCommunicationError.readerFailure("the reader has no transparent exchange") }
        if answer.count == 1, answer[0] & 0x0F != 0x0A {
            card.noteTagLeftIdle()
            throw TagCommunicationError.nak(answer[0] & 0x0F)
        }
        guard answer.count == count else {
            throw TagCommunicationError.malformedResponse("FAST_READ returned \(answer.count) bytes, not \(count)")
        }
        return answer
    }

    /// GET_VERSION through the transparent exchange; `nil` when the reader has none. A tag
    /// that does not answer it (an Ultralight) is IDLE afterwards: ``reactivate()``.
    public func getVersion() throws -> [UInt8]? {
        do {
            return try card.getVersion()
        } catch let e as PCSCError {
            throw PCSCAPDUTransport.checked(e, card)
        } catch let e as TagCommunicationError {
            switch e {
            case .nak, .noResponse: card.noteTagLeftIdle()
            default: break
            }
            throw e
        }
    }

    /// READ, WRITE and GET_VERSION as above; any other frame through the reader's transparent
    /// exchange (``PCSCCard/transparentExchange(_:)``): a one-byte answer `0A` is the ACK,
    /// another one-byte answer a NAK. `.unsupportedCommand` when the reader has no
    /// transparent channel.
    public func transceive(_ frame: [UInt8]) throws -> Type2Answer {
        switch (frame.first, frame.count) {
        case (0x30, 2), (0xA2, 6), (0x60, 1): return try transceiveThroughCommands(frame)
        default: break
        }
        let answer: [UInt8]?
        do {
            answer = try card.transparentExchange(frame)
        } catch TagCommunicationError.noResponse {
            return .silent
        } catch let e as PCSCError {
            throw e.tagCommunicationError
        }
        guard let answer else { throw TagCommunicationError.unsupportedCommand(frame) }
        if answer.count == 1 { return answer[0] & 0x0F == 0x0A ? .ack : .nak(answer[0] & 0x0F) }
        return answer.isEmpty ? .silent : .data(answer)
    }

    /// `SCardReconnect` with `SCARD_RESET_CARD`: the reader re-activates the tag.
    public func reactivate() throws {
        do {
            try card.reconnect(.reset)
        } catch {
            throw error.tagCommunicationError
        }
    }
}

extension PCSCType2TagTransport: ReaderAPDUCarrier {
    /// `SCardTransmit` of `apdu` on the storage card's connection (``PCSCAPDUTransport/transmit(_:)``).
    public func transmitReaderAPDU(_ apdu: [UInt8]) throws -> [UInt8] {
        try PCSCAPDUTransport(card: card).transmit(apdu)
    }
}

/// A FeliCa card through a PC/SC reader: each frame (LEN first) in the ACS direct-transmit
/// pseudo-APDU `FF 00 00 00 Lc <frame>`, the answer frame (LEN first) before `90 00` (ACS
/// ACR1252U reference manual; the convention nfcbench's vpcd FeliCa card answers). `63 00`
/// (the reader heard nothing) is silence. Other readers carry FeliCa otherwise
/// (hardware/pcsc-loopback/READERS.md).
public struct PCSCFeliCaTransport: FeliCaTransport, Sendable {
    public let card: PCSCCard
    public init(card: PCSCCard) { self.card = card }

    public func exchange(_ frame: [UInt8]) throws -> [UInt8] {
        guard !frame.isEmpty, frame.count <= 254 else { throw TagCommunicationError.packetTooLong(frame.count) }
        let r = try PCSCAPDUTransport(card: card).transmit([0xFF, 0x00, 0x00, 0x00, UInt8(frame.count)] + frame)
        guard r.count >= 2 else { throw TagCommunicationError.malformedResponse("no status word") }
        let sw = Array(r.suffix(2))
        if sw == [0x63, 0x00] { throw TagCommunicationError.noResponse }
        guard sw == [0x90, 0x00] else { throw TagCommunicationError.malformedResponse("status \(sw.hexString())") }
        let answer = Array(r.dropLast(2))
        guard let len = answer.first, Int(len) == answer.count else {
            throw TagCommunicationError.malformedResponse("FeliCa answer \(answer.hexString()) with a wrong LEN")
        }
        return answer
    }
}

/// An ISO 15693 tag through a PC/SC reader's storage-card pseudo-APDUs, block by block: READ
/// SINGLE (`20`, `30`) is READ BINARY `FF B0 00 <block> 00` (one block; P2 = the block number,
/// the SCM / SpringCard / ACS convention of nfcbench's vpcd card), READ MULTIPLE (`23`, `33`) one
/// READ BINARY per block, WRITE SINGLE (`21`, `31`) UPDATE BINARY `FF D6 00 <block> <Lc>`. The
/// storage-card API has no GET SYSTEM INFO and no other command: those are answered "not
/// supported" (ISO 15693 error `01`), as a tag would; the Type 5 procedures then learn the block
/// size from block 0. Blocks from 256 on are not reachable (error `10`). `63 00` (the reader
/// heard nothing) is silence (`.noResponse`). The UID in an
/// addressed request is dropped: the reader addresses the one tag it activated.
public struct PCSCISO15693Transport: ISO15693Transport, Sendable {
    public let card: PCSCCard
    public init(card: PCSCCard) { self.card = card }

    public func request(_ request: [UInt8]) throws -> [UInt8] {
        guard request.count >= 2 else { throw TagCommunicationError.malformedResponse("empty request") }
        let flags = request[0]
        let cmd = request[1]
        let p = Array(request.dropFirst(flags & 0x20 != 0 ? 10 : 2))
        let apdu = PCSCAPDUTransport(card: card)
        func block(_ at: Int) -> Int? {
            switch cmd {
            case 0x30, 0x31, 0x33: return p.count >= at + 2 ? Int(p[at]) | Int(p[at + 1]) << 8 : nil
            default: return p.count > at ? Int(p[at]) : nil
            }
        }
        func read(_ b: Int) throws -> [UInt8]? {
            guard b < 256 else { return nil }
            let r = try apdu.transmit([0xFF, 0xB0, 0x00, UInt8(b), 0x00])
            // 63 00: the reader heard nothing from the tag (PC/SC part 3: no information given).
            if Array(r.suffix(2)) == [0x63, 0x00] { throw TagCommunicationError.noResponse }
            guard r.count >= 2, Array(r.suffix(2)) == [0x90, 0x00] else { return nil }
            return Array(r.dropLast(2))
        }
        let option: [UInt8] = flags & 0x40 != 0 ? [0x00] : []
        switch cmd {
        case 0x20, 0x30:
            guard let b = block(0) else { return [0x01, 0x0F] }
            guard let d = try read(b) else { return [0x01, 0x10] }
            return [0x00] + option + d
        case 0x23, 0x33:
            guard let first = block(0) else { return [0x01, 0x0F] }
            let n = cmd == 0x33 ? (p.count >= 4 ? Int(p[2]) | Int(p[3]) << 8 : 0) : (p.count >= 2 ? Int(p[1]) : 0)
            var out: [UInt8] = [0x00]
            for b in first...(first + n) {
                guard let d = try read(b) else { return [0x01, 0x10] }
                out += option + d
            }
            return out
        case 0x21, 0x31:
            guard let b = block(0), b < 256 else { return [0x01, 0x10] }
            let data = Array(p.dropFirst(cmd == 0x31 ? 2 : 1))
            guard !data.isEmpty else { return [0x01, 0x0F] }
            let r = try apdu.transmit([0xFF, 0xD6, 0x00, UInt8(b), UInt8(data.count)] + data)
            switch Array(r.suffix(2)) {
            case [0x90, 0x00]: return [0x00]
            case [0x69, 0x82]: return [0x01, 0x12]
            case [0x6A, 0x82]: return [0x01, 0x10]
            case [0x63, 0x00]: throw TagCommunicationError.noResponse
            default: return [0x01, 0x13]
            }
        default:
            return [0x01, 0x01]
        }
    }
}
