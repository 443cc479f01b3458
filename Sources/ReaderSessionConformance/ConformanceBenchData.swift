import Foundation
public import NFCTags

/// nfcbench's bench data for an app's own tests — the shipped tag files and the built-in
/// conformance suite (`hardware/tags/`, `hardware/conformance/`) — found the same way
/// wherever the app's package lives, so a test never counts folders up from itself.
///
/// The folder is `$NFCBENCH_DATA` when set (a `hardware/` folder), else the `hardware/`
/// folder of the nfcbench package this library was built from: its sources are on the
/// machine that builds the tests (a path dependency on a clone, or SwiftPM's checkout).
public enum ConformanceBenchData {
    /// The `hardware/` folder (see the type's note). Not checked for existence here; the
    /// loaders below throw ``DataFileError/Code/notFound`` naming it when it is missing.
    public static var hardwareDirectory: String {
        if let d = ProcessInfo.processInfo.environment["NFCBENCH_DATA"], !d.isEmpty { return d }
        // This file is Sources/ReaderSessionConformance/ConformanceBenchData.swift in the package.
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("hardware").path
    }

    /// Where a scenario's tag names are looked up: `hardware/conformance/tags`, then
    /// `hardware/tags` (the order `nfcbench conformance` uses for the built-in suite).
    public static var tagDirectories: [String] {
        let hardware = hardwareDirectory
        return ["\(hardware)/conformance/tags", "\(hardware)/tags"]
    }

    /// A shipped tag file by name (`ntag215-uri`, with or without `.json`) or a path.
    /// Throws ``DataFileError`` (`.notFound` naming the folders looked in, or the file's own
    /// error).
    public static func tagFile(_ reference: String) throws(DataFileError) -> TagFile {
        try ConformanceScenario.loadTagFile(reference, in: tagDirectories)
    }

    /// The built-in suite (`hardware/conformance/*.json`), each scenario's tags loaded as
    /// `nfcbench conformance` loads them.
    public static func builtinSuite() throws(DataFileError) -> [ConformanceScenario] {
        try ConformanceScenario.loadSuite(directory: "\(hardwareDirectory)/conformance", tagDirectories: tagDirectories)
    }
}
