import Foundation
import HCEEvents
import NFCTags
import Testing

/// The data files' rule on reader profiles: each message below is written by hand from the
/// rule (`FILE:LINE:COLUMN: reason` for syntax, `FILE: field PATH: reason` for a field).
@Suite("Reader profile file errors")
struct ReaderProfileFormatTests {
    func message(_ text: String) -> String? {
        do {
            _ = try ReaderProfile(json: Data(text.utf8), file: "p.json")
            return nil
        } catch {
            return error.description
        }
    }

    /// A valid ISO-DEP profile with `steps` and `extra` fields spliced in.
    func profile(steps: String = #"[{"t_us": 8000, "apdu": "00A40400"}]"#, _ extra: String = "") -> String {
        #"{"format": "nfcbench-reader-profile/1", "name": "x", "category": "c", "technology": "ISO14443A", "iso_dep": true, "activation_us": 1000, "field_off_us": 90000, "source": "s", "steps": "#
            + steps + extra + "}"
    }

    @Test("The splice base is a valid profile")
    func base() throws {
        #expect(message(profile()) == nil)
        #expect(
            try ReaderProfile(json: Data(profile(steps: #"[{"t_ms": 8.5, "apdu": "00A40400"}]"#).utf8)).steps[0].offset
                == .microseconds(8500))
    }

    @Test("A truncated file: line and column just after its last character")
    func truncated() {
        let text = """
            {"format": "nfcbench-reader-profile/1", "name": "x",
             "steps": [
               {"t_us": 8000, "apdu": "00A4
            """
        #expect(message(text) == "p.json:3:32: unexpected end of file: the JSON is cut short")
    }

    @Test(
        "Wrong type, missing field, unknown name, numbers out of range or not whole",
        arguments: [
            (
                #"[{"t_us": true, "apdu": "00A40400"}]"#, "",
                "p.json: field steps[0].t_us: expected a number, found true"
            ),
            (
                #"[{"t_us": 1.5, "apdu": "00A40400"}]"#, "",
                "p.json: field steps[0].t_us: expected a whole number from 0 to 1000000000000000, found 1.5"
            ),
            (
                #"[{"t_us": -5, "apdu": "00A40400"}]"#, "",
                "p.json: field steps[0].t_us: expected a whole number from 0 to 1000000000000000, found -5"
            ),
            (
                #"[{"t_us": 8000, "t_ms": 8, "apdu": "00A40400"}]"#, "",
                "p.json: field steps[0].t_ms: give t_us or t_ms, not both"
            ),
            (#"[{"t_us": 8000}]"#, "", "p.json: field steps[0].apdu: missing (required)"),
            (#"[{"apdu": "00A40400"}]"#, "", "p.json: field steps[0].t_us: missing (or t_ms)"),
            (
                #"[{"t_us": 8000, "apdu": "00A40400", "expect_sw": ["9000", "90"]}]"#, "",
                #"p.json: field steps[0].expect_sw[1]: a status word is 4 hex digits (X = any), not "90""#
            ),
            (
                #"[{"t_us": 8000, "apdu": "00A40400", "stop_on_failure": "yes"}]"#, "",
                #"p.json: field steps[0].stop_on_failure: expected true or false, found "yes""#
            ),
            (
                #"[{"t_us": 8000, "apdu": "00A4ZZ"}]"#, "",
                #"p.json: field steps[0].apdu: "00A4ZZ" is not hex"#
            ),
            (
                #"[{"t_us": 8000, "apdu": "00A40400"}, {"t_us": 7000, "apdu": "00A40400"}]"#, "",
                "p.json: field steps[1].t_us: earlier than the step before"
            ),
            (#"[]"#, #", "ecp": 6"#, "p.json: field ecp: expected a string, found 6"),
        ])
    func fields(steps: String, extra: String, expected: String) {
        #expect(message(profile(steps: steps, extra)) == expected)
    }

    @Test("Top-level fields: technology, iso_dep, times")
    func topLevel() {
        let start = #"{"format": "nfcbench-reader-profile/1", "name": "x", "category": "c", "source": "s", "#
        #expect(
            message(start + #""technology": "NFC-V", "iso_dep": false, "field_off_us": 1}"#)
                == #"p.json: field technology: "NFC-V" is not one of ISO14443A, ISO14443B, FeliCa"#)
        #expect(
            message(start + #""technology": "FeliCa", "iso_dep": "no", "field_off_us": 1}"#)
                == #"p.json: field iso_dep: expected true or false, found "no""#)
        #expect(
            message(start + #""technology": "FeliCa", "iso_dep": false}"#)
                == "p.json: field field_off_us: missing (or field_off_ms)")
        #expect(
            message(start + #""technology": "ISO14443A", "iso_dep": true, "field_off_us": 1}"#)
                == "p.json: field activation_us: missing (or activation_ms): required with ISO-DEP")
        #expect(
            message(start + #""technology": "ISO14443A", "iso_dep": false, "activation_us": 5, "field_off_us": 1}"#)
                == #"p.json: field activation_us: only with "iso_dep": true"#)
        #expect(
            message(start + #""technology": "ISO14443A", "iso_dep": false, "field_off_ms": 1e13}"#)
                == "p.json: field field_off_ms: expected milliseconds from 0 to 1000000000000 in steps of 0.001 (1 µs), found 10000000000000"
        )
        #expect(
            message(#"{"format": "nfcbench-reader-profile/1", "technology": "FeliCa"}"#)
                == "p.json: field name: missing (required)")
    }
}
