import Foundation
import NFCTrace
import Testing

@Suite("TraceWriter.emit(contentsOf:): a burst of records in one write")
struct TraceWriterBatchTests {
    static func frames(_ n: Int) -> [TraceRecord] {
        (0..<n).map { i in
            TraceRecord(.frame, at: Int64(100 + i), ["target": 1, "command": "00A40400", "response": "9000"])
        }
    }

    static func lines(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    @Test("A batch leaves the file, the echo and the sinks as the same records one by one do")
    func sameAsOneByOne() throws {
        let dir = try TestDirectory("batch")
        defer { dir.remove() }
        var files: [[String]] = []
        var echoes: [[String]] = []
        var sunk: [[JSONObject]] = []
        for batched in [false, true] {
            let path = dir.path + "/\(batched).jsonl"
            let echo = LineLog()
            let sink = RecordingSink()
            let w = try TraceWriter(
                path: path, header: TraceHeaderTests.header(), redact: true, echo: { echo.add($0) }, sinks: [sink])
            let shown: [TraceRecord]
            if batched {
                shown = w.emit(contentsOf: Self.frames(5))
            } else {
                shown = Self.frames(5).map { w.emit($0) }
            }
            #expect(shown.count == 5)
            #expect(shown.allSatisfy { $0["command"]?.stringValue == "redacted:4 bytes" })
            w.close()
            files.append(Array(try Self.lines(path).dropFirst()))  // the header's `started` differs
            echoes.append(Array(echo.all.dropFirst()))
            sunk.append(Array(sink.records.dropFirst()))
        }
        #expect(files[0].count == 5)
        #expect(files[0] == files[1])
        #expect(echoes[0] == echoes[1])
        #expect(echoes[1] == files[1])
        #expect(sunk[0] == sunk[1])
        #expect(sunk[1].first?["command"]?.stringValue == "00A40400")  // sinks redact for themselves
    }

    @Test(
        "The size cap cuts a batch at the record that would pass it, marks it once, drops the rest, and counts them at the end"
    )
    func capInsideBatch() throws {
        let dir = try TestDirectory("batch-cap")
        defer { dir.remove() }
        let path = dir.path + "/t.jsonl"
        let headerLine = LineLog()
        _ = try TraceWriter(path: nil, header: TraceHeaderTests.header(), echo: { headerLine.add($0) })
        let headerSize = try #require(headerLine.all.first).utf8.count + 1
        let sink = RecordingSink()
        let w = try TraceWriter(
            path: path, header: TraceHeaderTests.header(), maxBytes: headerSize + 3 * 120, sinks: [sink])
        let frame = Self.frames(1)[0].serialized + "\n"
        let fits = (3 * 120) / frame.utf8.count
        w.emit(contentsOf: Self.frames(10))
        w.emit(contentsOf: Self.frames(2))
        w.close()
        let lines = try Self.lines(path)
        #expect(lines.count == 1 + fits + 2)
        let cut = try #require(try JSONValue(parsing: lines[lines.count - 2]).objectValue)
        #expect(cut["event"]?.stringValue == "trace_truncated")
        #expect(cut["max_bytes"]?.intValue == Int64(headerSize + 3 * 120))
        #expect(lines.filter { $0.contains("trace_truncated") }.count == 1)
        let last = try #require(try JSONValue(parsing: lines[lines.count - 1]).objectValue)
        #expect(last["event"]?.stringValue == "trace_dropped")
        #expect(last["dropped_records"]?.intValue == Int64(12 - fits))
        // The sinks still got all 12 frames.
        #expect(sink.records.filter { $0["event"]?.stringValue == "frame" }.count == 12)
    }
}

/// A private temporary folder for one test.
struct TestDirectory {
    let path: String
    init(_ tag: String) throws {
        var template = Array("\(NSTemporaryDirectory())nfcbench-\(tag)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        path = String(cString: made)
    }
    func remove() { try? FileManager.default.removeItem(atPath: path) }

}

extension TraceWriterBatchTests {
    @Test(
        "A capped trace still ends with its summary: measured comes after a trace_dropped record counting what was left out"
    )
    func capKeepsSummary() throws {
        let dir = try TestDirectory("cap-summary")
        defer { dir.remove() }
        let path = dir.path + "/t.jsonl"
        let w = try TraceWriter(path: path, header: TraceHeaderTests.header(), maxBytes: 4096)
        w.emit(contentsOf: Self.frames(200))
        w.record("measured", ["count": .int(200)])
        w.record("closed")
        w.close()
        let lines = try Self.lines(path)
        let events = lines.map { (try? JSONValue(parsing: $0))?.objectValue?["event"]?.stringValue }
        #expect(events.suffix(3) == ["trace_dropped", "measured", "closed"], "\(events.suffix(4))")
        let count = try #require(try JSONValue(parsing: lines[lines.count - 3]).objectValue)
        let kept = events.filter { $0 == "frame" }.count
        #expect(count["dropped_records"]?.intValue == Int64(200 - kept))
        #expect(events.filter { $0 == "trace_truncated" }.count == 1)
        let size = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size <= 4096 + (64 << 10), "the summaries stay within the reserve")
    }
}
