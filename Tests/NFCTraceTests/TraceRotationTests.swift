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

extension TraceRotationTests {
    @Test(
        "Rotation deletes only names nfcbench made: 100 files 2025-lab-baseline-NNN.jsonl of the user's stay, whatever their count"
    )
    func userFilesStay() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-rotate-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let location = TraceLocation(environment: ["NFCBENCH_TRACE_DIR": dir])
        #expect(location.keep == 100)
        try location.prepare()
        let user = (1...100).map { String(format: "2025-lab-baseline-%03d.jsonl", $0) }
        for name in user { #expect(FileManager.default.createFile(atPath: dir + "/" + name, contents: Data())) }
        let ours = (0..<100).map { String(format: "20260101-0000%02d-session-%d.jsonl", $0 % 60, $0) }
        for name in ours { #expect(FileManager.default.createFile(atPath: dir + "/" + name, contents: Data())) }
        _ = location.newTracePath(command: "session", pid: 1)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: dir))
        #expect(user.allSatisfy(left.contains), "every user file stays")
        #expect(left.count == 100 + 99, "the oldest of ours went, to keep 100 with the new one")
    }

    @Test("What rotation counts as ours: date-time-command-pid.jsonl and nothing else")
    func names() {
        for ok in [
            "20261201-233700-walk-9297.jsonl", "20260101-000000-virtual-card-1.jsonl", "20260101-000000-a-1.jsonl",
        ] {
            #expect(TraceLocation.isTraceName(ok), "\(ok)")
        }
        for no in [
            "2025-lab-baseline-001.jsonl", "20260101-000000-walk-x.jsonl", "20260101-000000--1.jsonl", "notes.jsonl",
            "20260101-000000-walk-1.json", "20260101-000000-walk-1.jsonl.bak", "x20260101-000000-walk-1.jsonl",
        ] {
            #expect(!TraceLocation.isTraceName(no), "\(no)")
        }
    }

    @Test("NFCBENCH_TRACE_KEEP sets how many are kept (0: all); NFCBENCH_TRACE_MAX_BYTES the cap; a bad value is said")
    func settings() {
        #expect(TraceLocation(environment: ["NFCBENCH_TRACE_KEEP": "3", "HOME": "/h"]).keep == 3)
        #expect(TraceLocation(environment: ["NFCBENCH_TRACE_KEEP": "0", "HOME": "/h"]).keep == 0)
        #expect(TraceLocation(environment: ["NFCBENCH_TRACE_MAX_BYTES": "65536", "HOME": "/h"]).maxBytes == 65536)
        let bad = TraceLocation(environment: ["NFCBENCH_TRACE_KEEP": "many", "HOME": "/h"])
        #expect(bad.keep == 100)
        #expect(bad.problems == ["NFCBENCH_TRACE_KEEP='many' is not a whole number of at least 0; using 100"])
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
