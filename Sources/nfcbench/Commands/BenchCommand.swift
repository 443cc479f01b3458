import NFCBenchFuzz
import NFCBenchKit
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
        options: [
            OptionSpec("inputs", .int(1...1_000_000_000), help: "machine inputs to time", default: .int(2_000_000)),
            OptionSpec("sessions", .int(1...10_000_000), help: "sessions in the random walk", default: .int(10_000)),
            OptionSpec("seed", .int(0...Int.max), value: "S", help: "the walk's seed", default: .int(0x4E46_4342)),
            OutputOptions.json("one JSON object"),
        ],
        discussion: """
            Build in release first: swift build -c release --product nfcbench, then
            .build/release/nfcbench bench session. Targets: ≥ 1,000,000 inputs/s and < 1 s
            for the 10,000-session walk.
            """,
        run: { o in
            let inputs = o.int("inputs")!
            let sessions = o.int("sessions")!
            let seed = UInt64(o.int("seed")!)
            let json = o.flag("json")
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
        options: [
            OptionSpec("seed", .int(0...Int.max), value: "S", help: "the PRNG seed", default: .int(1)),
            OptionSpec("count", .int(1...1_000_000_000), help: "messages to try", default: .int(1_000_000)),
        ],
        discussion: """
            Mutates valid messages (bit flips, inserts, deletes, length edits, truncations,
            splices), parses each strictly, and re-serializes and re-parses those that parse.
            Exit 1 when a round trip fails. Run it in a release build.
            """,
        run: { o in
            let seed = UInt64(o.int("seed")!)
            let count = o.int("count")!
            let report = runNDEFFuzz(seed: seed, count: count) { Output.err($0) }
            Output.out(report.description)
            return report.roundTripFailures == 0 ? 0 : 1
        })
}

extension BenchCommand {
    static let explore = Command(
        path: ["bench", "explore"],
        abstract: "Benchmark the conformance explorer: generated runs per second and per CPU-second",
        options: [
            ConformanceCommand.appOption("the reference app to explore"),
            OptionSpec("runs", .int(1...100_000_000), help: "random runs", default: .int(20_000)),
            OptionSpec("seed", .int(0...Int.max), value: "S", help: "the random phase's seed", default: .int(1)),
            OptionSpec(
                "depth", .int(0...6), value: "K", help: "the exhaustive phase's depth (0: random runs only)",
                default: .int(0)),
            OutputOptions.json("one JSON object"),
        ],
        discussion: """
            Runs `nfcbench conformance --explore` without printing its report and prints the
            rate: runs per second of real time, and runs per second of the process's CPU time
            (user + system, all threads: what one core sustains). Build in release first:
            swift build -c release --product nfcbench, then .build/release/nfcbench bench
            explore. Goal: at least 2,000 runs per core per second.
            """,
        run: { o in
            let appName = o.string("app")!
            let runs = o.int("runs")!
            let seed = UInt64(o.int("seed")!)
            let depth = o.int("depth")!
            let json = o.flag("json")
            let entry = ReferenceApps.named(appName)!
            let explorer = try ConformanceExplore.makeExplorer(seed: seed, runs: runs, depth: depth, budget: nil)
            let r = await explorer.explore(app: ReferenceAppFactory.make(entry.habits, design: entry.design))
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
