import Testing
import VirtualHardware

/// The chip's state machine alone: inputs in, state and actions out (a `String` stands for
/// the card).
@Suite("PN532 chip machine")
struct PN532ChipMachineTests {
    typealias Machine = PN532ChipMachine<String>

    /// A machine with `card` in the field, activated (field on, Tg 1 selected).
    private func selected(_ card: String = "tag") -> Machine {
        var m = Machine()
        _ = m.apply(.present(card))
        _ = m.apply(.targetActivated)
        return m
    }

    @Test("After power-up: low-VBAT, field off, no card, nothing pending, no reader")
    func powerUp() {
        let m = Machine()
        #expect(m.power == .lowVbat)
        #expect(m.field == .off)
        #expect(m.card == .noCard)
        #expect(m.pending == .noCommand)
        #expect(m.target == .noReader)
    }

    @Test("A command wakes the chip, PowerDown puts it down, an ACK wakes it again")
    func power() {
        var m = Machine()
        #expect(m.apply(.commandStarted(code: 0x02)).isEmpty)
        #expect(m.power == .normal)
        _ = m.apply(.commandStarted(code: 0x16))
        #expect(m.power == .powerDown)
        _ = m.apply(.hostAck)
        #expect(m.power == .normal)
    }

    @Test("The field reports a change once; switching it to where it is does nothing")
    func field() {
        var m = Machine()
        #expect(m.apply(.switchField(on: true)) == [.fieldChanged(on: true)])
        #expect(m.apply(.switchField(on: true)).isEmpty)
        #expect(m.field == .on)
        #expect(m.apply(.switchField(on: false)) == [.fieldChanged(on: false)])
        #expect(m.field == .off)
    }

    @Test("An activation switches the field on and selects the card; without a card it does nothing")
    func activation() {
        var empty = Machine()
        #expect(empty.apply(.targetActivated).isEmpty)
        #expect(empty.field == .off)
        var m = Machine()
        _ = m.apply(.present("tag"))
        #expect(m.card == .inField("tag", .idle))
        #expect(m.apply(.targetActivated) == [.fieldChanged(on: true)])
        #expect(m.card == .inField("tag", .selected))
        #expect(m.apply(.targetActivated).isEmpty, "the field is on already")
    }

    @Test("InDeselect halts a selected card (HLTA/S(DESELECT)) or lets a FeliCa card go")
    func deselect() {
        var m = selected()
        #expect(m.apply(.deselect(halts: true)) == [.haltCard])
        #expect(m.card == .inField("tag", .halted))
        #expect(m.apply(.deselect(halts: true)).isEmpty, "only a selected card is halted")
        #expect(m.card == .inField("tag", .halted))
        var felica = selected("felica")
        #expect(felica.apply(.deselect(halts: false)).isEmpty)
        #expect(felica.card == .inField("felica", .idle))
    }

    @Test("InRelease lets Tg 1 go; a halted card stays halted")
    func release() {
        var m = selected()
        #expect(m.apply(.targetReleased).isEmpty)
        #expect(m.card == .inField("tag", .idle))
        _ = m.apply(.targetActivated)
        _ = m.apply(.deselect(halts: true))
        _ = m.apply(.targetReleased)
        #expect(m.card == .inField("tag", .halted))
    }

    @Test("The field going off powers the card down: selected or halted, it comes back idle")
    func fieldReset() {
        var m = selected()
        _ = m.apply(.deselect(halts: true))
        #expect(m.apply(.switchField(on: false)) == [.fieldChanged(on: false)])
        #expect(m.card == .inField("tag", .idle))
        var s = selected()
        _ = s.apply(.switchField(on: false))
        #expect(s.card == .inField("tag", .idle))
        #expect(s.activation == .idle)
    }

    @Test("Load, present, remove: a card is in the field or out of it, never both")
    func cardPlaces() {
        var m = Machine()
        _ = m.apply(.load("a"))
        #expect(m.card == .outOfField("a"))
        _ = m.apply(.load("b"))
        #expect(m.card == .outOfField("b"), "a card out of the field is replaced")
        _ = m.apply(.present("b"))
        _ = m.apply(.load("c"))
        #expect(m.card == .inField("b", .idle), "no load while a card is in the field")
        _ = m.apply(.targetActivated)
        _ = m.apply(.remove)
        #expect(m.card == .outOfField("b"))
        #expect(m.activation == nil)
        #expect(m.cardOutOfField == "b")
        #expect(m.cardInField == nil)
        _ = m.apply(.remove)
        #expect(m.card == .outOfField("b"), "removing nothing changes nothing")
        _ = m.apply(.present("d"))
        #expect(m.card == .inField("d", .idle))
        #expect(m.cardOutOfField == nil)
    }

