import Foundation
import NFCTags
import ReaderSession
import VirtualHardware

/// `sim:SCENARIO`: the in-process simulated reader playing a scenario file
/// (`hardware/scenarios/FORMAT.md`) with tag files found beside the scenario, in
/// `hardware/tags/`, or as paths.
enum SimulatedDevice {
    /// The reader for the scenario at `path` (a name in `hardware/scenarios/` or a path).
    static func reader(_ name: String, clock: any ReaderSessionClock) throws(BenchDeviceError) -> SimulatedReader {
        let path = try BenchData.require(name, in: "scenarios")
        let scenario: Scenario
        do { scenario = try Scenario.load(path: path) } catch { throw BenchDeviceError(error) }
        var tags: [String: TagFile] = [:]
        let dir = (path as NSString).deletingLastPathComponent
        for case .present(let tag, _, _) in scenario.steps.map(\.action) where tags[tag] == nil {
            let local = ["\(dir)/\(tag)", "\(dir)/\(tag).json"].first { FileManager.default.fileExists(atPath: $0) }
            let tagPath: String
            if let local {
                tagPath = local
            } else if let found = BenchData.resolve(tag, in: "tags") {
                tagPath = found
            } else {
                let field = scenario.steps.firstIndex {
                    if case .present(tag, _, _) = $0.action { true } else { false }
                }
                throw BenchDeviceError(
                    DataFileError(
                        .notFound, file: path, field: field.map { "steps[\($0)].present" },
                        "no tag file '\(tag)' beside the scenario or in the bench's hardware/tags"))
            }
            do { tags[tag] = try TagFile.load(path: tagPath) } catch { throw BenchDeviceError(error) }
        }
        do { return try SimulatedReader(scenario: scenario, tags: tags, clock: clock) } catch {
            throw BenchDeviceError(error.inFile(path))
        }
    }
}
