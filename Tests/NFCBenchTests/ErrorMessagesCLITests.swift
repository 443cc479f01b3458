import Foundation
import Testing

@testable import nfcbench

/// Errors a person can act on (issue 14, item 8), through the built binary: the sysexits
/// code the README gives (64 usage, 65 data, 66 no input, 69 unavailable, 73 can't create),
/// the cause named once, and never a Foundation error dump.
@Suite("Errors a person can act on: messages and sysexits codes")
struct ErrorMessagesCLITests {
    final class Folder: @unchecked Sendable {
        let dir: URL
        init() throws {
            dir = FileManager.default.temporaryDirectory.appendingPathComponent("errors-cli-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(at: dir) }
        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
        var traces: String { path("traces") }
        func run(_ args: [String], environment: [String: String] = [:]) async throws -> NFCBench.Result {
            var env = ["NFCBENCH_TRACE_DIR": traces, "NFCBENCH_LOCK_DIR": path("locks")]
            for (k, v) in environment { env[k] = v }
            return try await NFCBench.run(args, environment: env, timeout: .seconds(30))
        }
        var traceFiles: [String] { (try? FileManager.default.contentsOfDirectory(atPath: traces)) ?? [] }
    }

    static func noDump(_ r: NFCBench.Result) {
        #expect(!r.stderr.contains("Error Domain"), "\(r.stderr)")
        #expect(!r.stderr.contains("NSCocoaErrorDomain"), "\(r.stderr)")
        #expect(!r.stderr.contains("The operation could not be completed"), "\(r.stderr)")
    }

    @Test("An unknown option is named before anything the command misses because of it")
    func unknownOptionFirst() async throws {
        let f = try Folder()
        let r = try await f.run(["session", "--bogus"])
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("error: unknown option '--bogus'\n"), "\(r.stderr)")
        #expect(!r.stderr.contains("--device is required"))
        let typo = try await f.run(["session", "--device", "sim:tap-uri", "--timout", "3"])
        #expect(typo.status == 64)
        #expect(typo.stderr.contains("unknown option '--timout' (did you mean '--timeout'?)"), "\(typo.stderr)")
        #expect(f.traceFiles.isEmpty, "nothing ran")
    }

    @Test("Seconds are decimal numbers as people write them; the message gives the range the check applies")
    func seconds() async throws {
        for bad in ["0x10", "0", "1e1", "inf", "-1", "0.0000001"] {
            let r = InProcessCLI.mistake(["session", "--device", "sim:tap-uri", "--timeout", bad]) ?? ""
            #expect(r.hasPrefix("--timeout takes a duration more than 0"), "\(bad): \(r)")
            #expect(r.hasSuffix("not '\(bad)'"), "\(bad): \(r)")
        }
        let session = try #require(Registry.commands.first { $0.path == ["session"] })
        for (text, value) in [("16", Duration.seconds(16)), ("0.5", .milliseconds(500)), (".5", .milliseconds(500))] {
            let o = try session.parse(["--device", "sim:tap-uri", "--timeout", text])
            #expect(o.duration("timeout") == value, "\(text)")
        }
        let dump = try #require(Registry.commands.first { $0.path == ["dump"] })
        #expect(
            try dump.parse(["--device", "d", "--wait", "0"]).duration("timeout") == .zero,
            "0 is a wait (only a tag already there)")
        let measure = try #require(Registry.commands.first { $0.path == ["measure"] })
        #expect(throws: CLIError.self) { try measure.parse(["--device", "d", "apdu", "--count", "0x10"]) }
    }

