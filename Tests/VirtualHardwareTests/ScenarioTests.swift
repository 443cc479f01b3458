import Foundation
import NFCTags
import Testing
import VirtualHardware

@Suite("Simulated-reader scenario files")
struct ScenarioTests {
    func parse(_ text: String) throws(Scenario.FormatError) -> Scenario {
        try Scenario(json: Data(text.utf8), defaultReader: "file-name")
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
                #"{"format":"nfcbench-scenario","version":1,"steps":[{"at_ms":5,"present":"t","faults":[{"kind":"melt"}]}]}"#,
                "steps[0].faults[0].kind"
            ),
            (
                #"{"format":"nfcbench-scenario","version":1,"steps":[{"at_ms":5,"present":"t"},{"at_ms":6,"present":"t"}]}"#,
                "steps[1].as"
            ),
            ("[1,2]", "(file)"),
        ])
    func namesField(text: String, field: String) {
        #expect(throws: Scenario.FormatError.self) { try parse(text) }
        do { _ = try parse(text) } catch { #expect(error.field == field) }
    }
}
