import NFCTags
import Testing

@testable import HCEEvents

@Suite("CardSession lifecycle, maximum duration and presentment assertion (virtual time)")
struct CardSessionTests {
    let app = ContactlessPhone.DefaultApp(selectIdentifierPrefixes: [try! SelectIdentifierPrefix(hex: "A0000000031010")]
    )

    @Test("Events: sessionStarted, readerDetected, received, readerDeselected, then sessionInvalidated last")
    func eventOrder() async throws {
        let p = ContactlessPhone(defaultApp: app)
        let s = p.makeCardSession()
        try await s.startEmulation()  // before any reader is present
        #expect(await s.isEmulationInProgress)
        p.fieldOn(.iso14443A, at: .milliseconds(10))
        p.activateISODEP(at: .milliseconds(15))
        guard case .awaitingApp = p.readerCommand(selectVisa, at: .milliseconds(18)),
            case .received(let apdu)? = s.history.last?.event
        else {
            Issue.record("the SELECT did not reach the session")
            return
        }
        #expect(apdu.payload == selectVisa)
        try await apdu.respond(response: [0x6F, 0x00, 0x90, 0x00])
        #expect(p.collectResponse(at: .milliseconds(19)) == .answered(by: .app, response: [0x6F, 0x00, 0x90, 0x00]))
        p.fieldOff(at: .milliseconds(300))
        await s.stopEmulation(status: .success)
        #expect(!(await s.isEmulationInProgress))
        s.invalidate()
        var names: [String] = []
        for await e in s.eventStream { names.append(e.description.hasPrefix("received") ? "received" : e.description) }
        #expect(
            names == [
                "sessionStarted", "readerDetected", "received", "readerDeselected",
                "sessionInvalidated(reason: .userInvalidated)",
            ])
        #expect(!s.isValid)
        await #expect(throws: CardSession.Error.invalidated) { try await s.startEmulation() }
    }

    @Test(
        "An APDU not answered within the frame waiting time times the reader out; a late respond is a transmissionError"
    )
    func frameWaitingTime() async throws {
        let params = HCEParameters()
        #expect(params.frameWaitingTime == .microseconds(38_664))  // FWI 7: 256·16·128 / 13.56 MHz
        let p = ContactlessPhone(defaultApp: app, parameters: params)
        let s = p.makeCardSession()
        try await s.startEmulation()
        p.fieldOn(.iso14443A, at: .zero)
        p.activateISODEP(at: .milliseconds(5))
        #expect(p.readerCommand(selectVisa, at: .milliseconds(10)) == .awaitingApp(deadline: .microseconds(48_664)))
        guard case .received(let apdu)? = s.history.last?.event else {
            Issue.record("not received")
            return
        }
        #expect(p.collectResponse(at: .microseconds(48_663)) == .awaitingApp(deadline: .microseconds(48_664)))
        #expect(p.collectResponse(at: .microseconds(48_664)) == .timedOut)
        await #expect(throws: CardSession.Error.transmissionError) { try await apdu.respond(response: [0x90, 0x00]) }
        #expect(s.isValid)  // transmissionError never invalidates
    }

    @Test("startEmulation throws radioDisabled, systemEligibilityFailed, accessNotAccepted")
    func startErrors() async throws {
        for (c, e) in [
            (ContactlessPhone.Conditions(radioEnabled: false), CardSession.Error.radioDisabled),
            (.init(eligible: false), .systemEligibilityFailed),
            (.init(accessAccepted: false), .accessNotAccepted),
        ] {
            let p = ContactlessPhone(defaultApp: app, conditions: c)
            let s = p.makeCardSession()
            await #expect(throws: e) { try await s.startEmulation() }
            #expect(!(await s.isEmulationInProgress))
        }
    }

    @Test("Maximum duration ends the session; a restart inside the cool-down gets systemNotAvailable")
    func maximumDurationThenCoolDown() async throws {
        let params = HCEParameters(maximumSessionDuration: .seconds(60), maximumDurationCoolDown: .seconds(15))
        let p = ContactlessPhone(defaultApp: app, parameters: params)
        let s = p.makeCardSession()
        p.advance(to: .seconds(1))
        try await s.startEmulation()
        p.advance(to: .milliseconds(60_999))
        #expect(s.isValid)
        p.advance(to: .seconds(61))
        #expect(s.history.last?.event == .sessionInvalidated(reason: .maxSessionDurationReached))
        #expect(s.history.last?.at == .seconds(61))
        let again = p.makeCardSession()
        p.advance(to: .seconds(75))
        await #expect(throws: CardSession.Error.systemNotAvailable) { try await again.startEmulation() }
        p.advance(to: .seconds(76))  // 61 s + 15 s
        try await again.startEmulation()
        #expect(await again.isEmulationInProgress)
    }

    @Test("A second session can't emulate while one is emulating")
    func oneEmulation() async throws {
        let p = ContactlessPhone(defaultApp: app)
        let a = p.makeCardSession()
        let b = p.makeCardSession()
        try await a.startEmulation()
        await #expect(throws: CardSession.Error.systemNotAvailable) { try await b.startEmulation() }
    }

    @Test("Leaving the foreground invalidates with .invalidated; dismissing the sheet with .userInvalidated")
    func systemEnds() async throws {
        let p = ContactlessPhone(defaultApp: app)
        let a = p.makeCardSession()
        p.setForeground(false)
        #expect(a.history.last?.event == .sessionInvalidated(reason: .invalidated))
        p.setForeground(true)
        let b = p.makeCardSession()
        p.userDismissesEmulation()
        #expect(b.history.last?.event == .sessionInvalidated(reason: .userInvalidated))
    }

    @Test("A held presentment assertion suppresses the wake; it expires after 15 s; re-acquire waits 15 s")
    func presentmentAssertion() throws {
        let p = ContactlessPhone(defaultApp: app)
        let assertion = try NFCPresentmentIntentAssertion.acquire(on: p)
        #expect(!p.fieldOn(.iso14443A, at: .seconds(1)))
        #expect(p.events.contains(.wakeSuppressed(.presentmentIntentAssertion)))
        #expect(!p.events.contains(.nfcEvent))
        p.fieldOff(at: .seconds(2))
        p.advance(to: .seconds(15))
        #expect(!assertion.isValid)
        #expect(throws: NFCPresentmentIntentAssertion.Error.coolingDown(remaining: .seconds(10))) {
            p.advance(to: .seconds(20))
            return try NFCPresentmentIntentAssertion.acquire(on: p)
        }
        #expect(p.fieldOn(.iso14443A, at: .seconds(21)))  // woken again
        p.fieldOff(at: .seconds(22))
        p.advance(to: .seconds(30))
        let second = try NFCPresentmentIntentAssertion.acquire(on: p)
        second.release()
        #expect(!second.isValid)
    }

    @Test("acquire() in the background fails; backgrounding releases a held assertion")
    func assertionForeground() throws {
        let p = ContactlessPhone(defaultApp: app)
        let a = try NFCPresentmentIntentAssertion.acquire(on: p)
        p.setForeground(false)
        #expect(!a.isValid)
        #expect(throws: NFCPresentmentIntentAssertion.Error.notInForeground) {
            try NFCPresentmentIntentAssertion.acquire(on: p)
        }
    }
}
