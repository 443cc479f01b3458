import Foundation
import NFCTags
import Testing

@testable import HCEEvents

/// The walk over the shipped profiles with the app declaring only A0000000031010.
/// Expected values are written by hand from hardware/readers/*.json.
@Suite("Walk over the shipped reader profiles")
struct WalkTests {
    let visaApp = ContactlessPhone.DefaultApp(selectIdentifierPrefixes: [
        try! SelectIdentifierPrefix(hex: "A0000000031010")
    ])

    @Test("Every shipped profile parses")
    func profilesParse() throws {
        let names = try shippedProfiles().map(\.name)
        #expect(
            names == [
                "access-iso-dep", "apple-vas", "car-key", "emv-ecp-terminal", "emv-payment",
                "felica-gate", "hotel-lock", "mifare-classic-door", "nfc-forum-t4t", "transit",
            ])
    }

    @Test("Every profile wakes the default app once, before any APDU")
    func wakeBeforeAnySelect() async throws {
        let result = await ReaderWalk(profiles: try shippedProfiles(), app: visaApp).run()
        for name in try shippedProfiles().map(\.name) {
            let evs = result.events.filter { $0.reader == name }.map(\.event)
            #expect(evs.filter { $0 == "nfcEvent" }.count == 1, "\(name)")
            let wake = evs.firstIndex(of: "nfcEvent")
            let firstAPDU = evs.firstIndex(of: "apdu")
            #expect(wake != nil && (firstAPDU == nil || wake! < firstAPDU!), "\(name)")
            #expect(evs.first == "fieldOn" && evs.contains("fieldOff"), "\(name)")
        }
    }

    @Test("--app-prefixes A0000000031010, policy stay: 10 wakes, 2 servable, 8 useless, 2 003 369 µs up for nothing")
    func stayCounts() async throws {
        let s = await ReaderWalk(profiles: try shippedProfiles(), app: visaApp, policy: .stay).run().summary
        #expect(s.wakes == 10)
        #expect(s.servableWakes == 2)
        #expect(s.uselessWakes == 8)
        // Only the readers that SELECT A0000000031010 reach the CardSession: SELECT Visa + GPO each.
        #expect(s.readers.filter(\.served).map(\.name) == ["emv-ecp-terminal", "emv-payment"])
        #expect(s.readers.first { $0.name == "emv-payment" }?.apdusToApp == 2)
        #expect(s.readers.first { $0.name == "emv-ecp-terminal" }?.apdusToApp == 2)
        // By hand: access-iso-dep field off 1 223 369; apple-vas, car-key, nfc-forum-t4t stop at
        // their failing SELECT (8 000 each); transit 6 000; felica 200 000; hotel 300 000; classic 250 000.
        let byHand: Int64 = 1_223_369 + 8_000 + 8_000 + 8_000 + 6_000 + 200_000 + 300_000 + 250_000
        #expect(byHand == 2_003_369)
        #expect(s.upForNothing == .microseconds(byHand))
    }

    @Test(
        "Policy step-aside:300ms: the ECP terminal activates at 1.77 s, after the app stepped aside; a reader that left earlier counts only until it left"
    )
    func stepAsideCounts() async throws {
        let s = await ReaderWalk(profiles: try shippedProfiles(), app: visaApp, policy: AppPolicy("step-aside:300ms")!)
            .run().summary
        #expect(s.wakes == 10)
        #expect(s.servableWakes == 1)
        #expect(s.uselessWakes == 9)
        // min(300 ms, field off): access 300, apple-vas 8, car-key 8, t4t 8, transit 6, felica 200,
        // hotel 300, classic 250, ECP terminal 300 (it activates at 1.77 s).
        let byHand = 300 + 8 + 8 + 8 + 6 + 200 + 300 + 250 + 300
        #expect(byHand == 1380)
        #expect(s.upForNothing == .milliseconds(byHand))
        let ecp = s.readers.first { $0.name == "emv-ecp-terminal" }
        #expect(ecp?.reason.contains("stepped aside") == true)
    }

    @Test("Profiles without the app's AID never reach the CardSession; the Classic door never selects")
    func whoReachesTheApp() async throws {
        let events = await ReaderWalk(profiles: try shippedProfiles(), app: visaApp).run().events
        let received = Set(events.filter { $0.event == "received" }.map(\.reader))
        #expect(received == ["emv-payment", "emv-ecp-terminal"])
        #expect(
            !events.contains {
                $0.reader == "mifare-classic-door" && ($0.event == "apdu" || $0.event == "isoDepActivated")
            })
        let ppse = events.first { $0.reader == "emv-payment" && $0.event == "apdu" }
        #expect(ppse?.answeredBy == .system)
        #expect(ppse?.response?.suffix(2) == [0x90, 0x00])
    }

    @Test("Policy text parses stay and step-aside durations; rejects the rest")
    func policyParse() {
        #expect(AppPolicy("stay") == .stay)
        #expect(AppPolicy("step-aside:300ms") == .stepAside(after: .milliseconds(300)))
        #expect(AppPolicy("step-aside:1.5s") == .stepAside(after: .milliseconds(1500)))
        #expect(AppPolicy("step-aside:250") == .stepAside(after: .milliseconds(250)))
        #expect(AppPolicy("leave") == nil)
        #expect(AppPolicy("step-aside:-1ms") == nil)
    }

    @Test(
        "Bad profile files are refused with the JSON path",
        arguments: [
            (
                #"{"format":"nfcbench-reader-profile/1","name":"x","category":"c","technology":"NFC-V","iso_dep":false,"field_off_us":1,"source":"s"}"#,
                "technology"
            ),
            (
                #"{"format":"nfcbench-reader-profile/1","name":"x","category":"c","technology":"FeliCa","iso_dep":true,"activation_us":1,"field_off_us":1,"source":"s"}"#,
                "iso_dep"
            ),
            (
                #"{"format":"nfcbench-reader-profile/1","name":"x","category":"c","technology":"ISO14443A","iso_dep":true,"activation_us":1,"steps":[{"t_us":5,"apdu":"00A4ZZ"}],"field_off_us":9,"source":"s"}"#,
                "steps[0].apdu"
            ),
            (
                #"{"format":"nfcbench-reader-profile/1","name":"x","category":"c","technology":"ISO14443A","iso_dep":false,"steps":[{"t_us":5,"apdu":"00A40400"}],"field_off_us":9,"source":"s"}"#,
                "steps"
            ),
            (
                #"{"format":"nfcbench-reader-profile/1","name":"x","category":"c","technology":"ISO14443A","iso_dep":true,"activation_us":1,"steps":[{"t_us":5,"apdu":"00A40400","expect_sw":["90"]}],"field_off_us":9,"source":"s"}"#,
                "steps[0].expect_sw[0]"
            ),
            (#"{"format":"other","name":"x"}"#, "format"),
        ])
    func badProfiles(json: String, path: String) {
        #expect(throws: DataFileError.self) { try ReaderProfile(json: Data(json.utf8), file: "t.json") }
        do { _ = try ReaderProfile(json: Data(json.utf8), file: "t.json") } catch { #expect(error.field == path) }
    }

    @Test("A profile written by jsonText() reads back equal")
    func roundTrip() throws {
        for p in try shippedProfiles() {
            #expect(try ReaderProfile(json: Data(p.jsonText().utf8), file: p.name) == p)
        }
    }
}

@Suite("The walk's wake latency, locked phone, S(WTX) and reasons")
struct WalkLatencyTests {
    let visa = ContactlessPhone.DefaultApp(
        selectIdentifierPrefixes: [try! SelectIdentifierPrefix(hex: "A0000000031010")])

    func profile(_ name: String) throws -> ReaderProfile {
        try #require(try shippedProfiles().first { $0.name == name })
    }

    @Test("A 400 ms wake: the SELECT waits with 9 S(WTX), the app is served, and the reason says so")
    func wakeLatency() async throws {
        let r = await ReaderWalk(
            profiles: [try profile("emv-payment")], app: visa,
            parameters: HCEParameters(wakeLatency: .milliseconds(400))
        ).run()
        let reader = try #require(r.summary.readers.first)
        #expect(reader.served)
        #expect(reader.wokeAt == .milliseconds(400))
        #expect(reader.waitingTimeExtensions == 9)
        #expect(reader.reason.hasPrefix("served:") && reader.reason.contains("S(WTX)"))
        #expect(r.events.filter { $0.event == "wtx" }.allSatisfy { $0.command == [0xF2, 0x01] })
        #expect(r.events.first { $0.event == "heldForApp" }?.time == .milliseconds(20))
    }

    @Test("Locked: authentication plus launch outlast the reader's patience; useless, and why")
    func locked() async throws {
        let r = await ReaderWalk(
            profiles: [try profile("emv-payment")], app: visa,
            parameters: HCEParameters(wakeLatency: .milliseconds(400)), locked: true
        ).run()
        let reader = try #require(r.summary.readers.first)
        #expect(!reader.served)
        #expect(reader.reason.contains("gave up"))
        #expect(r.events.contains { $0.event == "authenticated" && $0.time == .seconds(1) })
    }

    @Test("Without S(WTX) the same slow wake times the reader out at the frame waiting time")
    func noWTX() async throws {
        let r = await ReaderWalk(
            profiles: [try profile("emv-payment")], app: visa,
            parameters: HCEParameters(wakeLatency: .milliseconds(400), sendsWaitingTimeExtensions: false)
        ).run()
        let reader = try #require(r.summary.readers.first)
        #expect(!reader.served)
        #expect(reader.waitingTimeExtensions == 0)
    }

    @Test("An app that answers slower than the frame waiting time still serves, through S(WTX)")
    func slowApp() async throws {
        let r = await ReaderWalk(profiles: [try profile("emv-payment")], app: visa, appLatency: .milliseconds(100))
            .run()
        let reader = try #require(r.summary.readers.first)
        #expect(reader.served)
        #expect(reader.waitingTimeExtensions == 4)  // two answers of 100 ms: two S(WTX) each
    }
}
