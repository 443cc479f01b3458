import Foundation
import Glibc
import NFCBase
import NFCFiles
import NFCTags
import Testing

/// A private folder for one test (0700, from `mkdtemp(3)`), removed by ``remove()``.
struct Scratch {
    let path: String
    init() throws {
        var template = Array("\(NSTemporaryDirectory())nfcbench-files-XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else { throw CocoaError(.fileWriteUnknown) }
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
    func file(_ name: String) -> String { path + "/" + name }
    func remove() { try? FileManager.default.removeItem(atPath: path) }
    func write(_ name: String, _ text: String, mode: mode_t = 0o644) throws {
        try text.write(toFile: file(name), atomically: false, encoding: .utf8)
        chmod(file(name), mode)
    }
    func read(_ name: String) -> String? { try? String(contentsOfFile: file(name), encoding: .utf8) }
    func mode(_ name: String) -> mode_t? { FilePath.status(file(name)).map { $0.st_mode & 0o7777 } }
    var entries: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }
}

@Suite("OutputFile: the one way a file the user names is written")
struct OutputFileTests {
    @Test("Path parts by POSIX rules, for names of any length (a one-letter name has the current folder)")
    func pathParts() {
        #expect(FilePath.parent(of: "x") == "")
        #expect(FilePath.folder(of: "x") == ".")
        #expect(FilePath.lastComponent(of: "x") == "x")
        #expect(FilePath.parent(of: "/x") == "/")
        #expect(FilePath.lastComponent(of: "a/b.json") == "b.json")
        #expect(FilePath.stem(of: "b.json") == "b")
        #expect(FilePath.stem(of: ".hidden") == ".hidden")
        #expect(FilePath.join(".", "x") == "x")
        #expect(FilePath.namedDescriptor("/dev/stdout") == 1)
        #expect(FilePath.namedDescriptor("/proc/self/fd/7") == 7)
        #expect(FilePath.namedDescriptor("/dev/stdoutx") == nil)
    }

    @Test("A new file is 0600 whatever the umask, made as a temporary file renamed into place")
    func newFile() throws {
        let s = try Scratch()
        defer { s.remove() }
        let old = umask(0)
        defer { umask(old) }
        let plan = try OutputFile.plan(s.file("new.json"))
        #expect(plan.destination == .create)
        try plan.write(Array("hello".utf8))
        #expect(s.read("new.json") == "hello")
        #expect(s.mode("new.json") == 0o600)
        #expect(s.entries == ["new.json"], "no temporary file is left")
    }

    @Test("An existing file is replaced atomically, keeping its mode; its inode changes (a rename)")
    func replaceKeepsMode() throws {
        let s = try Scratch()
        defer { s.remove() }
        try s.write("f", "old", mode: 0o640)
        let before = try #require(FilePath.status(s.file("f"))).st_ino
        let plan = try OutputFile.plan(s.file("f"))
        let replaced: UInt32? = if case .replace(_, _, let mode) = plan.destination { mode } else { nil }
        let mode = try #require(replaced, "\(plan.destination)")
        #expect(mode == 0o640)
        try plan.write(Array("new".utf8))
        #expect(s.read("f") == "new")
        #expect(s.mode("f") == 0o640)
        #expect(try #require(FilePath.status(s.file("f"))).st_ino != before)
    }

    @Test("A file with two hard links is written in place: both names see the new bytes")
    func hardLinkInPlace() throws {
        let s = try Scratch()
        defer { s.remove() }
        try s.write("a", "old")
        #expect(link(s.file("a"), s.file("b")) == 0)
        let plan = try OutputFile.plan(s.file("a"))
        #expect(plan.destination == .inPlace)
        try plan.write(Array("new".utf8))
        #expect(s.read("a") == "new")
        #expect(s.read("b") == "new")
    }

    @Test("A symbolic link is written through: the link stays, its target is replaced (mode kept)")
    func linkThrough() throws {
        let s = try Scratch()
        defer { s.remove() }
        try s.write("t", "old", mode: 0o640)
        #expect(symlink("t", s.file("l")) == 0)
        let plan = try OutputFile.plan(s.file("l"))
        #expect(plan.path == s.path + "/t")
        try plan.write(Array("new".utf8))
        #expect(FilePath.linkTarget(s.file("l")) == "t")
        #expect(s.read("t") == "new")
        #expect(s.mode("t") == 0o640)
        // A dangling link makes its target.
        #expect(symlink("made", s.file("d")) == 0)
        try OutputFile.plan(s.file("d")).write(Array("x".utf8))
        #expect(s.read("made") == "x")
        #expect(FilePath.linkTarget(s.file("d")) == "made")
    }

