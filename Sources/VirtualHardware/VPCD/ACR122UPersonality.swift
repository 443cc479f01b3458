public import NFCTags

/// The vpcd card as an ACS ACR122U shows a tag through PC/SC: a PN532 behind the reader's
/// firmware, the most common lab reader (`hardware/READERS.md`). Code written for an ACR122U
/// (its pseudo-APDUs, its direct transmit to the PN532) runs against the virtual bench.
///
/// Inside is the virtual PN532 (``PN532Chip``) with the tag file's card in its field, the same
/// ``PN532Card`` the virtual PN532 serves (the fault wrapper, the UID readers see): the firmware
/// activates the card when it enters the field (InListPassiveTarget, RATS for an ISO-DEP card)
/// and turns every pseudo-APDU into the chip's commands, so raw frames through it reach the tag
/// core where the PN532's own do.
///
/// The pseudo-APDUs, one table (``commands``) to extend: sources are ACS's ACR122U API
/// (v2.04; reported, as its sample programs and nfcpy's `acr122` driver send them) and PC/SC
/// 2.01.09 part 3 for the storage-card APDUs; nfcpy 1.0.4's `tests/test_clf_acr122.py` for
/// the answers it expects.
///
/// | APDU | what it does | answer |
/// | --- | --- | --- |
/// | `FF CA 00 00 Le` | the UID from the activation (no tag command) | UID `90 00` (part 3's Le rule) |
/// | `FF CA 01 00 Le` | the ATS's historical bytes | bytes `90 00`; `6A 81` for a storage card |
/// | `FF B0 00 <page> Le` | READ (`30 <page>`) through InDataExchange, Le 1–16 | Le bytes `90 00`; `63 00` when the tag NAKs or does not answer |
/// | `FF D6 00 <page> 04 <4 bytes>` | WRITE (`A2`) | `90 00`; `63 00` |
/// | `FF D6 00 <page> 10 <16 bytes>` | MIFARE WRITE (`A0`), the chip's two-frame compatibility write | `90 00`; `63 00` |
/// | `FF 00 00 00 Lc D4 <command>` | direct transmit: the PN532 command as it is | `D5 <answer> 90 00`; `63 7F` for a command the chip refuses (error frame), `63 01` when the chip does not answer |
/// | `FF 00 48 00 00` | the firmware version | `ACR122U203` (10 ASCII bytes, no status word: nfcpy's test reader; its driver wants `ACR122U` and a major version 2) |
/// | `FF 00 40 <LED> 04 <T1 T2 count buzzer>` | bi-colour LED and buzzer | `90 <LED state>` (bit 0 red, bit 1 green) |
/// | `FF 00 50 00 00`, `FF 00 51 <p> 00` | get/set the PICC operating parameter | `90 <parameter>` |
/// | `FF 00 52 <p> 00` | buzzer on card detection | `90 00` |
/// | `FF 82 00 <key number> 06 <key>` | LOAD KEYS | `90 00` |
/// | `FF 86 …` | MIFARE Classic authentication: a Type 2 tag has none | `63 00` |
/// | other `FF` (also `FF C2`, PC/SC 2.02's transparent exchange, which the ACR122U lacks) | — | `63 00` |
/// | any other APDU, ISO-DEP card | InDataExchange: the PN532 runs T=CL | the R-APDU; `63 00` when the card does not answer |
/// | any other APDU, storage card | — | `63 00` |
///
/// `63 00` is the firmware's "the operation failed", where it reports a card timeout; the
/// PN532's own statuses come back inside a direct transmit's `D5` answer (status `01` for a
/// timeout). A `tag_lost` fault takes the card out of the field: the vpcd card then closes its
/// connection, as for the PC/SC part 3 personality (``TagFileCardPersonality``).
public struct ACR122UPersonality: VirtualCardPersonality {
    /// The chip behind the firmware, with the card in its field.
    public private(set) var chip: PN532Chip
    public let atr: [UInt8]
    /// The ATS's historical bytes (GET DATA P1 `01`), `nil` for a storage card.
    public let historicalBytes: [UInt8]?
    /// The bi-colour LED: bit 0 red, bit 1 green (`FF 00 40`).
    public private(set) var ledState: UInt8 = 0x00
    /// The PICC operating parameter (`FF 00 50`/`51`): `FF`, every card type polled (assumed
    /// power-on value).
    public private(set) var piccParameter: UInt8 = 0xFF
    /// The MIFARE keys LOAD KEYS put in the reader, by key number.
    public private(set) var loadedKeys: [UInt8: [UInt8]] = [:]

