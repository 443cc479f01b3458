import Foundation
import HCEEvents
import NFCBase
import NFCTrace
import ReaderSession
import Testing
import VirtualHardware

/// The emulation paths end to end, through the built `nfcbench` binary:
/// `walk --device pcsc:…` against the real pcscd and vpcd (run the suite through
/// `scripts/with-pcscd swift test --filter HCE`), and `emulate` in libnfc target mode
/// against the virtual PN532 (no daemon needed).
enum HCEEmulateBench {
    static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"
    /// `scripts/with-pcscd` exports `NFCBENCH_PCSCD=private` next to its pcscd.
    static let pcscdReady = ProcessInfo.processInfo.environment["NFCBENCH_PCSCD"] == "private"
    static var pcscEnabled: Bool { pcscdReady || isCI }

    static let readers = NFCBench.packageRoot.appendingPathComponent("hardware/readers")

    static func profile(_ name: String) throws -> ReaderProfile {
        let url = readers.appendingPathComponent(name + ".json")
        return try ReaderProfile(json: try Data(contentsOf: url), file: url.lastPathComponent)
    }

    static func records(_ stdout: String) throws -> [JSONValue] {
        try stdout.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
    }

    static func temporaryDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-hce-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }
}

/// Each test runs in its own `scripts/with-pcscd` (own pcscd and network namespace), so the
/// phone card never meets another suite's virtual card on the vpcd ports.
@Suite("HCE emulation through pcscd and vpcd (walk --device)", .serialized)
struct HCEEmulatePCSCTests {
    @Test(
        "Every shipped profile through pcscd: Visa SELECT reaches the app, VAS/T4T get 6A 82, wakes precede APDUs, non-ISO-DEP readers are not shown"
    )
    func walkThroughPCSCD() async throws {
        let traces = try HCEEmulateBench.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: traces) }
        let trace = traces.appendingPathComponent("walk.jsonl")
        let r = try await PrivateBench.run(
            "\"$B\" walk --device 'pcsc:Virtual PCD 00 00' --port 35963 --app-prefixes A0000000031010 --json --trace '\(trace.path)'",
            timeout: .seconds(90))
        try PrivateBench.require(r)
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let lines = try HCEEmulateBench.records(r.stdout)
        let fileLines = try HCEEmulateBench.records(try String(contentsOf: trace, encoding: .utf8))
        #expect(fileLines == lines, "--json prints exactly the trace's records")
        #expect(lines.first?["event"]?.stringValue == "header")

        let all = try FileManager.default.contentsOfDirectory(atPath: HCEEmulateBench.readers.path)
            .filter { $0.hasSuffix(".json") }.sorted().map { try HCEEmulateBench.profile(String($0.dropLast(5))) }
        var times: [Int64] = []
        for profile in all {
            let mine = lines.filter { $0["reader"]?.stringValue == profile.name }
            if !profile.reachesISODEP {
                #expect(
                    mine.map { $0["event"]?.stringValue } == ["notShowable"], "\(profile.name) is reported, not played")
                continue
            }
            let events = mine.compactMap { $0["event"]?.stringValue }
            let wake = try #require(events.firstIndex(of: "vpcdConnected"), "\(profile.name): no field on")
            let firstAPDU = try #require(events.firstIndex(of: "apdu"), "\(profile.name): no APDU")
            #expect(
                events.firstIndex(of: "nfcEvent").map { $0 > wake && $0 < firstAPDU } == true,
                "\(profile.name): the wake comes before the first APDU")
            #expect((mine[wake]["t_us"]?.intValue ?? .max) <= (mine[firstAPDU]["t_us"]?.intValue ?? -1))
            #expect(
                events.filter { $0 == "fieldOn" }.count == 1, "\(profile.name): pcscd's power cycles are not fields")
            #expect(events.last == "sessionInvalidated" || events.contains("fieldOff"))
            times += mine.compactMap { $0["t_us"]?.intValue }
        }
        #expect(times == times.sorted(), "µs timestamps never go back")

        func apdus(_ reader: String) -> [JSONValue] {
            lines.filter { $0["reader"]?.stringValue == reader && $0["event"]?.stringValue == "apdu" }
        }
        let emv = apdus("emv-payment")
        #expect(emv.count == 3)
        #expect(emv.first?["answered_by"]?.stringValue == "system", "PPSE is the system's")
        #expect(
            emv.first?["response"]?.stringValue?.contains("4F07A0000000031010") == true, "the FCI lists the Visa AID")
        #expect(emv.dropFirst().first?["apdu"]?.stringValue == "00A4040007A000000003101000")
        #expect(emv.dropFirst().first?["answered_by"]?.stringValue == "app", "the Visa SELECT reaches the CardSession")
        #expect(lines.contains { $0["reader"]?.stringValue == "emv-payment" && $0["event"]?.stringValue == "received" })
        for reader in ["apple-vas", "nfc-forum-t4t"] {
            let first = apdus(reader).first
            #expect(
                first?["response"]?.stringValue == "6A82" && first?["answered_by"]?.stringValue == "system", "\(reader)"
            )
        }
        let summary = try #require(lines.last)
        #expect(summary["event"]?.stringValue == "summary")
        if case .array(let notShown)? = summary["not_showable"] {
            let names = Set(notShown.compactMap(\.stringValue))
            #expect(names == Set(all.filter { !$0.reachesISODEP }.map(\.name)))
        } else {
            Issue.record("summary without not_showable")
        }
    }

    @Test("A reader pcscd does not have is a clear 'unavailable' error (exit 69)")
    func unknownReader() async throws {
        let r = try await PrivateBench.run("\"$B\" walk --device 'pcsc:No Such Reader' --profiles emv-payment")
        try PrivateBench.require(r)
        #expect(r.status == 69)
        #expect(r.stderr.contains("No Such Reader") && r.stderr.contains("Virtual PCD 00 00"))
    }
}

