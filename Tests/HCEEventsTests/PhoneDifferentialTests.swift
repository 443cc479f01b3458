import Foundation
import NFCTags
import Testing

@testable import HCEEvents

/// The phone driven by seeded random inputs (fields, ISO-DEP, commands, collects, time,
/// sessions and their calls, answers, assertions, foreground, conditions), with everything a
/// user of ``ContactlessPhone`` can observe written down step by step: each call's result or
/// error, the timeline lines it added, the events each session received, and the public
/// properties after it. The digests below were recorded from the phone before its state
/// became a value machine (``ContactlessPhoneMachine``, issue 35); the same seeds must give
/// the same transcripts, byte for byte. With `NFCBENCH_PHONE_TRANSCRIPTS=<folder>` the test
/// writes each seed's transcript there, to diff against a run of the old code.
@Suite("Phone: seeded random inputs give the recorded transcripts")
struct PhoneDifferentialTests {
    /// FNV-1a 64 of each seed's transcript (seeds 1...) and its line count.
    static let golden: [(digest: UInt64, lines: Int)] = [
        (0xacba_32cf_0de8_5673, 1067),
        (0xe674_57ab_447d_03c9, 1034),
        (0x28fa_0424_1e6f_653f, 1068),
        (0xc69b_2750_c2ef_7811, 956),
        (0xc1be_a763_f1b2_35ab, 1110),
        (0x46cd_c5ae_939f_124b, 1160),
        (0x26db_7096_4433_42ae, 936),
        (0x8438_ee2b_5cdd_b146, 953),
        (0x523f_2e56_9fc3_88e5, 986),
        (0x958b_b0ea_3160_0c88, 1008),
        (0xd496_f983_1cda_aa2e, 1003),
        (0x8d03_69f5_f4fc_dfbe, 982),
        (0x73eb_0741_0cee_829d, 1134),
        (0x7104_3d29_aafc_6da6, 996),
        (0x89a0_43ab_0a8f_f629, 1046),
        (0xf055_82b5_b387_ec65, 1058),
        (0x433_5d99_c53b_2290, 1106),
        (0xc8c6_eabc_a171_63f0, 918),
        (0x9973_4f43_cd9e_73a4, 946),
        (0xe10_7b29_a7a1_be8d, 1011),
        (0x6262_93e7_8e8e_3367, 964),
        (0x9b1_d0b9_7cd1_e188, 1077),
        (0xe67a_ede0_8307_5879, 977),
        (0xdea4_5a39_8042_43e9, 926),
        (0xe1b4_2509_1936_abf1, 904),
        (0x3710_ae67_8faa_36f5, 992),
        (0x3ce_e7c6_3e63_5ce4, 1066),
        (0x1721_1c9c_e276_d0e3, 1029),
        (0x89f1_08fc_8ab9_6105, 969),
        (0x6673_3c8b_ade1_0fce, 1086),
        (0x4ad1_155b_7257_53b4, 1042),
        (0x1665_321a_63a9_f26e, 1190),
        (0xa26a_ae0f_dcd6_7e16, 1004),
        (0x3843_a11a_9b5b_43be, 1011),
        (0x1aab_4491_9ffc_0c37, 973),
        (0x787a_1a65_1ead_4af2, 895),
        (0xb5bf_52b5_1230_2447, 1047),
        (0x96bf_f20d_4052_5533, 921),
        (0x27cb_da55_72e9_f526, 970),
        (0x4641_f13b_12bc_ab42, 1289),
        (0x60d0_4ec8_e16d_cc90, 954),
        (0xce4b_4791_e851_8dcd, 961),
        (0x1ef6_7ae7_9745_70c6, 1140),
        (0xf4cc_e118_b429_07c7, 949),
        (0x3171_a517_75b1_e420, 1046),
        (0x3892_9b72_6f3c_30cb, 1101),
        (0x29c6_5d1a_98bb_e9d0, 1071),
        (0xc2b3_c785_4e24_d019, 881),
        (0xdf09_e346_3e69_a491, 1043),
        (0x835a_f9ec_097b_3f50, 1290),
    ]

    static let steps = 300

