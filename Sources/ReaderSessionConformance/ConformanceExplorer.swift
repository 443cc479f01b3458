public import NFCTags
import ReaderSession

/// Searches the ways a session can end for a breach of a rule, and shrinks each breach to
/// the smallest scenario that still shows it: property-based testing (QuickCheck,
/// Hypothesis) and a bounded model checker, for an app's Core NFC code.
///
/// The explorer generates scenarios from an ``Alphabet`` of moves — the user's Scan (four
/// kinds), Done, the background and foreground states, tags in and out (each kind of
/// shipped tag file), another app's session, the system's 202, the busy policy, heat for
/// the thermal model — with timings around the boundaries that matter (the 60 s limit, the
/// 2 s user-action window, the 3 s quick-restart window, mid-exchange), and runs each on a
/// fresh app through ``ConformanceHarness``, which checks every rule on every run
/// (``ConformanceRule``: the app's duties and Core NFC's promise of one
/// `didInvalidateWithError`, last).
///
/// 1. **Exhaustive phase**: every sequence of up to ``depth`` moves from the alphabet's
///    actions and ``Alphabet/exhaustiveTimings``, breadth first. Two sequences that leave
///    the run in the same situation (the judging's state, timers due relative to now, the
///    app's foreground state, the tags in the field, the busy policy, the thermal model's
///    next limit) are one state, and only the first is extended. That situation is what
///    Core NFC and the user showed the app; an app that keeps its own history (counting
///    timeouts, say) can hide a breach from this phase, which the random phase can still
///    reach.
/// 2. **Random phase**: ``runs`` sequences of 1 to ``maximumSteps`` moves, drawn with a
///    SplitMix64 generator from ``seed``: the same seed gives the same runs on every machine.
///
/// Each generated scenario runs for its moves' time plus ``tail`` (65 s: past the time
/// limit and the quick-restart window of anything the last move began). A run whose verdict
/// is **inconclusive** (the app used real time, a `Task {}` on the global executor, or a Scan
/// brought no `begin()`) is neither a breach nor a pass: it is counted apart, its first example kept
/// (``ConformanceExploration/inconclusive``), never shrunk, and makes ``ConformanceExploration/passed``
/// false. The first breach of each rule is shrunk at once (fewer moves, earlier timings,
/// simpler tags and Scans, then the scenario cut at the breach) to a scenario that breaks
/// the same rule and from which no single move can be removed; it is written with
/// ``ConformanceScenario/fileText`` and replays with `nfcbench conformance --suite DIR`.
///
/// Runs are sequential (the harness installs each run's system as
/// `NFCReaderSystem.current`); each takes well under a millisecond in a release build for
/// an app like the reference apps (`nfcbench bench explore` prints the rate).
public struct ConformanceExplorer: Sendable {
    /// The random phase's seed.
    public var seed: UInt64
    /// Random runs after the exhaustive phase.
    public var runs: Int
    /// The exhaustive phase's depth (moves per sequence); 0 skips the phase.
    public var depth: Int
    /// Real time for the two phases together; nil: no limit (``runs`` and ``depth`` decide).
    /// Shrinking a breach is not counted against it (``shrinkLimit`` bounds it).
    public var budget: Duration?
    /// The longest random sequence, in moves (at least 1).
    public var maximumSteps: Int
    /// Virtual time each scenario runs on after its last move.
    public var tail: Duration
    /// The most runs one shrink may take.
    public var shrinkLimit: Int
    /// The harness that runs and judges each scenario.
    public var harness: ConformanceHarness
    /// The moves.
    public var alphabet: Alphabet
    /// Name prefix of the saved counterexamples (`<prefix><rule>`).
    public var namePrefix: String
    /// The tag files by reference (every ``TagKind/references``).
    public let tags: [String: TagFile]

