import Foundation
import ReaderSessionConformance
import Testing

/// The package root, from this file's path (…/Tests/ReaderSessionConformanceTests/x.swift).
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
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
        guard case .present(let list) = s.steps[2].action, let first = list.first else {
            Issue.record("no present step")
            return
        }
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
                "present"
            ),
            (
                #"{"format": "nfcbench-conformance", "version": 1, "duration_ms": 10, "steps": [{"at_ms": 1, "user": "scan", "tags": 0}]}"#,
                "steps[0].tags"
            ),
            (#"[1, 2]"#, "(file)"),
        ])
    func malformed(json: String, field: String) {
        #expect {
            _ = try scenario(json, name: "bad")
        } throws: { error in
            guard let e = error as? ConformanceFormatError else { return false }
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
