import Foundation
import NFCBenchTestSupport
import NFCTrace
import ReaderSession
import Testing

/// `nfcbench session` on the simulated reader, as real processes: JSON output, the 203 of a
/// second process, SIGINT (Done, 200), SIGTSTP (leaving the foreground, 202), timeouts,
/// and a trace that survives SIGKILL. Each test gets its own lock and trace folders.
@Suite("nfcbench session (simulated reader)")
struct SessionCLITests {
    struct Bench {
        let dir: URL
        var env: [String: String] {
            [
                "NFCBENCH_LOCK_DIR": dir.appendingPathComponent("locks").path,
                "NFCBENCH_TRACE_DIR": dir.appendingPathComponent("traces").path,
            ]
        }
        init() throws {
            dir = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-session-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        }
        func cleanup() { try? FileManager.default.removeItem(at: dir) }
    }

    static func array(_ v: JSONValue?) -> [JSONValue]? {
        if case .array(let a)? = v { return a }
        return nil
    }

    static func records(_ stdout: String) throws -> [JSONValue] {
        try stdout.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
    }

    /// The exit status of `p` once it has ended (nil if it still runs after `timeout`), as
    /// `Process.terminationStatus` gives it (a signal's number when one killed it). The end is
    /// the kernel's (``NFCBenchTestSupport/processEnd(of:timeout:)``), not `isRunning`, which lagged
    /// the exit by seconds when another child held Foundation's exit socket. Then the readers of
    /// its output (``LineReader``) are read to the end, so its last lines are there to check (the
    /// kernel's answer came before them once: a demo's ending line was missing).
    static func exit(of p: Process, timeout: Duration = .seconds(60)) async -> Int32? {
        guard let end = await processEnd(of: p, timeout: timeout) else { return nil }
        await LineReader.drained(of: p)
        return end.status
    }

