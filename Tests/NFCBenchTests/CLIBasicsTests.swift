import Foundation
import Testing

/// The built binary for --version and a usage error (its exit status and streams); an unknown
/// option and --help in this process (``InProcessCLI/run(_:environment:)``), the same code path.
@Suite("nfcbench command line basics")
struct CLIBasicsTests {
    @Test("--version names the tool, libnfc and pcsc-lite")
    func version() async throws {
        let r = try await NFCBench.run(["--version"])
        #expect(r.status == 0)
        let lines = r.stdoutLines
        #expect(lines.count == 3)
        #expect(lines.first?.hasPrefix("nfcbench ") == true)
        #expect(lines.contains { $0.hasPrefix("libnfc 1.") })
        #expect(lines.contains { $0.hasPrefix("pcsc-lite 1.") })
    }

    @Test("An unknown command is a usage error: exit 64 and a message on stderr")
    func unknownCommand() async throws {
        let r = try await NFCBench.run(["frobnicate"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("unknown command 'frobnicate'"))
        #expect(r.stdout.isEmpty)
    }

    @Test("An unknown option is a usage error naming it")
    func unknownOption() async throws {
        let r = await InProcessCLI.run(["version", "--bogus"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("unknown option '--bogus'"))
        #expect(r.stdout.isEmpty)
    }

    @Test("--help prints the command list on stdout and exits 0")
    func help() async throws {
        let r = await InProcessCLI.run(["--help"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("COMMANDS:"))
        #expect(r.stdout.contains("version"))
        #expect(r.stderr.isEmpty)
    }
}
