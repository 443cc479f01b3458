import Foundation
import NFCBenchTestSupport
import NFCTrace
import Testing

/// The README's signal policy, through real processes: signals sent to the built binary.
@Suite("Signals: one policy for every long-running command", .serialized)
struct SignalPolicyTests {
    typealias Lines = LineReader

    struct Bench {
        let dir: URL
        var locks: String { dir.appendingPathComponent("locks").path }
        var env: [String: String] {
            ["NFCBENCH_LOCK_DIR": locks, "NFCBENCH_TRACE_DIR": dir.appendingPathComponent("traces").path]
        }
        init() throws {
            dir = FileManager.default.temporaryDirectory.appendingPathComponent("nfcbench-signals-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        }
        func cleanup() { try? FileManager.default.removeItem(at: dir) }
        /// Lock files left in the lock folder (`host.lock` stays by design).
        var readerLocks: [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: locks)) ?? [])
                .filter { $0.hasSuffix(".lock") && $0 != "host.lock" }
        }
    }

    static func records(_ lines: [String]) -> [JSONValue] {
        lines.compactMap { try? JSONValue(parsing: $0) }
    }

    /// Starts `session` on a reader that never sees a tag and waits until it is active.
    static func activeSession(_ bench: Bench) async throws -> (Process, Lines) {
        let (p, out, _) = try NFCBench.start(["session", "--device", "sim:no-tag", "--json"], environment: bench.env)
        let lines = Lines(out, of: p)
        #expect(await lines.wait { $0.contains { $0.contains("\"didBecomeActive\"") } })
        return (p, lines)
    }

    @Test(
        "SIGTERM and SIGHUP end a session with 202 'terminated by signal N' and a complete trace; exit 12; its lock file is gone",
        arguments: [SIGTERM, SIGHUP])
    func terminated(sig: Int32) async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        let (p, lines) = try await Self.activeSession(bench)
        #expect(bench.readerLocks.count == 1, "the session holds its reader's lock file")
        kill(p.processIdentifier, sig)
        // The claim is the status, not how fast: the bound only catches a hang.
        let end = await processEnd(of: p)
        #expect(
            end == .exited(12),
            "\(end.map(\.description) ?? "still running after 60 s"); last lines: \(lines.lines.suffix(3))")
        #expect(await lines.wait { $0.last?.contains("\"didInvalidateWithError\"") == true })
        let recs = Self.records(lines.lines)
        let ending = recs.last
        #expect(ending?["code"]?.intValue == 202)
        #expect(ending?["reason"]?.stringValue == "readerSessionInvalidationErrorSessionTerminatedUnexpectedly")
        #expect(ending?["cause"]?.stringValue == "terminated by signal \(sig)")
        let signal = recs.first { $0["event"]?.stringValue == "signal" }
        #expect(signal?["signal"]?.intValue == Int64(sig))
        #expect(signal?["reason"]?.stringValue == "terminated by signal \(sig)")
        #expect(recs.filter { $0["event"]?.stringValue == "didInvalidateWithError" }.count == 1)
        #expect(bench.readerLocks.isEmpty, "the released lock file is removed: \(bench.readerLocks)")
    }

    /// Runs `script` in bash with `$B` the binary and `$T` the trace path; expects it to print
    /// `exit 12` (the session's 202) and returns the trace's records.
    private static func pipedSession(_ script: String, bench: Bench, trace: String) async throws -> [JSONValue] {
        var env = bench.env
        env["B"] = NFCBench.binary.path
        env["T"] = trace
        let e = env
        let r = try await NFCBench.offPool {
            try NFCBench.runBlockingExecutable("/bin/bash", ["-c", script], environment: e, timeout: .seconds(30))
        }
        #expect(r.stdout.contains("exit 12"), "\(r.stdout)\n\(r.stderr)")
        return Self.records(try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").map(String.init))
    }

    @Test(
        "A reader of the output that goes away (session --json | head -2): SIGPIPE ends the session as SIGTERM does, trace complete, lock file gone"
    )
    func outputReaderGone() async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        let trace = bench.dir.appendingPathComponent("s.jsonl").path
        // head leaves after two lines, while the session is still beginning: the signal comes
        // before there is an active session to end, and must still end it (not the 60 s limit).
        let script = """
            "$B" session --device sim:no-tag --json --trace "$T" | head -2 >/dev/null
            echo "exit ${PIPESTATUS[0]}"
            """
        let recs = try await Self.pipedSession(script, bench: bench, trace: trace)
        let ending = recs.last
        #expect(ending?["event"]?.stringValue == "didInvalidateWithError", "\(recs)")
        #expect(ending?["code"]?.intValue == 202)
        #expect(ending?["cause"]?.stringValue == "terminated by signal \(SIGPIPE)")
        #expect(recs.first { $0["event"]?.stringValue == "signal" }?["name"]?.stringValue == "SIGPIPE")
        #expect(bench.readerLocks.isEmpty, "\(bench.readerLocks)")
    }

    @Test(
        "A reader of the output that goes away after the session is active, with no line left to write, still ends it with 202 at once (not at the 60 s limit)"
    )
    func outputReaderGoneWhileSilent() async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        let trace = bench.dir.appendingPathComponent("s.jsonl").path
        // The reader takes the lines up to didBecomeActive, then leaves: no tag comes, so the
        // session writes nothing more, and only a watch on the pipe can tell it is gone.
        let script = """
            "$B" session --device sim:no-tag --json --trace "$T" | while IFS= read -r line; do
              case "$line" in *'"didBecomeActive"'*) break ;; esac
            done
            echo "exit ${PIPESTATUS[0]}"
            """
        let recs = try await Self.pipedSession(script, bench: bench, trace: trace)
        let active = recs.firstIndex { $0["event"]?.stringValue == "didBecomeActive" }
        let signal = recs.firstIndex { $0["event"]?.stringValue == "signal" }
        #expect(active != nil && signal != nil && active! < signal!, "the signal after activation: \(recs)")
        #expect(recs.last?["code"]?.intValue == 202, "\(recs)")
        #expect(recs.last?["cause"]?.stringValue == "terminated by signal \(SIGPIPE)")
        #expect((recs.last?["t_us"]?.intValue ?? .max) < 20_000_000, "ended long before the time limit: \(recs)")
        #expect(bench.readerLocks.isEmpty, "\(bench.readerLocks)")
    }

    @Test("SIGTSTP followed at once by SIGCONT still ends the session with 202 (exit 12), once")
    func stopThenContinue() async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        for _ in 0..<3 {
            let (p, lines) = try await Self.activeSession(bench)
            kill(p.processIdentifier, SIGTSTP)
            kill(p.processIdentifier, SIGCONT)
            #expect(await SessionCLITests.exit(of: p) == 12)
            #expect(await lines.wait { $0.last?.contains("\"didInvalidateWithError\"") == true })
            let endings = Self.records(lines.lines).filter { $0["event"]?.stringValue == "didInvalidateWithError" }
            #expect(endings.count == 1)
            #expect(endings.first?["code"]?.intValue == 202)
            let cause = endings.first?["cause"]?.stringValue ?? ""
            #expect(cause.hasPrefix("SIGTSTP") || cause.hasPrefix("SIGCONT"), "\(cause)")
        }
    }

    /// The processes whose parent is `pid` (from `/proc/<pid>/stat`), with their command name.
    static func children(of pid: pid_t) -> [(pid: pid_t, comm: String)] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry in
            guard let child = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
            else { return nil }
            let rest = stat[stat.index(after: close)...].split(separator: " ")
            guard rest.count > 1, pid_t(rest[1]) == pid else { return nil }
            return (child, String(stat[stat.index(after: open)..<close]))
        }
    }

    /// True when `pid` is gone or a zombie (dead, not yet reaped by whoever adopted it).
    static func isDead(_ pid: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return true }
        return status.contains("State:\tZ")
    }

    /// The signal mask (`SigBlk`) of `pid`'s main thread, or nil.
    static func blocked(_ pid: pid_t) -> UInt64? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigBlk:") })
        else { return nil }
        return UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16)
    }

    @Test(
        "demo with its private pcscd: SIGINT is Done (200) for the running session, the demo stops (exit 10), and pcscd dies with it"
    )
    func demoPrivatePCSCDInterrupted() async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        let (p, out, err) = try NFCBench.start(["demo", "--timeout", "5"], environment: bench.env)
        let lines = Lines(out, of: p)
        let errors = Lines(err, of: p)
        if !(await lines.wait(timeout: .seconds(30), until: { $0.contains { $0.contains("session 2:") } })) {
            p.terminate()
            if !PrivateBench.isCI && errors.lines.contains(where: { $0.contains("no private pcscd") }) {
                try BenchPart.missing("no private pcscd for the demo: \(errors.lines)")
            }
            throw WaitFailed(description: "the demo did not reach session 2 in 30 s: \(lines.lines) \(errors.lines)")
        }
        let inner = try #require(Self.children(of: p.processIdentifier).first { $0.comm == "nfcbench" })
        let pcscd = try #require(Self.children(of: inner.pid).first { $0.comm == "pcscd" })
        // Children start with default masks: SIGINT (bit 1) and SIGTERM (bit 14) are not blocked.
        let interruptAndTerm: UInt64 = 1 << 1 | 1 << 14
        #expect((Self.blocked(pcscd.pid) ?? ~0) & interruptAndTerm == 0, "pcscd blocks \(Self.blocked(pcscd.pid) ?? 0)")
        kill(p.processIdentifier, SIGINT)
        #expect(await SessionCLITests.exit(of: p, timeout: .seconds(10)) == 10, "\(errors.lines)")
        _ = await poll(timeout: .seconds(2), every: .milliseconds(20)) { Self.isDead(pcscd.pid) }
        #expect(Self.isDead(pcscd.pid), "the private pcscd is gone within 2 s of the demo")
        #expect(Self.isDead(inner.pid))
        #expect(lines.lines.contains { $0.contains("didInvalidateWithError 200") && $0.contains("SIGINT") })
        #expect(lines.lines.contains { $0.contains("stopped by SIGINT") })
        #expect(!lines.lines.contains { $0.contains("session 3:") }, "the demo stops after the session")
    }

    @Test(
        "demo --bench pn532 in one process: SIGTERM ends the session with 202 (exit 12) and removes the pty link; SIGINT is Done (exit 10)",
        arguments: [SIGTERM, SIGINT])
    func demoPN532Signalled(sig: Int32) async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        let (p, out, err) = try NFCBench.start(
            ["demo", "--bench", "pn532", "--timeout", "5"], environment: bench.env)
        let lines = Lines(out, of: p)
        let errors = Lines(err, of: p)
        #expect(
            await lines.wait(timeout: .seconds(20)) { $0.contains { $0.contains("session 2:") } }, "\(errors.lines)")
        let presenting = lines.lines.first { $0.contains("presenting") } ?? ""
        let link = try #require(
            presenting.range(of: "pn532_uart:").map { String(presenting[$0.upperBound...]) }, "\(lines.lines)")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) != nil)
        kill(p.processIdentifier, sig)
        #expect(await SessionCLITests.exit(of: p) == (sig == SIGINT ? 10 : 12), "\(errors.lines)")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == nil, "\(link) is removed")
        let ending = sig == SIGINT ? "didInvalidateWithError 200" : "didInvalidateWithError 202"
        #expect(lines.lines.contains { $0.contains(ending) }, "\(lines.lines)")
        #expect(bench.readerLocks.isEmpty, "\(bench.readerLocks)")
    }

    @Test("virtual pn532: SIGHUP stops it cleanly and removes its link (exit 0)")
    func virtualPN532HangUp() async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        let link = bench.dir.appendingPathComponent("pn").path
        let (p, out, _) = try NFCBench.start(
            ["virtual", "pn532", "--pty", link, "--tag", "ntag215-uri"], environment: bench.env)
        // Its start line (none with --quiet) comes once it handles signals; before that a SIGHUP
        // kills it (the default), link removed too, but with the signal's status.
        let lines = Lines(out, of: p)
        #expect(await lines.wait { $0.contains { $0.contains("virtual PN532 on") } })
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) != nil)
        kill(p.processIdentifier, SIGHUP)
        #expect(await SessionCLITests.exit(of: p) == 0, "\(lines.lines)")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == nil)
    }

    /// Waits until measure's trace at `trace` holds 50 frames: its sampling loop runs (the tag's
    /// detection and reading take a few frames at most), so its signal handler is in place.
    static func waitForSampling(_ trace: String) async throws {
        try await wait(for: "50 sampled frames in \(trace)", timeout: .seconds(20), every: .milliseconds(10)) {
            let text = (try? String(contentsOfFile: trace, encoding: .utf8)) ?? ""
            return text.components(separatedBy: #""event":"frame""#).count > 50
        }
    }

    @Test(
        "Ctrl-C while measure still waits for its tag: death by SIGINT, and the trace is closed, not cut after its header"
    )
    func measureInterruptedWaiting() async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        let trace = bench.dir.appendingPathComponent("waiting.jsonl").path
        let (p, _, _) = try NFCBench.start(
            ["measure", "apdu", "--device", "sim:no-tag", "--count", "10", "--trace", trace], environment: bench.env)
        defer { if p.isRunning { p.terminate() } }
        try await wait(for: "the trace's header", timeout: .seconds(10)) {
            (try? String(contentsOfFile: trace, encoding: .utf8))?.contains(#""event":"header""#) == true
        }
        await pause(.milliseconds(100), because: "the reader registers its close-on-death a moment after the header")
        kill(p.processIdentifier, SIGINT)
        // The kernel's answer: Foundation's terminationReason may not be set yet (it traps then).
        #expect(await processEnd(of: p) == .signalled(SIGINT), "SIGINT's default: a shell shows 130")
        let records = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
            .compactMap { try? JSONValue(parsing: String($0)) }
        #expect(records.first?["event"]?.stringValue == "header")
        #expect(records.last?["event"]?.stringValue == "closed", "\(records)")
        #expect(records.last?["reason"]?.stringValue == "signal")
    }

    @Test("measure's text on Ctrl-C says how many samples of how many, grouped as its figures are")
    func measureInterruptedText() async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        let trace = bench.dir.appendingPathComponent("text.jsonl").path
        let (p, out, _) = try NFCBench.start(
            ["measure", "apdu", "--device", "sim:tap-t4t", "--count", "1000000", "--trace", trace],
            environment: bench.env)
        defer { if p.isRunning { p.terminate() } }
        let lines = Lines(out, of: p)
        try await Self.waitForSampling(trace)
        kill(p.processIdentifier, SIGINT)
        #expect(await SessionCLITests.exit(of: p) == 130)
        #expect(await lines.wait { $0.count >= 2 })
        let first = try #require(lines.lines.first)
        #expect(
            first.wholeMatch(of: /stopped by SIGINT after \d{1,3}(,\d{3})* of 1,000,000 samples; the figures so far:/)
                != nil, "\(first)")
    }

    @Test("measure on Ctrl-C prints the figures gathered so far and exits 130")
    func measureInterrupted() async throws {
        let bench = try Bench()
        defer { bench.cleanup() }
        let trace = bench.dir.appendingPathComponent("measure.jsonl").path
        let (p, out, _) = try NFCBench.start(
            ["measure", "apdu", "--device", "sim:tap-t4t", "--count", "1000000", "--json", "--trace", trace],
            environment: bench.env)
        defer { if p.isRunning { p.terminate() } }
        let lines = Lines(out, of: p)
        try await Self.waitForSampling(trace)
        kill(p.processIdentifier, SIGINT)
        #expect(await SessionCLITests.exit(of: p) == 130)
        #expect(await lines.wait { !$0.isEmpty })
        let figures = try #require(lines.lines.last.flatMap { try? JSONValue(parsing: $0) })
        #expect(figures["interrupted"]?.stringValue == "stopped by SIGINT")
        #expect(figures["requested"]?.intValue == 1_000_000)
        let count = figures["count"]?.intValue ?? 0
        #expect(count > 0 && count < 1_000_000, "\(figures)")
        if case .double(let median)? = figures["median_us"] {
            #expect(median > 0)
        } else {
            Issue.record("no median: \(figures)")
        }
        // The trace's measured record carries the same figures and says the run was cut short.
        let records = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
            .compactMap { try? JSONValue(parsing: String($0)) }
        let measured = try #require(records.last { $0["event"]?.stringValue == "measured" })
        #expect(measured["interrupted"]?.stringValue == "stopped by SIGINT", "\(measured)")
        #expect(measured["count"] == figures["count"] && measured["per_second"] == figures["per_second"])
        #expect(measured["timed"]?.stringValue == "transport")
    }
}

