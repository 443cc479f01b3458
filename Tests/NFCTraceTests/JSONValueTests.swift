import Foundation
import NFCTrace
import Testing

@Suite("JSONValue's string escapes (RFC 8259 §7), checked by Foundation's JSONSerialization")
struct JSONValueStringTests {
    static let strings = [
        "", "plain ASCII", "quote \" and backslash \\", "\"", "\\\\", "line\nfeed\rreturn\ttab",
        "bell \u{07} nul \u{00} unit separator \u{1F}", "é ü ß", "NFC 📱 tag", "mixed \"é\"\n📱\\",
        "00A4040007D276000085010100", String(repeating: "a\u{01}", count: 100),
    ]

    @Test("Every string survives serialization and Foundation's parse unchanged", arguments: strings)
    func roundTrip(_ s: String) throws {
        let text = JSONValue.object(["s": .string(s)]).serialized
        let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        #expect(parsed?["s"] as? String == s, "\(text)")
    }

    @Test("Control characters are escaped, nothing else is: the text stays one line")
    func escapes() {
        #expect(JSONValue.string("a\"b\\c\nd\u{01}é").serialized == #""a\"b\\c\nd\u0001é""#)
        #expect(JSONValue.string("9000").serialized == #""9000""#)
        #expect(!JSONValue.string("x\ny\r").serialized.contains("\n"))
    }
}
