import Foundation
import NFCFiles
import Testing

@testable import NFCTags

/// The data files' rule (``DataFile``) and our tag JSON under it. Each message is written
/// by hand from the rule: `FILE:LINE:COLUMN: reason` for syntax, `FILE: field PATH: reason`.
@Suite("Data file rule and tag file errors")
struct DataFileTests {
    /// Writes `text` to a fresh `t.json` (or `name`), loads it as a tag file and returns the
    /// error's description with the folder cut off.
    func tagMessage(_ text: String, name: String = "t.json") throws -> String? {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "nfcbench-datafile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        do {
            _ = try TagFile.load(path: path)
            return nil
        } catch {
            #expect(error.file == path)
            return error.description.replacingOccurrences(of: dir.path + "/", with: "")
        }
    }

    static let head =
        #"{"format": "nfcbench-tag", "version": 1, "type": "ntag215", "uid": "04A23B915C6E80", "atqa": "4400", "sak": "00""#
    static let pages = #", "pages": ["04A23B15", "915C6E80", "00000000", "E1103E00"]"#

    @Test("The splice base loads")
    func base() throws {
        #expect(try tagMessage(Self.head + Self.pages + "}") == nil)
    }

    @Test("A truncated tag file: line and column just after its last character")
    func truncated() throws {
        let text = """
            {"format": "nfcbench-tag",
             "version": 1,
             "type": "ntag2
            """
        #expect(try tagMessage(text) == "t.json:3:16: unexpected end of file: the JSON is cut short")
    }

    @Test(
        "Tag file fields: wrong type, missing, unknown name, out of range, not whole",
        arguments: [
            (#", "ats": 5"#, "t.json: field ats: expected a string, found 5"),
            (#", "comment": null"#, "t.json: field comment: expected a string, found null"),
            (
                #", "faults": [{"after_commands": true, "kind": "tag_lost"}]"#,
                "t.json: field faults[0].after_commands: expected a number, found true"
            ),
            (
                #", "faults": [{"after_commands": 2.5, "kind": "tag_lost"}]"#,
                "t.json: field faults[0].after_commands: expected a whole number from 0 to 1000000000, found 2.5"
            ),
            (
                #", "faults": [{"after_commands": 2, "kind": "melt"}]"#,
                #"t.json: field faults[0].kind: "melt" is not one of tag_lost, no_answer, corrupt_reply"#
            ),
            (
                #", "faults": [{"kind": "tag_lost"}]"#,
                #"t.json: field faults[0].when: missing (required): a fault needs "when" (page_read, ndef_file_read, after_cc_read, first_write, block_read) or "after_commands""#
            ),
            (#", "read_only": true"#, #"t.json: field read_only: only for "type": "type4""#),
            (#", "get_version": "0004""#, "t.json: field get_version: expected 8 bytes, got 2"),
        ])
    func type2Fields(extra: String, expected: String) throws {
        #expect(try tagMessage(Self.head + Self.pages + extra + "}") == expected)
    }

    @Test("Pages: each a 4-byte hex string, named by its position")
    func pages() throws {
        let start = Self.head + #", "pages": ["04A23B15", "#
        #expect(try tagMessage(start + #"5]}"#) == "t.json: field pages[1]: expected a string, found 5")
        #expect(
            try tagMessage(start + #""915C6E80", "ZZ"]}"#)
                == #"t.json: field pages[2]: expected 4 bytes of hex, got "ZZ""#)
        #expect(
            try tagMessage(Self.head + "}") == #"t.json: field pages: a Type 2 tag needs "pages": ["04A23B91", ...]"#)
    }

    @Test("The top level: version, type, uid")
    func topLevel() throws {
        let base = #"{"format": "nfcbench-tag", "#
        #expect(try tagMessage(base + #""version": true}"#) == "t.json: field version: expected a number, found true")
        #expect(
            try tagMessage(base + #""version": 2}"#) == "t.json: field version: format version 2; this build reads 1")
        #expect(
            try tagMessage(base + #""version": 1, "type": "ntag999"}"#)
                == #"t.json: field type: "ntag999" is not one of ntag213, ntag215, ntag216, ultralight, ultralight_c, ultralight_ev1, type4, mifare_classic_1k, felica_lite_s, felica_standard, icode_slix, st25tv"#
        )
        #expect(try tagMessage(base + #""version": 1, "type": "ntag215"}"#) == "t.json: field uid: missing (required)")
        #expect(
            try tagMessage(base + #""version": 1, "type": "ntag215", "uid": "04ZZ"}"#)
                == #"t.json: field uid: "04ZZ" is not hex"#)
    }

    @Test("Type 4 fields: mapping version by name, the maximum size by the mapping's range")
    func type4() throws {
        let base =
            #"{"format": "nfcbench-tag", "version": 1, "type": "type4", "uid": "04518A2B6C1F90", "atqa": "4403", "sak": "20", "ndef_file": "0000""#
        #expect(try tagMessage(base + #", "mapping_version": "2.0", "max_ndef_file_size": 256}"#) == nil)
        #expect(
            try tagMessage(base + #", "mapping_version": "2.1", "max_ndef_file_size": 256}"#)
                == #"t.json: field mapping_version: "2.1" is not one of 1.0, 2.0, 3.0"#)
        #expect(
            try tagMessage(base + #", "mapping_version": "2.0", "max_ndef_file_size": 70000}"#)
                == "t.json: field max_ndef_file_size: expected a whole number from 5 to 65534, found 70000")
        #expect(
            try tagMessage(base + #", "mapping_version": "3.0", "max_ndef_file_size": 256.5}"#)
                == "t.json: field max_ndef_file_size: expected a whole number from 5 to 16777216, found 256.5")
        #expect(
            try tagMessage(base + #", "mapping_version": "2.0", "max_ndef_file_size": "256"}"#)
                == #"t.json: field max_ndef_file_size: expected a number, found "256""#)
        #expect(
            try tagMessage(base + #", "mapping_version": "2.0", "max_ndef_file_size": 256, "read_only": 0}"#)
                == "t.json: field read_only: expected true or false, found 0")
        #expect(
            try tagMessage(base + #", "mapping_version": "2.0"}"#)
                == "t.json: field max_ndef_file_size: missing (required)")
    }

    @Test("Syntax: line and column of the fault, in characters, for every JSON tag format")
    func syntax() throws {
        // "é" is two UTF-8 bytes: the column counts it once.
        #expect(
            try tagMessage("{\"format\": \"nfcbench-tag\",\n \"comment\": \"é\", @}")
                == "t.json:2:18: not valid JSON: invalid value")
        #expect(
            try tagMessage("{\"FileType\": \"mfu\",\n \"Card\": {\"UID\": \"04\",}, \"blocks\": {\"0\" \"x\"}}")
                == "t.json:2:41: not valid JSON: invalid value")
        #expect(
            try tagMessage("{\"format\": \"nfcbench-tag\",\n \"version\": 1e400}")
                == "t.json:2:13: not valid JSON: number 1e400 is not representable in Swift")
        #expect(
            try tagMessage("{\"format\": \"nfcbench-tag\",\n \"version\": 1,\n \"version\": 1}")
                == "t.json:3:2: key \"version\" is given twice in one object (first on line 2)")
    }

    @Test("What FORMAT.md says Foundation tolerates holds: a byte order mark, a trailing comma; not comments")
    func tolerances() throws {
        struct One: Decodable { var a: [Int] }
        #expect(try DataFile.decode(One.self, from: Data("\u{FEFF}{\"a\": [1, 2,],}".utf8), file: "x").a == [1, 2])
        #expect(throws: DataFileError(.syntax, file: "x", line: 1, column: 10, "not valid JSON: invalid value")) {
            try DataFile.decode(One.self, from: Data("{\"a\": [] // c\n}".utf8), file: "x")
        }
        // After a byte order mark, columns still count from the first visible character.
        #expect(throws: DataFileError(.syntax, file: "x", line: 1, column: 2, "not valid JSON: invalid value")) {
            try DataFile.decode(One.self, from: Data("\u{FEFF}{@}".utf8), file: "x")
        }
    }

    @Test("Flipper files keep their line numbers, now with the file")
    func flipper() throws {
        let text =
            "Filetype: Flipper NFC device\nVersion: 2\nDevice type: NTAG215\nUID: 04 A2 3B 91 5C 6E 80\nATQA: 00 44\nSAK: 00\nPages total: 135\nPage 0: 04 A2 ZZ 15\n"
        #expect(
            try tagMessage(text, name: "t.nfc") == #"t.nfc:8: field Page 0: expected 4 hex bytes, got "04 A2 ZZ 15""#)
    }

    @Test("A missing file is .notFound, naming it; a folder too")
    func missing() {
        #expect(throws: DataFileError(.notFound, file: "/nonexistent/t.json", "no such file")) {
            try TagFile.load(path: "/nonexistent/t.json")
        }
        let tmp = FileManager.default.temporaryDirectory.path
        #expect(throws: DataFileError(.notFound, file: tmp, "is a folder, not a file")) {
            try TagFile.load(path: tmp)
        }
    }

    @Test("Positions: 1-based lines, columns in characters after the last newline")
    func positions() {
        let data = Data("ab\ncé\nx".utf8)
        #expect(DataFile.position(ofByte: 0, in: data) == (1, 1))
        #expect(DataFile.position(ofByte: 3, in: data) == (2, 1))
        #expect(DataFile.position(ofByte: 6, in: data) == (2, 3))  // after "cé" (3 bytes)
        #expect(DataFile.position(ofByte: 7, in: data) == (3, 1))
    }

    @Test("Descriptions: FILE:LINE:COLUMN, FILE: field PATH, and without a file")
    func descriptions() {
        #expect(DataFileError(.syntax, file: "a.json", line: 3, column: 7, "r").description == "a.json:3:7: r")
        #expect(
            DataFileError(.invalidValue, file: "a.json", field: "steps[2].at_ms", "r").description
                == "a.json: field steps[2].at_ms: r")
        #expect(DataFileError(.notFound, file: "a.json", "no such file").description == "a.json: no such file")
        #expect(DataFileError(.invalidValue, field: "atqa", "r").description == "field atqa: r")
        #expect(DataFileError(.syntax, line: 8, "r").description == "line 8: r")
    }
}