    @Test("Each seed's transcript matches the one recorded before the refactor", arguments: 1...50)
    func transcript(seed: Int) async throws {
        var d = PhoneDriver(seed: UInt64(seed))
        let t = await d.run(steps: Self.steps)
        if let dir = ProcessInfo.processInfo.environment["NFCBENCH_PHONE_TRANSCRIPTS"] {
            // For a diff when a digest changes: each seed's transcript, one file each.
            try (t.joined(separator: "\n") + "\n").write(
                toFile: dir + "/seed-\(seed).txt", atomically: true, encoding: .utf8)
        }
        let got = "(0x\(String(Self.fnv1a(t), radix: 16)), \(t.count)),"
        let golden = try #require(
            Self.golden.count >= seed ? Self.golden[seed - 1] : nil, "no digest recorded for seed \(seed): \(got)")
        #expect(golden.digest == Self.fnv1a(t) && golden.lines == t.count, "seed \(seed) now gives \(got)")
    }

    @Test("A seed gives the same transcript twice (the driver is deterministic)")
    func deterministic() async {
        var d1 = PhoneDriver(seed: 7)
        var d2 = PhoneDriver(seed: 7)
        let a = await d1.run(steps: 200)
        let b = await d2.run(steps: 200)
        #expect(a == b)
        #expect(a.count > 200)
    }

    static func fnv1a(_ lines: [String]) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for line in lines {
            for b in line.utf8 {
                h ^= UInt64(b)
                h = h &* 0x100_0000_01b3
            }
            h ^= 0x0A
            h = h &* 0x100_0000_01b3
        }
        return h
    }
}

/// SplitMix64, local to the test.
struct SeededRandom {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    mutating func pick<T>(_ xs: [T]) -> T { xs[below(xs.count)] }
}

/// Drives one phone with one seed and writes down what can be seen.
struct PhoneDriver {
    var rng: SeededRandom
    let phone: ContactlessPhone
    var sessions: [CardSession] = []
    var seenHistory: [Int] = []
    var assertions: [NFCPresentmentIntentAssertion] = []
    /// Every APDU a session received, in order.
    var received: [CardSession.APDU] = []
    var seenLog = 0
    var out: [String] = []

    static let express = ContactlessPhone.ExpressCredential(name: "transit", ecpFrame: hex("6A02C3020002FFFF"))
    static let aids: [[UInt8]] = [
        hex("A0000000031010"), hex("A0000000032010"), hex("A0000000041010"), WellKnownAID.ppse,
        WellKnownAID.ndefApplication, hex("F00102030405"), hex("A000000003"),
    ]

    init(seed: UInt64) {
        var rng = SeededRandom(state: seed)
        let prefixSets: [[String]?] = [
            nil, [], ["A0000000031010"], ["A000000003"], ["A000000003", "A0000000041010"],
            ["325041592E5359532E4444463031", "A000000003"], ["D2760000850101"],
        ]
        let app = rng.pick(prefixSets).map { p in
            ContactlessPhone.DefaultApp(selectIdentifierPrefixes: p.map { try! SelectIdentifierPrefix(hex: $0) })
        }
        let ms: (Int) -> Duration = { .milliseconds($0) }
        let parameters = HCEParameters(
            maximumSessionDuration: ms(rng.pick([800, 2000, 60000])),
            maximumDurationCoolDown: ms(rng.pick([0, 200, 700])),
            presentmentAssertionLifetime: ms(rng.pick([150, 600, 1500])),
            presentmentReacquireCoolDown: ms(rng.pick([0, 100, 400])),
            frameWaitingTimeInteger: rng.pick([4, 7, 9]),
            wakeLatency: ms(rng.pick([0, 0, 40, 400])),
            authenticationLatency: ms(rng.pick([0, 30, 1000])),
            emulationStartLatency: ms(rng.pick([0, 0, 25, 500])),
            sendsWaitingTimeExtensions: rng.chance(70),
            waitingTimeExtensionMultiplier: UInt8(rng.pick([1, 2, 5])),
            readerWaitingTimeExtensionLimit: ms(rng.pick([0, 100, 1000])))
        let conditions = ContactlessPhone.Conditions(locked: rng.chance(30))
        phone = ContactlessPhone(
            defaultApp: app, expressCredentials: rng.chance(40) ? [Self.express] : [], parameters: parameters,
            conditions: conditions)
        self.rng = rng
        out.append("seed \(seed) app \(app.map { "\($0.selectIdentifierPrefixes)" } ?? "none") \(parameters)")
    }

