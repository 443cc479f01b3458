public import NFCTags

/// A Type 2 tag (MIFARE Ultralight, NTAG21x) as a PC/SC 2.02 part 3 contactless reader
/// presents it: a storage-card ATR (NFCTags `ATR.storageCard(standard:cardName:)`; by default ISO/IEC 14443-A
/// part 3, card name MIFARE Ultralight `00 03`, which readers report for NTAG21x too) and
/// the reader's pseudo-APDUs, each turned into Type 2 frames for the core:
///
/// | APDU | core frames | answer |
/// | --- | --- | --- |
/// | `FF CA 00 00 00` GET DATA (UID) | `30 00` | UID (7 bytes from pages 0–2) `90 00` |
/// | `FF B0 00 <page> <Le>` READ BINARY | `30 <page>`, `30 <page+4>`… | Le bytes (`00` = 256) `90 00` |
/// | `FF D6 00 <page> 04 <4 bytes>` UPDATE BINARY | `A2 <page> <data>` | `90 00` |
/// | `FF C2 00 00 02 81 00 00` / `82 00` start / end transparent session | — | `C0 03 00 90 00 90 00` |
/// | `FF C2 00 01 Lc 95 L <frame> 00` Transparent Exchange | `<frame>` | `C0 03 00 90 00 97 L <answer> 90 00` |
///
/// A NAK or silence from the core answers `63 00` (READ/UPDATE) or the Generic Error Status
/// `C0 03 00 64 01` ("no response from the ICC") in a Transparent Exchange; a wrong Lc
/// answers `67 00`, other `FF` instructions `6D 00`, other P1/P2 and non-`FF` classes `6A 81`.
public struct StorageCardPersonality<Core: VirtualType2Responder>: VirtualCardPersonality {
    public var core: Core
    public let atr: [UInt8]

    public init(
        core: Core, atr: [UInt8] = ATR.storageCard(standard: .iso14443APart3, cardName: .mifareUltralight).bytes
    ) {
        self.core = core
        self.atr = atr
    }

    public mutating func reset() { core.reactivate() }

    static var ok: [UInt8] { [0x90, 0x00] }
    static var failed: [UInt8] { [0x63, 0x00] }
    static var wrongLength: [UInt8] { [0x67, 0x00] }
    static var notSupported: [UInt8] { [0x6A, 0x81] }
    static var insNotSupported: [UInt8] { [0x6D, 0x00] }

    public mutating func respond(to apdu: [UInt8]) -> [UInt8] {
        guard apdu.count >= 4 else { return Self.wrongLength }
        guard apdu[0] == 0xFF else { return Self.notSupported }
        let (ins, p1, p2) = (apdu[1], apdu[2], apdu[3])
        let body = Array(apdu.dropFirst(4))
        switch ins {
        case 0xCA:
            guard p1 == 0x00, p2 == 0x00 else { return Self.notSupported }
            guard case .data(let page0) = core.respond(to: [0x30, 0x00]), page0.count >= 8 else {
                return Self.failed
            }
            return [page0[0], page0[1], page0[2], page0[4], page0[5], page0[6], page0[7]] + Self.ok
        case 0xB0:
            guard p1 == 0x00 else { return Self.notSupported }
            guard body.count == 1 else { return Self.wrongLength }
            let wanted = body[0] == 0 ? 256 : Int(body[0])
            var out: [UInt8] = []
            var page = Int(p2)
            while out.count < wanted {
                guard case .data(let block) = core.respond(to: [0x30, UInt8(truncatingIfNeeded: page)]),
                    !block.isEmpty
                else { return out.isEmpty ? Self.failed : Array(out.prefix(wanted)) + [0x62, 0x82] }
                out += block
                page += 4
            }
            return Array(out.prefix(wanted)) + Self.ok
        case 0xD6:
            guard p1 == 0x00 else { return Self.notSupported }
            guard body.count == 5, body[0] == 0x04 else { return Self.wrongLength }
            switch core.respond(to: [0xA2, p2] + body.dropFirst()) {
            case .ack: return Self.ok
            default: return Self.failed
            }
        case 0xC2:
            return transparent(p1: p1, p2: p2, body: body)
        default:
            return Self.insNotSupported
        }
    }

    private mutating func transparent(p1: UInt8, p2: UInt8, body: [UInt8]) -> [UInt8] {
        let success: [UInt8] = [0xC0, 0x03, 0x00, 0x90, 0x00]
        guard p1 == 0x00, p2 <= 0x01, let lc = body.first, body.count >= 1 + Int(lc) else {
            return p1 == 0x00 && p2 <= 0x01 ? Self.wrongLength : Self.notSupported
        }
        let data = body[1..<(1 + Int(lc))]
        if p2 == 0x00 {  // Manage Session: start (81) / end (82) are all a virtual reader needs
            return success + Self.ok
        }
        // Transparent Exchange: find the Transceive DO 95.
        var rest = data[...]
        while let tag = rest.popFirst(), let len = rest.popFirst() {
            let length = Int(len)
            guard len < 0x80, rest.count >= length else { return Self.wrongLength }
            let value = Array(rest.prefix(length))
            rest = rest.dropFirst(length)
            guard tag == 0x95 else { continue }
            switch core.respond(to: value) {
            case .data(let answer) where answer.count < 0x80:
                return success + [0x97, UInt8(answer.count)] + answer + Self.ok
            case .data(let answer):
                return success + [0x97, 0x81, UInt8(truncatingIfNeeded: answer.count)] + answer + Self.ok
            case .ack:
                return success + [0x97, 0x01, 0x0A] + Self.ok
            case .nak, .silent:
                return [0xC0, 0x03, 0x01, 0x64, 0x01] + Self.ok
            }
        }
        return Self.notSupported
    }
}
