public import NFCTags
import Synchronization

/// A connection to the card in one reader (`SCardConnect` … `SCardDisconnect`).
///
/// Blocking like ``PCSCContext``'s synchronous methods: call it from a thread of its own, never
/// from Swift's cooperative pool. Dropping the last reference disconnects
/// with `SCARD_LEAVE_CARD` if ``disconnect(_:)`` was not called.
public final class PCSCCard: Sendable {
    /// The context this handle belongs to (kept alive as long as the card).
    public let context: PCSCContext
    /// The reader's name.
    public let reader: String
    let handle: PCSCCardHandle
    private let shareMode: PCSCShareMode
    private let state: Mutex<State>
    /// One receive buffer for every `SCardTransmit` on this card (an extended R-APDU's size):
    /// an APDU round trip allocates only its answer.
    private let receiveBuffer = Mutex([UInt8](repeating: 0, count: pcscReceiveCapacity))
    /// The reader's largest APDU data size (``maximumAPDUDataSize``), asked once.
    private let maxDataSize = Mutex<Int??>(nil)

    private struct State {
        var activeProtocol: PCSCProtocols
        var disconnected = false
        var transparent: PCSCTransparentExchange? = nil
        var tagLeftIdle = false
    }

    init(
        context: PCSCContext, handle: PCSCCardHandle, reader: String, shareMode: PCSCShareMode,
        activeProtocol: PCSCProtocols
    ) {
        self.context = context
        self.handle = handle
        self.reader = reader
        self.shareMode = shareMode
        self.state = Mutex(State(activeProtocol: activeProtocol))
    }

    deinit {
        if !state.withLock({ $0.disconnected }) { try? pcscDisconnect(handle, disposition: 0) }
    }

    /// The protocol `SCardConnect` (or the last reconnect) made active: `.t0` or `.t1`.
    public var activeProtocol: PCSCProtocols { state.withLock { $0.activeProtocol } }

    /// Sends one command APDU and returns the response APDU (data + SW1 SW2) (`SCardTransmit`
    /// with `SCARD_PCI_T0` or `SCARD_PCI_T1` by the active protocol).
    ///
    /// The answer can be empty: vpcd reports a card that left during the exchange as a
    /// successful transmit of 0 bytes (``PCSCAPDUTransport`` maps that to `.tagLost`).
    /// - Throws: `SCARD_W_REMOVED_CARD` (the card left earlier), `SCARD_W_RESET_CARD`,
    ///   `SCARD_E_NOT_TRANSACTED`, `SCARD_E_INSUFFICIENT_BUFFER`, `SCARD_E_NO_SERVICE`, ….
    public func transmit(_ apdu: [UInt8]) throws(PCSCError) -> [UInt8] {
        let proto = activeProtocol.rawValue
        return try receiveBuffer.withLock { (buffer: inout [UInt8]) throws(PCSCError) -> [UInt8] in
            try buffer.withUnsafeMutableBufferPointer {
                (b: inout UnsafeMutableBufferPointer<UInt8>) throws(PCSCError) -> [UInt8] in
                let n = try pcscTransmit(handle, activeProtocol: proto, apdu, into: b)
                return Array(b[0..<n])
            }
        }
    }

    /// Sends `apdu` `count` times (or until `shouldStop()`, asked before each round trip), each
    /// round trip timed with `ContinuousClock` right around `SCardTransmit` and appended to
    /// `exchanges`: the receive buffer is taken once for the whole run and `exchanges` is
    /// reserved up front, so nothing is allocated or locked between two calls.
    ///
    /// Returns `false` when an answer was empty (vpcd's report of a card that left during the
    /// exchange; see ``transmit(_:)``), `true` when the run ended as asked.
    /// - Throws: what ``transmit(_:)`` throws; the round trips before the failure stay in
    ///   `exchanges`.
    public func transmitRepeatedly(
        _ apdu: [UInt8], count: Int, into exchanges: inout TimedAPDUExchanges, shouldStop: () -> Bool
    ) throws(PCSCError) -> Bool {
        let pci = pcscSendPCI(activeProtocol.rawValue)
        // The SELECT answer is its FCI (if any) and SW1 SW2: room for short answers up front;
        // a longer one grows the storage once.
        exchanges.reserve(exchanges: count, responseBytes: count * 32)
        let clock = ContinuousClock()
        return try receiveBuffer.withLock { (buffer: inout [UInt8]) throws(PCSCError) -> Bool in
            try buffer.withUnsafeMutableBufferPointer {
                (b: inout UnsafeMutableBufferPointer<UInt8>) throws(PCSCError) -> Bool in
                let receive = b
                return try apdu.withUnsafeBufferPointer { (send) throws(PCSCError) -> Bool in
                    for _ in 0..<count where !shouldStop() {
                        let start = clock.now
                        let n = try pcscTransmit(handle, pci: pci, send, into: receive)
                        let end = clock.now
                        guard n > 0 else { return false }
                        exchanges.append(
                            start: start, duration: end - start,
                            response: UnsafeBufferPointer(rebasing: receive[0..<n]))
                    }
                    return true
                }
            }
        }
    }

