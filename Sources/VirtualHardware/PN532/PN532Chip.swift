import NFCTags

/// A fault the virtual PN532 puts on the wire once, for the next command that qualifies.
public enum PN532WireFault: Sendable, Equatable {
    /// The next response frame carries a wrong data checksum (libnfc: `NFC_EIO`).
    case corruptResponseChecksum
    /// The next response frame carries a wrong length checksum (libnfc: `NFC_EIO`).
    case corruptLengthChecksum
    /// The next command is acknowledged but never answered (libnfc: `NFC_ETIMEOUT`).
    case silence
    /// The card leaves the field when the next InDataExchange/InCommunicateThru arrives,
    /// so that exchange gets status `01` (timeout) and the card is gone.
    case fieldLossMidExchange
}

/// What the chip exchanged over the air (ISO/IEC 14443-A, CRC_A not included), as a
/// PN532 would: the card side of each host command. ``PN532Chip/takeAir()`` hands them out.
public enum PN532AirEvent: Sendable, Equatable {
    /// The RF field went on or off (RFConfiguration, polling, a reader arriving or leaving
    /// in target mode).
    case field(on: Bool, note: String)
    /// One command frame and the card's answer (nil: no answer). `kind` says what it is:
    /// `reqa`, `anticollision`, `select`, `rats`, `type2`, `block` (ISO-DEP I/R/S-block),
    /// `hlta`, `deselect`, `presence`.
    case exchange(kind: String, command: [UInt8], answer: [UInt8]?, note: String?)
}

/// The PN532's state and command dispatcher, without I/O or clock: bytes from the host in,
/// bytes to the host out. ``VirtualPN532`` puts it on a pseudo-terminal.
///
/// Implements what libnfc 1.8.0's `pn532_uart` driver and nfcpy 1.0's `pn532` driver send
/// (UM0701-02 §7): Diagnose (00), GetFirmwareVersion (02), GetGeneralStatus (04),
/// Read/WriteRegister (06/08), SetSerialBaudRate (10), SetParameters (12),
/// SAMConfiguration (14), PowerDown (16), RFConfiguration (32), InDataExchange (40),
/// InCommunicateThru (42), InDeselect (44), InListPassiveTarget (4A), InRelease (52),
/// InAutoPoll (60), TgInitAsTarget (8C), TgGetData (86), TgSetData (8E).
/// Anything else gets ACK + the error frame. Status bytes never have bit 7 (NAD) or
/// bit 6 (MI) set.
///
/// ISO-DEP cards: with SetParameters' fAutomaticRATS (bit 4) set the chip sends RATS itself
/// and runs ISO/IEC 14443-4 for InDataExchange (libnfc); with it clear the card stays at
/// 14443-3 level and the host runs RATS and the blocks through InCommunicateThru (nfcpy).
/// Either way the card side is one ISO-DEP card link (`ISODEPCardLink`, internal).
///
/// The CIU's CRC switches (TxMode/RxMode bit 7, `6302`/`6303`) decide what InCommunicateThru
/// adds and checks; InListPassiveTarget at 106 kbps type A leaves both on (the firmware sends
/// SELECT with CRC_A): reported, since nfcpy's `pn53x.sense_tta` clears only RxMode's bit
/// for Type 2 tags after it and sends ISO-DEP blocks through InCommunicateThru without CRC.
public struct PN532Chip: Sendable {
    public enum PowerMode: Sendable, Equatable { case lowVbat, normal, powerDown }

    /// GetFirmwareVersion answer: IC `32` (PN532), version 1, revision 6, support
    /// `07` (ISO 14443A, ISO 14443B, ISO 18092).
    public var firmwareVersion: [UInt8] = [0x32, 0x01, 0x06, 0x07]
    /// The chip's modes (power, RF field, the card and its activation, the command answered
    /// later, target mode's reader): one value machine, so no two of them can disagree.
    public private(set) var state = PN532ChipMachine<PN532Card>()
    public var powerMode: PowerMode { state.power }
    public var rfFieldOn: Bool { state.field == .on }
    /// SetParameters flags (`10` AutoRATS decides whether an ATS is reported).
    public private(set) var parameters: UInt8 = 0
    /// RFConfiguration item 5: MxRtyATR, MxRtyPSL, MxRtyPassiveActivation.
    public private(set) var retries: [UInt8] = [0xFF, 0x01, 0xFF]
    /// The host-link speed SetSerialBaudRate chose (UM0701-02 §7.2.9: 9 600 … 1 288 000 baud).
    /// On a pseudo-terminal any speed works: it is recorded, not enforced.
    public private(set) var serialBaudRate = 115_200
    /// How many host ACKs (aborts) the chip has taken: a transport that holds responses back
    /// until a real link would deliver them drops the ones it holds when this moves.
    public private(set) var aborts = 0
    /// How many host commands the chip has taken. A command cancels a pending one (the chip
    /// runs one at a time, UM0701-02 §6.2), and a host sends one only once it gave up on the
    /// answer to the last (libnfc's `pn532_uart_send` flushes its input first): so a transport
    /// that holds answers back drops the ones it holds when this moves, as the host's flush
    /// would have discarded them had they come in time.
    public private(set) var commandsTaken = 0
    /// The chip's own ISO-DEP block number when it runs T=CL for InDataExchange (PCD side).
    private var pcdBlockNumber: UInt8 = 0
    /// The bit rate (212 or 424 kbit/s) a FeliCa card was last activated at.
    private var feliCaRate = 212
    /// The CIU register file, addresses `6301`–`633E`.
    public private(set) var registers = [UInt8](repeating: 0, count: 62)
    public var card: PN532Card? { state.cardInField }
    /// The card as it last left the field (``remove()``, a wire fault's field loss), its
    /// memory and fault schedule kept for ``presentAgain()``.
    public var cardOutOfField: PN532Card? { state.cardOutOfField }
    /// Whether InDeselect halted the card in the field (only a field reset or a new
    /// presentation wakes it for REQA).
    public var cardHalted: Bool { state.activation == .halted }
    /// Whether the card is the current target (Tg 1) after InListPassiveTarget/InAutoPoll.
    public var targetSelected: Bool { state.activation == .selected }
    /// What the scripted reader has done so far in target mode.
    public private(set) var readerExchanges: [PN532ReaderExchange] = []
    /// `true` once the scripted reader sent its last command and left (status `29` given).
    public var readerFinished: Bool { state.target == .readerLeft }

