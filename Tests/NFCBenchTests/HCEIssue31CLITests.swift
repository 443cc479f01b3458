import Foundation
import HCEEvents
import NFCTrace
import Testing
import VirtualHardware

/// Issue 31, the HCE rows and the empty record: the walk's defaults, `walk --sweep`, the
/// phone's random UID per emulation (`emulate` against the virtual PN532) and a message of
/// one empty record in `session --mode ndef`. Through the built binary; the phone model's walks
/// without a device and `trace show` in this process (``InProcessCLI/run(_:environment:)``).
@Suite("Issue 31: walk defaults and --sweep, emulate's random UID, one empty record", .serialized)
struct HCEIssue31CLITests {
    static func environment(_ f: TestFolder) -> [String: String] {
        [
            "NFCBENCH_DATA": NFCBench.packageRoot.appendingPathComponent("hardware").path,
            "NFCBENCH_LOCK_DIR": f.file("locks"), "NFCBENCH_TRACE_DIR": f.file("traces"),
            "NFCBENCH_STATE_DIR": f.file("state"),
        ]
    }

    static func records(_ text: String) throws -> [JSONValue] {
        try text.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
    }

    @Test("walk's defaults: launch 400 ms and sheet 500 ms, labelled assumed; 0 and 0 is the old walk")
    func walkDefaults() async throws {
        // The phone model's walk (no device): in this process, its trace left out.
        let r = await InProcessCLI.run(["walk", "--app-prefixes", "A0000000031010", "--locked", "--json", "--no-trace"])
        #expect(r.status == 0, "\(r.stderr)")
        let summary = try #require(try Self.records(r.stdout).last)
        #expect(summary["parameters"]?["wake_latency"]?["value_us"]?.intValue == 400_000)
        #expect(summary["parameters"]?["wake_latency"]?["source"]?.stringValue == "assumed")
        #expect(summary["parameters"]?["emulation_start_latency"]?["value_us"]?.intValue == 500_000)
        #expect(summary["parameters"]?["emulation_start_latency"]?["source"]?.stringValue == "assumed")
        #expect(summary["servable_wakes"]?.intValue == 1, "a locked phone at the defaults serves 1 of 10")
        let old = await InProcessCLI.run([
            "walk", "--app-prefixes", "A0000000031010", "--locked", "--wake-latency", "0", "--sheet-latency", "0",
            "--json", "--no-trace",
        ])
        let oldSummary = try #require(try Self.records(old.stdout).last)
        #expect(oldSummary["servable_wakes"]?.intValue == 2, "the old best case serves 2")
        #expect(oldSummary["parameters"]?["wake_latency"]?["value_us"]?.intValue == 0)
    }