    /// The largest APDU data size the reader says it carries (PC/SC part 10
    /// FEATURE_GET_TLV_PROPERTIES `dwMaxAPDUDataSize`), asked once; `nil` when it does not say.
    public var maximumAPDUDataSize: Int? {
        if let known = maxDataSize.withLock({ $0 }) { return known }
        let asked = pcscMaxAPDUDataSize(handle)
        maxDataSize.withLock { $0 = .some(asked) }
        return asked
    }

    /// The card's state as the reader sees it now (`SCardStatus`).
    public func status() throws(PCSCError) -> PCSCCardStatus {
        let raw = try pcscStatus(handle)
        return PCSCCardStatus(
            readerNames: raw.readerNames, state: raw.state,
            activeProtocol: PCSCProtocols(rawValue: raw.activeProtocol), atr: raw.atr)
    }

    /// Re-establishes the connection (`SCardReconnect`); with `.reset` or `.unpower` the
    /// reader re-activates the card (a contactless reader re-selects the tag).
    public func reconnect(
        _ initialization: PCSCDisposition = .reset, protocols: PCSCProtocols = [.t0, .t1]
    ) throws(PCSCError) {
        let active = try pcscReconnect(
            handle, shareMode: shareMode.rawValue, protocols: protocols.rawValue,
            initialization: initialization.rawValue)
        state.withLock {
            $0.activeProtocol = PCSCProtocols(rawValue: active)
            if initialization != .leave { $0.tagLeftIdle = false }
        }
    }

    /// A Type 2 command through this card failed the way a NAK or silence does (`63 00`, no
    /// answer to a transparent frame), so the tag may be IDLE until the reader selects it
    /// again (NTAG21x datasheet §9.3). Cleared by a ``reconnect(_:protocols:)`` that resets.
    public var tagLeftIdle: Bool { state.withLock { $0.tagLeftIdle } }

    func noteTagLeftIdle() { state.withLock { $0.tagLeftIdle = true } }

    /// Why a transmit failed the way a card leaving or a broken channel does (vpcd's 0-byte
    /// answer, `SCARD_W_REMOVED_CARD`, or `SCARD_W_SECURITY_VIOLATION`, which pcsc-lite
    /// returns when pcscd's socket is reset under a call: winscard_msg.c, `ECONNRESET`):
    /// asks pcscd for the reader's state at once (`SCardGetStatusChange`, timeout 0, on this
    /// card's context). A pcscd that is gone fails that call (`.readerFailure("pcscd
    /// stopped")`), a reader that is gone is reported unknown (`.readerFailure("reader gone:
    /// …")`); otherwise `otherwise` stands. No waiting: pcscd answers or its socket is closed.
    func lossCause(otherwise: TagCommunicationError = .tagLost) -> TagCommunicationError {
        do {
            let outcome = try context.waitForStatusChange(readers: [.unaware(reader)], timeout: .zero)
            if case .changed(let states) = outcome, let s = states.first,
                s.flags.contains(.unknown) || s.flags.contains(.unavailable)
            {
                return .readerFailure("reader gone: \(reader)")
            }
            return otherwise
        } catch {
            if case .readerFailure = error.tagCommunicationError { return error.tagCommunicationError }
            return otherwise
        }
    }

    /// Ends the connection (`SCardDisconnect`). Further calls on this card fail with
    /// `SCARD_E_INVALID_HANDLE`; a second disconnect does nothing.
    public func disconnect(_ disposition: PCSCDisposition = .leave) throws(PCSCError) {
        let already = state.withLock { s in
            defer { s.disconnected = true }
            return s.disconnected
        }
        if already { return }
        try pcscDisconnect(handle, disposition: disposition.rawValue)
    }

    /// The tag's UID (ISO/IEC 14443-3 UID, or the PUPI/IDm of other technologies) through the
    /// PC/SC 2.02 part 3 §3.2.2.1.3 GET DATA pseudo-APDU `FF CA 00 00 00`.
    /// - Returns: the UID; `nil` when the reader refuses the command (SW ≠ `90 00`, e.g. a
    ///   contact reader's `6D 00`).
    public func uid() throws(PCSCError) -> [UInt8]? {
        let r = try transmit([0xFF, 0xCA, 0x00, 0x00, 0x00])
        guard r.count >= 2, r[r.count - 2] == 0x90, r[r.count - 1] == 0x00 else { return nil }
        return Array(r.dropLast(2))
    }

