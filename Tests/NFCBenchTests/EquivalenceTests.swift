import Foundation
import NFCBenchTestSupport
import NFCTrace
import Testing

/// `nfcbench check equivalence`: every shipped tag file (and every corpus tag file), in every
/// session mode, on the simulator, on a vpcd card behind the real pcscd (as a part 3 reader and
/// as an ACR122U) and on the virtual PN532 through the real libnfc gives the same Core NFC
/// events. Each part runs in a private pcscd of its own (nested scripts/with-pcscd, one vpcd
/// entry), so the parts run side by side and their vpcd ports are nobody else's.
@Suite("Cross-device equivalence (sim:, pcsc:, ACR122U, pn532_uart:)")
struct EquivalenceTests {
    static let corpus = TestPaths.corpus

    /// The shipped tag files' names, sorted (each one a case of the tests below).
    static func shipped() throws -> [String] {
        try FileManager.default.contentsOfDirectory(
            atPath: NFCBench.packageRoot.appendingPathComponent("hardware/tags").path
        ).filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }

    /// The tests' cases: the shipped files, listed when the suite is declared. Every case checks
    /// its one file; ``everyFileIsACase()`` checks that the cases are all the files.
    static let cases: [String] = (try? shipped()) ?? []

    /// The checks that run at once (of the reads', writes' and corpus cases). Each runs its rows
    /// one at a time: 6 rows at once, 6 virtual PN532s behind libnfc, whose 100 ms Type 2 frame
    /// timeout a busier machine misses (24 at once, three rows a case, failed pn532 rows in a
    /// loaded full run); most of a row is waiting (pcscd's poll, the 10 s limit of rows no
    /// session delivers), which overlaps across the cases.
    static let slots = Slots(6)

