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

    @Test("Policy step-aside:300ms: the ECP terminal activates at 1.77 s, after the app stepped aside")
    func stepAsideCounts() async throws {
        let s = await ReaderWalk(profiles: try shippedProfiles(), app: visaApp, policy: AppPolicy("step-aside:300ms")!)
            .run().summary
        #expect(s.wakes == 10)
        #expect(s.servableWakes == 1)
        #expect(s.uselessWakes == 9)
        #expect(s.upForNothing == .milliseconds(9 * 300))
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
