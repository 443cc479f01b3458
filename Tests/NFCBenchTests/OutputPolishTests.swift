import Foundation
import NFCBenchKit
import NFCTrace
import Testing

@testable import nfcbench

/// Output a person reads (issue 14, item 10): numbers rounded to what a person reads,
/// nouns that agree with their counts, ranges as people write them, no cut-off columns,
/// and a table's header after the line that says what is starting.
@Suite("Output a person reads: figures, plurals, ranges, columns, order")
struct OutputPolishTests {
    static func double(_ v: JSONValue?) -> Double? {
        if case .double(let d)? = v { return d }
        return nil
    }

    @Test("Figures: counts grouped, measurements to three significant digits, durations in their unit")
    func figures() {
        #expect(Figures.grouped(2_000_007) == "2,000,007")
        #expect(Figures.grouped(999) == "999")
        #expect(Figures.grouped(-1234) == "-1,234")
        #expect(Figures.rounded(682_741.3) == "683,000")
        #expect(Figures.rounded(1505.9893044037206) == "1,510")
        #expect(Figures.rounded(297.68) == "298")
        #expect(Figures.rounded(12.345) == "12.3")
        #expect(Figures.rounded(0.012345) == "0.0123")
        #expect(Figures.rounded(45.0) == "45")
        #expect(Figures.rounded(0) == "0")
        #expect(Figures.duration(.nanoseconds(55_300_365)) == "55.3 ms")
        #expect(Figures.duration(.nanoseconds(265_182_295)) == "265 ms")
        #expect(Figures.duration(.milliseconds(2929)) == "2.93 s")
        #expect(Figures.duration(.microseconds(812)) == "812 µs")
        #expect(Figures.duration(.microseconds(999_700)) == "1 s")
        #expect(Figures.count(1, "page") == "1 page")
        #expect(Figures.count(4, "page") == "4 pages")
        #expect(Figures.count(1200, "APDU") == "1,200 APDUs")
    }

    @Test("conformance: a retry loop's endings read as runs, never a number cut in half; the THERMAL lines too")
    func conformanceColumns() async throws {
        let r = await InProcessCLI.run(["conformance", "--app", "busyloop"])
        #expect(r.status == 1)
        let lines = r.stdoutLines
        let header = try #require(lines.first { $0.hasPrefix("SCENARIO") })
        let start = try #require(header.range(of: "ENDINGS")).lowerBound
        let end = try #require(header.range(of: "SHEETS")).lowerBound
        let from = header.distance(from: header.startIndex, to: start)
        let width = header.distance(from: start, to: end)
        let rows = lines.filter { $0.contains(" pass ") || $0.contains(" breach ") }
        #expect(rows.count >= 40)
        // Each cell: codes (or "active"), each with an optional ×count, comma-separated,
        // perhaps ending in "…"; never a code cut short like "20". "-": no session at all (the
        // background-reading scenarios, where a correct app begins none).
        let cell = /^(?:-|(?:(?:\d{3}|active)(?:×\d+)?)(?:, (?:\d{3}|active)(?:×\d+)?)*(?:, …)?)$/
        for row in rows {
            let text = String(row.dropFirst(from).prefix(width)).trimmingCharacters(in: .whitespaces)
            #expect(text.wholeMatch(of: cell) != nil, "\(row)")
        }
        let loop = try #require(rows.first { $0.hasPrefix("203-busy ") })
        #expect(loop.contains("203×"), "\(loop)")
        let thermal = try #require(lines.first { $0.hasPrefix("  203-busy:") })
        #expect(thermal.contains("busy×"), "\(thermal)")
        #expect(!thermal.contains("busy, busy"), "\(thermal)")
        #expect(thermal.count < 100, "one short line, not ~500 words: \(thermal)")
        let back = try #require(lines.first { $0.hasPrefix("  thermal-back-to-back-until-refused:") })
        #expect(back.contains("60 s, 45.4 s"), "limits to three digits: \(back)")
        #expect(back.contains("refused×"), "\(back)")
    }

