import Foundation
import NFCBenchTestSupport
import NFCTrace
import Testing

/// Issue 31, "The iPhone's Type 2 discovery is not modelled": `nfcbench session` plays the
/// probe of the public trace (proxmark3 `traces/hf_14a_mfu-sim.trace`) before it reports a
/// Type 2 tag, the same frames and outcome on `sim:`, the vpcd card behind the real pcscd and
/// the virtual PN532 behind the real libnfc; a tag file that answers `1A 00` wrongly is
/// never reported, as on an iPhone.
@Suite("The iPhone's Type 2 discovery probe in nfcbench session")
struct Type2ProbeTests {
    /// Every shipped Type 2 tag file.
    static let tags = [
        "ntag213-text", "ntag215-uri", "ntag215-flaky", "ntag216-empty", "ultralight-blank", "ultralight-c-text",
        "ntag215-probe-ack",
    ]

    /// The trace's order (each reselect is the device's), then the reselect for the app.
    static let traceOrder = [
        "READ 02", "1A 00", "HLTA", "WUPA + select", "GET_VERSION", "REQA + anticollision", "READ 02", "1A 00",
        "HLTA", "WUPA + select", "READ 03", "HLTA", "WUPA + select", "READ 02", "READ 04", "READ 04", "READ 04",
    ]

    /// What one session made of one tag: the probe's event, its steps, whether a message was
    /// delivered, and the exit status.
    struct Outcome: Equatable, CustomStringConvertible {
        var probe: String?
        var steps: [String]
        var delivered: Bool
        var exit: Int32

        var description: String { "\(probe ?? "no probe") exit \(exit) delivered \(delivered): \(steps)" }
    }

    static func records(_ text: String) -> [JSONValue] {
        text.split(separator: "\n").filter { $0.hasPrefix("{") }.compactMap { try? JSONValue(parsing: String($0)) }
    }

    static func outcome(_ stdout: String, exit: Int32) -> Outcome {
        let recs = records(stdout)
        let probe = recs.first { $0["event"]?.stringValue?.hasPrefix("type2Probe") == true }
        var steps: [String] = []
        if case .array(let a)? = probe?["steps"] {
            steps = a.map {
                "\($0["step"]?.stringValue ?? "?") \($0["frame"]?.stringValue ?? "?") → \($0["answer"]?.stringValue ?? "?")"
            }
        }
        let delivered = recs.contains { ["didDetectNDEFs", "didDetectTags"].contains($0["event"]?.stringValue ?? "") }
        return Outcome(probe: probe?["event"]?.stringValue, steps: steps, delivered: delivered, exit: exit)
    }

    static let session = ["--first-read", "--json", "--timeout", "4"]

    static func onSim(_ tag: String, _ extra: [String] = []) async throws -> (Outcome, [JSONValue]) {
        let dir = try TestFolder("probe-sim")
        defer { dir.remove() }
        let r = try await NFCBench.run(
            ["session", "--device", "sim:tag:\(tag)"] + session + extra,
            environment: ["NFCBENCH_LOCK_DIR": dir.file("locks"), "NFCBENCH_TRACE_DIR": dir.file("traces")])
        return (outcome(r.stdout, exit: r.status), records(r.stdout))
    }

    @Test("sim: the probe goes in the trace's order before the tag is reported, its modelled time later the read")
    func traceOrderOnSim() async throws {
        let (o, recs) = try await Self.onSim("ntag215-uri")
        #expect(o.probe == "type2ProbePassed", "\(o)")
        let names = o.steps.map {
            $0.components(separatedBy: " → ")[0].split(separator: " ").dropLast().joined(separator: " ")
        }
        #expect(Array(names.prefix(Self.traceOrder.count)) == Self.traceOrder, "\(o.steps)")
        // The message's READ (TLV 03 19 from page 4: pages 4-10), the closing HLTA, the reselect.
        #expect(Array(names.dropFirst(Self.traceOrder.count)) == ["READ 08", "HLTA", "REQA + anticollision"])
        #expect(o.steps.first == "READ 02 3002 → 16 bytes")
        #expect(o.steps[1] == "1A 00 1A00 → none")  // an NTAG215 NAKs it
        #expect(o.delivered && o.exit == 0, "\(o)")
        // Reported no sooner than the probe's time after the tag was detected.
        let detected = recs.first { $0["event"]?.stringValue == "detected" }?["t_us"]?.intValue ?? 0
        let reported = recs.first { $0["event"]?.stringValue == "didDetectNDEFs" }?["t_us"]?.intValue ?? 0
        #expect(reported - detected >= 683_299, "detected \(detected) µs, reported \(reported) µs")
        let probe = recs.first { $0["event"]?.stringValue == "type2ProbePassed" }
        #expect(probe?["duration_ms"] == .double(683.299), "\(String(describing: probe))")
        // The frames went to the tag: 1A 00 and HLTA are in the trace's frames, before the read's READ 00.
        let frames = recs.filter { $0["event"]?.stringValue == "frame" }.compactMap { $0["command"]?.stringValue }
        #expect(Array(frames.prefix(3)) == ["3002", "1A00", "5000"], "\(frames)")
        // The model's rows are in the header.
        #expect(recs.first?.serialized.contains("type2_probe_duration_s") == true)
    }

