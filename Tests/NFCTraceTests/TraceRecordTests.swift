import Foundation
import NFCTrace
import Testing

/// `TraceRecord` against traces written before it existed (`Tests/Fixtures/traces`, by the code
/// of main at 8751edc): every line reads back, writes back byte for byte, and a record made
/// from its kind, time and fields is the same line; its kinds and fields are in the catalog and
/// the format document is the catalog's.
@Suite("Typed trace records")
struct TraceRecordTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let fixtures = root.appendingPathComponent("Tests/Fixtures/traces")
    static let names = [
        "session", "session-iso15693-signal", "capped", "dump", "write", "walk", "walk-sweep", "virtual-pn532",
        "session-tag", "virtual-card",
    ]

    static func lines(_ name: String) throws -> [String] {
        let text = try String(contentsOf: fixtures.appendingPathComponent(name + ".jsonl"), encoding: .utf8)
        return text.split(separator: "\n").map(String.init)
    }

    @Test("Every line of an old trace reads as a record and writes back byte for byte", arguments: names)
    func roundTrip(_ name: String) throws {
        let lines = try Self.lines(name)
        #expect(!lines.isEmpty)
        for line in lines {
            let r = try TraceRecord(line: line)
            #expect(r.line == line)
            #expect(r.kind != nil)
            #expect(r.time != nil)
        }
        let contents = try TraceContents(path: Self.fixtures.appendingPathComponent(name + ".jsonl").path)
        #expect(contents.skippedLines == 0)
        #expect(contents.allRecords.map(\.serialized) == lines)
    }

    @Test(
        "A record made from its kind, time and fields is today's line, for every kind in the old traces",
        arguments: names)
    func encodeIsToday(_ name: String) throws {
        for line in try Self.lines(name) {
            let r = try TraceRecord(line: line)
            let kind = try #require(r.kind)
            if kind == .header {
                let header = try #require(TraceHeader(record: r))
                let started = try #require(TraceHeader.started(of: r))
                #expect(header.record(startedText: started).serialized == line)
                continue
            }
            // The walk's timeline lines have `reader` before `event`.
            let leadingReader = r.keys.count > 2 && r.keys[1] == "reader"
            var leading = JSONObject()
            var fields = r.fields
            if leadingReader {
                leading["reader"] = r["reader"]
                fields["reader"] = nil
            }
            #expect(TraceRecord(kind, at: r.time, leading: leading, fields).line == line)
        }
    }

    /// One line of each kind, as the code before `TraceRecord` wrote it, made with the type.
    @Test("Today's lines, pinned: the record type writes them byte for byte")
    func pinned() {
        let pins: [(TraceRecord, String)] = [
            (
                TraceRecord(
                    .frame, at: 1446, ["target": 1, "command": "3000", "response": "045C2AFA91E23380C0480000E1101200"]),
                #"{"t_us":1446,"event":"frame","target":1,"command":"3000","response":"045C2AFA91E23380C0480000E1101200"}"#
            ),
            (
                TraceRecord(.frame, at: 1324, ["target": 1, "command": "60", "response": .null]),
                #"{"t_us":1324,"event":"frame","target":1,"command":"60","response":null}"#
            ),
            (TraceRecord(.closed, at: 3178), #"{"t_us":3178,"event":"closed"}"#),
            (
                TraceRecord(.traceTruncated, at: 611, ["max_bytes": 4096]),
                #"{"t_us":611,"event":"trace_truncated","max_bytes":4096}"#
            ),
            (
                TraceRecord(
                    .traceDropped, at: 990749, ["dropped_records": 29, "dropped_bytes": 20286, "max_bytes": 4096]),
                #"{"t_us":990749,"event":"trace_dropped","dropped_records":29,"dropped_bytes":20286,"max_bytes":4096}"#
            ),
            (
                TraceRecord(
                    .didInvalidateWithError, at: 990733,
                    [
                        "session": 1, "session_t_us": 989530, "code": 204,
                        "reason": "readerSessionInvalidationErrorFirstNDEFTagRead",
                    ]),
                #"{"t_us":990733,"event":"didInvalidateWithError","session":1,"session_t_us":989530,"code":204,"reason":"readerSessionInvalidationErrorFirstNDEFTagRead"}"#
            ),
            (
                TraceRecord(.pn532Event, at: 174, ["note": "load UID 04A23B915C6E80"]),
                #"{"t_us":174,"event":"pn532_event","note":"load UID 04A23B915C6E80"}"#
            ),
            (
                TraceRecord(.stopped, at: 1_989_057, ["reason": "signal"]),
                #"{"t_us":1989057,"event":"stopped","reason":"signal"}"#
            ),
            (
                TraceRecord(.isoDepActivated, at: 2000, leading: ["reader": "emv-payment"]),
                #"{"t_us":2000,"reader":"emv-payment","event":"isoDepActivated"}"#
            ),
            (
                TraceRecord(.thermal, at: 5, ["heat": .double(0.25), "time_limit_s": .double(60.0)]),
                #"{"t_us":5,"event":"thermal","heat":0.25,"time_limit_s":60.0}"#
            ),
        ]
        for (record, line) in pins { #expect(record.line == line) }
        let header = TraceHeader(
            tool: "nfcbench 0.1.0", libnfc: "1.8.0", pcsclite: "1.9.9", command: "dump",
            device: "sim:tag:ultralight-c-text", model: [:], setup: ["out": "dump.json"], pid: 28490)
        #expect(
            header.record(startedText: "2026-12-03T18:08:51.396023Z").serialized
                == #"{"schema":"nfcbench.trace/1","t_us":0,"event":"header","tool":"nfcbench 0.1.0","libnfc":"1.8.0","pcsclite":"1.9.9","command":"dump","device":"sim:tag:ultralight-c-text","pid":28490,"started":"2026-12-03T18:08:51.396023Z","model":{},"setup":{"out":"dump.json"}}"#
        )
    }

    @Test("Unknown kinds and keys are kept as read, and said to be unknown")
    func unknownKept() throws {
        let line = #"{"t_us":7,"event":"from_the_future","x":{"y":[1,2.5,null]},"event_version":2}"#
        let r = try TraceRecord(line: line)
        #expect(r.kind == TraceRecord.Kind(rawValue: "from_the_future"))
        #expect(r.kind?.isKnown == false)
        #expect(r.line == line)
        #expect(r.unlistedKeys == ["x", "event_version"])
        let contents = try TraceContents(text: TraceRecord(.closed, at: 1).line + "\n" + line + "\n")
        #expect(contents.records.map(\.serialized) == [TraceRecord(.closed, at: 1).line, line])
        #expect(contents.unknownKinds == [TraceRecord.Kind(rawValue: "from_the_future")])
        let noKind = try TraceRecord(line: #"{"t_us":3,"note":"no event"}"#)
        #expect(noKind.kind == nil)
        #expect(throws: TraceRecordError.self) { try TraceRecord(line: "[1,2]") }
    }

    @Test("Setting a time puts t_us first (after a header's schema) or replaces it in place")
    func timeSetter() {
        var r = TraceRecord(.summary, at: nil, ["readers": 10])
        #expect(r.line == #"{"event":"summary","readers":10}"#)
        r.time = 25
        #expect(r.line == #"{"t_us":25,"event":"summary","readers":10}"#)
        r.time = 26
        #expect(r.line == #"{"t_us":26,"event":"summary","readers":10}"#)
        var h = TraceRecord(json: ["schema": "nfcbench.trace/1", "event": "header"])
        h.time = 0
        #expect(h.line == #"{"schema":"nfcbench.trace/1","t_us":0,"event":"header"}"#)
    }

    @Test("Every kind and field of the old traces is in the catalog", arguments: names)
    func catalogCoversFixtures(_ name: String) throws {
        for line in try Self.lines(name) {
            let r = try TraceRecord(line: line)
            let kind = try #require(r.kind)
            #expect(kind.isKnown, "\(name): kind \(kind) is not in TraceRecord.catalog")
            #expect(r.unlistedKeys.isEmpty, "\(name): \(kind) has keys the catalog does not list: \(r.unlistedKeys)")
        }
    }

    @Test("The catalog names each kind once")
    func catalogUnique() {
        let names = TraceRecord.catalog.map(\.kind.rawValue)
        #expect(Set(names).count == names.count)
        for spec in TraceRecord.catalog {
            let keys = spec.fields.map(\.key)
            #expect(Set(keys).count == keys.count, "\(spec.kind): a field listed twice")
        }
    }

    /// `docs/trace-format.md` is generated from the catalog: `NFCBENCH_WRITE_TRACE_FORMAT=1
    /// swift test --filter TraceRecordTests` writes it.
    @Test("docs/trace-format.md is the catalog's document: every kind and field is in it")
    func formatDocument() throws {
        let path = Self.root.appendingPathComponent("docs/trace-format.md")
        let expected = TraceRecord.formatDocument
        if ProcessInfo.processInfo.environment["NFCBENCH_WRITE_TRACE_FORMAT"] == "1" {
            try expected.write(to: path, atomically: true, encoding: .utf8)
        }
        let doc = try String(contentsOf: path, encoding: .utf8)
        #expect(
            doc == expected,
            "docs/trace-format.md differs from TraceRecord.catalog: NFCBENCH_WRITE_TRACE_FORMAT=1 swift test --filter TraceRecordTests"
        )
        for spec in TraceRecord.catalog {
            #expect(doc.contains("### `\(spec.kind.rawValue)`"))
            for f in spec.fields { #expect(doc.contains("| `\(f.key)` |"), "\(spec.kind): \(f.key)") }
        }
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("docs/trace-format.md"))
    }
}