    @Test(
        "A link owned by someone else in a world-writable sticky folder is refused, as protected_symlinks would (root only: lchown)"
    )
    func protectedSymlinks() throws {
        if geteuid() != 0 {
            // A failure under CI (it runs as root), a skip elsewhere: never a quiet pass.
            try #require(ProcessInfo.processInfo.environment["CI"] != "true", "CI runs as root; this needs root")
            try Test.cancel("needs root (lchown)")
        }
        let s = try Scratch()
        defer { s.remove() }
        let sticky = s.file("tmp")
        #expect(mkdir(sticky, 0o777) == 0)
        #expect(chmod(sticky, 0o1777) == 0)
        try s.write("victim", "precious")
        #expect(symlink(s.file("victim"), sticky + "/trap") == 0)
        #expect(lchown(sticky + "/trap", 4242, 4242) == 0)
        #expect(throws: FileError.self) { try OutputFile.plan(sticky + "/trap", label: "--out trap") }
        do {
            _ = try OutputFile.plan(sticky + "/trap", label: "--out trap")
        } catch {
            #expect(error.kind == .cantCreate)
            #expect(error.description.contains("protected_symlinks"), "\(error)")
        }
        #expect(s.read("victim") == "precious")
        // The folder owner's own link is followed.
        #expect(symlink(s.file("victim"), sticky + "/mine") == 0)
        #expect(try OutputFile.plan(sticky + "/mine").path == s.file("victim"))
    }

    @Test("A FIFO gets the bytes written into it and stays a FIFO")
    func fifo() async throws {
        let s = try Scratch()
        defer { s.remove() }
        #expect(mkfifo(s.file("f"), 0o600) == 0)
        let plan = try OutputFile.plan(s.file("f"))
        #expect(plan.destination == .writeInto)
        let path = s.file("f")
        // Both ends block in open(2) until the other comes: each on a thread of its own, never
        // on the pool Swift's tasks share (a task here held a worker until the other end came).
        async let read = OffPool.run { () -> [UInt8] in (try? InputFile.read(path)) ?? [] }
        try await OffPool.run { try plan.write(Array("through".utf8)) }
        #expect(await read == Array("through".utf8))
        #expect(try #require(FilePath.linkStatus(path)).st_mode & S_IFMT == S_IFIFO)
    }

    @Test("- is standard output; /dev/stdout names descriptor 1 and is never replaced")
    func standardOutput() throws {
        #expect(try OutputFile.plan("-").destination == .descriptor(1))
        #expect(try OutputFile.plan("/dev/stdout").destination == .descriptor(1))
        #expect(try OutputFile.plan("/proc/self/fd/2").destination == .descriptor(2))
    }

    @Test("Refused before anything is written: a folder, a missing folder, a file where the folder should be")
    func refusals() throws {
        let s = try Scratch()
        defer { s.remove() }
        try s.write("file", "x")
        func reason(_ p: String) -> String {
            do {
                _ = try OutputFile.plan(p, label: "--out \(p)")
                return "planned"
            } catch {
                #expect(error.exitCode == 73)
                return error.description
            }
        }
        #expect(reason(s.path).contains("is a folder; give a file name"))
        #expect(reason(s.file("missing/x")).contains("the folder \(s.file("missing")) does not exist"))
        #expect(reason(s.file("file/x")).contains("is a file, not a folder"))
        #expect(reason("").contains("empty path"))
    }

    @Test("/dev/full: the write fails with ENOSPC, 74 naming the path; the device is untouched (it is written into)")
    func fullDevice() throws {
        guard let st = FilePath.status("/dev/full"), st.st_mode & S_IFMT == S_IFCHR else {
            try Test.cancel("no /dev/full character device on this system")
        }
        let plan = try OutputFile.plan("/dev/full", label: "--out /dev/full")
        #expect(plan.destination == .writeInto)
        do {
            try plan.write(Array("x".utf8))
            Issue.record("a write to /dev/full succeeded")
        } catch {
            #expect(error.kind == .io)
            #expect(error.exitCode == 74)
            #expect(error.description == "--out /dev/full: write failed: No space left on device")
        }
    }

