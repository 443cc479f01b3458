import ReaderSession
import Testing

@Suite("Thermal and quick-restart model")
struct ThermalModelTests {
    @Test("Limits never grow with heat and stay within the floor and the base")
    func monotone() {
        let t = ThermalModel()
        var previous = t.limit(forHeat: 0)
        #expect(previous == .seconds(60))
        for h in stride(from: 0.0, through: 400, by: 2.5) {
            let l = t.limit(forHeat: h)
            #expect(l <= previous)
            #expect(l >= t.parameters.minimumLimit)
            previous = l
        }
    }

    @Test("Back-to-back full sessions shrink the limit until begin is refused")
    func backToBack() {
        var t = ThermalModel()
        var now = Duration.zero
        var limits: [Duration] = []
        while case .granted(let l) = t.beginRequested(at: now), limits.count < 10 {
            limits.append(l)
            t.fieldOn(at: now)
            now += l
            t.fieldOff(at: now)
        }
        // 60 s, then 60 − 0.25 × heat: 45 (heat 60), 33.75 (105), 25.313 (138.75), 18.984 (164.06).
        #expect(
            limits == [.seconds(60), .seconds(45), .milliseconds(33_750), .milliseconds(25_313), .milliseconds(18_984)])
        #expect(t.decision(at: now) == .refused)
    }

    @Test("Limits after 0 s, 3 s and 30 s gaps grow with the gap; cool-down restores 60 s")
    func gaps() {
        var t = ThermalModel()
        _ = t.beginRequested(at: .zero)
        t.fieldOn(at: .zero)
        t.fieldOff(at: .seconds(60))
        let l0 = t.limit(after: .zero)
        let l3 = t.limit(after: .seconds(3))
        let l30 = t.limit(after: .seconds(30))
        #expect(l0 == .seconds(45))
        if let l0, let l3, let l30 {
            #expect(l0 < l3 && l3 < l30 && l30 < .seconds(60))
        } else {
            Issue.record("a begin after a single session was refused")
        }
        #expect(t.limit(after: .seconds(3600)) == .seconds(60))
    }

    @Test("A quick-restart penalty (the shorterLimit outcome) is banked even when refused: a retry loop stays hot")
    func retryLoop() {
        var t = ThermalModel(parameters: .init(refusalThreshold: 70))
        _ = t.beginRequested(at: .zero)
        t.fieldOn(at: .zero)
        t.fieldOff(at: .seconds(60))
        var now = Duration.seconds(60)
        var refusals = 0
        for _ in 0..<10 {
            now += .seconds(1)
            if t.beginRequested(at: now, penalty: 20) == .refused { refusals += 1 }
        }
        #expect(refusals == 10)
        #expect(t.heat(at: now) > 70)
    }

    @Test("Switched off, every limit is 60 s and nothing is refused")
    func disabled() {
        var t = ThermalModel.disabled
        for i in 0..<20 {
            #expect(t.beginRequested(at: .seconds(Int64(i * 60))) == .granted(timeLimit: .seconds(60)))
            t.fieldOn(at: .seconds(Int64(i * 60)))
            t.fieldOff(at: .seconds(Int64(i * 60 + 60)))
        }
        #expect(t.heat(at: .seconds(1200)) == 0)
    }
}

@Suite("Seeded random walk over 10,000 sessions")
struct RandomWalkTests {
    @Test(
        "Invariants hold: didBecomeActive first, nothing after didInvalidate, exactly one didInvalidate, one active session at a time"
    )
    func invariants() {
        struct Track {
            var first: ReaderSessionMachine.Effect?
            var invalidations = 0
            var afterEnd = 0
        }
        var tracks: [Int: Track] = [:]
        var active: Set<Int> = []
        var maxActive = 0
        var violations: [String] = []
        let report = ReaderSessionBenchmark.randomWalk(sessions: 10_000, seed: 42) { w in
            var t = tracks[w.session] ?? Track()
            let isCallback: Bool
            switch w.effect {
            case .didBecomeActive, .didDetectNDEFs, .didDetectTags, .didInvalidate: isCallback = true
            default: isCallback = false
            }
            if t.invalidations > 0 {
                if isCallback || w.effect == .startPolling { t.afterEnd += 1 }
            } else if isCallback && t.first == nil {
                t.first = w.effect
                if case .didInvalidate = w.effect {
                } else if w.effect != .didBecomeActive {
                    violations.append("session \(w.session) began with \(w.effect)")
                }
            }
            switch w.effect {
            case .didBecomeActive:
                active.insert(w.session)
                maxActive = max(maxActive, active.count)
            case .didInvalidate:
                t.invalidations += 1
                active.remove(w.session)
            default: break
            }
            tracks[w.session] = t
        }
        #expect(report.sessions == 10_000)
        #expect(tracks.count == 10_000)
        #expect(violations.isEmpty, "\(violations.prefix(3))")
        #expect(tracks.values.allSatisfy { $0.invalidations == 1 })
        #expect(tracks.values.allSatisfy { $0.afterEnd == 0 })
        #expect(maxActive == 1)
        // The walk reaches every ending.
        for code in [
            NFCReaderError.Code.readerSessionInvalidationErrorUserCanceled,
            .readerSessionInvalidationErrorSessionTimeout,
            .readerSessionInvalidationErrorSessionTerminatedUnexpectedly, .readerSessionInvalidationErrorSystemIsBusy,
            .readerSessionInvalidationErrorFirstNDEFTagRead,
        ] {
            #expect((report.endings[code] ?? 0) > 0, "no \(code.name)")
        }
    }

    @Test("The same seed gives the same walk")
    func deterministic() {
        var a = ReaderSessionBenchmark.randomWalk(sessions: 500, seed: 7)
        var b = ReaderSessionBenchmark.randomWalk(sessions: 500, seed: 7)
        a.wallTime = .zero
        b.wallTime = .zero
        #expect(a == b)
    }

    @Test("The input-rate benchmark feeds what it says")
    func benchmark() {
        let r = ReaderSessionBenchmark.inputsPerSecond(inputs: 9_000)
        #expect(r.inputs >= 9_000)
        #expect(r.perSecond > 0)
    }
}
