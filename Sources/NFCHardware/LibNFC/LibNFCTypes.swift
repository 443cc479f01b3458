/// A libnfc return code (`NFC_E*`, `nfc.h`). Negative values are errors.
struct LibNFCCode: Error, Sendable, Equatable {
    var rawValue: Int32
    init(_ raw: Int32) { rawValue = raw }
}

/// A modulation and baud rate (libnfc `nfc_modulation`).
public struct LibNFCModulation: Sendable, Hashable, CustomStringConvertible {
    /// libnfc `nfc_modulation_type`.
    public enum ModulationType: UInt32, Sendable, Hashable, CaseIterable {
        case iso14443a = 1
        case jewel, iso14443b, iso14443bi, iso14443b2sr, iso14443b2ct, felica, dep, barcode, iso14443biclass
    }
    /// libnfc `nfc_baud_rate`, kbps.
    public enum BaudRate: UInt32, Sendable, Hashable {
        case undefined = 0
        case kbps106, kbps212, kbps424, kbps847
    }
    public var type: ModulationType
    public var baudRate: BaudRate
    public init(_ type: ModulationType, _ baudRate: BaudRate = .kbps106) {
        self.type = type
        self.baudRate = baudRate
    }
    public static let iso14443a = LibNFCModulation(.iso14443a)
    public static let iso14443b = LibNFCModulation(.iso14443b)
    public static let felica212 = LibNFCModulation(.felica, .kbps212)
    public static let felica424 = LibNFCModulation(.felica, .kbps424)
    public var description: String { "\(type)@\(baudRate)" }
}

/// A target libnfc found (from `nfc_target`). For ISO/IEC 14443A: UID, ATQA as libnfc
/// reports it (PN53x order, e.g. `00 44`), SAK and the ATS without its TL byte (libnfc
/// strips it). FeliCa: `uid` holds the IDm. ISO 14443B: `uid` holds the PUPI.
public struct LibNFCTarget: Sendable, Equatable {
    public var modulation: LibNFCModulation
    public var uid: [UInt8]
    public var atqa: [UInt8]
    public var sak: UInt8
    public var ats: [UInt8]
    /// FeliCa: PMm (libnfc `abtPad`) and the system code (`abtSysCode`, zero when the
    /// Polling answer carried none).
    public var pmm: [UInt8] = []
    public var systemCode: [UInt8] = []
    /// SAK bit 6 (`20`): the target speaks ISO/IEC 14443-4 (ISO-DEP).
    public var isISODEP: Bool { modulation.type == .iso14443a && sak & 0x20 != 0 }
    public init(modulation: LibNFCModulation, uid: [UInt8], atqa: [UInt8], sak: UInt8, ats: [UInt8]) {
        self.modulation = modulation
        self.uid = uid
        self.atqa = atqa
        self.sak = sak
        self.ats = ats
    }
}

/// How long libnfc waits for a target's answer (`timeout` of `nfc_initiator_transceive_bytes`
/// and the target-mode calls).
public enum TransceiveTimeout: Sendable, Equatable {
    /// `-1`: the device's default (`NP_TIMEOUT_COMMAND`, 350 ms on a PN53x).
    case deviceDefault
    /// `0`: wait forever (end it with ``LibNFCDevice/abort()``).
    case forever
    /// That long, rounded up to whole milliseconds (at least 1 ms).
    case after(Duration)

    var milliseconds: Int32 {
        switch self {
        case .deviceDefault: return -1
        case .forever: return 0
        case .after(let d):
            let (s, atto) = d.components
            guard s >= 0 else { return 1 }
            let ms = s * 1000 + (atto + 999_999_999_999_999) / 1_000_000_000_000_000
            return Int32(clamping: max(1, ms))
        }
    }
}

/// Boolean device properties (`nfc_property`, set with `nfc_device_set_property_bool`).
public enum LibNFCProperty: UInt32, Sendable, CaseIterable {
    /// Append/check CRC on transmitted/received frames.
    case handleCRC = 3
    /// Append/check parity bits.
    case handleParity
    /// Keep the RF field on.
    case activateField
    case activateCrypto1
    /// Keep polling until a target answers (`InListPassiveTarget` retries `FF`).
    case infiniteSelect
    case acceptInvalidFrames
    case acceptMultipleFrames
    /// Do RATS automatically for ISO 14443-4 targets.
    case autoISO14443_4
    /// Let the chip frame exchanges itself (PN53x InDataExchange); off = raw InCommunicateThru.
    case easyFraming
    case forceISO14443A
    case forceISO14443B
    case forceSpeed106
}
