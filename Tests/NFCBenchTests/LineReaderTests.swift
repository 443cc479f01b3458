import Foundation
import NFCBenchTestSupport
import Testing

/// The shared ``LineReader``: its thread ends at end of file, and a reader given its process
/// kills that process when it goes, so a test that stopped early leaves no child behind.
@Suite("LineReader: blocking reads of a child's output")
struct LineReaderTests {
    @Test("Lines arrive, and the reader sees end of file when the child exits")
    func endOfFile() async throws {
        let (p, out, _) = try NFCBench.start(executable: URL(fileURLWithPath: "/bin/sh"), ["-c", "echo one; echo two"])
        let reader = LineReader(out, of: p)
        #expect(await reader.wait { $0 == ["one", "two"] }, "\(reader.lines)")
        #expect(await poll(timeout: .seconds(10)) { reader.ended })
        #expect(await SessionCLITests.exit(of: p) == 0)
    }

    @Test("A reader given its process SIGKILLs it when the reader goes")
    func killsItsChild() async throws {
        let bench = try SessionCLITests.Bench()
        defer { bench.cleanup() }
        let (p, out, _) = try NFCBench.start(["session", "--device", "sim:no-tag", "--json"], environment: bench.env)
        do {
            let reader = LineReader(out, of: p)
            #expect(await reader.wait { $0.contains { $0.contains("\"didBecomeActive\"") } })
            #expect(p.isRunning)
        }
        // The kernel's answer: Foundation's terminationReason may not be set yet (it traps then).
        #expect(await processEnd(of: p) == .signalled(SIGKILL))
    }
}
