import Foundation
import NFCTags
import NFCTrace
import Synchronization
import Testing

/// FeliCa and ISO 15693 in the pcapng export: neither is ever written as ISO 14443. FeliCa
/// goes to an interface for Wireshark's `felica` dissector (exported PDU, link type 252),
/// without the length byte; ISO 15693 frames are left out and counted.
@Suite("pcapng export of FeliCa and ISO 15693 targets")
struct PcapngFamiliesExportTests {
    static let idm = "012E4CE445055B87"
    static let pmm = "00F1000000014300"

    static func header(_ command: String, device: String) -> JSONObject {
        PcapngExportTests.header(command, device: device)
    }

    static func detected(kind: String, _ fields: JSONObject = [:], t: Int64 = 1) -> JSONObject {
        var target: JSONObject = ["id": 1, "kind": .string(kind), "family": .string(kind)]
        for e in fields.entries { target[e.key] = e.value }
        return ["t_us": .int(t), "event": "detected", "session": 1, "targets": .array([.object(target)])]
    }

    static func frame(_ command: String, _ response: String?, t: Int64) -> JSONObject {
        [
            "t_us": .int(t), "event": "frame", "session": 1, "target": 1, "command": .string(command),
            "response": response.map { .string($0) } ?? .null,
        ]
    }

    /// A FeliCa Lite-S NDEF read and one Update, as a session on `device` records them (LEN first).
    static func feliCaSession(device: String, pmm: Bool = true) -> [JSONObject] {
        var fields: JSONObject = ["uid": .string(idm)]
        if pmm {
            fields["pmm"] = .string(Self.pmm)
            fields["system_code"] = "12FC"
        } else {
            fields["atr"] = "3B8F8001804F0CA00000030611003B0000000042"
        }
        return [
            header("session", device: device), detected(kind: "felica", fields),
            frame("060012FC0000", "1201" + idm + Self.pmm, t: 2),
            frame("1006" + idm + "010B00018000", "1D07" + idm + "000001" + "100401000D00000000000100001D0040", t: 3),
            frame("2008" + idm + "0109000180" + "01" + String(repeating: "AB", count: 16), "0C09" + idm + "0000", t: 4),
        ]
    }

    static func packets(_ records: [JSONObject], redact: Bool = false) -> (
        packets: [ISO14443Packet], exporter: ISO14443Exporter
    ) {
        var e = ISO14443Exporter(redact: redact)
        let p = records.flatMap { e.add(TraceRecord(json: $0)) }
        return (p, e)
    }

