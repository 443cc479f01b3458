import Foundation
import NFCBenchTestSupport
import NFCTrace
import Testing

/// pcapng exports read by tshark, from real sessions on the virtual bench: libnfc's own
/// pn532_uart driver talking to the virtual PN532, and the real pcscd with the vpcd card;
/// and from the virtual devices' own traces while other people's clients (nfc-list,
/// nfc-mfultralight, scriptor) use them.
@Suite(
    "pcapng exports of sessions on the virtual bench, read by tshark", .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["CI"] == "true"
            || FileManager.default.fileExists(atPath: "/usr/bin/nfc-list")))
struct TraceExportDeviceTests {
    /// A virtual PN532 serving `tag`, a libnfc session on it with `--pcapng`, the export
    /// of its trace; returns tshark's view of the export (a missing tshark ends the test:
    /// ``BenchPart/missing(_:)``).
    static func libnfcSession(tag: String, mode: [String]) async throws -> (TsharkView, TsharkView) {
        let dir = try TraceCLITests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        func path(_ n: String) -> String { dir.appendingPathComponent(n).path }
        let link = path("pn532")
        let (pn532, _, _) = try NFCBench.start([
            "virtual", "pn532", "--pty", link, "--tag", tag, "--quiet", "--trace", path("pn532.jsonl"), "--pcapng",
            path("air.pcapng"),
        ])
        do { try await waitForLink(link) } catch {
            pn532.interrupt()
            throw error
        }
        let r = try await NFCBench.run(
            [
                "session", "--device", "pn532_uart:\(link)", "--json", "--timeout", "20", "--trace", path("s.jsonl"),
                "--pcapng", path("live.pcapng"),
            ] + mode,
            environment: TraceCLITests.env(dir))
        pn532.interrupt()
        _ = try await waitForProcessEnd(of: pn532)
        #expect(r.status == 0, "\(r.stderr)")
        let e = await InProcessCLI.run(["trace", "export", path("s.jsonl"), "--pcapng", path("s.pcapng")])
        #expect(e.status == 0, "\(e.stderr)")
        return (try await TsharkView.view(path("s.pcapng")), try await TsharkView.view(path("air.pcapng")))
    }

    @Test(
        "libnfc session on the virtual PN532, Type 4: anticollision, RATS/ATS, I-blocks, the NDEF SELECT, nothing malformed"
    )
    func libnfcType4() async throws {
        let (session, air) = try await Self.libnfcSession(tag: "t4t-uri", mode: ["--first-read"])
        TraceCLITests.expectISODEPSession(session)
        #expect(session.comments.contains { $0.contains("libnfc") && $0.contains("synthesized") })
        // The virtual PN532's own export of the same run: the air side as its chip saw it.
        TraceCLITests.expectISODEPSession(air)
        #expect(air.info.contains("Field on"))
    }

    @Test("libnfc session on the virtual PN532, Type 2: the READs are named in the comments")
    func libnfcType2() async throws {
        let (session, air) = try await Self.libnfcSession(tag: "ntag215-uri", mode: ["--first-read"])
        for v in [session, air] {
            #expect(v.comments.contains { $0.hasPrefix("READ page ") }, "\(v.comments)")
            #expect(v.any("iso14443.sel") { $0.contains("0x93") } && v.any("iso14443.sel") { $0.contains("0x95") })
            #expect(v.malformedFree)
        }
    }

    @Test("libnfc session on the virtual PN532, FeliCa: the session's and the chip's exports are FeliCa to tshark")
    func libnfcFeliCa() async throws {
        let (session, air) = try await Self.libnfcSession(tag: "felica-lite-s-uri", mode: ["--first-read"])
        TraceExportFamiliesTests.expectAllFeliCa(session, "session")
        #expect(session.comments.contains { $0.contains("synthesized from the target libnfc reports") })
        #expect(session.rows.contains { $0["felica.opcode"] == "0x06" && $0["felica.svc_code"] == "0x0b00" })
        // The chip's own export: its field events on the ISO 14443 interface, every frame on the FeliCa one.
        let frames = air.rows.filter { $0["frame.interface_id"] == "1" }
        #expect(frames.contains { $0["felica.opcode"] == "0x00" && $0["felica.sys_code"] == "0xffff" }, "\(air.info)")
        #expect(frames.allSatisfy { $0["frame.protocols"]?.hasPrefix("exported_pdu:felica") == true })
        let others = air.rows.filter { $0["frame.interface_id"] != "1" }
        #expect(others.allSatisfy { ($0["_ws.col.Info"] ?? "").hasPrefix("Field o") }, "\(air.info)")
        #expect(air.malformedFree)
    }

