import Foundation

/// A private folder for one test's temporary files and pty links: made 0700 by `mkdtemp(3)`
/// in the temporary directory as `nfcbench-<tag>-XXXXXX`, so no one else can put a link or a
/// pty of theirs there; ``remove()`` (in a `defer`: every exit path) takes it away with all
/// it holds. `./bench test` fails when a `nfcbench-*` entry is left in /tmp.
public struct TestFolder: Sendable {
    public let path: String

    public init(_ tag: String) throws {
        var template = Array("\(NSTemporaryDirectory())nfcbench-\(tag)-XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else { throw CocoaError(.fileWriteUnknown) }
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// `name` inside the folder.
    public func file(_ name: String) -> String { path + "/" + name }

    public func remove() { try? FileManager.default.removeItem(atPath: path) }
}