    /// What the command being handled did on the air (``lastCommandAir``).
    public private(set) var lastCommandAir = PN532CommandAirTime()
    /// RFConfiguration item 2's fRetryTimeout: how long the chip waits for a tag that stays
    /// silent (``PN532LinkConstants/retryTimeout(code:)``). Power-on value `0A` (51.2 ms).
    public private(set) var retryTimeoutCode: UInt8 = 0x0A

    private var parser = PN532FrameParser()
    private var lastResponse: [UInt8] = []
    private var faults: [PN532WireFault] = []
    /// The ISO-DEP block numbers and frame sizes of the card (or, in target mode, of the reader).
    private var blocks = ISODEPBlockFraming()
    /// What went over the air since the last ``takeAir()``.
    public private(set) var air: [PN532AirEvent] = []
    /// The RATS this chip sends when it activates an ISO-DEP card (AutoRATS): `E0 80`, FSD
    /// 256, CID 0. Assumed: UM0701-02 does not give the PN532's FSDI.
    public static let rats: [UInt8] = [0xE0, 0x80]

    /// A finite InAutoPoll still polling for a card: the chip answers "no target" once
    /// `duration` has passed (``pollTimeElapsed(serial:)``), or the card when one comes first.
    /// A PN532 polls PollNr × Period × 150 ms for each target type (UM0701-02 §7.3.13;
    /// libnfc's `nfc-poll` announces the same product).
    public struct FinitePoll: Sendable, Equatable {
        public var serial: Int
        public var duration: Duration
    }
    /// The finite InAutoPoll in progress, if any (the device serving the chip keeps its time).
    public var finitePoll: FinitePoll? {
        guard case .autoPoll(_, let serial?) = state.pending else { return nil }
        return FinitePoll(serial: serial, duration: pollDuration)
    }
    private var pollSerial = 0
    private var pollDuration: Duration = .zero

    public init() {
        registers[Int(Self.txControl - 0x6301)] = 0x80
    }

    /// The air events since the last call, oldest first.
    public mutating func takeAir() -> [PN532AirEvent] {
        defer { air = [] }
        return air
    }

    /// Feeds the machine one input and performs the field changes it answers (an air event
    /// with `fieldNote`); returns the other actions for the caller.
    @discardableResult
    private mutating func apply(
        _ input: PN532ChipMachine<PN532Card>.Input, fieldNote: String = ""
    ) -> [PN532ChipMachine<PN532Card>.Action] {
        var rest: [PN532ChipMachine<PN532Card>.Action] = []
        for action in state.apply(input) {
            if case .fieldChanged(let on) = action {
                air.append(.field(on: on, note: fieldNote))
            } else {
                rest.append(action)
            }
        }
        return rest
    }

    /// The card in the field takes its new value (memory, link state).
    private mutating func updateCard(_ card: PN532Card) { state.updateCardInField(card) }

    // MARK: inputs

    /// Feeds bytes the host wrote; returns the bytes the chip writes back (ACKs, responses).
    public mutating func receive(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        receiveTimed(bytes).flatMap(\.bytes)
    }

    /// ``receive(_:)``, each thing the chip writes back apart with what its command did on the
    /// air: an ACK (sent as soon as the frame is checked), then the response (sent when the
    /// RF exchange is over). For the link-timing model (``PN532LinkTiming``).
    public mutating func receiveTimed(_ bytes: some Sequence<UInt8>) -> [PN532ChipOutput] {
        parser.append(bytes)
        var out: [PN532ChipOutput] = []
        while let frame = parser.next() {
            if case .ack = frame {
                // The host's ACK aborts the running command (UM §6.2.1.3): a response not yet
                // on the wire is never sent. Those still in `out` go here; the caller's link
                // schedule drops its own when ``aborts`` moves.
                out.removeAll { !$0.isAcknowledgement }
                aborts &+= 1
            }
            if case .command = frame {
                // The host wrote this command after an earlier one whose answers are not on the
                // wire yet (the chip was late: a loaded host): it has given up on those and
                // would flush them before this one, so they are never sent.
                out.removeAll()
                commandsTaken &+= 1
            }
            lastCommandAir = PN532CommandAirTime()
            let answer = handle(frame)
            let ack = PN532FrameEncoder.ack
            if answer.count > ack.count, Array(answer.prefix(ack.count)) == ack {
                out.append(PN532ChipOutput(bytes: ack, isAcknowledgement: true, air: PN532CommandAirTime()))
                out.append(
                    PN532ChipOutput(
                        bytes: Array(answer.dropFirst(ack.count)), isAcknowledgement: false, air: lastCommandAir))
            } else if !answer.isEmpty {
                out.append(PN532ChipOutput(bytes: answer, isAcknowledgement: answer == ack, air: lastCommandAir))
            }
        }
        return out
    }

    /// What the chip answers one host command, without the frame layer.
    public enum HostAnswer: Sendable, Equatable {
        /// The response payload after TFI `D5`: the command code + 1, then its data.
        case response([UInt8])
        /// The syntax-error frame (an unknown command, bad parameters).
        case error
        /// Nothing yet (a pending InAutoPoll or TgInitAsTarget), or nothing at all (a wire fault).
        case none
    }

    /// One host command (the payload after TFI `D4`: command code and parameters) straight
    /// into the dispatcher, as the firmware of a reader built around the chip passes it on
    /// (the ACR122U's direct transmit, ``ACR122UPersonality``). The same rules as a frame from
    /// the UART (README.md beside this file).
    public mutating func command(_ payload: [UInt8]) -> HostAnswer {
        let out = receive(PN532FrameEncoder.informationFrame(tfi: 0xD4, payload: payload))
        var rest = out[...]
        if Array(rest.prefix(6)) == PN532FrameEncoder.ack { rest = rest.dropFirst(6) }
        if Array(rest.prefix(8)) == PN532FrameEncoder.errorFrame { return .error }
        let b = Array(rest)
        guard b.count >= 7, b[0] == 0x00, b[1] == 0x00, b[2] == 0xFF else { return .none }
        if b[3] == 0xFF && b[4] == 0xFF {
            let length = Int(b[5]) << 8 | Int(b[6])
            guard length >= 1, b.count >= 10 + length else { return .none }
            return .response(Array(b[9..<(8 + length)]))
        }
        let length = Int(b[3])
        guard length >= 1, b.count >= 7 + length else { return .none }
        return .response(Array(b[6..<(5 + length)]))
    }