    /// An explorer over tag files already loaded.
    /// - Parameters:
    ///   - tags: tag files by reference; must hold every ``TagKind/references`` name.
    ///   - seed: the random phase's seed (default 1).
    ///   - runs: random runs (default 10,000).
    ///   - depth: exhaustive depth (default 2).
    ///   - budget: real time for both phases (default none).
    ///   - maximumSteps: the longest random sequence, in moves (default 8).
    ///   - tail: virtual time each scenario runs on after its last move (default 65 s).
    ///   - shrinkLimit: the most runs one shrink may take (default 3,000).
    ///   - harness: the harness that runs and judges each scenario.
    ///   - alphabet: the moves (default ``Alphabet/standard``).
    ///   - namePrefix: name prefix of the saved counterexamples (default `explored-`).
    /// - Throws: ``/NFCTags/DataFileError`` (`notFound`) naming the first missing reference.
    public init(
        tags: [String: TagFile], seed: UInt64 = 1, runs: Int = 10_000, depth: Int = 2, budget: Duration? = nil,
        maximumSteps: Int = 8, tail: Duration = .seconds(65), shrinkLimit: Int = 3000,
        harness: ConformanceHarness = ConformanceHarness(), alphabet: Alphabet = .standard,
        namePrefix: String = "explored-"
    ) throws(DataFileError) {
        for k in TagKind.allCases {
            for r in k.references where tags[r] == nil {
                throw DataFileError(.notFound, "no tag file '\(r)' for the explorer's \(k.rawValue) tags")
            }
        }
        self.tags = tags
        self.seed = seed
        self.runs = max(0, runs)
        self.depth = max(0, depth)
        self.budget = budget
        self.maximumSteps = max(1, maximumSteps)
        self.tail = tail
        self.shrinkLimit = max(0, shrinkLimit)
        self.harness = harness
        self.alphabet = alphabet
        self.namePrefix = namePrefix
    }

    /// An explorer whose tag files are looked up in `tagDirectories` (in order; names with
    /// or without `.json`), e.g. nfcbench's `hardware/conformance/tags` and `hardware/tags`.
    /// - Throws: ``/NFCTags/DataFileError``: `notFound` for a tag no folder holds, or the tag file's own error.
    public init(
        tagDirectories: [String], seed: UInt64 = 1, runs: Int = 10_000, depth: Int = 2, budget: Duration? = nil,
        harness: ConformanceHarness = ConformanceHarness()
    ) throws(DataFileError) {
        var tags: [String: TagFile] = [:]
        for r in TagKind.allCases.flatMap(\.references) {
            tags[r] = try ConformanceScenario.loadTagFile(r, in: tagDirectories)
        }
        try self.init(tags: tags, seed: seed, runs: runs, depth: depth, budget: budget, harness: harness)
    }

    // MARK: Exploring

    /// Explores `app` (a fresh app per run): the exhaustive phase, then the random phase,
    /// shrinking the first breach of each rule as it is found.
    public func explore(app: @escaping ConformanceHarness.AppFactory) async -> ConformanceExploration {
        var state = Exploration(explorer: self)
        if depth > 0 { await exhaustive(app, &state) }
        if !state.outOfBudget { await random(app, &state) }
        return state.report()
    }

    private func exhaustive(_ app: @escaping ConformanceHarness.AppFactory, _ state: inout Exploration) async {
        var frontier: [(moves: [Move], field: ScriptField)] = [([], ScriptField())]
        var seen: Set<StateKey> = []
        state.exhaustiveComplete = true
        for _ in 1...depth {
            var next: [(moves: [Move], field: ScriptField)] = []
            for prefix in frontier {
                for action in alphabet.actions where prefix.field.allows(action) {
                    for timing in alphabet.exhaustiveTimings {
                        if state.overBudget() {
                            state.exhaustiveComplete = false
                            state.exhaustiveStates = seen.count
                            return
                        }
                        let moves = prefix.moves + [Move(action, timing)]
                        var field = prefix.field
                        _ = field.apply(action)
                        let out = await run(moves, app, situation: true)
                        state.exhaustiveSequences += 1
                        await state.record(out.result, moves: moves, phase: .exhaustive, app: app)
                        guard out.result.verdict != .breach, let s = out.situation else { continue }
                        if seen.insert(StateKey(situation: s, field: field)).inserted {
                            next.append((moves, field))
                        }
                    }
                }
            }
            frontier = next
            if frontier.isEmpty { break }
        }
        state.exhaustiveStates = seen.count
    }

