import Foundation
import NFCBenchTestSupport
import NFCTags
import Testing

private func bytes(_ hex: String) -> [UInt8] {
    let b = [UInt8](hex: hex)
    #expect(b != nil, "fixture hex \(hex) does not parse")
    return b ?? []
}

private func rejects(
    _ hex: String, _ code: NDEFError.Code, limits: NDEFLimits = .default,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(throws: NDEFError(code), sourceLocation: sourceLocation) {
        try NFCNDEFMessage(bytes: bytes(hex), limits: limits)
    }
}

@Suite("NDEF message parsing (NFC Forum NDEF 1.0 §3)")
struct NDEFMessageParsingTests {
    @Test("Every valid fixture parses into the expected number of records", arguments: NDEFFixtures.valid)
    func validFixtures(_ f: NDEFFixture) throws {
        let m = try NFCNDEFMessage(bytes: f.bytes)
        if case .valid(let n) = f.outcome { #expect(m.records.count == n) }
    }

    @Test("Every invalid fixture is rejected with its named reason", arguments: NDEFFixtures.invalid)
    func invalidFixtures(_ f: NDEFFixture) throws {
        let code = try #require(
            matched { if case .invalid(let c) = f.outcome { c } else { nil } }, "fixture is not invalid")
        #expect(throws: NDEFError(code)) { try NFCNDEFMessage(bytes: f.bytes) }
        #expect(NFCNDEFMessage(data: Data(f.bytes)) == nil)
    }

    @Test("Every proper prefix of every valid fixture is rejected (drip-fed)", arguments: NDEFFixtures.valid)
    func dripFed(_ f: NDEFFixture) {
        let b = f.bytes
        for n in 0..<b.count {
            #expect(throws: NDEFError.self, "prefix of \(n) bytes") { try NFCNDEFMessage(bytes: b.prefix(n)) }
        }
    }

    @Test("The Flipper corpus URI record decodes to https://google.com/?")
    func flipperRecord() throws {
        let m = try NFCNDEFMessage(bytes: bytes(NDEFFixtures.flipperGoogleURI))
        let r = try #require(m.records.first)
        #expect(r.typeNameFormat == .nfcWellKnown)
        #expect(r.type == Data("U".utf8))
        #expect(r.wellKnownTypeURIPayload() == URL(string: "https://google.com/?"))
    }

