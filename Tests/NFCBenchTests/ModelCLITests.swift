import Foundation
import NFCTrace
import Testing

/// The reader-system model: heat kept beside the lock across runs and the busy policy across
/// processes (the built binary); every model number with its source (trace header,
/// `session --help`, `conformance --thermal`), and the walk's wake latency with S(WTX) (the last
/// two in this process, ``InProcessCLI/run(_:environment:)``).
@Suite("nfcbench: the model's numbers, heat across runs, the busy queue, the walk's wake")
struct ModelCLITests {
    typealias Bench = SessionCLITests.Bench

    static func object(_ v: JSONValue?) -> JSONObject? {
        if case .object(let o)? = v { return o }
        return nil
    }

    static func double(_ v: JSONValue?) -> Double? {
        if case .double(let d)? = v { return d }
        return nil
    }

    static func array(_ v: JSONValue?) -> [JSONValue]? {
        if case .array(let a)? = v { return a }
        return nil
    }

    /// The `thermal` record at `begin()` of a `--json` run: its heat.
    static func heatAtBegin(_ stdout: String) throws -> Double? {
        for r in try SessionCLITests.records(stdout)
        where r["event"]?.stringValue == "thermal" && r["phase"]?.stringValue == "begin" {
            switch r["heat"] {
            case .double(let h)?: return h
            case .int(let h)?: return Double(h)
            default: return nil
            }
        }
        return nil
    }

