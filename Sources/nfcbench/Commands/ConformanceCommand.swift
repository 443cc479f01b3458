import Dispatch
import Foundation
import NFCBenchKit
import NFCTags
import NFCTrace
import ReaderSession
import ReaderSessionConformance
import ReferenceApps

/// `nfcbench conformance`: runs an app's Core NFC code through every way a session can
/// end, in virtual time, and reports each breach of the "Handling the endings" rules.
enum ConformanceCommand {
    /// The harness of this process: its main thread takes signals and never runs the main
    /// queue (main.swift), so the harness must not wait for it.
    static var harness: ConformanceHarness {
        var h = ConformanceHarness()
        h.waitsForMainQueue = false
        return h
    }

    /// `--app NAME`: one of the reference apps.
    static func appOption(_ help: String) -> OptionSpec {
        OptionSpec(
            "app", .choice(ReferenceApps.all.map(\.name)), value: "NAME", help: help, default: .text("reference"))
    }

    /// The widest reference app's name and a space: the help's app column.
    static var nameWidth: Int { (ReferenceApps.all.map(\.name.count).max() ?? 0) + 1 }

    static let command = Command(
        path: ["conformance"],
        abstract: "Judge an app's handling of every way a reader session ends (virtual time)",
        options: [
            OptionSpec(
                "suite", value: "builtin|DIR",
                help: """
                    the scenarios: the shipped suite (hardware/conformance/,
                    default) or every *.json in DIR (format:
                    hardware/conformance/FORMAT.md). Tags are looked up in
                    DIR/tags/, then the shipped tag files
                    """, completion: .directory),
            appOption(
                "the app under test:\n"
                    + ReferenceApps.all.map {
                        "\($0.name.padding(toLength: nameWidth, withPad: " ", startingAt: 0))\($0.summary)"
                    }.joined(separator: "\n")),
            OptionSpec(
                "thermal", .flag,
                help: """
                    print the thermal and quick-restart model: every parameter
                    with its source (documented, reported or assumed), then
                    the session limits after 0 s, 3 s and 30 s gaps (after one
                    full session), and exit
                    """),
            OptionSpec("explore", .flag, help: "generate scenarios and search for a breach instead (below)"),
            OptionSpec(
                "seed", .int(0...Int.max), value: "S",
                help: "--explore: the random phase's seed (same seed, same runs)", default: .int(1)),
            OptionSpec(
                "runs", .int(0...100_000_000), help: "--explore: random runs after the exhaustive phase",
                default: .int(10_000)),
            OptionSpec(
                "depth", .int(0...6), value: "K",
                help: "--explore: every sequence of up to K moves first, equivalent states\nmerged (0 skips it)",
                default: .int(2)),
            OptionSpec(
                "budget", .duration(bare: nil, moreThanZero: false),
                help: "--explore: real time for both phases, e.g. 10s (default: none;\nshrinking is not counted)"),
            OptionSpec(
                "save", value: "DIR",
                help: """
                    --explore: write each counterexample as a scenario file
                    (DIR/explored-APP-RULE.json); replay it with
                    conformance --suite DIR --app APP
                    """, completion: .directory),
            OutputOptions.json(
                "JSON Lines: one object per scenario, then a summary object (--explore: one per rule,\nthe replays' lines, a summary)"
            ),
        ],
        alternateUsage:
            "conformance --explore [--app NAME] [--seed S] [--runs N] [--depth K] [--budget DURATION] [--save DIR] [--json]",
        discussion: """
            EXPLORING (--explore): instead of the suite, generate scenarios and search for a
            breach of any rule, then shrink each rule's first breach to a scenario no step
            can be removed from (ReaderSessionConformance's ConformanceExplorer).
            It prints a table (rule, runs, breaches, steps of the smallest counterexample),
            each counterexample's steps and the trace of its replay. Inconclusive runs (the
            app used real time or DispatchQueue.main) count as neither breach nor pass.

            Exit status: 0 when every scenario (every generated run) passes, 1 on any breach
            or inconclusive scenario (run), 65 for a malformed scenario or tag file, 66 for a
            missing one.
            """,
        validate: { o throws(CLIError) in
            if o.flag("explore") {
                guard !o.flag("thermal") else { throw CLIError.usage("give --thermal or --explore, not both") }
                guard !o.has("suite") else { throw CLIError.usage("give --suite or --explore, not both") }
                if o.string("save") == "-" {
                    throw CLIError.usage("--save DIR is a folder; - (standard output) can't hold one")
                }
            } else {
                for option in ["seed", "runs", "depth", "budget", "save"] where o.has(option) {
                    throw CLIError.usage("--\(option) goes with --explore")
                }
            }
        },
        run: { o in
            let suiteArg = o.string("suite") ?? "builtin"
            let appName = o.string("app")!
            let json = o.flag("json")
            let thermal = o.flag("thermal")
            if o.flag("explore") { return try await ConformanceExplore.run(o, app: appName, json: json) }
            if thermal {
                Output.out(thermalTable(json: json))
                return 0
            }
            let entry = ReferenceApps.named(appName)!
            let scenarios = try loadSuite(suiteArg)
            let start = ContinuousClock.now
            let results = await Self.harness.run(
                scenarios, app: ReferenceAppFactory.make(entry.habits, design: entry.design))
            let wall = ContinuousClock.now - start
            if json {
                for r in results { Output.out(ConformanceReports.jsonLine(r).serialized) }
                Output.out(
                    ConformanceReports.summaryJSON(results, app: appName, suite: suiteArg, wall: wall).serialized)
            } else {
                Output.out(table(results, app: appName, suite: suiteArg, wall: wall))
            }
            return results.allSatisfy { $0.verdict == .pass } ? 0 : 1
        })

