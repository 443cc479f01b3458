import Foundation
import NFCFiles
import NFCTags
import ReaderSession
import VirtualHardware

/// `sim:SCENARIO`: the in-process simulated reader playing a scenario file
/// (`hardware/scenarios/FORMAT.md`) with tag files found beside the scenario, in
/// `hardware/tags/`, or as paths; `sim:tag:FILE` (or `sim:PATH` of a tag file): the tag file FILE
/// (a path, or a name in `hardware/tags/`) in the field from the start, as the virtual devices'
/// `--tag FILE` present it. A bare name is a scenario's; `tag:` can never be one.
enum SimulatedDevice {
    /// What `sim:NAME` plays: a scenario file, or one tag file.
    enum Source: Equatable {
        case scenario(path: String)
        case tag(path: String)
    }

    /// Where `sim:NAME` finds its file: `tag:FILE` is a tag file; otherwise a scenario by name
    /// or path, else a tag file by name or path (a path whose file is a tag file, not a scenario).
    static func source(_ name: String) throws(BenchDeviceError) -> Source {
        guard !name.isEmpty else {
            throw BenchDeviceError(
                .invalid,
                "sim: needs a scenario name or a tag file, e.g. sim:tap-uri (see hardware/scenarios/) or sim:tag:ntag215-uri"
            )
        }
        if name.hasPrefix("tag:") {
            let tag = String(name.dropFirst(4))
            guard !tag.isEmpty else {
                throw BenchDeviceError(.invalid, "sim:tag: needs a tag file, e.g. sim:tag:ntag215-uri")
            }
            return .tag(path: try BenchData.require(tag, in: "tags"))
        }
        if let path = BenchData.resolve(name, in: "scenarios") {
            return isTagFile(path) ? .tag(path: path) : .scenario(path: path)
        }
        if let path = BenchData.resolve(name, in: "tags") { return .tag(path: path) }
        return .scenario(path: try BenchData.require(name, in: "scenarios"))
    }

    /// The files `sim:NAME` reads (the scenario and its tag files, or the tag file), for the
    /// check that no output is one of them.
    static func inputs(_ name: String) -> [NamedFile] {
        switch try? source(name) {
        case .tag(let path)?: return [NamedFile("the tag file \(path) (--device sim:\(name))", path)]
        case .scenario(let path)?:
            var files = [NamedFile("the scenario \(path) (--device sim:\(name))", path)]
            if let scenario = try? Scenario.load(path: path) {
                for case .present(let tag, _, _) in scenario.steps.map(\.action) {
                    if let p = tagPath(tag, scenario: path) { files.append(NamedFile("the tag file \(p)", p)) }
                }
            }
            return files
        case nil: return []
        }
    }

    /// A tag file, not a scenario: its JSON is not `"format": "nfcbench-scenario"`.
    static func isTagFile(_ path: String) -> Bool {
        guard let bytes = try? InputFile.read(path) else { return false }
        return !String(decoding: bytes.prefix(4096), as: UTF8.self).contains("\"nfcbench-scenario\"")
            && (try? TagFile.parse(bytes: bytes, file: path)) != nil
    }

    /// The tag file a scenario names: beside the scenario, else in the bench's `hardware/tags`.
    static func tagPath(_ tag: String, scenario path: String) -> String? {
        let dir = FilePath.folder(of: path)
        let local = [FilePath.join(dir, tag), FilePath.join(dir, tag + ".json")].first {
            FileManager.default.fileExists(atPath: $0)
        }
        return local ?? BenchData.resolve(tag, in: "tags")
    }

    /// The reader with the tag file at `path` in its field from the start (`sim:tag:FILE`); its
    /// reader name (what sessions lock) is `tag-<the file's name>`.
    static func tagReader(_ path: String, clock: any ReaderSessionClock) throws(BenchDeviceError) -> SimulatedReader {
        let file: TagFile
        do { file = try TagFile.load(path: path) } catch { throw BenchDeviceError(error) }
        let stem = FilePath.stem(of: FilePath.lastComponent(of: path))
        let scenario = Scenario(
            description: "the tag file \(path) in the field", reader: "tag-\(stem)",
            steps: [.init(at: .zero, action: .present(tag: "t", as: stem, faults: []))])
        do { return try SimulatedReader(scenario: scenario, tags: ["t": file], clock: clock) } catch {
            throw BenchDeviceError(error.inFile(path))
        }
    }

    /// The reader for the scenario at `path` (a name in `hardware/scenarios/` or a path).
    static func reader(_ name: String, clock: any ReaderSessionClock) throws(BenchDeviceError) -> SimulatedReader {
        let path = try BenchData.require(name, in: "scenarios")
        let scenario: Scenario
        do { scenario = try Scenario.load(path: path) } catch { throw BenchDeviceError(error) }
        var tags: [String: TagFile] = [:]
        for case .present(let tag, _, _) in scenario.steps.map(\.action) where tags[tag] == nil {
            guard let tagPath = tagPath(tag, scenario: path) else {
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