    @Test(
        "measure: WHAT may come after the options; without it the message asks for it, not for a measurement named like the device"
    )
    func measureWithoutWhat() async throws {
        let f = try Folder()
        let r = try await f.run(["measure", "--device", "pcsc:Virtual PCD 00 00"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("say what to measure first"), "\(r.stderr)")
        #expect(!r.stderr.contains("unknown measurement 'pcsc:"))
        let late = try await f.run(["measure", "--device", "sim:tap-uri", "apdu", "--count", "3"])
        #expect(late.status == 0, "\(late.stderr)")
        #expect(late.stdout.contains("apdu on sim:tap-uri: min "), "\(late.stdout)")
    }

    @Test("A trace folder that can't be made: 73, the setting that chose it, no Foundation dump")
    func badTraceFolder() async throws {
        let f = try Folder()
        let file = f.path("a-file")
        try "x".write(toFile: file, atomically: true, encoding: .utf8)
        let r = try await f.run(
            ["session", "--device", "sim:tap-uri", "--first-read"], environment: ["NFCBENCH_TRACE_DIR": file])
        #expect(r.status == 73)
        #expect(r.stderr.contains("can't write the trace: trace folder \(file) is a file, not a folder"), "\(r.stderr)")
        #expect(r.stderr.contains("$NFCBENCH_TRACE_DIR"))
        Self.noDump(r)
        let inside = try await f.run(
            ["session", "--device", "sim:tap-uri", "--first-read"],
            environment: ["NFCBENCH_TRACE_DIR": file + "/traces"])
        #expect(inside.status == 73)
        #expect(inside.stderr.contains("trace folder \(file) is a file, not a folder"), "\(inside.stderr)")
        Self.noDump(inside)
    }

    @Test("dump --out in a missing folder: 73 said once, before the reader is touched; a dump is written 0600")
    func dumpOut() async throws {
        let f = try Folder()
        let out = f.path("missing/x.json")
        let r = try await f.run(["dump", "--device", "sim:tap-uri", "--out", out])
        #expect(r.status == 73)
        #expect(r.stderr == "error: --out \(out): the folder \(f.path("missing")) does not exist\n")
        #expect(f.traceFiles.isEmpty, "no reader was opened")
        let good = f.path("tag.json")
        let ok = try await f.run(["dump", "--device", "sim:tap-uri", "--out", good])
        #expect(ok.status == 0, "\(ok.stderr)")
        let mode = try FileManager.default.attributesOfItem(atPath: good)[.posixPermissions] as? Int
        #expect(mode == 0o600, "a tag file holds tag data")
        let folder = try await f.run(["dump", "--device", "sim:tap-uri", "--out", f.dir.path])
        #expect(folder.status == 73)
        #expect(folder.stderr.contains("is a folder; give a file name"))
    }

    @Test("write: a backup that can't be made is 73 before the device is opened")
    func backupFirst() async throws {
        let f = try Folder()
        let r = try await f.run([
            "write", "--device", "pn532_uart:/nonexistent-reader", "--ndef", "text:hi", "--backup", f.path("no/b.json"),
        ])
        #expect(r.status == 73, "\(r.stderr)")
        #expect(r.stderr.contains("--backup \(f.path("no/b.json")): the folder"))
    }

    @Test("A serial path that is missing or not a serial device is said so, never blamed on another program")
    func pn532Paths() async throws {
        let f = try Folder()
        let missing = try await f.run(["session", "--device", "pn532_uart:\(f.path("gone"))", "--timeout", "1"])
        #expect(missing.status == 69)
        #expect(missing.stderr.contains("\(f.path("gone")) does not exist"), "\(missing.stderr)")
        #expect(!missing.stderr.contains("another program"))
        let plain = f.path("plain-file")
        try "".write(toFile: plain, atomically: true, encoding: .utf8)
        let notSerial = try await f.run(["dump", "--device", "pn532_uart:\(plain)", "--wait", "1"])
        #expect(notSerial.status == 69)
        #expect(notSerial.stderr.contains("\(plain) is not a serial device"), "\(notSerial.stderr)")
        #expect(!notSerial.stderr.contains("another program"))
        #expect(notSerial.stderr.components(separatedBy: "cannot open").count == 2, "said once: \(notSerial.stderr)")
        // A session says why the reader failed before its 202.
        let session = try await f.run(["session", "--device", "pn532_uart:\(plain)", "--timeout", "5"])
        #expect(session.status == 12)
        let failed = session.stdoutLines.first { $0.contains("readerFailed") }
        #expect(failed?.contains("is not a serial device") == true, "\(session.stdout)")
    }

    @Test(
        "A lock folder on a read-only mount: exit 69 naming it and NFCBENCH_LOCK_DIR, not a Core NFC ending",
        .enabled(if: geteuid() == 0, "needs root for a read-only bind mount in a mount namespace"))
    func readOnlyLockFolder() async throws {
        let f = try Folder()
        let ro = f.path("ro")
        try FileManager.default.createDirectory(
            atPath: ro, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let script =
            #"mount --bind -o ro "$RO" "$RO" || exit 99; NFCBENCH_LOCK_DIR="$RO" "$B" session --device sim:tap-uri --first-read"#
        let r = try await NFCBench.offPool {
            try NFCBench.runBlockingExecutable(
                "/usr/bin/unshare", ["-m", "--", "/bin/sh", "-c", script],
                environment: ["RO": ro, "B": NFCBench.binary.path, "NFCBENCH_TRACE_DIR": f.path("traces")],
                timeout: .seconds(30))
        }
        #expect(r.status == 69, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("lock folder \(ro) cannot be written"), "\(r.stderr)")
        #expect(r.stderr.contains("set NFCBENCH_LOCK_DIR"), "\(r.stderr)")
        #expect(!r.stdout.contains("didInvalidateWithError"), "\(r.stdout)")
    }

    @Test("trace files: a missing one is 66; a bad line gives its line and column")
    func traceFiles() async throws {
        let f = try Folder()
        let missing = try await f.run(["trace", "show", f.path("none.jsonl")])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("no such file"), "\(missing.stderr)")
        let bad = f.path("bad.jsonl")
        try "{\"t_us\": 0, \"event\": \"a\"}\n{\"t_us\" 1}\n{\"t_us\": 2, \"event\": \"b\"}\n".write(
            toFile: bad, atomically: true, encoding: .utf8)
        let r = try await f.run(["trace", "show", bad])
        #expect(r.status == 65)
        #expect(r.stderr.hasPrefix("error: \(bad):2:9: "), "\(r.stderr)")
        // Options may come before the trace they apply to.
        let svg = try await f.run(["trace", "plot", "--svg", f.path("no/x.svg"), bad])
        #expect(svg.status == 73, "\(svg.stderr)")
        // A run killed mid-write leaves a cut last line: read without it, and said.
        let cut = f.path("cut.jsonl")
        try "{\"t_us\": 0, \"event\": \"a\"}\n{\"t_us\": 1, \"ev".write(toFile: cut, atomically: true, encoding: .utf8)
        let shown = try await f.run(["trace", "show", cut])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stderr.contains("its last line is cut"), "\(shown.stderr)")
    }
}
