import Foundation
import NFCBenchTestSupport
import NFCTags
import Testing
import VirtualHardware

@Suite("Simulated-reader scenario files")
struct ScenarioTests {
    func parse(_ text: String) throws(DataFileError) -> Scenario {
        try Scenario(json: Data(text.utf8), file: "s.json", defaultReader: "file-name")
    }

    @Test("A present/remove pair with a fault parses into steps in time order")
    func parsesSteps() throws {
        let s = try parse(
            """
            {"format":"nfcbench-scenario","version":1,"description":"d",
             "steps":[{"at_ms":300,"present":"ntag215-uri","as":"A","faults":[{"kind":"tag_lost","after_commands":2}]},
                      {"at_ms":2300.5,"remove":"A"}]}
            """)
        #expect(s.reader == "file-name")
        #expect(s.description == "d")
        #expect(
            s.steps == [
                .init(
                    at: .milliseconds(300),
                    action: .present(tag: "ntag215-uri", as: "A", faults: [TagFault(afterCommands: 2, kind: .tagLost)])),
                .init(at: .microseconds(2_300_500), action: .remove("A")),
            ])
    }

    @Test(
        "Errors name the field",
        arguments: [
            (#"{"format":"x","version":1,"steps":[]}"#, "format"),
            (#"{"format":"nfcbench-scenario","version":2,"steps":[]}"#, "version"),
            (#"{"format":"nfcbench-scenario","version":1,"steps":[{"at_ms":5,"remove":"A"}]}"#, "steps[0].remove"),
            (
                #"{"format":"nfcbench-scenario","version":1,"steps":[{"at_ms":5,"present":"t"},{"at_ms":1,"remove":"t"}]}"#,
                "steps[1].at_ms"
            ),
            (
                #"{"format":"nfcbench-scenario","version":1,"steps":[{"at_ms":5,"present":"t","faults":[{"after_commands":0,"kind":"melt"}]}]}"#,
                "steps[0].faults[0].kind"
            ),
            (
                #"{"format":"nfcbench-scenario","version":1,"steps":[{"at_ms":5,"present":"t"},{"at_ms":6,"present":"t"}]}"#,
                "steps[1].present"
            ),
        ])
    func namesField(text: String, field: String) {
        #expect(throws: DataFileError.self) { try parse(text) }
        do { _ = try parse(text) } catch { #expect(error.field == field) }
    }
}

/// The data files' rule on scenario files: each message below is written by hand from the
/// rule (`FILE:LINE:COLUMN: reason` for syntax, `FILE: field PATH: reason` for a field).
@Suite("Scenario file errors")
struct ScenarioFileErrorTests {
    func message(_ text: String) -> String? {
        do {
            _ = try Scenario(json: Data(text.utf8), file: "s.json", defaultReader: "s")
            return nil
        } catch {
            return error.description
        }
    }

    static let head = #"{"format": "nfcbench-scenario", "version": 1, "steps": "#

    @Test("A truncated file: line and column just after its last character")
    func truncated() {
        let text = """
            {"format": "nfcbench-scenario", "version": 1,
             "steps": [{"at_ms": 300, "present": "ntag215-uri"

            """
        #expect(message(text) == "s.json:2:51: unexpected end of file: the JSON is cut short")
    }

    @Test("A syntax error inside the file: line and column of the fault")
    func syntax() {
        let text = """
            {"format": "nfcbench-scenario", "version": 1,
             "steps": [{"at_ms": 300 "present": "ntag215-uri"}]}
            """
        #expect(message(text) == "s.json:2:26: not valid JSON: invalid value")
    }

    @Test("A key given twice is refused where it is repeated")
    func duplicateKey() {
        let text = """
            {"format": "nfcbench-scenario", "version": 1,
             "steps": [{"at_ms": 300, "present": "a", "at_ms": 400}]}
            """
        #expect(message(text) == "s.json:2:43: key \"at_ms\" is given twice in one object (first on line 2)")
    }

    @Test(
        "Wrong type, missing field, unknown name, numbers out of range or not whole",
        arguments: [
            (
                #"[{"at_ms": 0, "present": "t"}, {"at_ms": true, "remove": "t"}]}"#,
                "s.json: field steps[1].at_ms: expected a number, found true"
            ),
            (#"[{"present": "t"}]}"#, "s.json: field steps[0].at_ms: missing (required)"),
            (
                #"[{"at_ms": 5, "present": "t", "faults": [{"after_commands": 1, "kind": "melt"}]}]}"#,
                #"s.json: field steps[0].faults[0].kind: "melt" is not one of tag_lost, no_answer, corrupt_reply"#
            ),
            (
                #"[{"at_ms": -1, "present": "t"}]}"#,
                "s.json: field steps[0].at_ms: expected milliseconds from 0 to 1000000000000 in steps of 0.001 (1 µs), found -1"
            ),
            (
                #"[{"at_ms": 0.0005, "present": "t"}]}"#,
                "s.json: field steps[0].at_ms: expected milliseconds from 0 to 1000000000000 in steps of 0.001 (1 µs), found 0.0005"
            ),
            (
                #"[{"at_ms": 5, "present": "t", "faults": [{"after_commands": 1.5, "kind": "tag_lost"}]}]}"#,
                "s.json: field steps[0].faults[0].after_commands: expected a whole number from 0 to 1000000000, found 1.5"
            ),
            (
                #"[{"at_ms": 5, "present": "t", "faults": [{"kind": "tag_lost"}]}]}"#,
                #"s.json: field steps[0].faults[0].when: missing (required): a fault needs "when" (page_read, ndef_file_read, after_cc_read, first_write, block_read) or "after_commands""#
            ),
            (
                #"[{"at_ms": 5, "present": "t", "faults": [{"after_commands": true, "kind": "tag_lost"}]}]}"#,
                "s.json: field steps[0].faults[0].after_commands: expected a number, found true"
            ),
            (#"{"at_ms": 5}}"#, "s.json: field steps: expected a list, found an object"),
            (#"[{"at_ms": 5, "present": null}]}"#, "s.json: field steps[0].present: expected a string, found null"),
            (
                #"[{"at_ms": 5, "present": "t", "remove": "t"}]}"#,
                #"s.json: field steps[0]: needs exactly one of "present" or "remove""#
            ),
            (
                #"[{"at_ms": 5, "present": "t", "as": "A"}, {"at_ms": 6, "present": "u", "as": "A"}]}"#,
                "s.json: field steps[1].as: 'A' is already in the field"
            ),
            (
                #"[{"at_ms": 5, "present": "t"}, {"at_ms": 6, "remove": "t", "as": "t"}]}"#,
                #"s.json: field steps[1].as: only on a "present" step"#
            ),
        ])
    func fields(steps: String, expected: String) {
        #expect(message(Self.head + steps) == expected)
    }

    @Test("The top level: format, version, repeat_every_ms")
    func topLevel() {
        #expect(
            message(#"{"format": "nfcbench-tag", "version": 1, "steps": []}"#)
                == #"s.json: field format: "nfcbench-tag" is not "nfcbench-scenario""#)
        #expect(
            message(#"{"format": "nfcbench-scenario", "version": true, "steps": []}"#)
                == "s.json: field version: expected a number, found true")
        #expect(
            message(#"{"format": "nfcbench-scenario", "version": 2, "steps": []}"#)
                == "s.json: field version: format version 2; this build reads 1")
        #expect(
            message(#"{"format": "nfcbench-scenario", "version": 1, "steps": [], "repeat_every_ms": 0}"#)
                == "s.json: field repeat_every_ms: expected milliseconds from 0.001 to 1000000000000 in steps of 0.001 (1 µs), found 0"
        )
        #expect(message("[1, 2]") == "s.json: expected an object, found a list")
    }

    @Test("Every shipped scenario loads, through the file path")
    func shipped() throws {
        let dir = TestPaths.hardware.appendingPathComponent("scenarios").path
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".json") }
        #expect(names.count >= 9)
        for n in names {
            let s = try Scenario.load(path: dir + "/" + n)
            #expect(s.reader == String(n.dropLast(5)))
            #expect(!s.steps.isEmpty || n == "no-tag.json", "\(n)")
        }
        #expect(throws: DataFileError(.notFound, file: dir + "/nope.json", "no such file")) {
            try Scenario.load(path: dir + "/nope.json")
        }
    }
}
