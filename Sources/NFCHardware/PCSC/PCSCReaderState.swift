import NFCTags

/// A reader's state as `SCardGetStatusChange` reports it in `dwEventState`
/// (pcsclite.h `SCARD_STATE_*`), without the event counter in the high 16 bits.
public struct PCSCReaderFlags: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `SCARD_STATE_IGNORE` 0x0001: the caller asked to ignore this reader.
    public static let ignore = PCSCReaderFlags(rawValue: 0x0001)
    /// `SCARD_STATE_CHANGED` 0x0002: differs from the state the caller passed in.
    public static let changed = PCSCReaderFlags(rawValue: 0x0002)
    /// `SCARD_STATE_UNKNOWN` 0x0004: no reader of that name.
    public static let unknown = PCSCReaderFlags(rawValue: 0x0004)
    /// `SCARD_STATE_UNAVAILABLE` 0x0008: the reader's driver reports a communication error.
    public static let unavailable = PCSCReaderFlags(rawValue: 0x0008)
    /// `SCARD_STATE_EMPTY` 0x0010: no card.
    public static let empty = PCSCReaderFlags(rawValue: 0x0010)
    /// `SCARD_STATE_PRESENT` 0x0020: a card is in the field; ``PCSCReaderState/atr`` holds its ATR.
    public static let present = PCSCReaderFlags(rawValue: 0x0020)
    /// `SCARD_STATE_ATRMATCH` 0x0040.
    public static let atrMatch = PCSCReaderFlags(rawValue: 0x0040)
    /// `SCARD_STATE_EXCLUSIVE` 0x0080: an application holds the card exclusively.
    public static let exclusive = PCSCReaderFlags(rawValue: 0x0080)
    /// `SCARD_STATE_INUSE` 0x0100: at least one application is connected (shared).
    public static let inUse = PCSCReaderFlags(rawValue: 0x0100)
    /// `SCARD_STATE_MUTE` 0x0200: the card did not answer the reset (power-up failed).
    public static let mute = PCSCReaderFlags(rawValue: 0x0200)
    /// `SCARD_STATE_UNPOWERED` 0x0400.
    public static let unpowered = PCSCReaderFlags(rawValue: 0x0400)

    private static let names: [(PCSCReaderFlags, String)] = [
        (.ignore, "ignore"), (.changed, "changed"), (.unknown, "unknown"),
        (.unavailable, "unavailable"), (.empty, "empty"), (.present, "present"),
        (.atrMatch, "atrMatch"), (.exclusive, "exclusive"), (.inUse, "inUse"),
        (.mute, "mute"), (.unpowered, "unpowered"),
    ]

    /// `[present, changed]`-style list of the set flags; unnamed bits as hex.
    public var description: String {
        var rest = rawValue
        var parts: [String] = []
        for (flag, name) in Self.names where contains(flag) {
            parts.append(name)
            rest &= ~flag.rawValue
        }
        if rest != 0 { parts.append("0x" + String(rest, radix: 16)) }
        return "[" + parts.joined(separator: ", ") + "]"
    }
}

/// One reader's state for `SCardGetStatusChange`: what the caller knows going in, what
/// pcscd reports coming out (`SCARD_READERSTATE`: `szReader`, `dwEventState`, `rgbAtr`).
public struct PCSCReaderState: Sendable, Hashable, CustomStringConvertible {
    /// The reader's name as `SCardListReaders` gives it (`"Virtual PCD 00 00"`).
    public var reader: String
    /// The state flags.
    public var flags: PCSCReaderFlags
    /// pcscd's per-reader event counter (high 16 bits of `dwEventState`): it grows by one
    /// at each insertion and each removal, so two states with equal flags but different
    /// counters mean a card came and went in between.
    public var eventCount: UInt16
    /// The card's ATR (ISO/IEC 7816-3 §8; at most 33 bytes) while ``flags`` has `.present`.
    public var atr: [UInt8]

    public init(reader: String, flags: PCSCReaderFlags, eventCount: UInt16 = 0, atr: [UInt8] = []) {
        self.reader = reader
        self.flags = flags
        self.eventCount = eventCount
        self.atr = atr
    }

    /// The state to pass when nothing is known yet (`SCARD_STATE_UNAWARE`): the wait returns
    /// at once with the current state.
    public static func unaware(_ reader: String) -> PCSCReaderState {
        PCSCReaderState(reader: reader, flags: [])
    }

    /// True when a card is present and answered its reset.
    public var hasCard: Bool { flags.contains(.present) && !flags.contains(.mute) }

    /// The `dwCurrentState` word built from this state (counter in the high 16 bits).
    var dword: UInt32 { UInt32(eventCount) << 16 | (flags.rawValue & ~PCSCReaderFlags.changed.rawValue) }

    init(raw: PCSCRawReaderState) {
        self.init(
            reader: raw.name, flags: PCSCReaderFlags(rawValue: raw.eventState & 0xFFFF),
            eventCount: UInt16(truncatingIfNeeded: raw.eventState >> 16), atr: raw.atr)
    }

    public var description: String {
        "\(reader): \(flags) #\(eventCount)" + (atr.isEmpty ? "" : " ATR \(atr.hexString(separator: " "))")
    }
}

/// What one `SCardGetStatusChange` call ended with.
public enum PCSCStatusChange: Sendable, Hashable {
    /// At least one reader's state differs from what was passed in: every reader's new state,
    /// in the order asked.
    case changed([PCSCReaderState])
    /// The timeout expired with no change (`SCARD_E_TIMEOUT`).
    case timeout
    /// Another thread called ``PCSCContext/cancel()`` (`SCARD_E_CANCELLED`).
    case cancelled
}