@Suite("HCE emulation in libnfc target mode against the virtual PN532", .serialized)
struct HCEEmulateLibNFCTests {
    @Test(
        "The virtual PN532 plays the EMV profile against 'nfcbench emulate': activation first, answers as the model's")
    func emvAgainstVirtualPN532() async throws {
        let emv = try HCEEmulateBench.profile("emv-payment")
        // The model's answers, from the pure virtual-time walk (the same phone, another path).
        let app = ContactlessPhone.DefaultApp(selectIdentifierPrefixes: [
            try SelectIdentifierPrefix(hex: "A0000000031010")
        ])
        let walk = await ReaderWalk(profiles: [emv], app: app).run()
        let expected = walk.events.filter { $0.event == "apdu" }.map(\.response)
        #expect(expected.count == 3)

        // `emulate` runs on the real clock: the stand-in app must answer within the frame
        // waiting time (FWI 7, 38.7 ms of wall time: the iPhone's ATS, kept as a real phone
        // has it). Under two full suites at once (load 20–70 on 2 cores) its thread, at nice
        // 0, was once not scheduled in time; emulate then rightly logged "nothing sent: the app
        // missed the frame waiting time" and the scripted reader sent the SELECT again. The
        // app's thread stands in for the phone and asks to be real-time (issue 35), and where
        // that is granted (root, or an RLIMIT_RTPRIO) one run is the test: no replay. Only a
        // host that refuses it (best effort, README) gets a run with a logged miss played
        // again (at most 3 runs); every check below is on a run with no miss either way.
        let attempts = try await NFCBench.offPool { ThreadPriority.realTimeIsGranted() } ? 1 : 3
        var attempt = 0
        var run: EmulateRun
        repeat {
            attempt += 1
            run = try await EmulateRun.play(emv, expected: expected)
        } while run.appMissedTheFrameWaitingTime && attempt < attempts
        let (r, lines, exchanges, traceLines) = (run.result, run.lines, run.exchanges, run.traceLines)
        #expect(!run.appMissedTheFrameWaitingTime, "the app missed the frame waiting time in \(attempt) runs")
        #expect(r.status == 0, "stderr: \(r.stderr)")
        let events = lines.compactMap { $0["event"]?.stringValue }
        let activation = try #require(events.firstIndex(of: "activation"))
        let firstReceive = try #require(events.firstIndex(of: "targetReceive"))
        let wake = try #require(events.firstIndex(of: "nfcEvent"))
        #expect(activation < wake && wake < firstReceive, "activation, then the model's wake, then the first APDU")
        #expect(
            !events.contains("vpcdConnected")
                && lines.filter { $0["source"]?.stringValue == "libnfc" }
                    .allSatisfy { !($0["event"]?.stringValue ?? "").lowercased().contains("field") },
            "libnfc logs no field")
        #expect((lines[activation]["t_us"]?.intValue ?? .max) <= (lines[firstReceive]["t_us"]?.intValue ?? -1))
        let sent = lines.filter { $0["event"]?.stringValue == "targetSend" }.map { $0["response"]?.stringValue }
        #expect(sent == expected.map { $0?.hexString() }, "PPSE and Visa SELECT answers match the model's")
        #expect(events.contains("released"))
        #expect(lines.last?["outcome"]?.stringValue == "reader released the card after 3 APDUs")

