import Foundation
import Testing

/// `./bench demo` runs the real script; the compiler it meets is a stand-in that fails the way
/// a compile error does, and an old binary waits where the build would put the new one.
@Suite("./bench")
struct BenchScriptTests {
    @Test(
        "./bench demo stops on a failed build: the errors, why it stopped, a non-zero exit, and the old binary never runs"
    )
    func demoStopsOnFailedBuild() async throws {
        let fm = FileManager.default
        let dir = fm.temporaryDirectory.appendingPathComponent("nfcbench-benchscript-\(UUID().uuidString)")
        defer { try? fm.removeItem(at: dir) }
        func write(_ path: String, _ text: String) throws {
            let url = dir.appendingPathComponent(path)
            try fm.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            // O_CLOEXEC: a child another test forks meanwhile must not inherit the descriptor we
            // write through, or exec'ing the script fails with ETXTBSY ("Text file busy"), as a
            // full run once did; Foundation's String.write leaves its descriptor inheritable.
            let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
            try #require(fd >= 0, "open \(url.path): errno \(errno)")
            let bytes = Array(text.utf8)
            let written = bytes.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
            #expect(close(fd) == 0)
            try #require(written == bytes.count, "wrote \(written) of \(bytes.count) bytes to \(url.path)")
        }
        try fm.createDirectory(at: dir, withIntermediateDirectories: true)
        try fm.copyItem(
            at: NFCBench.packageRoot.appendingPathComponent("bench"), to: dir.appendingPathComponent("bench"))
        try write("scripts/install-deps", "#!/bin/sh\nexit 0\n")
        try write(
            "toolchain/swift",
            """
            #!/bin/sh
            echo "[1/3] Compiling nfcbench main.swift"
            echo "Sources/nfcbench/main.swift:3:1: error: cannot find 'brokn' in scope"
            exit 1

            """)
        try write(".build/debug/nfcbench", "#!/bin/sh\necho 'the old binary ran'\n")
        let path =
            dir.appendingPathComponent("toolchain").path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "")
        let r = try await NFCBench.offPool {
            try NFCBench.runBlockingExecutable(
                dir.appendingPathComponent("bench").path, ["demo"], environment: ["PATH": path], timeout: .seconds(30))
        }
        #expect(r.status != 0)
        #expect(!r.stdout.contains("the old binary ran"), "\(r.stdout)")
        #expect(r.stderr.contains("error: cannot find 'brokn' in scope"), "\(r.stderr)")
        #expect(r.stderr.contains("the build failed"), "\(r.stderr)")
        #expect(!r.stderr.contains("[1/3]"), "progress lines stay hidden")
    }
}
