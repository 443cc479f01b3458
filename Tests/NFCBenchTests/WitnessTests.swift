import Foundation
import NFCBenchTestSupport
import NFCTrace
import Testing

/// Other people's clients against `nfcbench virtual pn532`, for every shipped tag file of
/// their kind: libnfc's `nfc-mfultralight r` (Debian libnfc-bin) and nfcpy 1.0 (PyPI, in
/// the project's `.venv`), compared with nfcbench's own reading of the same file.
enum Witness {
    static let tags = NFCBench.packageRoot.appendingPathComponent("hardware/tags")

    /// Every shipped tag file that is an NFC Forum tag (`hardware/tags/*.json`; not the
    /// MIFARE Classic card, which is sensed but never read), by name; without `faults` (a file
    /// whose tag leaves the field part way can't be read whole by anyone: ``faultyFiles``).
    static let tagFiles: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: tags.path)) ?? []
        return names.filter { name in
            guard name.hasSuffix(".json"),
                let text = try? String(contentsOf: tags.appendingPathComponent(name), encoding: .utf8)
            else { return false }
            return !text.contains(#""type": "mifare_classic_1k""#) && !text.contains(#""faults""#)
                && !vicinityTypes.contains { text.contains(#""type": ""# + $0 + #"""#) }
        }.sorted()
    }()

    /// The FeliCa and ISO 15693 `type`s: not Type 2 or Type 4 tags (the FeliCa witnesses
    /// have tests of their own; a PN532 has no ISO 15693).
    static let vicinityTypes = ["felica_lite_s", "felica_standard", "icode_slix", "st25tv"]

    /// The NFC Forum Type 3 files nfcpy reads over the virtual PN532 (FeliCa Lite-S).
    static let type3Files = ["felica-lite-s-blank.json", "felica-lite-s-uri.json"]

    /// ``tagFiles`` of the Ultralight family (NFC Forum Type 2: NTAG21x, Ultralight, Ultralight C),
    /// by the file's `type`: the witnesses that read pages run on these and no others, so a run
    /// counts only the cases it tested.
    static let ultralightFamilyTagFiles: [String] = tagFiles.filter { name in
        guard let data = FileManager.default.contents(atPath: tags.appendingPathComponent(name).path),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let type = object["type"] as? String
        else { return false }
        return type.hasPrefix("ntag21") || type.hasPrefix("ultralight")
    }

    /// The shipped tag files with a fault schedule (`ntag215-flaky`: the tag is lost when page
    /// 8 is read).
    static let faultyFiles: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: tags.path)) ?? []
        return names.filter { name in
            guard name.hasSuffix(".json"),
                let text = try? String(contentsOf: tags.appendingPathComponent(name), encoding: .utf8)
            else { return false }
            return text.contains(#""faults""#) && !vicinityTypes.contains { text.contains(#""type": ""# + $0 + #"""#) }
        }.sorted()
    }()

    /// `nfcbench tag show --json FILE`, parsed.
    static func show(_ file: String) async throws -> [String: Any] {
        let r = await InProcessCLI.run(["tag", "show", "--json", tags.appendingPathComponent(file).path])
        try #require(r.status == 0, "\(r.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    }

    static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"
    static let python = NFCBench.packageRoot.appendingPathComponent(".venv/bin/python")
    /// nfcpy 1.0.4's `examples/tagtool.py`, from its sdist (scripts/install-deps unpacks it).
    static let tagtool = NFCBench.packageRoot.appendingPathComponent(".cache/nfcpy-1.0.4/examples/tagtool.py")
    static var nfcpyUsable: Bool {
        FileManager.default.isExecutableFile(atPath: python.path) && access("/dev", W_OK) == 0
    }

    /// Serves `file` on a virtual PN532 whose pty link is `link`, runs `body`, stops the
    /// virtual PN532 (SIGINT: it removes the link) whatever happens.
    static func serving<T: Sendable>(
        _ file: String, at link: String, _ body: @Sendable () async throws -> T
    ) async throws -> T {
        let folder = try TestFolder("witness")
        defer { folder.remove() }
        let (p, _, _) = try NFCBench.start([
            "virtual", "pn532", "--pty", link, "--tag", tags.appendingPathComponent(file).path, "--quiet",
            "--trace", folder.file("trace.jsonl"),
        ])
        do {
            try await waitForLink(link)
            let result = try await body()
            p.interrupt()
            _ = try await waitForProcessEnd(of: p)
            return result
        } catch {
            p.interrupt()
            _ = try await waitForProcessEnd(of: p)
            throw error
        }
    }

    /// Runs `executable arguments` off the cooperative pool, killed after `timeout`.
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:],
        input: String? = nil, timeout: TimeInterval = 30
    ) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await NFCBench.offPool {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: executable)
            p.arguments = arguments
            p.environment = TestTraces.childEnvironment(environment)
            let out = Pipe()
            let err = Pipe()
            p.standardOutput = out
            p.standardError = err
            let stdin = Pipe()
            p.standardInput = input == nil ? FileHandle.nullDevice : stdin
            try p.run()
            if let input {
                stdin.fileHandleForWriting.write(Data(input.utf8))
                try? stdin.fileHandleForWriting.close()
            }
            // Weakly: the queue keeps the cancelled item until its deadline (see NFCBenchProcess.swift).
            let killer = DispatchWorkItem { [weak p] in if let p, p.isRunning { p.terminate() } }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
            let o = out.fileHandleForReading.readDataToEndOfFile()
            let e = err.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            killer.cancel()
            try? out.fileHandleForReading.close()
            try? err.fileHandleForReading.close()
            return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
        }
    }
}

