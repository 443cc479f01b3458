import Foundation
import NFCBenchTestSupport
import NFCTrace
import Testing

/// `nfcbench trace export|show|diff|plot` and the one header: the traces written by the built
/// binary, the trace commands run on them in this process (``InProcessCLI/run(_:environment:)``),
/// other people's tools (tshark, rsvg-convert) as witnesses. Simulated reader and the
/// phone model only: no device needed.
@Suite("nfcbench trace: headers, show, diff, plot, export (built binary, tshark, rsvg-convert)")
struct TraceCLITests {
    static func tempDir() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-trace-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    static func env(_ dir: URL) -> [String: String] {
        [
            "NFCBENCH_TRACE_DIR": dir.appendingPathComponent("traces").path,
            "NFCBENCH_LOCK_DIR": dir.appendingPathComponent("locks").path,
        ]
    }

    static func header(_ path: String) throws -> JSONObject {
        try #require(try TraceContents(path: path).header).json
    }

    /// What a session on an ISO-DEP tag must show in tshark: anticollision (SEL, UID CLn,
    /// BCC), RATS (FSDI) and ATS (TL), I-blocks, the SELECT of the NDEF application through
    /// the ISO 7816 dissector, and no malformed packet.
    static func expectISODEPSession(_ v: TsharkView, anticollisionSelect: Bool = true) {
        #expect(v.any("iso14443.sel") { $0.contains("0x93") }, "anticollision: \(v.info)")
        #expect(v.any("iso14443.uid_cln") { _ in true } && v.any("iso14443.bcc") { _ in true })
        #expect(v.any("iso14443.fsdi") { _ in true }, "RATS")
        #expect(v.any("iso14443.tl") { _ in true }, "ATS")
        #expect(v.any("iso14443.block_type") { $0.contains("0x00") }, "I-blocks")
        #expect(
            v.rows.contains { $0["iso7816.apdu.ins"] == "0xa4" && $0["iso7816.apdu.body"] == "d2760000850101" },
            "SELECT of the NDEF application through the ISO 7816 dissector: \(v.info)")
        #expect(v.malformedFree, "no malformed packet")
        if anticollisionSelect { #expect(v.info.contains("Select") && v.info.contains("SAK")) }
    }