/// Lock files through real processes: one per reader, named by the device a pty link
/// resolves to, removed when free; a SIGKILLed holder's file goes with the next session.
@Suite("Reader lock files with the built binary", .serialized)
struct LockFileCLITests {
    @Test(
        "Two links to one virtual PN532 are one reader (203 through the second); afterwards no reader lock file is left"
    )
    func oneLockPerReader() async throws {
        let bench = try SignalPolicyTests.Bench()
        defer { bench.cleanup() }
        let link = bench.dir.appendingPathComponent("pn").path
        let other = bench.dir.appendingPathComponent("pn-again").path
        let (pn532, _, _) = try NFCBench.start(
            ["virtual", "pn532", "--pty", link, "--tag", "ntag215-uri", "--quiet"], environment: bench.env)
        defer { if pn532.isRunning { pn532.interrupt() } }
        try await waitForLink(link)
        try FileManager.default.createSymbolicLink(atPath: other, withDestinationPath: link)
        let (holder, out, _) = try NFCBench.start(
            ["session", "--device", "pn532_uart:\(link)", "--json"], environment: bench.env)
        let lines = LineReader(out, of: holder)
        #expect(await lines.wait(timeout: .seconds(15)) { $0.contains { $0.contains("\"didDetectNDEFs\"") } })
        let locks = bench.readerLocks
        #expect(locks.count == 1 && locks.first?.hasPrefix("pn532_uart__dev_pts_") == true, "\(locks)")
        let second = try await NFCBench.run(
            ["session", "--device", "pn532_uart:\(other)", "--json"], environment: bench.env)
        #expect(second.status == 13, "the same pty through another link is the same reader")
        #expect(bench.readerLocks == locks)
        kill(holder.processIdentifier, SIGKILL)
        _ = await SessionCLITests.exit(of: holder)
        #expect(bench.readerLocks == locks, "SIGKILL can't be caught: the file stays")
        let next = try await NFCBench.run(
            ["session", "--device", "pn532_uart:\(other)", "--first-read", "--json"], environment: bench.env,
            timeout: .seconds(30))
        #expect(next.status == 0, "\(next.stderr)")
        #expect(bench.readerLocks.isEmpty, "the next session removed it: \(bench.readerLocks)")
        pn532.interrupt()
        _ = await SessionCLITests.exit(of: pn532)
    }
}