    /// ``present(_:)`` with what it did on the air (the activation answering an InAutoPoll).
    public mutating func presentTimed(_ card: PN532Card) -> PN532ChipOutput? {
        lastCommandAir = PN532CommandAirTime()
        let out = present(card)
        return out.isEmpty ? nil : PN532ChipOutput(bytes: out, isAcknowledgement: false, air: lastCommandAir)
    }

    /// Takes `card` as the card of this run, out of the field: ``presentAgain()`` brings it in.
    /// Replaces a card that is out of the field; nothing when a card is in the field.
    public mutating func load(_ card: PN532Card) {
        apply(.load(card))
    }

    /// ``presentAgain()`` with what it did on the air.
    public mutating func presentAgainTimed() -> PN532ChipOutput? {
        lastCommandAir = PN532CommandAirTime()
        let out = presentAgain()
        return out.isEmpty ? nil : PN532ChipOutput(bytes: out, isAcknowledgement: false, air: lastCommandAir)
    }

    /// Puts a card in the field, replacing any other (as it is: see ``presentAgain()`` for the
    /// same card coming back); answers an outstanding endless InAutoPoll.
    public mutating func present(_ card: PN532Card) -> [UInt8] {
        for case .answerPoll(let types) in apply(.present(card)) {
            guard let answer = autoPollAnswer(types: types) else { continue }
            apply(.pollAnswered)
            return respond(0x61, answer)
        }
        return []
    }

    /// The finite poll `serial` has run its time without a card: answers "no target"
    /// (`61 00`). Nothing when that poll already ended (a card came, the host aborted it or
    /// sent another command).
    public mutating func pollTimeElapsed(serial: Int) -> [UInt8] {
        guard apply(.pollTimeElapsed(serial: serial)).contains(.answerNoTarget) else { return [] }
        return respond(0x61, [0x00])
    }

    /// Takes the card out of the field (kept as ``cardOutOfField``). The next exchange with it
    /// times out (status `01`).
    public mutating func remove() {
        apply(.remove)
    }

    /// The card that last left the field comes back: the same tag, its memory as it left and
    /// its tag file's faults that fired spent (``PN532Card/enterField()``: once per load of the
    /// file, as on every device). Nothing when a card is in the field or none left it.
    public mutating func presentAgain() -> [UInt8] {
        guard card == nil, var again = cardOutOfField else { return [] }
        again.enterField()
        return present(again)
    }

    /// The card of this run as it is now, in the field or out of it.
    public var currentCard: PN532Card? { card ?? cardOutOfField }

    /// An external reader comes: it activates the emulated card at once if TgInitAsTarget
    /// is outstanding, else when it arrives.
    public mutating func startReader(_ script: PN532ReaderScript) -> [UInt8] {
        readerExchanges = []
        guard apply(.readerArrived(script)).contains(.readerActivates(script)) else { return [] }
        readerActivates(script)
        return respond(0x8D, [0x08] + script.rats)
    }

    /// Queues a fault for the next command that qualifies.
    public mutating func inject(_ fault: PN532WireFault) { faults.append(fault) }

    /// Reads one CIU register (`6301`–`633E`) as the chip's state implies it: CIU_TxControl
    /// (`6304`) has Tx1RFEn and Tx2RFEn (bits 0–1) set while the RF field is on; the others
    /// read what was last written or what the chip's own commands left (TxMode/RxMode CRC
    /// after an activation, FIFOData `26` after an unanswered REQA). Other addresses read 0.
    public func register(_ address: UInt16) -> UInt8 {
        guard (0x6301...0x633E).contains(address) else { return 0 }
        let value = registers[Int(address - 0x6301)]
        if address == Self.txControl { return (value & 0xFC) | (rfFieldOn ? 0x03 : 0x00) }
        return value
    }

    /// CIU_TxControl: bits 0–1 drive TX1 and TX2 (the RF field); reset value `80`
    /// (InvTx2RFOn), as nfcpy writes it to switch the field off.
    static let txControl: UInt16 = 0x6304

    /// WriteRegister of one CIU register; CIU_TxControl's bits 0–1 switch the RF field.
    private mutating func writeRegister(_ address: UInt16, _ value: UInt8) {
        guard (0x6301...0x633E).contains(address) else { return }
        registers[Int(address - 0x6301)] = value
        if address == Self.txControl {
            let on = value & 0x03 != 0
            apply(.switchField(on: on), fieldNote: "WriteRegister CIU_TxControl: RF field \(on ? "on" : "off")")
        }
    }

    // MARK: dispatch

    private mutating func handle(_ frame: PN532HostFrame) -> [UInt8] {
        switch frame {
        case .ack:
            apply(.hostAck)  // abort: drop the pending command, send nothing
            return []
        case .nack:
            return lastResponse
        case .malformed:
            return []
        case .command(let command):
            guard let code = command.first else { return PN532FrameEncoder.ack + PN532FrameEncoder.errorFrame }
            apply(.commandReceived)  // a new command cancels a pending one
            if faults.first == .silence {
                faults.removeFirst()
                return PN532FrameEncoder.ack
            }
            let params = Array(command.dropFirst())
            let answer = dispatch(code: code, params: params)
            switch answer {
            case .reply(let payload): return PN532FrameEncoder.ack + respond(code &+ 1, payload)
            case .error: return PN532FrameEncoder.ack + PN532FrameEncoder.errorFrame
            case .later: return PN532FrameEncoder.ack
            }
        }
    }

    private enum Answer {
        case reply([UInt8])
        case error, later
    }

