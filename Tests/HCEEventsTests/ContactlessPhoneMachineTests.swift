import NFCTags
import Testing

@testable import HCEEvents

/// The phone's rules alone: inputs in, state, reply and actions out (no session objects).
@Suite("Contactless phone machine")
struct ContactlessPhoneMachineTests {
    typealias Machine = ContactlessPhoneMachine

    static let app = ContactlessPhone.DefaultApp(
        selectIdentifierPrefixes: [try! SelectIdentifierPrefix(hex: "A0000000031010")])
    static let express = ContactlessPhone.ExpressCredential(name: "transit", ecpFrame: hex("6A02C3020002FFFF"))

    func machine(
        app: ContactlessPhone.DefaultApp? = Self.app, locked: Bool = false,
        parameters: HCEParameters = HCEParameters()
    ) -> Machine {
        Machine(
            defaultApp: app, expressCredentials: [Self.express], parameters: parameters,
            conditions: ContactlessPhone.Conditions(locked: locked))
    }

    /// A machine with session 1 emulating and a reader's ISO-DEP link up at 1 ms.
    func emulating() -> Machine {
        var m = machine()
        _ = m.apply(.newSessionNumber)
        _ = m.apply(.attach(session: 1))
        _ = m.apply(.startEmulation(session: 1))
        _ = m.apply(.fieldOn(.iso14443A, ecp: nil, at: .milliseconds(1)))
        _ = m.apply(.activateISODEP(at: .milliseconds(1)))
        return m
    }

    @Test("At the start: no field, no wake, free assertion, in the foreground, nothing due")
    func start() {
        let m = machine()
        #expect(m.rf == .off)
        #expect(m.wake == .none)
        #expect(m.presentment == .free)
        #expect(m.place == .foreground)
        #expect(m.maxDurationCoolDown == .none)
        #expect(m.nextDue == nil)
        #expect(m.lastWake == nil)
    }