    /// Which transparent exchange the reader offers, once ``transparentExchange(_:)`` found
    /// out (`nil` before the first call).
    public var transparentExchangeKind: PCSCTransparentExchange? { state.withLock { $0.transparent } }

    /// Sends a raw ISO/IEC 14443-3 frame (CRC added and checked by the reader) and returns
    /// the tag's answer, through the reader's transparent channel:
    /// 1. PC/SC 2.02 part 3 supplement (§3.2.4.1): Manage Session `FF C2 00 00 02 81 00 00`
    ///    (start), Transparent Exchange `FF C2 00 01 Lc 95 L <frame> 00` (Transceive DO `95`;
    ///    the answer is the ICC response DO `97`, the Generic Error Status DO `C0` tells
    ///    whether the tag answered), then `FF C2 00 00 02 82 00 00` (end);
    /// 2. else the ACR122U pseudo-APDU `FF 00 00 00 Lc D4 42 <frame>` (PN532
    ///    InCommunicateThru; the answer is `D5 43 <status> <data> 90 00`).
    /// The first call detects which one works (a refusal costs one or two APDUs) and
    /// remembers it.
    /// - Returns: the tag's answer; `nil` when the reader has neither channel.
    /// - Throws: ``/NFCBase/TagCommunicationError/noResponse`` when the tag did not answer (e.g. an
    ///   Ultralight without GET_VERSION), `.malformedResponse` for an answer neither form
    ///   explains, and ``PCSCError`` from `SCardTransmit`.
    public func transparentExchange(_ frame: [UInt8]) throws -> [UInt8]? {
        let kind = state.withLock { $0.transparent }
        switch kind {
        case .pcscPart3?:
            return try PCSCTransparentFrames.partThree(frame, transmit: transmit)
        case .acr122uPseudoAPDU?:
            return try PCSCTransparentFrames.acr122u(frame, transmit: transmit)
        case .unsupported?:
            return nil
        case nil:
            let detected: PCSCTransparentExchange
            if try PCSCTransparentFrames.startSession(transmit: transmit) {
                detected = .pcscPart3
            } else if let answer = try PCSCTransparentFrames.acr122uProbe(frame, transmit: transmit) {
                state.withLock { $0.transparent = .acr122uPseudoAPDU }
                return try answer.get()
            } else {
                detected = .unsupported
            }
            state.withLock { $0.transparent = detected }
            return detected == .unsupported ? nil : try transparentExchange(frame)
        }
    }

    /// NTAG21x / Ultralight EV1 GET_VERSION (`60`) through ``transparentExchange(_:)``: the
    /// 8-byte version (NTAG21x datasheet §10.1), `nil` without a transparent channel.
    public func getVersion() throws -> [UInt8]? {
        try transparentExchange([0x60])
    }
}

/// A reader's raw-frame channel, as ``PCSCCard/transparentExchange(_:)`` detected it.
public enum PCSCTransparentExchange: Sendable, Hashable {
    /// PC/SC 2.02 part 3 supplement Transparent Exchange (`FF C2`).
    case pcscPart3
    /// ACR122U's direct transmit pseudo-APDU (`FF 00 00 00 … D4 42`).
    case acr122uPseudoAPDU
    /// Neither: the reader refused both.
    case unsupported
}

/// `SCardStatus`'s answer.
public struct PCSCCardStatus: Sendable, Hashable {
    /// The reader's names (usually one).
    public var readerNames: [String]
    /// The `SCARD_ABSENT`…`SCARD_SPECIFIC` state word (pcsclite.h), as pcsc-lite reports it.
    public var state: UInt32
    /// The active protocol.
    public var activeProtocol: PCSCProtocols
    /// The card's ATR.
    public var atr: [UInt8]
}

/// The byte formats of the two transparent channels: pure, tested without a reader.
enum PCSCTransparentFrames {
    static let ok: (UInt8, UInt8) = (0x90, 0x00)

    static func sw(_ r: [UInt8]) -> UInt16? {
        r.count >= 2 ? UInt16(r[r.count - 2]) << 8 | UInt16(r[r.count - 1]) : nil
    }

    /// `FF C2 00 00 02 81 00 00`; true when the reader accepts it (`90 00`).
    static func startSession(transmit: (_ apdu: [UInt8]) throws(PCSCError) -> [UInt8]) throws(PCSCError) -> Bool {
        let r = try transmit([0xFF, 0xC2, 0x00, 0x00, 0x02, 0x81, 0x00, 0x00])
        return sw(r) == 0x9000
    }

