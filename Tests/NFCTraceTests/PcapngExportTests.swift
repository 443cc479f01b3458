import Foundation
import NFCTags
import NFCTrace
import Testing

/// Records as the commands write them, turned into packets; the pcapng bytes parsed back.
@Suite("pcapng export of traces (LINKTYPE_ISO_14443)")
struct PcapngExportTests {
    static func header(_ command: String, device: String?, model: JSONObject = [:]) -> JSONObject {
        TraceHeader(
            tool: "nfcbench test", libnfc: "1.8.0", pcsclite: "1.9.9", command: command, device: device, model: model
        ).record(started: Date(timeIntervalSince1970: 1_700_000_000))
    }

    static func packets(_ records: [JSONObject], redact: Bool = false) -> [ISO14443Packet] {
        var e = ISO14443Exporter(redact: redact)
        return records.flatMap { e.add(TraceRecord(json: $0)) }
    }

    static func hex(_ p: ISO14443Packet) -> String { p.data.hexString() }

    static let libnfcTarget: JSONObject = [
        "t_us": 100, "event": "detected", "session": 1,
        "targets": .array([
            .object([
                "id": 1, "kind": "type4", "uid": "04518A2B6C1F90", "atqa": "4403", "sak": "20", "ats": "067577810280",
            ])
        ]),
    ]

