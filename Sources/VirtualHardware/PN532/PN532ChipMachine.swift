/// The PN532's modes as a pure value: inputs in, actions out (the house style of a state
/// machine, as `ReaderSessionMachine` and `DiscoveryMachine` are). ``PN532Chip`` holds one
/// (`PN532ChipMachine<PN532Card>`), feeds it what each host command and each test input
/// means for the chip's state, and performs the returned ``Action`` values on the wire and
/// the air. It reads no clock, builds no frame and touches no card memory.
///
/// The state (UM0701-02 §7 for the commands; each part carries only what is valid in it):
/// - ``power``: after power-up the chip is in low-VBAT mode; any command but PowerDown (`16`)
///   wakes it (normal mode), PowerDown puts it in power-down mode; a host ACK wakes it too.
/// - ``field``: the RF field, switched by RFConfiguration item 1 and CIU_TxControl, and on
///   as soon as an activation finds a target.
/// - ``card``: the card of this run, none, out of the field or in it. A card in the field is
///   ``Activation/idle``, ``Activation/selected`` (listed as Tg 1 by InListPassiveTarget or
///   InAutoPoll) or ``Activation/halted`` (InDeselect sent HLTA or S(DESELECT)). The field
///   going off powers the card down: it comes back idle. A card out of the field is neither
///   selected nor halted (it is idle when it comes back).
/// - ``pending``: a command answered later (an InAutoPoll still polling, a TgInitAsTarget
///   waiting for a reader). Any new command or a host ACK (abort) drops it.
/// - ``target``: target mode's scripted reader (``PN532ReaderScript``): none, in the field
///   (the step it is at, and whether it waits for the card's TgSetData), or gone (it sent its
///   last command and left: TgGetData and TgSetData answer status `29`).
public struct PN532ChipMachine<Card: Sendable>: Sendable {
    /// The chip's power mode: low-VBAT after power-up, normal once a command woke it,
    /// power-down after PowerDown (`16`).
    public typealias PowerMode = PN532Chip.PowerMode

    /// The RF field the chip drives (initiator mode).
    public enum RFField: Sendable, Hashable { case off, on }

    /// A card in the field, as the chip holds it.
    public enum Activation: Sendable, Hashable {
        /// Not selected: REQA (or FeliCa Polling) finds it.
        case idle
        /// Tg 1: activated by InListPassiveTarget or InAutoPoll; exchanges reach it. The field is on.
        case selected
        /// InDeselect halted it (HLTA, or S(DESELECT) at ISO-DEP level): REQA does not find it
        /// until the field goes off or it is presented again. The field is on.
        case halted
    }

    /// The card of this run.
    public enum CardState: Sendable {
        /// No card was loaded or presented.
        case noCard
        /// It left the field (or was loaded without entering it), kept for its next entry.
        case outOfField(Card)
        /// In the field.
        case inField(Card, Activation)
    }

    /// A command whose answer comes later.
    public enum Pending: Sendable, Hashable {
        case noCommand
        /// InAutoPoll: `serial` for a finite poll (answered "no target" when its time is up),
        /// `nil` for an endless one (answered only when a card comes).
        case autoPoll(types: [UInt8], serial: Int?)
        /// TgInitAsTarget, waiting for an external reader.
        case initAsTarget
    }

    /// Target mode: the scripted external reader.
    public enum TargetMode: Sendable, Equatable {
        /// No reader script.
        case noReader
        /// The reader is in the field at `step` of its script; `awaitingResponse` once it sent
        /// that step's C-APDU (TgGetData) and waits for the R-APDU (TgSetData).
        case readerInField(PN532ReaderScript, step: Int, awaitingResponse: Bool)
        /// The reader sent its last command and left the field (status `29`).
        case readerLeft
    }

    /// What the chip learns.
    public enum Input: Sendable {
        /// The host's ACK frame: an abort (UM0701-02 §6.2.1.3).
        case hostAck
        /// A host command frame with a command code arrived: it cancels a pending one.
        case commandReceived
        /// The firmware runs command `code` (after a wire fault had its say).
        case commandStarted(code: UInt8)
        /// RFConfiguration item 1 or a write to CIU_TxControl switches the field.
        case switchField(on: Bool)
        /// An activation found the card in the field (it answered REQA…SELECT or Polling).
        case targetActivated
        /// The chip lets go of Tg 1 without halting it: InRelease, TgInitAsTarget, or a
        /// MIFARE-mode exchange that failed.
        case targetReleased
        /// InDeselect; `halts`: the card in the field takes HLTA or S(DESELECT) (FeliCa
        /// cards are only let go).
        case deselect(halts: Bool)
        /// A card for this run, out of the field; ignored while a card is in the field.
        case load(Card)
        /// A card enters the field (replacing any other), idle.
        case present(Card)
        /// The card in the field leaves it.
        case remove
        /// InAutoPoll found nothing at once and polls on.
        case pollStarted(types: [UInt8], serial: Int?)
        /// The pending InAutoPoll was answered (a card came).
        case pollAnswered
        /// Finite poll `serial`'s time is up.
        case pollTimeElapsed(serial: Int)
        /// TgInitAsTarget.
        case initAsTarget
        /// An external reader comes with its script.
        case readerArrived(PN532ReaderScript)
        /// TgGetData: the host asks for the reader's next command.
        case tgGetData
        /// TgSetData: the host answers the reader's command.
        case tgSetData
    }

