import FoundationEssentials
import NFCBenchKit
import NFCTags
import ReaderSession

/// What a mutation fuzz run of the NDEF parser found.
package struct NDEFFuzzReport: Sendable, CustomStringConvertible {
    package var seed: UInt64
    /// Messages tried.
    package var messages = 0
    /// Parsed by ``NFCNDEFMessage/init(bytes:limits:)``.
    package var parsed = 0
    /// Rejected, per ``NDEFError/Code`` raw value.
    package var rejected: [String: Int] = [:]
    /// Parsed records whose body decoded to `.invalid`, per code.
    package var invalidBodies: [String: Int] = [:]
    /// Parsed messages whose serialization did not parse back to an equal message.
    package var roundTripFailures = 0
    /// The first few failing inputs, as hex.
    package var roundTripExamples: [String] = []
    package var elapsed: Duration = .zero

    package var messagesPerSecond: Double {
        let s = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return s > 0 ? Double(messages) / s : 0
    }

    package var description: String {
        var lines = [
            "ndef-fuzz seed \(seed): \(Figures.count(messages, "message")) in \(Figures.duration(elapsed)), "
                + "\(Figures.rounded(messagesPerSecond)) messages/s",
            "parsed \(Figures.grouped(parsed)), rejected \(Figures.grouped(messages - parsed)), "
                + "round-trip failures \(Figures.grouped(roundTripFailures))",
        ]
        for (code, n) in rejected.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }) {
            lines.append("  rejected \(code): \(Figures.grouped(n))")
        }
        for (code, n) in invalidBodies.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }) {
            lines.append("  invalid body \(code): \(Figures.grouped(n))")
        }
        for hex in roundTripExamples { lines.append("  round-trip failure: \(hex)") }
        return lines.joined(separator: "\n")
    }
}

/// Valid seed messages covering every TNF, SR and long lengths, IDs, chunks and RTDs.
package let ndefFuzzSeeds: [[UInt8]] = {
    let hex = [
        "D1 01 15 55 00 68 74 74 70 73 3A 2F 2F 67 6F 6F 67 6C 65 2E 63 6F 6D 2F 3F",
        "D0 00 00",
        "D1 01 08 54 02 65 6E 48 65 6C 6C 6F",
        "D1 01 09 54 82 65 6E FE FF 00 48 00 69",
        "D1 01 07 54 82 65 6E 00 48 00 69",
        "91 01 08 54 02 65 6E 48 65 6C 6C 6F 51 01 0C 55 02 65 78 61 6D 70 6C 65 2E 63 6F 6D",
        "D2 0A 0B 74 65 78 74 2F 70 6C 61 69 6E 68 65 6C 6C 6F 20 77 6F 72 6C 64",
        "D4 0F 0B 61 6E 64 72 6F 69 64 2E 63 6F 6D 3A 70 6B 67 63 6F 6D 2E 65 78 61 6D 70 6C 65",
        "D3 0D 00 68 74 74 70 73 3A 2F 2F 61 2E 62 2F 63",
        "D9 01 02 01 55 23 03 61",
        "C1 01 00 00 00 04 54 02 65 6E 41",
        "B1 01 03 54 02 65 6E 36 00 01 48 56 00 01 69",
        "D1 02 23 53 70 91 01 0C 55 02 65 78 61 6D 70 6C 65 2E 63 6F 6D 11 01 08 54 02 65 6E 48 65 6C 6C 6F 51 03 01 61 63 74 00",
        "D5 00 03 01 02 03",
    ]
    return hex.compactMap { [UInt8](hex: $0) }
}()

/// Mutation-fuzzes the NDEF parser: each message is a seed message mutated 1–4 times
/// (bit flip, byte insert, byte delete, length-field edit, truncation, splice with another
/// seed); every message is parsed, every parsed message has its record bodies decoded and
/// is serialized and parsed again, and must come back equal. Reproducible from `seed`.
/// `log` gets a progress line every 10⁵ messages and the round-trip failures.
package func runNDEFFuzz(seed: UInt64, count: Int, log: (String) -> Void) -> NDEFFuzzReport {
    var rng = SplitMix64(seed: seed)
    var report = NDEFFuzzReport(seed: seed)
    // The re-parse of our own serialization may expand chunks (a 1-byte initial chunk
    // reserializes as 1-byte chunks), so it gets room the untrusted parse does not.
    let relaxed = NDEFLimits(
        maxMessageBytes: .max, maxRecords: .max, maxNestingDepth: NDEFLimits.default.maxNestingDepth)
    let clock = ContinuousClock()
    let start = clock.now
    for i in 0..<max(0, count) {
        var b = ndefFuzzSeeds[Int.random(in: 0..<ndefFuzzSeeds.count, using: &rng)]
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            ByteMutator.mutate(&b, using: &rng, splice: ndefFuzzSeeds)
        }
        report.messages += 1
        do {
            let m = try NFCNDEFMessage(bytes: b)
            report.parsed += 1
            for r in m.records {
                if case .invalid(let e) = r.content { report.invalidBodies[e.code.rawValue, default: 0] += 1 }
            }
            let again = try? NFCNDEFMessage(bytes: m.bytes, limits: relaxed)
            if again != m {
                report.roundTripFailures += 1
                if report.roundTripExamples.count < 5 {
                    report.roundTripExamples.append(b.hexString())
                    log("round-trip failure: \(b.hexString())")
                }
            }
        } catch {
            report.rejected[error.code.rawValue, default: 0] += 1
        }
        if (i + 1) % 100_000 == 0 { log("\(i + 1) messages, \(report.parsed) parsed") }
    }
    report.elapsed = clock.now - start
    return report
}
