import Foundation
import NFCBenchTestSupport
import Testing

@Suite(
    "virtual pn532 and libnfc dump with the built binary", .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["CI"] == "true"
            || FileManager.default.fileExists(atPath: "/usr/bin/nfc-list")))
struct PN532VirtualCommandTests {
    static func nfcList(_ link: String) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/nfc-list")
        var env = ProcessInfo.processInfo.environment
        env["LIBNFC_DEVICE"] = "pn532_uart:\(link)"
        env["LIBNFC_AUTO_SCAN"] = "false"
        p.environment = env
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test(
        "--json prints trace lines for every frame; stdin 'remove'/'present' take the tag away and back; SIGINT removes the link"
    )
    func jsonStdinAndSignal() async throws {
        let folder = try TestFolder("vp")
        defer { folder.remove() }
        let link = folder.file("pn532")
        let p = Process()
        p.executableURL = NFCBench.binary
        p.arguments = [
            "virtual", "pn532", "--pty", link, "--tag",
            NFCBench.packageRoot.appendingPathComponent("hardware/tags/ntag213-text.json").path,
            "--json", "--trace", folder.file("trace.jsonl"),
        ]
        let input = Pipe()
        let output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { p.terminate() } }  // a failed step leaves no virtual PN532 behind
        try await waitForLink(link)
        let seen = try await NFCBench.offPool { try Self.nfcList(link) }
        #expect(seen.contains("04  ") && seen.contains("SAK (SEL_RES): 00"), "\(seen)")
        let trace = folder.file("trace.jsonl")
        /// How many of the virtual PN532's event notes in its trace begin with `prefix`.
        func notes(_ prefix: String) -> Int {
            ((try? String(contentsOfFile: trace, encoding: .utf8)) ?? "").components(
                separatedBy: #""note":""# + prefix
            ).count - 1
        }
        let presents = notes("present UID")
        input.fileHandleForWriting.write(Data("remove\n".utf8))
        try await wait(for: "the remove in the trace") { notes("remove") == 1 }
        let empty = try await NFCBench.offPool { try Self.nfcList(link) }
        #expect(empty.contains("0 ISO14443A passive target(s) found") || !empty.contains("SAK (SEL_RES)"), "\(empty)")
        input.fileHandleForWriting.write(Data("present\n".utf8))
        try await wait(for: "the present in the trace") { notes("present UID") > presents }
        let back = try await NFCBench.offPool { try Self.nfcList(link) }
        #expect(back.contains("SAK (SEL_RES): 00"), "\(back)")
        p.interrupt()
        let (data, status) = try await NFCBench.offPool { () -> (Data, Int32) in
            let d = output.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            return (d, p.terminationStatus)
        }
        #expect(status == 0)
        #expect(
            (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == nil, "the link is removed on SIGINT")
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.count == lines.count, "every line is JSON")
        #expect(objects.first?["schema"] as? String == "nfcbench.trace/1")
        #expect(objects.contains { $0["event"] as? String == "frame" && $0["dir"] as? String == "host_to_chip" })
        #expect(objects.contains { ($0["note"] as? String)?.hasPrefix("remove") == true })
    }

    @Test(
        "dump --device pn532_uart: reads the whole NTAG215 into our JSON, equal to the file it serves (PWD aside), in FAST_READs",
        arguments: ["none", "real"])
    func dumpThroughLibNFC(timing: String) async throws {
        let fake = try VirtualPN532Process(tag: "\(VirtualPN532Process.tags)/ntag215-uri.json", timing: timing)
        let r = try await NFCBench.run(["dump", "--device", fake.device], timeout: .seconds(30))
        let (_, wire) = try await fake.stopWithWire()
        // GET_VERSION named an NTAG215: InCommunicateThru FAST_READ (D4 42 3A …), no READ (D4 42 30 …).
        #expect(wire.contains("D4423A0040"), "FAST_READ 00-40 (65 pages, the PN532's frame limit)")
        #expect(!wire.contains("D44230"))
        #expect(r.status == 0, "\(r.stderr)")
        var expected = VirtualPN532Process.pages(
            try String(contentsOfFile: "\(VirtualPN532Process.tags)/ntag215-uri.json", encoding: .utf8))
        expected[133] = "00000000"
        #expect(VirtualPN532Process.pages(r.stdout) == expected)
        #expect(r.stdout.contains("\"type\": \"ntag215\""))
        #expect(r.stdout.contains("\"get_version\": \"0004040201001103\""))
    }

    @Test("A dump refused under a running session sends not one frame, and the session keeps its tag")
    func refusedDumpSendsNothing() async throws {
        let fake = try VirtualPN532Process(tag: "\(VirtualPN532Process.tags)/ntag215-uri.json")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-locks-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = ["NFCBENCH_LOCK_DIR": dir.path, "NFCBENCH_TRACE_DIR": dir.appendingPathComponent("traces").path]
        let sessionTrace = dir.appendingPathComponent("session.jsonl").path
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let (session, _, _) = try NFCBench.start(
            ["session", "--device", fake.device, "--mode", "ndef-rw", "--timeout", "4", "--trace", sessionTrace],
            environment: env)
        // Wait until the session has read the tag.
        let sawRead = await poll(timeout: .seconds(6), every: .milliseconds(20)) {
            (try? String(contentsOfFile: sessionTrace, encoding: .utf8))?.contains(#""event":"readNDEF""#) == true
        }
        #expect(sawRead, "the session read the tag")
        let opensBefore = try Self.openings(fake.trace)
        let refused = try await NFCBench.run(["dump", "--device", fake.device], environment: env)
        #expect(refused.status == 69)
        #expect(refused.stderr.contains("busy"), "\(refused.stderr)")
        let opensAfter = try Self.openings(fake.trace)
        _ = try await NFCBench.offPool { session.waitUntilExit() }
        let records = try String(contentsOfFile: sessionTrace, encoding: .utf8)
        _ = try await fake.stop()
        #expect(opensBefore == 1 && opensAfter == 1, "only the session opened the reader (SAMConfiguration D4 14)")
        #expect(!records.contains(#""event":"lost""#), "the session kept its tag")
        #expect(records.contains(#""event":"readNDEF""#))
    }

    /// SAMConfiguration commands (`D4 14`, which every `nfc_open` of a PN532 sends) the
    /// virtual PN532 received.
    static func openings(_ trace: String) throws -> Int {
        try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").filter {
            $0.contains(#""dir":"host_to_chip""#) && $0.contains("D414")
        }.count
    }

    @Test(
        "--reader plays a reader profile against a card emulator: nfc-emulate-forum-tag4 answers every C-APDU of nfc-forum-t4t",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/nfc-emulate-forum-tag4")))
    func readerProfile() async throws {
        let folder = try TestFolder("vr")
        defer { folder.remove() }
        let link = folder.file("pn532")
        let (p, out, _) = try NFCBench.start([
            "virtual", "pn532", "--pty", link, "--reader", "nfc-forum-t4t", "--present-after", "0.5",
            "--trace", folder.file("trace.jsonl"),  // not --quiet: the exchanges are printed at the end
        ])
        defer { if p.isRunning { p.terminate() } }
        try await waitForLink(link)
        let emulator = Process()
        emulator.executableURL = URL(fileURLWithPath: "/usr/bin/nfc-emulate-forum-tag4")
        var env = ProcessInfo.processInfo.environment
        env["LIBNFC_DEVICE"] = "pn532_uart:\(link)"
        env["LIBNFC_AUTO_SCAN"] = "false"
        emulator.environment = env
        emulator.standardOutput = FileHandle.nullDevice
        emulator.standardError = FileHandle.nullDevice
        try emulator.run()
        let text = try await NFCBench.offPool { () -> String in
            if processEndBlocking(of: emulator, timeout: .seconds(10)) == nil { emulator.terminate() }
            _ = processEndBlocking(of: emulator)
            p.interrupt()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            _ = processEndBlocking(of: p)
            return text
        }
        let exchanges = text.split(separator: "\n").filter { $0.hasPrefix("reader C-APDU") }
        #expect(exchanges.count == 5, "\(text)")
        #expect(exchanges.first?.hasSuffix("-> 90 00") == true)
        #expect(exchanges.allSatisfy { !$0.hasSuffix("no answer") })
        let door = try await NFCBench.run(["virtual", "pn532", "--pty", link, "--reader", "mifare-classic-door"])
        #expect(door.status == 65)
        #expect(door.stderr.contains("never reaches ISO-DEP"))
    }

    @Test(
        "measure read --device pn532_uart: times whole NDEF reads through the real procedure (JSON like the PC/SC one)")
    func measureRead() async throws {
        let fake = try VirtualPN532Process(tag: "\(VirtualPN532Process.tags)/ntag215-uri.json")
        let r = try await NFCBench.run(
            ["measure", "read", "--device", fake.device, "--count", "20", "--json"], timeout: .seconds(30))
        _ = try await fake.stop()
        #expect(r.status == 0, "\(r.stderr)")
        let o = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect(o?["count"] as? Int == 20)
        let median = try #require(o?["median_us"] as? Double)
        #expect(median > 0 && median < 1_000_000)
        // detect runs on any reader now (with a person's hand): a reader that is not there is 69.
        let detect = try await NFCBench.run(["measure", "detect", "--device", "pn532_uart:/nonexistent"])
        #expect(detect.status == 69, "\(detect.stderr)")
    }
}