    /// The firmware version string (`FF 00 48 00 00`).
    public static let firmwareVersion = Array("ACR122U203".utf8)

    /// A reader whose field holds `card` (its activation as the tag file gives it, see
    /// ``/NFCTags/TagFile/readerActivation``), behind `atr`. The card enters the field with
    /// ``enteredField()``, as vpcd's connection brings it.
    public init(card: PN532Card, atr: [UInt8], historicalBytes: [UInt8]?) {
        var chip = PN532Chip()
        chip.load(card)
        self.chip = chip
        self.atr = atr
        self.historicalBytes = historicalBytes
    }

    // MARK: VirtualCardPersonality

    public mutating func respond(to apdu: [UInt8]) -> [UInt8] {
        guard apdu.count >= 4 else { return PCSCPart3.wrongLength }
        guard apdu[0] == 0xFF else { return cardAPDU(apdu) }
        let key = Self.key(ins: apdu[1], p1: apdu[2])
        guard let entry = Self.commands[key] ?? Self.commands[Self.key(ins: apdu[1], p1: nil)] else {
            return Self.failed
        }
        return entry.handle(&self, apdu)
    }

    /// The reader powers the card up or resets it (vpcd `01`, `02`): the field goes off and
    /// on, and the firmware activates the card again.
    public mutating func reset() {
        _ = chip.command([0x32, 0x01, 0x00])
        activate()
    }

    public var hasLeftField: Bool { chip.currentCard?.isGone ?? false }

    /// The card enters the field (vpcd's connection is up): the same card again, its memory as
    /// it left and its faults that fired spent (``PN532Chip/presentAgain()``), then activated.
    public mutating func enteredField() {
        chip.remove()
        _ = chip.presentAgain()
        activate()
    }

    /// The Type 2 memory as it is now, for a Type 2 card.
    public var type2Core: NTAG21xCore? { chip.currentCard?.ntag21xCore }
    /// The T4T NDEF application as it is now, for a Type 4 card.
    public var type4Application: Type4NDEFApplication? { chip.currentCard?.type4Application }

    // MARK: The firmware

    /// `63 00`: the operation failed (ACR122U API).
    public static let failed: [UInt8] = [0x63, 0x00]

    /// SAMConfiguration normal mode, SetParameters fAutomaticATR_RES and fAutomaticRATS (the
    /// firmware runs ISO-DEP for the host), InListPassiveTarget at 106 kbps type A.
    private mutating func activate() {
        _ = chip.command([0x14, 0x01])
        _ = chip.command([0x12, 0x14])
        _ = chip.command([0x4A, 0x01, 0x00])
    }

    /// InDataExchange with the selected target: the data, or `nil` (status ≠ `00`, no answer).
    /// After a failed exchange the firmware activates the card again while it is in the field
    /// (the reader keeps one card selected for PC/SC; assumed, as its automatic polling finds
    /// the card again), so the next pseudo-APDU reaches it, as on a PC/SC part 3 reader.
    private mutating func exchange(_ frame: [UInt8]) -> [UInt8]? {
        guard case .response(let r) = chip.command([0x40, 0x01] + frame), r.count >= 2, r[1] == 0x00 else {
            if let card = chip.card, !card.isGone, !card.isISODEP, !chip.targetSelected { activate() }
            return nil
        }
        return Array(r.dropFirst(2))
    }

    private mutating func cardAPDU(_ apdu: [UInt8]) -> [UInt8] {
        guard chip.card?.isISODEP == true, let answer = exchange(apdu), answer.count >= 2 else { return Self.failed }
        return answer
    }

    /// One pseudo-APDU: what it is and how the firmware answers it.
    public struct Command: Sendable {
        public let name: String
        let handle: @Sendable (inout ACR122UPersonality, [UInt8]) -> [UInt8]
    }

    static func key(ins: UInt8, p1: UInt8?) -> UInt16 { UInt16(ins) << 8 | UInt16(p1 ?? 0xFF) }

