import Foundation
import NFCTrace
import Testing

@Suite("The one trace header and redaction")
struct TraceHeaderTests {
    static func header(_ command: String = "session") -> TraceHeader {
        TraceHeader(
            tool: "nfcbench 9.9", libnfc: "1.8.0", pcsclite: "1.9.9", command: command, device: "pcsc:Reader",
            model: ["time_limit_s": .double(60)], setup: ["uid": "04A23B915C6E80", "port": 35963], pid: 42)
    }

    @Test("The header has every key, in order, whatever the command")
    func keys() throws {
        for command in ["session", "virtual card", "walk"] {
            let w = try TraceWriter(path: nil, header: Self.header(command))
            #expect(w.header.keys == TraceHeader.keys)
            #expect(w.header["command"]?.stringValue == command)
            #expect(w.header["pid"]?.intValue == 42)
        }
        var bare = Self.header()
        bare.device = nil
        let w = try TraceWriter(path: nil, header: bare)
        #expect(w.header["device"] == .null)
        #expect(w.header.keys == TraceHeader.keys)
    }

    @Test("--redact keeps the header's command, device and model; only setup's identifiers are redacted")
    func redactLeavesCommand() throws {
        let lines = LineLog()
        let w = try TraceWriter(path: nil, header: Self.header(), redact: true, echo: { lines.add($0) })
        w.record("frame", ["target": 1, "command": "3004", "response": "0102"])
        let header = try #require(try JSONValue(parsing: lines.all[0]).objectValue)
        #expect(header["command"]?.stringValue == "session")
        #expect(header["device"]?.stringValue == "pcsc:Reader")
        #expect(header["model"] == .object(["time_limit_s": .double(60)]))
        #expect(header["setup"]?["uid"]?.stringValue == "redacted:7 bytes")
        #expect(header["setup"]?["port"]?.intValue == 35963)
        let frame = try #require(try JSONValue(parsing: lines.all[1]).objectValue)
        #expect(frame["command"]?.stringValue == "redacted:2 bytes")
        #expect(frame["response"]?.stringValue == "redacted:2 bytes")
    }

    @Test("started is UTC with microseconds and reads back to the same instant")
    func started() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.123456)
        let text = TraceHeader.timestamp(date)
        #expect(text == "2023-11-14T22:13:20.123456Z")
        #expect(TraceHeader.epochMicroseconds(text) == 1_700_000_000_123_456)
        #expect(TraceHeader.epochMicroseconds("2023-11-14T22:13:20Z") == 1_700_000_000_000_000)
        #expect(TraceHeader.epochMicroseconds("yesterday") == nil)
    }

    @Test("Sinks get every record unredacted, header first, in order, then finish once")
    func sinks() throws {
        let sink = RecordingSink()
        let w = try TraceWriter(path: nil, header: Self.header(), redact: true, sinks: [sink])
        w.record("frame", ["command": "3004"])
        w.close()
        w.close()
        w.record("late")
        #expect(sink.records.map { $0["event"]?.stringValue } == ["header", "frame"])
        #expect(sink.records[1]["command"]?.stringValue == "3004")
        #expect(sink.finishes == 1)
    }

    @Test("A trace file reads back; a cut last line is forgiven, a bad middle line is not")
    func readBack() throws {
        let good = #"{"schema":"nfcbench.trace/1","t_us":0,"event":"header","command":"session"}"#
        let record = #"{"t_us":5,"event":"begin"}"#
        let t = try TraceContents(text: [good, record, #"{"t_us":9,"ev"#].joined(separator: "\n"))
        #expect(t.command == "session")
        #expect(t.records.count == 1)
        #expect(t.skippedLines == 1)
        #expect(throws: TraceReadError.self) {
            try TraceContents(text: [good, "not json", record].joined(separator: "\n"), name: "x")
        }
    }

    @Test("Text that is no trace is said to be none (notATrace); a trace cut in its only line is cut short")
    func notATrace() {
        let cases: [(text: String, notATrace: Bool)] = [
            ("", true), ("\u{0}\u{1}PNG", true), (#"{"a":1}"#, true), ("[1]", true), ("{\n  \"format\": 1\n}", true),
            ("hello", true), (#"{"t_us":0,"event":"head"#, false),
        ]
        for c in cases {
            do {
                _ = try TraceContents(text: c.text, name: "f")
                Issue.record("\(c.text) read as a trace")
            } catch {
                #expect(error.notATrace == c.notATrace, "\(c.text): \(error)")
                #expect(error.description.hasPrefix(c.notATrace ? "f is not an nfcbench trace (" : "f: "), "\(error)")
            }
        }
        #expect((try? TraceContents(text: #"{"t_us":5,"event":"begin"}"#))?.records.count == 1, "no header: a trace")
    }
}

final class RecordingSink: TraceSink, @unchecked Sendable {
    private let lock = NSLock()
    private var _records: [JSONObject] = []
    private var _finishes = 0
    func receive(_ record: TraceRecord) { lock.withLock { _records.append(record.json) } }
    func finish() { lock.withLock { _finishes += 1 } }
    var records: [JSONObject] { lock.withLock { _records } }
    var finishes: Int { lock.withLock { _finishes } }
}

final class LineLog: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func add(_ l: String) { lock.withLock { lines.append(l) } }
    var all: [String] { lock.withLock { lines } }
}

extension JSONValue {
    var objectValue: JSONObject? { if case .object(let o) = self { o } else { nil } }
}