    private mutating func respond(_ code: UInt8, _ payload: [UInt8]) -> [UInt8] {
        var frame = PN532FrameEncoder.informationFrame(payload: [code] + payload)
        if let fault = faults.first {
            switch fault {
            case .corruptResponseChecksum:
                faults.removeFirst()
                frame[frame.count - 2] ^= 0x5A
            case .corruptLengthChecksum:
                faults.removeFirst()
                frame[4] ^= 0x5A
            case .silence, .fieldLossMidExchange:
                break
            }
        }
        lastResponse = frame
        return frame
    }

    private mutating func dispatch(code: UInt8, params: [UInt8]) -> Answer {
        apply(.commandStarted(code: code))
        switch code {
        case 0x00:
            return diagnose(params)
        case 0x02:
            return .reply(firmwareVersion)
        case 0x04:  // GetGeneralStatus: Err Field NbTg [Tg BrRx BrTx Type] SAMstatus
            var status: [UInt8] = [0x00, rfFieldOn ? 0x01 : 0x00]
            if case .inField(let c, .selected) = state.card {
                // FeliCa: BrRx/BrTx 01 (212) or 02 (424), modulation type 10 (assumed from UM0701-02's table).
                let br: UInt8 = feliCaRate == 424 ? 0x02 : 0x01
                status += c.isFeliCa ? [0x01, 0x01, br, br, 0x10] : [0x01, 0x01, 0x00, 0x00, 0x00]
            } else {
                status.append(0x00)
            }
            return .reply(status + [0x00])
        case 0x06:
            guard !params.isEmpty, params.count % 2 == 0 else { return .error }
            return .reply(
                stride(from: 0, to: params.count, by: 2).map {
                    register(UInt16(params[$0]) << 8 | UInt16(params[$0 + 1]))
                })
        case 0x08:
            guard !params.isEmpty, params.count % 3 == 0 else { return .error }
            for i in stride(from: 0, to: params.count, by: 3) {
                writeRegister(UInt16(params[i]) << 8 | UInt16(params[i + 1]), params[i + 2])
            }
            return .reply([])
        case 0x10:  // SetSerialBaudRate: answered at the old speed; the host ACKs, then both switch
            let speeds = [9_600, 19_200, 38_400, 57_600, 115_200, 230_400, 460_800, 921_600, 1_288_000]
            guard params.count == 1, Int(params[0]) < speeds.count else { return .error }
            serialBaudRate = speeds[Int(params[0])]
            return .reply([])
        case 0x12:
            guard params.count == 1 else { return .error }
            parameters = params[0]
            return .reply([])
        case 0x14:
            guard (1...3).contains(params.count) else { return .error }
            return .reply([])
        case 0x16:  // PowerDown: the machine took it at commandStarted
            return .reply([0x00])
        case 0x32:
            return rfConfiguration(params)
        case 0x40:
            return inDataExchange(params)
        case 0x42:
            return inCommunicateThru(params)
        case 0x44:  // InDeselect: the PN532 halts the target (HLTA / S(DESELECT)); nothing for FeliCa
            if apply(.deselect(halts: card.map { !$0.isFeliCa } ?? false)).contains(.haltCard), let present = card {
                if present.isISODEP {
                    air.append(.exchange(kind: "deselect", command: [0xC2], answer: [0xC2], note: "S(DESELECT)"))
                } else {
                    air.append(.exchange(kind: "hlta", command: [0x50, 0x00], answer: nil, note: "HLTA"))
                }
                haltCard()
            }
            return .reply([0x00])
        case 0x52:  // InRelease
            apply(.targetReleased)
            return .reply([0x00])
        case 0x4A:
            return inListPassiveTarget(params)
        case 0x60:
            guard params.count >= 3 else { return .error }
            let types = Array(params.dropFirst(2))
            if let answer = autoPollAnswer(types: types) { return .reply(answer) }
            if params[0] == 0xFF {  // endless polling: answer when a card comes or the host aborts
                apply(.pollStarted(types: types, serial: nil))
                return .later
            }
            // Finite polling: "no target" after PollNr × Period × 150 ms per type, unless a card comes.
            pollSerial += 1
            pollDuration = .milliseconds(150 * Int(params[0]) * Int(max(1, params[1])) * types.count)
            apply(.pollStarted(types: types, serial: pollSerial))
            return .later
        case 0x8C:
            guard params.count >= 37 else { return .error }
            for case .readerActivates(let reader) in apply(.initAsTarget) {
                readerActivates(reader)
                return .reply([0x08] + reader.rats)
            }
            return .later
        case 0x86:
            return tgGetData()
        case 0x8E:
            return tgSetData(params)
        default:
            return .error
        }
    }

    /// Diagnose (`00`), by test number NumTst (README.md beside this file has the sources):
    /// `00` communication line: NumTst and the data echoed; `01` ROM and `02` RAM self-tests:
    /// `00` (OK); `06` card presence: the target's status (`00` present, `01` timeout);
    /// `07` antenna self-test: `00` (OK). The polling (`04`) and echo-back (`05`) tests
    /// are not modelled: the error frame.
    private mutating func diagnose(_ params: [UInt8]) -> Answer {
        guard let test = params.first else { return .error }
        switch test {
        case 0x00: return .reply(params)
        case 0x01, 0x02: return .reply([0x00])
        case 0x06: return .reply([card.map { !$0.isGone } == true && targetSelected ? 0x00 : 0x01])
        case 0x07: return .reply([0x00])
        default: return .error
        }
    }

    private mutating func rfConfiguration(_ params: [UInt8]) -> Answer {
        guard let item = params.first else { return .error }
        switch item {
        case 0x01:
            guard params.count == 2 else { return .error }
            let on = params[1] & 0x01 != 0
            if !rfFieldOn && on { lastCommandAir.fieldSwitchedOn = true }
            if rfFieldOn && !on { lastCommandAir.fieldSwitchedOff = true }
            apply(.switchField(on: on), fieldNote: "RFConfiguration: RF field \(on ? "on" : "off")")
        case 0x02:  // Various timings: RFU, fATR_RES_Timeout, fRetryTimeout
            guard params.count == 4 else { return .error }
            retryTimeoutCode = params[3]
        case 0x05:
            guard params.count == 4 else { return .error }
            retries = Array(params.dropFirst())
        default:
            break
        }
        return .reply([])
    }

