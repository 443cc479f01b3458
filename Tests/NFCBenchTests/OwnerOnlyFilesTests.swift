import Foundation
import Testing

/// Owner-only data and folders no one else controls (README "Threat model"): traces, pcapng,
/// SVG and tag dumps are 0600 in 0700 folders whatever the umask; a trace or lock folder that
/// is a link, someone else's or writable by others is refused with exit 69 naming it.
@Suite("Owner-only traces and dumps; trace and lock folders no one else controls")
struct OwnerOnlyFilesTests {
    /// A private scratch folder for one test (0700), removed with all it holds.
    struct Scratch {
        let path: String
        init() throws {
            path =
                FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-owner-\(UUID().uuidString)")
                .path
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        }
        func remove() { try? FileManager.default.removeItem(atPath: path) }
    }

    static func mode(_ path: String) -> Int {
        var st = stat()
        return lstat(path, &st) == 0 ? Int(st.st_mode & 0o7777) : -1
    }

    /// `nfcbench args…` under `umask 000`, so any mode left to the umask would show up as 0666/0777.
    static func runUnderUmask000(_ args: [String], environment: [String: String]) async throws -> NFCBench.Result {
        try await NFCBench.offPool {
            try NFCBench.runBlockingExecutable(
                "/bin/sh", ["-c", "umask 000; exec \"$0\" \"$@\"", NFCBench.binary.path] + args,
                environment: environment, timeout: .seconds(60))
        }
    }

    @Test("Under umask 000: the trace folder is 0700; the trace, its pcapng, the SVG plot and a dump are 0600")
    func modesWhateverTheUmask() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let traces = scratch.path + "/state/nfcbench/traces"
        let env = ["NFCBENCH_TRACE_DIR": traces, "NFCBENCH_LOCK_DIR": scratch.path + "/locks"]
        let session = try await Self.runUnderUmask000(
            ["session", "--device", "sim:hold-uri", "--first-read", "--pcapng", scratch.path + "/s.pcapng"],
            environment: env)
        #expect(session.status == 0, "\(session.stdout)\(session.stderr)")
        let dump = try await Self.runUnderUmask000(
            ["dump", "--device", "sim:hold-uri", "--out", scratch.path + "/dump.json"], environment: env)
        #expect(dump.status == 0, "\(dump.stdout)\(dump.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: traces).sorted()
        #expect(files.count == 2, "\(files)")
        let sessionTrace = try #require(files.first { $0.contains("-session-") })
        let plot = try await Self.runUnderUmask000(
            ["trace", "plot", traces + "/" + sessionTrace, "--svg", scratch.path + "/t.svg"], environment: env)
        #expect(plot.status == 0, "\(plot.stderr)")

        #expect(Self.mode(traces) == 0o700)
        #expect(Self.mode(scratch.path + "/state/nfcbench") == 0o700, "parents made for the trace folder are 0700 too")
        #expect(Self.mode(scratch.path + "/locks") == 0o700)
        for f in files { #expect(Self.mode(traces + "/" + f) == 0o600, "\(f)") }
        for f in ["s.pcapng", "t.svg", "dump.json"] { #expect(Self.mode(scratch.path + "/" + f) == 0o600, "\(f)") }
        // An existing file is replaced keeping its mode, as cp does (README "Files you name"): a
        // user who made it 0644 chose so; only a new file is made 0600.
        #expect(chmod(scratch.path + "/dump.json", 0o644) == 0)
        let again = try await Self.runUnderUmask000(
            ["dump", "--device", "sim:hold-uri", "--out", scratch.path + "/dump.json"], environment: env)
        #expect(again.status == 0)
        #expect(Self.mode(scratch.path + "/dump.json") == 0o644)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasPrefix(".") }.isEmpty,
            "the dump's temporary file is gone")
    }

    @Test("A trace folder of ours at 0755 (as earlier versions made it) is narrowed to 0700")
    func oldTraceFolderNarrowed() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let traces = scratch.path + "/traces"
        try FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: false)
        #expect(chmod(traces, 0o755) == 0)
        let r = try await NFCBench.run(
            ["session", "--device", "sim:hold-uri", "--first-read"],
            environment: ["NFCBENCH_TRACE_DIR": traces, "NFCBENCH_LOCK_DIR": scratch.path + "/locks"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.mode(traces) == 0o700)
    }

    @Test(
        "A trace or lock folder that is a link or writable by others is refused: exit 69, the folder and what is wrong",
        arguments: ["NFCBENCH_TRACE_DIR", "NFCBENCH_LOCK_DIR"])
    func refusedFolders(variable: String) async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let real = scratch.path + "/real"
        try FileManager.default.createDirectory(
            atPath: real, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let link = scratch.path + "/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        let open = scratch.path + "/open"
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: false)
        #expect(chmod(open, 0o777) == 0)
        let other = variable == "NFCBENCH_TRACE_DIR" ? "NFCBENCH_LOCK_DIR" : "NFCBENCH_TRACE_DIR"
        for (folder, problem) in [(link, "is a symbolic link"), (open, "is writable by group or others (mode 777)")] {
            let r = try await NFCBench.run(
                ["session", "--device", "sim:hold-uri", "--first-read"],
                environment: [variable: folder, other: scratch.path + "/\(other)"])
            #expect(r.status == 69, "\(folder): \(r.stdout)\(r.stderr)")
            #expect(r.stderr.contains("\(folder) \(problem)"), "\(r.stderr)")
            #expect(!r.stdout.contains("didDetectNDEFs"), "nothing ran")
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: real).isEmpty, "nothing was written through the link")
        #expect(Self.mode(open) == 0o777, "a refused folder is left as it is")
    }

    @Test(
        "A lock folder owned by another user is refused with exit 69 and a message naming it; so is a trace folder",
        .enabled(if: geteuid() == 0 || ProcessInfo.processInfo.environment["CI"] == "true"))
    func otherUsersFolder() async throws {
        try #require(geteuid() == 0, "chown to another user needs root (CI runs as root)")
        let scratch = try Scratch()
        defer { scratch.remove() }
        let theirs = scratch.path + "/theirs"
        try FileManager.default.createDirectory(
            atPath: theirs, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        #expect(chown(theirs, 65534, 65534) == 0)  // nobody:nogroup
        let lock = try await NFCBench.run(
            ["session", "--device", "sim:hold-uri", "--first-read"],
            environment: ["NFCBENCH_LOCK_DIR": theirs, "NFCBENCH_TRACE_DIR": scratch.path + "/traces"])
        #expect(lock.status == 69, "\(lock.stdout)\(lock.stderr)")
        #expect(
            lock.stderr.contains("lock folder \(theirs) is owned by uid 65534, not by this user (uid 0)"),
            "\(lock.stderr)")
        let dump = try await NFCBench.run(
            ["dump", "--device", "sim:hold-uri", "--out", scratch.path + "/d.json"],
            environment: ["NFCBENCH_LOCK_DIR": theirs, "NFCBENCH_TRACE_DIR": scratch.path + "/traces"])
        #expect(dump.status == 69, "dump honours the same lock folder rule: \(dump.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path + "/d.json"))
        let trace = try await NFCBench.run(
            ["session", "--device", "sim:hold-uri", "--first-read"],
            environment: ["NFCBENCH_LOCK_DIR": scratch.path + "/locks", "NFCBENCH_TRACE_DIR": theirs])
        #expect(trace.status == 69)
        #expect(trace.stderr.contains("trace folder \(theirs) is owned by uid 65534"), "\(trace.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: theirs).isEmpty)
    }
}
