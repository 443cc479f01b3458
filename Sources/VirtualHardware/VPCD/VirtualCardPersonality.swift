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
}

extension VirtualType2Responder {
    public mutating func reactivate() {}
}

/// The ATRs a PC/SC 2.02 part 3 (§3.1.3.2.3) contactless reader builds for the card in its field.
public enum VirtualCardATR {
    /// `3B 8n 80 01 <historical bytes> TCK` for an ISO/IEC 14443-4 card, n = the number of
    /// historical bytes (at most 15: the ATS's historical bytes, or `00…` when it has none).
    /// Returns `nil` for more than 15 bytes.
    public static func iso14443Part4(historicalBytes: [UInt8]) -> [UInt8]? {
        guard historicalBytes.count <= 15 else { return nil }
        return withTCK([0x3B, 0x80 | UInt8(historicalBytes.count), 0x80, 0x01] + historicalBytes)
    }

    /// The storage-card ATR `3B 8F 80 01 80 4F 0C A0 00 00 03 06 <SS> <NN NN> 00 00 00 00 TCK`
    /// (RID `A0 00 00 03 06` = PC/SC; SS `03` = ISO/IEC 14443-A part 3; card name
    /// `00 03` = MIFARE Ultralight, which NTAG21x readers report too).
    public static func storageCard(standard: UInt8 = 0x03, cardName: UInt16 = 0x0003) -> [UInt8] {
        withTCK(
            [0x3B, 0x8F, 0x80, 0x01, 0x80, 0x4F, 0x0C, 0xA0, 0x00, 0x00, 0x03, 0x06, standard,
             UInt8(cardName >> 8), UInt8(cardName & 0xFF), 0x00, 0x00, 0x00, 0x00])
    }

    /// Appends TCK: the XOR of every byte from T0 to the last historical byte (ISO/IEC 7816-3 §8.2.5).
    static func withTCK(_ atr: [UInt8]) -> [UInt8] {
        atr + [atr.dropFirst().reduce(0, ^)]
    }
}

/// An ISO/IEC 14443-4 (ISO-DEP) card behind a contactless reader: the ATR built from
/// historical bytes, every APDU passed to the core unchanged (a T4T NDEF application,
/// for example).
public struct ISO14443Part4Personality<Core: VirtualAPDUResponder>: VirtualCardPersonality {
    public var core: Core
    public let atr: [UInt8]

    /// - Parameter historicalBytes: at most 15 bytes (more are cut to 15).
    public init(core: Core, historicalBytes: [UInt8] = []) {
        self.core = core
        self.atr = VirtualCardATR.iso14443Part4(historicalBytes: Array(historicalBytes.prefix(15)))
            ?? [0x3B, 0x80, 0x80, 0x01, 0x01]
    }

    public mutating func respond(to apdu: [UInt8]) -> [UInt8] { core.respond(to: apdu) }

    /// Passes the reset to the core (``VirtualAPDUResponder/reset()``).
    public mutating func reset() { core.reset() }
}
