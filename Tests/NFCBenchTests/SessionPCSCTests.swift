import Foundation
import NFCBenchTestSupport
import NFCTrace
import ReaderSession
import Testing

/// `nfcbench session` on the real pcscd with the vpcd card, as the PC/SC issue's "done when"
/// states it; each test in its own private pcscd (`PrivateBench`).
@Suite("nfcbench session through pcscd and the vpcd card", .serialized)
struct SessionPCSCTests {
    static func records(_ text: String) -> [JSONValue] {
        text.split(separator: "\n").filter { $0.hasPrefix("{") }.compactMap { try? JSONValue(parsing: String($0)) }
    }

    @Test(
        "A first-read session on a Type 4 tag served by 'virtual card --port 35963' prints the records and ends with 204"
    )
    func firstRead() async throws {
        let r = try await PrivateBench.run(
            """
            "$B" virtual card --port 35963 --tag hardware/tags/t4t-uri.json --quiet >/dev/null 2>&1 &
            card=$!
            "$B" session --device "pcsc:Virtual PCD 00 00" --first-read --json --timeout 20
            echo "session exit $?"
            kill -INT $card; wait $card
            """)
        try PrivateBench.require(r)
        #expect(r.stdout.contains("session exit 0"), "\(r.stdout)\n\(r.stderr)")
        let recs = Self.records(r.stdout)
        let ndef = recs.first { $0["event"]?.stringValue == "didDetectNDEFs" }
        let records = try #require(
            matched { if case .array(let records)? = ndef?["records"] { records } else { nil } },
            "no records: \(r.stdout)")
        #expect(records.first?["uri"]?.stringValue == "https://example.com/nfcbench/t4t")
        #expect(recs.last?["event"]?.stringValue == "didInvalidateWithError")
        #expect(recs.last?["code"]?.intValue == 204)
    }

    @Test("A Type 4 Tag of mapping 1.0 on the vpcd card: read through the 1.0 application name, 204")
    func firstReadMapping10() async throws {
        let r = try await PrivateBench.run(
            """
            "$B" virtual card --port 35963 --tag t4t-v1-uri --quiet >/dev/null 2>&1 &
            card=$!
            "$B" session --device "pcsc:Virtual PCD 00 00" --first-read --json --verbose --timeout 20
            echo "session exit $?"
            kill -INT $card; wait $card
            """)
        try PrivateBench.require(r)
        #expect(r.stdout.contains("session exit 0"), "\(r.stdout)\n\(r.stderr)")
        let recs = Self.records(r.stdout)
        let commands = recs.filter { $0["event"]?.stringValue == "frame" }.compactMap { $0["command"]?.stringValue }
        #expect(commands.contains("00A4040007D2760000850100"), "\(commands)")
        #expect(commands.contains("00A4000002E104"), "\(commands)")
        let ndef = recs.first { $0["event"]?.stringValue == "didDetectNDEFs" }
        let records = try #require(
            matched { if case .array(let records)? = ndef?["records"] { records } else { nil } },
            "no records: \(r.stdout)")
        #expect(records.first?["uri"]?.stringValue == "https://example.com/nfcbench/t4t-v1")
        #expect(recs.last?["code"]?.intValue == 204)
    }

    @Test("Two processes on one PC/SC reader: the second gets 203 at once")
    func busy() async throws {
        let r = try await PrivateBench.run(
            """
            "$B" virtual card --tag t4t-uri --quiet >/dev/null 2>&1 &
            card=$!
            sleep 1.5
            "$B" session --device "pcsc:Virtual PCD 00 00" --json --timeout 30 > "$NFCBENCH_TRACE_DIR.first" &
            first=$!
            for _ in $(seq 600); do grep -q '"event":"didDetectNDEFs"' "$NFCBENCH_TRACE_DIR.first" 2>/dev/null && break; sleep 0.05; done
            grep -q '"event":"didDetectNDEFs"' "$NFCBENCH_TRACE_DIR.first" && echo "first active"
            "$B" session --device "pcsc:Virtual PCD 00 00" --json --timeout 5
            echo "second exit $?"
            kill -INT $first; wait $first; echo "first exit $?"
            kill -INT $card; wait $card
            echo "--- first"
            cat "$NFCBENCH_TRACE_DIR.first"
            """)
        try PrivateBench.require(r)
        try #require(
            r.stdout.contains("first active"), "the first session never read the card: \(r.stdout)\n\(r.stderr)")
        #expect(r.stdout.contains("second exit 13"), "\(r.stdout)")
        #expect(Self.records(r.stdout).contains { $0["code"]?.intValue == 203 })
        #expect(r.stdout.contains("first exit 0"), "Done after a read: \(r.stdout)")
    }

    @Test("pcscd killed mid-session: a clear error, a non-zero exit, and a trace that still parses")
    func pcscdKilled() async throws {
        let r = try await PrivateBench.run(
            """
            "$B" virtual card --tag t4t-uri --quiet >/dev/null 2>&1 &
            card=$!
            "$B" session --device "pcsc:Virtual PCD 00 00" --timeout 30 --trace "$NFCBENCH_TRACE_DIR.jsonl" \
                > "$NFCBENCH_TRACE_DIR.out" 2>&1 &
            s=$!
            for _ in $(seq 100); do grep -q '"event":"didDetectNDEFs"' "$NFCBENCH_TRACE_DIR.jsonl" 2>/dev/null && break; sleep 0.05; done
            for p in $(pgrep -x pcscd); do
                [ "$(readlink /proc/$p/ns/net)" = "$(readlink /proc/self/ns/net)" ] && kill -KILL $p
            done
            wait $s; echo "session exit $?"
            kill -INT $card 2>/dev/null
            cat "$NFCBENCH_TRACE_DIR.out"
            echo ---trace
            cat "$NFCBENCH_TRACE_DIR.jsonl"
            """, timeout: .seconds(60))
        try PrivateBench.require(r)
        let status = r.stdout.components(separatedBy: "\n").first { $0.hasPrefix("session exit ") }
        #expect(status != nil && status != "session exit 0", "\(r.stdout)")
        let trace = r.stdout.components(separatedBy: "---trace\n").last ?? ""
        let lines = trace.split(separator: "\n")
        #expect(!lines.isEmpty)
        #expect(lines.allSatisfy { (try? JSONValue(parsing: String($0))) != nil }, "every trace line parses")
        #expect(Self.records(trace).first?["schema"]?.stringValue == TraceWriter.schema)
        #expect(Self.records(trace).contains { $0["event"]?.stringValue == "didInvalidateWithError" })
    }
}
