import Foundation
import Testing

@testable import nfcbench

/// `--ndef SPEC` (issue 13, inputs 1 and 7): the bytes each spec makes, written by hand.
@Suite("--ndef SPEC syntax")
struct NDEFSpecTests {
    @Test(
        "Each spec's message bytes",
        arguments: [
            // text: is the text verbatim, colons included (input 7: not language "OK").
            ("text:OK: done", "D1 01 0B 54 02 65 6E 4F 4B 3A 20 64 6F 6E 65"),
            ("text:de:Hallo", "D1 01 0B 54 02 65 6E 64 65 3A 48 61 6C 6C 6F"),
            ("text@de:Hallo", "D1 01 08 54 02 64 65 48 61 6C 6C 6F"),
            ("text@pt-BR:a:b", "D1 01 09 54 05 70 74 2D 42 52 61 3A 62"),
            ("text:", "D1 01 03 54 02 65 6E"),
            // mime: with RFC 2045 parameters (input 1); TYPE ends at the first ':' outside quotes.
            (
                "mime:text/plain; charset=utf-8:hello",
                "D2 19 05 74 65 78 74 2F 70 6C 61 69 6E 3B 20 63 68 61 72 73 65 74 3D 75 74 66 2D 38 68 65 6C 6C 6F"
            ),
            ("mime:a/b; x=\"1:2\":z", "D2 0C 01 61 2F 62 3B 20 78 3D 22 31 3A 32 22 7A"),
            ("uri:https://example.com", "D1 01 0C 55 04 65 78 61 6D 70 6C 65 2E 63 6F 6D"),
        ])
    func bytes(spec: String, hex: String) throws {
        #expect(try NDEFSpec.parse(spec) == [UInt8](hex: hex), "\(spec)")
    }

    @Test(
        "Bad specs are refused (exit 65) saying why",
        arguments: [
            ("text@d:x", "not a language tag"),
            ("text@english:x", "not a language tag"),
            ("mime:text/plain, charset=utf-8:hi", "not a media type"),
            ("mime:plain:hi", "not a media type"),
            ("mime:text/plain", "needs TYPE:DATA"),
            ("hello", "needs a kind"),
            ("sms:123", "unknown NDEF spec kind"),
        ])
    func refused(spec: String, reason: String) {
        do {
            _ = try NDEFSpec.parse(spec)
            Issue.record("\(spec) was accepted")
        } catch {
            #expect(error.exitCode == 65, "\(spec)")
            #expect("\(error)".contains(reason), "\(spec): \(error)")
        }
    }
}
