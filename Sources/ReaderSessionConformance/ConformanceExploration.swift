/// What an exploration found (``ConformanceExplorer/explore(app:)``).
public struct ConformanceExploration: Sendable {
    /// Which phase a run belonged to.
    public enum Phase: String, Sendable, Hashable {
        case exhaustive
        case random
    }

    /// One rule: how many runs checked it, how many broke it, and its smallest counterexample.
    public struct RuleReport: Sendable {
        public var rule: ConformanceRule
        /// Runs that checked the rule (every generated run checks every rule).
        public var runs: Int
        /// Runs that broke it.
        public var breaches: Int
        /// The first breach, shrunk; nil when none.
        public var counterexample: Counterexample?
    }

    /// A breach, shrunk.
    public struct Counterexample: Sendable {
        public var rule: ConformanceRule
        /// The shrunk scenario (named ``ConformanceExplorer/namePrefix`` + the rule), cut at
        /// the breach; write it with ``ConformanceScenario/fileText``.
        public var scenario: ConformanceScenario
        /// The shrunk moves (one per step of ``scenario``).
        public var moves: [ConformanceExplorer.Move]
        /// The moves of the generated run that first broke the rule.
        public var original: [ConformanceExplorer.Move]
        /// That run's number among the generated runs (1-based) and its phase.
        public var foundAtRun: Int
        public var phase: Phase
        /// Real time from the exploration's start to the end of that run.
        public var foundAfter: Duration
        /// Runs and real time the shrink took.
        public var shrinkRuns: Int
        public var shrinkTime: Duration
        /// The shrunk scenario's replay: its verdict (a breach of ``rule``) and its lines
        /// (each step, the app's sessions' trace records, each breach) in virtual time.
        public var result: ConformanceResult
        public var replay: [ConformanceReplayLine]
    }

    /// An inconclusive run: neither a breach nor a pass (the app used real time,
    /// a `Task {}` on the global executor, or a Scan brought no `begin()`; see ``ConformanceResult/notes``).
    public struct Inconclusive: Sendable {
        /// The generated scenario (not shrunk) and the harness's reasons.
        public var scenario: ConformanceScenario
        public var notes: [String]
        public var run: Int
    }

    public var seed: UInt64
    /// The exhaustive phase: its depth, the sequences it ran, the distinct states it
    /// reached (situations after a sequence's last move, merged), and whether it covered
    /// every sequence up to ``depth`` (false: the budget cut it).
    public var depth: Int
    public var exhaustiveSequences: Int
    public var exhaustiveStates: Int
    public var exhaustiveComplete: Bool
    /// Random runs.
    public var randomRuns: Int
    /// Generated runs: ``exhaustiveSequences`` + ``randomRuns``.
    public var runs: Int { exhaustiveSequences + randomRuns }
    /// Generated runs by verdict.
    public var passes: Int
    public var breachRuns: Int
    public var inconclusiveRuns: Int
    /// The first inconclusive run, if any.
    public var inconclusive: Inconclusive?
    /// Runs spent shrinking and replaying counterexamples.
    public var shrinkRuns: Int
    /// Real time of the whole exploration (shrinking included) and process CPU time
    /// (user + system, every thread) over it.
    public var elapsed: Duration
    public var cpuTime: Duration
    /// True when the budget ended the exploration before its runs.
    public var stoppedByBudget: Bool
    /// Every rule, in ``ConformanceRule`` order.
    public var rules: [RuleReport]

    /// The shrunk counterexamples, one per rule broken.
    public var counterexamples: [Counterexample] { rules.compactMap(\.counterexample) }

    /// True when every generated run passed: no breach and no inconclusive run.
    public var passed: Bool { breachRuns == 0 && inconclusiveRuns == 0 }

    /// Harness runs (generated, shrink and replay) per second of real time.
    public var runsPerSecond: Double {
        let s = Self.seconds(elapsed)
        return s > 0 ? Double(runs + shrinkRuns) / s : 0
    }

