import Foundation
import NFCBenchTestSupport
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
        let records = try await firstRead(tag: "ntag215-uri.json")
        #expect(records.first?["uri"]?.stringValue == "https://example.com/nfcbench")
    }

    @Test("A Type 4 Tag of mapping 1.0 on the virtual PN532: read through the 1.0 application name, 204")
    func firstReadMapping10() async throws {
        let records = try await firstRead(tag: "t4t-v1-uri.json", verbose: true) { trace in
            let commands = trace.filter { $0["event"]?.stringValue == "frame" }.compactMap {
                $0["command"]?.stringValue
            }
            #expect(Array(commands.prefix(2)) == ["00A4040007D276000085010100", "00A4040007D2760000850100"])
        }
        #expect(records.first?["uri"]?.stringValue == "https://example.com/nfcbench/t4t-v1")
    }

    /// Runs `virtual pn532 --tag TAG` and a first-read session on it through libnfc; returns
    /// the records of didDetectNDEFs after checking the ending (204) and the device name.
    func firstRead(
        tag name: String, verbose: Bool = false, check: ([JSONValue]) -> Void = { _ in }
    ) async throws -> [JSONValue] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-sp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let link = dir.appendingPathComponent("pn532").path
        let tag = NFCBench.packageRoot.appendingPathComponent("hardware/tags/\(name)").path
        let (pn532, _, _) = try NFCBench.start([
            "virtual", "pn532", "--pty", link, "--tag", tag, "--quiet",
            "--trace", dir.appendingPathComponent("pn532.jsonl").path,
        ])
        defer { if pn532.isRunning { pn532.interrupt() } }
        try await waitForLink(link)
        let env = [
            "NFCBENCH_LOCK_DIR": dir.appendingPathComponent("locks").path,
            "NFCBENCH_TRACE_DIR": dir.appendingPathComponent("traces").path,
        ]
        let r = try await NFCBench.run(
            ["session", "--device", "pn532_uart:\(link)", "--first-read", "--json", "--timeout", "20"]
                + (verbose ? ["--verbose"] : []),
            environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        let records = try r.stdout.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        #expect(records.last?["event"]?.stringValue == "didInvalidateWithError")
        #expect(records.last?["code"]?.intValue == 204)
        #expect(records.first?["device"]?.stringValue == "pn532_uart:\(link)")
        check(records)
        let ndef = records.first { $0["event"]?.stringValue == "didDetectNDEFs" }
        guard case .array(let recs)? = ndef?["records"] else {
            Issue.record("no didDetectNDEFs records in \(r.stdout)")
            return []
        }
        return recs
    }
}