    @Test("PC/SC session on the vpcd card, Type 4: I-blocks and the NDEF SELECT (synthesized, and said so)")
    func pcscType4() async throws {
        let folder = try TestFolder("export")
        defer { folder.remove() }
        let r = try await PrivateBench.run(
            """
            "$B" virtual card --port 35963 --tag hardware/tags/t4t-uri.json --quiet --pcapng "$NFCBENCH_TRACE_DIR.card.pcapng" >/dev/null 2>&1 &
            card=$!
            sleep 1
            "$B" session --device "pcsc:Virtual PCD 00 00" --first-read --json --timeout 20 \
                --trace "$NFCBENCH_TRACE_DIR.jsonl" --pcapng "$NFCBENCH_TRACE_DIR.live.pcapng" >/dev/null
            echo "session exit $?"
            kill -INT $card; wait $card
            "$B" trace export "$NFCBENCH_TRACE_DIR.jsonl" --pcapng "$NFCBENCH_TRACE_DIR.pcapng"
            echo "export exit $?"
            echo "files $NFCBENCH_TRACE_DIR"
            """, in: folder)
        try PrivateBench.require(r)
        #expect(r.stdout.contains("session exit 0"), "\(r.stdout)\n\(r.stderr)")
        #expect(r.stdout.contains("export exit 0"))
        let base = String(try #require(r.stdoutLines.first { $0.hasPrefix("files ") }).dropFirst(6))
        let v = try await TsharkView.view(base + ".pcapng")
        TraceCLITests.expectISODEPSession(v, anticollisionSelect: false)
        #expect(v.comments.contains { $0.contains("PC/SC hides the block framing") })
        #expect(v.comments.contains { $0.contains("PC/SC hides REQA, SELECT and SAK") })
        let card = try await TsharkView.view(base + ".card.pcapng")
        #expect(card.info.contains("Field on") && card.info.contains("Field off"))
        #expect(card.rows.contains { $0["iso7816.apdu.body"] == "d2760000850101" })
        #expect(card.malformedFree)
    }

    @Test("The virtual PN532's pcapng while nfc-list and nfc-mfultralight use it: activation, READs, nothing malformed")
    func virtualPN532WithLibnfcTools() async throws {
        let dir = try TraceCLITests.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        func path(_ n: String) -> String { dir.appendingPathComponent(n).path }
        for (tag, tool, args) in [
            ("t4t-uri", "/usr/bin/nfc-list", [String]()),
            ("ntag215-uri", "/usr/bin/nfc-mfultralight", ["r", path("d.mfd")]),
        ] {
            let link = path("pn-\(tag)")
            let (pn532, _, _) = try NFCBench.start([
                "virtual", "pn532", "--pty", link, "--tag", tag, "--quiet", "--trace", path("\(tag).jsonl"),
                "--pcapng", path("\(tag).pcapng"),
            ])
            do { try await waitForLink(link) } catch {
                pn532.interrupt()
                throw error
            }
            let r = try await NFCBench.offPool { () -> Int32 in
                let p = Process()
                p.executableURL = URL(fileURLWithPath: tool)
                p.arguments = args
                p.environment = ["LIBNFC_DEVICE": "pn532_uart:\(link)", "PATH": "/usr/bin:/bin"]
                p.standardOutput = FileHandle.nullDevice
                p.standardError = FileHandle.nullDevice
                p.standardInput = FileHandle.nullDevice
                try p.run()
                p.waitUntilExit()
                return p.terminationStatus
            }
            #expect(r == 0, "\(tool)")
            pn532.interrupt()
            _ = try await waitForProcessEnd(of: pn532)
        }
        let t4 = try await TsharkView.view(path("t4t-uri.pcapng"))
        #expect(t4.info.contains("RATS") && t4.info.contains("ATS") && t4.info.contains("Anticollision"))
        #expect(t4.malformedFree)
        let t2 = try await TsharkView.view(path("ntag215-uri.pcapng"))
        #expect(
            t2.comments.filter { $0.hasPrefix("READ page ") }.count >= 34, "nfc-mfultralight reads 135 pages, 4 a READ")
        #expect(t2.comments.contains { $0.hasPrefix("GET_VERSION") }, "nfc-mfultralight asks for the version")
        #expect(t2.malformedFree)
        // The same trace exported afterwards gives the same packets.
        let e = await InProcessCLI.run(["trace", "export", path("ntag215-uri.jsonl"), "--pcapng", path("again.pcapng")])
        #expect(e.status == 0)
        let again = try await TsharkView.view(path("again.pcapng"))
        #expect(again.rows.count == t2.rows.count)
    }

    @Test("The vpcd storage card's pcapng while scriptor uses it: FF CA, FF B0, FF D6 as the reader's frames")
    func virtualCardWithScriptor() async throws {
        let folder = try TestFolder("export")
        defer { folder.remove() }
        let r = try await PrivateBench.run(
            """
            "$B" virtual card --port 35963 --tag hardware/tags/ntag215-uri.json --quiet --pcapng "$NFCBENCH_TRACE_DIR.pcapng" >/dev/null 2>&1 &
            card=$!
            sleep 1.5
            printf 'FF CA 00 00 00\\nFF B0 00 04 10\\nFF D6 00 10 04 01 02 03 04\\n' | scriptor -r "Virtual PCD 00 00" >/dev/null 2>&1
            echo "scriptor exit $?"
            kill -INT $card; wait $card
            echo "files $NFCBENCH_TRACE_DIR"
            """, in: folder)
        try PrivateBench.require(r)
        #expect(r.stdout.contains("scriptor exit 0"), "\(r.stdout)\n\(r.stderr)")
        let base = String(try #require(r.stdoutLines.first { $0.hasPrefix("files ") }).dropFirst(6))
        let v = try await TsharkView.view(base + ".pcapng")
        #expect(
            v.comments.contains {
                $0.hasPrefix("READ page 4 — synthesized: the PC/SC reader sends it for READ BINARY FF B0 00 04 10")
            })
        #expect(v.comments.contains { $0.hasPrefix("WRITE page 16 → ACK — synthesized") })
        #expect(v.info.contains("Anticollision"))
        #expect(v.malformedFree)
    }
}