    /// Harness runs per second of CPU time: the rate one core sustains.
    public var runsPerCPUSecond: Double {
        let s = Self.seconds(cpuTime)
        return s > 0 ? Double(runs + shrinkRuns) / s : 0
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}

/// The exploration's running totals.
struct Exploration {
    let explorer: ConformanceExplorer
    let start = ContinuousClock.now
    let cpuStart = ProcessCPU.now()
    var exhaustiveSequences = 0
    var exhaustiveStates = 0
    var exhaustiveComplete = false
    var randomRuns = 0
    var passes = 0
    var breachRuns = 0
    var inconclusiveRuns = 0
    var inconclusive: ConformanceExploration.Inconclusive?
    var shrinkRuns = 0
    var shrinkTime = Duration.zero
    var outOfBudget = false
    var breaches: [ConformanceRule: Int] = [:]
    var counterexamples: [ConformanceRule: ConformanceExploration.Counterexample] = [:]

    init(explorer: ConformanceExplorer) { self.explorer = explorer }

    var runs: Int { exhaustiveSequences + randomRuns }

    /// True (and remembered) once the budget is spent; shrinking does not count against it.
    mutating func overBudget() -> Bool {
        if outOfBudget { return true }
        if let b = explorer.budget, ContinuousClock.now - start - shrinkTime >= b { outOfBudget = true }
        return outOfBudget
    }

    mutating func record(
        _ r: ConformanceResult, moves: [ConformanceExplorer.Move], phase: ConformanceExploration.Phase,
        app: @escaping ConformanceHarness.AppFactory
    ) async {
        switch r.verdict {
        case .pass: passes += 1
        case .inconclusive:
            inconclusiveRuns += 1
            if inconclusive == nil {
                inconclusive = .init(scenario: explorer.scenario(moves), notes: r.notes, run: runs)
            }
        case .breach:
            breachRuns += 1
            let found = ContinuousClock.now - start
            for rule in r.rulesBreached {
                breaches[rule, default: 0] += 1
                guard counterexamples[rule] == nil else { continue }
                let shrinkStart = ContinuousClock.now
                let shrunk = await explorer.shrink(moves, breaking: rule, app: app)
                let name = explorer.namePrefix + rule.rawValue
                let before = explorer.scenarioAndMoves(moves, name: name).moves.count
                var scenario = shrunk.scenario
                scenario.name = name
                scenario.description =
                    "Found by the conformance explorer (seed \(explorer.seed), \(phase.rawValue) run \(runs)): breaks \(rule.rawValue); shrunk from \(before) to \(shrunk.moves.count) steps."
                let replay = await explorer.harness.run(scenario, app: app, options: RunOptions(timeline: true))
                let took = ContinuousClock.now - shrinkStart
                shrinkRuns += shrunk.runs + 1
                shrinkTime += took
                counterexamples[rule] = .init(
                    rule: rule, scenario: scenario, moves: shrunk.moves, original: moves, foundAtRun: runs,
                    phase: phase, foundAfter: found, shrinkRuns: shrunk.runs + 1, shrinkTime: took,
                    result: replay.result, replay: replay.timeline)
            }
        }
    }

    func report() -> ConformanceExploration {
        ConformanceExploration(
            seed: explorer.seed, depth: explorer.depth, exhaustiveSequences: exhaustiveSequences,
            exhaustiveStates: exhaustiveStates, exhaustiveComplete: exhaustiveComplete && explorer.depth > 0,
            randomRuns: randomRuns, passes: passes, breachRuns: breachRuns, inconclusiveRuns: inconclusiveRuns,
            inconclusive: inconclusive, shrinkRuns: shrinkRuns, elapsed: ContinuousClock.now - start,
            cpuTime: ProcessCPU.now() - cpuStart, stoppedByBudget: outOfBudget,
            rules: ConformanceRule.allCases.map { rule in
                .init(
                    rule: rule, runs: runs, breaches: breaches[rule, default: 0], counterexample: counterexamples[rule])
            })
    }
}