    @Test("A card's new value keeps how it stands; nothing when no card is in the field")
    func update() {
        var m = selected("v1")
        m.updateCardInField("v2")
        #expect(m.card == .inField("v2", .selected))
        _ = m.apply(.remove)
        m.updateCardInField("v3")
        #expect(m.card == .outOfField("v2"))
    }

    @Test("A pending InAutoPoll: a card coming asks for an answer; a new command or an ACK drops it")
    func autoPoll() {
        var m = Machine()
        _ = m.apply(.pollStarted(types: [0x10], serial: nil))
        #expect(m.pending == .autoPoll(types: [0x10], serial: nil))
        #expect(m.apply(.present("tag")) == [.answerPoll(types: [0x10])])
        _ = m.apply(.pollAnswered)
        #expect(m.pending == .noCommand)
        #expect(m.apply(.present("other")).isEmpty, "nothing pending: nothing to answer")
        _ = m.apply(.pollStarted(types: [0x10], serial: nil))
        _ = m.apply(.commandReceived)
        #expect(m.pending == .noCommand)
        _ = m.apply(.pollStarted(types: [0x10], serial: nil))
        _ = m.apply(.hostAck)
        #expect(m.pending == .noCommand)
    }

    @Test("A finite poll's time: only its own serial answers 'no target'")
    func finitePoll() {
        var m = Machine()
        _ = m.apply(.pollStarted(types: [0x10], serial: 1))
        #expect(m.apply(.pollTimeElapsed(serial: 2)).isEmpty)
        #expect(m.apply(.pollTimeElapsed(serial: 1)) == [.answerNoTarget])
        #expect(m.pending == .noCommand)
        #expect(m.apply(.pollTimeElapsed(serial: 1)).isEmpty, "answered once")
        _ = m.apply(.pollStarted(types: [0x10], serial: nil))
        #expect(m.apply(.pollTimeElapsed(serial: 1)).isEmpty, "an endless poll has no time")
    }

    @Test("Target mode: TgInitAsTarget waits for the reader, or the reader already there activates at once")
    func initAsTarget() {
        let script = PN532ReaderScript(steps: [.init(command: [0x00, 0xA4])])
        var waiting = Machine()
        #expect(waiting.apply(.initAsTarget).isEmpty)
        #expect(waiting.pending == .initAsTarget)
        #expect(waiting.apply(.readerArrived(script)) == [.readerActivates(script)])
        #expect(waiting.pending == .noCommand)
        #expect(waiting.target == .readerInField(script, step: 0, awaitingResponse: false))
        var there = Machine()
        #expect(there.apply(.readerArrived(script)).isEmpty)
        #expect(there.apply(.initAsTarget) == [.readerActivates(script)])
        var selected = selected()
        _ = selected.apply(.initAsTarget)
        #expect(selected.card == .inField("tag", .idle), "TgInitAsTarget lets Tg 1 go")
    }

    @Test("Target mode: the reader's script step by step, an unanswered command, the reader leaving")
    func readerScript() {
        let one = PN532ReaderScript.Step(command: [0x01])
        let two = PN532ReaderScript.Step(command: [0x02])
        let script = PN532ReaderScript(steps: [one, two])
        var m = Machine()
        #expect(m.apply(.tgGetData) == [.noReader])
        #expect(m.apply(.tgSetData) == [.noReader])
        _ = m.apply(.readerArrived(script))
        #expect(m.apply(.tgSetData) == [.noReader], "nothing asked yet")
        #expect(m.apply(.tgGetData) == [.sendReaderCommand(one)])
        #expect(m.target == .readerInField(script, step: 0, awaitingResponse: true))
        #expect(m.apply(.tgGetData) == [.readerCommandUnanswered, .sendReaderCommand(one)])
        #expect(m.apply(.tgSetData) == [.readerAnswered])
        #expect(m.target == .readerInField(script, step: 1, awaitingResponse: false))
        #expect(m.apply(.initAsTarget).isEmpty, "past its first step the reader does not activate again")
        _ = m.apply(.commandReceived)
        #expect(m.apply(.tgGetData) == [.sendReaderCommand(two)])
        #expect(m.apply(.tgSetData) == [.readerAnswered])
        #expect(m.apply(.tgGetData) == [.readerLeaves])
        #expect(m.target == .readerLeft)
        #expect(m.apply(.tgGetData) == [.noReader])
        #expect(m.apply(.initAsTarget).isEmpty)
        #expect(m.pending == .initAsTarget, "a reader that left does not come back by itself")
        #expect(m.apply(.readerArrived(script)) == [.readerActivates(script)], "a new reader does")
    }
}
