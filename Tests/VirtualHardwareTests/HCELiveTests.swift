import Foundation
import Glibc
import HCEEvents
import NFCBenchTestSupport
import NFCTags
import Synchronization
import Testing
import VirtualHardware

/// A clock the test moves by hand (µs since the bench started).
final class HCETestClock: Sendable {
    private let t = Mutex<Duration>(.zero)
    var now: Duration { t.withLock { $0 } }
    func advance(_ d: Duration) { t.withLock { $0 += d } }
    var read: @Sendable () -> Duration { { self.now } }
}

private let selectPPSE = [UInt8](hex: "00A404000E325041592E5359532E444446303100")!
private let selectVisa = [UInt8](hex: "00A4040007A000000003101000")!
private let selectVAS = [UInt8](hex: "00A404000A4F53452E5641532E303100")!
private let gpo = [UInt8](hex: "80A8000002830000")!
private let visaApp = ContactlessPhone.DefaultApp(selectIdentifierPrefixes: [
    try! SelectIdentifierPrefix(hex: "A0000000031010")
])

private func index(_ events: [HCELiveEvent], _ name: String) -> Int? { events.firstIndex { $0.event == name } }

@Suite("HCE phone identity (pure)")
struct HCEIdentityTests {
    @Test("The iPhone ATS 05 78 80 70 02 has no historical bytes, so the PC/SC ATR is 3B 80 80 01 01")
    func iPhoneATR() {
        let id = HCEPhoneIdentity()
        #expect(id.historicalBytes == [])
        #expect(id.atr == [0x3B, 0x80, 0x80, 0x01, 0x01])
        #expect(id.atsWithoutLength == [0x78, 0x80, 0x70, 0x02])
    }

    @Test("Historical bytes follow the interface bytes T0 announces (corpus ATS 06 75 77 81 02 80)")
    func historicalBytes() {
        let id = HCEPhoneIdentity(ats: [0x06, 0x75, 0x77, 0x81, 0x02, 0x80])
        #expect(id.historicalBytes == [0x80])
        // 3B 81 80 01 80, TCK = 81 ⊕ 80 ⊕ 01 ⊕ 80 = 80.
        #expect(id.atr == [0x3B, 0x81, 0x80, 0x01, 0x80, 0x80])
        #expect(HCEPhoneIdentity(ats: [0x05]).historicalBytes == [], "a truncated ATS gives none, no crash")
        #expect(HCEPhoneIdentity(ats: [0x09, 0x78, 0x80]).historicalBytes == [], "TL past the end is cut")
    }
}

@Suite("HCE live phone on a virtual clock")
struct HCELivePhoneTests {
    @Test("Field on wakes the app before activation; PPSE by the system, Visa by the app, VAS 6A 82")
    func emvRouting() async throws {
        let clock = HCETestClock()
        let phone = HCELivePhone(
            app: visaApp, clock: clock.read,
            answer: { c in
                c == selectVisa ? [0x6F, 0x03, 0x84, 0x01, 0x01, 0x90, 0x00] : [0x90, 0x00]
            })
        let answers = try await offPool { () -> [HCELiveAnswer] in
            phone.note(.vpcd, "vpcdConnected")
            #expect(phone.fieldOn())
            clock.advance(.milliseconds(5))
            phone.activateISODEP()
            clock.advance(.milliseconds(3))
            var out = [phone.exchange(selectPPSE)]
            clock.advance(.milliseconds(12))
            out.append(phone.exchange(selectVisa))
            out.append(phone.exchange(selectVAS))
            clock.advance(.milliseconds(100))
            phone.fieldOff()
            return out
        }
        let fci = try #require(
            matched { if case .answered(.system, let fci) = answers[0] { fci } else { nil } }, "PPSE: \(answers[0])")
        #expect(fci.suffix(2) == [0x90, 0x00])
        #expect(fci.count > 7 && fci.contains(0x4F), "the system's FCI lists the declared AID")
        #expect(answers[1] == .answered(by: .app, response: [0x6F, 0x03, 0x84, 0x01, 0x01, 0x90, 0x00]))
        #expect(answers[2] == .answered(by: .system, response: [0x6A, 0x82]))

