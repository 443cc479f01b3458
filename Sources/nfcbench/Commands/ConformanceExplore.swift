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
            for line in ConformanceReports.jsonLines(report, app: appName, budget: budget, saved: saved) {
                Output.out(line.serialized)
            }
        } else {
            Output.out(ConformanceReports.text(report, app: appName, budget: budget, saved: saved))
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

}