    /// The card in the field takes HLTA or S(DESELECT) (the machine holds it halted).
    private mutating func haltCard() {
        guard var halted = card else { return }
        airFrame(halted.isoDEPLink.layer == .active ? [0xC2] : [0x50, 0x00], crc: true)
        switch halted.function {
        case .type2(var core):
            core.halt()
            halted.function = .type2(core)
        case .isoDEP(var app):  // S(DESELECT) when the card is at 14443-4 level, else HLTA
            let frame: [UInt8] = halted.isoDEPLink.layer == .active ? [0xC2] : [0x50, 0x00]
            _ = halted.isoDEPLink.respond(to: frame, application: &app)
            halted.function = .isoDEP(app)
        case .felica:
            break
        }
        updateCard(halted)
    }

    /// Activates the card if one is in the field and not halted (REQA semantics); with
    /// `rats` an ISO-DEP card also gets RATS (`E0 80`: FSD 256, CID 0; assumed) and the
    /// chip runs ISO-DEP for it. The CIU is left at 106 kbps type A with CRC on.
    private mutating func activate(uidFilter: [UInt8]?, rats: Bool) -> [UInt8]? {
        registers[0x6302 - 0x6301] = (registers[0x6302 - 0x6301] & 0x0C) | 0x80
        registers[0x6303 - 0x6301] = (registers[0x6303 - 0x6301] & 0x0C) | 0x80
        if !rfFieldOn { lastCommandAir.fieldSwitchedOn = true }
        lastCommandAir.activates = true
        guard var present = card, !cardHalted, !present.isGone, !present.isFeliCa else {
            registers[0x6339 - 0x6301] = 0x26  // REQA still in the FIFO: nobody answered
            airSilence()
            return nil
        }
        if let uidFilter, !uidFilter.isEmpty, Self.plainUID(uidFilter) != present.uid {
            airSilence()
            return nil
        }
        airActivation(uidLength: present.uid.count)
        apply(.targetActivated, fieldNote: "the chip switches the RF field on to poll")
        var ats: [UInt8] = []
        switch present.function {
        case .type2(var core):
            core.wakeUp()
            present.function = .type2(core)
        case .isoDEP(var app):
            present.isoDEPLink.selected(ats: present.ats)
            if rats && present.isISODEP {
                ats = present.isoDEPLink.respond(to: [0xE0, 0x80], application: &app) ?? []
                airExchange([0xE0, 0x80], crc: true, answer: ats)
                pcdBlockNumber = 0
            }
            present.function = .isoDEP(app)
        case .felica:
            break
        }
        updateCard(present)
        logActivation(present, ats: ats)
        var data = targetData(present)
        if !ats.isEmpty { data += ats }
        return data
    }

    /// A UID as the host may send it in InitiatorData: cascaded (ISO/IEC 14443-3 §6.5.4,
    /// CT `88` before each incomplete level: 8 or 12 bytes) or plain.
    static func plainUID(_ uid: [UInt8]) -> [UInt8] {
        switch uid.count {
        case 8 where uid[0] == 0x88: Array(uid.dropFirst())
        case 12 where uid[0] == 0x88 && uid[4] == 0x88: Array(uid[1..<4]) + Array(uid[5...])
        default: uid
        }
    }

    /// The frames of an activation the chip runs itself: REQA, anticollision and SELECT per
    /// cascade level (the SAK of a level that is not the last has only the cascade bit),
    /// and RATS with the ATS the card answered when it activated ISO-DEP.
    private mutating func logActivation(_ card: PN532Card, ats: [UInt8]) {
        air.append(.exchange(kind: "reqa", command: [0x26], answer: card.atqa, note: "REQA → ATQA"))
        let levels = ISO14443AActivation.cascadeLevels(uid: card.uid)
        for (i, level) in levels.enumerated() {
            air.append(
                .exchange(
                    kind: "anticollision", command: [level.sel, 0x20], answer: level.anticollisionAnswer,
                    note: "anticollision, cascade level \(i + 1)"))
            let last = i == levels.count - 1
            air.append(
                .exchange(
                    kind: "select", command: level.select, answer: [last ? card.sak : 0x04],
                    note: "SELECT, cascade level \(i + 1)"))
        }
        if !ats.isEmpty {
            air.append(.exchange(kind: "rats", command: Self.rats, answer: ats, note: "RATS → ATS"))
        }
    }

    /// Target mode: a reader's field reaches the chip and the reader sends RATS (the PN532
    /// answers anticollision and RATS itself from TgInitAsTarget's parameters; that answer
    /// is not modelled, so the RATS is logged without one).
    private mutating func readerActivates(_ script: PN532ReaderScript) {
        air.append(.field(on: true, note: "target mode: an external reader's field"))
        air.append(
            .exchange(
                kind: "rats", command: script.rats, answer: nil,
                note: "the reader's RATS (the PN532 answers ATQA, SAK and ATS itself; not modelled)"))
        blocks = ISODEPBlockFraming(ats: [], rats: script.rats)
    }

    /// Target mode: the scripted reader hands over whole C-APDUs, so their blocks are built
    /// by ISO/IEC 14443-4's rules (``ISODEPBlockFraming``), not exchanged.
    static let scriptedFraming = "I-block framing synthesized (the scripted reader passes whole C-APDUs)"

    private mutating func logBlocks(_ command: [UInt8], _ answer: [UInt8]?, note: String?) {
        for (i, b) in blocks.exchange(command, answer).enumerated() {
            if b.fromReader {
                air.append(.exchange(kind: "block", command: b.bytes, answer: nil, note: i == 0 ? note : nil))
            } else if case .exchange(let kind, let c, nil, let n)? = air.last, kind == "block" {
                air[air.count - 1] = .exchange(kind: kind, command: c, answer: b.bytes, note: n)
            } else {
                air.append(.exchange(kind: "block", command: [], answer: b.bytes, note: nil))
            }
        }
    }

