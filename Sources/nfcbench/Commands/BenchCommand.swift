import NFCTrace
import ReaderSession
import ReferenceApps

/// `nfcbench bench …`: benchmarks that print figures (run them in a release build).
enum BenchCommand {
    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    static let session = Command(
        path: ["bench", "session"],
        abstract: "Benchmark the session machine: inputs per second and a seeded random walk",
        usage: "bench session [--inputs N] [--sessions N] [--seed S] [--json]",
        help: """
            OPTIONS:
              --inputs N     machine inputs to time (default 2000000)
              --sessions N   sessions in the random walk (default 10000)
              --seed S       the walk's seed (default 1313227586)
              --json         one JSON object

            Build in release first: swift build -c release --product nfcbench, then
            .build/release/nfcbench bench session. Targets: ≥ 1,000,000 inputs/s and < 1 s
            for the 10,000-session walk.
            """,
        run: { args in
            let inputs = try args.int("inputs", in: 1...1_000_000_000) ?? 2_000_000
            let sessions = try args.int("sessions", in: 1...10_000_000) ?? 10_000
            let seed = try args.int("seed", in: 0...Int.max).map(UInt64.init) ?? 0x4E46_4342
            let json = args.flag("json")
            try args.finish()
            let rate = ReaderSessionBenchmark.inputsPerSecond(inputs: inputs)
            let walk = ReaderSessionBenchmark.randomWalk(sessions: sessions, seed: seed)
            if json {
                var endings = JSONObject()
                for (code, n) in walk.endings.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                    endings[String(code.rawValue)] = .int(Int64(n))
                }
                Output.out(
                    JSONObject([
                        "inputs": .int(Int64(rate.inputs)), "inputs_seconds": .double(seconds(rate.elapsed)),
                        "inputs_per_second": .double(rate.perSecond.rounded()),
                        "walk_sessions": .int(Int64(walk.sessions)),
                        "walk_inputs": .int(Int64(walk.inputs)), "walk_seconds": .double(seconds(walk.wallTime)),
                        "walk_seed": .int(Int64(seed)), "walk_endings": .object(endings),
                    ]).serialized)
            } else {
                Output.out(
                    "machine inputs: \(Figures.grouped(rate.inputs)) in \(Figures.duration(rate.elapsed)): "
                        + "\(Figures.rounded(rate.perSecond)) inputs/s")
                Output.out(
                    "random walk:    \(Figures.count(walk.sessions, "session")), \(Figures.count(walk.inputs, "input")), "
                        + "seed \(seed), \(Figures.duration(walk.wallTime))")
                Output.out(
                    "endings:        "
                        + walk.endings.sorted { $0.key.rawValue < $1.key.rawValue }.map {
                            "\($0.key.rawValue)×\(Figures.grouped($0.value))"
                        }.joined(separator: " "))
            }
            return 0
        })

    static let ndefFuzz = Command(
        path: ["bench", "ndef-fuzz"],
        abstract: "Seeded mutation fuzz of the NDEF parser (no crash, round trips hold)",
        usage: "bench ndef-fuzz [--seed S] [--count N]",
        help: """
            OPTIONS:
              --seed S    the PRNG seed (default 1)
              --count N   messages to try (default 1000000)

            Mutates valid messages (bit flips, inserts, deletes, length edits, truncations,
            splices), parses each strictly, and re-serializes and re-parses those that parse.
            Exit 1 when a round trip fails. Run it in a release build.
            """,
        run: { args in
            let seed = try args.int("seed", in: 0...Int.max).map(UInt64.init) ?? 1
            let count = try args.int("count", in: 1...1_000_000_000) ?? 1_000_000
            try args.finish()
            let report = runNDEFFuzz(seed: seed, count: count) { Output.err($0) }
            Output.out(report.description)
            return report.roundTripFailures == 0 ? 0 : 1
        })
}

extension BenchCommand {
    static let explore = Command(
        path: ["bench", "explore"],
        abstract: "Benchmark the conformance explorer: generated runs per second and per CPU-second",
        usage: "bench explore [--app NAME] [--runs N] [--seed S] [--depth K] [--json]",
        help: """
            OPTIONS:
              --app NAME   the reference app to explore (default reference)
              --runs N     random runs (default 20000)
              --seed S     the random phase's seed (default 1)
              --depth K    the exhaustive phase's depth (default 0: random runs only)
              --json       one JSON object

            Runs `nfcbench conformance --explore` without printing its report and prints the
            rate: runs per second of real time, and runs per second of the process's CPU time
            (user + system, all threads: what one core sustains). Build in release first:
            swift build -c release --product nfcbench, then .build/release/nfcbench bench
            explore. Goal: at least 2,000 runs per core per second.
            """,
        run: { args in
            let appName = try args.option("app") ?? "reference"
            let runs = try args.int("runs", in: 1...100_000_000) ?? 20_000
            let seed = try args.int("seed", in: 0...Int.max).map(UInt64.init) ?? 1
            let depth = try args.int("depth", in: 0...6) ?? 0
            let json = args.flag("json")
            try args.finish()
            guard let entry = ReferenceApps.named(appName) else {
                throw CLIError.usage(
                    "--app takes one of \(ReferenceApps.all.map(\.name).joined(separator: ", ")), not '\(appName)'")
            }
            let explorer = try ConformanceExplore.makeExplorer(seed: seed, runs: runs, depth: depth, budget: nil)
            let r = await explorer.explore(app: ReferenceAppFactory.make(entry.habits))
            let total = r.runs + r.shrinkRuns
            if json {
                Output.out(
                    JSONObject([
                        "app": .string(appName), "seed": .int(Int64(seed)), "depth": .int(Int64(depth)),
                        "runs": .int(Int64(total)), "generated_runs": .int(Int64(r.runs)),
                        "pass": .int(Int64(r.passes)), "breach": .int(Int64(r.breachRuns)),
                        "inconclusive": .int(Int64(r.inconclusiveRuns)), "wall_seconds": .double(seconds(r.elapsed)),
                        "cpu_seconds": .double(seconds(r.cpuTime)),
                        "runs_per_second": .double(r.runsPerSecond.rounded()),
                        "runs_per_cpu_second": .double(r.runsPerCPUSecond.rounded()),
                    ]).serialized)
            } else {
                Output.out(
                    "explorer: app '\(appName)', \(total) runs (\(r.runs) generated, seed \(seed), depth \(depth); \(r.passes) pass, \(r.breachRuns) breach, \(r.inconclusiveRuns) inconclusive)"
                )
                Output.out(
                    "wall:     \(String(format: "%.3f", seconds(r.elapsed))) s = \(Int(r.runsPerSecond.rounded())) runs/s"
                )
                Output.out(
                    "CPU:      \(String(format: "%.3f", seconds(r.cpuTime))) s = \(Int(r.runsPerCPUSecond.rounded())) runs per CPU-second (goal: 2000 per core)"
                )
            }
            return 0
        })
}

extension JSONObject {
    init(_ pairs: KeyValuePairs<String, JSONValue>) {
        self.init()
        for (k, v) in pairs { self[k] = v }
    }
}
