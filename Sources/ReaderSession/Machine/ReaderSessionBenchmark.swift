/// Measures the pure machine (for `nfcbench bench session`) and drives the seeded random
/// walk the tests check invariants on.
public enum ReaderSessionBenchmark {
    /// One delegate-level or runtime effect seen in a walk, with the session's index.
    public struct WalkEffect: Sendable, Hashable {
        public let session: Int
        public let effect: ReaderSessionMachine.Effect
    }

    /// What a walk did.
    public struct WalkReport: Sendable, Hashable {
        /// Sessions created and begun.
        public var sessions = 0
        /// Machine inputs fed.
        public var inputs = 0
        /// Endings by code.
        public var endings: [NFCReaderError.Code: Int] = [:]
        /// Wall time of the walk.
        public var wallTime: Duration = .zero
    }

    /// Machine inputs per second over `inputs` inputs of a fixed realistic sequence
    /// (begin, detect, read, deliver, alert, restart, operation, end).
    public static func inputsPerSecond(inputs: Int = 2_000_000) -> (inputs: Int, elapsed: Duration, perSecond: Double) {
        let clock = ContinuousClock()
        var fed = 0
        var sink = 0
        let start = clock.now
        var round: UInt64 = 0
        while fed < inputs {
            round &+= 1
            let t = Duration.seconds(Int64(round))
            var m = ReaderSessionMachine(kind: round & 1 == 0 ? .ndefReadWrite : .ndef(invalidateAfterFirstRead: false))
            let id = DetectedTargetID(round)
            sink &+= m.begin(at: t, admission: .granted(timeLimit: .seconds(60))).count
            sink &+= m.targetsDetected([id]).count
            sink &+= m.ndefReadFinished(target: id, outcome: .message(Self.sampleMessage)).count
            sink &+= m.alertMessageChanged("Tag read").count
            sink &+= m.restartPolling().count
            sink &+= m.tagOperationRequested(TagOperationID(round), on: TagHandle(target: id, generation: 1)).count
            sink &+= m.targetLost(id).count
            sink &+= m.timeLimitReached(at: t + .seconds(30)).count
            sink &+= m.invalidate().count
            fed += 9
        }
        let elapsed = clock.now - start
        precondition(sink > 0)
        let s = ThermalModel.seconds(elapsed)
        return (fed, elapsed, s > 0 ? Double(fed) / s : .infinity)
    }