    private func targetData(_ card: PN532Card) -> [UInt8] {
        let sensRes: [UInt8] = card.atqa.count == 2 ? [card.atqa[1], card.atqa[0]] : [0x00, 0x00]
        return [0x01] + sensRes + [card.sak, UInt8(truncatingIfNeeded: card.uid.count)] + card.uid
    }

    private mutating func inListPassiveTarget(_ params: [UInt8]) -> Answer {
        guard params.count >= 2, params[0] >= 1 else { return .error }
        if params[1] == 0x01 || params[1] == 0x02 {
            // FeliCa 212 / 424: InitiatorData is the Polling payload `00 SC SC RC TSN`.
            guard params.count == 7, params[2] == 0x00 else { return .error }
            guard let data = activateFeliCa(Array(params[3...]), rate: params[1] == 0x01 ? 212 : 424) else {
                return .reply([0x00])
            }
            return .reply([0x01] + data)
        }
        guard params[1] == 0x00 else { return .reply([0x00]) }  // 14443A and FeliCa are modelled
        guard let data = activate(uidFilter: Array(params.dropFirst(2)), rats: parameters & 0x10 != 0) else {
            return .reply([0x00])
        }
        return .reply([0x01] + data)
    }

    /// A FeliCa card answers Polling (JIS X 6319-4 §7.1; PN532 UM0701-02 §7.3.5: the
    /// target data is `Tg POL_RES`, POL_RES = LEN 01 IDm PMm [RD], LEN counting itself).
    /// The CIU is left in FeliCa mode at `rate` with CRC on (TxMode/RxMode 92 or A2).
    private mutating func activateFeliCa(_ polling: [UInt8], rate: Int) -> [UInt8]? {
        let mode: UInt8 = rate == 424 ? 0xA2 : 0x92
        registers[0x6302 - 0x6301] = mode
        registers[0x6303 - 0x6301] = mode
        if !rfFieldOn { lastCommandAir.fieldSwitchedOn = true }
        lastCommandAir.activates = true
        let request: [UInt8] = [0x06, 0x00] + polling
        guard var present = card, !present.isGone, case .felica(var core) = present.function,
            let answer = core.poll(systemCode: Array(polling.prefix(2)), requestCode: polling[2])
        else {
            airFeliCa(request, answer: nil, rate: rate)
            air.append(.exchange(kind: "felica", command: request, answer: nil, note: "Polling: no answer"))
            return nil
        }
        present.function = .felica(core)
        updateCard(present)
        apply(.targetActivated, fieldNote: "the chip switches the RF field on to poll")
        feliCaRate = rate
        let pollRes = [UInt8(answer.count + 1)] + answer
        airFeliCa(request, answer: pollRes, rate: rate)
        air.append(.exchange(kind: "felica", command: request, answer: pollRes, note: "Polling (\(rate) kbit/s)"))
        return [0x01] + pollRes
    }

    private mutating func autoPollAnswer(types: [UInt8]) -> [UInt8]? {
        guard let present = card, !cardHalted, !present.isGone else { return nil }
        if present.isFeliCa {
            // Types 11 (212) and 12 (424): Polling with the wildcard and Request Code 01
            // (whether the firmware asks for the system code here is not documented; assumed).
            guard let type = types.first(where: { $0 == 0x11 || $0 == 0x12 }),
                let data = activateFeliCa([0xFF, 0xFF, 0x01, 0x00], rate: type == 0x11 ? 212 : 424)
            else { return nil }
            return [0x01, type, UInt8(truncatingIfNeeded: data.count)] + data
        }
        let type: UInt8
        if present.isISODEP, types.contains(0x20) {
            type = 0x20
        } else if types.contains(0x10) {
            type = 0x10
        } else {
            return nil
        }
        guard let data = activate(uidFilter: nil, rats: type == 0x20) else { return nil }
        return [0x01, type, UInt8(truncatingIfNeeded: data.count)] + data
    }

    /// The card answers one exchange; status `01` when it stays silent or is gone.
    private mutating func exchangeWithCard(_ frame: [UInt8], raw: Bool) -> Answer {
        if faults.first == .fieldLossMidExchange {
            faults.removeFirst()
            remove()
            return .reply([0x01])
        }
        guard case .inField(var present, .selected) = state.card, !present.isGone else {
            if card != nil {
                air.append(
                    .exchange(
                        kind: card?.isISODEP == true ? "block" : "type2", command: frame, answer: nil,
                        note: "no answer: the card is gone"))
            }
            return .reply([0x01])
        }
        defer { updateCard(present) }
        switch present.function {
        case .felica(var core):
            defer { present.function = .felica(core) }
            let answer = core.respond(to: frame)
            airFeliCa(frame, answer: answer, rate: feliCaRate)
            air.append(.exchange(kind: "felica", command: frame, answer: answer, note: nil))
            guard let answer else { return .reply([0x01]) }
            if raw && registers[0x6303 - 0x6301] & 0x80 == 0 { return .reply([0x00] + answer + feliCaCRC(answer)) }
            return .reply([0x00] + answer)
        case .type2(var core):
            defer { present.function = .type2(core) }
            // InDataExchange's MIFARE WRITE (`A0 <block> <16 bytes>`, what libnfc's
            // nfc_initiator_mifare_cmd sends for MC_WRITE): the chip sends it as MIFARE's two
            // frames, `A0 <block>`, then the 16 bytes once the card ACKed (UM0701-02 §7.3.8,
            // MIFARE commands through InDataExchange): on a Type 2 tag that is
            // COMPATIBILITY_WRITE, whose first 4 bytes the tag writes.
            let frames =
                !raw && frame.count == 18 && frame[0] == 0xA0
                ? [Array(frame.prefix(2)), Array(frame.dropFirst(2))] : [frame]
            var answer = Type2Answer.silent
            for (i, part) in frames.enumerated() {
                answer = core.respond(to: part)
                airType2(part, answer)
                let note = frames.count > 1 ? (i == 0 ? "MIFARE WRITE, first frame" : "MIFARE WRITE, data frame") : nil
                switch answer {
                case .data(let d): air.append(.exchange(kind: "type2", command: part, answer: d, note: note))
                case .ack: air.append(.exchange(kind: "type2", command: part, answer: [0x0A], note: note))
                case .nak(let code):
                    air.append(.exchange(kind: "type2", command: part, answer: [code & 0x0F], note: note))
                case .silent: air.append(.exchange(kind: "type2", command: part, answer: nil, note: note))
                }
                guard case .ack = answer else { break }
            }
            switch answer {
            case .data(let d):
                if raw && registers[0x6303 - 0x6301] & 0x80 == 0 { return .reply([0x00] + d + iso14443CRCA(d)) }
                return .reply([0x00] + d)
            case .ack:
                registers[0x633C - 0x6301] = (registers[0x633C - 0x6301] & 0xF8) | 0x04
                return .reply(raw ? [0x00, 0x0A] : [0x00])
            case .nak(let code):
                if raw {
                    registers[0x633C - 0x6301] = (registers[0x633C - 0x6301] & 0xF8) | 0x04
                    return .reply([0x00, code & 0x0F])
                }
                apply(.targetReleased)
                return .reply([0x14])  // modelling choice: MIFARE-mode exchange ends in an error
            case .silent:
                apply(.targetReleased)
                return .reply([0x01])
            }
        case .isoDEP(var app):
            defer { present.function = .isoDEP(app) }
            if raw {  // the host runs ISO-DEP (or pings with R(NAK)): the card's blocks as they are
                let reply = present.isoDEPLink.respond(to: frame, application: &app)
                air.append(
                    .exchange(kind: frame.first == 0xE0 ? "rats" : "block", command: frame, answer: reply, note: nil))
                airExchange(frame, crc: true, answer: reply)
                guard let d = reply else { return .reply([0x01]) }
                if registers[0x6303 - 0x6301] & 0x80 == 0 { return .reply([0x00] + d + iso14443CRCA(d)) }
                return .reply([0x00] + d)
            }
            guard let answer = runISODEP(frame, link: &present.isoDEPLink, application: &app) else {
                return .reply([0x01])
            }
            return .reply([0x00] + answer)
        }
    }

