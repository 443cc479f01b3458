import NFCTags
import Testing

@testable import HCEEvents

@Suite("Default app: wake on every field and SELECT routing")
struct PhoneRoutingTests {
    func phone(_ prefixes: [String], started: Bool = true) async throws -> (ContactlessPhone, CardSession) {
        let app = ContactlessPhone.DefaultApp(
            selectIdentifierPrefixes: try prefixes.map { try SelectIdentifierPrefix(hex: $0) })
        let p = ContactlessPhone(defaultApp: app)
        let s = p.makeCardSession()
        if started { try await s.startEmulation() }
        return (p, s)
    }

    /// Sends `command` with ISO-DEP up; the app answers `90 00` when it receives it.
    func send(_ p: ContactlessPhone, _ s: CardSession, _ command: [UInt8], at t: Duration) async
        -> ContactlessPhone.ReaderExchange
    {
        let ex = p.readerCommand(command, at: t)
        guard case .awaitingApp = ex, case .received(let apdu)? = s.history.last?.event else { return ex }
        try? await apdu.respond(response: [0x90, 0x00])
        return p.collectResponse(at: t)
    }

    @Test("A prefix shorter than a RID is refused with a typed error; 5 and 16 bytes are fine")
    func prefixValidation() throws {
        #expect(throws: SelectIdentifierPrefix.Error.shorterThanRID(byteCount: 4)) {
            try SelectIdentifierPrefix(hex: "A0000000")
        }
        #expect(throws: SelectIdentifierPrefix.Error.longerThanAID(byteCount: 17)) {
            try SelectIdentifierPrefix(hex: "A0000000031010000000000000000000FF")
        }
        #expect(throws: SelectIdentifierPrefix.Error.notHex("A0Z")) { try SelectIdentifierPrefix(hex: "A0Z") }
        #expect(try SelectIdentifierPrefix(hex: "A000000003").isRID)
        #expect(try SelectIdentifierPrefix(hex: "A0000000031010").bytes.count == 7)
    }

    @Test("The field wakes the default app before any APDU, then ISO-DEP, then SELECT")
    func wakeBeforeSelect() async throws {
        let (p, s) = try await phone(["A0000000031010"], started: false)
        p.fieldOn(.iso14443A, at: .milliseconds(1))
        #expect(p.events.last == .session(id: 1, .readerDetected))
        #expect(p.events.contains(.nfcEvent))
        #expect(p.readerCommand(selectVisa, at: .milliseconds(2)) == .notActivated)
        _ = s
    }

    @Test("A RID-only prefix routes any AID of that RID to the app")
    func ridPrefix() async throws {
        let (p, s) = try await phone(["A000000003"])
        p.fieldOn(.iso14443A, at: .zero)
        p.activateISODEP(at: .milliseconds(5))
        let ex = await send(p, s, hex("00A4040007A000000003201000"), at: .milliseconds(8))  // Visa Electron
        #expect(ex == .answered(by: .app, response: [0x90, 0x00]))
    }

    @Test("A full-AID prefix matches itself and a longer SELECT, not a different AID")
    func fullAIDAndLonger() async throws {
        let (p, s) = try await phone(["A0000000031010"])
        p.fieldOn(.iso14443A, at: .zero)
        p.activateISODEP(at: .milliseconds(5))
        #expect(await send(p, s, selectVisa, at: .milliseconds(8)) == .answered(by: .app, response: [0x90, 0x00]))
        // SELECT longer than the prefix (AID with a PIX extension).
        let longer = await send(p, s, hex("00A4040009A00000000310100102"), at: .milliseconds(10))
        #expect(longer == .answered(by: .app, response: [0x90, 0x00]))
        // Same RID, other PIX: not declared.
        let other = await send(p, s, hex("00A4040007A000000003201000"), at: .milliseconds(12))
        #expect(other == .answered(by: .system, response: [0x6A, 0x82]))
    }

    @Test("SELECT next occurrence (P2 02) routes like the first; last/previous get 6A 86")
    func nextOccurrence() async throws {
        let (p, s) = try await phone(["A000000003"])
        p.fieldOn(.iso14443A, at: .zero)
        p.activateISODEP(at: .milliseconds(5))
        #expect(
            await send(p, s, hex("00A4040205A000000003"), at: .milliseconds(8))
                == .answered(by: .app, response: [0x90, 0x00]))
        #expect(
            await send(p, s, hex("00A4040105A000000003"), at: .milliseconds(9))
                == .answered(by: .system, response: [0x6A, 0x86]))
    }

    @Test("An unmatched SELECT gets 6A 82 from the system and never reaches the CardSession")
    func unmatched() async throws {
        let (p, s) = try await phone(["A0000000031010"])
        p.fieldOn(.iso14443A, at: .zero)
        p.activateISODEP(at: .milliseconds(5))
        let ex = await send(p, s, hex("00A404000A4F53452E5641532E303100"), at: .milliseconds(8))
        #expect(ex == .answered(by: .system, response: [0x6A, 0x82]))
        #expect(!s.history.contains { if case .received = $0.event { true } else { false } })
    }

    @Test("SELECT PPSE is answered by the system with an FCI listing the declared AIDs")
    func ppseBySystem() async throws {
        let (p, s) = try await phone(["A0000000031010"])
        p.fieldOn(.iso14443A, at: .zero)
        p.activateISODEP(at: .milliseconds(5))
        let ex = await send(p, s, selectPPSE, at: .milliseconds(8))
        let fci = hex("6F20840E325041592E5359532E4444463031A50EBF0C0B61094F07A00000000310109000")
        #expect(ex == .answered(by: .system, response: fci))
        // A non-SELECT after the system's PPSE: its responder knows only SELECT.
        #expect(
            await send(p, s, hex("80A8000002830000"), at: .milliseconds(9))
                == .answered(by: .system, response: [0x6D, 0x00]))
        #expect(!s.history.contains { if case .received = $0.event { true } else { false } })
    }

    @Test("SELECT PPSE goes to the app when PPSE is among its prefixes")
    func ppseEntitled() async throws {
        let (p, s) = try await phone(["325041592E5359532E4444463031", "A0000000031010"])
        p.fieldOn(.iso14443A, at: .zero)
        p.activateISODEP(at: .milliseconds(5))
        #expect(await send(p, s, selectPPSE, at: .milliseconds(8)) == .answered(by: .app, response: [0x90, 0x00]))
    }

    @Test("With no payment AID declared, SELECT PPSE gets 6A 82")
    func ppseEmpty() async throws {
        let (p, s) = try await phone([])
        p.fieldOn(.iso14443A, at: .zero)
        p.activateISODEP(at: .milliseconds(5))
        #expect(await send(p, s, selectPPSE, at: .milliseconds(8)) == .answered(by: .system, response: [0x6A, 0x82]))
    }

    @Test(
        "Malformed APDUs get the ISO 7816-4 status word",
        arguments: [
            ("00A4", "6700"),  // shorter than a header
            ("00A404000E3250", "6700"),  // Lc 14, 2 bytes follow
            // Lc 8, the AID, Le and one byte more: an iPhone answered 6A 81 (Apple developer
            // forums thread 774626), not 67 00.
            ("00A4040008A0000000031010010000", "6A81"),
            ("FFCA000000", "6E00"),  // CLA FF is invalid
            ("0060000000", "6D00"),  // INS 6X is invalid
            ("0092000000", "6D00"),  // INS 9X is invalid
            ("00A4040003A00000", "6A82"),  // DF name shorter than a RID
            ("00A4041005A000000003", "6A86"),  // P2 with unknown bits
            ("00B0000002", "6985"),  // READ BINARY with nothing selected
        ])
    func malformed(command: String, sw: String) async throws {
        let (p, s) = try await phone(["A000000003"])
        p.fieldOn(.iso14443A, at: .zero)
        p.activateISODEP(at: .milliseconds(5))
        #expect(await send(p, s, hex(command), at: .milliseconds(8)) == .answered(by: .system, response: hex(sw)))
    }

    @Test("Commands after the app's SELECT go to the app; another AID deselects it")
    func deselectOnOtherAID() async throws {
        let (p, s) = try await phone(["A0000000031010"])
        p.fieldOn(.iso14443A, at: .zero)
        p.activateISODEP(at: .milliseconds(5))
        _ = await send(p, s, selectVisa, at: .milliseconds(8))
        #expect(
            await send(p, s, hex("80A8000002830000"), at: .milliseconds(9))
                == .answered(by: .app, response: [0x90, 0x00]))
        #expect(await send(p, s, selectPPSE, at: .milliseconds(10)) != .answered(by: .app, response: [0x90, 0x00]))
        let names = s.history.map(\.event.name)
        #expect(names == ["sessionStarted", "readerDetected", "received", "received", "readerDeselected"])
        p.fieldOff(at: .milliseconds(20))
        #expect(s.history.last?.event == .readerDeselected)
    }

    @Test("A MIFARE Classic door wakes the app and never sends an APDU")
    func classicDoor() async throws {
        let (p, _) = try await phone(["A0000000031010"])
        #expect(p.fieldOn(.iso14443A, at: .zero))
        #expect(p.readerCommand(selectVisa, at: .milliseconds(3)) == .notActivated)
        p.fieldOff(at: .milliseconds(250))
        #expect(!p.events.contains { if case .apdu = $0 { true } else { false } })
        #expect(p.events.contains(.nfcEvent))
    }

    @Test("FeliCa wakes the app and has no ISO-DEP")
    func felica() async throws {
        let (p, _) = try await phone([])
        #expect(p.fieldOn(.felica, at: .zero))
        #expect(!p.activateISODEP(at: .milliseconds(5)))
    }

    @Test("A reader polling with an express credential's ECP frame wins over the default app")
    func expressRule() throws {
        let ecp = hex("6A02C801000300027900000000")  // from pm3_hf_visa_apple_ecp.trace, CRC removed
        let app = ContactlessPhone.DefaultApp(selectIdentifierPrefixes: [
            try SelectIdentifierPrefix(hex: "A0000000031010")
        ])
        let p = ContactlessPhone(defaultApp: app, expressCredentials: [.init(name: "transit card", ecpFrame: ecp)])
        #expect(!p.fieldOn(.iso14443A, ecp: ecp, at: .zero))
        #expect(p.events.contains(.wakeSuppressed(.expressCredential("transit card"))))
        #expect(!p.events.contains(.nfcEvent))
        p.activateISODEP(at: .milliseconds(5))
        #expect(p.readerCommand(selectVisa, at: .milliseconds(8)) == .answered(by: .express, response: [0x90, 0x00]))
        // Another ECP frame (or none) does not trigger the rule.
        p.fieldOff(at: .milliseconds(100))
        #expect(p.fieldOn(.iso14443A, ecp: hex("6A0100"), at: .seconds(1)))
    }
}