    /// The pseudo-APDUs by instruction (and P1 for the `FF 00` escapes): the table above.
    public static let commands: [UInt16: Command] = [
        ACR122UPersonality.key(ins: 0xCA, p1: nil): Command(name: "GET DATA") { r, apdu in
            guard let card = r.chip.card, r.chip.targetSelected else { return ACR122UPersonality.failed }
            return PCSCPart3.getData(apdu, uid: card.uid, historicalBytes: r.historicalBytes)
        },
        ACR122UPersonality.key(ins: 0xB0, p1: 0x00): Command(name: "READ BINARY") { r, apdu in
            guard apdu.count == 5, (1...16).contains(apdu[4]) else { return ACR122UPersonality.failed }
            guard let data = r.exchange([0x30, apdu[3]]), data.count >= Int(apdu[4]) else {
                return ACR122UPersonality.failed
            }
            return Array(data.prefix(Int(apdu[4]))) + PCSCPart3.success
        },
        ACR122UPersonality.key(ins: 0xD6, p1: 0x00): Command(name: "UPDATE BINARY") { r, apdu in
            guard apdu.count >= 5, Int(apdu[4]) == apdu.count - 5 else { return ACR122UPersonality.failed }
            let data = Array(apdu.dropFirst(5))
            let frame: [UInt8]
            switch data.count {
            case 4: frame = [0xA2, apdu[3]] + data
            case 16: frame = [0xA0, apdu[3]] + data
            default: return ACR122UPersonality.failed
            }
            return r.exchange(frame) == nil ? failed : PCSCPart3.success
        },
        ACR122UPersonality.key(ins: 0x00, p1: 0x00): Command(name: "direct transmit") { r, apdu in
            guard apdu.count >= 6, apdu[3] == 0x00, Int(apdu[4]) == apdu.count - 5, apdu[5] == 0xD4,
                apdu.count >= 7
            else { return ACR122UPersonality.failed }
            switch r.chip.command(Array(apdu.dropFirst(6))) {
            case .response(let answer): return [0xD5] + answer + PCSCPart3.success
            case .error: return [0x63, 0x7F]
            case .none: return [0x63, 0x01]
            }
        },
        ACR122UPersonality.key(ins: 0x00, p1: 0x48): Command(name: "get the firmware version") { _, _ in
            ACR122UPersonality.firmwareVersion
        },
        ACR122UPersonality.key(ins: 0x00, p1: 0x40): Command(name: "LED and buzzer control") { r, apdu in
            guard apdu.count == 9, apdu[4] == 0x04 else { return ACR122UPersonality.failed }
            let control = apdu[3]
            // Bits 2-3 say which LED's final state (bits 0-1) is taken.
            if control & 0x04 != 0 { r.ledState = (r.ledState & ~0x01) | (control & 0x01) }
            if control & 0x08 != 0 { r.ledState = (r.ledState & ~0x02) | (control & 0x02) }
            return [0x90, r.ledState]
        },
        ACR122UPersonality.key(ins: 0x00, p1: 0x50): Command(name: "get the PICC operating parameter") { r, _ in
            [0x90, r.piccParameter]
        },
        ACR122UPersonality.key(ins: 0x00, p1: 0x51): Command(name: "set the PICC operating parameter") { r, apdu in
            r.piccParameter = apdu[3]
            return [0x90, r.piccParameter]
        },
        ACR122UPersonality.key(ins: 0x00, p1: 0x52): Command(name: "buzzer on card detection") { _, _ in
            PCSCPart3.success
        },
        ACR122UPersonality.key(ins: 0x82, p1: 0x00): Command(name: "LOAD KEYS") { r, apdu in
            guard apdu.count == 11, apdu[4] == 0x06, apdu[3] <= 0x01 else { return ACR122UPersonality.failed }
            r.loadedKeys[apdu[3]] = Array(apdu.dropFirst(5))
            return PCSCPart3.success
        },
    ]
}

extension TagFile {
    /// The ACR122U personality of the vpcd card for this tag file (``ACR122UPersonality``):
    /// the same card the virtual PN532 serves (``/VirtualHardware/PN532Card/init(tagFile:)``)
    /// behind the same ATR the PC/SC part 3 personality shows
    /// (``makeVirtualCardPersonality()``): ACS's ATRs follow part 3.
    /// - Throws: ``VirtualCardTagFileError`` when the file can't be emulated.
    public func makeACR122UPersonality() throws(VirtualCardTagFileError) -> ACR122UPersonality {
        let card: PN532Card
        do { card = try PN532Card(tagFile: self) } catch { throw VirtualCardTagFileError(error.description) }
        let generic = try makeVirtualCardPersonality()
        let historical = type == .type4 ? Self.historicalBytes(ats: card.ats) : nil
        return ACR122UPersonality(card: card, atr: generic.atr, historicalBytes: historical)
    }
}
