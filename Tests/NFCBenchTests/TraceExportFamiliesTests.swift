import Foundation
import NFCTrace
import Testing

/// FeliCa and ISO 15693 sessions exported to pcapng, as tshark reads them: no FeliCa frame is
/// ever dissected as ISO 14443 (they reach Wireshark's `felica` dissector through an
/// exported-PDU interface), and ISO 15693 frames, which no Wireshark dissector reads, are left
/// out with their count said (the message, the trace's `pcapng_skipped` record, `--json`).
/// Simulated reader only: no device needed.
@Suite("pcapng of FeliCa and ISO 15693 sessions, read by tshark")
struct TraceExportFamiliesTests {
    static let idm = "0x012e4ce445055b87"

    /// Every packet is FeliCa to tshark, and none is ISO 14443.
    static func expectAllFeliCa(_ v: TsharkView, _ what: String) {
        #expect(!v.rows.isEmpty, "\(what): no packets")
        for row in v.rows {
            let protocols = row["frame.protocols"] ?? ""
            #expect(
                protocols == "exported_pdu:felica" || protocols == "exported_pdu:felica:data",
                "\(what): packet \(row["frame.number"] ?? "?") is \(protocols) (\(row["_ws.col.Info"] ?? ""))")
            #expect(row["frame.interface_id"] == "1", "\(what): the FeliCa interface")
            #expect(row["iso14443.event"]?.isEmpty ?? true)
        }
        #expect(v.malformedFree, "\(what)")
    }

    static func rows(_ v: TsharkView, opcode: String) -> [[String: String]] {
        v.rows.filter { $0["felica.opcode"] == opcode }
    }

    @Test("A FeliCa NDEF read, live (--pcapng) and exported: Polling, Check and their answers as FeliCa, fields right")
    func feliCaRead() async throws {
        let dir = try TraceCLITests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        func path(_ n: String) -> String { dir.appendingPathComponent(n).path }
        let live = try await NFCBench.run(
            [
                "session", "--device", "sim:tag:felica-lite-s-uri", "--first-read", "--trace", path("s.jsonl"),
                "--pcapng", path("live.pcapng"),
            ],
            environment: TraceCLITests.env(dir))
        #expect(live.status == 0, "\(live.stderr)")
        #expect(!live.stderr.contains("left out"), "nothing is left out of a FeliCa export")
        let export = await InProcessCLI.run([
            "trace", "export", path("s.jsonl"), "--pcapng", path("s.pcapng"), "--json",
        ])
        #expect(export.status == 0, "\(export.stderr)")
        let result = try JSONValue(parsing: export.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        let v = try await TsharkView.view(path("s.pcapng"))
        #expect(result["packets"]?.intValue == Int64(v.rows.count))
        #expect(result["felica_packets"]?.intValue == Int64(v.rows.count))
        #expect(result["skipped"] == .array([]))
        let l = try await TsharkView.view(path("live.pcapng"))
        for (view, what) in [(v, "trace export"), (l, "session --pcapng")] {
            Self.expectAllFeliCa(view, what)
            // The NDEF read's Polling for system 12FC (the length byte dropped: the opcode is 00).
            let polls = Self.rows(view, opcode: "0x00")
            #expect(polls.contains { $0["felica.sys_code"] == "0x12fc" }, "\(what): \(view.info)")
            let answers = Self.rows(view, opcode: "0x01")
            #expect(!answers.isEmpty && answers.allSatisfy { $0["felica.idm"] == Self.idm })
            #expect(answers.contains { $0["felica.pnm"] == "0x00f1000000014300" })
            // Check = Read Without Encryption: the IDm, service 000B (little-endian on the wire,
            // shown as 0x0b00 by the dissector), and its answer's status flags.
            let checks = Self.rows(view, opcode: "0x06")
            #expect(checks.count == 2, "\(what): the attribute block, then the NDEF blocks")
            #expect(checks.allSatisfy { $0["felica.idm"] == Self.idm && $0["felica.svc_code"] == "0x0b00" })
            #expect(checks.map { $0["felica.blocks"] } == ["1", "2"])
            let checked = Self.rows(view, opcode: "0x07")
            #expect(checked.count == 2 && checked.allSatisfy { $0["felica.status.flag1"] == "0x00" })
            #expect(view.info.contains("Read Without Encryption (Response)"))
        }
        #expect(l.rows.count == v.rows.count, "--pcapng during the run and trace export after it agree")
    }

    @Test(
        "A FeliCa NDEF write's trace exported: the Updates are Write Without Encryption to tshark, and --redact zeroes the IDm"
    )
    func feliCaWrite() async throws {
        let dir = try TraceCLITests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        func path(_ n: String) -> String { dir.appendingPathComponent(n).path }
        let tag = path("felica.json")
        try FileManager.default.copyItem(
            atPath: NFCBench.packageRoot.appendingPathComponent("hardware/tags/felica-lite-s-uri.json").path,
            toPath: tag)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: tag)
        let w = try await NFCBench.run(
            [
                "write", "--device", "sim:tag:\(tag)", "--ndef", "uri:https://example.com/w", "--trace",
                path("w.jsonl"), "--backup", path("backup.json"),
            ],
            environment: TraceCLITests.env(dir))
        #expect(w.status == 0, "\(w.stderr)")
        let export = await InProcessCLI.run(["trace", "export", path("w.jsonl"), "--pcapng", path("w.pcapng")])
        #expect(export.status == 0, "\(export.stderr)")
        let v = try await TsharkView.view(path("w.pcapng"))
        Self.expectAllFeliCa(v, "write")
        let updates = Self.rows(v, opcode: "0x08")
        #expect(updates.count >= 3, "WriteF on, the data blocks, WriteF off: \(v.info)")
        #expect(Self.rows(v, opcode: "0x09").count == updates.count, "each Update answered")
        #expect(
            updates.allSatisfy {
                ($0["frame.comment"] ?? "").hasPrefix("Update (Write Without Encryption): service 0009, block ")
            })
        let redacted = await InProcessCLI.run([
            "trace", "export", path("w.jsonl"), "--pcapng", path("r.pcapng"), "--redact",
        ])
        #expect(redacted.status == 0)
        let r = try await TsharkView.view(path("r.pcapng"))
        Self.expectAllFeliCa(r, "write, redacted")
        #expect(r.rows.count == v.rows.count)
        #expect(!r.rows.contains { $0["felica.idm"] == Self.idm }, "the IDm is zeros")
        #expect(r.rows.contains { $0["felica.idm"] == "0x0000000000000000" })
    }

    @Test(
        "ISO 15693 sessions: no frame written as anything; the message, the trace and --json say how many were left out and why",
        arguments: ["icode-slix-text", "st25tv-uri"])
    func iso15693Skipped(tag: String) async throws {
        let dir = try TraceCLITests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        func path(_ n: String) -> String { dir.appendingPathComponent(n).path }
        let reason = "ISO 15693 frames: Wireshark has no dissector; kept in the trace"
        let live = try await NFCBench.run(
            [
                "session", "--device", "sim:tag:\(tag)", "--first-read", "--json", "--trace", path("s.jsonl"),
                "--pcapng", path("live.pcapng"),
            ],
            environment: TraceCLITests.env(dir))
        #expect(live.status == 0, "\(live.stderr)")
        let trace = try TraceContents(path: path("s.jsonl"))
        let frames = trace.records.filter { $0["event"]?.stringValue == "frame" }.count
        #expect(frames > 3, "the session read the tag through 15693 frames")
        #expect(
            live.stderr.contains("--pcapng \(path("live.pcapng")): \(frames) frames left out (\(reason))"),
            "\(live.stderr)")
        let skippedRecord = try #require(trace.records.last)
        #expect(skippedRecord["event"]?.stringValue == "pcapng_skipped")
        #expect(skippedRecord["frames"]?.intValue == Int64(frames))
        #expect(skippedRecord["family"]?.stringValue == "iso15693")
        #expect(skippedRecord["reason"]?.stringValue == reason)
        let printed = try JSONValue(parsing: try #require(live.stdoutLines.last))
        #expect(printed["event"]?.stringValue == "pcapng_skipped", "--json prints it too")
        #expect(try await TsharkView.view(path("live.pcapng")).rows.isEmpty)

        let export = await InProcessCLI.run([
            "trace", "export", path("s.jsonl"), "--pcapng", path("e.pcapng"), "--json",
        ])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stderr.contains("0 packets to \(path("e.pcapng")); \(frames) frames left out (\(reason))"))
        let result = try JSONValue(parsing: export.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(result["packets"]?.intValue == 0)
        let skipped = try #require(
            result["skipped"].flatMap { v -> [JSONValue]? in if case .array(let a) = v { a } else { nil } },
            "\(export.stdout)")
        #expect(skipped.count == 1)
        #expect(skipped.first?["frames"]?.intValue == Int64(frames))
        #expect(skipped.first?["family"]?.stringValue == "iso15693")
        #expect(skipped.first?["reason"]?.stringValue == reason)
        #expect(try await TsharkView.view(path("e.pcapng")).rows.isEmpty, "no 15693 frame as ISO 14443 or anything")
    }

    @Test("trace export --json with --pcapng -: both would be standard output, refused (64)")
    func jsonAndStdout() async {
        let r = await InProcessCLI.run(["trace", "export", "t.jsonl", "--pcapng", "-", "--json"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--json and --pcapng - both write to standard output"))
    }
}
