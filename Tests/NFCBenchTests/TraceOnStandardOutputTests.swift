import Foundation
import NFCBenchTestSupport
import NFCTrace
import Testing

/// `--trace -` (and every other output file on standard output): stdout is that file alone, so a
/// trace piped to `jq` or `nfcbench trace show -` is JSON Lines throughout; the command's text
/// lines go to stderr, as `curl -o -` prints its progress there. Where the command's own result
/// is printed on stdout (dump's tag file without `--out`, `virtual pn532 --pty - --quiet`'s pty
/// path, `--json`'s records) the pair is refused before anything runs. In this process; each
/// case's reader is a copy of a tag file under a name of its own.
@Suite("--trace -: stdout carries the trace alone, every line JSON, the text lines on stderr")
struct TraceOnStandardOutputTests {
    static let tags = NFCBench.packageRoot.appendingPathComponent("hardware/tags").path

    /// One command run with `--trace -`: its argv (after the reader and folder are known), a line
    /// its text says (now on stderr), and the status it ends with.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var tag: String
        var argv: @Sendable (_ device: String, _ folder: TestFolder) -> [String]
        var says: String
        var status: Int32 = 0
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "session --first-read", tag: "ntag215-uri",
            argv: { d, _ in ["session", "--device", d, "--first-read", "--timeout", "30s"] },
            // The begin line is said in the command's task (the delegate's lines, from the session's
            // thread, reach this process's own stderr: InProcessCLI's limit).
            says: "begin          session 1 (ndef, invalidateAfterFirstRead)"),
        Case(
            name: "poll --once", tag: "ntag215-uri",
            argv: { d, _ in ["poll", "--device", d, "--once", "--timeout", "30s"] },
            says: "ISO14443A UID 04A23B915C6E80"),
        Case(
            name: "apdu", tag: "t4t-uri", argv: { d, _ in ["apdu", "--device", d, "00A4040007D276000085010100"] },
            says: "< 90 00 : success"),
        Case(name: "raw", tag: "ntag215-uri", argv: { d, _ in ["raw", "--device", d, "3000"] }, says: "(READ)"),
        Case(
            name: "write", tag: "ntag215-uri",
            argv: { d, f in ["write", "--device", d, "--ndef", "text:hi", "--backup", f.file("backup.json")] },
            says: "wrote 9 bytes of NDEF; read back identical"),
        Case(
            name: "write --dry-run", tag: "ntag215-uri",
            argv: { d, _ in ["write", "--device", d, "--ndef", "text:hi", "--dry-run"] },
            says: "dry run: would write NDEF message of 9 bytes"),
        Case(
            name: "format", tag: "ntag215-uri",
            argv: { d, f in ["format", "--device", d, "--backup", f.file("backup.json")] },
            says: "wrote 0 bytes of NDEF"),
        Case(
            name: "lock --dry-run", tag: "ntag215-uri", argv: { d, _ in ["lock", "--device", d, "--dry-run"] },
            says: "would send 3 WRITE (A2) commands"),
        Case(
            name: "restore --dry-run", tag: "ntag215-uri",
            argv: { d, _ in ["restore", "--device", d, "--dry-run", "\(tags)/ntag215-uri.json"] },
            says: "dry run: nothing written"),
        Case(
            name: "measure read", tag: "ntag215-uri",
            argv: { d, _ in ["measure", "read", "--device", d, "--count", "3"] }, says: "(n=3)"),
        Case(
            name: "walk (the phone model)", tag: "ntag215-uri",
            argv: { _, _ in ["walk", "--profiles", "emv-payment"] }, says: "t (ms)  reader"),
        Case(
            name: "dump --out FILE", tag: "ntag215-uri",
            argv: { d, f in ["dump", "--device", d, "--out", f.file("dump.json")] }, says: "dumped ntag215"),
    ]

    @Test("stdout is JSON Lines that 'trace show' reads; the text lines are on stderr", arguments: cases)
    func traceAlone(_ c: Case) async throws {
        let stem = "trace-stdout-" + c.name.filter { $0.isLetter }
        let folder = try TestFolder(stem)
        defer { folder.remove() }
        let device = folder.file("\(stem).json")
        try FileManager.default.copyItem(atPath: "\(Self.tags)/\(c.tag).json", toPath: device)
        let r = await InProcessCLI.run(c.argv("sim:tag:\(device)", folder) + ["--trace", "-"])
        #expect(r.status == c.status, "stderr: \(r.stderr)")
        let lines = r.stdoutLines
        try #require(lines.count > 1, "the trace is on stdout: \(r.stdout)")
        for (i, line) in lines.enumerated() {
            #expect(throws: Never.self, "stdout line \(i + 1) is JSON: \(line)") { try JSONValue(parsing: line) }
        }
        #expect(lines[0].contains("\"event\":\"header\""), "\(lines[0])")
        #expect(!r.stdout.contains(c.says), "the text line is not on stdout")
        #expect(r.stderr.contains(c.says), "the text line is on stderr: \(r.stderr)")
        // What a pipe into 'nfcbench trace show -' reads, from a file here (the same loader).
        let saved = folder.file("stdout.jsonl")
        try r.stdout.write(toFile: saved, atomically: false, encoding: .utf8)
        let shown = await InProcessCLI.run(["trace", "show", saved])
        #expect(shown.status == 0, "trace show: \(shown.stderr)")
        #expect(!shown.stdout.isEmpty)
    }

    @Test("--pcapng -: the pcapng alone on stdout, the text lines on stderr")
    func pcapngAlone() async throws {
        let folder = try TestFolder("trace-stdout-pcapng")
        defer { folder.remove() }
        let device = folder.file("trace-stdout-pcapng.json")
        try FileManager.default.copyItem(atPath: "\(Self.tags)/ntag215-uri.json", toPath: device)
        let r = await InProcessCLI.run([
            "poll", "--device", "sim:tag:\(device)", "--once", "--timeout", "30s", "--no-trace", "--pcapng", "-",
        ])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        // A pcapng starts with its Section Header Block's type, 0A 0D 0D 0A.
        #expect(Array(r.stdout.utf8.prefix(4)) == [0x0A, 0x0D, 0x0D, 0x0A])
        #expect(!r.stdout.contains("ISO14443A"))
        #expect(r.stderr.contains("ISO14443A UID 04A23B915C6E80"), "\(r.stderr)")
    }

    @Test("Where stdout is the command's own result, a trace there too is refused before anything runs (64)")
    func refused() {
        #expect(
            InProcessCLI.mistake(["dump", "--device", "sim:tap-uri", "--trace", "-"])
                == "the tag file (no --out) and --trace - both write to standard output: give --trace a file name,"
                + " or --out FILE")
        #expect(
            InProcessCLI.mistake(["dump", "--device", "sim:tap-uri", "--pcapng", "/dev/stdout"])?.hasPrefix(
                "the tag file (no --out) and --pcapng /dev/stdout both write to standard output") == true)
        #expect(InProcessCLI.mistake(["dump", "--device", "sim:tap-uri", "--out", "d.json", "--trace", "-"]) == nil)
        #expect(
            InProcessCLI.mistake(["virtual", "pn532", "--pty", "-", "--quiet", "--tag", "ntag215-uri", "--trace", "-"])?
                .hasPrefix("--pty - --quiet prints the pty's path on standard output, and --trace - writes there too")
                == true)
        #expect(
            InProcessCLI.mistake(["virtual", "pn532", "--pty", "-", "--tag", "ntag215-uri", "--trace", "-"]) == nil)
    }
}