    private func random(_ app: @escaping ConformanceHarness.AppFactory, _ state: inout Exploration) async {
        var rng = SplitMix64(seed: seed)
        for _ in 0..<runs {
            if state.overBudget() { return }
            let moves = randomMoves(&rng)
            let out = await run(moves, app, situation: false)
            state.randomRuns += 1
            await state.record(out.result, moves: moves, phase: .random, app: app)
        }
    }

    /// One random sequence: a length, then for each move an action allowed by the field and
    /// a timing, each uniform.
    func randomMoves(_ rng: inout SplitMix64) -> [Move] {
        let length = 1 + rng.below(maximumSteps)
        var field = ScriptField()
        var moves: [Move] = []
        for _ in 0..<length {
            let allowed = alphabet.actions.filter(field.allows)
            let action = allowed[rng.below(allowed.count)]
            let timing = alphabet.timings[rng.below(alphabet.timings.count)]
            _ = field.apply(action)
            moves.append(Move(action, timing))
        }
        return moves
    }

    // MARK: Scenarios

    /// The scenario `moves` make (moves the field does not allow at their place are left
    /// out): steps at absolute times (`at_ms`) until the first `after_end_ms`, then
    /// relative ones (`after_ms`); duration: the moves' time plus ``tail``, counting 125 s
    /// for each wait for a session's end (the longest a session that waited in the busy
    /// queue can run).
    public func scenario(_ moves: [Move], name: String = "explored", description: String = "")
        -> ConformanceScenario
    {
        scenarioAndMoves(moves, name: name, description: description).scenario
    }

    func scenarioAndMoves(_ moves: [Move], name: String, description: String = "")
        -> (scenario: ConformanceScenario, moves: [Move])
    {
        var field = ScriptField()
        var steps: [ConformanceScenario.Step] = []
        var kept: [Move] = []
        var t = Duration.zero
        var absolute = true
        var bound = Duration.zero
        var used: [String: TagFile] = [:]
        for m in moves where field.allows(m.action) {
            let action = field.apply(m.action)
            if case .present(let list) = action { for p in list { used[p.tag] = tags[p.tag] } }
            let when: ConformanceScenario.When
            switch m.timing {
            case .after(let d):
                t += d
                bound += d
                when = absolute ? .at(t) : .afterPrevious(d)
            case .afterEnd(let d):
                absolute = false
                bound += d + Self.endWait
                when = .afterSessionEnd(d)
            }
            steps.append(ConformanceScenario.Step(when: when, action: action))
            kept.append(m)
        }
        let s = ConformanceScenario(
            name: name, description: description, duration: bound + tail, steps: steps, tags: used)
        return (s, kept)
    }

    /// The longest wait for a session's end counted in a scenario's duration: a session
    /// queued behind another (60 s) then active for its own limit (60 s), and a margin.
    static let endWait: Duration = .seconds(125)

    func run(_ moves: [Move], _ app: @escaping ConformanceHarness.AppFactory, situation: Bool, timeline: Bool = false)
        async -> RunOutput
    {
        let s = scenarioAndMoves(moves, name: "explored").scenario
        return await harness.run(
            s, app: app,
            options: RunOptions(situationAfterStep: situation ? s.steps.count - 1 : nil, timeline: timeline))
    }

    // MARK: Shrinking