    // MARK: Loading

    static func loadSuite(_ arg: String) throws(CLIError) -> [ConformanceScenario] {
        let dir: String
        if arg == "builtin" {
            guard let hw = DataLocation.hardwareDirectory(), FileManager.default.fileExists(atPath: hw + "/conformance")
            else {
                throw CLIError.noInput("no hardware/conformance folder beside the executable (set NFCBENCH_DATA)")
            }
            dir = hw + "/conformance"
        } else {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: arg, isDirectory: &isDir) else {
                throw CLIError.noInput("\(arg): no such folder (--suite takes 'builtin' or a folder of scenario files)")
            }
            guard isDir.boolValue else {
                throw CLIError.usage("--suite takes 'builtin' or a folder of scenario files; '\(arg)' is not a folder")
            }
            dir = arg
        }
        let tagDirs =
            [dir + "/tags", dir]
            + (DataLocation.hardwareDirectory().map { ["\($0)/conformance/tags", "\($0)/tags"] } ?? [])
        do {
            return try ConformanceScenario.loadSuite(directory: dir, tagDirectories: tagDirs)
        } catch {
            throw CLIError(error)
        }
    }

    // MARK: Output

    /// The endings in order, a run of one code written once with its count
    /// (`201×6, 203×12, 204`), so a retry loop reads as one entry, not a cut-off list.
    static func endings(_ r: ConformanceResult) -> String {
        let e = r.sessions.map { s in s.ending.map { String($0.rawValue) } ?? "active" }
        return e.isEmpty ? "-" : runs(e)
    }

    /// `["a", "a", "b"]` → `a×2, b`.
    static func runs(_ items: [String]) -> String {
        var out: [(String, Int)] = []
        for i in items {
            if let last = out.last, last.0 == i { out[out.count - 1].1 += 1 } else { out.append((i, 1)) }
        }
        return out.map { $0.1 == 1 ? $0.0 : "\($0.0)×\($0.1)" }.joined(separator: ", ")
    }

    /// `text` cut at the last ", " that leaves it at most `width` characters, with "…" to
    /// say there is more (the JSON output has every ending).
    static func fitted(_ text: String, width: Int) -> String {
        guard text.count > width else { return text }
        var cut = String(text.prefix(width - 1))
        if let comma = cut.range(of: ", ", options: .backwards) { cut = String(cut[..<comma.lowerBound]) + ", " }
        return cut + "…"
    }

    static func table(_ results: [ConformanceResult], app: String, suite: String, wall: Duration) -> String {
        let width = max(30, (results.map(\.scenario.count).max() ?? 0) + 2)
        let endingsWidth = min(36, max(8, results.map { endings($0).count }.max() ?? 0)) + 2
        var s = "nfcbench conformance: app '\(app)', \(results.count) scenarios (suite \(suite))\n\n"
        s +=
            "SCENARIO".padding(toLength: width, withPad: " ", startingAt: 0)
            + "VERDICT       " + "ENDINGS".padding(toLength: endingsWidth, withPad: " ", startingAt: 0)
            + "SHEETS  /MIN  RULE\n"
        for r in results {
            let rules = r.rulesBreached.map(\.rawValue).joined(separator: ", ")
            s += r.scenario.padding(toLength: width, withPad: " ", startingAt: 0)
            s += r.verdict.rawValue.padding(toLength: 14, withPad: " ", startingAt: 0)
            s += fitted(endings(r), width: endingsWidth - 2).padding(
                toLength: endingsWidth, withPad: " ", startingAt: 0)
            s += String(r.sheets).leftPad(6) + String(format: "%6.1f", r.sheetsPerMinute) + "  "
            s += rules.isEmpty ? "-" : rules
            s += "\n"
        }
        let details = results.filter { $0.verdict != .pass }
        if !details.isEmpty {
            s += "\nDETAILS\n"
            for r in details {
                s += "\(r.scenario): \(r.description)\n"
                for b in r.breaches.prefix(5) {
                    s += "  t=\(seconds(b.time)) s, session \(b.session): \(b.rule.rawValue): \(b.what)\n"
                }
                if r.breaches.count > 5 { s += "  … \(r.breaches.count - 5) more\n" }
                for n in r.notes { s += "  note: \(n)\n" }
            }
        }
        let limits = results.filter { r in
            r.sessions.contains { $0.timeLimit.map { $0 < .seconds(60) } ?? $0.refusedByThermalModel }
        }
        if !limits.isEmpty {
            s +=
                "\nTHERMAL MODEL (time limit granted to each session; refused = 203 from the model, busy = 203 from another session)\n"
            for r in limits {
                let l = r.sessions.map { x in
                    x.timeLimit.map { limit($0) } ?? (x.refusedByThermalModel ? "refused" : "busy")
                }
                s += "  \(r.scenario): \(runs(l))\n"
            }
        }
        let pass = results.filter { $0.verdict == .pass }.count
        let breach = results.filter { $0.verdict == .breach }.count
        let inconclusive = results.count - pass - breach
        let rules = Set(results.flatMap(\.rulesBreached)).map(\.rawValue).sorted()
        s += "\n\(results.count) scenarios: \(pass) pass, \(breach) breach, \(inconclusive) inconclusive"
        if !rules.isEmpty { s += "; rules breached: \(rules.joined(separator: ", "))" }
        s += "; wall time \(Figures.duration(wall))"
        return s
    }

    /// Session limits after one full 60 s session and a gap of 0 s, 3 s, 30 s (and 10 min).
    static func thermalTable(json: Bool) -> String {
        var model = ThermalModel()
        _ = model.beginRequested(at: .zero)
        model.fieldOn(at: .zero)
        model.fieldOff(at: .seconds(60))
        let gaps: [Duration] = [.zero, .seconds(3), .seconds(30), .seconds(600)]
        let p = model.parameters
        if json {
            var lines = gaps.map { g -> String in
                let l = model.limit(after: g)
                let o: JSONObject = [
                    "gap_ms": .int(ms(g)), "time_limit_ms": l.map { .int(ms($0)) } ?? .null, "refused": .bool(l == nil),
                ]
                return o.serialized
            }
            let facts: JSONObject = [
                "model": .object(ReaderSystemModel.default.facts(thermal: p).traceHeaderBlock),
                "background_reading": .object(BackgroundTagReading().facts.traceHeaderBlock),
            ]
            lines.append(facts.serialized)
            return lines.joined(separator: "\n")
        }
        var s = "Thermal model and quick restarts (ThermalModel, ReaderSystemModel defaults):\n"
        s += ReaderSystemModel.default.facts(thermal: p).table()
        s += "\nBackground tag reading, for scenarios with background_reading (BackgroundTagReading defaults):\n"
        s += BackgroundTagReading().facts.table()
        s += "\nAfter one full \(seconds(p.baseLimit)) s session, the next session's limit (heat only):\n"
        for g in gaps {
            let l = model.limit(after: g).map { limit($0) } ?? "refused (203)"
            s += "  gap \(seconds(g).leftPad(4)) s  →  \(l)\n"
        }
        let q = ReaderSystemModel.default
        s +=
            "A begin() less than \(seconds(q.quickRestartWindow)) s after a session with a sheet ended meets the quick-restart outcome '\(q.quickRestartOutcome.rawValue)' (reported) first.\n"
        return s
    }

    static func ms(_ d: Duration) -> Int64 {
        let c = d.components
        return c.seconds * 1000 + c.attoseconds / 1_000_000_000_000_000
    }

    /// Seconds to the millisecond, without trailing zeros: `2.25`, `60`, `0.5`.
    static func seconds(_ d: Duration) -> String {
        var text = String(format: "%.3f", Double(ms(d)) / 1000)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// A session's time limit as the sheet would count it: three significant digits
    /// (`45.6 s`, `60 s`).
    static func limit(_ d: Duration) -> String { Figures.rounded(Double(ms(d)) / 1000) + " s" }
}

extension String {
    fileprivate func leftPad(_ n: Int) -> String { count >= n ? self : String(repeating: " ", count: n - count) + self }
}
