public import NFCTags

/// A Type 2 tag (MIFARE Ultralight, NTAG21x) as a PC/SC part 3 (v2.01.09) contactless reader
/// presents it: a storage-card ATR (NFCTags `ATR.storageCard(standard:cardName:)`; by default
/// ISO/IEC 14443-A part 3, card name MIFARE Ultralight `00 03`, which readers report for
/// NTAG21x too) and the reader's pseudo-APDUs (class `FF`), each turned into Type 2 frames for
/// the core, with part 3's Lc/Le shapes and status words (§3.2.2.1):
///
/// | APDU | core frames | answers |
/// | --- | --- | --- |
/// | `FF CA 00 00 Le` GET DATA (UID) | `30 00` | UID `90 00` (Le `00` or 7); `6C 07` (Le < 7); UID `62 82` (Le > 7) |
/// | `FF CA 01 00 Le` GET DATA (historical bytes) | — | `6A 81` (a storage card has no ATS) |
/// | `FF B0 <page MSB> <page> Le` READ BINARY | `30 <page>`, `30 <page+4>`… | Le bytes `90 00` (`00` = 256); to the end of memory + `62 82`; `6A 82` past the end; `63 00` when the tag NAKs (a protected page) |
/// | `FF D6 <page MSB> <page> Lc <4·n bytes>` UPDATE BINARY | `A2 <page> <4 bytes>` per page | `90 00`; `62 82` when the memory ends first; `6A 82` past the end; `63 00` when the tag NAKs the first page (locked, read-only or protected: its NAK does not say which); `65 81` when it NAKs a later one |
/// | `FF 82 00 <key number> 06 <key>` LOAD KEYS | — | `90 00` (volatile card keys 00–01); `69 83` reader key, `69 85` secured, `69 87` non-volatile, `69 88` key number, `69 89` key length |
/// | `FF 86 00 00 05 01 00 <block> <60/61> <key number>` GENERAL AUTHENTICATE | — | `69 86` key type, `69 88` key number, `69 83` otherwise: a Type 2 tag has no MIFARE Classic authentication |
/// | `FF C2 00 00 02 81 00 00` / `82 00` start / end transparent session | — | `C0 03 00 90 00 90 00` |
/// | `FF C2 00 01 Lc 95 L <frame> 00` Transparent Exchange | `<frame>` | `C0 03 00 90 00 97 L <answer> 90 00` |
///
/// An APDU of the wrong shape for its instruction (Le where Lc is due, Lc that does not
/// match the data) answers `67 00`; a silent tag `63 00`; the Generic Error Status
/// `C0 03 01 64 01` ("no response from the ICC") in a Transparent Exchange; other `FF`
/// instructions `6D 00`, other P1/P2 `6A 81`, classes other than `FF` `6E 00`. UPDATE BINARY
/// sends exactly the WRITE frame a reader sends, so its effect on the core (lock bytes and
/// CC only ORed, pages 0–1 refused) is the core's.
public struct StorageCardPersonality<Core: VirtualType2Responder>: VirtualCardPersonality {
    public var core: Core
    public let atr: [UInt8]
    /// Keys LOAD KEYS put in the reader's volatile memory, by key number (`00`, `01`).
    public private(set) var loadedKeys: [UInt8: [UInt8]] = [:]

    public init(
        core: Core, atr: [UInt8] = ATR.storageCard(standard: .iso14443APart3, cardName: .mifareUltralight).bytes
    ) {
        self.core = core
        self.atr = atr
    }

    public mutating func reset() { core.reactivate() }

    public mutating func respond(to apdu: [UInt8]) -> [UInt8] {
        guard apdu.count >= 4 else { return PCSCPart3.wrongLength }
        guard apdu[0] == 0xFF else { return PCSCPart3.classNotSupported }
        switch apdu[1] {
        case 0xCA: return getData(apdu)
        case 0xB0: return readBinary(apdu)
        case 0xD6: return updateBinary(apdu)
        case 0x82: return loadKeys(apdu)
        case 0x86: return generalAuthenticate(apdu)
        case 0xC2: return transparent(p1: apdu[2], p2: apdu[3], body: Array(apdu.dropFirst(4)))
        default: return PCSCPart3.instructionNotSupported
        }
    }

    /// GET DATA: the UID from pages 0–2 (ISO/IEC 14443-3 cascade level 1 and 2 bytes).
    private mutating func getData(_ apdu: [UInt8]) -> [UInt8] {
        guard apdu.count == 5, apdu[2] == 0x00, apdu[3] == 0x00 else {
            return PCSCPart3.getData(apdu, uid: [], historicalBytes: nil)
        }
        guard case .data(let page0) = core.respond(to: [0x30, 0x00]), page0.count >= 8 else {
            return PCSCPart3.noInformation
        }
        let uid = [page0[0], page0[1], page0[2], page0[4], page0[5], page0[6], page0[7]]
        return PCSCPart3.getData(apdu, uid: uid, historicalBytes: nil)
    }

    /// READ BINARY (§3.2.2.1.8), case 2: P1 P2 the first page, Le the byte count.
    private mutating func readBinary(_ apdu: [UInt8]) -> [UInt8] {
        guard apdu.count == 5 else { return PCSCPart3.wrongLength }
        let first = Int(apdu[2]) << 8 | Int(apdu[3])
        let wanted = apdu[4] == 0 ? 256 : Int(apdu[4])
        let end = core.pageCount.map { $0 * 4 } ?? Int.max
        guard first * 4 < end, first <= 0xFF else { return PCSCPart3.blockDoesNotExist }
        let available = end - first * 4
        var out: [UInt8] = []
        var page = first
        while out.count < min(wanted, available) {
            guard page <= 0xFF, case .data(let block) = core.respond(to: [0x30, UInt8(page)]), !block.isEmpty else {
                // The tag's NAK says no more than "invalid argument" (protected page, or past
                // the end when the reader does not know the size): part 3's "no information".
                return out.isEmpty ? PCSCPart3.noInformation : out + PCSCPart3.endReached
            }
            out += block
            page += 4
        }
        // A READ near the end rolls over to page 0 on the tag: only the memory up to its end counts.
        let data = Array(out.prefix(min(wanted, available)))
        return data + (wanted > available ? PCSCPart3.endReached : PCSCPart3.success)
    }

