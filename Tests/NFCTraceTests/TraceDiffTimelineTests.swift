import Foundation
import NFCTrace
import Testing

@Suite("trace diff and the timeline picture")
struct TraceDiffTimelineTests {
    static func trace(_ records: [JSONObject], command: String = "session") -> TraceContents {
        TraceContents(header: ["event": "header", "command": .string(command)], records: records)
    }

    static let run: [JSONObject] = [
        ["t_us": 10, "event": "begin", "session": 1, "session_t_us": 0, "mode": "ndef"],
        ["t_us": 20, "event": "thermal", "session": 1, "heat": .double(0), "time_limit_s": .double(60)],
        ["t_us": 300, "event": "didBecomeActive", "session": 1],
        ["t_us": 900, "event": "didInvalidateWithError", "session": 1, "code": 204, "reason": "first read"],
    ]

    @Test("Only times differ: the same events; with --times they differ")
    func timesIgnored() {
        var later = Self.run
        later[2]["t_us"] = 999
        later[1]["heat"] = .double(0.5)
        #expect(TraceDiff(Self.trace(Self.run), Self.trace(later)).same)
        #expect(!TraceDiff(Self.trace(Self.run), Self.trace(later), options: .init(times: true)).same)
    }

    @Test(
        "Two identical sessions on a bench used in between differ only in heat and the limits derived from it: the same events (trace diff's help says heat is ignored)"
    )
    func heatDerivedIgnored() {
        var warmer = Self.run
        warmer[1]["heat"] = .double(42.5)
        warmer[1]["time_limit_s"] = .double(45)
        warmer.append([
            "t_us": 950, "event": "thermal", "session": 1, "phase": "end", "next_time_limit_s": .double(33.8),
        ])
        var cooler = Self.run
        cooler.append(["t_us": 950, "event": "thermal", "session": 1, "phase": "end", "next_time_limit_s": .double(60)])
        #expect(TraceDiff(Self.trace(cooler), Self.trace(warmer)).same)
        #expect(!TraceDiff(Self.trace(cooler), Self.trace(warmer), options: .init(times: true)).same)
    }

    @Test("A missing event is one '-' line, aligned on what both share")
    func missingEvent() {
        var shorter = Self.run
        shorter.remove(at: 2)
        let d = TraceDiff(Self.trace(Self.run), Self.trace(shorter))
        #expect(!d.same)
        let changed = d.lines.filter { if case .same = $0 { false } else { true } }
        #expect(changed == [.onlyInFirst(index: 3, #"{"event":"didBecomeActive","session":1}"#)])
    }

    @Test("Header differences are listed and do not count")
    func headers() {
        let a = TraceContents(header: ["event": "header", "command": "session", "device": "sim:a"], records: Self.run)
        let b = TraceContents(header: ["event": "header", "command": "session", "device": "sim:b"], records: Self.run)
        let d = TraceDiff(a, b)
        #expect(d.same)
        #expect(d.headerDifferences == [#"device: "sim:a" ≠ "sim:b""#])
    }

    @Test("The first difference reads as check equivalence reports it")
    func firstDifference() {
        #expect(TraceDiff.firstDifference(["a", "b"], ["a", "c"]) == "event 2: c ≠ b")
        #expect(TraceDiff.firstDifference(["a"], ["a", "x"]) == "event 2: x ≠ (nothing)")
        #expect(TraceDiff.firstDifference(["a"], ["a"]) == nil)
    }

    @Test("A walk's picture: one lane per reader, its wake, and served or useless with why")
    func walkLanes() {
        func r(_ t: Int64, _ reader: String, _ event: String, _ extra: JSONObject = [:]) -> JSONObject {
            var o: JSONObject = ["t_us": .int(t), "reader": .string(reader), "event": .string(event)]
            o.merge(extra)
            return o
        }
        let records: [JSONObject] = [
            r(0, "door", "fieldOn", ["technology": "ISO14443A"]), r(1, "door", "nfcEvent"), r(400, "door", "fieldOff"),
            r(2000, "pay", "fieldOn", ["technology": "ISO14443A"]), r(2001, "pay", "nfcEvent"),
            r(2002, "pay", "isoDepActivated"),
            r(2003, "pay", "apdu", ["apdu": "00A4040007A000000003101000", "response": "9000", "answered_by": "app"]),
            r(2500, "pay", "fieldOff"),
        ]
        let svg = TraceTimeline.svg(Self.trace(records, command: "walk"))
        #expect(svg.hasPrefix("<?xml"))
        #expect(svg.components(separatedBy: "class=\"name\">door<").count == 2)
        #expect(svg.components(separatedBy: "class=\"name\">pay<").count == 2)
        #expect(svg.components(separatedBy: "<g class=\"lane-group\">").count == 3)
        #expect(svg.contains(">useless: never reaches ISO-DEP (ISO14443A)<"))
        #expect(svg.contains(">served (1 APDU to the app)<"))
        #expect(svg.contains("<title>SELECT 00 A4 04 00 07 A0 00 00 00 03 10 10 00 → 90 00 [app]</title>"))
    }

    @Test("A session's picture: the lane, the time limit, a frame tick with its hex, the ending")
    func sessionLane() {
        var records = Self.run
        records.insert(
            ["t_us": 500, "event": "frame", "session": 1, "target": 1, "command": "3004", "response": "0102"], at: 3)
        let svg = TraceTimeline.svg(Self.trace(records))
        #expect(svg.contains("class=\"name\">session 1<"))
        #expect(svg.contains("<title>30 04 → 01 02</title>"))
        #expect(svg.contains(">204<"))
        #expect(svg.contains("time limit 60.0 s (after the chart's end)"))
    }
}