        let e = phone.events
        let connected = try #require(index(e, "vpcdConnected"))
        let wake = try #require(index(e, "nfcEvent"))
        let activated = try #require(index(e, "isoDepActivated"))
        let firstAPDU = try #require(index(e, "apdu"))
        #expect(connected < wake && wake < activated && activated < firstAPDU)
        #expect(e[wake].time == .zero && e[activated].time == .milliseconds(5) && e[firstAPDU].time == .milliseconds(8))
        #expect(e.contains { $0.event == "stopEmulation" && $0.detail == "success" })
        #expect(e.last?.event == "sessionInvalidated")
        #expect(e.filter { $0.event == "received" }.map(\.command) == [selectVisa])
    }

    @Test("An app slower than the frame waiting time makes the reader time out")
    func slowApp() async throws {
        let clock = HCETestClock()
        let phone = HCELivePhone(
            app: visaApp, clock: clock.read,
            answer: { _ in
                clock.advance(.milliseconds(50))  // the app takes 50 ms; FWT (FWI 7) is 38.7 ms
                return [0x90, 0x00]
            })
        let answer = try await offPool { () -> HCELiveAnswer in
            phone.fieldOn()
            phone.activateISODEP()
            let a = phone.exchange(selectVisa)
            phone.fieldOff()
            return a
        }
        #expect(answer == .timedOut)
        #expect(phone.events.contains { $0.event == "apdu" && $0.response == nil && $0.detail == "reader timeout" })
    }

    @Test("A command before activation gets no answer (no ISO-DEP link)")
    func notActivated() async throws {
        let phone = HCELivePhone(app: visaApp, clock: HCETestClock().read)
        let a = try await offPool { () -> HCELiveAnswer in
            phone.fieldOn()
            defer { phone.fieldOff() }
            return phone.exchange(selectPPSE)
        }
        #expect(a == .notActivated)
    }
}

/// An in-memory target-mode link: a reader that activates, sends `commands`, then releases.
final class HCEFakeTargetLink: HCETargetLink, @unchecked Sendable {
    var commands: [[UInt8]]
    var sent: [[UInt8]] = []
    var initArguments: (uid: [UInt8], ats: [UInt8])?
    var failInit = false
    init(commands: [[UInt8]]) { self.commands = commands }

    struct Failure: Error {}
    func hceTargetInit(uid: [UInt8], atqa: [UInt8], sak: UInt8, ats: [UInt8]) throws -> [UInt8] {
        if failInit { throw Failure() }
        initArguments = (uid, ats)
        return []
    }
    func hceTargetReceive() throws -> [UInt8]? { commands.isEmpty ? nil : commands.removeFirst() }
    func hceTargetSend(_ response: [UInt8]) throws { sent.append(response) }
}

@Suite("HCE live phone on the real clock")
struct HCELivePhoneRealClockTests {
    @Test(
        "Two threads adding lines at once (a vpcd card's APDUs, a PC/SC client's notes): the lines leave in time order"
    )
    func linesLeaveInTimeOrder() async throws {
        // A monotonic clock whose reader is held up a little after each reading, as a thread
        // preempted between reading the clock and writing its line would be.
        let start = ContinuousClock.now
        let emitted = Mutex<[Duration]>([])
        let phone = HCELivePhone(
            app: visaApp,
            clock: {
                let t = ContinuousClock.now - start
                stall(microseconds: 20)
                return t
            },
            onEvent: { e in emitted.withLock { $0.append(e.time) } })
        let rounds = 300
        async let card: Void = offPool {
            phone.fieldOn()
            phone.activateISODEP()
            for _ in 0..<rounds { _ = phone.exchange(selectVAS) }
            phone.fieldOff()
        }
        async let client: Void = offPool {
            for i in 0..<rounds { phone.note(.pcsc, "pcscTransmit", detail: "\(i)") }
        }
        _ = try await (card, client)
        let times = emitted.withLock { $0 }
        #expect(times.count >= 2 * rounds)
        let back = zip(times, times.dropFirst()).filter { $0.1 < $0.0 }.count
        #expect(back == 0, "\(back) of \(times.count) lines are earlier than the line before them")
        #expect(phone.events.map(\.time) == times, "the timeline keeps the order the lines left in")
    }
}

@Suite("HCE target emulator (in-memory link)")
struct HCETargetEmulatorTests {
    @Test("Activation is logged first, each APDU is answered as the model says, release is field off")
    func emvThroughLink() async throws {
        let link = HCEFakeTargetLink(commands: [selectPPSE, selectVisa, gpo])
        let phone = HCELivePhone(app: visaApp, clock: HCETestClock().read)
        let outcome = try await offPool { HCETargetEmulator.serveOneReader(link, phone: phone, reader: "emv") }
        #expect(outcome == .released(apdus: 3))
        #expect(link.initArguments?.ats == [0x78, 0x80, 0x70, 0x02], "the ATS goes to nfc_target_init without TL")
        try #require(link.sent.count == 3)
        #expect(link.sent[1] == [0x90, 0x00] && link.sent[2] == [0x90, 0x00])
        let e = phone.events
        #expect(e.first?.event == "activation" && e.first?.source == .libnfc)
        #expect(!e.contains { $0.source != .model && $0.event.lowercased().contains("field") }, "libnfc shows no field")
        let wake = try #require(index(e, "nfcEvent"))
        let firstReceive = try #require(index(e, "targetReceive"))
        #expect(wake < firstReceive)
        #expect(e.filter { $0.event == "released" }.count == 1)
        #expect(e.last?.event == "sessionInvalidated")
    }

