import Foundation
import Testing

/// Every command that reads a data file prints the one rule's message and exits 65 (a
/// malformed file, EX_DATAERR) or 66 (a missing file, EX_NOINPUT). Messages are written by
/// hand from the rule: `FILE:LINE:COLUMN: reason` or `FILE: field PATH: reason`.
@Suite("Data files on the command line: messages and exit codes 65/66")
struct DataFileCLITests {
    /// A fresh folder holding the broken files the tests below use.
    final class Bench: @unchecked Sendable {
        let dir: URL
        var hardware: String { NFCBench.packageRoot.appendingPathComponent("hardware").path }

        init() throws {
            dir = FileManager.default.temporaryDirectory.appendingPathComponent(
                "nfcbench-datafile-cli-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            // A tag file cut short on line 3, after `"ntag2`.
            try write("cut.json", "{\"format\": \"nfcbench-tag\",\n \"version\": 1,\n \"type\": \"ntag2")
        }

        deinit { try? FileManager.default.removeItem(at: dir) }

        @discardableResult
        func write(_ name: String, _ text: String) throws -> String {
            let path = dir.appendingPathComponent(name).path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

        func run(_ args: [String]) async throws -> NFCBench.Result {
            try await NFCBench.run(
                args,
                environment: [
                    "NFCBENCH_DATA": hardware, "NFCBENCH_TRACE_DIR": dir.appendingPathComponent("traces").path,
                ],
                timeout: .seconds(30))
        }
    }

    let cutShort = "3:16: unexpected end of file: the JSON is cut short"

    @Test("tag show: a truncated file is 65 with line and column; a missing one is 66 naming it")
    func tagShow() async throws {
        let b = try Bench()
        let cut = try await b.run(["tag", "show", b.path("cut.json")])
        #expect(cut.status == 65)
        #expect(cut.stderr == "error: \(b.path("cut.json")):\(cutShort)\n")
        let missing = try await b.run(["tag", "show", "no-such-tag-file"])
        #expect(missing.status == 66)
        #expect(missing.stderr == "error: no file 'no-such-tag-file' here or in \(b.hardware)/tags\n")
        // A typo of a shipped tag file's name gets the name it most likely meant.
        let typo = try await b.run(["tag", "show", "t4t-url"])
        #expect(typo.status == 66)
        #expect(
            typo.stderr == "error: no file 't4t-url' here or in \(b.hardware)/tags (did you mean t4t-uri?)\n",
            "\(typo.stderr)")
        // The same typo in a path to the shipped folder (a fresh user's try).
        let inPath = try await b.run(["tag", "show", "hardware/tags/ntag215-url.json"])
        #expect(inPath.status == 66)
        #expect(inPath.stderr.hasSuffix("(did you mean ntag215-uri?)\n"), "\(inPath.stderr)")
    }

    @Test("session --device sim:: a wrong type in the scenario is 65 with its path; a missing tag file is 66")
    func session() async throws {
        let b = try Bench()
        let bad = try b.write(
            "bad.json",
            #"{"format":"nfcbench-scenario","version":1,"steps":[{"at_ms":0,"present":"ntag215-uri"},{"at_ms":true,"remove":"ntag215-uri"}]}"#
        )
        let r = try await b.run(["session", "--device", "sim:" + bad])
        #expect(r.status == 65)
        #expect(r.stderr == "error: \(bad): field steps[1].at_ms: expected a number, found true\n")
        let noTag = try b.write(
            "no-tag.json", #"{"format":"nfcbench-scenario","version":1,"steps":[{"at_ms":0,"present":"nope-tag"}]}"#)
        let r2 = try await b.run(["session", "--device", "sim:" + noTag])
        #expect(r2.status == 66)
        #expect(
            r2.stderr
                == "error: \(noTag): field steps[0].present: no tag file 'nope-tag' beside the scenario or in the bench's hardware/tags\n"
        )
        let r3 = try await b.run(["session", "--device", "sim:no-such-scenario"])
        #expect(r3.status == 66)
        #expect(r3.stderr == "error: no file 'no-such-scenario' here or in \(b.hardware)/scenarios\n")
        // A tag file the scenario names is reported as that file's error.
        let withCut = try b.write(
            "with-cut.json",
            #"{"format":"nfcbench-scenario","version":1,"steps":[{"at_ms":0,"present":"cut"}]}"#)
        let r4 = try await b.run(["session", "--device", "sim:" + withCut])
        #expect(r4.status == 65)
        #expect(r4.stderr == "error: \(b.path("cut.json")):\(cutShort)\n")
    }

    @Test("virtual card and virtual pn532 --tag: 65 before any device is touched; a missing tag is 66")
    func virtualDevices() async throws {
        let b = try Bench()
        let card = try await b.run(["virtual", "card", "--tag", b.path("cut.json")])
        #expect(card.status == 65)
        #expect(card.stderr == "error: \(b.path("cut.json")):\(cutShort)\n")
        let pn532 = try await b.run(["virtual", "pn532", "--pty", b.path("pty"), "--tag", b.path("cut.json")])
        #expect(pn532.status == 65)
        #expect(pn532.stderr == "error: \(b.path("cut.json")):\(cutShort)\n")
        #expect(!FileManager.default.fileExists(atPath: b.path("pty")))
        let missing = try await b.run(["virtual", "card", "--tag", "no-such-tag"])
        #expect(missing.status == 66)
        #expect(missing.stderr == "error: no file 'no-such-tag' here or in \(b.hardware)/tags\n")
    }

    @Test("walk --profiles and virtual pn532 --reader: a bad profile is 65 with its path; a missing one 66")
    func profiles() async throws {
        let b = try Bench()
        let bad = try b.write(
            "bad.json",
            #"{"format": "nfcbench-reader-profile/1", "name": "x", "category": "c", "technology": "ISO14443A", "iso_dep": true, "activation_us": 1000, "field_off_us": 90000, "source": "s", "steps": [{"t_us": 1.5, "apdu": "00A40400"}]}"#
        )
        let expected =
            "error: \(bad): field steps[0].t_us: expected a whole number from 0 to 1000000000000000, found 1.5\n"
        let walk = try await b.run(["walk", "--profiles", bad])
        #expect(walk.status == 65)
        #expect(walk.stderr == expected)
        let reader = try await b.run(["virtual", "pn532", "--pty", b.path("pty"), "--reader", bad])
        #expect(reader.status == 65)
        #expect(reader.stderr == expected)
        let missing = try await b.run(["walk", "--profiles", "no-such-reader"])
        #expect(missing.status == 66)
        #expect(missing.stderr == "error: no file 'no-such-reader' here or in \(b.hardware)/readers\n")
        let trace = try await b.run(["profile", "import", b.path("none.trace")])
        #expect(trace.status == 66)
        #expect(trace.stderr == "error: \(b.path("none.trace")): no such file\n")
    }

    @Test("conformance --suite: a bad scenario is 65 with its path; a missing folder is 66")
    func conformance() async throws {
        let b = try Bench()
        let suite = b.dir.appendingPathComponent("suite")
        try FileManager.default.createDirectory(at: suite, withIntermediateDirectories: true)
        let bad = suite.appendingPathComponent("bad.json").path
        try
            #"{"format": "nfcbench-conformance", "version": 1, "duration_ms": 5000, "steps": [{"at_ms": 0, "user": "scan", "tags": 2.5}]}"#
            .write(toFile: bad, atomically: true, encoding: .utf8)
        let r = try await b.run(["conformance", "--suite", suite.path])
        #expect(r.status == 65)
        #expect(r.stderr == "error: \(bad): field steps[0].tags: expected a whole number from 1 to 100, found 2.5\n")
        let missing = try await b.run(["conformance", "--suite", b.path("no-such-suite")])
        #expect(missing.status == 66)
        #expect(
            missing.stderr
                == "error: \(b.path("no-such-suite")): no such folder (--suite takes 'builtin' or a folder of scenario files)\n"
        )
    }
}
