import Foundation
import NFCBenchTestSupport
import NFCTags
import Testing

/// Hand-written NDEF messages (hex from NFC Forum NDEF 1.0 and the RTDs), each with our
/// expected outcome and how ndeflib (PyPI) is expected to compare.
struct NDEFFixture: Sendable, CustomTestStringConvertible {
    enum Outcome: Sendable, Equatable {
        /// Parses; `records` records after chunk reassembly.
        case valid(records: Int)
        case invalid(NDEFError.Code)
    }

    /// How ndeflib 0.3.3 (`message_decoder(errors='strict')`) relates to us on these bytes.
    enum NDEFLib: Sendable, Equatable {
        /// Same structural verdict; same records, and same Text/URI decoding where both decode.
        case same
        /// We reject the message, ndeflib accepts it (it stops at ME and never looks at what
        /// follows, accepts `unchanged` anywhere, knows no chunk rules, takes 0 bytes as an
        /// empty message).
        case weRejectTheyAccept
        /// ndeflib rejects the message, we accept it (TNF 7: NDEF 1.0 §3.2.6 says read it
        /// as unknown).
        case theyRejectWeAccept
        /// ndeflib yields every chunk as its own record; we reassemble (NDEF 1.0 §2.3.3).
        case theyDoNotReassembleChunks
        /// Same records, but the body is decoded differently (the reason is in `note`).
        case bodyDecodedDifferently
    }

    let name: String
    let hex: String
    let outcome: Outcome
    let ndeflib: NDEFLib
    var note: String = ""

    var bytes: [UInt8] { [UInt8](hex: hex) ?? [] }
    var testDescription: String { name }
}

enum NDEFFixtures {
    /// The Flipper corpus file's NDEF message (pages 5–11 after TLV `03 19`): a URI record,
    /// code 0x00, "https://google.com/?" (20 bytes, so PAYLOAD_LENGTH is 0x15).
    static let flipperGoogleURI =
        "D1 01 15 55 00 68 74 74 70 73 3A 2F 2F 67 6F 6F 67 6C 65 2E 63 6F 6D 2F 3F"
    static let helloText = "D1 01 08 54 02 65 6E 48 65 6C 6C 6F"
    /// Sp { U "https://www.example.com", T en "Hello", act 0x00 }.
    static let smartPoster =
        "D1 02 23 53 70 91 01 0C 55 02 65 78 61 6D 70 6C 65 2E 63 6F 6D 11 01 08 54 02 65 6E 48 65 6C 6C 6F 51 03 01 61 63 74 00"

    static let valid: [NDEFFixture] = [
        .init(name: "Flipper corpus URI record", hex: flipperGoogleURI, outcome: .valid(records: 1), ndeflib: .same),
        .init(name: "empty record", hex: "D0 00 00", outcome: .valid(records: 1), ndeflib: .same),
        .init(name: "UTF-8 text en Hello", hex: helloText, outcome: .valid(records: 1), ndeflib: .same),
        .init(
            name: "URI https://www. prefix", hex: "D1 01 0C 55 02 65 78 61 6D 70 6C 65 2E 63 6F 6D",
            outcome: .valid(records: 1), ndeflib: .same),
        .init(
            name: "URI tel: prefix", hex: "D1 01 0D 55 05 2B 31 35 35 35 31 32 33 34 35 36 37",
            outcome: .valid(records: 1), ndeflib: .same),
        .init(
            name: "URI urn:nfc: prefix (last code 0x23)", hex: "D1 01 04 55 23 73 6E 65",
            outcome: .valid(records: 1), ndeflib: .same),
        .init(
            name: "UTF-16 text with big-endian BOM", hex: "D1 01 09 54 82 65 6E FE FF 00 48 00 69",
            outcome: .valid(records: 1), ndeflib: .same),
        .init(
            name: "UTF-16 text with little-endian BOM", hex: "D1 01 09 54 82 65 6E FF FE 48 00 69 00",
            outcome: .valid(records: 1), ndeflib: .same),
        .init(
            name: "UTF-16 text without BOM", hex: "D1 01 07 54 82 65 6E 00 48 00 69",
            outcome: .valid(records: 1), ndeflib: .bodyDecodedDifferently,
            note:
                "no BOM is big-endian per RTD-Text 1.0 (Hi); Python's UTF-16 codec takes the host's little-endian order"
        ),
        .init(
            name: "two records, text then URI",
            hex: "91 01 08 54 02 65 6E 48 65 6C 6C 6F 51 01 0C 55 02 65 78 61 6D 70 6C 65 2E 63 6F 6D",
            outcome: .valid(records: 2), ndeflib: .same),
        .init(
            name: "media text/plain",
            hex: "D2 0A 0B 74 65 78 74 2F 70 6C 61 69 6E 68 65 6C 6C 6F 20 77 6F 72 6C 64",
            outcome: .valid(records: 1), ndeflib: .same),
        .init(
            name: "Android Application Record",
            hex: "D4 0F 0B 61 6E 64 72 6F 69 64 2E 63 6F 6D 3A 70 6B 67 63 6F 6D 2E 65 78 61 6D 70 6C 65",
            outcome: .valid(records: 1), ndeflib: .same),
        .init(
            name: "external type example.com:t", hex: "D4 0D 02 65 78 61 6D 70 6C 65 2E 63 6F 6D 3A 74 01 02",
            outcome: .valid(records: 1), ndeflib: .same),
        .init(
            name: "absolute URI type", hex: "D3 0D 00 68 74 74 70 73 3A 2F 2F 61 2E 62 2F 63",
            outcome: .valid(records: 1), ndeflib: .same),
        .init(name: "record with an ID", hex: "D9 01 02 01 55 23 03 61", outcome: .valid(records: 1), ndeflib: .same),
        .init(
            name: "long-form (SR=0) payload length", hex: "C1 01 00 00 00 04 54 02 65 6E 41",
            outcome: .valid(records: 1), ndeflib: .same),
        .init(
            name: "text in two chunks", hex: "B1 01 03 54 02 65 6E 56 00 02 48 69",
            outcome: .valid(records: 1), ndeflib: .theyDoNotReassembleChunks),
        .init(
            name: "text in three chunks", hex: "B1 01 03 54 02 65 6E 36 00 01 48 56 00 01 69",
            outcome: .valid(records: 1), ndeflib: .theyDoNotReassembleChunks),
        .init(
            name: "Smart Poster with URI, title and action", hex: smartPoster,
            outcome: .valid(records: 1), ndeflib: .same),
        .init(name: "TNF unknown", hex: "D5 00 03 01 02 03", outcome: .valid(records: 1), ndeflib: .same),
        .init(
            name: "URI with RFU prefix code 0x24", hex: "D1 01 03 55 24 61 62",
            outcome: .valid(records: 1), ndeflib: .bodyDecodedDifferently,
            note:
                "we keep the code and decode as no prefix with a warning (RTD-URI 1.0 §3.2.2: RFU); ndeflib strict refuses the body"
        ),
        .init(
            name: "reserved TNF 7 read as unknown", hex: "D7 00 01 AA",
            outcome: .valid(records: 1), ndeflib: .theyRejectWeAccept),
        .init(
            name: "Text body with RFU bit 6 set (message still parses)", hex: "D1 01 04 54 42 65 6E 41",
            outcome: .valid(records: 1), ndeflib: .bodyDecodedDifferently,
            note: "RTD-Text 1.0 §3.2.1 says bit 6 is RFU and 0: our record is .invalid; ndeflib ignores the bit"),
        .init(
            name: "Text body not UTF-8 (message still parses)", hex: "D1 01 04 54 02 65 6E FF",
            outcome: .valid(records: 1), ndeflib: .same),
        .init(
            name: "Text language length past the payload (message still parses)", hex: "D1 01 03 54 05 65 6E",
            outcome: .valid(records: 1), ndeflib: .same),
        .init(
            name: "Smart Poster without a URI record (message still parses)",
            hex: "D1 02 0C 53 70 D1 01 08 54 02 65 6E 48 65 6C 6C 6F",
            outcome: .valid(records: 1), ndeflib: .same),
    ]