        #expect(exchanges.count == 3)
        #expect(exchanges.allSatisfy { $0.matched }, "the scripted reader got exactly the model's answers")
        #expect(traceLines == lines.count)
    }

    /// One `nfcbench emulate` against a fresh virtual PN532 whose reader plays `profile`.
    struct EmulateRun {
        var result: NFCBench.Result
        var lines: [JSONValue]
        var exchanges: [PN532ReaderExchange]
        var traceLines: Int

        /// The emulator logged a C-APDU it sent nothing for because the app's answer came
        /// after the frame waiting time (a reader timeout, which the reader follows by
        /// sending the command again).
        var appMissedTheFrameWaitingTime: Bool {
            lines.contains {
                $0["event"]?.stringValue == "targetSend"
                    && $0["detail"]?.stringValue?.contains("missed the frame waiting time") == true
            }
        }

        static func play(_ profile: ReaderProfile, expected: [[UInt8]?]) async throws -> EmulateRun {
            let dir = try HCEEmulateBench.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let link = dir.appendingPathComponent("pn532").path
            let fake = try VirtualPN532.start(ptyPath: link)
            defer { fake.stop() }
            fake.startReader(try #require(PN532ReaderScript(profile: profile, expectedResponses: expected)))
            let trace = dir.appendingPathComponent("emulate.jsonl")
            let r = try await NFCBench.run(
                [
                    "emulate", "--device", "pn532_uart:\(link)", "--app-prefixes", "A0000000031010", "--json",
                    "--trace", trace.path,
                ],
                timeout: .seconds(30))
            let traceText = (try? String(contentsOf: trace, encoding: .utf8)) ?? ""
            return EmulateRun(
                result: r, lines: try HCEEmulateBench.records(r.stdout), exchanges: fake.chip.readerExchanges,
                traceLines: traceText.split(separator: "\n").count)
        }
    }

    @Test("A device libnfc can't open is 'unavailable' (exit 69), with no crash")
    func missingDevice() async throws {
        let dir = try HCEEmulateBench.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try await NFCBench.run([
            "emulate", "--device", "pn532_uart:\(dir.path)/absent", "--app-prefixes", "A0000000031010",
            "--trace", dir.appendingPathComponent("t.jsonl").path,
        ])
        #expect(r.status == 69)
        #expect(r.stderr.contains("absent does not exist"), "refused before libnfc is asked: \(r.stderr)")
    }

    @Test("Bad options are usage errors (exit 64)")
    func usage() {
        #expect(InProcessCLI.mistake(["emulate", "--app-prefixes", "A0000000031010"])?.contains("--device") == true)
        #expect(
            InProcessCLI.mistake(["emulate", "--device", "pn532_uart:x", "--app-prefixes", "A000"])?.hasPrefix(
                "--app-prefixes: ") == true)
        #expect(
            InProcessCLI.mistake(["emulate", "--device", "pn532_uart:x", "--uid", "0102"])
                == "--uid takes 4 bytes of hex (e.g. 085A3C91), not '0102'")
        #expect(
            InProcessCLI.mistake(["walk", "--device", "acr122:x"])
                == "--device takes pcsc:READER (e.g. 'pcsc:Virtual PCD 00 00'), not 'acr122:x'")
        #expect(InProcessCLI.mistake(["walk", "--port", "35963"]) == "--port goes with --device pcsc:READER")
    }
}
