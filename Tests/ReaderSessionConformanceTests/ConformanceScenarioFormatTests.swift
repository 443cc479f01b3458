import Foundation
import NFCBenchTestSupport
import NFCTags
import ReaderSessionConformance
import Testing

/// The package root (the support module's ``TestPaths``).
let packageRoot = TestPaths.packageRoot
let conformanceSuiteDirectory = packageRoot.appendingPathComponent("hardware/conformance").path
let shippedTagDirectories = [
    conformanceSuiteDirectory + "/tags", packageRoot.appendingPathComponent("hardware/tags").path,
]

func scenario(_ json: String, name: String = "test") throws -> ConformanceScenario {
    try ConformanceScenario(json: Data(json.utf8), name: name) { ref in
        try ConformanceScenario.loadTagFile(ref, in: shippedTagDirectories)
    }
}

@Suite("Conformance scenario files")
struct ConformanceScenarioFormatTests {
    @Test("A scenario parses into timed steps: user actions, another app, tags with faults, after-end steps")
    func parses() throws {
        let s = try scenario(
            """
            {"format": "nfcbench-conformance", "version": 1, "description": "d", "duration_ms": 90000, "thermal": false,
             "steps": [
               {"at_ms": 0, "user": "scan", "tags": 3},
               {"at_ms": 500, "other_app_session_ms": 2000},
               {"at_ms": 1000, "present": "ntag215-uri", "as": "A", "faults": [{"after_commands": 2, "kind": "tag_lost"}]},
               {"at_ms": 1500, "remove": "A"},
               {"after_end_ms": 250, "user": "background"}
             ],
             "expect_endings": [201, 203], "expect_error_message": true}
            """)
        #expect(s.name == "test")
        #expect(s.duration == .seconds(90))
        #expect(!s.thermal)
        #expect(s.expectEndings == [201, 203])
        #expect(s.expectErrorMessage)
        #expect(s.steps.count == 5)
        #expect(s.steps[0] == .init(when: .at(.zero), action: .user(.scan(ScanRequest(tagCount: 3)))))
        #expect(s.steps[0].action == .user(.scan(ScanRequest(tagCount: 3, readWrite: true))))
        #expect(s.steps[1] == .init(when: .at(.milliseconds(500)), action: .otherAppSession(.seconds(2))))
        let list = try #require(
            matched { if case .present(let list) = s.steps[2].action { list } else { nil } }, "no present step")
        let first = try #require(list.first, "no tag in the present step")
        #expect(first.tag == "ntag215-uri")
        #expect(first.name == "A")
        #expect(first.faults.count == 1)
        #expect(s.steps[3].action == .remove("A"))
        #expect(s.steps[4].when == .afterSessionEnd(.milliseconds(250)))
        #expect(s.tags["ntag215-uri"] != nil)
    }

    @Test(
        "Malformed files name the field and why",
        arguments: [
            (#"{"format": "nfcbench-scenario", "version": 1}"#, "format"),
            (#"{"format": "nfcbench-conformance", "version": 2}"#, "version"),
            (#"{"format": "nfcbench-conformance", "version": 1, "steps": []}"#, "duration_ms"),
            (#"{"format": "nfcbench-conformance", "version": 1, "duration_ms": true, "steps": []}"#, "duration_ms"),
            (
                #"{"format": "nfcbench-conformance", "version": 1, "duration_ms": 10, "steps": [{"user": "scan"}]}"#,
                "steps[0]"
            ),
            (
                #"{"format": "nfcbench-conformance", "version": 1, "duration_ms": 10, "steps": [{"at_ms": 0, "user": "wave"}]}"#,
                "steps[0].user"
            ),
            (
                #"{"format": "nfcbench-conformance", "version": 1, "duration_ms": 10, "steps": [{"at_ms": 5}, {"at_ms": 1, "user": "done"}]}"#,
                "steps[0]"
            ),
            (
                #"{"format": "nfcbench-conformance", "version": 1, "duration_ms": 10, "steps": [{"at_ms": 5, "user": "done"}, {"at_ms": 1, "user": "done"}]}"#,
                "steps[1].at_ms"
            ),
            (
                #"{"format": "nfcbench-conformance", "version": 1, "duration_ms": 10, "steps": [{"at_ms": 11, "user": "done"}]}"#,
                "steps[0].at_ms"
            ),
            (
                #"{"format": "nfcbench-conformance", "version": 1, "duration_ms": 10, "steps": [{"at_ms": 1, "remove": "A"}]}"#,
                "steps[0].remove"
            ),
            (
                #"{"format": "nfcbench-conformance", "version": 1, "duration_ms": 10, "steps": [{"at_ms": 1, "present": "no-such-tag"}]}"#,
                "steps[0].present"
            ),
            (
                #"{"format": "nfcbench-conformance", "version": 1, "duration_ms": 10, "steps": [{"at_ms": 1, "user": "scan", "tags": 0}]}"#,
                "steps[0].tags"
            ),
        ])
    func malformed(json: String, field: String) {
        #expect {
            _ = try scenario(json, name: "bad")
        } throws: { error in
            guard let e = error as? DataFileError else { return false }
            return e.field == field && e.file == "bad" && !e.reason.isEmpty
        }
    }

    @Test("The shipped suite loads: at least 30 scenarios covering each ending 200–204 and the named cases")
    func shippedSuite() throws {
        let suite = try ConformanceScenario.loadSuite(
            directory: conformanceSuiteDirectory, tagDirectories: shippedTagDirectories)
        #expect(suite.count >= 30)
        let names = Set(suite.map(\.name))
        for n in [
            "200-user-done", "201-timeout", "202-background", "203-busy", "204-first-read",
            "203-busy-without-user-retry", "203-busy-then-user-retries", "201-then-autorestart-window",
            "202-return-without-user", "202-return-with-user", "quick-rebegin-within-3s",
            "thermal-back-to-back-until-refused", "two-tags-in-field", "tag-removed-mid-read",
            "restartPolling-then-stale-tag", "invalidate-with-error-message", "guided-five-tags",
        ] {
            #expect(names.contains(n), "missing \(n)")
        }
        let endings = Set(suite.flatMap(\.expectEndings))
        #expect(endings.isSuperset(of: [200, 201, 202, 203, 204]))
    }
}

/// The data files' rule on conformance scenarios: each message below is written by hand
/// from the rule (`FILE:LINE:COLUMN: reason` for syntax, `FILE: field PATH: reason`).
@Suite("Conformance scenario file errors")
struct ConformanceScenarioErrorTests {
    func message(_ text: String) -> String? {
        do {
            _ = try ConformanceScenario(json: Data(text.utf8), name: "c", file: "c.json") { ref in
                try ConformanceScenario.loadTagFile(ref, in: shippedTagDirectories)
            }
            return nil
        } catch {
            return error.description
        }
    }

    static let head = #"{"format": "nfcbench-conformance", "version": 1, "duration_ms": 10000, "steps": "#

    @Test("A truncated file: line and column just after its last character")
    func truncated() {
        let text = """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 10000,
             "steps": [
               {"at_ms": 0, "user": "sc
            """
        #expect(message(text) == "c.json:3:28: unexpected end of file: the JSON is cut short")
    }

    @Test(
        "Wrong type, missing field, unknown name, numbers out of range or not whole",
        arguments: [
            (#"[{"at_ms": true, "user": "scan"}]}"#, "c.json: field steps[0].at_ms: expected a number, found true"),
            (
                #"[{"at_ms": 0, "user": "scan", "tags": 1.5}]}"#,
                "c.json: field steps[0].tags: expected a whole number from 1 to 100, found 1.5"
            ),
            (
                #"[{"at_ms": 0, "user": "scan", "tags": true}]}"#,
                "c.json: field steps[0].tags: expected a number, found true"
            ),
            (
                #"[{"at_ms": 0, "user": "scan", "tags": 101}]}"#,
                "c.json: field steps[0].tags: expected a whole number from 1 to 100, found 101"
            ),
            (
                #"[{"at_ms": 0, "user": "scan", "read_write": 1}]}"#,
                "c.json: field steps[0].read_write: expected true or false, found 1"
            ),
            (
                #"[{"at_ms": 0, "user": "wave"}]}"#,
                #"c.json: field steps[0].user: "wave" is not one of scan, done, background, foreground, inactive, tap-notification"#
            ),
            (
                #"[{"at_ms": 0, "user": "done", "tags": 2}]}"#,
                #"c.json: field steps[0].tags: only with "user": "scan""#
            ),
            (
                #"[{"user": "done"}]}"#,
                #"c.json: field steps[0]: needs exactly one of "at_ms", "after_end_ms", "after_ms""#
            ),
            (
                #"[{"at_ms": 0, "present": [{"as": "A"}]}]}"#,
                "c.json: field steps[0].present[0].tag: missing (required)"
            ),
            (
                #"[{"at_ms": 0, "present": 5}]}"#,
                #"c.json: field steps[0].present: expected a tag name or {"tag": NAME, "as": NAME, "faults": [...]}"#
            ),
            (
                #"[{"at_ms": 0, "present": "ntag215-uri", "faults": [{"after_commands": -1, "kind": "tag_lost"}]}]}"#,
                "c.json: field steps[0].faults[0].after_commands: expected a whole number from 0 to 1000000000, found -1"
            ),
            (
                #"[{"at_ms": 0, "present": [{"tag": "ntag215-uri", "faults": [{"after_commands": 0, "kind": "zap"}]}]}]}"#,
                #"c.json: field steps[0].present[0].faults[0].kind: "zap" is not one of tag_lost, no_answer, corrupt_reply"#
            ),
            (
                #"[{"at_ms": 10001, "user": "done"}]}"#,
                "c.json: field steps[0].at_ms: after duration_ms"
            ),
            (
                #"[{"at_ms": 0, "present": "no-such-tag"}]}"#,
                "c.json: field steps[0].present: no tag file 'no-such-tag' in "
                    + shippedTagDirectories.joined(separator: ", ")
            ),
        ])
    func fields(steps: String, expected: String) {
        #expect(message(Self.head + steps) == expected)
    }

    @Test("Top-level numbers and lists: duration_ms, thermal, expect_endings")
    func topLevel() {
        let start = #"{"format": "nfcbench-conformance", "version": 1, "steps": [], "#
        #expect(
            message(start + #""duration_ms": 0}"#)
                == "c.json: field duration_ms: expected milliseconds from 0.001 to 1000000000 in steps of 0.001 (1 µs), found 0"
        )
        #expect(message(start + #""duration_ms": "5"}"#) == #"c.json: field duration_ms: expected a number, found "5""#)
        #expect(
            message(start + #""duration_ms": 5, "thermal": "no"}"#)
                == #"c.json: field thermal: expected true or false, found "no""#)
        #expect(
            message(start + #""duration_ms": 5, "expect_error_message": 1}"#)
                == "c.json: field expect_error_message: expected true or false, found 1")
        #expect(
            message(start + #""duration_ms": 5, "expect_endings": [201, true]}"#)
                == "c.json: field expect_endings[1]: expected a number, found true")
        #expect(
            message(start + #""duration_ms": 5, "expect_endings": [209]}"#)
                == "c.json: field expect_endings[0]: expected a Core NFC error code (1, 2, 3, 4, 5, 6, 7, 8, 100, 101, 102, "
                + "103, 104, 105, 200, 201, 202, 203, 204, 300, 400, 401, 402, 403), found 209")
    }

    @Test("A tag file's own error names the tag file, not the scenario")
    func tagFileError() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "nfcbench-conf-tag-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let tag = dir.appendingPathComponent("t.json").path
        try
            #"{"format": "nfcbench-tag", "version": 1, "type": "ntag215", "uid": "04A23B915C6E80", "atqa": "4400", "sak": "00", "pages": [], "faults": [{"after_commands": 1, "kind": "tag_lost"}, {"after_commands": "2", "kind": "tag_lost"}]}"#
            .write(toFile: tag, atomically: true, encoding: .utf8)
        #expect(
            message(Self.head + #"[{"at_ms": 0, "present": "\#(tag)"}]}"#)
                == #"\#(tag): field faults[1].after_commands: expected a number, found "2""#)
    }
}