@Suite(
    "nfc-mfultralight r reads every Ultralight-family tag file over the virtual PN532, as nfcbench dump does",
    .serialized,
    .enabled(
        if: Witness.isCI || FileManager.default.isExecutableFile(atPath: "/usr/bin/nfc-mfultralight"),
        "libnfc-bin's nfc-mfultralight is missing (scripts/install-deps installs it); CI=true makes this a failure"))
struct MfultralightWitnessTests {
    @Test("The page witnesses run on every shipped Ultralight-family tag file without faults (5 today)")
    func listed() {
        #expect(Witness.ultralightFamilyTagFiles.count >= 5, "\(Witness.ultralightFamilyTagFiles)")
    }

    @Test("page for page", arguments: Witness.ultralightFamilyTagFiles)
    func readsEveryPage(file: String) async throws {
        let shown = try await Witness.show(file)
        let type = try #require(shown["type"] as? String)
        try #require(type != "type4", "\(file) is listed as an Ultralight-family tag file")
        // nfc-mfultralight takes a tag that does not answer GET_VERSION for a 16-page Ultralight:
        // an Ultralight C too (its first 16 pages are an Ultralight's, MF0ICU2 §7.5.2).
        let expectedPages =
            type == "ultralight_c"
            ? 16
            : VirtualPN532Process.pages(
                try String(contentsOf: Witness.tags.appendingPathComponent(file), encoding: .utf8)
            ).count
        let folder = try TestFolder("mfu")
        defer { folder.remove() }
        let link = folder.file("pn532")
        let dump = folder.file("dump.mfd")
        let ours = folder.file("dump.json")
        let (tool, mine) = try await Witness.serving(file, at: link) {
            let tool = try await Witness.run(
                "/usr/bin/nfc-mfultralight", ["r", dump],
                environment: ["LIBNFC_DEVICE": "pn532_uart:\(link)", "LIBNFC_AUTO_SCAN": "false"])
            let mine = try await NFCBench.run(["dump", "--device", "pn532_uart:\(link)", "--out", ours, "--wait", "5"])
            return (tool, mine)
        }
        #expect(tool.status == 0, "\(tool.stdout)\(tool.stderr)")
        #expect(
            tool.stdout.contains("Done, \(expectedPages) of \(expectedPages) pages read (0 pages failed)"),
            "\(file): \(tool.stdout)")
        #expect(mine.status == 0, "\(mine.stderr)")
        let theirs = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dump)))
        let ourPages = VirtualPN532Process.pages(try String(contentsOfFile: ours, encoding: .utf8))
        #expect(theirs.count == expectedPages * 4, "\(file)")
        let theirPages = stride(from: 0, to: theirs.count, by: 4).map {
            theirs[$0..<min($0 + 4, theirs.count)].map { String(format: "%02X", $0) }.joined()
        }
        #expect(theirPages == Array(ourPages.prefix(theirPages.count)), "\(file)")
    }
}

@Suite(
    "nfc-mfultralight w writes a tag over the virtual PN532 (prompts declined); nfc-mfultralight r and nfcbench read it back",
    .serialized,
    .enabled(
        if: Witness.isCI || FileManager.default.isExecutableFile(atPath: "/usr/bin/nfc-mfultralight"),
        "libnfc-bin's nfc-mfultralight is missing (scripts/install-deps installs it); CI=true makes this a failure"))
