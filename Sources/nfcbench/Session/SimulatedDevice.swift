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
        guard let data = FileManager.default.contents(atPath: path) else { throw .data("\(path): can't read it") }
        let defaultReader = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        let scenario: Scenario
        do { scenario = try Scenario(json: data, defaultReader: defaultReader) } catch {
            throw .data("\(path): \(error)")
        }
        var tags: [String: TagFile] = [:]
        let dir = (path as NSString).deletingLastPathComponent
        for case .present(let tag, _, _) in scenario.steps.map(\.action) where tags[tag] == nil {
            let local = ["\(dir)/\(tag)", "\(dir)/\(tag).json"].first { FileManager.default.fileExists(atPath: $0) }
            let tagPath: String
            if let local { tagPath = local } else { tagPath = try DataLocation.require(tag, in: "tags") }
            do { tags[tag] = try TagFile.load(path: tagPath) } catch { throw .data("\(tagPath): \(error)") }
        }
        do { return try SimulatedReader(scenario: scenario, tags: tags, clock: clock) } catch {
            throw .data("\(path): \(error)")
        }
    }
}