    /// InDataExchange on an ISO-DEP card: the chip as PCD (ISO/IEC 14443-4 §7.5.4.2) sends the
    /// C-APDU in I-blocks of at most FSC, chaining, and collects the chained R-APDU with R(ACK)s.
    /// `nil` when the card does not answer as the protocol says (status `01` to the host).
    private mutating func runISODEP(
        _ apdu: [UInt8], link: inout ISODEPCardLink, application: inout any PN532APDUResponder
    ) -> [UInt8]? {
        let room = max(1, link.frameSizeForCard - 3)
        var offset = 0
        var answer: [UInt8] = []
        repeat {
            let part = Array(apdu[offset..<min(apdu.count, offset + room)])
            offset += part.count
            let more = offset < apdu.count
            let block = [0x02 | (more ? 0x10 : 0x00) | pcdBlockNumber] + part
            let reply = link.respond(to: block, application: &application)
            airExchange(block, crc: true, answer: reply)
            air.append(.exchange(kind: "block", command: block, answer: reply, note: nil))
            guard let a = reply else { return nil }
            if more {
                guard a == [0xA2 | pcdBlockNumber] else { return nil }
                pcdBlockNumber ^= 1
            }
            answer = a
        } while offset < apdu.count
        var response: [UInt8] = []
        while true {
            guard let pcb = answer.first, pcb & 0xEE == 0x02, pcb & 0x01 == pcdBlockNumber else { return nil }
            response += answer.dropFirst()
            pcdBlockNumber ^= 1
            if pcb & 0x10 == 0 { return response }
            let ack: [UInt8] = [0xA2 | pcdBlockNumber]
            let next = link.respond(to: ack, application: &application)
            air.append(.exchange(kind: "block", command: ack, answer: next, note: nil))
            airExchange(ack, crc: true, answer: next)
            guard let next else { return nil }
            answer = next
        }
    }

    private mutating func inDataExchange(_ params: [UInt8]) -> Answer {
        guard params.count >= 1, params[0] & 0x0F == 0x01 else { return .reply([0x27]) }
        return exchangeWithCard(Array(params.dropFirst()), raw: false)
    }

    private mutating func inCommunicateThru(_ params: [UInt8]) -> Answer {
        // Framing other than ISO 14443A (B', SR, CT, iClass probes) or an empty frame: nobody answers.
        let txMode = registers[0x6302 - 0x6301]
        if let c = card, c.isFeliCa {
            // FeliCa framing (TxMode bits 1-0 = 10) reaches a FeliCa card; A and B framing do not.
            guard !params.isEmpty, txMode & 0x03 == 0x02 else { return .reply([0x01]) }
            var frame = params
            if txMode & 0x80 == 0 {  // CRC off: the host appended the CRC itself
                guard frame.count >= 3, feliCaCRC(frame.dropLast(2)) == Array(frame.suffix(2)) else {
                    return .reply([0x01])
                }
                frame.removeLast(2)
            }
            return exchangeWithCard(frame, raw: true)
        }
        guard !params.isEmpty, txMode & 0x03 == 0x00, card != nil else { return .reply([0x01]) }
        var frame = params
        if txMode & 0x80 == 0 {  // CRC off: the host appended CRC_A itself
            guard frame.count >= 3, iso14443CRCA(frame.dropLast(2)) == Array(frame.suffix(2)) else {
                return .reply([0x01])  // a bad CRC: the tag stays silent
            }
            frame.removeLast(2)
        }
        return exchangeWithCard(frame, raw: true)
    }

    private mutating func tgGetData() -> Answer {
        var answer = Answer.reply([0x29])
        for action in apply(.tgGetData) {
            switch action {
            case .readerCommandUnanswered:
                if let last = readerExchanges.last {
                    logBlocks(last.command, nil, note: "the reader's C-APDU, never answered; " + Self.scriptedFraming)
                }
            case .readerLeaves:
                air.append(.field(on: false, note: "target mode: the reader leaves"))
            case .sendReaderCommand(let step):
                readerExchanges.append(
                    PN532ReaderExchange(command: step.command, response: nil, expectedResponse: step.expectedResponse))
                answer = .reply([0x00] + step.command)
            default:
                break
            }
        }
        return answer
    }

