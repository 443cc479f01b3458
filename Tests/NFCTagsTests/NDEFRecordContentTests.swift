import Foundation
import NFCBenchTestSupport
import NFCTags
import Testing

private func record(_ hex: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> NFCNDEFPayload {
    let b = try #require([UInt8](hex: hex), sourceLocation: sourceLocation)
    let m = try NFCNDEFMessage(bytes: b)
    return try #require(m.records.first, sourceLocation: sourceLocation)
}

private func wellKnown(_ type: String, _ payload: [UInt8]) -> NFCNDEFPayload {
    NFCNDEFPayload(format: .nfcWellKnown, type: Data(type.utf8), identifier: Data(), payload: Data(payload))
}

private func invalidCode(_ c: NDEFRecordContent) -> NDEFError.Code? {
    if case .invalid(let e) = c { return e.code }
    return nil
}

@Suite("NDEF Text records (RTD-Text 1.0)")
struct NDEFTextRecordTests {
    @Test("UTF-8 text with its language code")
    func utf8() throws {
        #expect(
            try record(NDEFFixtures.helloText).content
                == .text(NDEFTextRecord(text: "Hello", languageCode: "en", encoding: .utf8)))
    }

    @Test(
        "UTF-16 with a big-endian BOM, a little-endian BOM, and without BOM (big-endian)",
        arguments: [
            ("82 65 6E FE FF 00 48 00 69", NDEFTextEncoding.utf16BigEndian, true),
            ("82 65 6E FF FE 48 00 69 00", .utf16LittleEndian, true),
            ("82 65 6E 00 48 00 69", .utf16BigEndian, false),
        ])
    func utf16(_ payload: String, _ encoding: NDEFTextEncoding, _ bom: Bool) throws {
        let t = try NDEFTextRecord(payload: try #require([UInt8](hex: payload)))
        #expect(t == NDEFTextRecord(text: "Hi", languageCode: "en", encoding: encoding, hasByteOrderMark: bom))
    }

    @Test("Status bit 6 is RFU and must be 0")
    func rfuBit() {
        #expect(throws: NDEFError(.invalidTextRecord)) { try NDEFTextRecord(payload: [0x42, 0x65, 0x6E, 0x41]) }
    }

    @Test("The language code length must be 1...63 and fit the payload")
    func languageLength() {
        #expect(throws: NDEFError(.invalidTextRecord)) { try NDEFTextRecord(payload: [0x00, 0x41]) }
        #expect(throws: NDEFError(.invalidTextRecord)) { try NDEFTextRecord(payload: [0x05, 0x65, 0x6E]) }
        #expect(throws: NDEFError(.invalidTextRecord)) { try NDEFTextRecord(payload: [UInt8]()) }
        #expect(throws: NDEFError(.invalidTextRecord)) { try NDEFTextRecord(payload: [0x02, 0x65, 0x00]) }
    }

    @Test("Text must be valid in its encoding; odd UTF-16 byte counts are rejected")
    func badText() {
        #expect(throws: NDEFError(.invalidTextRecord)) { try NDEFTextRecord(payload: [0x02, 0x65, 0x6E, 0xFF]) }
        #expect(throws: NDEFError(.invalidTextRecord)) { try NDEFTextRecord(payload: [0x82, 0x65, 0x6E, 0x00]) }
        #expect(throws: NDEFError(.invalidTextRecord)) { try NDEFTextRecord(payload: [0x82, 0x65, 0x6E, 0xD8, 0x00]) }
    }

    @Test("A bad Text body leaves the message readable and marks only that record invalid")
    func badBodyIsLocal() throws {
        let m = try NFCNDEFMessage(bytes: try #require([UInt8](hex: "91 01 04 54 42 65 6E 41 51 01 02 55 03 61")))
        #expect(invalidCode(m.records[0].content) == .invalidTextRecord)
        #expect(m.records[1].wellKnownTypeURIPayload() == URL(string: "http://a"))
        #expect(m.descriptions[0].warnings.contains { $0.contains("invalidTextRecord") })
        #expect(throws: NDEFError(.invalidTextRecord)) { try m.records[0].decodeContent() }
    }

    @Test("Core NFC's text helpers write UTF-8 with a BCP 47 tag and read text and locale back")
    func coreNFCText() throws {
        let r = try #require(
            NFCNDEFPayload.wellKnownTypeTextPayload(string: "Grüß", locale: Locale(identifier: "de_DE")))
        #expect(r.payload == Data([0x05] + Array("de-DE".utf8) + Array("Grüß".utf8)))
        let (text, locale) = r.wellKnownTypeTextPayload()
        #expect(text == "Grüß")
        #expect(locale?.identifier == Locale(identifier: "de-DE").identifier)
        #expect(wellKnown("U", [0x00]).wellKnownTypeTextPayload() == (nil, nil))
    }
}

@Suite("NDEF URI records (RTD-URI 1.0)")
struct NDEFURIRecordTests {
    static let table: [(UInt8, String)] = [
        (0x00, ""), (0x01, "http://www."), (0x02, "https://www."), (0x03, "http://"), (0x04, "https://"),
        (0x05, "tel:"), (0x06, "mailto:"), (0x07, "ftp://anonymous:anonymous@"), (0x08, "ftp://ftp."),
        (0x09, "ftps://"), (0x0A, "sftp://"), (0x0B, "smb://"), (0x0C, "nfs://"), (0x0D, "ftp://"),
        (0x0E, "dav://"), (0x0F, "news:"), (0x10, "telnet://"), (0x11, "imap:"), (0x12, "rtsp://"),
        (0x13, "urn:"), (0x14, "pop:"), (0x15, "sip:"), (0x16, "sips:"), (0x17, "tftp:"), (0x18, "btspp://"),
        (0x19, "btl2cap://"), (0x1A, "btgoep://"), (0x1B, "tcpobex://"), (0x1C, "irdaobex://"), (0x1D, "file://"),
        (0x1E, "urn:epc:id:"), (0x1F, "urn:epc:tag:"), (0x20, "urn:epc:pat:"), (0x21, "urn:epc:raw:"),
        (0x22, "urn:epc:"), (0x23, "urn:nfc:"),
    ]

    @Test("Prefix codes 0x00–0x23 expand exactly as RTD-URI 1.0 Table 3", arguments: table)
    func prefix(_ code: UInt8, _ prefix: String) throws {
        let u = try NDEFURIRecord(payload: [code, 0x78])
        #expect(u.uri == prefix + "x")
        #expect(!u.isReservedPrefix)
        #expect(NDEFURIRecord.prefixes.count == 0x24)
    }

    @Test("Codes 0x24–0xFF are RFU: kept, decoded as no prefix, and flagged", arguments: [0x24, 0x80, 0xFF] as [UInt8])
    func rfu(_ code: UInt8) throws {
        let r = wellKnown("U", [code, 0x61, 0x62])
        let u = try #require(matched { if case .uri(let u) = r.content { u } else { nil } }, "not a URI: \(r.content)")
        #expect(u.prefixCode == code)
        #expect(u.isReservedPrefix)
        #expect(u.uri == "ab")
        let d = NDEFRecordDescription(r)
        #expect(d.uri == "ab")
        #expect(d.warnings.contains { $0.contains("is RFU") })
    }

    @Test("A URI body needs its code byte, UTF-8 and no control characters")
    func invalid() {
        #expect(invalidCode(wellKnown("U", []).content) == .invalidURIRecord)
        #expect(invalidCode(wellKnown("U", [0x03, 0xC3]).content) == .invalidURIRecord)
        #expect(invalidCode(wellKnown("U", [0x03, 0x61, 0x0A]).content) == .invalidURIRecord)
    }

    @Test("Core NFC's URI helper picks the longest prefix and reads back")
    func coreNFCURI() throws {
        let r = try #require(NFCNDEFPayload.wellKnownTypeURIPayload(string: "urn:epc:id:sgtin:1"))
        #expect(r.payload.first == 0x1E)
        #expect(r.wellKnownTypeURIPayload()?.absoluteString == "urn:epc:id:sgtin:1")
        let url = try #require(URL(string: "https://www.example.com/a"))
        let w = try #require(NFCNDEFPayload.wellKnownTypeURIPayload(url: url))
        #expect(w.payload == Data([0x02] + Array("example.com/a".utf8)))
        #expect(NFCNDEFPayload.wellKnownTypeURIPayload(string: "bad\nuri") == nil)
        #expect(wellKnown("T", [0x02, 0x65, 0x6E]).wellKnownTypeURIPayload() == nil)
    }
}

@Suite("NDEF Smart Poster, MIME, external, AAR and absolute URI records")
struct NDEFOtherRTDTests {
    @Test("A Smart Poster decodes its URI, titles, action, size and type")
    func smartPoster() throws {
        let r = try record(NDEFFixtures.smartPoster)
        let sp = try #require(
            matched { if case .smartPoster(let sp) = r.content { sp } else { nil } }, "not a Smart Poster: \(r.content)"
        )
        #expect(sp.uri.uri == "https://www.example.com")
        #expect(sp.titles.map(\.text) == ["Hello"])
        #expect(sp.action == .doAction)
        #expect(sp.message.records.count == 3)
        let d = NDEFRecordDescription(r)
        #expect(d.uri == "https://www.example.com")
        #expect(d.title == "Hello")
        #expect(d.records?.count == 3)
        #expect(d.records?.first?.uri == "https://www.example.com")

        let inner = NFCNDEFMessage(records: [
            wellKnown("U", [0x04, 0x61]), wellKnown("s", [0x00, 0x01, 0x00, 0x00]),
            wellKnown("t", Array("image/png".utf8)), wellKnown("act", [0x07]),
        ])
        let sp2 = try #require(
            matched { if case .smartPoster(let sp2) = wellKnown("Sp", inner.bytes).content { sp2 } else { nil } },
            "no poster")
        #expect(sp2.size == 65_536)
        #expect(sp2.mimeType == "image/png")
        #expect(sp2.action == .reserved(7))
    }

    @Test("A Smart Poster must hold exactly one valid URI record (bad optional records: SmartPosterToleranceTests)")
    func smartPosterRules() {
        let u = wellKnown("U", [0x04, 0x61])
        let bad: [[NFCNDEFPayload]] = [
            [wellKnown("T", [0x02, 0x65, 0x6E])],
            [u, u],
            [wellKnown("U", [])],
        ]
        for records in bad {
            let sp = wellKnown("Sp", NFCNDEFMessage(records: records).bytes)
            #expect(invalidCode(sp.content) == .invalidSmartPoster, "\(records)")
        }
        #expect(invalidCode(wellKnown("Sp", [0xD0, 0x00, 0x00, 0x00]).content) == .invalidSmartPoster)
    }

    @Test("Smart Posters nested past maxNestingDepth are nestingTooDeep")
    func nesting() {
        var sp = wellKnown("Sp", NFCNDEFMessage(records: [wellKnown("U", [0x04, 0x61])]).bytes)
        for _ in 0..<5 {
            sp = wellKnown("Sp", NFCNDEFMessage(records: [wellKnown("U", [0x04, 0x61]), sp]).bytes)
        }
        // sp is 6 posters deep.
        #expect(invalidCode(sp.content(limits: NDEFLimits(maxNestingDepth: 5))) == .nestingTooDeep)
        if case .smartPoster = sp.content(limits: NDEFLimits(maxNestingDepth: 6)) {
        } else {
            Issue.record("6 levels refused at maxNestingDepth 6")
        }
        #expect(
            NDEFRecordDescription(sp, limits: NDEFLimits(maxNestingDepth: 5)).warnings.contains {
                $0.contains("nestingTooDeep")
            })
    }

    @Test("A media type with parameters (RFC 2045 §5.1) is a valid media record: the field's NTAG215 record")
    func mimeWithParameters() throws {
        // Issue 13 input 1: TLV 03 21, record D2 19 05, type "text/plain; charset=utf-8", payload "hello".
        let type = "text/plain; charset=utf-8"
        let bytes: [UInt8] = [0xD2, 0x19, 0x05] + Array(type.utf8) + Array("hello".utf8)
        let r = try NFCNDEFMessage(bytes: bytes).records[0]
        #expect(r.content == .mime(type: "text/plain; charset=utf-8", payload: Data("hello".utf8)))
        let d = NDEFRecordDescription(r)
        #expect(d.mimeType == "text/plain; charset=utf-8")
        #expect(d.warnings.isEmpty)
        let m = try NDEFMediaType(type)
        #expect(m.essence == "text/plain")
        #expect(m.parameters == [.init(name: "charset", value: "utf-8")])
    }

    @Test(
        "RFC 2045 media-type grammar: type/subtype, parameters, quoted strings; what breaks it, and where",
        arguments: [
            // text, essence or nil, offset of the first bad byte
            ("text/plain", "text/plain", -1),
            ("Text/HTML;Charset=UTF-8", "text/html", -1),
            ("application/vnd.example+json ; a=b ;c = \"d; e\"", "application/vnd.example+json", -1),
            ("multipart/mixed; boundary=\"a:b\\\"c\"", "multipart/mixed", -1),
            ("plain", nil, 5),
            ("/plain", nil, 0),
            ("text/", nil, 5),
            ("text /plain", nil, 4),
            ("text/plain;", nil, 11),
            ("text/plain; charset", nil, 19),
            ("text/plain; charset=", nil, 20),
            ("text/plain; charset=\"utf-8", nil, 26),
            ("text/plain, charset=utf-8", nil, 10),
            ("text/pl\u{e4}in", nil, 7),
        ])
    func mediaTypeGrammar(text: String, essence: String?, offset: Int) {
        do {
            let m = try NDEFMediaType(text)
            #expect(m.essence == essence, "\(text)")
        } catch {
            #expect(essence == nil, "\(text): \(error)")
            #expect(error.code == .invalidMediaType)
            #expect(error.offset == offset, "\(text): \(error)")
        }
    }

    @Test("Media records need a type/subtype in printable ASCII")
    func mime() throws {
        #expect(
            try record("D2 0A 01 74 65 78 74 2F 70 6C 61 69 6E 41").content
                == .mime(type: "text/plain", payload: Data([0x41])))
        let bad = NFCNDEFPayload(format: .media, type: Data("plain".utf8), identifier: Data(), payload: Data())
        #expect(invalidCode(bad.content) == .invalidMediaType)
        #expect(NDEFRecordDescription(try record("D2 0A 01 74 65 78 74 2F 70 6C 61 69 6E 41")).mimeType == "text/plain")
    }

    @Test("External types are domain:type, compared and shown lower-case")
    func external() throws {
        let r = NFCNDEFPayload(
            format: .nfcExternal, type: Data("Example.COM:Thing".utf8), identifier: Data(), payload: Data([1]))
        #expect(r.content == .external(domain: "example.com", type: "thing", payload: Data([1])))
        let bad = NFCNDEFPayload(format: .nfcExternal, type: Data("nocolon".utf8), identifier: Data(), payload: Data())
        #expect(invalidCode(bad.content) == .invalidExternalType)
    }

    @Test("android.com:pkg is an Android Application Record with a package name")
    func aar() throws {
        let r = try record("D4 0F 0B 61 6E 64 72 6F 69 64 2E 63 6F 6D 3A 70 6B 67 63 6F 6D 2E 65 78 61 6D 70 6C 65")
        #expect(r.content == .androidApplication(packageName: "com.example"))
        #expect(NDEFRecordDescription(r).packageName == "com.example")
        let empty = NFCNDEFPayload(
            format: .nfcExternal, type: Data("android.com:pkg".utf8), identifier: Data(), payload: Data())
        #expect(invalidCode(empty.content) == .invalidAndroidApplicationRecord)
    }

    @Test("Absolute-URI records carry the URI in TYPE")
    func absoluteURI() throws {
        let r = try record("D3 0D 00 68 74 74 70 73 3A 2F 2F 61 2E 62 2F 63")
        #expect(r.content == .absoluteURI(uri: "https://a.b/c", payload: Data()))
        #expect(NDEFRecordDescription(r).uri == "https://a.b/c")
        let bad = NFCNDEFPayload(format: .absoluteURI, type: Data([0x68, 0x20]), identifier: Data(), payload: Data())
        #expect(invalidCode(bad.content) == .invalidAbsoluteURI)
    }

    @Test("Descriptions give TNF, names and hex for every record and encode to JSON")
    func descriptions() throws {
        let m = try NFCNDEFMessage(
            bytes: try #require([UInt8](hex: "99 01 08 01 54 23 02 65 6E 48 65 6C 6C 6F 55 00 01 AA")))
        let d = m.descriptions
        #expect(d.count == 2)
        #expect(d[0].tnf == 1 && d[0].tnfName == "nfcWellKnown" && d[0].type == "T")
        #expect(d[0].typeHex == "54" && d[0].identifierHex == "23" && d[0].payloadHex == "02656E48656C6C6F")
        #expect(d[0].text == "Hello" && d[0].language == "en" && d[0].encoding == "UTF-8")
        #expect(d[1].tnfName == "unknown" && d[1].warnings.isEmpty)
        let json = try JSONEncoder().encode(d)
        #expect(try JSONDecoder().decode([NDEFRecordDescription].self, from: json) == d)
        #expect(
            NFCTypeNameFormat.allCases.map(\.name)
                == ["empty", "nfcWellKnown", "media", "absoluteURI", "nfcExternal", "unknown", "unchanged"])
    }
}