struct MfultralightWriteWitnessTests {
    /// libnfc 1.8.0's `nfc-mfultralight w` writes each page with MIFARE WRITE (`A0`, 16 bytes:
    /// the chip's compatibility write), skipping the UID pages, the lock and OTP/CC page and,
    /// on an NTAG, the dynamic lock page, when its questions are answered no.
    @Test(
        "Done, N of M pages written (K pages skipped, 0 pages failed), every data page on the tag",
        arguments: [("ntag215-uri.json", 135, 130, 5), ("ultralight-blank.json", 16, 12, 4)])
    func writesAndReadsBack(file: String, total: Int, written: Int, skipped: Int) async throws {
        let folder = try TestFolder("mfuw")
        defer { folder.remove() }
        let link = folder.file("pn532")
        let (dump, new, back, ours) = (
            folder.file("dump.mfd"), folder.file("new.mfd"), folder.file("back.mfd"), folder.file("back.json")
        )
        let env = ["LIBNFC_DEVICE": "pn532_uart:\(link)", "LIBNFC_AUTO_SCAN": "false"]
        // The data pages the tool writes (after the UID, lock and CC pages; before an NTAG's
        // dynamic lock bytes), a pattern no shipped file holds.
        let dataPages = 4..<(total == 135 ? 130 : total)
        let (write, reread, mine) = try await Witness.serving(file, at: link) {
            let read = try await Witness.run("/usr/bin/nfc-mfultralight", ["r", dump], environment: env)
            try #require(read.status == 0, "\(read.stdout)\(read.stderr)")
            var image = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dump)))
            // A short read (a loaded machine, a tool that gave up part way) fails here, not by
            // an index out of range that takes the whole test process down.
            try #require(
                image.count >= total * 4, "\(file): \(image.count) bytes read, not \(total * 4): \(read.stdout)")
            for p in dataPages {
                for i in 0..<4 { image[p * 4 + i] = UInt8(truncatingIfNeeded: p &* 7 &+ i &* 31 &+ 1) }
            }
            try Data(image).write(to: URL(fileURLWithPath: new))
            let write = try await Witness.run(
                "/usr/bin/nfc-mfultralight", ["w", new], environment: env, input: String(repeating: "n\n", count: 4))
            let reread = try await Witness.run("/usr/bin/nfc-mfultralight", ["r", back], environment: env)
            let mine = try await NFCBench.run(["dump", "--device", "pn532_uart:\(link)", "--out", ours, "--wait", "5"])
            return (write, reread, mine)
        }
        #expect(
            write.stdout.contains(
                "Done, \(written) of \(total) pages written (\(skipped) pages skipped, 0 pages failed)"),
            "\(file): \(write.stdout)\(write.stderr)")
        #expect(reread.status == 0, "\(reread.stdout)")
        let wanted = try [UInt8](Data(contentsOf: URL(fileURLWithPath: new)))
        let theirs = try [UInt8](Data(contentsOf: URL(fileURLWithPath: back)))
        try #require(theirs.count >= total * 4, "\(file): the read-back holds \(theirs.count) bytes, not \(total * 4)")
        func page(_ b: [UInt8], _ p: Int) -> [UInt8] { Array(b[(p * 4)..<(p * 4 + 4)]) }
        #expect(dataPages.allSatisfy { page(theirs, $0) == page(wanted, $0) }, "nfc-mfultralight r reads what w wrote")
        #expect(mine.status == 0, "\(mine.stderr)")
        let ourPages = VirtualPN532Process.pages(try String(contentsOfFile: ours, encoding: .utf8))
        try #require(ourPages.count >= dataPages.upperBound, "\(file): nfcbench dump holds \(ourPages.count) pages")
        #expect(
            dataPages.allSatisfy { ourPages[$0] == page(wanted, $0).map { String(format: "%02X", $0) }.joined() },
            "nfcbench dump reads what nfc-mfultralight w wrote")
    }
}