    // MARK: air time (the link-timing model)

    /// A reader frame on the air; after an earlier frame of this command, the PICC-to-PCD
    /// frame delay first.
    private mutating func airFrame(_ frame: [UInt8], crc: Bool) {
        let onAir = crc ? frame + iso14443CRCA(frame) : frame
        if lastCommandAir.frames > 0 { lastCommandAir.rf += PN532LinkTime.cycles(PN532LinkConstants.piccToPCDCycles) }
        lastCommandAir.frames += 1
        lastCommandAir.rf += PN532LinkTime.pcdFrame(bytes: onAir.count)
        lastCommandAir.rf += PN532LinkTime.frameDelay(afterLastByte: onAir.last ?? 0)
    }

    /// A FeliCa frame and its answer on the air: preamble (6 bytes), SYNC (2), the frame, CRC
    /// (2), Manchester-coded at `rate` kbit/s (JIS X 6319-4 §7; PN532 data sheet §8.6.3.2);
    /// a silent card costs the chip's retry timeout.
    private mutating func airFeliCa(_ frame: [UInt8], answer: [UInt8]?, rate: Int) {
        func time(_ bytes: Int) -> Duration { .nanoseconds((6 + 2 + bytes + 2) * 8 * 1_000_000 / rate) }
        if lastCommandAir.frames > 0 { lastCommandAir.rf += PN532LinkTime.cycles(PN532LinkConstants.piccToPCDCycles) }
        lastCommandAir.frames += 1
        lastCommandAir.rf += time(frame.count)
        guard let answer else {
            lastCommandAir.rf += PN532LinkConstants.retryTimeout(code: retryTimeoutCode)
            return
        }
        lastCommandAir.rf += time(answer.count)
    }

    /// JIS X 6319-4's CRC: CRC-16/CCITT, polynomial 1021, initial 0000, MSB first (PN532
    /// data sheet §8.6.3.2: `03 AB CD` → `90 35`).
    func feliCaCRC(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var crc: UInt16 = 0
        for b in bytes {
            crc ^= UInt16(b) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? crc << 1 ^ 0x1021 : crc << 1 }
        }
        return [UInt8(crc >> 8), UInt8(crc & 0xFF)]
    }

    /// A reader frame and the tag's answer (CRC_A on both), or the chip's wait for a silent tag.
    private mutating func airExchange(_ frame: [UInt8], crc: Bool, answer: [UInt8]?) {
        airFrame(frame, crc: crc)
        guard let answer, !answer.isEmpty else {
            lastCommandAir.rf += PN532LinkConstants.retryTimeout(code: retryTimeoutCode)
            return
        }
        lastCommandAir.rf += PN532LinkTime.piccFrame(bytes: answer.count + 2)
    }

    /// A Type 2 command (the host's frame, CRC_A added on the air) and its answer: data, a
    /// 4-bit ACK/NAK (after the EEPROM write for WRITE and COMPATIBILITY_WRITE's data), or
    /// silence.
    private mutating func airType2(_ frame: [UInt8], _ answer: Type2Answer) {
        switch answer {
        case .data(let d): airExchange(frame, crc: true, answer: d)
        case .silent: airExchange(frame, crc: true, answer: nil)
        case .ack, .nak:
            airFrame(frame, crc: true)
            let writes = frame.first == 0xA2 || frame.count == 16
            if writes, case .ack = answer {
                // The ACK comes when the page is programmed, not at the least frame delay.
                lastCommandAir.rf -= PN532LinkTime.frameDelay(afterLastByte: (frame + iso14443CRCA(frame)).last ?? 0)
                lastCommandAir.rf += PN532LinkConstants.tagWriteTime
            }
            lastCommandAir.rf += PN532LinkTime.rfBits(PN532LinkConstants.fourBitAnswerBits)
        }
    }

    /// REQA, then per cascade level ANTICOLLISION (`93`/`95`/`97 20`, 5 bytes back) and
    /// SELECT (7 bytes + CRC_A, SAK + CRC_A back) (ISO/IEC 14443-3 §6).
    private mutating func airActivation(uidLength: Int) {
        lastCommandAir.rf += PN532LinkTime.rfBits(PN532LinkConstants.shortFrameBits)
        // REQA `26` sent LSB first ends with a 0 bit.
        lastCommandAir.rf += PN532LinkTime.cycles(
            PN532LinkConstants.frameDelayN * PN532LinkConstants.cyclesPerBit
                + PN532LinkConstants.frameDelayLastBitZeroCycles)
        lastCommandAir.rf += PN532LinkTime.piccFrame(bytes: 2)
        lastCommandAir.frames += 1
        let levels = uidLength <= 4 ? 1 : uidLength <= 7 ? 2 : 3
        for level in 0..<levels {
            let sel = UInt8(0x93 + 2 * level)
            airFrame([sel, 0x20], crc: false)
            lastCommandAir.rf += PN532LinkTime.piccFrame(bytes: 5)
            airFrame([sel, 0x70, 0, 0, 0, 0, 0], crc: true)
            lastCommandAir.rf += PN532LinkTime.piccFrame(bytes: 3)
        }
    }

    /// REQA that nobody answers, once per passive activation attempt (RFConfiguration item 5's
    /// MxRtyPassiveActivation + 1; `FF`, endless on a real chip, counts once here): each
    /// attempt lasts until an ATQA could have ended.
    private mutating func airSilence() {
        let attempts = retries[2] == 0xFF ? 1 : Int(retries[2]) + 1
        for _ in 0..<attempts {
            lastCommandAir.rf += PN532LinkConstants.unansweredRequest
        }
    }

    private mutating func tgSetData(_ params: [UInt8]) -> Answer {
        guard !readerExchanges.isEmpty, apply(.tgSetData).contains(.readerAnswered) else {
            return .reply([0x29])
        }
        readerExchanges[readerExchanges.count - 1].response = params
        logBlocks(readerExchanges[readerExchanges.count - 1].command, params, note: Self.scriptedFraming)
        return .reply([0x00])
    }
}
