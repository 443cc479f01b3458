import Foundation
import NFCTrace
import ReaderSession
import Testing

/// `nfcbench demo`, the README's main job, on both virtual benches.
@Suite("nfcbench demo", .serialized)
struct DemoTests {
    static func endings(_ stdout: String) throws -> [Int64] {
        try stdout.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
            .filter { $0["event"]?.stringValue == "didInvalidateWithError" }
            .compactMap { $0["code"]?.intValue }
    }

    @Test("On the virtual PN532 (no daemon): a first read (204), a timeout (201), a busy reader (203), then Done (200)")
    func pn532Bench() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try await NFCBench.run(
            ["demo", "--bench", "pn532", "--timeout", "0.5", "--json"],
            environment: [
                "NFCBENCH_LOCK_DIR": dir.appendingPathComponent("locks").path,
                "NFCBENCH_TRACE_DIR": dir.appendingPathComponent("traces").path,
            ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Self.endings(r.stdout) == [204, 201, 203, 200])
        #expect(r.stdout.contains("https://example.com/nfcbench"))
        let lines = try r.stdout.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        #expect(lines.first?["schema"]?.stringValue == TraceWriter.schema)
        // Session 4 begins after session 3's didBecomeActive is written, not only after the
        // system counts it active: the output reads in the order things happened.
        let active3 = lines.firstIndex { $0["event"]?.stringValue == "didBecomeActive" && $0["session"]?.intValue == 3 }
        let begin4 = lines.firstIndex { $0["event"]?.stringValue == "begin" && $0["session"]?.intValue == 4 }
        #expect(active3 != nil && begin4 != nil && active3! < begin4!, "\(r.stdout)")
        // --json prints the trace: the file holds the same records.
        let traces = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("traces").path)
        #expect(traces.count == 1)
        let file = try String(
            contentsOfFile: dir.appendingPathComponent("traces").appendingPathComponent(traces[0]).path, encoding: .utf8
        )
        #expect(file == r.stdout)
        // The issue's "done when": the demo's trace exported, tshark lists its exchanges.
        let pcapng = dir.appendingPathComponent("d.pcapng").path
        let export = try await NFCBench.run([
            "trace", "export", dir.appendingPathComponent("traces").appendingPathComponent(traces[0]).path,
            "--pcapng", pcapng,
        ])
        #expect(export.status == 0, "\(export.stderr)")
        let v = try await TsharkView.view(pcapng)
        #expect(v.comments.contains("READ page 4"), "the NTAG215's NDEF read: \(v.comments)")
        #expect(v.info.contains("Anticollision"))
        #expect(v.malformedFree)
    }

    @Test("With a private pcscd and the vpcd card: the same three endings; every text line comes from the trace")
    func pcscdBench() async throws {
        let r = try await PrivateBench.run(
            #""$B" demo --timeout 0.5; echo "exit $?"; cat "$NFCBENCH_TRACE_DIR"/*.jsonl"#)
        try PrivateBench.require(r)
        let parts = r.stdout.components(separatedBy: "\n")
        let exitLine = parts.first { $0.hasPrefix("exit ") }
        #expect(exitLine == "exit 0", "\(r.stdout)\n\(r.stderr)")
        #expect(r.stdout.contains("a private pcscd"))
        #expect(r.stdout.contains("didInvalidateWithError 204"))
        #expect(r.stdout.contains("didInvalidateWithError 201"))
        #expect(r.stdout.contains("didInvalidateWithError 203"))
        let traceLine = parts.first { $0.hasPrefix("trace: ") }
        #expect(traceLine != nil, "the demo prints its trace's path")
        let records = parts.filter { $0.hasPrefix("{") }.compactMap { try? JSONValue(parsing: $0) }
        #expect(try Self.endings(records.map(\.serialized).joined(separator: "\n")) == [204, 201, 203, 200])
        #expect(
            records.contains {
                $0["event"]?.stringValue == "demo" && $0["message"]?.stringValue?.contains("private pcscd") == true
            })
    }
}
