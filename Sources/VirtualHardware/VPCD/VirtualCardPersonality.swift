public import NFCTags

/// What a virtual card is, seen from a PC/SC reader: an ATR and an APDU responder.
///
/// The transport (``VirtualCard`` on vpcd) calls ``respond(to:)`` once per command APDU and
/// ``reset()`` when the reader powers the card up or resets it (vpcd control bytes `01`, `02`).
public protocol VirtualCardPersonality: Sendable {
    /// The Answer To Reset, 1–33 bytes (ISO/IEC 7816-3 §8; pcsc-lite's `MAX_ATR_SIZE`).
    var atr: [UInt8] { get }
    /// The response APDU (data + SW1 SW2) to one command APDU. Never empty: the transport
    /// replaces an empty answer by `6F 00`, as a zero-length reply would hang vpcd.
    mutating func respond(to apdu: [UInt8]) -> [UInt8]
    /// Back to the state after activation (selected application and file forgotten).
    mutating func reset()
    /// The card has left the field (a tag file's `tag_lost` fault fired): the vpcd card
    /// closes its connection instead of answering, and stays out until presented again.
    var hasLeftField: Bool { get }
    /// The card entered the field (its connection to vpcd is up): a new presentation.
    mutating func enteredField()
}

extension VirtualCardPersonality {
    public var hasLeftField: Bool { false }
    public mutating func enteredField() {}
}

/// An emulation core that answers ISO/IEC 7816-4 APDUs (the T4T NDEF application).
public protocol VirtualAPDUResponder: Sendable {
    mutating func respond(to apdu: [UInt8]) -> [UInt8]
    /// The card was re-activated: forget the selected application and file, keep the data.
    mutating func reset()
}

extension VirtualAPDUResponder {
    public mutating func reset() {}
}

/// An emulation core that answers Type 2 Tag frames (READ `30`, WRITE `A2`, GET_VERSION `60`;
/// CRC excluded), such as the NTAG21x / Ultralight core.
public protocol VirtualType2Responder: Sendable {
    mutating func respond(to frame: [UInt8]) -> Type2Answer
    /// The reader re-activated the tag (WUPA + anticollision + select): leave IDLE/HALT.
    mutating func reactivate()
    /// How many 4-byte pages the tag's memory has (the end READ BINARY and UPDATE BINARY
    /// stop at), `nil` when unknown (then a NAK marks the end).
    var pageCount: Int? { get }
}

extension VirtualType2Responder {
    public mutating func reactivate() {}
    public var pageCount: Int? { nil }
}

/// An ISO/IEC 14443-4 (ISO-DEP) card behind a contactless reader: the PC/SC part 3 ATR
/// (`ATR.iso14443_4(historicalBytes:)`, `3B 8n 80 01 <historical bytes> TCK`) built from
/// historical bytes, every APDU passed to the core unchanged (a T4T NDEF application,
/// for example).
public struct ISO14443Part4Personality<Core: VirtualAPDUResponder>: VirtualCardPersonality {
    public var core: Core
    public let atr: [UInt8]

    /// - Parameters:
    ///   - core: the ISO-DEP application every APDU goes to.
    ///   - historicalBytes: at most 15 bytes (more are cut to 15).
    public init(core: Core, historicalBytes: [UInt8] = []) {
        self.core = core
        // At most 15 bytes after the cut, so the builder cannot fail.
        self.atr =
            (try? ATR.iso14443_4(historicalBytes: Array(historicalBytes.prefix(15))).bytes)
            ?? [0x3B, 0x80, 0x80, 0x01, 0x01]
    }

    public mutating func respond(to apdu: [UInt8]) -> [UInt8] { core.respond(to: apdu) }

    /// Passes the reset to the core (``VirtualAPDUResponder/reset()``).
    public mutating func reset() { core.reset() }
}
