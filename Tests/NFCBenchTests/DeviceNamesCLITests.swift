import Foundation
import NFCTags
import Testing

/// The command's `--device` through NFCBenchKit: `$NFCBENCH_DEVICE` when it is left out, and
/// PC/SC readers by number or by a piece of their name, with one message per mistake.
@Suite("--device names: NFCBENCH_DEVICE, pcsc:N, pcsc:TEXT")
struct DeviceNamesCLITests {
    static func run(_ args: [String], environment: [String: String] = [:]) async throws -> NFCBench.Result {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-devnames-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var env = ["NFCBENCH_LOCK_DIR": dir.appendingPathComponent("locks").path]
        for (k, v) in environment { env[k] = v }
        return try await NFCBench.run(args, environment: env, timeout: .seconds(30))
    }

    @Test("dump without --device reads the device $NFCBENCH_DEVICE names; without either it is 64, naming both")
    func environmentDevice() async throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-devnames-\(UUID()).json").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = try await Self.run(["dump", "--out", out], environment: ["NFCBENCH_DEVICE": "sim:tap-uri"])
        #expect(r.status == 0, "\(r.stderr)")
        let uid = try TagFile.load(
            path: NFCBench.packageRoot.appendingPathComponent("hardware/tags/ntag215-uri.json").path
        )
        .activation.uid.hexString()
        #expect(r.stderr.contains("dumped ntag215 \(uid) to \(out)") || r.stderr.contains(uid), "\(r.stderr)")
        let none = try await Self.run(["session", "--first-read"])
        #expect(none.status == 64)
        #expect(none.stderr.contains("--device D is required ("), "\(none.stderr)")
        #expect(none.stderr.contains("), or set NFCBENCH_DEVICE"), "\(none.stderr)")
        // An explicit --device wins over the environment.
        let explicit = try await Self.run(
            ["session", "--device", "sim:no-such-scenario"], environment: ["NFCBENCH_DEVICE": "sim:tap-uri"])
        #expect(explicit.status == 66, "\(explicit.stderr)")
    }

    @Test(
        "pcsc:7 past pcscd's list is 69 listing the readers by number; a piece of both readers' names is 64 naming them",
        .enabled(
            if: ProcessInfo.processInfo.environment["CI"] == "true" || NFCBench.privatePCSCD,
            "needs the private pcscd: run through scripts/with-pcscd"))
    func pcscNames() async throws {
        let past = try await Self.run(["dump", "--device", "pcsc:7"])
        #expect(past.status == 69)
        #expect(past.stderr.contains("pcscd has no reader '7' (2 readers, numbered from 0)"), "\(past.stderr)")
        #expect(past.stderr.contains("pcsc:Virtual PCD 00 00 (pcsc:0), pcsc:Virtual PCD 00 01 (pcsc:1)"))
        let both = try await Self.run(["measure", "apdu", "--device", "pcsc:virtual pcd"])
        #expect(both.status == 64)
        #expect(both.stderr.contains("'pcsc:virtual pcd' fits several PC/SC readers"), "\(both.stderr)")
        let list = try await Self.run(["devices", "--json"])
        #expect(list.stdout.contains(#""device":"pcsc:Virtual PCD 00 01""#), "\(list.stdout)")
        #expect(list.stdout.contains(#""index":1"#), "\(list.stdout)")
    }
}

extension NFCBench {
    /// True when this process sees the private pcscd's two vpcd readers.
    static var privatePCSCD: Bool { ProcessInfo.processInfo.environment["NFCBENCH_PCSC_INSTANCE"] != nil }
}
