import Foundation
import NFCTrace
import Testing

@Suite("Trace file names (pure)")
struct TraceLocationTests {
    @Test("A trace is named yyyyMMdd-HHmmss in UTC, the command and the pid")
    func name() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-trace-name-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let location = TraceLocation(environment: ["NFCBENCH_TRACE_DIR": dir])
        // 2024-01-02 03:04:05 UTC
        let path = location.newTracePath(command: "bench all", now: Date(timeIntervalSince1970: 1_704_164_645), pid: 7)
        #expect(path == dir + "/20240102-030405-bench-all-7.jsonl")
    }
}
