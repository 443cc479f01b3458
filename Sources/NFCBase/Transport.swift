// The seams between the pure tag procedures and whatever carries their bytes:
// the in-process simulator, a PC/SC reader, a libnfc device, or a virtual device.

/// A failure below the tag procedures: the carrier of the bytes, not their meaning.
///
/// Backends map their own errors (`SCARD_*`, `NFC_E*`, a closed socket) into these cases so
/// the reader procedures and the session see one vocabulary. Core NFC equivalents:
/// `tagLost` and `noResponse` → `readerTransceiveErrorTagConnectionLost` (100),
/// `malformedResponse` → `readerTransceiveErrorTagResponseError` (102),
/// `packetTooLong` → `readerTransceiveErrorPacketTooLong` (105).
public enum TagCommunicationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The target left the field (or the reader reported it removed) during the exchange.
    case tagLost
    /// The target did not answer within the frame waiting time.
    case noResponse
    /// A Type 2 tag answered with a 4-bit NAK (ISO/IEC 14443-3; NTAG21x datasheet §9.3:
    /// `0x0` invalid argument, `0x1` CRC error, `0x4` authentication counter overflow,
    /// `0x5` EEPROM write error).
    case nak(UInt8)
    /// The answer arrived but cannot be what the command asks for (wrong length, bad framing).
    case malformedResponse(String)
    /// The command is longer than the reader or tag can carry in one exchange.
    case packetTooLong(Int)
    /// The reader itself failed (service stopped, device unplugged); the text says how.
    case readerFailure(String)
    /// This carrier has no way to send the frame (a PC/SC reader without a transparent
    /// exchange asked for a raw Type 2 command).
    case unsupportedCommand([UInt8])

    public var description: String {
        switch self {
        case .tagLost: "tag lost"
        case .noResponse: "no response from the tag"
        case .nak(let v): "tag answered NAK 0x\(String(v, radix: 16, uppercase: true))"
        case .malformedResponse(let why): "malformed response: \(why)"
        case .packetTooLong(let n): "packet too long (\(n) bytes)"
        case .readerFailure(let why): "reader failure: \(why)"
        case .unsupportedCommand(let f): "this reader cannot send the frame \(f.hexString())"
        }
    }
}

/// A Type 2 Tag as a reader reaches it: the NFC Forum Type 2 Tag commands
/// (NFC Forum T2T 1.0 §5) and the NTAG21x extensions, one call per command.
///
/// Conformers: the in-process simulator (frames straight into an emulation core), the
/// libnfc backend (`nfc_initiator_transceive_bytes`), the PC/SC backend (storage-card
/// pseudo-APDUs `FF B0 00 <page> 10`, `FF D6 00 <page> 04`). Errors are
/// ``TagCommunicationError``.
public protocol Type2TagTransport {
    /// READ (`30h`): 16 bytes starting at `page`; the tag rolls over past its last page.
    func read(page: UInt8) throws -> [UInt8]
    /// WRITE (`A2h`): exactly 4 bytes to `page`. A NAK throws `TagCommunicationError.nak`.
    func write(page: UInt8, data: [UInt8]) throws
    /// GET_VERSION (`60h`): the 8-byte answer, `nil` when this reader has no way to send it
    /// (a PC/SC reader without a transparent exchange), and `TagCommunicationError.nak`
    /// or `.noResponse` when the tag does not support it (an Ultralight without EV1).
    func getVersion() throws -> [UInt8]?
    /// Re-activates the tag after a failed probe left it idle (WUPA + anticollision + select),
    /// as a reader must after a NAKed GET_VERSION. A no-op where the reader does it itself.
    func reactivate() throws
    /// FAST_READ (`3Ah`, NTAG213/215/216 data sheet §10.3; MF0ULX1 §9.4): pages `first`
    /// through `last` in one answer of 4 × (last − first + 1) bytes. Only for a tag whose
    /// GET_VERSION names a product that has it, in ranges of at most ``fastReadPageLimit``
    /// pages. A NAK throws `TagCommunicationError.nak` (the tag is then IDLE: ``reactivate()``).
    func fastRead(from first: UInt8, to last: UInt8) throws -> [UInt8]
    /// The most pages one FAST_READ may ask for through this reader: its largest answer in
    /// tag bytes (CRC_A excluded) divided by 4. 0 when the reader cannot send FAST_READ (a
    /// PC/SC reader without a transparent exchange): the procedures then READ.
    var fastReadPageLimit: Int { get }
    /// Any command frame (CRC_A excluded) and the tag's answer, as Core NFC's
    /// `sendMiFareCommand(commandPacket:)` carries it: FAST_READ `3A`, READ_SIG `3C`,
    /// PWD_AUTH `1B`, READ_CNT `39`, vendor commands. Throws ``TagCommunicationError``:
    /// `.unsupportedCommand` when this carrier cannot send the frame at all (a PC/SC reader
    /// without a transparent exchange), `.noResponse` for silence.
    ///
    /// The default implementation maps READ, WRITE and GET_VERSION onto the calls above and
    /// refuses every other frame; carriers that can send raw frames override it.
    func transceive(_ frame: [UInt8]) throws -> Type2Answer
}

