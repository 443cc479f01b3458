import Foundation
import NFCTrace
import Testing

/// A tag file's faults through the commands people run, `virtual pn532` and `virtual card`,
/// with `nfcbench session` as the reader (the vpcd card as a part 3 reader and as an ACR122U): `ntag215-flaky` leaves the field while page 8 is
/// read, so a first-read session gets 100 and then, the tag gone, 201; held again (stdin
/// `remove`, `present`) it is the same tag with its fault spent (once per load of the file,
/// `hardware/tags/FORMAT.md` Faults) and reads (204). Each device in its own private pcscd.
@Suite("Tag-file faults through virtual pn532 and virtual card", .serialized)
struct FaultRuleCommandTests {
    /// A script that serves `ntag215-flaky` with `serve` (reading stdin from a FIFO), runs a
    /// first-read session on `device`, takes the tag out and back, and runs another.
    static func script(serve: String, device: String, ready: String) -> String {
        """
        T="$NFCBENCH_TRACE_DIR.run"; mkdir -p "$T"; mkfifo "$T/in"; exec 3<>"$T/in"
        \(serve) --tag ntag215-flaky --quiet --trace "$T/serve.jsonl" <"$T/in" >/dev/null 2>&1 &
        served=$!
        \(ready)
        "$B" session --device "\(device)" --first-read --json --timeout 3 > "$T/first.jsonl"
        echo "first exit $?"
        echo remove >&3; sleep 0.6; echo present >&3; sleep 0.9
        "$B" session --device "\(device)" --first-read --json --timeout 8 > "$T/again.jsonl"
        echo "again exit $?"
        kill -INT $served; wait $served
        echo "--- first"; cat "$T/first.jsonl"; echo "--- again"; cat "$T/again.jsonl"
        """
    }

    /// The records of one session's JSON output in the script's output.
    static func records(_ out: String, _ part: String) -> [JSONValue] {
        let tail = out.components(separatedBy: "--- \(part)\n").dropFirst().first ?? ""
        let body = tail.components(separatedBy: "\n--- ").first ?? ""
        return body.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
    }

    static func check(_ r: NFCBench.Result, device: String) {
        #expect(r.stdout.contains("first exit 11"), "201 ends with exit 11 (\(device)): \(r.stdout)\n\(r.stderr)")
        let first = records(r.stdout, "first")
        let failed = first.filter { $0["event"]?.stringValue == "ndefRead" }.map { $0["code"]?.intValue }
        #expect(failed == [100], "the read fails with 100 on \(device): \(first.map(\.serialized))")
        #expect(!first.contains { $0["event"]?.stringValue == "didDetectNDEFs" }, "nothing delivered on \(device)")
        #expect(first.last?["event"]?.stringValue == "didInvalidateWithError")
        #expect(first.last?["code"]?.intValue == 201, "the tag gone, the session times out on \(device)")
        // Page 8 was asked for, and nothing came back: the fault fired on this device.
        let reads = first.filter { $0["event"]?.stringValue == "frame" }.compactMap { $0["command"]?.stringValue }
        #expect(reads.contains("3008") || reads.contains { $0.hasPrefix("3A") }, "\(device): \(reads)")

        #expect(r.stdout.contains("again exit 0"), "presented again, the tag reads (\(device)): \(r.stdout)")
        let again = records(r.stdout, "again")
        #expect(
            again.contains { $0["event"]?.stringValue == "didDetectNDEFs" }, "\(device): \(again.map(\.serialized))")
        #expect(again.last?["code"]?.intValue == 204, "\(device)")
    }

    @Test("virtual pn532: 100, then 201; presented again, 204 (the fault is spent)")
    func virtualPN532() async throws {
        let r = try await PrivateBench.run(
            Self.script(
                serve: #""$B" virtual pn532 --pty "$T/pn532""#, device: "pn532_uart:$T/pn532",
                ready: #"for _ in $(seq 300); do [ -L "$T/pn532" ] && break; sleep 0.02; done"#),
            timeout: .seconds(90))
        try PrivateBench.require(r)
        Self.check(r, device: "pn532_uart:")
    }

    @Test(
        "virtual card (as a part 3 reader and as an ACR122U): 100, then 201; presented again, 204 (the fault is spent)",
        arguments: ["part3", "acr122u"])
    func virtualCard(personality: String) async throws {
        let r = try await PrivateBench.run(
            Self.script(
                serve: #""$B" virtual card --port 35963 --personality "# + personality,
                device: "pcsc:Virtual PCD 00 00", ready: "sleep 1.5"),
            timeout: .seconds(90))
        try PrivateBench.require(r)
        Self.check(r, device: "pcsc: (\(personality))")
    }
}