    @Test("A stream to an existing file replaces it only when finished; abandoned, the earlier file stays")
    func streamReplacesAtFinish() throws {
        let s = try Scratch()
        defer { s.remove() }
        try s.write("t", "old")
        let w = try OutputFile.plan(s.file("t")).open(streaming: true)
        w.write(Array("new".utf8))
        #expect(s.read("t") == "old", "not before the finish")
        try w.finish()
        #expect(s.read("t") == "new")
        try s.write("u", "old")
        let a = try OutputFile.plan(s.file("u")).open(streaming: true)
        a.write(Array("partial".utf8))
        a.abandon()
        #expect(s.read("u") == "old")
        #expect(s.entries == ["t", "u"], "no temporary file is left")
    }
}

@Suite("SameFile: an output that is an input or another output is refused (64)")
struct SameFileTests {
    @Test("By device and inode after links: the same path, a link to it, a hard link; two outputs to one new name")
    func overlaps() throws {
        let s = try Scratch()
        defer { s.remove() }
        try s.write("in", "x")
        #expect(symlink("in", s.file("l")) == 0)
        #expect(link(s.file("in"), s.file("h")) == 0)
        let input = NamedFile("the trace \(s.file("in"))", s.file("in"))
        for out in [s.file("in"), s.file("l"), s.file("h"), s.path + "/./in"] {
            #expect(throws: FileError.self) { try SameFile.refuse(outputs: [NamedFile("--out", out)], inputs: [input]) }
        }
        do {
            try SameFile.refuse(outputs: [NamedFile("--pcapng \(s.file("in"))", s.file("in"))], inputs: [input])
        } catch {
            #expect(error.exitCode == 64)
            #expect(error.description.contains("is the same file as the trace"), "\(error)")
        }
        #expect(throws: FileError.self) {
            try SameFile.refuse(outputs: [NamedFile("--trace", s.file("new")), NamedFile("--pcapng", s.file("new"))])
        }
        try SameFile.refuse(outputs: [NamedFile("--out", s.file("other"))], inputs: [input])
        // /dev/null is no file: it may be every output at once.
        try SameFile.refuse(outputs: [NamedFile("--trace", "/dev/null"), NamedFile("--pcapng", "/dev/null")])
    }
}

@Suite("Backups: unique names with O_EXCL, never replaced")
struct BackupTests {
    @Test("Two backups with one name in one second: the second gets -2, the third -3; both are 0600 and whole")
    func counter() throws {
        let s = try Scratch()
        defer { s.remove() }
        let plan = try Backups.plan(nil, environment: ["XDG_STATE_HOME": s.path])
        let first = try plan.write(Array("one".utf8), stem: "nfcbench-backup-04A1-20261201-101010")
        let second = try plan.write(Array("two".utf8), stem: "nfcbench-backup-04A1-20261201-101010")
        let third = try plan.write(Array("three".utf8), stem: "nfcbench-backup-04A1-20261201-101010")
        let dir = s.path + "/nfcbench/backups/"
        #expect(first == dir + "nfcbench-backup-04A1-20261201-101010.json")
        #expect(second == dir + "nfcbench-backup-04A1-20261201-101010-2.json")
        #expect(third == dir + "nfcbench-backup-04A1-20261201-101010-3.json")
        #expect((try? String(contentsOfFile: first, encoding: .utf8)) == "one")
        #expect((try? String(contentsOfFile: second, encoding: .utf8)) == "two")
        #expect(FilePath.status(dir).map { $0.st_mode & 0o7777 } == 0o700)
        #expect(FilePath.status(second).map { $0.st_mode & 0o7777 } == 0o600)
    }

    @Test("The default folder: XDG_STATE_HOME, else ~/.local/state; never the current folder")
    func folder() {
        #expect(Backups.folder(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]) == "/s/nfcbench/backups")
        #expect(Backups.folder(environment: ["HOME": "/h"]) == "/h/.local/state/nfcbench/backups")
    }

    @Test("--backup FILE that exists: the counter goes before its extension; the earlier file is untouched")
    func givenFile() throws {
        let s = try Scratch()
        defer { s.remove() }
        try s.write("b.json", "earlier")
        let plan = try Backups.plan(s.file("b.json"), environment: [:])
        let path = try plan.write(Array("new".utf8), stem: "ignored")
        #expect(path == s.file("b-2.json"))
        #expect(s.read("b.json") == "earlier")
        #expect(s.read("b-2.json") == "new")
        let inFolder = try Backups.plan(s.path, environment: [:]).write(Array("x".utf8), stem: "stem")
        #expect(inFolder == s.file("stem.json"))
    }
}

@Suite("InputFile: every error names the path")
struct InputFileTests {
    @Test("A missing file, a folder: no input (66) with the words of the data files")
    func errors() throws {
        let s = try Scratch()
        defer { s.remove() }
        func error(_ p: String) -> FileError? {
            do {
                _ = try InputFile.read(p)
                return nil
            } catch { return error }
        }
        #expect(error(s.file("none"))?.description == "\(s.file("none")): no such file")
        #expect(error(s.file("none"))?.exitCode == 66)
        #expect(error(s.path)?.description == "\(s.path): is a folder, not a file")
        try s.write("f", "bytes")
        #expect(try InputFile.read(s.file("f")) == Array("bytes".utf8))
    }

    @Test("DataFile.read (the data files' reader): a missing file is .notFound naming it")
    func dataFileMissing() {
        #expect(throws: DataFileError(.notFound, file: "/nonexistent/p.json", "no such file")) {
            try DataFile.read("/nonexistent/p.json")
        }
    }
}