extension Type2TagTransport {
    /// A carrier that cannot send FAST_READ (the default): READ only.
    public var fastReadPageLimit: Int { 0 }
    public func fastRead(from first: UInt8, to last: UInt8) throws -> [UInt8] {
        throw TagCommunicationError.unsupportedCommand([0x3A, first, last])
    }

    public func transceive(_ frame: [UInt8]) throws -> Type2Answer {
        try transceiveThroughCommands(frame)
    }

    /// READ (`30 pp`), WRITE (`A2 pp d0..d3`) and GET_VERSION (`60`) through the command
    /// calls; any other frame throws ``TagCommunicationError/unsupportedCommand(_:)``.
    /// NAKs come back as ``Type2Answer/nak(_:)``, silence as ``Type2Answer/silent``.
    public func transceiveThroughCommands(_ frame: [UInt8]) throws -> Type2Answer {
        do {
            switch (frame.first, frame.count) {
            case (0x30, 2): return .data(try read(page: frame[1]))
            case (0xA2, 6):
                try write(page: frame[1], data: Array(frame[2...]))
                return .ack
            case (0x60, 1):
                guard let v = try getVersion() else { throw TagCommunicationError.unsupportedCommand(frame) }
                return .data(v)
            default:
                throw TagCommunicationError.unsupportedCommand(frame)
            }
        } catch TagCommunicationError.nak(let v) {
            return .nak(v)
        } catch TagCommunicationError.noResponse {
            return .silent
        }
    }
}

/// An ISO/IEC 14443-4 (ISO-DEP) target as a reader reaches it: one APDU in, one APDU out
/// (ISO/IEC 7816-4 §5). Conformers add no framing of their own; chaining and WTX are the
/// carrier's business.
public protocol APDUTransport {
    /// Sends a command APDU's bytes and returns the response APDU's bytes (data + SW1 SW2).
    func transmit(_ command: [UInt8]) throws -> [UInt8]
    /// The most response data bytes (SW1 SW2 excluded) one exchange carries through this
    /// reader: 256 (a short Le, what every ISO-DEP reader carries) unless the reader says it
    /// takes extended-length APDUs (up to 65 536). READ BINARY asks for no more.
    var maximumResponseLength: Int { get }
}

extension APDUTransport {
    /// Short APDUs only (the default): 256.
    public var maximumResponseLength: Int { 256 }
}

/// A FeliCa card (JIS X 6319-4) as a reader reaches it: one command frame in, one response
/// frame out. Both start with their LEN byte, which counts itself (`06 00 12 FC 01 00` is a
/// Polling of system 12FC); the preamble, SYNC and CRC are the carrier's (a PN532's CIU adds
/// them, JIS X 6319-4 §7). Every command after Polling carries the card's IDm.
///
/// Conformers: the in-process simulator (frames straight into NFCTags' `FeliCaCore`), the libnfc
/// backend and the virtual PN532 (InCommunicateThru), a PC/SC reader's transparent exchange.
public protocol FeliCaTransport {
    /// Sends `frame` (LEN first) and returns the card's answer (LEN first). A card that stays
    /// silent (a Polling for a system it lacks, an IDm that is not its own, a command it does
    /// not know) throws ``TagCommunicationError/noResponse``.
    func exchange(_ frame: [UInt8]) throws -> [UInt8]
}

/// An ISO/IEC 15693 vicinity card as a reader reaches it: one request in, one response out
/// (ISO/IEC 15693-3 §7.3): the request is `flags command [UID] parameters`, the response
/// `flags [data]`, or `01 error-code` when the response's error flag is set; the CRC is the
/// carrier's. With the Address flag (`20`) the UID follows the command LSB first, as on the
/// air.
public protocol ISO15693Transport {
    /// Sends `request` (flags first, no CRC) and returns the card's response (flags first).
    /// Silence throws ``TagCommunicationError/noResponse``.
    func request(_ request: [UInt8]) throws -> [UInt8]
}

/// What a Type 2 tag emulation core answers to one command frame (CRC excluded).
public enum Type2Answer: Sendable, Equatable {
    /// A data answer (READ, FAST_READ, GET_VERSION, READ_SIG, PWD_AUTH's PACK).
    case data([UInt8])
    /// The 4-bit ACK `0xA` (WRITE, COMPATIBILITY_WRITE second part).
    case ack
    /// A 4-bit NAK; the tag then goes idle (NTAG21x datasheet §9.3).
    case nak(UInt8)
    /// No answer: the tag is idle, halted, or ignores the frame.
    case silent
}

/// A Type 2 tag behind a reader that also takes APDUs for it: a PC/SC reader's storage-card
/// pseudo-APDUs (PC/SC part 3 §3.2.2.1: `FF CA` GET DATA, `FF B0` READ BINARY, `FF D6` UPDATE
/// BINARY…), as `scriptor` sends them to any card.
public protocol ReaderAPDUCarrier {
    /// The reader's answer to `apdu` (data, then SW1 SW2). Throws
    /// ``TagCommunicationError/unsupportedCommand(_:)`` when the reader below takes no APDUs
    /// (a libnfc device or the simulator: a Type 2 tag there takes only its own commands).
    func transmitReaderAPDU(_ apdu: [UInt8]) throws -> [UInt8]
}
