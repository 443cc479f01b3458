public import NFCTags

/// A Type 2 tag's command handler as a PN532 reaches it over the air: one ISO/IEC 14443-3
/// frame in (CRC_A excluded), one ``/NFCBase/Type2Answer`` out. NFCTags' `NTAG21xCore` has this shape.
public protocol PN532Type2Responder: Sendable {
    /// Answers one frame (e.g. `30 04` READ, `A2 …` WRITE, `60` GET_VERSION).
    mutating func respond(to frame: [UInt8]) -> Type2Answer
    /// HLTA received (or the PN532 deselected the tag): only WUPA wakes it.
    mutating func halt()
    /// The tag was (re)activated by REQA/WUPA + anticollision + SELECT.
    mutating func wakeUp()
    /// The tag has left the field for good (a `tag_lost` fault): it answers nothing and
    /// no activation finds it.
    var isGone: Bool { get }
}

extension PN532Type2Responder {
    public var isGone: Bool { false }
}

/// An ISO/IEC 14443-4 card application: one C-APDU in, one R-APDU out (data + SW1 SW2).
/// NFCTags' `Type4NDEFApplication` has this shape.
public protocol PN532APDUResponder: Sendable {
    /// The R-APDU; empty when the card stays silent (the PN532 reports a timeout).
    mutating func respond(to apdu: [UInt8]) -> [UInt8]
    /// The card has left the field for good (see ``PN532Type2Responder/isGone``).
    var isGone: Bool { get }
}

extension PN532APDUResponder {
    public var isGone: Bool { false }
}

/// A FeliCa card as a PN532 reaches it (JIS X 6319-4): Polling at activation, then LEN-first
/// command frames. NFCTags' `FaultyFeliCaCore` has this shape.
public protocol PN532FeliCaResponder: Sendable {
    /// The Polling response without LEN (`01 IDm PMm [RD]`), `nil` when no system matches.
    mutating func poll(systemCode: [UInt8], requestCode: UInt8) -> [UInt8]?
    /// The answer to one frame (LEN first), `nil` for silence.
    mutating func respond(to frame: [UInt8]) -> [UInt8]?
    var isGone: Bool { get }
}

/// A card in the virtual PN532's field: its ISO/IEC 14443-3 activation data and what
/// answers its frames.
public struct PN532Card: Sendable {
    /// What answers once the card is selected.
    public enum Function: Sendable {
        /// Type 2 Tag (NTAG21x, Ultralight): raw frames reach the responder.
        case type2(any PN532Type2Responder)
        /// ISO-DEP card: the PN532 runs T=CL itself, so C-APDUs reach the responder.
        case isoDEP(any PN532APDUResponder)
        /// FeliCa card (212 and 424 kbit/s): Polling and LEN-first frames reach the responder.
        case felica(any PN532FeliCaResponder)
    }

    /// UID (NFCID1): 4, 7 or 10 bytes.
    public var uid: [UInt8]
    /// ATQA (SENS_RES) in wire order, low byte first (NTAG21x: `44 00`). The PN532 reports
    /// it swapped (`00 44`), which is how libnfc prints it.
    public var atqa: [UInt8]
    /// SAK (SEL_RES); bit `20` announces ISO/IEC 14443-4.
    public var sak: UInt8
    /// ATS including its length byte TL (ISO/IEC 14443-4 §5.2), for ISO-DEP cards; empty otherwise.
    public var ats: [UInt8]
    public var function: Function
    /// ISO-DEP as the card runs it (RATS, blocks, chaining, DESELECT); used by ISO-DEP cards.
    var isoDEPLink: ISODEPCardLink

    public init(uid: [UInt8], atqa: [UInt8], sak: UInt8, ats: [UInt8] = [], function: Function) {
        self.uid = uid
        self.atqa = atqa
        self.sak = sak
        self.ats = ats
        self.function = function
        self.isoDEPLink = ISODEPCardLink(ats: ats)
    }

    var isISODEP: Bool { !isFeliCa && sak & 0x20 != 0 }

    /// A FeliCa card (``Function/felica(_:)``): it answers only FeliCa polling.
    var isFeliCa: Bool {
        if case .felica = function { return true }
        return false
    }

    /// The card left the field for good (a `tag_lost` fault fired).
    var isGone: Bool {
        switch function {
        case .type2(let r): r.isGone
        case .isoDEP(let r): r.isGone
        case .felica(let r): r.isGone
        }
    }
}

/// The external reader a virtual PN532 in target mode (TgInitAsTarget) plays: it activates
/// the emulated card with RATS, sends its C-APDUs one by one through TgGetData, checks the
/// R-APDUs that come back through TgSetData, then leaves the field (status `29`).
public struct PN532ReaderScript: Sendable, Equatable {
    public struct Step: Sendable, Equatable {
        /// The C-APDU the reader sends.
        public var command: [UInt8]
        /// The R-APDU it expects, or `nil` to accept any answer.
        public var expectedResponse: [UInt8]?
        public init(command: [UInt8], expectedResponse: [UInt8]? = nil) {
            self.command = command
            self.expectedResponse = expectedResponse
        }
    }
    /// The RATS the reader sends (`E0 80`: FSDI 8 = 256 bytes, CID 0), returned as the
    /// InitiatorCommand of TgInitAsTarget.
    public var rats: [UInt8]
    public var steps: [Step]

    public init(rats: [UInt8] = [0xE0, 0x80], steps: [Step]) {
        self.rats = rats
        self.steps = steps
    }
}

/// One exchange the scripted reader made with the emulated card.
public struct PN532ReaderExchange: Sendable, Equatable {
    public var command: [UInt8]
    /// What the card answered through TgSetData; `nil` if it never answered.
    public var response: [UInt8]?
    public var expectedResponse: [UInt8]?
    /// `true` when no answer was expected or the answer equals the expected one.
    public var matched: Bool {
        guard let expectedResponse else { return response != nil }
        return response == expectedResponse
    }
}