extension MfultralightWitnessTests {
    @Test(
        "A tag file's tag_lost fault fires on the virtual PN532 for other clients too: nfc-mfultralight can't read it whole, nor can nfcbench dump",
        arguments: Witness.faultyFiles)
    func faultIsSeen(file: String) async throws {
        let folder = try TestFolder("mfu-fault")
        defer { folder.remove() }
        let link = folder.file("pn532")
        let (tool, mine) = try await Witness.serving(file, at: link) {
            let tool = try await Witness.run(
                "/usr/bin/nfc-mfultralight", ["r", folder.file("dump.mfd")],
                environment: ["LIBNFC_DEVICE": "pn532_uart:\(link)", "LIBNFC_AUTO_SCAN": "false"])
            let mine = try await NFCBench.run([
                "dump", "--device", "pn532_uart:\(link)", "--out", folder.file("dump.json"), "--wait", "2",
            ])
            return (tool, mine)
        }
        #expect(!tool.stdout.contains("(0 pages failed)"), "\(file): \(tool.stdout)")
        if file == "ntag215-flaky.json" {
            // Lost while page 8 is read: READ 0 and READ 4 answered (pages 0-7), nothing after,
            // as from a real tag pulled away (the tag stays out: once per load, FORMAT.md).
            #expect(tool.stdout.contains("Done, 8 of 135 pages read (127 pages failed)"), "\(tool.stdout)")
        }
        #expect(mine.status != 0, "\(file): \(mine.stderr)")
    }
}

@Suite(
    "nfcpy reads the same NDEF message as nfcbench from every Type 2, Type 3 and Type 4 tag file over the virtual PN532",
    .serialized,
    .enabled(
        if: Witness.isCI || Witness.nfcpyUsable,
        "needs .venv with nfcpy (scripts/install-deps) and root for the link in /dev; CI=true makes this a failure"))
struct NfcpyWitnessTests {
    @Test(
        "tty:<name>:pn532, a link in /dev made and removed by nfcbench virtual pn532",
        arguments: Witness.tagFiles + Witness.type3Files)
    func readsTheSameMessage(file: String) async throws {
        try #require(Witness.nfcpyUsable, ".venv/bin/python with nfcpy and a writable /dev are required")
        let shown = try await Witness.show(file)
        let name = "nfcbench-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let link = "/dev/\(name)"
        let script = NFCBench.packageRoot.appendingPathComponent("scripts/nfcpy-read-ndef.py").path
        // nfcpy gives the chip 100-250 ms per command while it opens the port (nfc/clf/pn532.py:
        // SAMConfiguration 0.1 s), less than a loaded 2-core machine may take to schedule the
        // virtual chip: an open that timed out (exit 3; nfcpy says ETIMEDOUT, or EIO when the
        // ACK read timed out, nfc/clf/pn53x.py `command`) is tried again, twice at most. The
        // read itself is never retried.
        let r = try await Witness.serving(file, at: link) {
            var r = try await Witness.run(Witness.python.path, [script, "tty:\(name):pn532"])
            for _ in 0..<2
            where r.status == 3 && (r.stderr.contains("timed out") || r.stderr.contains("Input/output error")) {
                r = try await Witness.run(Witness.python.path, [script, "tty:\(name):pn532"])
            }
            return r
        }
        #expect(!FileManager.default.fileExists(atPath: link), "the link in /dev is gone")
        try #require(r.status == 0, "\(file): \(r.stderr)")
        let read = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(read["ndef"] as? Bool == true, "\(file): \(r.stdout)")
        #expect(read["octets"] as? String == shown["ndef"] as? String, "\(file)")
        let theirs = (read["records"] as? [[String: Any]]) ?? []
        let ours = (shown["records"] as? [[String: Any]]) ?? []
        #expect(theirs.count == ours.count, "\(file)")
        if shown["type"] as? String == "felica_lite_s" {  // nfcpy's class from the PMm's IC code, the SC of the Polling
            let tag = read["tag"] as? String ?? ""
            #expect(
                tag.contains("Type3Tag 'FeliCa Lite-S (RC-S966)' ID=012E4CE445055B87") && tag.contains("SYS=12FC"),
                "\(file): \(tag)")
        }
        if shown["type"] as? String == "ultralight_c" {  // nfcpy's own 3DES (pyDes) against our AUTHENTICATE
            #expect(read["authenticated"] as? Bool == true, "\(file): \(r.stdout)")
        }
        for (t, o) in zip(theirs, ours) {
            #expect(t["tnf"] as? Int == o["tnf"] as? Int)
            let ourType = Data(((o["type"] as? String) ?? "").utf8).map { String(format: "%02X", $0) }.joined()
            #expect(t["type"] as? String == ourType)
            #expect(t["payload"] as? String == o["payload"] as? String)
        }
    }
}