    @Test("Every trace header has the same keys; --redact leaves command and device as they are")
    func sameHeaderKeys() async throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = Self.env(dir)
        func path(_ n: String) -> String { dir.appendingPathComponent(n).path }
        let session = try await NFCBench.run(
            ["session", "--device", "sim:tap-uri", "--first-read", "--redact", "--trace", path("s.jsonl")],
            environment: env)
        #expect(session.status == 0, "\(session.stderr)")
        let walk = try await NFCBench.run(
            ["walk", "--profiles", "emv-payment", "--trace", path("w.jsonl")], environment: env)
        #expect(walk.status == 0, "\(walk.stderr)")
        let dump = try await NFCBench.run(
            ["dump", "--device", "sim:tap-uri", "--trace", path("d.jsonl"), "--out", path("tag.json")], environment: env
        )
        #expect(dump.status == 0, "\(dump.stderr)")
        let measure = try await NFCBench.run(
            ["measure", "apdu", "--device", "sim:tap-t4t", "--count", "3", "--trace", path("m.jsonl")], environment: env
        )
        #expect(measure.status == 0, "\(measure.stderr)")
        // The virtual devices: started, then stopped as a user would.
        let (card, _, _) = try NFCBench.start(
            ["virtual", "card", "--tag", "t4t-uri", "--port", "45963", "--quiet", "--trace", path("c.jsonl")],
            environment: env)
        let (pn532, _, _) = try NFCBench.start(
            ["virtual", "pn532", "--pty", path("pn"), "--tag", "ntag215-uri", "--quiet", "--trace", path("p.jsonl")],
            environment: env)
        // Until each has its header: the file exists a moment before line 1 is in it, and a
        // signal in that moment ends the process with an empty file (no handler yet).
        func hasHeader(_ file: String) -> Bool {
            FileManager.default.contents(atPath: path(file)).map { !$0.isEmpty } ?? false
        }
        try await wait(for: "both virtual devices' trace headers", timeout: .seconds(10), every: .milliseconds(10)) {
            hasHeader("c.jsonl") && hasHeader("p.jsonl")
        }
        card.interrupt()
        pn532.interrupt()
        _ = try await waitForProcessEnd(of: card)
        _ = try await waitForProcessEnd(of: pn532)
        let expected: [(String, String)] = [
            ("s.jsonl", "session"), ("w.jsonl", "walk"), ("d.jsonl", "dump"), ("m.jsonl", "measure"),
            ("c.jsonl", "virtual card"), ("p.jsonl", "virtual pn532"),
        ]
        for (file, command) in expected {
            let h = try Self.header(path(file))
            #expect(Set(h.keys) == Set(TraceHeader.keys), "\(file): \(h.keys)")
            #expect(h["command"]?.stringValue == command)
            // And in the same order on every line 1.
            let first = try String(contentsOfFile: path(file), encoding: .utf8).prefix { $0 != "\n" }
            let positions = TraceHeader.keys.compactMap { first.range(of: "\"\($0)\":")?.lowerBound }
            #expect(positions.count == TraceHeader.keys.count && positions == positions.sorted(), "\(file): \(first)")
        }
        #expect(try Self.header(path("s.jsonl"))["device"]?.stringValue == "sim:tap-uri", "--redact keeps the device")
        let frames = try TraceContents(path: path("m.jsonl")).records.filter { $0["event"]?.stringValue == "frame" }
        #expect(frames.count == 3, "measure apdu traces every APDU it times")
        let redacted = try String(contentsOfFile: path("s.jsonl"), encoding: .utf8)
        #expect(!redacted.contains("example.com"), "the decoded URI is redacted")
    }

    @Test("trace show prints the lines the live command printed (session, walk)")
    func show() async throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = Self.env(dir)
        let trace = dir.appendingPathComponent("s.jsonl").path
        let live = try await NFCBench.run(
            ["session", "--device", "sim:tap-uri", "--first-read", "--trace", trace], environment: env)
        let shown = await InProcessCLI.run(["trace", "show", trace])
        #expect(shown.status == 0)
        let liveLines = live.stdoutLines.filter { !$0.hasPrefix("trace: ") }
        #expect(shown.stdoutLines == liveLines)
        #expect(liveLines.contains { $0.contains("didInvalidateWithError 204") })
        let walkTrace = dir.appendingPathComponent("w.jsonl").path
        let walk = await InProcessCLI.run(["walk", "--trace", walkTrace])
        let walkShown = await InProcessCLI.run(["trace", "show", walkTrace])
        #expect(walkShown.stdout == walk.stdout)
        #expect(walk.stdout.contains("SUMMARY"))
    }

    @Test("trace diff: the same session twice is the same (exit 0); another ending differs (exit 1)")
    func diff() async throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = Self.env(dir)
        func path(_ n: String) -> String { dir.appendingPathComponent(n).path }
        for name in ["a", "b"] {
            _ = try await NFCBench.run(
                [
                    "session", "--device", "sim:tap-uri", "--first-read", "--no-thermal", "--trace",
                    path("\(name).jsonl"),
                ],
                environment: env)
        }
        _ = try await NFCBench.run(
            ["session", "--device", "sim:no-tag", "--timeout", "0.3", "--no-thermal", "--trace", path("c.jsonl")],
            environment: env)
        // The built binary once (trace diff's own process test: its exit status and stdout), then in this process.
        let same = try await NFCBench.run(["trace", "diff", path("a.jsonl"), path("b.jsonl")])
        #expect(same.status == 0, "\(same.stdout)")
        #expect(same.stdout.contains("the same events"))
        let timed = await InProcessCLI.run(
            ["trace", "diff", path("a.jsonl"), path("b.jsonl"), "--times"])
        #expect(timed.status == 1, "two runs never share every microsecond")
        let other = await InProcessCLI.run(["trace", "diff", path("a.jsonl"), path("c.jsonl")])
        #expect(other.status == 1)
        #expect(other.stdout.contains(#"+ "#) && other.stdout.contains(#""code":201"#))
        let bad = await InProcessCLI.run(["trace", "diff", path("a.jsonl"), path("missing.jsonl")])
        #expect(bad.status == 66, "a missing file is no input (EX_NOINPUT)")
    }

    @Test("trace plot of a walk: one lane per reader with its labels; rsvg-convert renders every picture")
    func plot() async throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = Self.env(dir)
        func path(_ n: String) -> String { dir.appendingPathComponent(n).path }
        let walk = await InProcessCLI.run(["walk", "--app-prefixes", "A0000000031010", "--trace", path("w.jsonl")])
        #expect(walk.status == 0)
        _ = try await NFCBench.run(
            ["session", "--device", "sim:tap-t4t", "--first-read", "--trace", path("s.jsonl")], environment: env)
        for name in ["w", "s"] {
            let r = await InProcessCLI.run(["trace", "plot", path("\(name).jsonl"), "--svg", path("\(name).svg")])
            #expect(r.status == 0, "\(r.stderr)")
        }
        let svg = try String(contentsOfFile: path("w.svg"), encoding: .utf8)
        let readers = try TraceContents(path: path("w.jsonl")).records.compactMap { $0["reader"]?.stringValue }
        var names: [String] = []
        for r in readers where !names.contains(r) { names.append(r) }
        #expect(names.count == 10)
        #expect(svg.components(separatedBy: "<g class=\"lane-group\">").count == names.count + 1, "one lane per reader")
        for name in names { #expect(svg.contains("class=\"name\">\(name)<"), "lane \(name)") }
        #expect(svg.contains(">served (2 APDUs to the app)<"), "the Visa reader's wake is served")
        #expect(svg.contains(">useless: never reaches ISO-DEP (FeliCa)<"))
        #expect(svg.components(separatedBy: "<title>default app woken").count - 1 == 10, "ten wakes")
        let rsvg = try #require(ExternalTool.require("rsvg-convert", package: "librsvg2-bin"))
        for name in ["w", "s"] {
            let r = try await ExternalTool.run(rsvg, [path("\(name).svg"), "-o", path("\(name).png")])
            #expect(r.status == 0, "rsvg-convert \(name).svg: \(r.stderr)")
            let size = (try? FileManager.default.attributesOfItem(atPath: path("\(name).png"))[.size] as? Int) ?? 0
            #expect(size > 1000)
        }
    }

    @Test("trace export of a simulated Type 4 session: tshark decodes the activation, I-blocks and the NDEF SELECT")
    func exportSimulated() async throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = Self.env(dir)
        func path(_ n: String) -> String { dir.appendingPathComponent(n).path }
        let live = try await NFCBench.run(
            [
                "session", "--device", "sim:tap-t4t", "--first-read", "--trace", path("s.jsonl"), "--pcapng",
                path("live.pcapng"),
            ],
            environment: env)
        #expect(live.status == 0, "\(live.stderr)")
        let export = await InProcessCLI.run(["trace", "export", path("s.jsonl"), "--pcapng", path("s.pcapng")])
        #expect(export.status == 0, "\(export.stderr)")
        let v = try #require(try await TsharkView.read(path("s.pcapng")))
        Self.expectISODEPSession(v)
        #expect(v.comments.contains { $0.contains("synthesized") })
        let l = try #require(try await TsharkView.read(path("live.pcapng")))
        #expect(l.rows.count == v.rows.count, "--pcapng during the run and trace export after it agree")
        let redacted = await InProcessCLI.run([
            "trace", "export", path("s.jsonl"), "--pcapng", path("r.pcapng"), "--redact",
        ])
        #expect(redacted.status == 0)
        let r = try #require(try await TsharkView.read(path("r.pcapng")))
        #expect(!r.any("iso14443.uid_cln") { $0 != "000000" && $0 != "00000000" }, "UIDs are zeros")
        #expect(r.malformedFree)
    }
}