    @Test("A field wakes the app: the system holds the field, polling, and the wake fires at once")
    func fieldWakes() {
        var m = machine()
        let o = m.apply(.fieldOn(.iso14443A, ecp: nil, at: .milliseconds(2)))
        #expect(o.reply == .accepted(true))
        #expect(
            o.actions == [
                .log(.fieldOn(.iso14443A, ecp: nil), at: .milliseconds(2)), .log(.nfcEvent, at: .milliseconds(2)),
            ])
        #expect(m.rf == .on(.iso14443A, .system(.polling)))
        #expect(m.wake == .none)
        #expect(m.lastWake == .milliseconds(2))
    }

    @Test("A locked phone authenticates, then launches the app: one wake, two steps")
    func lockedWake() {
        var m = machine(locked: true, parameters: HCEParameters(wakeLatency: .milliseconds(400)))
        _ = m.apply(.fieldOn(.iso14443A, ecp: nil, at: .zero))
        #expect(m.wake == .authenticating(at: .seconds(1), due: .milliseconds(1400)))
        #expect(m.apply(.advance(to: .seconds(1))).actions == [.log(.authenticated, at: .seconds(1))])
        #expect(m.wake == .launching(due: .milliseconds(1400)))
        #expect(m.apply(.advance(to: .seconds(2))).actions == [.log(.nfcEvent, at: .milliseconds(1400))])
        #expect(m.wake == .none)
    }

    @Test("An express credential takes the field: no wake, its own ISO-DEP, 90 00 to everything")
    func expressField() {
        var m = machine()
        #expect(m.apply(.fieldOn(.iso14443A, ecp: Self.express.ecpFrame, at: .zero)).reply == .accepted(false))
        #expect(m.rf == .on(.iso14443A, .express(Self.express, isoDep: false)))
        #expect(m.apply(.readerCommand(selectVisa, at: .zero)).reply == .exchange(.notActivated))
        _ = m.apply(.activateISODEP(at: .zero))
        #expect(m.rf == .on(.iso14443A, .express(Self.express, isoDep: true)))
        #expect(
            m.apply(.readerCommand(selectVisa, at: .zero)).reply
                == .exchange(.answered(by: .express, response: [0x90, 0x00])))
    }

    @Test("A SELECT of the app's AID goes to the emulating session; its answer is collected once")
    func routedAndAnswered() {
        var m = emulating()
        let o = m.apply(.readerCommand(selectVisa, at: .milliseconds(2)))
        let deadline = Duration.milliseconds(2) + HCEParameters().frameWaitingTime
        #expect(o.reply == .exchange(.awaitingApp(deadline: deadline)))
        #expect(o.actions == [.deliver(session: 1, .received(payload: selectVisa, apduID: 1), at: .milliseconds(2))])
        let c = Machine.Command(apduID: 1, bytes: selectVisa, sentAt: .milliseconds(2), deadline: deadline)
        #expect(m.rf == .on(.iso14443A, .system(.isoDep(selected: .app(visaAID), exchange: .routed(session: 1, c)))))
        #expect(m.apply(.respond(apduID: 1, session: 1, response: [0x90, 0x00])).reply == .accepted(true))
        #expect(m.apply(.respond(apduID: 1, session: 1, response: [0x90, 0x00])).reply == .accepted(false), "twice")
        #expect(
            m.apply(.collectResponse(at: .milliseconds(3))).reply
                == .exchange(.answered(by: .app, response: [0x90, 0x00])))
        #expect(m.apply(.collectResponse(at: .milliseconds(3))).reply == .exchange(.notActivated))
    }

    @Test("While the app starts emulating the system holds the SELECT, then hands it over")
    func heldForApp() {
        var m = machine(parameters: HCEParameters(emulationStartLatency: .milliseconds(20)))
        _ = m.apply(.newSessionNumber)
        _ = m.apply(.attach(session: 1))
        _ = m.apply(.fieldOn(.iso14443A, ecp: nil, at: .zero))
        _ = m.apply(.activateISODEP(at: .zero))
        _ = m.apply(.startEmulation(session: 1))
        let o = m.apply(.readerCommand(selectVisa, at: .milliseconds(1)))
        #expect(o.actions == [.log(.heldForApp(command: selectVisa), at: .milliseconds(1))])
        let after = m.apply(.advance(to: .milliseconds(20))).actions
        #expect(after.contains(.log(.emulationStarted(session: 1), at: .milliseconds(20))))
        #expect(after.last == .deliver(session: 1, .received(payload: selectVisa, apduID: 1), at: .milliseconds(20)))
    }

    @Test("Invalidating the session a command went to drops it; the field leaving logs what is abandoned")
    func invalidateAndFieldOff() {
        var m = emulating()
        _ = m.apply(.readerCommand(selectVisa, at: .milliseconds(2)))
        #expect(
            m.apply(.invalidate(session: 1, reason: .userInvalidated)).actions == [
                .deliver(session: 1, .sessionInvalidated(reason: .userInvalidated), at: .milliseconds(2))
            ])
        #expect(m.rf == .on(.iso14443A, .system(.isoDep(selected: .app(visaAID), exchange: .none))))
        #expect(!m.isValid(session: 1))
        var n = emulating()
        _ = n.apply(.readerCommand(selectVisa, at: .milliseconds(2)))
        let off = n.apply(.fieldOff(at: .milliseconds(3))).actions
        #expect(
            off == [
                .log(.apdu(command: selectVisa, response: nil, answeredBy: nil), at: .milliseconds(3)),
                .deliver(session: 1, .readerDeselected, at: .milliseconds(3)), .log(.fieldOff, at: .milliseconds(3)),
            ])
        #expect(n.rf == .off)
    }

    @Test("The assertion: held, then cooling down after release; leaving the foreground lets it go")
    func assertion() {
        var m = machine(parameters: HCEParameters(presentmentReacquireCoolDown: .seconds(15)))
        #expect(m.apply(.acquirePresentmentIntent).reply == .assertion(id: 1))
        #expect(m.apply(.acquirePresentmentIntent).reply == .assertion(id: 1), "held: the same one")
        _ = m.apply(.setForeground(false))
        #expect(m.presentment == .coolingDown(until: .seconds(15)))
        #expect(m.place == .background)
        #expect(m.apply(.acquirePresentmentIntent).reply == .assertionError(.notInForeground))
        _ = m.apply(.setForeground(true))
        #expect(m.apply(.acquirePresentmentIntent).reply == .assertionError(.coolingDown(remaining: .seconds(15))))
    }

    @Test("An emulation reaching its maximum duration ends the session and starts the device's cool-down")
    func maximumDuration() {
        var m = machine(
            parameters: HCEParameters(maximumSessionDuration: .seconds(2), maximumDurationCoolDown: .seconds(1)))
        _ = m.apply(.newSessionNumber)
        _ = m.apply(.attach(session: 1))
        _ = m.apply(.startEmulation(session: 1))
        #expect(m.nextDue == .seconds(2))
        _ = m.apply(.advance(to: .seconds(2)))
        #expect(m.maxDurationCoolDown == .until(.seconds(3)))
        #expect(m.sessions[1]?.phase == .invalidated)
        _ = m.apply(.newSessionNumber)
        _ = m.apply(.attach(session: 2))
        #expect(m.apply(.startEmulation(session: 2)).reply == .sessionError(.systemNotAvailable))
    }
}
