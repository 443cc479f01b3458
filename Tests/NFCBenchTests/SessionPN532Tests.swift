import Foundation
import NFCTrace
import ReaderSession
import Testing

/// `nfcbench session` on the virtual PN532 through the real libnfc pn532_uart driver: the
/// issue's "done when" for the libnfc backend, as two real processes.
@Suite(
    "nfcbench session on the virtual PN532", .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["CI"] == "true"
            || FileManager.default.fileExists(atPath: "/usr/bin/nfc-list")))
struct SessionPN532Tests {
    @Test("A first-read session on a virtual NTAG215 holding a URI prints the record and ends with 204")
    func firstReadOnVirtualNTAG215() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-sp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let link = dir.appendingPathComponent("pn532").path
        let tag = NFCBench.packageRoot.appendingPathComponent("hardware/tags/ntag215-uri.json").path
        let (pn532, _, _) = try NFCBench.start([
            "virtual", "pn532", "--pty", link, "--tag", tag, "--quiet",
            "--trace", dir.appendingPathComponent("pn532.jsonl").path,
        ])
        defer { if pn532.isRunning { pn532.interrupt() } }
        for _ in 0..<300 where (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == nil {
            try await Task.sleep(for: .milliseconds(10))
        }
        let env = [
            "NFCBENCH_LOCK_DIR": dir.appendingPathComponent("locks").path,
            "NFCBENCH_TRACE_DIR": dir.appendingPathComponent("traces").path,
        ]
        let r = try await NFCBench.run(
            ["session", "--device", "pn532_uart:\(link)", "--first-read", "--json", "--timeout", "20"],
            environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        let records = try r.stdout.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        let ndef = records.first { $0["event"]?.stringValue == "didDetectNDEFs" }
        guard case .array(let recs)? = ndef?["records"] else {
            Issue.record("no didDetectNDEFs records in \(r.stdout)")
            return
        }
        #expect(recs.first?["uri"]?.stringValue == "https://example.com/nfcbench")
        #expect(records.last?["event"]?.stringValue == "didInvalidateWithError")
        #expect(records.last?["code"]?.intValue == 204)
        #expect(records.first?["device"]?.stringValue == "pn532_uart:\(link)")
    }
}
