import Foundation
import NFCTags
import ReaderFrontend
import ReaderSession
import VirtualHardware

/// `sim:SCENARIO`: the in-process simulated reader playing a scenario file
/// (`hardware/scenarios/FORMAT.md`) with tag files found in `hardware/tags/` (or beside
/// the scenario, or as paths).
enum SimulatedDevice {
    static func backend(_ name: String, clock: any ReaderSessionClock) throws(CLIError) -> ReaderFrontend {
        let reader = try reader(name, clock: clock)
        return ReaderFrontend(device: reader.field, clock: clock)
    }

    static func reader(_ name: String, clock: any ReaderSessionClock) throws(CLIError) -> SimulatedReader {
        guard !name.isEmpty else {
            throw .usage("sim: needs a scenario name, e.g. sim:tap-uri (see hardware/scenarios/)")
        }
        let path = try DataLocation.require(name, in: "scenarios")
        let scenario: Scenario
        do { scenario = try Scenario.load(path: path) } catch { throw CLIError(error) }
        var tags: [String: TagFile] = [:]
        let dir = (path as NSString).deletingLastPathComponent
        for case .present(let tag, _, _) in scenario.steps.map(\.action) where tags[tag] == nil {
            let local = ["\(dir)/\(tag)", "\(dir)/\(tag).json"].first { FileManager.default.fileExists(atPath: $0) }
            let tagPath: String
            if let local {
                tagPath = local
            } else if let found = DataLocation.resolve(tag, in: "tags") {
                tagPath = found
            } else {
                let field = scenario.steps.firstIndex {
                    if case .present(tag, _, _) = $0.action { true } else { false }
                }
                throw CLIError(
                    DataFileError(
                        .notFound, file: path, field: field.map { "steps[\($0)].present" },
                        "no tag file '\(tag)' beside the scenario or in the bench's hardware/tags"))
            }
            do { tags[tag] = try TagFile.load(path: tagPath) } catch { throw CLIError(error) }
        }
        do { return try SimulatedReader(scenario: scenario, tags: tags, clock: clock) } catch {
            throw CLIError(error.inFile(path))
        }
    }
}