    /// A time near now: mostly a little later, sometimes much later, sometimes earlier.
    mutating func time() -> Duration {
        let now = phone.now
        switch rng.below(20) {
        case 0, 1: return now - .milliseconds(rng.below(50))
        case 2: return now + .milliseconds(500 + rng.below(3000))
        case 3, 4: return now
        case 5...10: return now + .microseconds(Int64(rng.below(5_000)))
        default: return now + .microseconds(Int64(rng.below(120_000)))
        }
    }

    mutating func command() -> [UInt8] {
        func select(_ aid: [UInt8], p2: UInt8 = 0x00) -> [UInt8] {
            [0x00, 0xA4, 0x04, p2, UInt8(aid.count)] + aid + [0x00]
        }
        switch rng.below(12) {
        case 0...1: return select(rng.pick(Self.aids))
        case 2...3:
            let declared = phone.defaultApp?.selectIdentifierPrefixes.map(\.bytes) ?? []
            return select(rng.pick(declared.isEmpty ? Self.aids : declared))
        case 4: return select(rng.pick(Self.aids), p2: rng.pick([0x02, 0x01, 0x0C, 0x10, 0x03]))
        case 5: return hex("00B0000000")
        case 6: return hex("80A8000002830000")
        case 7: return hex("00A4000C02E104")
        case 8: return rng.pick([hex("FFCA000000"), hex("0060000000"), hex("00A40400"), hex("00A4040002A000")])
        case 9: return hex("00A4040007A0000000031010FFFF")
        case 10: return hex("00B2010C00")
        default: return (0..<rng.below(8)).map { _ in UInt8(rng.below(256)) }
        }
    }

    enum Step: CaseIterable {
        case tap, advance, fieldOn, fieldOff, activate, command, collect, answer, newSession, start, stop, invalidate
        case alert, acquire, release, foreground, conditions, systemInvalidates, dismiss
        var weight: Int {
            switch self {
            case .command: 20
            case .collect, .answer: 12
            case .activate, .start, .tap: 8
            case .advance: 6
            case .fieldOn: 5
            case .fieldOff, .newSession, .acquire: 3
            case .stop, .release, .foreground, .conditions: 2
            case .invalidate, .alert, .systemInvalidates, .dismiss: 1
            }
        }
    }
    static let total = Step.allCases.map(\.weight).reduce(0, +)
    static func choose(_ r: Int) -> Step {
        var r = r
        for s in Step.allCases {
            if r < s.weight { return s }
            r -= s.weight
        }
        return .dismiss
    }

