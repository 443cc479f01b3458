import Foundation
import NFCTrace
import Testing

/// `nfcbench check equivalence`: every shipped tag file, in every session mode, on the
/// simulator, on a vpcd card behind the real pcscd and on the virtual PN532 through the real
/// libnfc gives the same Core NFC events. Run in a private pcscd of its own (nested
/// scripts/with-pcscd), so its vpcd port is nobody else's.
@Suite("Cross-device equivalence (sim:, pcsc:, pn532_uart:)")
struct EquivalenceTests {
    @Test("check equivalence: the same events on the three devices for every tag file and mode")
    func everyTagFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-eq-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let script = NFCBench.packageRoot.appendingPathComponent("scripts/with-pcscd").path
        let r = try await NFCBench.offPool {
            try NFCBench.runBlockingExecutable(
                "/bin/bash", [script, NFCBench.binary.path, "check", "equivalence", "--json"],
                environment: [
                    "NFCBENCH_LOCK_DIR": folder.appendingPathComponent("locks").path,
                    "NFCBENCH_TRACE_DIR": folder.appendingPathComponent("traces").path,
                ], timeout: .seconds(600))
        }
        if r.status == 69 && r.stderr.contains("with-pcscd:") && ProcessInfo.processInfo.environment["CI"] != "true" {
            return  // no private pcscd here (outside CI): nothing to compare
        }
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        let rows = r.stdout.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
        let tags = try FileManager.default.contentsOfDirectory(
            atPath: NFCBench.packageRoot.appendingPathComponent("hardware/tags").path
        ).filter { $0.hasSuffix(".json") }
        #expect(rows.count == tags.count * 3, "one row per tag file and mode")
        for row in rows {
            #expect(row["same"] == .bool(true), "\(row.serialized)")
            // PC/SC shows no ATQA/SAK: the named column says so instead of silence.
            #expect(row["devices"]?["pcsc"]?["atqa_sak"]?.stringValue == "not shown")
        }
        let flaky = rows.filter { $0["tag"]?.stringValue == "ntag215-flaky" }
        #expect(flaky.count == 3 && flaky.allSatisfy { $0["same"] == .bool(true) })
        let classic = rows.first { $0["tag"]?.stringValue == "mifare-classic-1k" && $0["mode"]?.stringValue == "ndef" }
        #expect(classic?["devices"]?["pn532"]?["atqa_sak"]?.stringValue == "0400/08")
        #expect(
            classic?["targets"] == .array([.string("mifareClassic 5C3A91E2")]), "classified by SAK and by ATR alike")
    }
}