    static let invalid: [NDEFFixture] = [
        .init(name: "no bytes at all", hex: "", outcome: .invalid(.truncated), ndeflib: .weRejectTheyAccept),
        .init(
            name: "first record without MB", hex: "51 01 01 55 00", outcome: .invalid(.missingMessageBegin),
            ndeflib: .same),
        .init(
            name: "last record without ME", hex: "91 01 01 55 00", outcome: .invalid(.missingMessageEnd), ndeflib: .same
        ),
        .init(
            name: "MB on the second record", hex: "91 01 01 55 00 D1 01 01 55 00",
            outcome: .invalid(.unexpectedMessageBegin), ndeflib: .same),
        .init(
            name: "a byte after the ME record", hex: "D0 00 00 00", outcome: .invalid(.trailingBytes),
            ndeflib: .weRejectTheyAccept),
        .init(
            name: "payload shorter than its length", hex: "D1 01 05 55 00 61", outcome: .invalid(.truncated),
            ndeflib: .same),
        .init(name: "4-byte length cut short", hex: "C1 01 00 00", outcome: .invalid(.truncated), ndeflib: .same),
        .init(
            name: "empty TNF with a payload", hex: "D0 00 01 00", outcome: .invalid(.invalidTypeNameFormatFields),
            ndeflib: .same),
        .init(
            name: "unknown TNF with a type", hex: "D5 01 00 41", outcome: .invalid(.invalidTypeNameFormatFields),
            ndeflib: .same),
        .init(
            name: "well-known TNF without a type", hex: "D1 00 00", outcome: .invalid(.invalidTypeNameFormatFields),
            ndeflib: .same),
        .init(
            name: "unchanged TNF outside a chunk sequence", hex: "D6 00 00", outcome: .invalid(.chunkFlagMisuse),
            ndeflib: .weRejectTheyAccept),
        .init(
            name: "message ends on a CF record", hex: "F1 01 03 54 02 65 6E", outcome: .invalid(.chunkFlagMisuse),
            ndeflib: .same),
        .init(
            name: "chunk continuation with a TNF other than unchanged", hex: "B1 01 03 54 02 65 6E 51 01 01 55 00",
            outcome: .invalid(.chunkFlagMisuse), ndeflib: .weRejectTheyAccept),
        .init(
            name: "IL on a terminating chunk", hex: "B1 01 03 54 02 65 6E 5E 00 01 01 23 48",
            outcome: .invalid(.chunkFlagMisuse), ndeflib: .weRejectTheyAccept),
        .init(
            name: "middle chunk carries ME", hex: "B1 01 03 54 02 65 6E 76 00 01 48",
            outcome: .invalid(.chunkFlagMisuse), ndeflib: .same),
        .init(
            name: "4-byte payload length of 4 GiB", hex: "C5 00 FF FF FF FF", outcome: .invalid(.lengthOverflow),
            ndeflib: .same),
    ]

    static var all: [NDEFFixture] { valid + invalid }
}

/// Where the package and the corpus (Tests/Fixtures/corpus) are: the support module's paths.
typealias NDEFTestEnvironment = TestPaths