@Suite(
    "nfcpy's tagtool.py show, dump and load against the virtual PN532, read back by nfcbench",
    .serialized,
    .enabled(
        if: Witness.isCI || (Witness.nfcpyUsable && FileManager.default.fileExists(atPath: Witness.tagtool.path)),
        "needs .venv with nfcpy, its sdist's examples/tagtool.py in .cache (scripts/install-deps) and root for the link in /dev; CI=true makes this a failure"
    ))
struct TagtoolWitnessTests {
    /// A message no shipped file holds: one URI record, `https://nfcpy.org/tagtool/<tag>`.
    static func message(_ tag: String) -> [UInt8] {
        let uri = Array("nfcpy.org/tagtool/\(tag.replacingOccurrences(of: ".json", with: ""))".utf8)
        return [0xD1, 0x01, UInt8(uri.count + 1), 0x55, 0x04] + uri
    }

    @Test(
        "show names the tag's record, dump -o holds its NDEF octets, load writes a new message nfcbench reads",
        arguments: ["ntag215-uri.json", "t4t-uri.json", "felica-lite-s-uri.json"])
    func showDumpLoad(file: String) async throws {
        try #require(Witness.nfcpyUsable, ".venv/bin/python with nfcpy and a writable /dev are required")
        try #require(
            FileManager.default.fileExists(atPath: Witness.tagtool.path), "scripts/install-deps unpacks tagtool.py")
        let shown = try await Witness.show(file)
        let folder = try TestFolder("tagtool")
        defer { folder.remove() }
        let name = "nfcbench-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let link = "/dev/\(name)"
        let new = Self.message(file)
        try Data(new).write(to: URL(fileURLWithPath: folder.file("new.ndef")))
        let tagtool = [Witness.tagtool.path, "--device", "tty:\(name):pn532"]
        let (show, dump, load, readBack) = try await Witness.serving(file, at: link) {
            // nfcpy gives the chip 100-250 ms per command while it opens the port (see the
            // nfcpy witness above): an open that failed is tried again, twice at most. tagtool
            // logs the open's timeout at debug level only and says "no contactless reader
            // available" (exit 1, examples/cli.py `run_once`): that line, with nothing read, is
            // the open failing; anything after the open is never retried.
            func tool(_ args: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
                var r = try await Witness.run(Witness.python.path, tagtool + args)
                func openFailed() -> Bool {
                    r.status != 0 && !r.stdout.contains("NDEF")
                        && (r.stderr.contains("timed out") || r.stderr.contains("no contactless reader available"))
                }
                for _ in 0..<2 where openFailed() {
                    r = try await Witness.run(Witness.python.path, tagtool + args)
                }
                return r
            }
            let show = try await tool(["show"])
            let dump = try await tool(["dump", "-o", folder.file("dump.ndef")])
            let load = try await tool(["load", folder.file("new.ndef")])
            let readBack = try await NFCBench.run([
                "session", "--device", "pn532_uart:\(link)", "--first-read", "--json", "--timeout", "10",
            ])
            return (show, dump, load, readBack)
        }
        #expect(!FileManager.default.fileExists(atPath: link), "the link in /dev is gone")
        #expect(show.status == 0, "\(file): \(show.stdout)\(show.stderr)")
        #expect(
            show.stdout.contains("NDEF Message:") && show.stdout.contains("type = 'urn:nfc:wkt:U'"), "\(show.stdout)")
        #expect(dump.status == 0, "\(file): \(dump.stderr)")
        let dumped = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder.file("dump.ndef"))))
        #expect(dumped.map { String(format: "%02X", $0) }.joined() == shown["ndef"] as? String, "\(file)")
        #expect(load.status == 0, "\(file): \(load.stdout)\(load.stderr)")
        #expect(load.stdout.contains("New NDEF Message:"), "\(load.stdout)")
        let records = readBack.stdout.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
        let detected = records.first { $0["event"]?.stringValue == "didDetectNDEFs" }
        #expect(
            detected?.serialized.contains("nfcpy.org/tagtool/\(file.replacingOccurrences(of: ".json", with: ""))")
                == true,
            "nfcbench reads what tagtool.py load wrote (\(file)): \(readBack.stdout)")
        #expect(records.last?["code"]?.intValue == 204)
    }
}