    /// UPDATE BINARY (§3.2.2.1.9), case 3: P1 P2 the first page, Lc a multiple of 4 bytes,
    /// written page by page with WRITE `A2`.
    private mutating func updateBinary(_ apdu: [UInt8]) -> [UInt8] {
        guard let command = PCSCPart3.parse(apdu), command.le == nil, !command.data.isEmpty,
            command.data.count % 4 == 0, !command.isExtended
        else { return PCSCPart3.wrongLength }
        let first = Int(apdu[2]) << 8 | Int(apdu[3])
        let pages = core.pageCount ?? 0x100
        guard first < pages, first <= 0xFF else { return PCSCPart3.blockDoesNotExist }
        var written = 0
        for (i, offset) in stride(from: 0, to: command.data.count, by: 4).enumerated() {
            let page = first + i
            guard page < pages, page <= 0xFF else { return PCSCPart3.endReached }
            switch core.respond(to: [0xA2, UInt8(page)] + command.data[offset..<(offset + 4)]) {
            case .ack: written += 1
            case .nak: return written == 0 ? PCSCPart3.noInformation : PCSCPart3.memoryFailure
            case .silent, .data: return written == 0 ? PCSCPart3.noInformation : PCSCPart3.memoryFailure
            }
        }
        return PCSCPart3.success
    }

    /// LOAD KEYS (§3.2.2.1.4), case 3: P1 the key structure (only `00`: a card key, plain,
    /// into volatile memory), P2 the key number (`00`–`01`), a 6-byte MIFARE key.
    private mutating func loadKeys(_ apdu: [UInt8]) -> [UInt8] {
        guard let command = PCSCPart3.parse(apdu), command.le == nil, !command.data.isEmpty else {
            return PCSCPart3.wrongLength
        }
        let structure = apdu[2]
        if structure & 0x80 != 0 { return [0x69, 0x83] }  // reader key not supported
        if structure & 0x40 != 0 { return [0x69, 0x85] }  // secured transmission not supported
        if structure & 0x20 != 0 { return [0x69, 0x87] }  // non-volatile memory not available
        guard structure == 0x00 else { return PCSCPart3.functionNotSupported }
        guard apdu[3] <= 0x01 else { return [0x69, 0x88] }  // key number not valid
        guard command.data.count == 6 else { return [0x69, 0x89] }  // key length not correct
        loadedKeys[apdu[3]] = command.data
        return PCSCPart3.success
    }

    /// GENERAL AUTHENTICATE (§3.2.2.1.6), case 3: the 5-byte data object `01 00 <block>
    /// <key type> <key number>`. A Type 2 tag has no MIFARE Classic authentication.
    private mutating func generalAuthenticate(_ apdu: [UInt8]) -> [UInt8] {
        guard let command = PCSCPart3.parse(apdu), command.le == nil, command.data.count == 5 else {
            return PCSCPart3.wrongLength
        }
        guard apdu[2] == 0x00, apdu[3] == 0x00, command.data[0] == 0x01 else { return PCSCPart3.functionNotSupported }
        guard command.data[3] == 0x60 || command.data[3] == 0x61 else { return [0x69, 0x86] }  // key type not known
        guard command.data[4] <= 0x01 else { return [0x69, 0x88] }  // key number not valid
        return [0x69, 0x83]  // authentication cannot be done
    }

    private mutating func transparent(p1: UInt8, p2: UInt8, body: [UInt8]) -> [UInt8] {
        let success: [UInt8] = [0xC0, 0x03, 0x00, 0x90, 0x00]
        guard p1 == 0x00, p2 <= 0x01, let lc = body.first, body.count >= 1 + Int(lc) else {
            return p1 == 0x00 && p2 <= 0x01 ? PCSCPart3.wrongLength : PCSCPart3.functionNotSupported
        }
        let data = body[1..<(1 + Int(lc))]
        if p2 == 0x00 {  // Manage Session: start (81) / end (82) are all a virtual reader needs
            return success + PCSCPart3.success
        }
        // Transparent Exchange: find the Transceive DO 95.
        var rest = data[...]
        while let tag = rest.popFirst(), let len = rest.popFirst() {
            let length = Int(len)
            guard len < 0x80, rest.count >= length else { return PCSCPart3.wrongLength }
            let value = Array(rest.prefix(length))
            rest = rest.dropFirst(length)
            guard tag == 0x95 else { continue }
            switch core.respond(to: value) {
            case .data(let answer) where answer.count < 0x80:
                return success + [0x97, UInt8(answer.count)] + answer + PCSCPart3.success
            case .data(let answer):
                return success + [0x97, 0x81, UInt8(truncatingIfNeeded: answer.count)] + answer + PCSCPart3.success
            case .ack:
                return success + [0x97, 0x01, 0x0A] + PCSCPart3.success
            case .nak, .silent:
                return [0xC0, 0x03, 0x01, 0x64, 0x01] + PCSCPart3.success
            }
        }
        return PCSCPart3.functionNotSupported
    }
}
