import Foundation
import NFCBenchTestSupport
import Testing

private let packageRoot = NFCBench.packageRoot

private let ecpTrace = TestPaths.corpusFile("pm3_hf_visa_apple_ecp.trace").path

/// The built binary with the bench data pinned (NFCBench.run: off the cooperative pool).
private func nfcbench(_ args: [String]) async throws -> NFCBench.Result {
    try await NFCBench.run(args, environment: ["NFCBENCH_DATA": packageRoot.appendingPathComponent("hardware").path])
}

private func object(_ line: String) -> [String: Any]? {
    (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
}

@Suite("nfcbench walk and profile import (the built binary)")
struct WalkCLITests {
    @Test("walk --app-prefixes A0000000031010 --json: one line per event, a summary with hand-counted wakes")
    func walkJSON() async throws {
        // The best case (every latency 0, the defaults before issue 31): the hand count's.
        let r = try await nfcbench([
            "walk", "--app-prefixes", "A0000000031010", "--wake-latency", "0", "--sheet-latency", "0", "--json",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let objects = lines.compactMap(object)
        #expect(objects.count == lines.count)  // every line is JSON
        let events = objects.dropLast()
        #expect(events.allSatisfy { $0["t_us"] is NSNumber && $0["reader"] is String && $0["event"] is String })
        #expect(events.filter { $0["event"] as? String == "nfcEvent" }.count == 10)
        let answeredBy = Set(
            events.filter { $0["event"] as? String == "apdu" }.compactMap { $0["answered_by"] as? String })
        #expect(answeredBy == ["app", "system"])
        let summary = try #require(objects.last)
        #expect(summary["event"] as? String == "summary")
        #expect((summary["wakes"] as? NSNumber)?.intValue == 10)
        #expect((summary["servable_wakes"] as? NSNumber)?.intValue == 2)
        #expect((summary["useless_wakes"] as? NSNumber)?.intValue == 8)
        #expect((summary["up_for_nothing_us"] as? NSNumber)?.intValue == 2_003_369)
        // Key order of the first line: t_us, reader, event.
        #expect(lines.first?.hasPrefix(#"{"t_us":0,"reader":"access-iso-dep","event":"fieldOn""#) == true)
    }

    @Test("walk timeline: aligned columns and a summary line")
    func walkText() async throws {
        let r = try await nfcbench([
            "walk", "--profiles", "mifare-classic-door,emv-payment", "--app-prefixes", "A000000003",
            "--policy", "step-aside:300ms", "--wake-latency", "0", "--sheet-latency", "0",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        // The door's field leaves at 250 ms, before the app would step aside at 300 ms: 250 ms counted.
        #expect(
            r.stdout.contains(
                "readers 2, wakes 2, wakes the app could serve 1, useless wakes 1, app up for nothing 250 ms"))
        #expect(r.stdout.contains("useless: this access reader (ISO14443A) never reaches ISO-DEP"))
        let eventColumn = r.stdout.split(separator: "\n").filter {
            $0.contains("mifare-classic-door") && $0.contains("fieldOn")
        }
        #expect(eventColumn.count == 1)
    }

    @Test(
        "A prefix shorter than a RID and a bad policy are usage errors (exit 64); a missing profile is 66",
        arguments: [
            ["walk", "--app-prefixes", "A0000000"],
            ["walk", "--policy", "sometimes"],
            ["walk", "--profiles", "no-such-reader"],
        ])
    func usageErrors(args: [String]) async throws {
        let r = try await nfcbench(args)
        #expect(r.status == (args.contains("no-such-reader") ? 66 : 64))
        #expect(r.stderr.hasPrefix("error: "))
    }

    @Test(
        "profile import of the ECP trace reproduces the shipped emv-ecp-terminal profile",
        .enabled(
            if: FileManager.default.fileExists(atPath: ecpTrace) || ProcessInfo.processInfo.environment["CI"] == "true",
            "corpus not found in Tests/Fixtures/corpus (CI=true makes this fail)"))
    func importMatchesShipped() async throws {
        let trace = ecpTrace
        let r = try await nfcbench(["profile", "import", trace, "--name", "emv-ecp-terminal", "--category", "payment"])
        #expect(r.status == 0, "\(r.stderr)")
        let shipped = try String(
            contentsOf: packageRoot.appendingPathComponent("hardware/readers/emv-ecp-terminal.json"), encoding: .utf8)
        #expect(r.stdout == shipped)
    }
}