    @Test("bench ndef-fuzz and bench session: durations in their unit, rates to three digits, grouped counts")
    func benchFigures() async throws {
        let fuzz = await InProcessCLI.run(["bench", "ndef-fuzz", "--count", "2000", "--seed", "1"])
        #expect(fuzz.status == 0)
        let first = try #require(fuzz.stdoutLines.first)
        #expect(
            first.wholeMatch(of: /ndef-fuzz seed 1: 2,000 messages in [\d.]+ (µs|ms|s), [\d,]+(\.\d+)? messages\/s/)
                != nil, "\(first)")
        #expect(!first.contains("seconds"))
        // bench session's own process run (its one); ndef-fuzz's is in FuzzCLITests.
        let machine = try await NFCBench.run(["bench", "session", "--inputs", "20000", "--sessions", "100"])
        #expect(machine.status == 0)
        #expect(machine.stdout.contains("machine inputs: 20,00"), "grouped: \(machine.stdout)")
        #expect(machine.stdout.contains("100 sessions, "))
    }

    /// The simulated reader in this process (``InProcessCLI/run(_:environment:)``): the figures
    /// are the command's, its trace left out; measure's own process runs are in TraceCLITests and DoctorTests.
    @Test("measure --json: per_second to a tenth, not fifteen digits")
    func measureJSON() async throws {
        let r = await InProcessCLI.run([
            "measure", "apdu", "--device", "sim:tap-uri", "--count", "5", "--json", "--no-trace",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let o = try JSONValue(parsing: try #require(r.stdoutLines.first))
        let perSecond = try #require(Self.double(o["per_second"]), "no per_second: \(r.stdout)")
        #expect((perSecond * 10).rounded() == perSecond * 10, "\(perSecond)")
        #expect(o["timed"]?.stringValue == "transport", "a sim: tag is timed around our transport: \(r.stdout)")
        // The presence interval in use, not only the one asked for: the device's own default
        // (NFCDeviceTraits' 100 ms for the simulated reader), else --presence-interval.
        #expect(o["presence_interval_ms"] == .int(100), "\(r.stdout)")
        let asked = await InProcessCLI.run(
            [
                "measure", "apdu", "--device", "sim:tap-uri", "--count", "2", "--json", "--presence-interval", "40",
                "--no-trace",
            ])
        let a = try JSONValue(parsing: try #require(asked.stdoutLines.first))
        #expect(a["presence_interval_ms"] == .int(40), "\(asked.stdout)")
        let text = await InProcessCLI.run(["measure", "apdu", "--device", "sim:tap-uri", "--count", "5", "--no-trace"])
        let rate = try #require(
            text.stdoutLines.first { $0.hasSuffix("APDUs per second") }, "\(text.stdout)\(text.stderr)")
        #expect(rate.wholeMatch(of: /[\d,]+(\.\d+)? APDUs per second/) != nil, "\(rate)")
    }

    @Test("tag show: a Lock Control TLV's area as an inclusive range, never Swift's ..<")
    func ranges() async throws {
        let r = await InProcessCLI.run(["tag", "show", "ntag213-text"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("Lock Control at page 4 byte 0, length 3, area bytes 160-161"), "\(r.stdout)")
        #expect(!r.stdout.contains("..<"))
        #expect(!r.stdout.contains("(s)"))
    }

    @Test("emulate with a device that can't be opened prints the error alone, no table header first")
    func noHeaderBeforeError() async throws {
        let r = try await NFCBench.run([
            "emulate", "--device", "pn532_uart:/nonexistent-reader", "--app-prefixes", "A0000000031010",
        ])
        #expect(r.status == 69)
        #expect(r.stdout.isEmpty, "\(r.stdout)")
    }

    @Test(
        "walk --device: 'walking 1 profile' comes before the table's header",
        .enabled(if: HCEEmulateBench.pcscEnabled))
    func walkOrder() async throws {
        let r = try await PrivateBench.run(
            "\"$B\" walk --device 'pcsc:Virtual PCD 00 00' --port 35963 --profiles nfc-forum-t4t 2>&1",
            timeout: .seconds(60))
        try #require(PrivateBench.available(r), "the private pcscd bench is missing: \(r.stderr)")
        #expect(r.status == 0, "\(r.stdout)")
        let lines = r.stdoutLines
        let walking = try #require(lines.firstIndex { $0.hasPrefix("walking 1 profile through pcscd") }, "\(r.stdout)")
        let header = try #require(lines.firstIndex { $0.contains("t (ms)") })
        #expect(walking < header, "\(r.stdout)")
        #expect(r.stdout.contains("1 APDU to the app") || r.stdout.contains("APDUs to the app"), "\(r.stdout)")
    }
}
