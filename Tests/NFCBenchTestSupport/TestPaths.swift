public import Foundation

/// Where the package, its bench data and the public corpus (`Tests/Fixtures/corpus`, a copy with
/// its sources and licences in its README) are, found from this file's path
/// (`<root>/Tests/NFCBenchTestSupport/TestPaths.swift`), so a test finds them whatever the
/// current directory is.
public enum TestPaths {
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The bench data, `<root>/hardware`.
    public static let hardware: URL = packageRoot.appendingPathComponent("hardware")

    /// The shipped tag files, `<root>/hardware/tags`.
    public static let tags: URL = hardware.appendingPathComponent("tags")

    /// `<root>/Tests/Fixtures/corpus`.
    public static let corpus: URL = packageRoot.appendingPathComponent("Tests/Fixtures/corpus")

    /// `CI=true`: a missing corpus (or bench part) is a failure, not a skip.
    public static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"

    /// The corpus folder is there.
    public static var corpusPresent: Bool { FileManager.default.fileExists(atPath: corpus.path) }

    /// The corpus tests run: the corpus is there, or CI requires it (then they run and fail on
    /// the missing files instead of being skipped).
    public static var corpusRequired: Bool { corpusPresent || isCI }

    /// `name` in the corpus.
    public static func corpusFile(_ name: String) -> URL { corpus.appendingPathComponent(name) }

    /// `name` is in the corpus.
    public static func corpusHas(_ name: String) -> Bool {
        FileManager.default.fileExists(atPath: corpusFile(name).path)
    }
}