    mutating func step() async {
        let p = phone
        switch Self.choose(rng.below(Self.total)) {
        case .tap:
            // A reader's tap: field on (A or B, no ECP), ISO-DEP a moment later.
            let tech = rng.pick([ReaderTechnology.iso14443A, .iso14443B])
            let t = time()
            out.append("tap fieldOn(\(tech), at: \(t.wholeMicroseconds)) -> \(p.fieldOn(tech, at: t))")
            let t2 = p.now + .microseconds(Int64(rng.below(8_000)))
            out.append("tap activateISODEP(at: \(t2.wholeMicroseconds)) -> \(p.activateISODEP(at: t2))")
        case .advance:
            let t = time()
            out.append("advance(to: \(t.wholeMicroseconds))")
            p.advance(to: t)
        case .fieldOn:
            let tech = rng.pick(ReaderTechnology.allCases)
            let ecp: [UInt8]? = rng.pick([nil, nil, Self.express.ecpFrame, hex("6A0200000001")])
            let t = time()
            let r = p.fieldOn(tech, ecp: ecp, at: t)
            out.append(
                "fieldOn(\(tech), ecp: \(ecp.map { $0.hexString() } ?? "-"), at: \(t.wholeMicroseconds)) -> \(r)")
        case .fieldOff:
            let t = time()
            out.append("fieldOff(at: \(t.wholeMicroseconds))")
            p.fieldOff(at: t)
        case .activate:
            let t = time()
            out.append("activateISODEP(at: \(t.wholeMicroseconds)) -> \(p.activateISODEP(at: t))")
        case .command:
            let c = command()
            let t = rng.chance(70) ? p.now + .microseconds(Int64(rng.below(3_000))) : time()
            let r = p.readerCommand(c, at: t)
            out.append("readerCommand(\(c.hexString()), at: \(t.wholeMicroseconds)) -> \(Self.text(r))")
            guard case .awaitingApp = r else { return }
            switch rng.below(20) {
            case 0..<11:  // the app answers before anything else, the reader collects
                await observe()
                await answer()
                await observe()
                let t2 = p.now + .microseconds(Int64(rng.below(10_000)))
                out.append("collectResponse(at: \(t2.wholeMicroseconds)) -> \(Self.text(p.collectResponse(at: t2)))")
            case 11..<15:  // the reader waits: S(WTX) up to its limit, or a timeout
                await observe()
                let t2 = p.now + .microseconds(Int64(rng.below(1_500_000)))
                out.append("collectResponse(at: \(t2.wholeMicroseconds)) -> \(Self.text(p.collectResponse(at: t2)))")
            default: break
            }
        case .collect:
            let t = rng.chance(70) ? p.now + .microseconds(Int64(rng.below(20_000))) : time()
            out.append("collectResponse(at: \(t.wholeMicroseconds)) -> \(Self.text(p.collectResponse(at: t)))")
        case .answer:
            await answer()
        case .newSession:
            if rng.chance(50) || !p.conditions.supported {
                sessions.append(p.makeCardSession())
                out.append("makeCardSession() -> \(sessions.last!.id)")
            } else {
                do throws(CardSession.Error) {
                    sessions.append(try await CardSession(phone: p))
                    out.append("CardSession(phone:) -> \(sessions.last!.id)")
                } catch { out.append("CardSession(phone:) throws \(error)") }
            }
            seenHistory.append(0)
        case .start:
            if !sessions.contains(where: \.isValid), rng.chance(60) {
                sessions.append(p.makeCardSession())
                seenHistory.append(0)
                out.append("makeCardSession() -> \(sessions.last!.id)")
            }
            guard let s = session() else { return out.append("no session") }
            do throws(CardSession.Error) {
                try await s.startEmulation()
                out.append("s\(s.id).startEmulation()")
            } catch { out.append("s\(s.id).startEmulation() throws \(error)") }
        case .stop:
            guard let s = session() else { return out.append("no session") }
            let status = rng.pick([CardSession.EmulationUIStatus.success, .failure, .none])
            out.append("s\(s.id).stopEmulation(status: \(status))")
            await s.stopEmulation(status: status)
        case .invalidate:
            guard let s = session() else { return out.append("no session") }
            out.append("s\(s.id).invalidate()")
            s.invalidate()
        case .alert:
            guard let s = session() else { return out.append("no session") }
            let m = "alert \(rng.below(10))"
            out.append("s\(s.id).alertMessage = \(m)")
            s.alertMessage = m
        case .acquire:
            do throws(NFCPresentmentIntentAssertion.Error) {
                let a = try NFCPresentmentIntentAssertion.acquire(on: p)
                assertions.append(a)
                out.append("acquire() -> \(a.id)")
            } catch { out.append("acquire() throws \(error)") }
        case .release:
            guard !assertions.isEmpty else { return out.append("no assertion") }
            let a = rng.pick(assertions)
            out.append("assertion \(a.id).release()")
            a.release()
        case .foreground:
            let f = rng.chance(70)
            out.append("setForeground(\(f))")
            p.setForeground(f)
        case .conditions:
            var c = p.conditions
            switch rng.below(6) {
            case 0: c.radioEnabled.toggle()
            case 1: c.eligible.toggle()
            case 2: c.accessAccepted.toggle()
            case 3: c.locked.toggle()
            case 4: if rng.chance(20) { c.supported.toggle() }
            default: c = ContactlessPhone.Conditions(locked: c.locked)
            }
            if rng.chance(40) { c = ContactlessPhone.Conditions(locked: c.locked) }
            out.append("setConditions(\(c))")
            p.setConditions(c)
        case .systemInvalidates:
            let reason = rng.pick([CardSession.Error.invalidated, .userInvalidated, .systemNotAvailable])
            out.append("systemInvalidates(\(reason))")
            p.systemInvalidates(reason)
        case .dismiss:
            out.append("userDismissesEmulation()")
            p.userDismissesEmulation()
        }
    }

