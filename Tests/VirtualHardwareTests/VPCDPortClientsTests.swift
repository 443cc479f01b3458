import Testing

@testable import VirtualHardware

/// How a card holding vpcd's port is named in "port taken" errors (``VPCDPortClients``).
@Suite("The holder of vpcd's port, named in a few words")
struct VPCDPortClientsTests {
    private func cmdline(_ words: [String]) -> [UInt8] { words.flatMap { Array($0.utf8) + [0] } }

    @Test("A binary deep in a build folder keeps its arguments: the file name, then every argument")
    func longProgramPath() {
        let program = "/home/alice/src/nfcbench/.build/x86_64-unknown-linux-gnu/debug/nfcbench"
        let s = VPCDPortClients.commandSummary(cmdline([program, "virtual", "card", "--tag", "ntag213-text"]))
        #expect(s == "nfcbench virtual card --tag ntag213-text")
    }

    @Test("A program without a folder, an empty argument kept, and the 100-character cap with an ellipsis")
    func shapes() {
        #expect(VPCDPortClients.commandSummary(cmdline(["vicc", "", "--type", "iso7816"])) == "vicc  --type iso7816")
        let long = VPCDPortClients.commandSummary(cmdline(["python3", String(repeating: "x", count: 200)]))
        #expect(long.count == 100 && long.hasPrefix("python3 xxx") && long.hasSuffix("…"))
        #expect(VPCDPortClients.commandSummary(cmdline(["/usr/bin/"])) == "/usr/bin/")
    }
}
