import Foundation
public import NFCTrace
import ReaderSession

/// The reports of `nfcbench conformance`: a suite run's JSON lines and an exploration's text
/// and JSON Lines (``ConformanceExplorer``), the shapes the command prints.
public enum ConformanceReports {
    /// One scenario's JSON line: `scenario`, `verdict`, `rules`, `breaches` (`rule`, `t_ms`,
    /// `session`, `what`), `sessions` (each one's times in milliseconds, `code` and `reason` of
    /// its ending), `sheets`, `sheets_per_minute`, `alert_messages`, `duration_ms`, `notes`,
    /// `background`.
    public static func jsonLine(_ r: ConformanceResult) -> JSONObject {
        var o: JSONObject = [
            "scenario": .string(r.scenario), "verdict": .string(r.verdict.rawValue),
            "rules": .array(r.rulesBreached.map { .string($0.rawValue) }),
        ]
        o["breaches"] = .array(
            r.breaches.map { b in
                .object([
                    "rule": .string(b.rule.rawValue), "t_ms": .int(msInt(b.time)), "session": .int(Int64(b.session)),
                    "what": .string(b.what),
                ])
            })
        o["sessions"] = .array(
            r.sessions.map { x in
                var so: JSONObject = ["session": .int(Int64(x.number)), "begun_ms": .int(msInt(x.begunAt))]
                so["user_action"] = x.userAction.map { .string($0) } ?? .null
                so["became_active"] = .bool(x.becameActive)
                so["time_limit_ms"] = x.timeLimit.map { .int(msInt($0)) } ?? .null
                so["thermal_refusal"] = .bool(x.refusedByThermalModel)
                so["ended_ms"] = x.endedAt.map { .int(msInt($0)) } ?? .null
                so["code"] = x.ending.map { .int(Int64($0.rawValue)) } ?? .null
                so["reason"] = x.ending.map { .string($0.name) } ?? .null
                if let m = x.errorMessage { so["error_message"] = .string(m) }
                return .object(so)
            })
        o["sheets"] = .int(Int64(r.sheets))
        o["sheets_per_minute"] = .double((r.sheetsPerMinute * 100).rounded() / 100)
        o["alert_messages"] = .int(Int64(r.alertMessages))
        o["duration_ms"] = .int(msInt(r.duration))
        o["notes"] = .array(r.notes.map { .string($0) })
        if !r.background.isEmpty { o["background"] = .array(r.background.map { .object($0.json) }) }
        return o
    }

    /// The suite's summary line: `summary: true`, `app`, `suite`, the verdicts' counts,
    /// `rules_breached`, `sheets`, `wall_ms` (milliseconds, to the microsecond).
    public static func summaryJSON(_ results: [ConformanceResult], app: String, suite: String, wall: Duration)
        -> JSONObject
    {
        let pass = results.filter { $0.verdict == .pass }.count
        let breach = results.filter { $0.verdict == .breach }.count
        return [
            "summary": .bool(true), "app": .string(app), "suite": .string(suite),
            "scenarios": .int(Int64(results.count)), "pass": .int(Int64(pass)), "breach": .int(Int64(breach)),
            "inconclusive": .int(Int64(results.count - pass - breach)),
            "rules_breached": .array(
                Set(results.flatMap(\.rulesBreached)).map(\.rawValue).sorted().map { .string($0) }),
            "sheets": .int(Int64(results.map(\.sheets).reduce(0, +))),
            "wall_ms": .double((secondsDouble(wall) * 1e6).rounded() / 1e3),
        ]
    }

    /// The text report of `--explore`: a table (rule, runs, breaches, steps of the smallest
    /// counterexample), each counterexample's steps and its replay, the inconclusive run if any,
    /// then the phases' counts and the wall time (seconds to the millisecond). `saved` is where
    /// each rule's counterexample was written (a replay hint follows it).
    public static func text(
        _ r: ConformanceExploration, app: String, budget: Duration?, saved: [ConformanceRule: String]
    )
        -> String
    {
        var s = "nfcbench conformance --explore: app '\(app)', seed \(r.seed), depth \(r.depth)"
        if let budget { s += ", budget \(secondsText(budget)) s" }
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
            s += "  found at \(c.phase.rawValue) run \(c.foundAtRun) after \(secondsText(c.foundAfter)) s"
            s += " (\(c.original.count) steps); shrunk to \(c.moves.count) in \(c.shrinkRuns) runs,"
            s += " \(secondsText(c.shrinkTime)) s\n"
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
        s += "\nwall time \(secondsText(r.elapsed)) s, \(Int(r.runsPerSecond.rounded())) runs/s"
        s += " (\(Int(r.runsPerCPUSecond.rounded())) per CPU-second)"
        return s
    }

    /// One replay line: `  60.000 s  session 2  begin mode=ndef`.
    public static func replayText(_ line: ConformanceReplayLine) -> String {
        let t = (secondsText(line.time) + " s").leftPadded(10)
        switch line.entry {
        case .step(let i, let text): return "\(t)  step \(i + 1)    \(text)"
        case .breach(let b): return "\(t)  BREACH    \(b.rule.rawValue): \(b.what)"
        case .record(let rec):
            let o = rec.record()
            var fields: [String] = []
            for (k, v) in o.fields.entries where k != TraceRecord.Key.session {
                switch v {
                case .string(let x): fields.append("\(k)=\(x.count > 60 ? String(x.prefix(57)) + "..." : x)")
                case .int(let x): fields.append("\(k)=\(x)")
                case .double(let x): fields.append("\(k)=\(x)")
                case .bool(let x): fields.append("\(k)=\(x)")
                default: continue
                }
            }
            let event = o.kind?.rawValue ?? "?"
            return "\(t)  session \(rec.session)  \(([event] + fields).joined(separator: " "))"
        }
    }

    /// The JSON Lines of `--explore`: one object per rule (`rule`, `runs`, `breaches`,
    /// `smallest_steps`, and `counterexample` with its `steps`, `_ms` times in milliseconds,
    /// `file`), one per replay line (`replay` the rule, `t_ms`, then `step` and `line`, `breach`,
    /// or `record`), then the summary (`summary: true`, the counts, `wall_ms`, `cpu_ms`,
    /// `budget_ms`, `rules_breached`).
    public static func jsonLines(
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

    /// Whole milliseconds, rounded down.
    static func msInt(_ d: Duration) -> Int64 {
        let c = d.components
        return c.seconds * 1000 + c.attoseconds / 1_000_000_000_000_000
    }
    static func micro(_ d: Duration) -> Int64 {
        let c = d.components
        return c.seconds * 1_000_000 + c.attoseconds / 1_000_000_000_000
    }
    static func milli(_ d: Duration) -> Double { (Double(micro(d)) / 1000 * 1000).rounded() / 1000 }
    static func secondsText(_ d: Duration) -> String { String(format: "%.3f", Double(micro(d)) / 1e6) }
    static func secondsDouble(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
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