    /// Mostly a valid session, sometimes any.
    mutating func session() -> CardSession? {
        let valid = sessions.filter(\.isValid)
        if !valid.isEmpty, rng.chance(85) { return rng.chance(70) ? valid.last : rng.pick(valid) }
        return sessions.isEmpty ? nil : rng.pick(sessions)
    }

    /// A session answers one of the APDUs it received (mostly the last one).
    mutating func answer() async {
        guard !received.isEmpty else { return out.append("nothing to answer") }
        let apdu = rng.chance(75) ? received.last! : rng.pick(received)
        let response = rng.pick([[0x90, 0x00], hex("6F0A8407A0000000031010A5009000"), [0x6A, 0x82], []])
        do throws(CardSession.Error) {
            try await apdu.respond(response: response)
            out.append("s\(apdu.session.id) respond(\(apdu.id), \(response.hexString()))")
        } catch { out.append("s\(apdu.session.id) respond(\(apdu.id), \(response.hexString())) throws \(error)") }
    }

    /// A timeline event in full (by hand: reflection's text is slow in a debug build).
    static func text(_ e: ContactlessPhone.LogEvent) -> String {
        func hex(_ b: [UInt8]?) -> String { b.map { $0.hexString() } ?? "nil" }
        switch e {
        case .fieldOn(let tech, let ecp): return "fieldOn(\(tech.rawValue), ecp: \(hex(ecp)))"
        case .authenticated: return "authenticated"
        case .waitingTimeExtension(let m): return "waitingTimeExtension(\(m))"
        case .heldForApp(let c): return "heldForApp(\(hex(c)))"
        case .nfcEvent: return "nfcEvent"
        case .wakeSuppressed(.presentmentIntentAssertion): return "wakeSuppressed(presentmentIntentAssertion)"
        case .wakeSuppressed(.expressCredential(let n)): return "wakeSuppressed(expressCredential \(n))"
        case .isoDepActivated: return "isoDepActivated"
        case .apdu(let c, let r, let by): return "apdu(\(hex(c)), \(hex(r)), \(by?.rawValue ?? "nil"))"
        case .session(let id, let se): return "session(\(id), \(se))"
        case .emulationStarted(let id): return "emulationStarted(\(id))"
        case .emulationStopped(let id, let status): return "emulationStopped(\(id), \(status.rawValue))"
        case .fieldOff: return "fieldOff"
        }
    }

    static func text(_ x: ContactlessPhone.ReaderExchange) -> String {
        switch x {
        case .answered(let by, let r): "answered(\(by.rawValue), \(r.hexString()))"
        case .awaitingApp(let d): "awaitingApp(\(d.wholeMicroseconds))"
        case .timedOut: "timedOut"
        case .notActivated: "notActivated"
        }
    }

    /// What a user of the phone sees after a step.
    mutating func observe() async {
        let p = phone
        let log = p.log
        for (t, e) in log[seenLog...] {
            let (name, detail) = ContactlessPhone.describe(e)
            out.append("  log \(t.wholeMicroseconds) \(Self.text(e)) | \(name) \(detail ?? "-")")
        }
        seenLog = log.count
        for (i, s) in sessions.enumerated() {
            let h = s.history
            for (t, e) in h[seenHistory[i]...] {
                out.append("  s\(s.id) \(t.wholeMicroseconds) \(e)")
                if case .received(let a) = e { received.append(a) }
            }
            seenHistory[i] = h.count
        }
        var line =
            "  now \(p.now.wholeMicroseconds) field \(p.fieldPresent) wake \(p.pendingWake?.wholeMicroseconds ?? -1)"
            + " last \(p.lastWake?.wholeMicroseconds ?? -1) due \(p.nextDue?.wholeMicroseconds ?? -1)"
            + " eligible \(p.isEligible)"
        for s in sessions {
            let emulating = await s.isEmulationInProgress
            line += " s\(s.id)[\(s.isValid ? "v" : "-")\(emulating ? "e" : "-") \(s.alertMessage)]"
        }
        for a in assertions { line += " a\(a.id)[\(a.isValid)]" }
        out.append(line)
    }

    mutating func run(steps: Int) async -> [String] {
        for _ in 0..<steps {
            await step()
            await observe()
        }
        return out
    }
}