    /// A seeded random walk over `sessions` sessions of all kinds sharing one reader and one
    /// thermal model in virtual time: random begins (busy when one is active), Done,
    /// invalidate, backgrounding, timeouts, detections, removals, reads, restarts,
    /// operations. `observe` sees every effect (the tests check invariants there).
    public static func randomWalk(
        sessions: Int = 10_000, seed: UInt64 = 0x4E46_4342,
        thermal: ThermalModel = ThermalModel(),
        observe: ((WalkEffect) -> Void)? = nil
    ) -> WalkReport {
        let clock = ContinuousClock()
        let start = clock.now
        var rng = SplitMix64(seed: seed)
        var report = WalkReport()
        var thermal = thermal
        var now = Duration.zero
        var live: [(index: Int, machine: ReaderSessionMachine)] = []
        var activeIndex: Int? = nil
        var nextTarget: UInt64 = 0
        var nextOp: UInt64 = 0
        let messages = [Self.sampleMessage, NDEFMessageBytes([0xD0, 0x00, 0x00]), NDEFMessageBytes([0x91, 0x01])]

        func feed(_ slot: Int, _ effects: [ReaderSessionMachine.Effect]) {
            report.inputs += 1
            let idx = live[slot].index
            for e in effects {
                observe?(WalkEffect(session: idx, effect: e))
                switch e {
                case .didBecomeActive: activeIndex = idx
                case .releaseReader:
                    thermal.fieldOff(at: now)
                    if activeIndex == idx { activeIndex = nil }
                case .didInvalidate(let code, _): report.endings[code, default: 0] += 1
                default: break
                }
            }
        }

        while report.sessions < sessions || !live.isEmpty {
            now += .milliseconds(Int64(rng.next() % 3_000))
            let roll = rng.next() % 100
            if live.isEmpty || (roll < 12 && live.count < 3 && report.sessions < sessions) {
                let kinds: [ReaderSessionKind] = [
                    .ndef(invalidateAfterFirstRead: true), .ndef(invalidateAfterFirstRead: false),
                    .ndefReadWrite, .tag(.iso14443),
                ]
                guard report.sessions < sessions else { break }
                live.append((report.sessions, ReaderSessionMachine(kind: kinds[Int(rng.next() % 4)])))
                report.sessions += 1
                let slot = live.count - 1
                let admission: SessionAdmission
                if activeIndex != nil {
                    admission = .anotherSessionActive
                } else if case .granted(let l) = thermal.beginRequested(at: now) {
                    admission = .granted(timeLimit: l)
                    thermal.fieldOn(at: now)
                } else {
                    admission = .thermallyThrottled
                    now += .seconds(Int64(60 + rng.next() % 240))  // the user waits before asking again
                }
                feed(slot, live[slot].machine.begin(at: now, admission: admission))
            } else {
                let slot = Int(rng.next() % UInt64(live.count))
                var m = live[slot].machine
                let effects: [ReaderSessionMachine.Effect]
                switch rng.next() % 16 {
                case 0: effects = m.userCanceled()
                case 1: effects = m.invalidate()
                case 2: effects = m.invalidate(errorMessage: "Try again")
                case 3: effects = m.backgrounded()
                case 4:
                    now += .milliseconds(Int64(rng.next() % 70_000))
                    effects = m.timeLimitReached(at: now)
                case 5, 6:
                    nextTarget += 1
                    let n = 1 + Int(rng.next() % 2)
                    effects = m.targetsDetected((0..<n).map { DetectedTargetID(nextTarget * 4 + UInt64($0)) })
                case 7:
                    effects = m.targetLost(DetectedTargetID(nextTarget * 4))
                case 8, 9:
                    let outcomes: [NDEFReadOutcome] = [
                        .message(messages[Int(rng.next() % 3)]), .empty, .notNDEF,
                        .failed(.readerTransceiveErrorTagConnectionLost),
                    ]
                    effects = m.ndefReadFinished(
                        target: DetectedTargetID(nextTarget * 4), outcome: outcomes[Int(rng.next() % 4)])
                case 10: effects = m.restartPolling()
                case 11:
                    nextOp += 1
                    effects = m.tagOperationRequested(
                        TagOperationID(nextOp),
                        on: TagHandle(target: DetectedTargetID(nextTarget * 4), generation: UInt32(rng.next() % 2)))
                case 12:
                    let results: [TagOperationResult] = [
                        .success, .emptyNDEFMessage, .failed(.readerTransceiveErrorTagConnectionLost),
                    ]
                    effects = m.tagOperationFinished(
                        TagOperationID(nextOp), on: TagHandle(target: DetectedTargetID(nextTarget * 4), generation: 0),
                        result: results[Int(rng.next() % 3)])
                case 13: effects = m.alertMessageChanged("Tag \(rng.next() % 5) of 5 read")
                case 14: effects = m.begin(at: now, admission: .granted(timeLimit: .seconds(60)))
                default:
                    now += .milliseconds(Int64(rng.next() % 4_000))
                    effects = []
                }
                live[slot].machine = m
                feed(slot, effects)
            }
            live.removeAll { if case .invalidated = $0.machine.state { true } else { false } }
        }
        report.wallTime = clock.now - start
        return report
    }

    static let sampleMessage = NDEFMessageBytes([0xD1, 0x01, 0x0C, 0x55, 0x04] + Array("example.com".utf8))
}
