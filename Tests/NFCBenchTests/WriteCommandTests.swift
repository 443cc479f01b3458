import Foundation
import NFCBenchTestSupport
import Testing

/// A `nfcbench virtual pn532` process serving a tag file, stopped with SIGINT; its `--save`
/// file shows what the tag holds afterwards. Its link, trace and saved tag live in a private
/// ``TestFolder``; when the last reference goes (a test that threw before ``stop()`` too) the
/// process is stopped and the folder removed.
final class VirtualPN532Process: Sendable {
    let process: Process
    let link: String
    let saved: String
    let output: Pipe
    let folder: TestFolder

    static let tags = NFCBench.packageRoot.appendingPathComponent("hardware/tags").path

    init(tag: String, timing: String = "none") throws {
        folder = try TestFolder("vpp")
        link = folder.file("pn532")
        saved = folder.file("saved.json")
        let p: Process
        let out: Pipe
        do {
            (p, out, _) = try NFCBench.start([
                "virtual", "pn532", "--pty", link, "--tag", tag, "--quiet",
                "--save", saved, "--trace", folder.file("trace.jsonl"), "--timing", timing,
            ])
        } catch {
            folder.remove()
            throw error
        }
        process = p
        output = out
        // Wait for the link (the tests that use it fail on a missing one, naming the device).
        _ = pollBlocking(timeout: .seconds(5), every: .milliseconds(10)) { [link] in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) != nil
        }
    }

    var device: String { "pn532_uart:\(link)" }

    deinit {
        if process.isRunning { process.terminate() }
        folder.remove()
    }

    /// The virtual PN532's own trace (every frame on its wire).
    var trace: String { folder.file("trace.jsonl") }

    /// SIGINT, wait, and the tag as saved.
    func stop() async throws -> String {
        try await stopWithWire().saved
    }

    /// SIGINT, wait; the tag as saved and the fake's wire trace (written as it stops).
    func stopWithWire() async throws -> (saved: String, wire: String) {
        process.interrupt()
        _ = try await waitForProcessEnd(of: process)
        let wire = (try? String(contentsOfFile: trace, encoding: .utf8)) ?? ""
        return (try String(contentsOfFile: saved, encoding: .utf8), wire)
    }

    static func pages(_ json: String) -> [String] {
        guard let start = json.range(of: "\"pages\": [")?.upperBound, let end = json[start...].firstIndex(of: "]")
        else { return [] }
        return json[start..<end].split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines.union(["\""]))
        }
    }
}

@Suite(
    "write, format and lock with the built binary on a virtual PN532", .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["CI"] == "true"
            || FileManager.default.fileExists(atPath: "/usr/bin/nfc-list")))
struct WriteCommandTests {
    @Test(
        "write --redact: the tag's UID and the message are in neither the trace, the --json result nor the lines shown")
    func redacted() async throws {
        let folder = try TestFolder("write-redact")
        defer { folder.remove() }
        let trace = folder.file("w.jsonl")
        let uid = "04A23B915C6E80"  // hardware/tags/ntag215-uri.json
        var env = ProcessInfo.processInfo.environment
        env["NFCBENCH_STATE_DIR"] = folder.file("state")
        // A copy of the tag file: a reader of this test's own (sim:tag:ntag215-uri is other tests').
        let tag = folder.file("write-redact-ntag215.json")
        try FileManager.default.copyItem(atPath: VirtualPN532Process.tags + "/ntag215-uri.json", toPath: tag)
        let base = ["write", "--device", "sim:tag:\(tag)", "--ndef", "uri:https://secret.example", "--redact"]
        let json = await InProcessCLI.run(
            base + ["--json", "--trace", trace, "--backup", folder.file("b1")], environment: env)
        #expect(json.status == 0, "\(json.stderr)")
        let text = await InProcessCLI.run(base + ["--no-trace", "--backup", folder.file("b2")], environment: env)
        #expect(text.status == 0, "\(text.stderr)")
        let written = try String(contentsOfFile: trace, encoding: .utf8)
        let outcome = try #require(written.split(separator: "\n").first { $0.contains("\"write_outcome\"") })
        #expect(outcome.contains("\"tag\":\"UID redacted:7 bytes"), "\(outcome)")
        #expect(json.stdout.contains("\"tag\":\"UID redacted:7 bytes"), "\(json.stdout)")
        #expect(json.stdout.contains("\"command\":\"write\""), "\(json.stdout)")
        for (what, out) in [
            ("trace", written), ("--json", json.stdout + json.stderr), ("text", text.stdout + text.stderr),
        ] {
            #expect(!out.contains(uid) && !out.contains("secret"), "\(what): \(out)")
        }
    }