    @Test("A libnfc target's activation: REQA, both cascade levels with CT and BCC, SELECT, SAK, RATS, ATS")
    func activation() {
        let p = Self.packets([Self.header("session", device: "pn532_uart:/dev/ttyUSB0"), Self.libnfcTarget])
        #expect(
            p.map(Self.hex) == [
                "26", "4403",
                "9320", "8804518A57", "93708804518A57", "04",
                "9520", "2B6C1F90C8", "95702B6C1F90C8", "20",
                "E080", "067577810280",
            ])
        #expect(p.allSatisfy { $0.event == .pcdToPICCCRCDropped || $0.event == .piccToPCDCRCDropped })
        #expect(p[0].comment?.contains("synthesized") == true)
        #expect(p[0].comment?.contains("libnfc") == true)
    }

    @Test("Type 2 frames carry their meaning; a WRITE's ACK goes into the comment, not a packet")
    func type2Comments() {
        let target: JSONObject = [
            "t_us": 1, "event": "detected", "session": 1,
            "targets": .array([
                .object(["id": 7, "kind": "type2", "uid": "04A23B915C6E80", "atqa": "4400", "sak": "00"])
            ]),
        ]
        let read: JSONObject = [
            "t_us": 2, "event": "frame", "session": 1, "target": 7, "command": "3004",
            "response": "0319D10115550465786D706C652E636F",
        ]
        let write: JSONObject = [
            "t_us": 3, "event": "frame", "session": 1, "target": 7, "command": "A20501020304", "response": "0A",
        ]
        let version: JSONObject = [
            "t_us": 4, "event": "frame", "session": 1, "target": 7, "command": "60", "response": .null,
        ]
        let p = Self.packets([Self.header("session", device: "pn532_uart:x"), target, read, write, version])
        let comments = p.compactMap(\.comment)
        #expect(comments.contains("READ page 4"))
        #expect(comments.contains("WRITE page 5 → ACK"))
        #expect(comments.contains { $0.hasPrefix("GET_VERSION → no answer") })
        #expect(!p.contains { $0.data == [0x0A] }, "the 4-bit ACK is no packet")
        #expect(p.last?.data == [0x60, 0xF8, 0x32], "a one-byte reader frame carries its CRC_A")
        #expect(p.last?.event == .pcdToPICC, "…with the plain event, so Wireshark does not read it as a short frame")
    }

    @Test("PC/SC: Type 2 frames are marked as what the reader sends for FF B0 / FF D6; anticollision from the UID")
    func pcscType2() {
        let target: JSONObject = [
            "t_us": 1, "event": "detected", "session": 1,
            "targets": .array([
                .object([
                    "id": 3, "kind": "type2", "uid": "04A23B915C6E80",
                    "atr": "3B8F8001804F0CA0000003060300030000000068",
                ])
            ]),
        ]
        let read: JSONObject = [
            "t_us": 2, "event": "frame", "session": 1, "target": 3, "command": "3000",
            "response": "04A23B15915C6E8023480000E1103E00",
        ]
        let p = Self.packets([Self.header("session", device: "pcsc:Reader"), target, read])
        #expect(p.map(Self.hex).prefix(4) == ["9320", "8804A23B15", "9520", "915C6E8023"])
        #expect(p.count == 6, "no REQA, SELECT or SAK: PC/SC does not report them")
        #expect(p[0].comment?.contains("PC/SC hides REQA, SELECT and SAK") == true)
        #expect(p[4].comment == "READ page 0 — synthesized: the PC/SC reader sends it for READ BINARY FF B0 00 00 10")
    }

    @Test("APDUs become I-blocks: block numbers alternate, long answers chain at FSD with R(ACK)s")
    func isoDEPFraming() {
        let select: JSONObject = [
            "t_us": 200, "event": "frame", "session": 1, "target": 1, "command": "00A4040007D276000085010100",
            "response": "9000",
        ]
        let long = [UInt8](repeating: 0xAB, count: 300) + [0x90, 0x00]
        let read: JSONObject = [
            "t_us": 300, "event": "frame", "session": 1, "target": 1, "command": "00B0000000",
            "response": .string(long.hexString()),
        ]
        let p = Self.packets([Self.header("session", device: "pn532_uart:x"), Self.libnfcTarget, select, read])
        let blocks = Array(p.dropFirst(12))
        #expect(blocks.map { $0.data.first } == [0x02, 0x02, 0x03, 0x13, 0xA2, 0x02])
        #expect(blocks[3].data.count == 1 + 253, "FSD 256 (RATS E0 80) leaves 253 INF bytes")
        #expect(Array(blocks[5].data.dropFirst()) == Array((long[253...])))
        #expect(blocks[0].comment?.hasPrefix("SELECT by AID D2760000850101 (NDEF Tag Application)") == true)
        #expect(blocks[0].comment?.contains("synthesized") == true)
    }

    @Test("The vpcd card's storage-card APDUs become the reader's frames; GET DATA the anticollision")
    func virtualCardStorage() {
        let records: [JSONObject] = [
            Self.header("virtual card", device: "vpcd:35963"),
            ["t_us": 1, "event": "card_connected", "port": 35963],
            ["t_us": 2, "event": "c_apdu", "apdu": "FFCA000000"],
            ["t_us": 3, "event": "r_apdu", "response": "04A23B915C6E809000"],
            ["t_us": 4, "event": "c_apdu", "apdu": "FFB0000420"],
            [
                "t_us": 5, "event": "r_apdu",
                "response": .string([UInt8](repeating: 0x11, count: 32).hexString() + "9000"),
            ],
            ["t_us": 6, "event": "c_apdu", "apdu": "FFD600050401020304"],
            ["t_us": 7, "event": "r_apdu", "response": "9000"],
            ["t_us": 8, "event": "card_disconnected", "reason": "stopped"],
        ]
        let p = Self.packets(records)
        #expect(p.first?.event == .fieldOn)
        #expect(p.last?.event == .fieldOff)
        let comments = p.compactMap(\.comment)
        #expect(comments.contains { $0.hasPrefix("READ page 4 — synthesized") })
        #expect(comments.contains { $0.hasPrefix("READ page 8 — synthesized") })
        #expect(comments.contains { $0.hasPrefix("WRITE page 5 → ACK — synthesized") })
        #expect(p.contains { $0.data == [0x93, 0x20] })
        #expect(p.contains { $0.data == [0xA2, 0x05, 0x01, 0x02, 0x03, 0x04] })
    }

    @Test("--redact: UIDs zeroed with a valid BCC, APDU data zeroed, SELECT's AID and status words kept")
    func redaction() {
        let select: JSONObject = [
            "t_us": 200, "event": "frame", "session": 1, "target": 1, "command": "00A4040007D276000085010100",
            "response": "9000",
        ]
        let read: JSONObject = [
            "t_us": 300, "event": "frame", "session": 1, "target": 1, "command": "00B000000F",
            "response": "000F2000FF00FF0406E104010000009000",
        ]
        let p = Self.packets(
            [Self.header("session", device: "pn532_uart:x"), Self.libnfcTarget, select, read], redact: true)
        #expect(p.map(Self.hex).contains("8800000088"), "CT kept, UID zeros, BCC = 88")
        #expect(p.map(Self.hex).contains("0000000000"))
        #expect(!p.map(Self.hex).contains { $0.contains("04518A") })
        #expect(p.map(Self.hex).contains("0200A4040007D276000085010100"))
        #expect(p.map(Self.hex).contains("03" + String(repeating: "00", count: 15) + "9000"))
        #expect(p.map(Self.hex).contains("0675778102" + "00"), "ATS historical bytes zeroed")
    }

    @Test("Frames a trace holds only redacted are left out and counted")
    func redactedTrace() {
        var e = ISO14443Exporter()
        _ = e.add(TraceRecord(json: Self.header("session", device: "pn532_uart:x")))
        let out = e.add(
            TraceRecord(json: ["t_us": 1, "event": "frame", "session": 1, "target": 1, "command": "redacted:2 bytes"]))
        #expect(out.isEmpty)
        #expect(e.skippedFrames == 1)
    }

    @Test("The phone's walk: field events, the wake as a comment, a synthesized activation, routed SELECTs")
    func walk() {
        let records: [JSONObject] = [
            Self.header(
                "walk", device: nil,
                model: ["phone": .object(["uid": "085A3C91", "atqa": "0400", "sak": "20", "ats": "0578807002"])]),
            ["t_us": 0, "reader": "emv-payment", "event": "fieldOn", "technology": "ISO14443A"],
            ["t_us": 1, "reader": "emv-payment", "event": "nfcEvent"],
            ["t_us": 2, "reader": "emv-payment", "event": "isoDepActivated"],
            [
                "t_us": 3, "reader": "emv-payment", "event": "apdu", "apdu": "00A404000E325041592E5359532E444446303100",
                "response": "6A82", "answered_by": "system",
            ],
            ["t_us": 9, "reader": "emv-payment", "event": "fieldOff"],
        ]
        let p = Self.packets(records)
        #expect(p.first?.event == .fieldOn)
        #expect(p.last?.event == .fieldOff)
        #expect(p.contains { $0.comment?.contains("default contactless app is woken") == true })
        #expect(p.contains { $0.data == [0x04, 0x00] }, "ATQA in wire order from the header's phone")
        let select = p.first { $0.data.first == 0x02 && $0.fromReader }
        #expect(select?.comment?.contains("PPSE") == true)
        #expect(select?.comment?.contains("answered by the system") == true)
    }

    @Test("The live phone's UID is new each emulation: each activation is synthesized with its line's UID")
    func uidPerEmulation() {
        let records: [JSONObject] = [
            Self.header(
                "emulate", device: "pn532_uart:x",
                model: ["phone": .object(["uid": "08111111", "atqa": "0400", "sak": "20", "ats": "0578807002"])]),
            ["t_us": 0, "source": "model", "reader": "a", "event": "fieldOn", "technology": "ISO14443A"],
            ["t_us": 1, "source": "model", "reader": "a", "event": "isoDepActivated", "uid": "08111111"],
            ["t_us": 2, "source": "model", "reader": "a", "event": "fieldOff"],
            ["t_us": 3, "source": "model", "reader": "b", "event": "fieldOn", "technology": "ISO14443A"],
            ["t_us": 4, "source": "model", "reader": "b", "event": "isoDepActivated", "uid": "08222222"],
            ["t_us": 5, "source": "model", "reader": "b", "event": "fieldOff"],
        ]
        let p = Self.packets(records)
        // The anticollision answer is the UID and its BCC (08 ⊕ 11 ⊕ 11 ⊕ 11 = 19; 08 ⊕ 22 ⊕ 22 ⊕ 22 = 2A).
        #expect(p.contains { $0.data == [0x08, 0x11, 0x11, 0x11, 0x19] }, "the first emulation's UID")
        #expect(p.contains { $0.data == [0x08, 0x22, 0x22, 0x22, 0x2A] }, "the second's, not the header's")
    }

    @Test("The pcapng file: SHB, IDB of link type 264, EPBs with µs timestamps, comments and directions")
    func fileLayout() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-\(UUID()).pcapng").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let trace = TraceContents(
            header: Self.header("session", device: "pn532_uart:x"), records: [Self.libnfcTarget])
        let counts = try PcapngExport.export(trace, to: path, redact: false)
        #expect(counts.packets == 12)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var blocks: [(type: UInt32, body: ArraySlice<UInt8>)] = []
        var i = 0
        func u32(_ at: Int) -> UInt32 { bytes[at..<at + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) } }
        while i < bytes.count {
            let type = u32(i)
            let length = Int(u32(i + 4))
            #expect(length % 4 == 0)
            #expect(u32(i + length - 4) == UInt32(length), "trailing length repeats the leading one")
            blocks.append((type, bytes[(i + 8)..<(i + length - 4)]))
            i += length
        }
        #expect(blocks.map(\.type) == [0x0A0D_0D0A] + [1] + Array(repeating: 6, count: 12))
        let idb = Array(blocks[1].body)
        #expect(UInt16(idb[0]) | UInt16(idb[1]) << 8 == 264)
        let epb = Array(blocks[2].body)
        let ts = UInt64(u32At(epb, 4)) << 32 | UInt64(u32At(epb, 8))
        #expect(ts == 1_700_000_000_000_000 + 100, "started + t_us, in µs")
        let captured = Int(u32At(epb, 12))
        #expect(captured == 5)
        #expect(Array(epb[20..<25]) == [0x00, 0xFA, 0x00, 0x01, 0x26], "version 0, event FA, length 1, REQA")
        let text = String(decoding: epb, as: UTF8.self)
        #expect(text.contains("REQA — synthesized"))
    }

    func u32At(_ b: [UInt8], _ at: Int) -> UInt32 {
        b[at..<at + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
    }
}