    @Test("A failing nfc_target_init is reported, not crashed on, and wakes nobody")
    func initFails() async throws {
        let link = HCEFakeTargetLink(commands: [])
        link.failInit = true
        let phone = HCELivePhone(app: visaApp, clock: HCETestClock().read)
        let outcome = try await offPool { HCETargetEmulator.serveOneReader(link, phone: phone) }
        try #require(matches { if case .failed(0, _) = outcome { true } else { false } }, "\(outcome)")
        #expect(!phone.events.contains { $0.event == "nfcEvent" })
    }

    @Test("A reader profile becomes a PN532 reader script; a profile without ISO-DEP does not")
    func scriptFromProfile() throws {
        let emv = ReaderProfile(
            name: "emv", category: "payment", technology: .iso14443A, reachesISODEP: true,
            activationOffset: .milliseconds(5),
            steps: [
                .init(offset: .milliseconds(8), apdu: selectPPSE), .init(offset: .milliseconds(20), apdu: selectVisa),
            ],
            fieldOffOffset: .milliseconds(400), source: "test")
        let script = try #require(PN532ReaderScript(profile: emv, expectedResponses: [nil, [0x90, 0x00]]))
        #expect(script.rats == [0xE0, 0x80])
        #expect(
            script.steps == [.init(command: selectPPSE), .init(command: selectVisa, expectedResponse: [0x90, 0x00])])
        let door = ReaderProfile(
            name: "door", category: "access", technology: .iso14443A, reachesISODEP: false,
            activationOffset: .zero, steps: [], fieldOffOffset: .milliseconds(250), source: "test")
        #expect(PN532ReaderScript(profile: door) == nil)
    }
}

@Suite("HCE phone card on the vpcd wire (fake vpcd)", .serialized)
struct HCEPhoneCardWireTests {
    @Test("Connecting is field on and the wake; control bytes are not fields; closing is field off")
    func wire() async throws {
        let server = try VPCDTestServer()
        var config = VirtualCard.Configuration(port: server.port)
        config.retryInterval = .milliseconds(5)
        // A virtual clock that stands still: only the wire's order is under test here, not
        // how fast this machine schedules the app (the frame waiting time is real time only
        // on the real clock).
        let phone = HCELivePhone(app: visaApp, clock: HCETestClock().read)
        let card = HCEPhoneCard(phone: phone, configuration: config)
        card.enterField(reader: "emv")
        let replies = try await offPool { () -> [[UInt8]?] in
            guard server.accept(seconds: 20) else { return [] }
            server.send([0x01])  // power on: no answer
            server.send([0x04])
            let atr = server.receive(milliseconds: 15_000)
            server.send([0x00])  // power off
            server.send([0x01])
            server.send(selectPPSE)
            let ppse = server.receive(milliseconds: 15_000)
            server.send(selectVisa)
            let visa = server.receive(milliseconds: 15_000)
            server.send([0xFF, 0xCA, 0x00, 0x00, 0x00])  // PC/SC GET DATA: the UID
            let uid = server.receive(milliseconds: 15_000)
            return [atr, ppse, visa, uid]
        }
        #expect(replies.count == 4)
        #expect(
            replies.last == phone.identity.uid + [0x90, 0x00], "GET DATA gives this emulation's UID, as a reader does")
        #expect(phone.identity.uid.first == 0x08 && phone.identity.uid != [0x08, 0x5A, 0x3C, 0x91])
        #expect(phone.events.contains { $0.event == "readerGetData" && $0.response?.suffix(2) == [0x90, 0x00] })
        #expect(replies.first == [0x3B, 0x80, 0x80, 0x01, 0x01])
        #expect(replies.dropFirst().first??.suffix(2) == [0x90, 0x00])
        #expect(replies[2] == [0x90, 0x00])
        try await offPool { card.leaveField() }
        #expect(try await offPool { server.sawEOF() })
        let e = phone.events
        let wake = try #require(index(e, "nfcEvent"))
        let firstControl = try #require(index(e, "vpcdControl"))
        let firstAPDU = try #require(index(e, "apdu"))
        #expect(index(e, "vpcdConnected")! < wake && wake < firstControl && firstControl < firstAPDU)
        #expect(e.filter { $0.event == "fieldOn" }.count == 1, "power cycles are not fields")
        #expect(e.filter { $0.event == "vpcdControl" }.count == 4)
        #expect(e.filter { $0.event == "fieldOff" }.count == 1)
        #expect(e.firstIndex { $0.event == "vpcdDisconnected" }! < e.firstIndex { $0.event == "fieldOff" }!)
        #expect(e.filter { $0.event == "apdu" }.map(\.answeredBy) == [.system, .app])
    }

    @Test("Once the card says it is connected, its field on is already in the timeline (walk --device reads it then)")
    func connectedMeansFieldOnRecorded() async throws {
        let server = try VPCDTestServer()
        var config = VirtualCard.Configuration(port: server.port)
        config.retryInterval = .milliseconds(5)
        // A clock that takes 30 ms to read: a thread preempted while it writes the line.
        let clock = HCETestClock()
        let phone = HCELivePhone(
            app: visaApp,
            clock: {
                stall(microseconds: 30_000)
                return clock.now
            })
        let card = HCEPhoneCard(phone: phone, configuration: config)
        card.enterField(reader: "emv")
        let seen = try await offPool { () -> [String]? in
            guard server.accept(seconds: 20) else { return nil }
            _ = pollBlocking(timeout: .seconds(20), every: .microseconds(100)) { card.isConnected }
            return phone.events.map(\.event)
        }
        let events = try #require(seen, "vpcd was never connected to")
        #expect(events.contains("vpcdConnected"), "\(events)")
        #expect(events.contains("fieldOn"), "\(events)")
        try await offPool { card.leaveField() }
        #expect(!card.isConnected)
    }
}