    @Test("write --dry-run prints the exact page writes and leaves the tag image unchanged")
    func dryRun() async throws {
        let fake = try VirtualPN532Process(tag: "\(VirtualPN532Process.tags)/ntag215-uri.json")
        let r = try await NFCBench.run(
            ["write", "--device", fake.device, "--ndef", "text@de:Hallo", "--dry-run"], timeout: .seconds(30))
        let after = try await fake.stop()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("page 4: 03 00 D1 01"), "length 0 first: \(r.stdout)")
        #expect(r.stdout.contains("page 4: 03 0C D1 01"), "the real length last")
        #expect(r.stdout.contains("dry run: nothing written"))
        let original = try String(contentsOfFile: "\(VirtualPN532Process.tags)/ntag215-uri.json", encoding: .utf8)
        #expect(VirtualPN532Process.pages(after) == VirtualPN532Process.pages(original))
        #expect(VirtualPN532Process.pages(after).count == 135)
    }

    @Test("write saves a backup of the old content first, then the tag holds the new message")
    func writeWithBackup() async throws {
        let fake = try VirtualPN532Process(tag: "\(VirtualPN532Process.tags)/ntag215-uri.json")
        let folder = try TestFolder("backup")
        defer { folder.remove() }
        let backup = folder.file("backup.json")
        let r = try await NFCBench.run(
            ["write", "--device", fake.device, "--ndef", "uri:https://nfcbench.dev/x", "--backup", backup],
            timeout: .seconds(30))
        let after = try await fake.stop()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("read back identical"))
        let old = try String(contentsOfFile: backup, encoding: .utf8)
        let original = try String(contentsOfFile: "\(VirtualPN532Process.tags)/ntag215-uri.json", encoding: .utf8)
        // A tag never reveals its PWD (page 133 on an NTAG215): READ returns 00s there.
        var expected = VirtualPN532Process.pages(original)
        expected[133] = "00000000"
        #expect(VirtualPN532Process.pages(old) == expected, "the backup holds the old image")
        // 03 13 | D1 01 0F 55 04 "nfcbench.dev/x" | FE
        let pages = VirtualPN532Process.pages(after)
        #expect(pages[4] == "0313D101")
        #expect(pages[5] == "0F55046E")
        #expect(pages.dropFirst(4).prefix(6).joined().contains("6E666362656E63682E6465762F78FE"))
    }

    @Test("write is refused on a read-only CC, with nothing written and no backup needed")
    func readOnlyRefused() async throws {
        var text = try String(contentsOfFile: "\(VirtualPN532Process.tags)/ntag215-uri.json", encoding: .utf8)
        text = text.replacingOccurrences(of: "\"E1103E00\"", with: "\"E1103E0F\"")
        let path = "\(NSTemporaryDirectory())nfcbench-ro-\(getpid()).json"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fake = try VirtualPN532Process(tag: path)
        let r = try await NFCBench.run(["write", "--device", fake.device, "--ndef", "text:Hi"], timeout: .seconds(30))
        let after = try await fake.stop()
        #expect(r.status == 1)
        #expect(r.stderr.contains("read-only"), "\(r.stderr)")
        #expect(VirtualPN532Process.pages(after) == VirtualPN532Process.pages(text))
    }

    @Test(
        "format writes an empty NDEF message (03 00 FE) after the Lock Control TLV; --lock needs the confirmation flag")
    func formatAndLockGuard() async throws {
        let fake = try VirtualPN532Process(tag: "\(VirtualPN532Process.tags)/ntag213-text.json")
        let formatBackup = "\(NSTemporaryDirectory())nfcbench-fmt-\(getpid()).json"
        defer { try? FileManager.default.removeItem(atPath: formatBackup) }
        let r = try await NFCBench.run(
            ["format", "--device", fake.device, "--backup", formatBackup], timeout: .seconds(30))
        let refused = await InProcessCLI.run(["write", "--device", fake.device, "--ndef", "text:x", "--lock"])
        let after = try await fake.stop()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("empty NDEF message"))
        // NTAG213 as shipped: Lock Control TLV 01 03 A0 0C 34 first, then the NDEF TLV.
        let pages = VirtualPN532Process.pages(after)
        #expect(pages[4] == "0103A00C")
        #expect(pages[5].hasPrefix("340300FE"))
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("irreversible"))
    }

    /// In this process (``InProcessCLI/run(_:environment:)``): neither run opens a device.
    @Test("A bad --ndef SPEC is a data error before any device is touched")
    func badSpec() async throws {
        let r = await InProcessCLI.run(["write", "--device", "pn532_uart:/nonexistent", "--ndef", "bogus:thing"])
        #expect(r.status == 65)
        #expect(r.stderr.contains("unknown NDEF spec kind"))
        let noScenario = await InProcessCLI.run(["write", "--device", "sim:no-such-scenario", "--ndef", "text:a"])
        #expect(noScenario.status == 66, "a device string naming no scenario file: no input")
    }

    @Test("lock sets CC write access Fh and the static lock bytes; a later write is refused")
    func lockThenWrite() async throws {
        let fake = try VirtualPN532Process(tag: "\(VirtualPN532Process.tags)/ntag213-text.json")
        let lock = try await NFCBench.run(
            ["lock", "--device", fake.device, "--yes-i-understand-this-is-irreversible"], timeout: .seconds(30))
        let write = try await NFCBench.run(
            ["write", "--device", fake.device, "--ndef", "text:again"], timeout: .seconds(30))
        let pages = VirtualPN532Process.pages(try await fake.stop())
        #expect(lock.status == 0, "\(lock.stderr)")
        #expect(lock.stdout.contains("read-only for good"))
        #expect(pages[3] == "E110120F")
        #expect(pages[2].hasSuffix("FFFF"))
        #expect(write.status == 1)
        #expect(write.stderr.contains("read-only"))
    }
}
