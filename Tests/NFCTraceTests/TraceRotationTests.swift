import Foundation
import NFCTrace
import Testing

@Suite("Trace folder rotation")
struct TraceRotationTests {
    @Test("A new trace path deletes the oldest .jsonl files beyond keep - 1 and leaves every other file")
    func rotation() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-rotate-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var location = TraceLocation(environment: ["NFCBENCH_TRACE_DIR": dir], keep: 3)
        try location.prepare()
        let names = ["20260101-000000-a-1.jsonl", "20260102-000000-b-2.jsonl", "20260103-000000-c-3.jsonl"]
        for name in names + ["notes.txt"] {
            #expect(FileManager.default.createFile(atPath: dir + "/" + name, contents: Data()))
        }
        let path = location.newTracePath(command: "dump", pid: 7)
        #expect(path.hasPrefix(dir + "/") && path.hasSuffix("-dump-7.jsonl"))
        let left = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(left == ["20260102-000000-b-2.jsonl", "20260103-000000-c-3.jsonl", "notes.txt"])
        location.keep = 10
        _ = location.newTracePath(command: "dump")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).count == 3)
    }
}

@Suite("PrivateFolder.parent(of:)")
struct PrivateFolderParentTests {
    @Test(
        "The folder part of a path, as NSString.deletingLastPathComponent defines it (values written by hand)",
        arguments: [
            ("/a/b", "/a"), ("/a", "/"), ("a", ""), ("a/b/", "a"), ("/a//b", "/a"), ("/", "/"), ("", ""),
            ("/tmp/nfcbench-0/x.jsonl", "/tmp/nfcbench-0"), ("rel/dir/file", "rel/dir"),
        ])
    func folderPart(path: String, parent: String) {
        #expect(PrivateFolder.parent(of: path) == parent, "\(path)")
    }
}