    @Test("walk --sweep: a table of readers served per value, --json one record per value, trace show the same table")
    func sweep() async throws {
        let f = try TestFolder("walk-sweep")
        defer { f.remove() }
        let trace = f.file("sweep.jsonl")
        let text = await InProcessCLI.run([
            "walk", "--app-prefixes", "A0000000031010", "--sweep", "wake=0ms..800ms/400ms", "--sweep",
            "sheet=0..500ms/500ms", "--trace", trace,
        ])
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "SWEEP wake_latency: readers served as it varies (every other parameter as below)")
        #expect(
            lines.contains { $0.hasSuffix("0 ms   2 of 10     10        8      12  emv-ecp-terminal, emv-payment") })
        #expect(lines.contains { $0.contains("800 ms   1 of 10") && $0.hasSuffix("emv-ecp-terminal") })
        #expect(
            lines.contains(
                "SWEEP emulation_start_latency: readers served as it varies (every other parameter as below)"))
        #expect(lines.contains { $0.hasPrefix("HELD FIXED (policy stay, app prefixes: A0000000031010, locked: no") })
        #expect(lines.contains { $0.contains("wake_latency") && $0.contains("400 ms") && $0.contains("swept above") })
        let shown = await InProcessCLI.run(["trace", "show", trace])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout == text.stdout, "trace show prints the sweep's tables")

        let json = await InProcessCLI.run([
            "walk", "--app-prefixes", "A0000000031010", "--sweep", "wake=0ms..800ms/400ms", "--json", "--no-trace",
        ])
        #expect(json.status == 0, "\(json.stderr)")
        let records = try Self.records(json.stdout)
        let rows = records.filter { $0["event"]?.stringValue == "sweep" }
        #expect(rows.map { $0["value_us"]?.intValue } == [0, 400_000, 800_000])
        #expect(rows.map { $0["served"]?.intValue } == [2, 2, 1])
        #expect(rows.allSatisfy { $0["parameter"]?.stringValue == "wake_latency" && $0["readers"]?.intValue == 10 })
        let summary = try #require(records.last)
        #expect(summary["event"]?.stringValue == "summary")
        #expect(summary["sweep"] == .array([.string("wake_latency")]))
        #expect(summary["parameters"]?["emulation_start_latency"]?["value_us"]?.intValue == 500_000)
    }

    @Test(
        "--sweep refuses what it can't play, as usage errors",
        arguments: [
            (
                ["--sweep", "speed=0..1s/1ms"],
                "--sweep 'speed=0..1s/1ms': NAME is wake, auth or sheet, not 'speed' (e.g. wake=0ms..800ms/100ms)"
            ),
            (["--sweep", "wake=0..1s"], "--sweep 'wake=0..1s': give FROM..TO/STEP (e.g. wake=0ms..800ms/100ms)"),
            (
                ["--sweep", "wake=0..100/10ms"],
                "--sweep 'wake=0..100/10ms': '100' is not a duration with a unit (e.g. wake=0ms..800ms/100ms)"
            ),
            (
                ["--sweep", "wake=0..1s/0ms"],
                "--sweep 'wake=0..1s/0ms': the step must be more than 0 (e.g. wake=0ms..800ms/100ms)"
            ),
            (
                ["--sweep", "auth=0..1s/500ms"],
                "--sweep 'auth=0..1s/500ms': an unlocked phone does not authenticate: add --locked (e.g. wake=0ms..800ms/100ms)"
            ),
            (
                ["--sweep", "wake=0..1s/100ms", "--device", "pcsc:Virtual PCD 00 00"],
                "--sweep plays the walk in virtual time: give --sweep or --device, not both"
            ),
            (["--uid-seed", "3"], "--uid-seed goes with --device pcsc:READER"),
        ])
    func sweepUsage(args: [String], message: String) {
        #expect(InProcessCLI.mistake(["walk"] + args) == message)
    }

    @Test("emulate --uid and --uid-seed together are a usage error")
    func emulateUsage() {
        #expect(
            InProcessCLI.mistake(["emulate", "--device", "pn532_uart:x", "--uid", "085A3C91", "--uid-seed", "1"])
                == "give --uid (a fixed UID) or --uid-seed (random UIDs), not both")
    }

    /// `emulate` against the virtual PN532 playing the EMV profile; the trace's records.
    static func emulate(_ extra: [String], in f: TestFolder) async throws -> [JSONValue] {
        let emv = try HCEEmulateBench.profile("emv-payment")
        let link = f.file("pn532")
        let fake = try VirtualPN532.start(ptyPath: link)
        defer { fake.stop() }
        fake.startReader(try #require(PN532ReaderScript(profile: emv)))
        let r = try await NFCBench.run(
            ["emulate", "--device", "pn532_uart:\(link)", "--app-prefixes", "A0000000031010", "--json"] + extra,
            environment: Self.environment(f), timeout: .seconds(30))
        #expect(r.status == 0, "stderr: \(r.stderr)")
        return try Self.records(r.stdout)
    }

    @Test(
        "emulate presents a random UID 08 … (header uid_choice random, its seed; the activation line and the model's say it); --uid fixes it"
    )
    func emulateRandomUID() async throws {
        let f = try TestFolder("emulate-uid")
        defer { f.remove() }
        let lines = try await Self.emulate(["--uid-seed", "31"], in: f)
        let header = try #require(lines.first)
        let phone = header["model"]?["phone"]
        let expected = HCEPhoneIdentity.UIDChoice.random(seed: 31).firstUID.hexString()
        #expect(phone?["uid_choice"]?.stringValue == "random")
        #expect(phone?["uid_seed"]?.intValue == 31)
        #expect(phone?["uid"]?.stringValue == expected)
        #expect(expected.hasPrefix("08") && expected != "085A3C91")
        let activation = try #require(lines.first { $0["event"]?.stringValue == "activation" })
        #expect(activation["detail"]?.stringValue?.contains("UID \(expected)") == true, "\(activation)")
        let iso = try #require(lines.first { $0["event"]?.stringValue == "isoDepActivated" })
        #expect(iso["uid"]?.stringValue == expected)

        let fixed = try await Self.emulate(["--uid", "085A3C91"], in: f)
        #expect(fixed.first?["model"]?["phone"]?["uid_choice"]?.stringValue == "fixed")
        #expect(fixed.first?["model"]?["phone"]?["uid"]?.stringValue == "085A3C91")
        #expect(fixed.first { $0["event"]?.stringValue == "isoDepActivated" }?["uid"]?.stringValue == "085A3C91")
    }

    @Test("session --mode ndef delivers a message of one empty record, as --mode ndef-rw's readNDEF returns it")
    func oneEmptyRecord() async throws {
        let f = try TestFolder("empty-record")
        defer { f.remove() }
        let base = try String(
            contentsOf: NFCBench.packageRoot.appendingPathComponent("hardware/tags/ntag216-empty.json"), encoding: .utf8
        )
        // 03 03 D0 00 00 FE: an NDEF TLV holding one empty record (TNF 0).
        let text = base.replacingOccurrences(
            of: "\"0300FE00\",\n    \"00000000\"", with: "\"0303D000\",\n    \"00FE0000\"")
        #expect(text != base)
        let tag = f.file("one-empty-record.json")
        #expect(
            FileManager.default.createFile(
                atPath: tag, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]))
        let env = Self.environment(f)
        let ro = try await NFCBench.run(
            ["session", "--device", "sim:tag:\(tag)", "--mode", "ndef", "--first-read", "--timeout", "5s", "--json"],
            environment: env)
        let roLines = try Self.records(ro.stdout)
        let detected = try #require(
            roLines.first { $0["event"]?.stringValue == "didDetectNDEFs" }, "read-only mode dropped it: \(ro.stdout)")
        #expect(ro.status == 0, "\(ro.stderr)")
        let rw = try await NFCBench.run(
            ["session", "--device", "sim:tag:\(tag)", "--mode", "ndef-rw", "--timeout", "2s", "--json"],
            environment: env)
        let rwLines = try Self.records(rw.stdout)
        let read = try #require(rwLines.first { $0["event"]?.stringValue == "readNDEF" }, "\(rw.stdout)")
        func records(_ v: JSONValue) -> JSONValue? {
            if let r = v["records"] { return r }
            if case .array(let messages)? = v["messages"], let m = messages.first { return m["records"] }
            return nil
        }
        #expect(records(detected) != nil && records(detected) == records(read), "\(detected)\n\(read)")
        if case .array(let rs)? = records(read) {
            #expect(rs.count == 1 && rs.first?["tnf_name"]?.stringValue == "empty", "\(read)")
        } else {
            Issue.record("readNDEF without records: \(read)")
        }
        let plain = try await NFCBench.run(
            ["session", "--device", "sim:tag:\(tag)", "--mode", "ndef", "--first-read", "--timeout", "5s"],
            environment: env)
        #expect(plain.stdout.contains("didDetectNDEFs 1 record"), "\(plain.stdout)")
    }
}