    @Test("--first-read on a URI tag prints the record and ends with code 204, exit 0")
    func firstRead() async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        let r = try await NFCBench.run(
            ["session", "--device", "sim:tap-uri", "--first-read", "--json"], environment: bench.env)
        #expect(r.status == 0, "\(r.stderr)")
        let recs = try Self.records(r.stdout)
        let events = recs.compactMap { $0["event"]?.stringValue }
        #expect(events.first == "header")
        #expect(events.firstIndex(of: "didBecomeActive")! < events.firstIndex(of: "didDetectNDEFs")!)
        #expect(events.last == "didInvalidateWithError")
        #expect(recs.last?["code"]?.intValue == 204)
        #expect(recs.last?["reason"]?.stringValue == "readerSessionInvalidationErrorFirstNDEFTagRead")
        let ndef = recs.first { $0["event"]?.stringValue == "didDetectNDEFs" }
        let records = try #require(Self.array(ndef?["records"]), "no records")
        #expect(records.first?["uri"]?.stringValue == "https://example.com/nfcbench")
        // Every line has t_us, and time never goes backwards.
        let times = recs.compactMap { $0["t_us"]?.intValue }
        #expect(times.count == recs.count)
        #expect(times == times.sorted())
    }

    @Test("A Type 4 Tag of mapping 1.0: the 2.0 name gets 6A82, the 1.0 name is selected, the URI read; 204")
    func firstReadMapping10() async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        let r = try await NFCBench.run(
            ["session", "--device", "sim:tap-t4t-v1", "--first-read", "--json", "--verbose"], environment: bench.env)
        #expect(r.status == 0, "\(r.stderr)")
        let recs = try Self.records(r.stdout)
        let frames = recs.filter { $0["event"]?.stringValue == "frame" }
        #expect(
            frames.prefix(3).compactMap { $0["command"]?.stringValue } == [
                "00A4040007D276000085010100", "00A4040007D2760000850100", "00A4000002E103",
            ])
        #expect(frames.prefix(2).compactMap { $0["response"]?.stringValue } == ["6A82", "9000"])
        let ndef = recs.first { $0["event"]?.stringValue == "didDetectNDEFs" }
        let records = try #require(Self.array(ndef?["records"]), "no records: \(r.stdout)")
        #expect(records.first?["uri"]?.stringValue == "https://example.com/nfcbench/t4t-v1")
        #expect(recs.last?["code"]?.intValue == 204)
    }

    @Test("A second process on the same reader gets 203 within 1 s; SIGINT ends the first with 200")
    func busyThenDone() async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        let (first, out, _) = try NFCBench.start(
            ["session", "--device", "sim:hold-uri", "--json"], environment: bench.env)
        let reader = LineReader(out, of: first)
        #expect(await reader.wait { $0.contains { $0.contains("\"didDetectNDEFs\"") } })
        let second = try await NFCBench.runTimed(
            ["session", "--device", "sim:hold-uri", "--json"], environment: bench.env)
        // Within 1 s by the tool's own clock (the record's t_us, from its start): a loaded
        // 2-core host took 1.25 s of wall time to launch a debug build and refuse. The wall time
        // only has to show that nothing was waited for (a lock's or the session's time limit).
        #expect(second.elapsed < .seconds(10), "the refusal took \(second.elapsed)")
        #expect(second.status == 13)
        let last = try Self.records(second.stdout).last
        #expect(last?["event"]?.stringValue == "didInvalidateWithError")
        #expect((last?["t_us"]?.intValue ?? .max) < 1_000_000, "\(second.stdout)")
        #expect(last?["code"]?.intValue == 203)
        // A refused session gets only didInvalidateWithError.
        #expect(!second.stdout.contains("didBecomeActive"))
        kill(first.processIdentifier, SIGINT)
        let status = await Self.exit(of: first)
        #expect(await reader.wait { $0.contains { $0.contains("\"code\":200") } })
        #expect(status == 0, "Done after a read is success")
    }

    @Test("Sessions on two different readers both run")
    func twoReaders() async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        async let a = Task {
            try await NFCBench.run(
                ["session", "--device", "sim:tap-uri", "--first-read", "--json"], environment: bench.env)
        }.value
        async let b = Task {
            try await NFCBench.run(
                ["session", "--device", "sim:tap-text", "--first-read", "--json"], environment: bench.env)
        }.value
        let (ra, rb) = try await (a, b)
        #expect(ra.status == 0)
        #expect(rb.status == 0)
        #expect(ra.stdout.contains("\"code\":204"))
        #expect(rb.stdout.contains("\"code\":204"))
    }

    @Test("--host-wide makes the host one phone: any second session gets 203")
    func hostWide() async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        let (first, out, _) = try NFCBench.start(
            ["session", "--device", "sim:hold-uri", "--host-wide", "--json"], environment: bench.env)
        let reader = LineReader(out, of: first)
        #expect(await reader.wait { $0.contains { $0.contains("\"didBecomeActive\"") } })
        let second = try await NFCBench.run(
            ["session", "--device", "sim:tap-text", "--host-wide", "--json"], environment: bench.env)
        #expect(second.status == 13)
        // A per-reader session is refused too while a host-wide one runs, on any reader.
        let plain = try await NFCBench.run(["session", "--device", "sim:tap-text", "--json"], environment: bench.env)
        #expect(plain.status == 13)
        kill(first.processIdentifier, SIGINT)
        _ = await Self.exit(of: first)
    }

    @Test("SIGTSTP is leaving the foreground: 202, and the process (not on a terminal) exits 12")
    func backgrounded() async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        let (p, out, _) = try NFCBench.start(["session", "--device", "sim:no-tag", "--json"], environment: bench.env)
        let reader = LineReader(out, of: p)
        #expect(await reader.wait { $0.contains { $0.contains("\"didBecomeActive\"") } })
        kill(p.processIdentifier, SIGTSTP)
        #expect(await Self.exit(of: p) == 12)
        #expect(await reader.wait { $0.contains { $0.contains("\"code\":202") } })
        #expect(reader.lines.filter { $0.contains("\"didInvalidateWithError\"") }.count == 1)
    }

    @Test("--timeout ends an idle session with 201 (exit 11); Done with nothing read exits 10")
    func timeoutAndDone() async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        let r = try await NFCBench.run(
            ["session", "--device", "sim:no-tag", "--timeout", "0.3", "--json"], environment: bench.env)
        #expect(r.status == 11)
        #expect(try Self.records(r.stdout).last?["code"]?.intValue == 201)
        let (p, out, _) = try NFCBench.start(["session", "--device", "sim:no-tag", "--json"], environment: bench.env)
        let reader = LineReader(out, of: p)
        #expect(await reader.wait { $0.contains { $0.contains("\"didBecomeActive\"") } })
        kill(p.processIdentifier, SIGINT)
        #expect(await Self.exit(of: p) == 10)
    }

    @Test("The trace parses line by line after the process is SIGKILLed mid-session")
    func traceSurvivesKill() async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        let trace = bench.dir.appendingPathComponent("killed.jsonl").path
        let (p, out, _) = try NFCBench.start(
            ["session", "--device", "sim:hold-uri", "--json", "--trace", trace], environment: bench.env)
        let reader = LineReader(out, of: p)
        #expect(await reader.wait { $0.contains { $0.contains("\"didDetectNDEFs\"") } })
        kill(p.processIdentifier, SIGKILL)
        _ = await Self.exit(of: p)
        let text = try String(contentsOfFile: trace, encoding: .utf8)
        #expect(text.hasSuffix("\n"))
        let lines = try Self.records(text)
        #expect(lines.first?["schema"]?.stringValue == TraceWriter.schema)
        #expect(lines.first?["libnfc"]?.stringValue?.isEmpty == false)
        #expect(lines.contains { $0["event"]?.stringValue == "didDetectNDEFs" })
        #expect(!lines.contains { $0["event"]?.stringValue == "didInvalidateWithError" })
    }

    @Test("A tag pulled mid-read is not reported; the session reads it when it is held again")
    func pulledMidRead() async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        let r = try await NFCBench.run(
            ["session", "--device", "sim:pulled-mid-read", "--first-read", "--json"], environment: bench.env)
        #expect(r.status == 0)
        let recs = try Self.records(r.stdout)
        #expect(recs.contains { $0["event"]?.stringValue == "ndefRead" && $0["code"]?.intValue == 100 })
        #expect(recs.filter { $0["event"]?.stringValue == "didDetectNDEFs" }.count == 1)
        #expect(recs.last?["code"]?.intValue == 204)
    }

    static let usageCases: [([String], Int32)] = [
        (["session"], 64),
        (["session", "--device", "sim:tap-uri", "--mode", "ndef-rw", "--first-read"], 64),
        (["session", "--device", "sim:tap-uri", "--mode", "bogus"], 64),
        (["session", "--device", "sim:tap-uri", "--timeout", "-1"], 64),
        (["session", "--device", "sim:no-such-scenario"], 66),
    ]

    /// In this process (``InProcessCLI/run(_:environment:)``): none of them opens a reader.
    @Test("Usage errors exit 64; an unknown scenario is a missing input (66)", arguments: usageCases)
    func usage(args: [String], status: Int32) async throws {
        let r = await InProcessCLI.run(args, environment: [:])
        #expect(r.status == status, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("error:"))
    }
}
