import Foundation
import NFCBenchKit
import NFCBenchTestSupport
import NFCFiles
import NFCTags
import NFCTrace
import Testing

/// The serving loops of `virtual pn532` and `virtual card`, moved out of the executable
/// (issue 32), driven through NFCBenchKit's API in this process: no `nfcbench` is spawned.
@Suite("NFCBenchKit: the virtual PN532 and vpcd card servers, driven without a process")
struct VirtualServerTests {
    /// A fresh folder of this test's own.
    static func folder() throws -> String {
        let dir = NSTemporaryDirectory() + "nfcbench-serve-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    static func tag() throws -> TagFile {
        try TagFile.load(path: try #require(BenchData.resolve("ntag215-uri", in: "tags")))
    }

    static func events(_ trace: TraceContents, _ name: String) -> [TraceRecord] {
        trace.records.filter { $0["event"]?.stringValue == name }
    }

    @Test(
        "The PN532 server takes its tag out and back on request, traces each chip event, ends on stop() and saves the tag"
    )
    func pn532ServesUntilStopped() async throws {
        let file = try Self.tag()
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try PN532Server.start(
            pty: "-", file: file, reader: nil, cycle: nil, json: true, quiet: true,
            traceOptions: BenchTraces.Options(path: dir + "/trace.jsonl"), savePath: dir + "/saved.json")
        #expect(server.link == nil)
        #expect(server.device == server.pn532.slavePath)
        let serving = Task { try await server.serve() }
        server.remove()
        server.present()
        server.stop()
        #expect(try await serving.value == 0)

        let trace = try TraceContents(path: dir + "/trace.jsonl")
        #expect(trace.command == "virtual pn532")
        #expect(trace.header?["setup"]?["uid"]?.stringValue == file.identifier.hexString())
        let notes = Self.events(trace, "pn532_event").compactMap { $0["note"]?.stringValue }
        #expect(notes.contains("remove"))
        #expect(notes.contains { $0.hasPrefix("present UID") && $0.hasSuffix("again") })
        #expect(Self.events(trace, "stopped").first?["reason"]?.stringValue == "signal")
        #expect(try TagFile.load(path: dir + "/saved.json").identifier == file.identifier)
    }

    @Test(
        "A libnfc client on the PN532 server's pty reads the served tag's UID; the frames reach the trace",
        .timeLimit(.minutes(1)))
    func pn532ServesALibNFCClient() async throws {
        let file = try Self.tag()
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try PN532Server.start(
            pty: dir + "/pn532", file: file, reader: nil, cycle: nil, json: true, quiet: true,
            traceOptions: BenchTraces.Options(path: dir + "/trace.jsonl"), savePath: nil)
        #expect(server.device == dir + "/pn532")
        let serving = Task { try await server.serve() }
        do {
            let frontend = try BenchDevice("pn532_uart:" + server.device).frontend()
            defer { frontend.close() }
            var events = frontend.events(.iso14443).makeAsyncIterator()
            let detected = try await events.next()
            let uid: [UInt8]? = if case .detected(let targets)? = detected { targets.first?.uid } else { nil }
            #expect(uid == file.activation.uid, "detected: \(String(describing: detected))")
        } catch {
            server.stop()
            _ = try? await serving.value
            throw error
        }
        server.stop()
        #expect(try await serving.value == 0)
        #expect(!FileManager.default.fileExists(atPath: dir + "/pn532"), "serve() removes the link")
        let trace = try TraceContents(path: dir + "/trace.jsonl")
        let frames = Self.events(trace, "frame")
        #expect(frames.contains { $0["dir"]?.stringValue == "host_to_chip" })
        #expect(frames.contains { $0["dir"]?.stringValue == "chip_to_host" })
        let line = try #require(frames.first.flatMap(PN532Server.text))
        #expect(line.contains("host > chip") || line.contains("chip > host"))
    }

    @Test(
        "A reader profile is a PN532 target's scripted reader; one that never reaches ISO-DEP is 65, a missing one 66")
    func readerScripts() throws {
        let script = try PN532Server.readerScript("nfc-forum-t4t")
        #expect(!script.steps.isEmpty)
        #expect(script.rats.first == 0xE0)
        #expect(Self.exitCode { () throws(BenchError) in _ = try PN532Server.readerScript("felica-gate") } == 65)
        #expect(Self.exitCode { () throws(BenchError) in _ = try PN532Server.readerScript("no-such-profile") } == 66)
    }

    /// The exit status of the error `body` throws (nil when it throws none).
    static func exitCode(_ body: () throws(BenchError) -> Void) -> Int32? {
        do throws(BenchError) {
            try body()
            return nil
        } catch {
            return error.exitCode
        }
    }

    @Test("The vpcd card server with no vpcd on its port says why and ends 69, the reason in the trace")
    func cardServerWithoutVPCD() async throws {
        let (path, file, personality) = try VirtualCardKind.part3.load("ntag215-uri")
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let port = try TestPorts.free()
        let server = try VirtualCardServer.start(
            tagPath: path, file: file, personality: personality, kind: .part3, port: port, reversed: false,
            traceOptions: BenchTraces.Options(path: dir + "/trace.jsonl"), json: true, quiet: true, wait: false,
            otherSlot: "another slot", grace: .zero)
        do {
            _ = try await server.serve(readingStandardInput: false)
            Issue.record("served with nothing on port \(port)")
        } catch {
            #expect(error.exitCode == 69)
            #expect(error.message.contains("could not connect to vpcd on 127.0.0.1:\(port)"))
            #expect(error.message.hasSuffix(" (--wait keeps trying)"))
        }
        let trace = try TraceContents(path: dir + "/trace.jsonl")
        #expect(trace.header?["setup"]?["port"]?.intValue == Int64(port))
        #expect(Self.events(trace, "not_in_field").count == 1)
        #expect(Self.events(trace, "stopped").first?["reason"]?.stringValue == "not in the field")
    }

    @Test("With wait, the vpcd card server says why and keeps trying; its commands reach the trace; stop() ends it 0")
    func cardServerWaits() async throws {
        let (path, file, personality) = try VirtualCardKind.part3.load("ntag215-uri")
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try VirtualCardServer.start(
            tagPath: path, file: file, personality: personality, kind: .part3, port: try TestPorts.free(),
            reversed: false, traceOptions: BenchTraces.Options(path: dir + "/trace.jsonl"), json: true, quiet: true,
            wait: true, otherSlot: "another slot", grace: .zero)
        let serving = Task { try await server.serve(readingStandardInput: false) }
        server.command("remove")
        server.command("present")
        // The wait is said once the follower has looked: the trace's file has it.
        try await wait(for: "a waiting record in the trace", timeout: .seconds(20), every: .milliseconds(20)) {
            ((try? String(contentsOfFile: dir + "/trace.jsonl", encoding: .utf8)) ?? "").contains("\"waiting\"")
        }
        server.command("quit")
        #expect(try await serving.value == 0)
        let trace = try TraceContents(path: dir + "/trace.jsonl")
        let waits = Self.events(trace, "waiting").compactMap { $0["reason"]?.stringValue }
        #expect(waits.first?.contains("could not connect to vpcd") == true)
        #expect(Self.events(trace, "not_in_field").isEmpty)
        #expect(Self.events(trace, "command").compactMap { $0["input"]?.stringValue } == ["remove", "present"])
        #expect(Self.events(trace, "stopped").count == 1)
        #expect(Self.events(trace, "stopped").first?["reason"] == nil)
    }

    @Test("A vpcd card's trace records read as its text lines; unknown records have none")
    func cardRecordText() {
        #expect(VirtualCardTrace.controlName(0x04) == "get ATR")
        #expect(VirtualCardTrace.controlName(0x7F) == "unknown")
        let apdu: JSONObject = ["t_us": 1500, "event": "c_apdu", "apdu": "00A40400"]
        #expect(VirtualCardTrace.text(TraceRecord(json: apdu)) == "     1.500 ms  C-APDU 00 A4 04 00")
        #expect(VirtualCardTrace.text(TraceRecord(json: ["t_us": 0, "event": "stopped"])) == nil)
        #expect(VirtualCardTrace.seconds(.milliseconds(2500)) == 2.5)
    }
}