    /// Shrinks `moves`, which break `rule` when run against `app`: fewer moves (chunks, then
    /// one at a time), earlier timings and simpler actions (earlier in the ``alphabet``'s
    /// lists), until nothing more can go and no single move can be removed; then the
    /// scenario is cut at the breach (its duration ends at the first breach of `rule`).
    /// Stops after ``shrinkLimit`` runs with the smallest found so far.
    public func shrink(_ moves: [Move], breaking rule: ConformanceRule, app: @escaping ConformanceHarness.AppFactory)
        async -> Shrunk
    {
        var runsUsed = 0
        func breaks(_ candidate: [Move]) async -> Bool {
            runsUsed += 1
            let r = await run(candidate, app, situation: false).result
            return r.verdict == .breach && r.rulesBreached.contains(rule)
        }
        var best = scenarioAndMoves(moves, name: "explored").moves
        var changed = true
        while changed && runsUsed < shrinkLimit {
            changed = false
            // Fewer moves: chunks of half, a quarter, ... one.
            var size = max(1, best.count / 2)
            while size >= 1 && runsUsed < shrinkLimit {
                var start = 0
                var removedAny = false
                while start < best.count && runsUsed < shrinkLimit {
                    var candidate = best
                    candidate.removeSubrange(start..<min(best.count, start + size))
                    let normal = scenarioAndMoves(candidate, name: "explored").moves
                    if !normal.isEmpty, normal != best, await breaks(normal) {
                        best = normal
                        removedAny = true
                        changed = true
                    } else {
                        start += size
                    }
                }
                if size == 1 && !removedAny { break }
                if !removedAny { size /= 2 }
            }
            // Earlier timings and simpler actions, one move at a time.
            var i = 0
            while i < best.count && runsUsed < shrinkLimit {
                for candidate in simpler(best, at: i) where runsUsed < shrinkLimit {
                    let normal = scenarioAndMoves(candidate, name: "explored").moves
                    if normal != best, await breaks(normal) {
                        best = normal
                        changed = true
                        break
                    }
                }
                i += 1
            }
        }
        // Cut at the breach: the duration ends at the rule's first breach.
        var scenario = scenarioAndMoves(best, name: "explored").scenario
        let replay = await harness.run(scenario, app: app, options: RunOptions(timeline: false)).result
        runsUsed += 1
        if let first = replay.breaches.first(where: { $0.rule == rule })?.time, first < scenario.duration {
            var cut = scenario
            cut.duration = max(first, Self.lastAbsoluteStep(cut), .microseconds(1))
            let r = await harness.run(cut, app: app, options: RunOptions()).result
            runsUsed += 1
            if r.verdict == .breach && r.rulesBreached.contains(rule) { scenario = cut }
        }
        return Shrunk(moves: best, scenario: scenario, runs: runsUsed)
    }

    /// A shrink's outcome.
    public struct Shrunk: Sendable {
        /// The smallest moves found.
        public var moves: [Move]
        /// Their scenario, cut at the breach (named `explored`; see ``ConformanceExploration/Counterexample``).
        public var scenario: ConformanceScenario
        /// Runs the shrink took.
        public var runs: Int
    }

    /// The candidates simpler than `moves[i]`: an earlier timing, then an earlier action of
    /// the same family (Scan kinds, tag kinds, other apps' lengths), simplest first.
    func simpler(_ moves: [Move], at i: Int) -> [[Move]] {
        let m = moves[i]
        var out: [[Move]] = []
        func with(_ n: Move) -> [Move] {
            var c = moves
            c[i] = n
            return c
        }
        if let ti = alphabet.timings.firstIndex(of: m.timing) {
            for t in alphabet.timings[..<ti] { out.append(with(Move(m.action, t))) }
        } else if m.timing != .after(.zero) {
            out.append(with(Move(m.action, .after(.zero))))
        }
        let family = alphabet.actions.filter { Self.sameFamily($0, m.action) }
        if let ai = family.firstIndex(of: m.action) {
            for a in family[..<ai] {
                var c = with(Move(a, m.timing))
                // A simpler tag: its later remove follows it.
                if case .present(let old) = m.action, case .present(let new) = a,
                    let r = c[(i + 1)...].firstIndex(where: { $0.action == .remove(old) })
                {
                    c[r].action = .remove(new)
                }
                out.append(c)
            }
        }
        return out
    }

    private static func sameFamily(_ a: Move.Action, _ b: Move.Action) -> Bool {
        switch (a, b) {
        case (.scan, .scan), (.present, .present), (.otherAppSession, .otherAppSession), (.heat, .heat): true
        default: false
        }
    }

    private static func lastAbsoluteStep(_ s: ConformanceScenario) -> Duration {
        s.steps.compactMap { if case .at(let t) = $0.when { t } else { nil } }.max() ?? .zero
    }
}

/// What makes two exhaustive prefixes one state: the run's situation and the script's field.
private struct StateKey: Hashable {
    var situation: RunSituation
    var field: ScriptField
}
