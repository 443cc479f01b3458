// ISO/IEC 14443-4 (ISO-DEP) as the emulated card runs it over the air, so that a host that
// runs the protocol itself through InCommunicateThru (nfcpy, with the PN532's automatic
// RATS switched off) meets the same card as libnfc does through InDataExchange, where the
// PN532 runs it (UM0701-02 §7.3.8: the firmware handles the T=CL blocks).

/// The card side of ISO-DEP: activation (RATS → ATS, PPS), block numbering, chaining in both
/// directions, R(ACK)/R(NAK) recovery and DESELECT, following ISO/IEC 14443-4:2016 §5–§7
/// (PICC rules of §7.5.4.3). One frame in (CRC_A excluded), one frame out or `nil` for silence.
struct ISODEPCardLink: Sendable {
    enum Layer: Sendable, Equatable {
        /// Selected at ISO/IEC 14443-3 level: only RATS (and HLTA) are understood.
        case waitingForRATS
        /// After the ATS: blocks are exchanged.
        case active
        /// After S(DESELECT) or HLTA: silent until the next activation.
        case halted
    }

    private(set) var ats: [UInt8]
    private(set) var layer: Layer = .waitingForRATS
    /// The PICC's block number (ISO/IEC 14443-4 §7.5.3.2: 1 after activation).
    private(set) var blockNumber: UInt8 = 1
    /// CID from RATS (§5.6.1.1), used when the PCD sends blocks with a CID byte.
    private(set) var cid: UInt8 = 0
    /// FSD from RATS (§5.6.1.1, Table 1): the largest frame the PCD takes, PCB and CRC included.
    private(set) var frameSizeForPCD = 256
    private var ppsAllowed = false
    private var lastBlock: [UInt8]?
    private var commandChain: [UInt8] = []
    private var responseRest: [UInt8] = []

    init(ats: [UInt8]) { self.ats = ats }

    /// REQA/WUPA + anticollision + SELECT: back to 14443-3 level, waiting for RATS; the ATS
    /// (TL included) is the card's (a bare `01` when it has none).
    mutating func selected(ats: [UInt8]) {
        self.ats = ats.isEmpty ? [0x01] : ats
        layer = .waitingForRATS
        blockNumber = 1
        cid = 0
        lastBlock = nil
        commandChain = []
        responseRest = []
    }

    /// The frame size the card takes (FSC from the ATS's FSCI, §5.2.3; 32 bytes without T0).
    var frameSizeForCard: Int {
        guard ats.count >= 2, ats[0] >= 2 else { return 32 }
        return Self.frameSize(index: ats[1] & 0x0F)
    }

    static func frameSize(index: UInt8) -> Int {
        let sizes = [16, 24, 32, 40, 48, 64, 96, 128, 256]
        return sizes[min(Int(index), sizes.count - 1)]
    }

    /// One frame from the reader; the card's answer, or `nil` when it stays silent.
    mutating func respond(to frame: [UInt8], application: inout any PN532APDUResponder) -> [UInt8]? {
        // A card that left the field (a tag_lost fault) answers nothing, not even R(ACK).
        guard !application.isGone else { return nil }
        guard let pcb = frame.first else { return nil }
        switch layer {
        case .halted:
            return nil
        case .waitingForRATS:
            guard pcb == 0xE0, frame.count == 2 else {
                if frame == [0x50, 0x00] { layer = .halted }
                return nil  // ISO/IEC 14443-3 §6.3: anything else is not answered
            }
            frameSizeForPCD = Self.frameSize(index: frame[1] >> 4)
            cid = frame[1] & 0x0F
            layer = .active
            ppsAllowed = true
            blockNumber = 1
            return ats
        case .active:
            break
        }
        // PPS (§5.6.1.3): only as the first block after the ATS.
        if pcb & 0xF0 == 0xD0 {
            guard ppsAllowed, pcb & 0x0F == cid, frame.count >= 2 else { return nil }
            ppsAllowed = false
            return [pcb]
        }
        ppsAllowed = false
        // Prologue (§7.1.1): PCB, then CID when bit 4 (08h) is set, then NAD when bit 3 (04h) is
        // set on an I-block. A block for another CID, or without one when ours is not 0, is ignored.
        var index = 1
        let hasCID = pcb & 0x08 != 0
        if hasCID {
            guard frame.count > 1, frame[1] & 0x0F == cid else { return nil }
            index += 1
        } else if cid != 0 {
            return nil
        }
        let prologueCID: [UInt8] = hasCID ? [cid] : []
        func block(_ pcb: UInt8, _ inf: [UInt8] = []) -> [UInt8] {
            [pcb | (hasCID ? 0x08 : 0x00)] + prologueCID + inf
        }

        if pcb & 0xE2 == 0x02 {  // I-block
            if pcb & 0x04 != 0 { index += 1 }  // NAD: not used by this card, skipped
            guard frame.count >= index else { return nil }
            blockNumber ^= 1  // rule 10: toggle on every I-block
            commandChain += frame[index...]
            if pcb & 0x10 != 0 {  // the PCD chains: acknowledge (rule 2)
                return remember(block(0xA2 | blockNumber))
            }
            let apdu = commandChain
            commandChain = []
            responseRest = application.respond(to: apdu)
            // An empty answer is a silent card (a fault): no block goes back, the PCD times out.
            guard !responseRest.isEmpty else { return nil }
            return remember(nextResponseBlock(block))
        }
        if pcb & 0xE6 == 0xA2 {  // R-block
            let number = pcb & 0x01
            if number == blockNumber {  // rule 11: re-send the last block
                return lastBlock
            }
            if pcb & 0x10 != 0 {  // R(NAK), other number: rule 12
                return block(0xA2 | blockNumber)
            }
            // R(ACK), other number: rule 13, go on chaining (toggling, as on an I-block).
            guard !responseRest.isEmpty else { return nil }
            blockNumber ^= 1
            return remember(nextResponseBlock(block))
        }
        if pcb & 0xC7 == 0xC2 {  // S-block
            switch pcb & 0x30 {
            case 0x00:  // S(DESELECT): answer it, then HALT (§8)
                layer = .halted
                return block(0xC2)
            default:  // S(WTX) answers: this card never asks for more time
                return nil
            }
        }
        return nil  // an invalid block is ignored (rule 4)
    }

    private mutating func remember(_ block: [UInt8]) -> [UInt8] {
        lastBlock = block
        return block
    }

    /// The next I-block of the R-APDU, chaining (bit 10h) when the rest does not fit FSD
    /// less PCB, CID and CRC_A (§7.1.1.4, rule 2).
    private mutating func nextResponseBlock(_ block: (UInt8, [UInt8]) -> [UInt8]) -> [UInt8] {
        let room = max(1, frameSizeForPCD - 3 - (block(0x02, []).count - 1))
        let part = Array(responseRest.prefix(room))
        responseRest.removeFirst(part.count)
        return block(0x02 | (responseRest.isEmpty ? 0x00 : 0x10) | blockNumber, part)
    }
}
