import Foundation
import NFCBenchTestSupport
import NFCTags
import Testing

private func h(_ s: String) -> [UInt8] { [UInt8](hex: s) ?? [] }

private func wellKnown(_ type: String, _ payload: [UInt8]) -> NFCNDEFPayload {
    NFCNDEFPayload(format: .nfcWellKnown, type: Data(type.utf8), identifier: Data(), payload: Data(payload))
}

private func poster(_ records: [NFCNDEFPayload]) -> NFCNDEFPayload {
    wellKnown("Sp", NFCNDEFMessage(records: records).bytes)
}

/// Smart Posters that survive a bad optional record (issue 19, item 3): the URI record
/// decides whether the poster is usable (SPR 1.1 §3.3.2); a bad optional record is a
/// warning on that record, and every field is decoded.
@Suite("Smart Posters with bad optional records")
struct SmartPosterToleranceTests {
    /// Sp, written out by hand: U "https://example.com/sp", T en "Poster", T fr "Affiche",
    /// act 03 (RFU), s 00000400, t empty, an image/png icon `89 50 4E 47`.
    static let fullPoster =
        "D1 02 51 53 70"
        + " 91 01 0F 55 04 65 78 61 6D 70 6C 65 2E 63 6F 6D 2F 73 70"  // U
        + " 11 01 09 54 02 65 6E 50 6F 73 74 65 72"  // T en Poster
        + " 11 01 0A 54 02 66 72 41 66 66 69 63 68 65"  // T fr Affiche
        + " 11 03 01 61 63 74 03"  // act 03
        + " 11 01 04 73 00 00 04 00"  // s 1024
        + " 11 01 00 74"  // t, empty
        + " 52 09 04 69 6D 61 67 65 2F 70 6E 67 89 50 4E 47"  // image/png icon

    @Test("The issue's poster: an empty t and act 03 keep the URI; every field is decoded")
    func fullPosterDecodes() throws {
        let message = try NFCNDEFMessage(bytes: h(Self.fullPoster))
        let record = try #require(message.records.first)
        let sp = try #require(
            matched { if case .smartPoster(let sp) = record.content { sp } else { nil } },
            "not a Smart Poster: \(record.content)")
        #expect(sp.uri.uri == "https://example.com/sp")
        #expect(sp.titles.map(\.text) == ["Poster", "Affiche"])
        #expect(sp.titles.map(\.languageCode) == ["en", "fr"])
        #expect(sp.action == .reserved(3))
        #expect(sp.size == 1024)
        #expect(sp.mimeType == nil)
        #expect(
            sp.icons == [NDEFSmartPosterIcon(mimeType: "image/png", payload: Data(h("89 50 4E 47")), recordIndex: 6)])
        #expect(sp.message.records.count == 7)
        #expect(sp.warnings.map(\.recordIndex) == [3, 5])

        let d = NDEFRecordDescription(record)
        #expect(d.uri == "https://example.com/sp")
        #expect(d.title == "Poster" && d.language == "en")
        #expect(
            d.titles == [
                NDEFRecordDescription.Title(text: "Poster", language: "en"),
                NDEFRecordDescription.Title(text: "Affiche", language: "fr"),
            ])
        #expect(d.action == "reserved" && d.actionCode == 3)
        #expect(d.size == 1024)
        #expect(d.icons == [NDEFRecordDescription.Icon(mimeType: "image/png", payloadLength: 4, recordIndex: 6)])
        #expect(d.warnings.isEmpty)
        let nested = try #require(d.records)
        #expect(nested[3].warnings.count == 1 && nested[3].warnings[0].contains("act value 0x03 is RFU"))
        #expect(nested[5].warnings.count == 1 && nested[5].warnings[0].contains("empty t record"))
        #expect([0, 1, 2, 4, 6].allSatisfy { nested[$0].warnings.isEmpty })
    }

    @Test("The actions 00, 01, 02 are do, save and edit; 03 to FF are reserved")
    func actions() throws {
        let u = wellKnown("U", [0x04, 0x61])
        for (byte, name) in [(UInt8(0), "do"), (1, "save"), (2, "edit"), (3, "reserved"), (0xFF, "reserved")] {
            let d = NDEFRecordDescription(poster([u, wellKnown("act", [byte])]))
            #expect(d.action == name && d.actionCode == byte, "act \(byte)")
            #expect(d.records?[1].warnings.isEmpty == (byte <= 2), "act \(byte)")
        }
    }

    @Test(
        "A bad optional record is a warning on that record; the poster keeps its URI",
        arguments: [
            ([wellKnown("act", [0, 1])], "act record of 2 bytes ignored"),
            ([wellKnown("s", [0, 1])], "s record of 2 bytes ignored"),
            ([wellKnown("t", [])], "empty t record ignored"),
            ([wellKnown("t", [0xFF])], "t record ignored: not UTF-8"),
            ([wellKnown("T", [0x40, 0x65])], "title record ignored"),
        ])
    func badOptionalRecord(extra: [NFCNDEFPayload], warning: String) throws {
        let d = NDEFRecordDescription(poster([wellKnown("U", [0x04, 0x61])] + extra))
        #expect(d.uri == "https://a")
        #expect(d.warnings.isEmpty)
        #expect(d.records?[1].warnings.contains { $0.contains(warning) } == true, "\(d.records?[1].warnings ?? [])")
        #expect(d.action == nil && d.size == nil && d.mimeType == nil && d.titles == [])
    }

    @Test("A second act, s or t is a warning and the first one counts")
    func duplicates() throws {
        let d = NDEFRecordDescription(
            poster([
                wellKnown("U", [0x04, 0x61]), wellKnown("act", [1]), wellKnown("act", [2]),
                wellKnown("s", [0, 0, 0, 9]), wellKnown("s", [0, 0, 0, 8]),
                wellKnown("t", Array("text/html".utf8)), wellKnown("t", Array("image/png".utf8)),
            ]))
        #expect(d.action == "save" && d.size == 9 && d.mimeType == "text/html")
        #expect(d.records?.map(\.warnings.count) == [0, 0, 1, 0, 1, 0, 1])
    }

    @Test("Only the URI record can sink a poster: none, two, or one that breaks RTD-URI")
    func uriDecides() {
        let u = wellKnown("U", [0x04, 0x61])
        for records in [[wellKnown("T", [0x02, 0x65, 0x6E])], [u, u], [wellKnown("U", [])]] {
            guard case .invalid(let e) = poster(records).content else {
                Issue.record("accepted: \(records)")
                continue
            }
            #expect(e.code == .invalidSmartPoster)
        }
    }
}
