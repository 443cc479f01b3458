public import NFCTags

/// An ISO/IEC 15693 tag behind a PC/SC reader, as vpcd presents it: a PC/SC part 3
/// storage-card ATR (standard `0B`, ISO 15693 part 3; card name from the file's type:
/// `00 14` ICODE SLI for ICODE SLIX, `00 13` for ST's LRI/ST25 family) and the storage-card
/// pseudo-APDUs on blocks.
///
/// One addressing convention (hardware/pcsc-loopback/READERS.md lists the others): READ
/// BINARY `FF B0 00 <block> <Le>` returns Le bytes from that block on (`00` = one block),
/// `62 82` when the memory ends first, `6A 82` past it; UPDATE BINARY `FF D6 00 <block>
/// <Lc = k × block size>` writes k blocks, `69 82` on a locked block, `67 00` for another Lc
/// (SCM, SpringCard and ACS readers take P2 = block for block cards). GET DATA `FF CA 00 00`
/// gives the UID LSB first, as the air carries it and as an ACR1552 returns it (the byte
/// order is reader-specific; Core NFC's `identifier` is its reverse).
public struct ISO15693Personality: VirtualCardPersonality {
    public private(set) var card: FaultyISO15693Core
    public let atr: [UInt8]

    public init(core: ISO15693Core, cardName: PCSCCardName, faults: [TagFault] = []) {
        card = FaultyISO15693Core(core: core, faults: faults)
        atr = ATR.storageCard(standard: .iso15693Part3, cardName: cardName).bytes
    }

    public var hasLeftField: Bool { card.isGone }
    public mutating func enteredField() { card.enterField() }
    public mutating func reset() { card.resetToReady() }

    public mutating func respond(to apdu: [UInt8]) -> [UInt8] {
        guard let c = PCSCPart3.parse(apdu) else { return PCSCPart3.wrongLength }
        guard c.cla == 0xFF else { return PCSCPart3.classNotSupported }
        let size = card.core.blockSize
        let count = card.core.blocks.count
        switch c.ins {
        case 0xCA:
            return PCSCPart3.getData(apdu, uid: card.core.uidOnAir, historicalBytes: nil)
        case 0xB0:
            guard c.p1 == 0x00 else { return PCSCPart3.functionNotSupported }
            let first = Int(c.p2)
            guard first < count else { return PCSCPart3.blockDoesNotExist }
            let want = apdu.count == 5 ? (apdu[4] == 0 ? size : Int(apdu[4])) : size
            var out: [UInt8] = []
            var b = first
            while out.count < want && b < count {
                guard let r = card.respond(to: [0x02, 0x20, UInt8(b)]) else { return PCSCPart3.noInformation }
                guard r.first == 0x00, r.count == 1 + size else { return PCSCPart3.noInformation }
                out += r.dropFirst()
                b += 1
            }
            if out.count < want { return out + PCSCPart3.endReached }
            return Array(out.prefix(want)) + PCSCPart3.success
        case 0xD6:
            guard c.p1 == 0x00 else { return PCSCPart3.functionNotSupported }
            let data = c.data
            guard !data.isEmpty, data.count % size == 0 else { return PCSCPart3.wrongLength }
            let first = Int(c.p2)
            guard first + data.count / size <= count else { return PCSCPart3.blockDoesNotExist }
            for k in 0..<(data.count / size) {
                let block = Array(data[(k * size)..<((k + 1) * size)])
                guard let r = card.respond(to: [0x02, 0x21, UInt8(first + k)] + block) else {
                    return PCSCPart3.noInformation
                }
                if r.first != 0x00 { return r.count > 1 && r[1] == 0x12 ? [0x69, 0x82] : PCSCPart3.memoryFailure }
            }
            return PCSCPart3.success
        default:
            return PCSCPart3.instructionNotSupported
        }
    }
}

/// A FeliCa card behind a PC/SC reader, as vpcd presents it: the PC/SC part 3 storage-card
/// ATR for FeliCa (standard `11`, card name `00 3B`: `3B 8F 80 01 80 4F 0C A0 00 00 03 06 11
/// 00 3B 00 00 00 00 42`, the form ACS ACR1252U readers build), GET DATA `FF CA 00 00` =
/// the IDm, and FeliCa frames through the ACS direct transmit `FF 00 00 00 Lc <frame, LEN
/// first>` → `<answer, LEN first> 90 00` (ACR1252U reference manual; one convention,
/// READERS.md lists the others). A silent card answers `63 00`.
public struct FeliCaPersonality: VirtualCardPersonality {
    public private(set) var card: FaultyFeliCaCore
    public let atr: [UInt8] = ATR.storageCard(standard: .felica, cardName: .felica).bytes

    public init(core: FeliCaCore, faults: [TagFault] = []) {
        card = FaultyFeliCaCore(core: core, faults: faults)
        // The reader activates the card with a wildcard Polling.
        _ = card.poll(systemCode: [0xFF, 0xFF], requestCode: 0x01)
    }

    public var hasLeftField: Bool { card.isGone }
    public mutating func enteredField() {
        card.enterField()
        _ = card.poll(systemCode: [0xFF, 0xFF], requestCode: 0x01)
    }
    public mutating func reset() { _ = card.poll(systemCode: [0xFF, 0xFF], requestCode: 0x01) }

    public mutating func respond(to apdu: [UInt8]) -> [UInt8] {
        guard let c = PCSCPart3.parse(apdu) else { return PCSCPart3.wrongLength }
        guard c.cla == 0xFF else { return PCSCPart3.classNotSupported }
        switch c.ins {
        case 0xCA:
            return PCSCPart3.getData(apdu, uid: card.core.currentIDm, historicalBytes: nil)
        case 0x00:
            guard c.p1 == 0x00, c.p2 == 0x00, let len = c.data.first, Int(len) == c.data.count else {
                return PCSCPart3.wrongLength
            }
            guard let answer = card.respond(to: c.data) else { return PCSCPart3.noInformation }
            return answer + PCSCPart3.success
        default:
            return PCSCPart3.instructionNotSupported
        }
    }
}
