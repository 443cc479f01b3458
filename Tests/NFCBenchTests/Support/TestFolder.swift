import Foundation

/// A private folder for one test's temporary files and pty links: made 0700 by `mkdtemp(3)`
/// in the temporary directory as `nfcbench-<tag>-XXXXXX`, so no one else can put a link or a
/// pty of theirs there; ``remove()`` (in a `defer`: every exit path) takes it away with all
/// it holds. `./bench test` fails when a `nfcbench-*` entry is left in /tmp.
struct TestFolder: Sendable {
    let path: String

    init(_ tag: String) throws {
        var template = Array("\(NSTemporaryDirectory())nfcbench-\(tag)-XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else { throw CocoaError(.fileWriteUnknown) }
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// `name` inside the folder.
    func file(_ name: String) -> String { path + "/" + name }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}