@Suite("HCE live phone: a random UID per emulation (issue 31)")
struct HCEUIDPerEmulationTests {
    /// The UIDs `nfc_target_init` got for `n` readers served one after the other.
    static func servedUIDs(_ phone: HCELivePhone, readers n: Int) async throws -> [[UInt8]] {
        try await offPool {
            (0..<n).compactMap { i -> [UInt8]? in
                let link = HCEFakeTargetLink(commands: [selectPPSE, selectVisa])
                _ = HCETargetEmulator.serveOneReader(link, phone: phone, reader: "r\(i)")
                return link.initArguments?.uid
            }
        }
    }

    @Test("By default every emulation presents a new UID, 08 and 3 bytes, not the old fixed 08 5A 3C 91")
    func newUIDEachEmulation() async throws {
        let phone = HCELivePhone(app: visaApp, clock: HCETestClock().read)
        let uids = try await Self.servedUIDs(phone, readers: 3)
        #expect(uids.count == 3)
        #expect(uids.allSatisfy { $0.count == 4 && $0.first == 0x08 }, "\(uids)")
        #expect(Set(uids).count == 3, "a new UID for each emulation: \(uids)")
        #expect(!uids.contains([0x08, 0x5A, 0x3C, 0x91]))
        // The timeline says which UID each reader met, on the model's ISO-DEP activation.
        let activations = phone.events.filter { $0.event == "isoDepActivated" }
        #expect(activations.map(\.uid) == uids.map { Optional($0) })
        #expect(activations.map(\.reader) == ["r0", "r1", "r2"])
    }

    @Test("The same seed gives the same UIDs in the same order; another seed others")
    func seeded() async throws {
        let a = try await Self.servedUIDs(
            HCELivePhone(app: visaApp, uid: .random(seed: 42), clock: HCETestClock().read), readers: 3)
        let b = try await Self.servedUIDs(
            HCELivePhone(app: visaApp, uid: .random(seed: 42), clock: HCETestClock().read), readers: 3)
        let c = try await Self.servedUIDs(
            HCELivePhone(app: visaApp, uid: .random(seed: 43), clock: HCETestClock().read), readers: 3)
        #expect(a == b)
        #expect(a != c)
        #expect(a.first == HCEPhoneIdentity.UIDChoice.random(seed: 42).firstUID)
    }

    @Test("A fixed UID (emulate --uid) stays the same, emulation after emulation")
    func fixed() async throws {
        let old: [UInt8] = [0x08, 0x5A, 0x3C, 0x91]
        let phone = HCELivePhone(app: visaApp, uid: .fixed(old), clock: HCETestClock().read)
        let uids = try await Self.servedUIDs(phone, readers: 2)
        #expect(uids == [old, old])
        #expect(phone.identity.uid == old)
    }

    @Test("The identity's rows in the model table: the UID is reported as random per emulation")
    func facts() {
        let rows = HCEPhoneIdentity.facts
        #expect(rows.map(\.key) == ["phone_uid", "phone_atqa", "phone_sak", "phone_ats"])
        #expect(rows.allSatisfy { $0.source == "reported" })
        #expect(rows.first?.reference.contains("774626") == true)
    }
}