    /// What the chip does, in order.
    public enum Action: Sendable, Equatable {
        /// The RF field changed (an air event).
        case fieldChanged(on: Bool)
        /// Send HLTA or S(DESELECT) to the card in the field and halt it.
        case haltCard
        /// A card came while InAutoPoll is pending: answer the poll if the card answers these
        /// types (then feed ``Input/pollAnswered``).
        case answerPoll(types: [UInt8])
        /// Answer the pending finite InAutoPoll with "no target" (`61 00`).
        case answerNoTarget
        /// The reader activates the emulated card: answer TgInitAsTarget (mode `08`, its RATS).
        case readerActivates(PN532ReaderScript)
        /// The reader's last C-APDU was never answered: log it so.
        case readerCommandUnanswered
        /// Hand the reader's command of this step to the host (TgGetData `00` + C-APDU).
        case sendReaderCommand(PN532ReaderScript.Step)
        /// The reader leaves the field: TgGetData answers `29`.
        case readerLeaves
        /// The card's answer reached the reader: TgSetData answers `00`.
        case readerAnswered
        /// No reader is there to take this (status `29`).
        case noReader
    }

    public private(set) var power: PowerMode = .lowVbat
    public private(set) var field: RFField = .off
    public private(set) var card: CardState = .noCard
    public private(set) var pending: Pending = .noCommand
    public private(set) var target: TargetMode = .noReader

    public init() {}

    /// The card in the field, if any.
    public var cardInField: Card? {
        if case .inField(let c, _) = card { c } else { nil }
    }

    /// The card out of the field, if any.
    public var cardOutOfField: Card? {
        if case .outOfField(let c) = card { c } else { nil }
    }

    /// How the card in the field stands (`nil`: no card in the field).
    public var activation: Activation? {
        if case .inField(_, let a) = card { a } else { nil }
    }

    /// Replaces the card in the field by its new value (its memory, link state), keeping how
    /// it stands. Nothing when no card is in the field. Data, not a transition.
    public mutating func updateCardInField(_ value: Card) {
        guard case .inField(_, let a) = card else { return }
        card = .inField(value, a)
    }

    /// One input: the state moves; the actions are for the chip to perform, in order.
    public mutating func apply(_ input: Input) -> [Action] {
        switch input {
        case .hostAck:
            pending = .noCommand
            power = .normal
            return []
        case .commandReceived:
            pending = .noCommand
            return []
        case .commandStarted(let code):
            power = code == 0x16 ? .powerDown : .normal
            return []
        case .switchField(let on):
            return setField(on ? .on : .off)
        case .targetActivated:
            guard case .inField(let c, _) = card else { return [] }
            let actions = setField(.on)
            card = .inField(c, .selected)
            return actions
        case .targetReleased:
            if case .inField(let c, .selected) = card { card = .inField(c, .idle) }
            return []
        case .deselect(let halts):
            guard case .inField(let c, .selected) = card else { return [] }
            card = .inField(c, halts ? .halted : .idle)
            return halts ? [.haltCard] : []
        case .load(let c):
            if case .inField = card { return [] }
            card = .outOfField(c)
            return []
        case .present(let c):
            card = .inField(c, .idle)
            if case .autoPoll(let types, _) = pending { return [.answerPoll(types: types)] }
            return []
        case .remove:
            if case .inField(let c, _) = card { card = .outOfField(c) }
            return []
        case .pollStarted(let types, let serial):
            pending = .autoPoll(types: types, serial: serial)
            return []
        case .pollAnswered:
            if case .autoPoll = pending { pending = .noCommand }
            return []
        case .pollTimeElapsed(let serial):
            guard case .autoPoll(_, serial?) = pending else { return [] }
            pending = .noCommand
            return [.answerNoTarget]
        case .initAsTarget:
            if case .inField(let c, .selected) = card { card = .inField(c, .idle) }
            if case .readerInField(let script, 0, _) = target { return [.readerActivates(script)] }
            pending = .initAsTarget
            return []
        case .readerArrived(let script):
            target = .readerInField(script, step: 0, awaitingResponse: false)
            guard pending == .initAsTarget else { return [] }
            pending = .noCommand
            return [.readerActivates(script)]
        case .tgGetData:
            guard case .readerInField(let script, let step, let awaiting) = target else { return [.noReader] }
            let unanswered: [Action] = awaiting ? [.readerCommandUnanswered] : []
            guard step < script.steps.count else {
                target = .readerLeft
                return unanswered + [.readerLeaves]
            }
            target = .readerInField(script, step: step, awaitingResponse: true)
            return unanswered + [.sendReaderCommand(script.steps[step])]
        case .tgSetData:
            guard case .readerInField(let script, let step, true) = target else { return [.noReader] }
            target = .readerInField(script, step: step + 1, awaitingResponse: false)
            return [.readerAnswered]
        }
    }

    /// The field goes to `new`; going off powers the card in the field down (idle again).
    private mutating func setField(_ new: RFField) -> [Action] {
        guard field != new else { return [] }
        field = new
        if new == .off, case .inField(let c, _) = card { card = .inField(c, .idle) }
        return [.fieldChanged(on: new == .on)]
    }
}

extension PN532ChipMachine.CardState: Equatable where Card: Equatable {}
extension PN532ChipMachine: Equatable where Card: Equatable {}