    @Test("sim: a tag file that ACKs 1A 00 is unreadable: never reported (201); --type2-probe off reads it")
    func misbehavingTagUnreadable() async throws {
        let (o, _) = try await Self.onSim("ntag215-probe-ack")
        #expect(o.probe == "type2ProbeUnreadable", "\(o)")
        #expect(o.steps.last == "1A 00 1A00 → ACK", "\(o)")
        #expect(!o.delivered && o.exit == 11, "\(o)")
        let (off, _) = try await Self.onSim("ntag215-probe-ack", ["--type2-probe", "off"])
        #expect(off.probe == nil && off.delivered && off.exit == 0, "\(off)")
        // A tag session does not deliver it either.
        let dir = try TestFolder("probe-sim-tag")
        defer { dir.remove() }
        let r = try await NFCBench.run(
            ["session", "--device", "sim:tag:ntag215-probe-ack", "--mode", "tag", "--json", "--timeout", "3"],
            environment: ["NFCBENCH_LOCK_DIR": dir.file("locks"), "NFCBENCH_TRACE_DIR": dir.file("traces")])
        let tagMode = Self.outcome(r.stdout, exit: r.status)
        #expect(tagMode.probe == "type2ProbeUnreadable" && !tagMode.delivered, "\(tagMode)\n\(r.stderr)")
    }

    /// The cases of ``sameOnEveryDevice(tag:)`` that run at once: each starts vpcd cards in a
    /// private pcscd and a virtual PN532.
    static let slots = Slots.busyRealParts

    /// Each tag file is a case of its own (its sessions one after another, the files side by
    /// side, a few at a time).
    @Test(
        "Every shipped Type 2 tag file: the same probe frames and outcome on sim:, the vpcd card (part 3, ACR122U) and the virtual PN532",
        arguments: tags)
    func sameOnEveryDevice(tag: String) async throws {
        try await Self.slots.run {
            let sim = try await Self.onSim(tag).0
            switch tag {
            case "ntag215-probe-ack": #expect(sim.probe == "type2ProbeUnreadable", "\(sim)")
            // An Ultralight C answers 1A 00 with AF and its 8-byte challenge, which the phone takes.
            case "ntag215-uri", "ultralight-c-text": #expect(sim.probe == "type2ProbePassed", "\(sim)")
            default: break
            }

            // The vpcd card behind a private pcscd, as a part 3 reader (FF C2) and as an ACR122U
            // (direct transmit): one card after another, one session each.
            var script = ""
            for personality in ["part3", "acr122u"] {
                script += """
                    "$B" virtual card --tag \(tag) --personality \(personality) --quiet >/dev/null 2>&1 &
                    card=$!
                    sleep 1
                    echo "=== \(tag) \(personality)"
                    "$B" session --device "pcsc:Virtual PCD 00 00" \(Self.session.joined(separator: " "))
                    echo "=== exit $?"
                    kill -INT $card; wait $card

                    """
            }
            let r = try await PrivateBench.run(script, timeout: .seconds(300))
            try PrivateBench.require(r)
            let vpcd = Self.split(r.stdout)
            #expect(vpcd["\(tag) part3"] == sim, "vpcd part3 \(tag): \(r.stderr)")
            #expect(vpcd["\(tag) acr122u"] == sim, "vpcd acr122u \(tag): \(r.stderr)")

            // The virtual PN532 behind the real libnfc pn532_uart driver.
            if !FileManager.default.fileExists(atPath: "/usr/bin/nfc-list") {
                try BenchPart.missing("libnfc is not installed (nfc-list)")
            }
            let pn532 = try await Self.onPN532(tag)
            #expect(pn532 == sim, "pn532 \(tag)")
        }
    }

    /// The `=== TAG` … `=== exit N` sections of the vpcd script's output.
    static func split(_ stdout: String) -> [String: Outcome] {
        var out: [String: Outcome] = [:]
        var tag: String?
        var lines: [String] = []
        for line in stdout.split(separator: "\n").map(String.init) {
            if line.hasPrefix("=== exit "), let t = tag {
                out[t] = outcome(lines.joined(separator: "\n"), exit: Int32(line.dropFirst(9)) ?? -1)
                tag = nil
            } else if line.hasPrefix("=== ") {
                tag = String(line.dropFirst(4))
                lines = []
            } else {
                lines.append(line)
            }
        }
        return out
    }

    static func onPN532(_ tag: String) async throws -> Outcome {
        let dir = try TestFolder("probe-pn532")
        let link = dir.file("pn532")
        let (pn532, _, _) = try NFCBench.start([
            "virtual", "pn532", "--pty", link, "--tag",
            NFCBench.packageRoot.appendingPathComponent("hardware/tags/\(tag).json").path, "--quiet",
        ])
        // The chip's process ends before its folder goes (the defers run last to first): a
        // folder removed while the chip still ran was left behind once in a loaded run.
        defer { dir.remove() }
        defer { if pn532.isRunning { pn532.interrupt() } }
        let r: NFCBench.Result
        do {
            try await waitForLink(link)
            r = try await NFCBench.run(
                ["session", "--device", "pn532_uart:\(link)"] + session,
                environment: ["NFCBENCH_LOCK_DIR": dir.file("locks"), "NFCBENCH_TRACE_DIR": dir.file("traces")])
        } catch {
            if pn532.isRunning { pn532.interrupt() }
            _ = await processEnd(of: pn532)
            throw error
        }
        pn532.interrupt()
        #expect(await processEnd(of: pn532) != nil, "the virtual PN532 ends on SIGINT")
        return outcome(r.stdout, exit: r.status)
    }
}