    @Test(
        "Three --host-wide runs in a row carry heat through the lock folder; another lock folder starts cold; the header sources every number"
    )
    func heatAcrossRuns() async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        var heats: [Double] = []
        var header: JSONValue?
        for _ in 0..<3 {
            let r = try await NFCBench.run(
                ["session", "--device", "sim:tap-uri", "--first-read", "--host-wide", "--json"],
                environment: bench.env)
            #expect(r.status == 0, "stderr: \(r.stderr)")
            heats.append(try #require(try Self.heatAtBegin(r.stdout)))
            header = try SessionCLITests.records(r.stdout).first
        }
        #expect(heats[0] == 0)
        #expect(heats[1] > 0.2 && heats[2] > heats[1], "heat at each begin: \(heats)")
        #expect(
            FileManager.default.fileExists(atPath: bench.dir.appendingPathComponent("locks/host.heat").path))
        // Every model number in the header's model block names its source.
        let model = try #require(Self.object(header?["model"]), "no model block in the header")
        let facts = model.entries.filter { if case .object = $0.value { true } else { false } }
        #expect(facts.count >= 20)
        for f in facts {
            let source = f.value["source"]?.stringValue
            #expect(["documented", "reported", "assumed"].contains(source ?? ""), "\(f.key): \(source ?? "none")")
            #expect(f.value["ref"]?.stringValue?.isEmpty == false, "\(f.key) has no reference")
        }
        #expect(model["quick_restart_window_s"]?["source"]?.stringValue == "reported")
        #expect(model["time_limit_s"]?["source"]?.stringValue == "documented")
        #expect(model["cooling_time_constant_s"]?["source"]?.stringValue == "assumed")
        // A test with its own lock folder never shares heat.
        let other = try Bench()
        defer { other.cleanup() }
        let cold = try await NFCBench.run(
            ["session", "--device", "sim:tap-uri", "--first-read", "--host-wide", "--json"], environment: other.env)
        #expect(try Self.heatAtBegin(cold.stdout) == 0)
    }

    @Test(
        "A begin() the heat model refuses exits 14 (not 13, another session's busy) and says too hot, the heat and the time to cool"
    )
    func tooHotExitCode() async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        var ts = timespec()
        clock_gettime(CLOCK_BOOTTIME, &ts)
        let now = UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
        let locks = bench.dir.appendingPathComponent("locks")
        try FileManager.default.createDirectory(at: locks, withIntermediateDirectories: true)
        let heat = #"{"schema":"nfcbench.heat/1","heat":400.0,"field_on":false,"boottime_ns":\#(now)}"#
        let heatFile = locks.appendingPathComponent("host.heat").path
        #expect(
            FileManager.default.createFile(
                atPath: heatFile, contents: Data(heat.utf8), attributes: [.posixPermissions: 0o600]))
        let r = try await NFCBench.run(
            ["session", "--device", "sim:tap-uri", "--first-read", "--host-wide", "--json"], environment: bench.env)
        #expect(r.status == 14, "stderr: \(r.stderr)")
        let refusal = try SessionCLITests.records(r.stdout).first {
            $0["event"]?.stringValue == "thermal" && $0["phase"]?.stringValue == "begin"
        }
        #expect(refusal?["time_limit_s"] == .null)
        // 120 s × ln(400 / 180) ≈ 95.8 s.
        let wait = try #require(
            Self.double(refusal?["time_to_cool_s"]), "no time_to_cool_s in \(String(describing: refusal))")
        #expect(wait > 90 && wait < 100)
        let plain = try await NFCBench.run(
            ["session", "--device", "sim:tap-uri", "--first-read", "--host-wide"], environment: bench.env)
        #expect(plain.status == 14)
        #expect(plain.stdout.contains("too hot"), "\(plain.stdout)")
        #expect(plain.stdout.contains("cools enough to begin in"), "\(plain.stdout)")
    }

    @Test("--busy queue beside a running session waits in line, then becomes active and reads; refuse is the default")
    func busyQueue() async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        let (first, out, _) = try NFCBench.start(
            ["session", "--device", "sim:tap-uri", "--json"], environment: bench.env)
        let firstLines = LineReader(out, of: first)
        #expect(await firstLines.wait { $0.contains { $0.contains("\"didDetectNDEFs\"") } })
        // The default: 203 at once.
        let refused = try await NFCBench.runTimed(
            ["session", "--device", "sim:tap-uri", "--first-read", "--json"], environment: bench.env)
        #expect(refused.status == 13)
        // At once by the tool's own clock (its last record's t_us); the wall time, process
        // launch included, only has to show that nothing was waited for.
        #expect(refused.elapsed < .seconds(10), "the refusal took \(refused.elapsed)")
        let refusal = refused.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let refusalRecord = try JSONSerialization.jsonObject(with: Data(refusal.utf8)) as? [String: Any]
        #expect(((refusalRecord?["t_us"] as? Int) ?? .max) < 1_000_000, "\(refused.stdout)")
        let (second, out2, _) = try NFCBench.start(
            ["session", "--device", "sim:tap-uri", "--first-read", "--busy", "queue", "--json"],
            environment: bench.env)
        let secondLines = LineReader(out2, of: second)
        #expect(await secondLines.wait { $0.contains { $0.contains("\"event\":\"queued\"") } })
        #expect(second.isRunning)
        #expect(!secondLines.lines.contains { $0.contains("didBecomeActive") })
        kill(first.processIdentifier, SIGINT)
        #expect(await SessionCLITests.exit(of: first) == 0)  // Done after a read
        let status = await SessionCLITests.exit(of: second)
        #expect(status == 0, "the queued session: \(secondLines.lines.suffix(3))")
        #expect(secondLines.lines.contains { $0.contains("\"didBecomeActive\"") })
        #expect(secondLines.lines.contains { $0.contains("\"code\":204") })
    }

    @Test("session --help and conformance --thermal print every model number with its source")
    func helpSources() async throws {
        let help = await InProcessCLI.run(["session", "--help"])
        #expect(help.status == 0)
        for word in ["--busy P", "MODEL", "SOURCE", "documented", "reported", "assumed", "quick_restart_window_s"] {
            #expect(help.stdout.contains(word), "session --help lacks \(word)")
        }
        let thermal = await InProcessCLI.run(["conformance", "--thermal"])
        #expect(thermal.status == 0)
        for word in [
            "SOURCE", "documented", "reported", "assumed", "refusal_threshold_field_s", "gap",
            "background_reading_session_rule",
        ] {
            #expect(thermal.stdout.contains(word), "conformance --thermal lacks \(word)")
        }
    }

    @Test(
        "walk --profiles emv-payment --wake-latency 400ms: the wake at 400 ms, the SELECT held with S(WTX) frames, served, and why"
    )
    func walkWakeLatency() async throws {
        // The walk is the phone model's (no device): run in this process, its trace left out.
        let r = await InProcessCLI.run([
            "walk", "--profiles", "emv-payment", "--app-prefixes", "A0000000031010", "--wake-latency", "400ms",
            "--sheet-latency", "0", "--no-trace",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.contains("400.000") && $0.contains("nfcEvent") })
        #expect(lines.contains { $0.contains("heldForApp") && $0.contains("A0 00 00 00 03 10 10") })
        #expect(lines.filter { $0.contains(" wtx ") && $0.contains("F2 01") }.count == 9)
        #expect(lines.contains { $0.contains("served: the app answered 2 APDUs") && $0.contains("S(WTX)") })
        // Locked, the authentication makes the reader give up: useless, and the reason says so.
        let locked = await InProcessCLI.run([
            "walk", "--profiles", "emv-payment", "--app-prefixes", "A0000000031010", "--wake-latency", "400ms",
            "--sheet-latency", "0", "--locked", "--json", "--no-trace",
        ])
        let summary = try JSONValue(parsing: try #require(locked.stdout.split(separator: "\n").last.map(String.init)))
        let first = try #require(Self.array(summary["per_reader"])?.first, "no per-reader summary")
        #expect(first["served"] == .bool(false))
        #expect(first["reason"]?.stringValue?.contains("gave up") == true)
        #expect(summary["parameters"]?["wake_latency"]?["source"]?.stringValue == "assumed")
        // The one iPhone S(WTX) seen is Apple Pay at GPO: for a launching app it is assumed.
        #expect(summary["parameters"]?["sends_wtx"]?["source"]?.stringValue == "assumed")
        // Apple's NFCPresentmentIntentAssertion page gives the 15 s cool-down.
        #expect(summary["parameters"]?["presentment_reacquire_cool_down"]?["source"]?.stringValue == "documented")
    }
}
