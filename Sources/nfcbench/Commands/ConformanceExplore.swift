import Foundation
import NFCFiles
import NFCTrace
import ReaderSession
import ReaderSessionConformance
import ReferenceApps

/// `nfcbench conformance --explore`: the conformance explorer against a reference app.
enum ConformanceExplore {
    static func run(_ o: ParsedOptions, app appName: String, json: Bool) async throws(CLIError) -> Int32 {
        let seed = UInt64(o.int("seed")!)
        let runs = o.int("runs")!
        let depth = o.int("depth")!
        let budget = o.duration("budget")
        let save = o.string("save")
        let entry = ReferenceApps.named(appName)!
        var explorer = try makeExplorer(seed: seed, runs: runs, depth: depth, budget: budget)
        explorer.namePrefix = "explored-\(appName)-"
        let report = await explorer.explore(app: ReferenceAppFactory.make(entry.habits, design: entry.design))
        var saved: [ConformanceRule: String] = [:]
        if let save, !report.counterexamples.isEmpty {
            do throws(FileError) {
                try Folder.make(save, mode: 0o755)
                for c in report.counterexamples {
                    let path = FilePath.join(save, c.scenario.name + ".json")
                    try c.scenario.write(to: path)
                    saved[c.rule] = path
                }
            } catch {
                throw CLIError(FileError(error.kind, path: "--save \(save)", error.description))
            }
        }
        if json {
            for line in jsonLines(report, app: appName, budget: budget, saved: saved) { Output.out(line.serialized) }
        } else {
            Output.out(text(report, app: appName, budget: budget, saved: saved))
        }
        return report.passed ? 0 : 1
    }

    /// An explorer over the shipped tag files (`hardware/conformance/tags`, `hardware/tags`).
    static func makeExplorer(seed: UInt64, runs: Int, depth: Int, budget: Duration?) throws(CLIError)
        -> ConformanceExplorer
    {
        guard let hw = DataLocation.hardwareDirectory() else {
            throw CLIError.noInput("no hardware folder beside the executable (set NFCBENCH_DATA)")
        }
        do {
            return try ConformanceExplorer(
                tagDirectories: [hw + "/conformance/tags", hw + "/tags"], seed: seed, runs: runs, depth: depth,
                budget: budget, harness: ConformanceCommand.harness)
        } catch {
            throw CLIError(error)
        }
    }

    // MARK: Text

    static func text(_ r: ConformanceExploration, app: String, budget: Duration?, saved: [ConformanceRule: String])
        -> String
    {
        var s = "nfcbench conformance --explore: app '\(app)', seed \(r.seed), depth \(r.depth)"
        if let budget { s += ", budget \(seconds(budget)) s" }
        s += "\n\n"
        let width = (ConformanceRule.allCases.map(\.rawValue.count).max() ?? 30) + 2
        s += "RULE".padding(toLength: width, withPad: " ", startingAt: 0) + "    RUNS  BREACHES  SMALLEST\n"
        for rule in r.rules {
            s += rule.rule.rawValue.padding(toLength: width, withPad: " ", startingAt: 0)
            s += String(rule.runs).leftPadded(8) + String(rule.breaches).leftPadded(10) + "  "
            s += rule.counterexample.map { "\($0.moves.count) step\($0.moves.count == 1 ? "" : "s")" } ?? "-"
            s += "\n"
        }
        for c in r.counterexamples {
            s += "\nCOUNTEREXAMPLE \(c.rule.rawValue): \(c.rule.summary)\n"
            s += "  found at \(c.phase.rawValue) run \(c.foundAtRun) after \(seconds(c.foundAfter)) s"
            s += " (\(c.original.count) steps); shrunk to \(c.moves.count) in \(c.shrinkRuns) runs,"
            s += " \(seconds(c.shrinkTime)) s\n"
            s +=
                "  scenario \(c.scenario.name), duration \(ConformanceScenario.milliseconds(c.scenario.duration)) ms:\n"
            for i in c.scenario.steps.indices { s += "    \(c.scenario.stepJSON(i))\n" }
            if let path = saved[c.rule] {
                s += "  saved: \(path) (replay: nfcbench conformance --suite \(dirname(path)) --app \(app))\n"
            }
            s += "  replay (verdict \(c.result.verdict.rawValue)):\n"
            for line in c.replay { s += "    " + replayText(line) + "\n" }
        }
        if let i = r.inconclusive {
            s += "\nINCONCLUSIVE (\(r.inconclusiveRuns) runs; neither breach nor pass), first at run \(i.run):\n"
            for step in i.scenario.steps.indices { s += "    \(i.scenario.stepJSON(step))\n" }
            for n in i.notes { s += "  note: \(n)\n" }
        }
        s += "\nexhaustive: depth \(r.depth), \(r.exhaustiveSequences) sequences, \(r.exhaustiveStates) states"
        s += r.depth == 0 ? " (skipped)" : (r.exhaustiveComplete ? " (complete)" : " (cut by the budget)")
        s += "; random: \(r.randomRuns) runs\n"
        s += "\(r.runs) runs: \(r.passes) pass, \(r.breachRuns) breach, \(r.inconclusiveRuns) inconclusive"
        s += "; \(r.shrinkRuns) shrink and replay runs"
        if r.stoppedByBudget { s += "; stopped by the budget" }
        s += "\nwall time \(seconds(r.elapsed)) s, \(Int(r.runsPerSecond.rounded())) runs/s"
        s += " (\(Int(r.runsPerCPUSecond.rounded())) per CPU-second)"
        return s
    }