    @Test(
        "The Flipper corpus file's NDEF TLV holds exactly the fixture bytes",
        .enabled(
            if: NDEFTestEnvironment.corpusHas("flipper_Google_ntag216.nfc") || NDEFTestEnvironment.isCI,
            "corpus not found in Tests/Fixtures/corpus; set CI=true to make this a failure"))
    func flipperCorpusBytes() throws {
        let text = try String(contentsOf: NDEFTestEnvironment.corpusFile("flipper_Google_ntag216.nfc"), encoding: .utf8)
        var memory: [UInt8] = []
        for page in 4...12 {
            let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("Page \(page): ") })
            memory += try #require([UInt8](hex: line.dropFirst("Page \(page): ".count)))
        }
        // Lock-control TLV 01 03 A0 0C 34, then the NDEF TLV 03 <len> <message>.
        #expect(Array(memory.prefix(5)) == [0x01, 0x03, 0xA0, 0x0C, 0x34])
        #expect(memory[5] == 0x03)
        let length = Int(memory[6])
        let message = Array(memory[7..<(7 + length)])
        #expect(message == bytes(NDEFFixtures.flipperGoogleURI))
        #expect(memory[7 + length] == 0xFE)
        let m = try NFCNDEFMessage(bytes: message)
        #expect(m.records.first?.wellKnownTypeURIPayload()?.absoluteString == "https://google.com/?")
    }

    @Test("A message must have at least one record")
    func emptyInput() { rejects("", .truncated) }

    @Test("MB must be set on the first record")
    func missingMB() { rejects("51 01 01 55 00", .missingMessageBegin) }

    @Test("MB must not be set on a later record")
    func unexpectedMB() { rejects("91 01 01 55 00 D1 01 01 55 00", .unexpectedMessageBegin) }

    @Test("Data may not end after a record without ME")
    func missingME() { rejects("91 01 01 55 00", .missingMessageEnd) }

    @Test("Nothing may follow the ME record, and the error points at the first extra byte")
    func trailing() throws {
        rejects("D0 00 00 00", .trailingBytes)
        do {
            _ = try NFCNDEFMessage(bytes: bytes("D1 01 01 55 00 AA BB"))
            Issue.record("trailing bytes accepted")
        } catch {
            #expect(error.code == .trailingBytes)
            #expect(error.offset == 5)
        }
    }

    @Test("TNF empty needs TYPE, ID and PAYLOAD lengths of 0")
    func emptyTNF() {
        rejects("D0 00 01 00", .invalidTypeNameFormatFields)
        rejects("D0 01 00 41", .invalidTypeNameFormatFields)
        rejects("D8 00 00 01 23", .invalidTypeNameFormatFields)
    }

    @Test("TNF unknown and unchanged need TYPE_LENGTH 0")
    func untypedTNF() {
        rejects("D5 01 00 41", .invalidTypeNameFormatFields)
        rejects("B1 01 01 54 02 56 01 00 41", .invalidTypeNameFormatFields)
    }

    @Test(
        "TNF well-known, media, absolute URI and external need TYPE_LENGTH > 0",
        arguments: ["D1 00 00", "D2 00 00", "D3 00 00", "D4 00 00"])
    func typedTNF(_ hex: String) { rejects(hex, .invalidTypeNameFormatFields) }

    @Test("Reserved TNF 7 is read as unknown and the record says so")
    func reservedTNF() throws {
        let m = try NFCNDEFMessage(bytes: bytes("D7 00 01 AA"))
        let r = try #require(m.records.first)
        #expect(r.typeNameFormat == .unknown)
        #expect(r.readWarnings == [.reservedTypeNameFormat(7)])
        let d = try #require(m.descriptions.first)
        #expect(d.tnf == 7)
        #expect(d.tnfName == "unknown")
        #expect(d.warnings.contains { $0.contains("TNF 7 is reserved") })
        // As unknown it still needs TYPE_LENGTH 0.
        rejects("D7 01 00 41", .invalidTypeNameFormatFields)
        // Written back as 5.
        #expect(m.bytes == bytes("D5 00 01 AA"))
    }

    @Test("A payload running past the data is truncated; one past any limit is a length overflow")
    func lengths() {
        rejects("D1 01 05 55 00 61", .truncated)
        rejects("C1 01 00 00", .truncated)
        rejects("C5 00 FF FF FF FF", .lengthOverflow)
        rejects("C5 00 00 00 01 00 00", .lengthOverflow, limits: NDEFLimits(maxMessageBytes: 255))
        rejects("D9 01 01", .truncated)
    }

    @Test("Chunks are reassembled into one record whose chunkSize is the initial chunk's")
    func reassembly() throws {
        let m = try NFCNDEFMessage(bytes: bytes("B1 01 03 54 02 65 6E 36 00 01 48 56 00 01 69"))
        let r = try #require(m.records.first)
        #expect(m.records.count == 1)
        #expect(r.payload == Data([0x02, 0x65, 0x6E, 0x48, 0x69]))
        #expect(r.chunkSize == 3)
        #expect(r.wellKnownTypeTextPayload().0 == "Hi")
    }

    @Test("The initial chunk keeps TYPE and ID; later chunks may not carry IL")
    func chunkID() throws {
        let m = try NFCNDEFMessage(bytes: bytes("B9 01 03 01 54 23 02 65 6E 56 00 02 48 69"))
        #expect(m.records.first?.identifier == Data([0x23]))
        rejects("B1 01 03 54 02 65 6E 5E 00 01 01 23 48", .chunkFlagMisuse)
    }

    @Test("Middle and terminating chunks must have TNF unchanged")
    func chunkTNF() { rejects("B1 01 03 54 02 65 6E 51 01 01 55 00", .chunkFlagMisuse) }

    @Test("A chunk sequence cannot end the message in the middle")
    func chunkME() {
        rejects("F1 01 03 54 02 65 6E", .chunkFlagMisuse)
        rejects("B1 01 03 54 02 65 6E 76 00 01 48", .chunkFlagMisuse)
        rejects("B1 01 03 54 02 65 6E 36 00 01 48", .missingMessageEnd)
    }

    @Test("TNF unchanged outside a chunk sequence is an error")
    func unchangedAlone() {
        rejects("D6 00 00", .chunkFlagMisuse)
        rejects("91 01 01 55 00 56 00 01 41", .chunkFlagMisuse)
    }

    @Test("An empty record cannot be chunked")
    func emptyChunk() { rejects("B0 00 00 56 00 00", .chunkFlagMisuse) }

    @Test("Limits cap message size and record count; chunks count as records")
    func limits() {
        rejects(NDEFFixtures.helloText, .limitExceeded, limits: NDEFLimits(maxMessageBytes: 11))
        rejects("91 01 01 55 00 51 01 01 55 00", .limitExceeded, limits: NDEFLimits(maxRecords: 1))
        rejects("B1 01 03 54 02 65 6E 56 00 02 48 69", .limitExceeded, limits: NDEFLimits(maxRecords: 1))
        #expect(NDEFLimits.default == NDEFLimits(maxMessageBytes: 1_048_576, maxRecords: 1_024, maxNestingDepth: 4))
    }

    @Test("Errors compare by code only and describe code, offset and reason")
    func errorShape() {
        #expect(NDEFError(.truncated, offset: 3, message: "a") == NDEFError(.truncated, offset: 9, message: "b"))
        #expect(NDEFError(.truncated) != NDEFError(.trailingBytes))
        #expect(Set([NDEFError(.truncated, offset: 1), NDEFError(.truncated, offset: 2)]).count == 1)
        #expect(
            NDEFError(.trailingBytes, offset: 5, message: "1 bytes").description == "trailingBytes at byte 5: 1 bytes")
    }

    @Test("Mutated fixtures never crash the parser; those that parse round-trip")
    func mutatedFixtures() {
        var state: UInt64 = 0x5EED
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        var parsed = 0
        var rejected = 0
        let seeds = NDEFFixtures.valid.map(\.bytes)
        for _ in 0..<5_000 {
            var b = seeds[Int(next() % UInt64(seeds.count))]
            for _ in 0...(next() % 3) where !b.isEmpty {
                b[Int(next() % UInt64(b.count))] = UInt8(truncatingIfNeeded: next())
            }
            guard let m = try? NFCNDEFMessage(bytes: b) else {
                rejected += 1
                continue
            }
            parsed += 1
            _ = m.descriptions
            #expect((try? NFCNDEFMessage(bytes: m.bytes)) == m, "round trip of \(b.hexString())")
        }
        #expect(parsed > 0)
        #expect(rejected > 0)
    }
}

