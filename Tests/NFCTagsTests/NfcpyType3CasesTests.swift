import Foundation
import NFCTags
import Testing

/// nfcpy 1.0.4's own Type 3 Tag cases (tests/test_tag_tt3.py in the PyPI sdist that
/// scripts/install-deps fetches): each case's tag image (attribute block and data blocks) made
/// into one of our tag files, read by nfcbench's Type 3 procedure, and compared with what the
/// nfcpy test expects (a message of that length and capacity, or `tag.ndef is None`). The
/// images are transcribed from the file, with its line numbers.
@Suite("nfcpy 1.0.4's Type 3 cases (test_tag_tt3.py) through nfcbench's tag files")
struct NfcpyType3CasesTests {
    enum Expected: Sendable {
        /// `tag.ndef` is a message: its length, capacity, writeability.
        case message(length: Int, capacity: Int, writeable: Bool)
        /// `tag.ndef is None`.
        case none
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        /// The blocks of system 12FC (block 0 the attribute block), hex; or another system.
        var blocks: [String]
        var system = "12FC"
        var fault: String? = nil
        var expected: Expected
        var testDescription: String { name }
    }

    /// test_ndef_read's image (lines 634-639): Ln 39, Nbr 2, Nmaxb 3.
    static let readImage = [
        "1002020003000000000001000027003f", "d10222537091010e55036e66632d666f",
        "72756d2e6f726751010c5402656e4e46", "4320466f72756d000000000000000000",
    ]
    /// ndef_data_1 … 4's first two blocks (lines 135-228): Nbr 1, Nmaxb 5, Ln 16 (a Smart Poster
    /// with the URI "ab.com"); their other blocks are zero but for a marker byte.
    static func dataImage(_ markers: [Int]) -> [String] {
        var out = ["10010100050000000000010000100028", "d1020b5370d10107550361622e636f6d"]
        for b in 2...10 {
            out.append((markers.contains(b) ? String(format: "%02x", b) : "00") + String(repeating: "0", count: 30))
        }
        return out
    }

    static let cases: [Case] = [
        Case(
            name: "test_ndef_read: polling fails (no system 12FC)", blocks: readImage, system: "0000", expected: .none),
        Case(
            name: "test_ndef_read: read block 0 fails", blocks: readImage,
            fault: #"{"when": "block_read", "block": 0, "kind": "tag_lost"}"#, expected: .none),
        Case(
            name: "test_ndef_read: read without error (Ln 39, capacity 48)", blocks: readImage,
            expected: .message(length: 39, capacity: 48, writeable: true)),
        Case(
            name: "test_ndef_read: readonly tag without content",
            blocks: ["10020200030000000000000000000017"] + readImage.dropFirst(),
            expected: .message(length: 0, capacity: 48, writeable: false)),
        Case(
            name: "test_ndef_read: read block 3 fails", blocks: readImage,
            fault: #"{"when": "block_read", "block": 3, "kind": "tag_lost"}"#, expected: .none),
        Case(
            name: "test_ndef_read: checksum error",
            blocks: ["2002020003000000000001000027003f"] + readImage.dropFirst(),
            expected: .none),
        Case(
            name: "test_ndef_read: version error", blocks: ["2002020003000000000001000027004f"] + readImage.dropFirst(),
            expected: .none),
        Case(
            name: "ndef_data_1", blocks: dataImage(Array(2...10)),
            expected: .message(length: 16, capacity: 80, writeable: true)),
        Case(
            name: "ndef_data_2", blocks: dataImage(Array(6...10)),
            expected: .message(length: 16, capacity: 80, writeable: true)),
        Case(
            name: "ndef_data_3", blocks: dataImage([6, 10]),
            expected: .message(length: 16, capacity: 80, writeable: true)),
        Case(
            name: "ndef_data_4", blocks: dataImage([6]), expected: .message(length: 16, capacity: 80, writeable: true)),
    ]

    /// The case as our tag file (felica_lite_s, the IDm 01 02 … 08 of nfcpy's tests).
    static func file(_ c: Case) throws -> TagFile {
        let blocks = c.blocks.map { "\"\($0)\"" }.joined(separator: ", ")
        let faults = c.fault.map { #", "faults": ["# + $0 + "]" } ?? ""
        return try TagFile.parse(
            #"{"format": "nfcbench-tag", "version": 1, "type": "felica_lite_s", "idm": "0102030405060708", "pmm": "FFFFFFFFFFFFFFFF", "max_read_blocks": 4, "systems": [{"code": ""#
                + c.system + #"", "blocks": ["# + blocks + "]}]" + faults + "}")
    }

    @Test("nfcbench reads what nfcpy's test expects", arguments: cases)
    func agrees(_ c: Case) throws {
        let file = try Self.file(c)
        let core = try #require(file.feliCa)
        let reader = Type3TagReader(
            transport: EmulatedFeliCaTransport(card: FaultyFeliCaCore(core: core, faults: file.faults)))
        let outcome: Result<([UInt8], Type3AttributeInformation), Type3TagError> = Result {
            () throws(Type3TagError) in
            let a = try reader.readAttribute().attribute
            return (try reader.readNDEF(), a)
        }
        switch (c.expected, outcome) {
        case (.message(let length, let capacity, let writeable), .success(let (message, a))):
            #expect(message.count == length)
            #expect(a.maximumNDEFMessageSize == capacity && a.isWritable == writeable)
            if length > 0 {
                let blocks = c.blocks.dropFirst().compactMap { [UInt8](hex: $0) }.flatMap { $0 }
                #expect(message == Array(blocks.prefix(length)), "the octets nfcpy's test expects")
            }
        case (.none, .failure):
            break
        default:
            Issue.record("\(c.name): nfcpy expects \(c.expected), nfcbench read \(outcome)")
        }
    }
}
