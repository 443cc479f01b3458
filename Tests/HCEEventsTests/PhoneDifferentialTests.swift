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
        (0xb918_5081_c2e8_d147, 1067),
        (0xbee7_171c_d30d_15cc, 1034),
        (0xb5d8_df78_634d_0d3a, 1068),
        (0x8c4_9a1f_aa80_2205, 956),
        (0x635d_6ee0_64ae_f686, 1110),
        (0xa035_8ad8_8cd7_a743, 1160),
        (0x4a4c_5285_664b_3619, 936),
        (0x660a_c251_5e6f_ebdc, 953),
        (0x889b_adbd_7cd7_30f6, 986),
        (0xceda_4107_74e1_44ac, 1008),
        (0x61bc_a1a3_e58c_e31f, 1003),
        (0xea87_8b8c_4253_100c, 982),
        (0xaa0b_b104_efbd_6f71, 1134),
        (0x4c77_8b9a_75bd_1c9e, 996),
        (0x9d0c_0a84_d482_0d62, 1046),
        (0x9a76_5f5b_2faa_95d4, 1058),
        (0xf63d_d2f0_1a5a_627d, 1106),
        (0xc7f8_32a6_61da_5e8e, 918),
        (0x282c_ecd1_07ad_bbc7, 946),
        (0xf708_ed72_25cf_ac32, 1011),
        (0x27e4_c2e8_8199_c33b, 964),
        (0x3152_71fa_ec4f_5e7f, 1077),
        (0xc0d0_f93f_95f9_59e1, 977),
        (0x1adb_f6e5_462c_7812, 926),
        (0xbe87_2d06_fbd5_ae84, 904),
        (0xffc9_18e1_1640_93ec, 992),
        (0xc82d_370b_eaba_2722, 1066),
        (0x3a58_a3c5_c1cc_f52f, 1029),
        (0xaf0e_86c7_abdf_5b66, 969),
        (0xba2e_5de7_2e09_4f2b, 1086),
        (0xb14d_0577_64a9_7e3b, 1042),
        (0xccb3_7ea4_81a6_1de8, 1190),
        (0xdb83_72f2_cf4b_592a, 1004),
        (0xa334_4cb9_7be0_3096, 1011),
        (0x6a3_49cd_612b_2486, 973),
        (0x5e0f_220b_83ad_f97f, 895),
        (0xcfc7_9e02_b9fd_06be, 1047),
        (0x3c14_4b6c_849c_5487, 921),
        (0xef6b_7b93_db3b_9b25, 970),
        (0xd223_a5ce_fdf9_b79b, 1289),
        (0x3fa8_0538_9a34_6742, 954),
        (0xa53b_ae60_9008_914f, 961),
        (0x1a19_a854_404d_4002, 1140),
        (0x185b_bfc1_93a0_c7f3, 949),
        (0x54e1_33ec_4031_285b, 1046),
        (0x6972_8d0e_c7a0_0e4f, 1101),
        (0x58fc_ac4d_ec42_4a98, 1071),
        (0xe95b_a26c_1d5a_a30e, 881),
        (0x6d76_4615_a7a3_b876, 1043),
        (0x34c0_bc37_3508_1035, 1290),
    ]

    static let steps = 300

    @Test("Each seed's transcript matches the one recorded before the refactor")
    func transcripts() async throws {
        var got: [(digest: UInt64, lines: Int)] = []
        for seed in 1...UInt64(max(Self.golden.count, 50)) {
            var d = PhoneDriver(seed: seed)
            let t = await d.run(steps: Self.steps)
            got.append((Self.fnv1a(t), t.count))
            if let dir = ProcessInfo.processInfo.environment["NFCBENCH_PHONE_TRANSCRIPTS"] {
                // For a diff when a digest changes: each seed's transcript, one file each.
                try (t.joined(separator: "\n") + "\n").write(
                    toFile: dir + "/seed-\(seed).txt", atomically: true, encoding: .utf8)
            }
        }
        let rendered = got.map { "(0x\(String($0.digest, radix: 16)), \($0.lines))," }.joined(separator: "\n")
        try #require(Self.golden.count == got.count, "recorded digests, put in `golden`:\n\(rendered)")
        for (i, (g, n)) in zip(Self.golden, got).enumerated() {
            #expect(g.digest == n.digest && g.lines == n.lines, "seed \(i + 1): \(n.lines) lines, digest changed")
        }
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
            out.append("readerCommand(\(c.hexString()), at: \(t.wholeMicroseconds)) -> \(r)")
            guard case .awaitingApp = r else { return }
            switch rng.below(20) {
            case 0..<11:  // the app answers before anything else, the reader collects
                await observe()
                await answer()
                await observe()
                let t2 = p.now + .microseconds(Int64(rng.below(10_000)))
                out.append("collectResponse(at: \(t2.wholeMicroseconds)) -> \(p.collectResponse(at: t2))")
            case 11..<15:  // the reader waits: S(WTX) up to its limit, or a timeout
                await observe()
                let t2 = p.now + .microseconds(Int64(rng.below(1_500_000)))
                out.append("collectResponse(at: \(t2.wholeMicroseconds)) -> \(p.collectResponse(at: t2))")
            default: break
            }
        case .collect:
            let t = rng.chance(70) ? p.now + .microseconds(Int64(rng.below(20_000))) : time()
            out.append("collectResponse(at: \(t.wholeMicroseconds)) -> \(p.collectResponse(at: t))")
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

    /// What a user of the phone sees after a step.
    mutating func observe() async {
        let p = phone
        let log = p.log
        for (t, e) in log[seenLog...] {
            let (name, detail) = ContactlessPhone.describe(e)
            out.append("  log \(t.wholeMicroseconds) \(e) | \(name) \(detail ?? "-")")
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