@Suite("NDEF message serialization")
struct NDEFMessageSerializationTests {
    @Test("Every valid fixture survives parse, serialize, parse unchanged", arguments: NDEFFixtures.valid)
    func roundTrip(_ f: NDEFFixture) throws {
        let m = try NFCNDEFMessage(bytes: f.bytes)
        let again = try NFCNDEFMessage(bytes: m.bytes)
        #expect(again == m)
        #expect(m.length == m.bytes.count)
    }

    @Test("Canonical fixtures serialize back to their exact bytes")
    func exactBytes() throws {
        for hex in [
            NDEFFixtures.flipperGoogleURI, NDEFFixtures.helloText, NDEFFixtures.smartPoster,
            "D0 00 00", "D9 01 02 01 55 23 03 61", "B1 01 03 54 02 65 6E 36 00 03 48 69 21 56 00 03 48 69 21",
        ] {
            #expect(try NFCNDEFMessage(bytes: bytes(hex)).bytes == bytes(hex))
        }
    }

    @Test("MB on the first record, ME on the last, SR below 256 bytes, IL only with an ID")
    func flags() throws {
        let small = NFCNDEFPayload(format: .unknown, type: Data(), identifier: Data(), payload: Data([1]))
        let big = NFCNDEFPayload(
            format: .media, type: Data("a/b".utf8), identifier: Data([7]),
            payload: Data(repeating: 0x42, count: 256))
        let m = NFCNDEFMessage(records: [small, big, small])
        let b = m.bytes
        #expect(b[0] == 0x95)  // MB SR TNF5
        #expect(b[4] == 0x0A)  // no flag but IL, TNF2, 4-byte length
        #expect(Array(b[6..<10]) == [0x00, 0x00, 0x01, 0x00])
        #expect(b[b.count - 4] == 0x55)  // ME SR TNF5
        #expect(m.length == b.count)
        #expect(try NFCNDEFMessage(bytes: b) == m)
    }

    @Test("chunkSize > 0 writes initial, middle and terminating chunks that read back as one record")
    func chunking() throws {
        let payload = Data((0..<10).map { UInt8($0) })
        let r = NFCNDEFPayload(
            format: .media, type: Data("a/b".utf8), identifier: Data([9]), payload: payload, chunkSize: 4)
        let m = NFCNDEFMessage(records: [r])
        let b = m.bytes
        #expect(b == bytes("BA 03 04 01 61 2F 62 09 00 01 02 03 36 00 04 04 05 06 07 56 00 02 08 09"))
        #expect(m.length == b.count)
        #expect(try NFCNDEFMessage(bytes: b) == m)
    }

    @Test("A chunked payload that fits one chunk gets an empty terminating chunk")
    func singleChunk() throws {
        let r = NFCNDEFPayload(format: .unknown, type: Data(), identifier: Data(), payload: Data([1, 2]), chunkSize: 2)
        let b = NFCNDEFMessage(records: [r]).bytes
        #expect(b == bytes("B5 00 02 01 02 56 00 00"))
        #expect(try NFCNDEFMessage(bytes: b).records == [r])
    }

    @Test("A payload of 70 000 bytes uses the 4-byte length and round-trips")
    func longPayload() throws {
        let r = NFCNDEFPayload(
            format: .unknown, type: Data(), identifier: Data(),
            payload: Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0) }))
        let m = NFCNDEFMessage(records: [r])
        #expect(Array(m.bytes.prefix(6)) == [0xC5, 0x00, 0x00, 0x01, 0x11, 0x70])
        #expect(try NFCNDEFMessage(bytes: m.bytes) == m)
    }

    @Test("Core NFC's init?(data:) agrees with the strict parser")
    func coreNFCInit() throws {
        #expect(
            NFCNDEFMessage(data: Data(bytes(NDEFFixtures.helloText)))
                == (try NFCNDEFMessage(bytes: bytes(NDEFFixtures.helloText))))
        #expect(NFCNDEFMessage(data: Data([0xD0, 0x00, 0x00, 0x00])) == nil)
    }
}