    @Test("A FeliCa session: every packet on the FeliCa link, without its length byte; the Polling synthesized")
    func feliCaSession() {
        let (p, e) = Self.packets(Self.feliCaSession(device: "pn532_uart:/dev/ttyUSB0"))
        #expect(p.allSatisfy { $0.link == .feliCa }, "nothing as ISO 14443: \(p.map(\.link))")
        #expect(
            p.map { $0.data.hexString() } == [
                "00FFFF0100", "01" + Self.idm + Self.pmm + "12FC",
                "0012FC0000", "01" + Self.idm + Self.pmm,
                "06" + Self.idm + "010B00018000", "07" + Self.idm + "000001" + "100401000D00000000000100001D0040",
                "08" + Self.idm + "0109000180" + "01" + String(repeating: "AB", count: 16), "09" + Self.idm + "0000",
            ])
        #expect(p.map(\.fromReader) == [true, false, true, false, true, false, true, false])
        #expect(p[0].comment?.contains("synthesized from the target libnfc reports") == true)
        #expect(p[4].comment == "Check (Read Without Encryption): service 000B, block 0")
        #expect(p[5].comment == "Check response, status 00 00, 1 block")
        #expect(p[6].comment == "Update (Write Without Encryption): service 0009, block 1")
        #expect(p[7].comment == "Update response, status 00 00")
        #expect(e.skippedFrames == 0 && e.skippedISO15693Frames == 0)
    }

    @Test("PC/SC reports no PMm: no Polling is made up, a note says the reader polled")
    func feliCaPCSC() {
        let (p, _) = Self.packets(Self.feliCaSession(device: "pcsc:ACS ACR1252", pmm: false))
        #expect(p.count == 6)
        #expect(p.allSatisfy { $0.link == .feliCa })
        #expect(p[0].data.hexString() == "0012FC0000")
        #expect(p[0].comment?.hasPrefix("FeliCa card: the PC/SC reader polls it") == true)
    }

    @Test("--redact: the IDm and block data become zeros; codes, PMm, services, blocks and status flags stay")
    func feliCaRedacted() {
        let (p, _) = Self.packets(Self.feliCaSession(device: "sim:tag:felica-lite-s-uri"), redact: true)
        let zeros = String(repeating: "00", count: 8)
        #expect(!p.contains { $0.data.hexString().contains(Self.idm) })
        #expect(p[1].data.hexString() == "01" + zeros + Self.pmm + "12FC")
        #expect(p[4].data.hexString() == "06" + zeros + "010B00018000")
        #expect(p[5].data.hexString() == "07" + zeros + "000001" + String(repeating: "00", count: 16))
        #expect(p[6].data.hexString() == "08" + zeros + "0109000180" + "01" + String(repeating: "00", count: 16))
        #expect(p[4].comment == "Check (Read Without Encryption): service 000B, block 0")
    }

    @Test("An ISO 15693 session: no packet at all (no 14443 activation either), every frame counted")
    func iso15693Session() {
        let records: [JSONObject] = [
            Self.header("session", device: "sim:tag:icode-slix-text"),
            Self.detected(kind: "iso15693", ["uid": "E00401008A5C982E", "dsfid": "00"]),
            Self.frame("022B", "000F2E985C8A000104E000001B0301", t: 2),
            Self.frame("022000", "00E1400D00", t: 3),
            Self.frame("022001", "redacted:5 bytes", t: 4),
        ]
        let (p, e) = Self.packets(records)
        #expect(p.isEmpty, "\(p)")
        #expect(e.skippedISO15693Frames == 3, "a redacted 15693 frame is a 15693 frame")
        #expect(e.skippedFrames == 0)
    }

    @Test("The virtual PN532's FeliCa air frames go on the FeliCa link; its field events stay ISO 14443")
    func virtualPN532FeliCa() {
        let records: [JSONObject] = [
            Self.header("virtual pn532", device: "pty:/tmp/pn"),
            ["t_us": 1, "event": "field", "state": "on", "note": "RF field on"],
            [
                "t_us": 2, "event": "air", "kind": "felica", "command": "0600FFFF0100",
                "response": .string("1401" + Self.idm + Self.pmm + "12FC"), "note": "Polling (212 kbit/s)",
            ],
            ["t_us": 3, "event": "air", "kind": "felica", "command": .string("0A04" + Self.idm), "response": .null],
            ["t_us": 4, "event": "field", "state": "off"],
        ]
        let (p, _) = Self.packets(records)
        #expect(p.map(\.link) == [.iso14443, .feliCa, .feliCa, .feliCa, .iso14443])
        #expect(p[0].event == .fieldOn && p[4].event == .fieldOff)
        #expect(p[1].data.hexString() == "00FFFF0100")
        #expect(p[1].comment == "Polling, system code FFFF, request code 01, 1 time slot — Polling (212 kbit/s)")
        #expect(p[3].data.hexString() == "04" + Self.idm)
        #expect(p[4].comment?.contains("no answer") == true)
    }

    @Test("The vpcd card by its ATR: FeliCa direct transmits become FeliCa packets; 15693 APDUs are counted")
    func virtualCardFamilies() {
        let feliCa: [JSONObject] = [
            Self.header("virtual card", device: "vpcd:35963"),
            ["t_us": 1, "event": "card_connected", "port": 35963],
            ["t_us": 2, "event": "atr", "atr": "3B8F8001804F0CA00000030611003B0000000042"],
            ["t_us": 3, "event": "c_apdu", "apdu": "FFCA000000"],
            ["t_us": 4, "event": "r_apdu", "response": .string(Self.idm + "9000")],
            ["t_us": 5, "event": "c_apdu", "apdu": "FF00000006060012FC0000"],
            ["t_us": 6, "event": "r_apdu", "response": .string("1201" + Self.idm + Self.pmm + "9000")],
        ]
        let (f, _) = Self.packets(feliCa)
        #expect(f.map(\.link) == [.iso14443, .feliCa, .feliCa])
        #expect(f[1].data.hexString() == "0012FC0000")
        #expect(f[2].data.hexString() == "01" + Self.idm + Self.pmm)
        #expect(f[1].comment?.contains("GET DATA FF CA") == true, "no anticollision made up from the IDm")
        #expect(!f.contains { $0.data.first == 0x93 })

        let vicinity: [JSONObject] = [
            Self.header("virtual card", device: "vpcd:35963"),
            ["t_us": 1, "event": "card_connected", "port": 35963],
            ["t_us": 2, "event": "atr", "atr": "3B8F8001804F0CA0000003060B00140000000077"],
            ["t_us": 3, "event": "c_apdu", "apdu": "FFCA000000"],
            ["t_us": 4, "event": "r_apdu", "response": "2E985C8A000104E09000"],
            ["t_us": 5, "event": "c_apdu", "apdu": "FFB0000000"],
            ["t_us": 6, "event": "r_apdu", "response": "E1400D009000"],
            ["t_us": 7, "event": "card_disconnected", "reason": "stopped"],
        ]
        let (v, e) = Self.packets(vicinity)
        #expect(v.map(\.event) == [.fieldOn, .fieldOff], "only the field: no Type 2 READ made up for FF B0")
        #expect(e.skippedISO15693Frames == 2)
    }

    @Test("FeliCa frame descriptions: Polling, Check with 3- and 2-byte block elements, status errors")
    func descriptions() {
        let check3 = [UInt8](hex: "06" + Self.idm + "010B0002" + "000001" + "8001")!
        #expect(
            ISO14443Exporter.describeFeliCa(check3)
                == "Check (Read Without Encryption): service 000B, blocks 256, 1")
        #expect(
            ISO14443Exporter.describeFeliCa([UInt8](hex: "09" + Self.idm + "A1A2")!)
                == "Update response, status A1 A2 (error)")
        #expect(
            ISO14443Exporter.describeFeliCa([0x00, 0x12, 0xFC, 0x01, 0x03])
                == "Polling, system code 12FC, request code 01, 4 time slots")
    }

    @Test("The file: an IDB of link type 264, then one of 252 before the first FeliCa packet, its PDUs tagged 'felica'")
    func fileLayout() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-\(UUID()).pcapng").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let records = Self.feliCaSession(device: "sim:tag:felica-lite-s-uri")
        let trace = TraceContents(header: records[0], records: Array(records.dropFirst()))
        let counts = try PcapngExport.export(trace, to: path, redact: false)
        #expect(counts == PcapngExport.Counts(packets: 8, skippedFrames: 0, feliCaPackets: 8))
        let blocks = try Self.blocks(path)
        #expect(blocks.map(\.type) == [0x0A0D_0D0A, 1, 1] + Array(repeating: 6, count: 8))
        #expect(Self.u16(blocks[1].body, 0) == 264)
        #expect(Self.u16(blocks[2].body, 0) == 252)
        let epb = blocks[3].body
        #expect(Self.u32(epb, 0) == 1, "interface 1: the FeliCa one")
        let captured = Int(Self.u32(epb, 12))
        let data = Array(epb[20..<(20 + captured)])
        #expect(
            data == [0x00, 0x0C, 0x00, 0x08] + Array("felica".utf8) + [0, 0] + [0, 0, 0, 0] + [
                0x00, 0xFF, 0xFF, 0x01, 0x00,
            ],
            "dissector-name tag (padded name, padding counted), end of options, the Polling without LEN")
    }

    @Test("Only 14443 packets: the file is as before, one interface of link type 264")
    func iso14443Unchanged() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-\(UUID()).pcapng").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let trace = TraceContents(
            header: PcapngExportTests.header("session", device: "pn532_uart:x"),
            records: [PcapngExportTests.libnfcTarget])
        let counts = try PcapngExport.export(trace, to: path, redact: false)
        #expect(counts.feliCaPackets == 0 && counts.skipped.isEmpty)
        #expect(try Self.blocks(path).filter { $0.type == 1 }.count == 1)
    }

    @Test("Counts say what was left out and why, in the message and as JSON")
    func countsText() {
        let c = PcapngExport.Counts(packets: 2, skippedFrames: 1, skippedISO15693Frames: 11)
        #expect(
            c.skipped == [
                "1 frames left out (the trace holds them redacted)",
                "11 frames left out (ISO 15693 frames: Wireshark has no dissector; kept in the trace)",
            ])
        #expect(
            c.json.serialized
                == #"{"packets":2,"felica_packets":0,"skipped":[{"frames":1,"reason":"the trace holds them redacted"},{"frames":11,"family":"iso15693","reason":"ISO 15693 frames: Wireshark has no dissector; kept in the trace"}]}"#
        )
    }

    @Test("A live export that left 15693 frames out ends the trace with a pcapng_skipped record, and reports once")
    func liveClosingRecord() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let reports = ReportLines()
        let out = dir.appendingPathComponent("live.pcapng").path
        let sink = try PcapngExport(path: out, report: { reports.add($0) })
        let tracePath = dir.appendingPathComponent("t.jsonl").path
        let writer = try TraceWriter(
            path: tracePath,
            header: TraceHeader(
                tool: "t", libnfc: "1.8.0", pcsclite: "1.9.9", command: "session", device: "sim:tag:icode-slix-text"),
            createParentDirectory: false, sinks: [sink])
        writer.emit(TraceRecord(json: Self.detected(kind: "iso15693", ["uid": "E00401008A5C982E"])))
        writer.emit(TraceRecord(json: Self.frame("022000", "00E1400D00", t: 2)))
        writer.emit(TraceRecord(json: Self.frame("022001", "00031FD101", t: 3)))
        writer.close()
        writer.close()
        let last = try #require(try TraceContents(path: tracePath).records.last)
        #expect(last["event"]?.stringValue == "pcapng_skipped")
        #expect(last["frames"]?.intValue == 2)
        #expect(last["family"]?.stringValue == "iso15693")
        #expect(last["pcapng"]?.stringValue == out)
        #expect(last["reason"]?.stringValue == ISO14443Exporter.iso15693Reason)
        #expect(
            reports.lines == ["2 frames left out (ISO 15693 frames: Wireshark has no dissector; kept in the trace)"])
    }

    final class ReportLines: Sendable {
        private let state = Mutex<[String]>([])
        func add(_ s: String) { state.withLock { $0.append(s) } }
        var lines: [String] { state.withLock { $0 } }
    }

    static func blocks(_ path: String) throws -> [(type: UInt32, body: [UInt8])] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var out: [(type: UInt32, body: [UInt8])] = []
        var i = 0
        while i + 8 <= bytes.count {
            let length = Int(u32(bytes, i + 4))
            out.append((u32(bytes, i), Array(bytes[(i + 8)..<(i + length - 4)])))
            i += length
        }
        return out
    }

    static func u32(_ b: [UInt8], _ at: Int) -> UInt32 {
        b[at..<at + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
    }

    static func u16(_ b: [UInt8], _ at: Int) -> UInt16 { UInt16(b[at]) | UInt16(b[at + 1]) << 8 }
}
