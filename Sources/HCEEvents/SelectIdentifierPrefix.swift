import NFCTags

/// One entry of the entitlement `com.apple.developer.nfc.hce.iso7816.select-identifier-prefixes`:
/// a full AID (5–16 bytes), a RID (the first 5 bytes of an AID, ISO/IEC 7816-5 §6), or a
/// prefix at least RID-long. A SELECT by DF name whose AID starts with these bytes is
/// routed to the app's `CardSession`; a SELECT longer than the prefix matches too.
public struct SelectIdentifierPrefix: Sendable, Hashable, CustomStringConvertible {
    /// The prefix bytes, 5...16 of them.
    public let bytes: [UInt8]

    /// Why a declared prefix was refused.
    public enum Error: Swift.Error, Equatable, CustomStringConvertible {
        /// Fewer than 5 bytes: shorter than a RID (ISO/IEC 7816-5), which Apple's entitlement refuses.
        case shorterThanRID(byteCount: Int)
        /// More than 16 bytes: longer than any AID (ISO/IEC 7816-4 §8.2.1.2).
        case longerThanAID(byteCount: Int)
        /// Not hex text.
        case notHex(String)

        public var description: String {
            switch self {
            case .shorterThanRID(let n): "an AID prefix needs at least 5 bytes (a RID), got \(n)"
            case .longerThanAID(let n): "an AID has at most 16 bytes, got \(n)"
            case .notHex(let s): "'\(s)' is not hex"
            }
        }
    }

    /// Validates `bytes` as a declared prefix. Throws ``Error``.
    public init(_ bytes: [UInt8]) throws(Error) {
        guard bytes.count >= 5 else { throw .shorterThanRID(byteCount: bytes.count) }
        guard bytes.count <= 16 else { throw .longerThanAID(byteCount: bytes.count) }
        self.bytes = bytes
    }

    /// Validates hex text such as `"A000000003"` or `"A0 00 00 00 03 10 10"`.
    public init(hex: String) throws(Error) {
        guard let b = [UInt8](hex: hex) else { throw .notHex(hex) }
        try self.init(b)
    }

    /// True when this is exactly a RID (5 bytes).
    public var isRID: Bool { bytes.count == 5 }

    /// True when `aid` starts with this prefix (an AID equal to it included).
    public func matches(_ aid: some Collection<UInt8>) -> Bool {
        aid.count >= bytes.count && zip(aid, bytes).allSatisfy { $0 == $1 }
    }

    public var description: String { bytes.hexString() }
}

/// Well-known AIDs used by the model and the shipped profiles.
public enum WellKnownAID {
    /// EMV Proximity Payment System Environment, "2PAY.SYS.DDF01" (EMV Book B §3.3).
    public static let ppse: [UInt8] = Array("2PAY.SYS.DDF01".utf8)
    /// NFC Forum Type 4 Tag NDEF Tag Application, version 2 (NFC Forum T4T 1.0 §5.4.2).
    public static let ndefApplication: [UInt8] = [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01]
    /// Apple VAS, "OSE.VAS.01".
    public static let appleVAS: [UInt8] = Array("OSE.VAS.01".utf8)
}
