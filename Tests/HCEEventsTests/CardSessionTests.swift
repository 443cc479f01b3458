import NFCBenchTestSupport
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
        "Without S(WTX), an APDU not answered within the frame waiting time times the reader out; a late respond is a transmissionError"
    )
    func frameWaitingTime() async throws {
        let params = HCEParameters(sendsWaitingTimeExtensions: false)
        #expect(params.frameWaitingTime == .microseconds(38_664))  // FWI 7: 256·16·128 / 13.56 MHz
        let p = ContactlessPhone(defaultApp: app, parameters: params)
        let s = p.makeCardSession()
        try await s.startEmulation()
        p.fieldOn(.iso14443A, at: .zero)
        p.activateISODEP(at: .milliseconds(5))
        #expect(p.readerCommand(selectVisa, at: .milliseconds(10)) == .awaitingApp(deadline: .microseconds(48_664)))
        let apdu = try #require(
            matched { if case .received(let apdu)? = s.history.last?.event { apdu } else { nil } }, "not received")
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

    @Test("acquire() while held gives the held assertion; release() starts the cool-down; a stale release does nothing")
    func assertionRelease() throws {
        let p = ContactlessPhone(defaultApp: app)
        let a = try NFCPresentmentIntentAssertion.acquire(on: p)
        let again = try NFCPresentmentIntentAssertion.acquire(on: p)
        #expect(again.isValid)
        a.release()
        #expect(!again.isValid, "one assertion: releasing either handle releases it")
        #expect(throws: NFCPresentmentIntentAssertion.Error.coolingDown(remaining: .seconds(15))) {
            try NFCPresentmentIntentAssertion.acquire(on: p)
        }
        p.advance(to: .seconds(15))
        let b = try NFCPresentmentIntentAssertion.acquire(on: p)
        a.release()
        #expect(b.isValid, "the old assertion's release does not end the new one")
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

    @Test(
        "While the app works the system sends S(WTX) (WTXM 1) every frame waiting time; the reader gives up after its limit"
    )
    func waitingTimeExtensions() async throws {
        let p = ContactlessPhone(defaultApp: app)  // S(WTX) on, reader limit 1 s
        let s = p.makeCardSession()
        try await s.startEmulation()
        p.fieldOn(.iso14443A, at: .zero)
        p.activateISODEP(at: .milliseconds(5))
        guard case .awaitingApp = p.readerCommand(selectVisa, at: .milliseconds(10)),
            case .received(let apdu)? = s.history.last?.event
        else {
            Issue.record("not received")
            return
        }
        // The app answers after 100 ms: two S(WTX) (at 48.664 and 87.328 ms) keep the reader waiting.
        p.advance(to: .milliseconds(110))
        try await apdu.respond(response: [0x90, 0x00])
        #expect(p.collectResponse(at: .milliseconds(110)) == .answered(by: .app, response: [0x90, 0x00]))
        let wtx = p.log.filter { if case .waitingTimeExtension(multiplier: 1) = $0.event { true } else { false } }
        #expect(wtx.map(\.at) == [.microseconds(48_664), .microseconds(87_328)])
        // An app that never answers: S(WTX) until 1 s past the first frame waiting time, then a timeout.
        try #require(
            matches {
                if case .awaitingApp = p.readerCommand(selectVisa, at: .milliseconds(200)) { true } else { false }
            }, "not routed")
        var exchange = p.collectResponse(at: .milliseconds(200))
        while case .awaitingApp(let deadline) = exchange { exchange = p.collectResponse(at: deadline) }
        #expect(exchange == .timedOut)
        let count = p.log.filter { if case .waitingTimeExtension = $0.event { true } else { false } }.count - 2
        #expect(count == 26)  // ⌈1 s / 38.664 ms⌉
        #expect(p.now >= .milliseconds(1_200) && p.now < .milliseconds(1_260))
    }

    @Test("A SELECT for an app still waking (wake latency) is held with S(WTX) and reaches it once it emulates")
    func heldForWakingApp() async throws {
        let p = ContactlessPhone(defaultApp: app, parameters: HCEParameters(wakeLatency: .milliseconds(400)))
        #expect(p.fieldOn(.iso14443A, at: .zero))
        #expect(p.pendingWake == .milliseconds(400))
        #expect(!p.log.contains { $0.event == .nfcEvent })  // not yet: the app is launching
        p.activateISODEP(at: .milliseconds(5))
        try #require(
            matches {
                if case .awaitingApp = p.readerCommand(selectVisa, at: .milliseconds(20)) { true } else { false }
            },
            "not held")
        p.advance(to: .milliseconds(400))
        #expect(p.lastWake == .milliseconds(400))
        let s = try await CardSession(phone: p)
        try await s.startEmulation()
        let apdu = try #require(
            matched { if case .received(let apdu)? = s.history.last?.event { apdu } else { nil } },
            "the held SELECT did not reach the app")
        #expect(apdu.payload == selectVisa)
        try await apdu.respond(response: [0x90, 0x00])
        #expect(p.collectResponse(at: .milliseconds(400)) == .answered(by: .app, response: [0x90, 0x00]))
        #expect(p.log.contains { if case .heldForApp = $0.event { $0.at == .milliseconds(20) } else { false } })
        #expect(p.log.filter { if case .waitingTimeExtension = $0.event { true } else { false } }.count == 9)
    }

    @Test("A locked phone authenticates before it wakes the default app")
    func locked() async throws {
        let p = ContactlessPhone(
            defaultApp: app, parameters: HCEParameters(wakeLatency: .milliseconds(100)),
            conditions: .init(locked: true))
        p.fieldOn(.iso14443A, at: .zero)
        p.advance(to: .seconds(2))
        let times = p.log.compactMap { e -> (String, Duration)? in
            switch e.event {
            case .authenticated: ("authenticated", e.at)
            case .nfcEvent: ("nfcEvent", e.at)
            default: nil
            }
        }
        #expect(times.map(\.0) == ["authenticated", "nfcEvent"])
        #expect(times.map(\.1) == [.seconds(1), .milliseconds(1_100)])
    }

    @Test("CardSession(): init throws Apple's errors; isSupported and isEligible read the installed phone")
    func initThrows() async throws {
        let p = ContactlessPhone(defaultApp: app, conditions: .init(radioEnabled: false))
        await #expect(throws: CardSession.Error.radioDisabled) { _ = try await CardSession(phone: p) }
        p.setConditions(.init(eligible: false))
        await #expect(throws: CardSession.Error.systemEligibilityFailed) { _ = try await CardSession(phone: p) }
        p.setConditions(.init(accessAccepted: false))
        await #expect(throws: CardSession.Error.accessNotAccepted) { _ = try await CardSession(phone: p) }
        p.setConditions(.init())
        let s = try await CardSession(phone: p)
        #expect(s.history.first?.event == .sessionStarted)
        #expect(p.isEligible)
        #expect(!CardSession.isSupported)  // no phone installed
        ContactlessPhone.install(p)
        defer { ContactlessPhone.install(nil) }
        #expect(CardSession.isSupported)
        #expect(await CardSession.isEligible)
        p.setConditions(.init(eligible: false))
        #expect(!(await CardSession.isEligible))
        #expect(CardSession.isSupported)
    }

    @Test("On a device without card-session support, creating a session is a fatal error, not a throw")
    func unsupportedIsFatal() async {
        await #expect(processExitsWith: .failure) {
            let p = ContactlessPhone(
                defaultApp: ContactlessPhone.DefaultApp(selectIdentifierPrefixes: []),
                conditions: .init(supported: false))
            _ = try? await CardSession(phone: p)
        }
    }
}