    /// The Transparent Exchange APDU for `frame`: `FF C2 00 01 Lc 95 L <frame> 00`.
    static func exchangeAPDU(_ frame: [UInt8]) throws -> [UInt8] {
        let dataObject = [0x95] + berLength(frame.count) + frame
        guard dataObject.count <= 255 else { throw TagCommunicationError.packetTooLong(frame.count) }
        return [0xFF, 0xC2, 0x00, 0x01, UInt8(dataObject.count)] + dataObject + [0x00]
    }

    static func berLength(_ n: Int) -> [UInt8] {
        n < 0x80 ? [UInt8(n)] : [0x81, UInt8(truncatingIfNeeded: n)]
    }

    /// Parses a Transparent Exchange answer: BER-TLV data objects, then `90 00`.
    /// `C0 03 <index> <SW1> <SW2>` with SW ≠ `90 00` means the tag did not answer.
    static func parseExchangeAnswer(_ r: [UInt8]) throws -> [UInt8] {
        guard let status = sw(r) else {
            throw TagCommunicationError.malformedResponse("empty Transparent Exchange answer")
        }
        guard status == 0x9000 else {
            throw TagCommunicationError.malformedResponse(
                "Transparent Exchange answered SW \(String(status, radix: 16, uppercase: true))")
        }
        var body = r.dropLast(2)[...]
        var icc: [UInt8]? = nil
        while let tag = body.popFirst() {
            guard let l0 = body.popFirst() else { throw TagCommunicationError.malformedResponse("truncated TLV") }
            var length = Int(l0)
            if l0 == 0x81, let l1 = body.popFirst() {
                length = Int(l1)
            } else if l0 == 0x82, let l1 = body.popFirst(), let l2 = body.popFirst() {
                length = Int(l1) << 8 | Int(l2)
            } else if l0 >= 0x80 {
                throw TagCommunicationError.malformedResponse("bad TLV length")
            }
            guard body.count >= length else {
                throw TagCommunicationError.malformedResponse("TLV longer than the answer")
            }
            let value = Array(body.prefix(length))
            body = body.dropFirst(length)
            switch tag {
            case 0xC0:
                if value.count == 3, value[1] != 0x90 || value[2] != 0x00 { throw TagCommunicationError.noResponse }
            case 0x97:
                icc = value
            default:
                continue
            }
        }
        guard let icc else { throw TagCommunicationError.noResponse }
        return icc
    }

    static func partThree(
        _ frame: [UInt8], transmit: (_ apdu: [UInt8]) throws(PCSCError) -> [UInt8]
    ) throws -> [UInt8] {
        let answer = try transmit(exchangeAPDU(frame))
        _ = try? transmit([0xFF, 0xC2, 0x00, 0x00, 0x02, 0x82, 0x00, 0x00])  // end session
        return try parseExchangeAnswer(answer)
    }

    /// `FF 00 00 00 Lc D4 42 <frame>`.
    static func acr122uAPDU(_ frame: [UInt8]) throws -> [UInt8] {
        guard frame.count + 2 <= 255 else { throw TagCommunicationError.packetTooLong(frame.count) }
        return [0xFF, 0x00, 0x00, 0x00, UInt8(frame.count + 2), 0xD4, 0x42] + frame
    }

    /// Parses `D5 43 <status> <data> 90 00`; `nil` when the answer is not that shape.
    static func parseACR122U(_ r: [UInt8]) -> Result<[UInt8], TagCommunicationError>? {
        guard r.count >= 5, r[0] == 0xD5, r[1] == 0x43, sw(r) == 0x9000 else { return nil }
        switch r[2] & 0x3F {
        case 0x00: return .success(Array(r[3..<(r.count - 2)]))
        case 0x01: return .failure(.noResponse)
        case let s: return .failure(.malformedResponse("PN532 status 0x\(String(s, radix: 16, uppercase: true))"))
        }
    }

    static func acr122u(_ frame: [UInt8], transmit: (_ apdu: [UInt8]) throws(PCSCError) -> [UInt8]) throws -> [UInt8] {
        let r = try transmit(acr122uAPDU(frame))
        guard let parsed = parseACR122U(r) else {
            throw TagCommunicationError.malformedResponse(
                "ACR122U direct transmit answered \(r.hexString(separator: " "))")
        }
        return try parsed.get()
    }

    static func acr122uProbe(
        _ frame: [UInt8], transmit: (_ apdu: [UInt8]) throws(PCSCError) -> [UInt8]
    ) throws -> Result<[UInt8], TagCommunicationError>? {
        parseACR122U(try transmit(acr122uAPDU(frame)))
    }
}