    /// One replay line: `  60.000 s  session 2  begin mode=ndef`.
    static func replayText(_ line: ConformanceReplayLine) -> String {
        let t = (seconds(line.time) + " s").leftPadded(10)
        switch line.entry {
        case .step(let i, let text): return "\(t)  step \(i + 1)    \(text)"
        case .breach(let b): return "\(t)  BREACH    \(b.rule.rawValue): \(b.what)"
        case .record(let rec):
            let o = rec.json()
            var fields: [String] = []
            for (k, v) in o.entries where !["t_us", "event", "session"].contains(k) {
                switch v {
                case .string(let x): fields.append("\(k)=\(x.count > 60 ? String(x.prefix(57)) + "..." : x)")
                case .int(let x): fields.append("\(k)=\(x)")
                case .double(let x): fields.append("\(k)=\(x)")
                case .bool(let x): fields.append("\(k)=\(x)")
                default: continue
                }
            }
            let event = o["event"]?.stringValue ?? "?"
            return "\(t)  session \(rec.session)  \(([event] + fields).joined(separator: " "))"
        }
    }

    // MARK: JSON Lines

    static func jsonLines(
        _ r: ConformanceExploration, app: String, budget: Duration?, saved: [ConformanceRule: String]
    ) -> [JSONObject] {
        var out: [JSONObject] = []
        for rule in r.rules {
            var o: JSONObject = [
                "rule": .string(rule.rule.rawValue), "runs": .int(Int64(rule.runs)),
                "breaches": .int(Int64(rule.breaches)),
            ]
            o["smallest_steps"] = rule.counterexample.map { .int(Int64($0.moves.count)) } ?? .null
            if let c = rule.counterexample {
                var ce: JSONObject = [
                    "scenario": .string(c.scenario.name),
                    "steps": .array(
                        c.scenario.steps.indices.map { i in
                            (try? JSONValue(parsing: c.scenario.stepJSON(i))) ?? .string(c.scenario.stepJSON(i))
                        }),
                    "duration_ms": .double(milli(c.scenario.duration)), "phase": .string(c.phase.rawValue),
                    "found_at_run": .int(Int64(c.foundAtRun)), "found_after_ms": .double(milli(c.foundAfter)),
                    "original_steps": .int(Int64(c.original.count)), "shrink_runs": .int(Int64(c.shrinkRuns)),
                    "shrink_ms": .double(milli(c.shrinkTime)), "replay_verdict": .string(c.result.verdict.rawValue),
                ]
                ce["file"] = saved[c.rule].map { .string($0) } ?? .null
                o["counterexample"] = .object(ce)
            }
            out.append(o)
        }
        for c in r.counterexamples {
            for line in c.replay {
                var o: JSONObject = ["replay": .string(c.rule.rawValue), "t_ms": .double(milli(line.time))]
                switch line.entry {
                case .step(let i, let text):
                    o["step"] = .int(Int64(i + 1))
                    o["line"] = (try? JSONValue(parsing: text)) ?? .string(text)
                case .breach(let b):
                    o["breach"] = .string(b.rule.rawValue)
                    o["session"] = .int(Int64(b.session))
                    o["what"] = .string(b.what)
                case .record(let rec):
                    o["record"] = .object(rec.json(tMicroseconds: micro(line.time)))
                }
                out.append(o)
            }
        }
        var summary: JSONObject = [
            "summary": .bool(true), "app": .string(app), "seed": .int(Int64(r.seed)), "depth": .int(Int64(r.depth)),
            "exhaustive_sequences": .int(Int64(r.exhaustiveSequences)),
            "exhaustive_states": .int(Int64(r.exhaustiveStates)), "exhaustive_complete": .bool(r.exhaustiveComplete),
            "random_runs": .int(Int64(r.randomRuns)), "runs": .int(Int64(r.runs)), "pass": .int(Int64(r.passes)),
            "breach": .int(Int64(r.breachRuns)), "inconclusive": .int(Int64(r.inconclusiveRuns)),
            "shrink_runs": .int(Int64(r.shrinkRuns)), "stopped_by_budget": .bool(r.stoppedByBudget),
            "wall_ms": .double(milli(r.elapsed)), "cpu_ms": .double(milli(r.cpuTime)),
            "runs_per_second": .double(r.runsPerSecond.rounded()),
            "runs_per_cpu_second": .double(r.runsPerCPUSecond.rounded()),
        ]
        summary["budget_ms"] = budget.map { .double(milli($0)) } ?? .null
        summary["rules_breached"] = .array(r.counterexamples.map { .string($0.rule.rawValue) })
        if let i = r.inconclusive { summary["inconclusive_notes"] = .array(i.notes.map { .string($0) }) }
        out.append(summary)
        return out
    }

    // MARK: Units

    static func ms(_ d: Duration) -> Int64 { micro(d) / 1000 }
    static func micro(_ d: Duration) -> Int64 {
        let c = d.components
        return c.seconds * 1_000_000 + c.attoseconds / 1_000_000_000_000
    }
    static func milli(_ d: Duration) -> Double { (Double(micro(d)) / 1000 * 1000).rounded() / 1000 }
    static func seconds(_ d: Duration) -> String { String(format: "%.3f", Double(micro(d)) / 1e6) }
    static func dirname(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

extension String {
    fileprivate func leftPadded(_ n: Int) -> String {
        count >= n ? self : String(repeating: " ", count: n - count) + self
    }
}