    /// Runs `check equivalence --json` with `args` in a private pcscd; nil outside CI without one.
    /// Each session's limit is 10 s, not 3: on a loaded 2-core machine a slow start must not
    /// read as a timeout (only the rows of tags no session delivers wait it out).
    /// `entries`: the private pcscd's vpcd reader entries, so that many rows run side by side
    /// (each case in a pcscd of its own).
    static func check(_ args: [String], entries: Int = 1) async throws -> [JSONValue] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-eq-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let script = NFCBench.packageRoot.appendingPathComponent("scripts/with-pcscd").path
        let r = try await slots.run {
            try await NFCBench.offPool {
                try NFCBench.runBlockingExecutable(
                    "/bin/bash",
                    [script, NFCBench.binary.path, "check", "equivalence", "--json", "--time-limit", "10"] + args,
                    environment: [
                        "NFCBENCH_LOCK_DIR": folder.appendingPathComponent("locks").path,
                        "NFCBENCH_TRACE_DIR": folder.appendingPathComponent("traces").path,
                        // One vpcd entry a row at once (the cases run side by side).
                        "NFCBENCH_VPCD_READERS": "\(entries)",
                    ], timeout: .seconds(600))
            }
        }
        if r.status == 69 && r.stderr.contains("with-pcscd:") && ProcessInfo.processInfo.environment["CI"] != "true" {
            try Test.cancel("no private pcscd here (outside CI): \(r.stderr)")
        }
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        return r.stdout.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
    }

    /// The FeliCa and ISO 15693 files (`felica-…`, `icode-…`, `st25tv-…`).
    static func isVicinity(_ tag: String) -> Bool {
        tag.hasPrefix("felica-") || tag.hasPrefix("icode-") || tag.hasPrefix("st25tv-")
    }

    static func expectSame(_ rows: [JSONValue]) {
        for row in rows {
            #expect(row["same"] == .bool(true), "\(row.serialized)")
            // PC/SC shows no ATQA/SAK: the named column says so instead of silence.
            #expect(row["devices"]?["pcsc"]?["atqa_sak"]?.stringValue == "not shown", "\(row.serialized)")
            let tag = row["tag"]?.stringValue ?? ""
            if isVicinity(tag) {
                // A device that cannot present the family says why instead of a run.
                #expect(row["devices"]?["acr122u"]?["not_offered"] != nil, "\(row.serialized)")
                let iso15693 = !tag.hasPrefix("felica-")
                #expect((row["devices"]?["pn532"]?["not_offered"] != nil) == iso15693, "\(row.serialized)")
                #expect(row["devices"]?["sim"]?["ending"] != nil, "\(row.serialized)")
            } else {
                #expect(row["devices"]?["acr122u"]?["atqa_sak"]?.stringValue == "not shown", "\(row.serialized)")
                #expect(row["devices"]?["pn532"] != nil, "\(row.serialized)")
            }
        }
    }

    @Test("The cases below are every shipped tag file, MIFARE Classic and the flaky NTAG215 among them")
    func everyFileIsACase() throws {
        let tags = try Self.shipped()
        #expect(Self.cases == tags)
        #expect(tags.count >= 10 && tags.contains("ntag215-flaky") && tags.contains("mifare-classic-1k"), "\(tags)")
    }

    /// Each shipped tag file is a case of its own, in a private pcscd of its own: the files run
    /// side by side.
    @Test(
        "Reads (ndef, ndef-rw, tag): the same events on the four devices for every shipped tag file",
        arguments: cases)
    func reads(tag: String) async throws {
        let rows = try await Self.check(["--modes", "ndef,ndef-rw,tag", "--tags", tag])
        #expect(rows.count == 3, "one row per mode: \(rows.map(\.serialized))")
        #expect(rows.allSatisfy { $0["tag"]?.stringValue == tag }, "\(rows.map(\.serialized))")
        #expect(
            rows.compactMap { $0["mode"]?.stringValue } == ["ndef", "ndef-rw", "tag"], "\(rows.map(\.serialized))")
        Self.expectSame(rows)
        if tag == "ntag215-flaky" {
            #expect(rows.count == 3 && rows.allSatisfy { $0["same"] == .bool(true) })
        }
        if tag == "mifare-classic-1k" {
            let classic = rows.first { $0["mode"]?.stringValue == "ndef" }
            #expect(classic?["devices"]?["pn532"]?["atqa_sak"]?.stringValue == "0400/08")
            #expect(
                classic?["targets"] == .array([.string("mifareClassic 5C3A91E2")]),
                "classified by SAK and by ATR alike")
        }
    }

    /// Each shipped tag file is a case of its own, as for ``reads(tag:)``; MIFARE Classic's case
    /// checks that it has no row.
    @Test(
        "Writes (write, format): the same bytes left on every device, each read back by the next",
        arguments: cases)
    func writes(tag: String) async throws {
        let rows = try await Self.check(["--modes", "write,format", "--tags", tag])
        // A sensed-only card (MIFARE Classic) has no write or format row.
        let writable = tag != "mifare-classic-1k"
        #expect(rows.count == (writable ? 2 : 0), "one row per mode of a writable file: \(rows.map(\.serialized))")
        #expect(writable || !rows.contains { $0["tag"]?.stringValue == tag })
        #expect(rows.allSatisfy { $0["tag"]?.stringValue == tag }, "\(rows.map(\.serialized))")
        #expect(
            rows.compactMap { $0["mode"]?.stringValue } == (writable ? ["write", "format"] : []),
            "\(rows.map(\.serialized))")
        Self.expectSame(rows)
        for row in rows {
            #expect(row["devices"]?["sim"]?["read_back_by"]?.stringValue == "pcsc", "\(row.serialized)")
            guard !Self.isVicinity(tag) || tag.hasPrefix("felica-") else { continue }  // no PN532 for ISO 15693
            #expect(row["devices"]?["pn532"]?["read_back_by"]?.stringValue == "sim", "\(row.serialized)")
        }
    }

    @Test("Corpus tag files: the Flipper dump whose header UID differs from its pages is the same everywhere")
    func corpusFiles() async throws {
        if !FileManager.default.fileExists(atPath: Self.corpus.path) {
            try BenchPart.missing("the corpus is missing at \(Self.corpus.path)")
        }
        // Its rows two at a time: 2 files × 5 modes, the empty file's ndef row waiting out 10 s.
        let rows = try await Self.check(["--tags", Self.corpus.path], entries: 2)
        let flipper = rows.filter { $0["tag"]?.stringValue == "flipper_Google_ntag216" }
        #expect(flipper.count == 5, "ndef, ndef-rw, tag, write, format: \(rows.map(\.serialized))")
        Self.expectSame(rows)
        // The pages' UID (pages 0-2: 04 39 91 · C2 FC 67 80), not the header's 04 B8 31 3A 30 73 80, on every
        // device: a real tag answers anticollision and FF CA from its pages.
        #expect(flipper.first?["targets"] == .array([.string("type2 043991C2FC6780")]), "\(flipper.map(\.serialized))")
    }
}
