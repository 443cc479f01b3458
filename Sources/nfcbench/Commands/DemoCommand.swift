import Foundation
import NFCHardware
import NFCTags
import NFCTrace
import ReaderSession
import VirtualHardware

/// `nfcbench demo`: the main job on the virtual bench, with no hardware.
///
/// Picks a bench — a private pcscd (through `scripts/with-pcscd`: own mount and network
/// namespace, the project's vpcd reader) when it may, else a running pcscd's vpcd reader,
/// else the virtual PN532 on a pseudo-terminal (libnfc, no daemon) — presents a tag from
/// `hardware/tags/`, and runs three sessions the way an app would: a first read (decoded
/// NDEF, 204), a session cut by a short timeout (201), and a second session refused while
/// another is active (203). Every line printed is rendered from a trace record; the trace's
/// path is printed last.
enum DemoCommand {
    static let command = Command(
        path: ["demo"],
        abstract: "The main job on the virtual bench: a first read (204), a timeout (201), a busy reader (203)",
        usage: "demo [--tag NAME] [--bench auto|pcscd|pn532] [--timeout S] [--json] [--trace PATH] [--pcapng OUT]",
        help: """
            OPTIONS:
              --tag NAME     the tag to present (hardware/tags/; default t4t-uri on PC/SC,
                             ntag215-uri on the PN532)
              --bench B      auto (default): a private pcscd when possible, else a running
                             pcscd's "Virtual PCD 00 00", else the virtual PN532;
                             pcscd / pn532 force one
              --timeout S    the short time limit of the second session (default 2)
              --json         print the trace's records as JSON Lines instead of text
              --trace PATH   write the trace there (default: the trace folder, README "Traces")
              --pcapng OUT   also write the frames to OUT for Wireshark (see 'nfcbench trace export')

            Needs, for the PC/SC bench: pcscd and vsmartcard-vpcd (and unshare, ip for a
            private pcscd); for the PN532 bench: libnfc6. './bench demo' installs them.
            Exit status: 0 when the three sessions end with 204, 201 and 203 as expected.
            """,
        run: { args in
            let tag = try args.option("tag")
            let benchChoice = try args.option("bench") ?? "auto"
            guard ["auto", "pcscd", "pn532"].contains(benchChoice) else {
                throw CLIError.usage("--bench is auto, pcscd or pn532")
            }
            let shortLimit = try args.seconds("timeout") ?? .seconds(2)
            let json = args.flag("json")
            var traceOptions = try Traces.Options.parse(&args, redact: false)
            traceOptions.json = json
            try args.finish()
            let env = ProcessInfo.processInfo.environment

            // 1. A private pcscd: re-run this command inside scripts/with-pcscd.
            if env["NFCBENCH_PCSCD"] != "private", benchChoice != "pn532", let script = withPCSCDScript(),
                !vpcdReaderAvailable()
            {
                let status = reexecUnderPrivatePCSCD(script: script)
                if status != 69 || benchChoice == "pcscd" { return status }
                // 69: the private bench can't be had here (no unshare, pcscd or vpcd): fall through.
            }
            // 2. Pick the bench and present the tag (its lines go to the trace, which names the device).
            var device: String
            var stop: @Sendable () -> Void
            var benchLines: [String] = []
            if benchChoice != "pn532", vpcdReaderAvailable() {
                let name = tag ?? "t4t-uri"
                let path = try DataLocation.require(name, in: "tags")
                let personality: any VirtualCardPersonality
                do { personality = try TagFile.load(path: path).makeVirtualCardPersonality() } catch let error
                    as DataFileError
                {
                    throw CLIError(error)
                } catch {
                    throw CLIError.data("\(path): \(error)")
                }
                // A shared pcscd's vpcd reader may be in reversed mode (hardware/pcsc-loopback):
                // then vpcd connects to the card, which listens on 127.0.0.1.
                var configuration = VirtualCard.Configuration(port: 35963)
                configuration.reversed =
                    env["NFCBENCH_PCSCD"] != "private"
                    && BenchDoctor(root: "/", uid: getuid(), groups: [], environment: [:]).vpcdEntries()
                        .contains { $0.host?.hasPrefix("127.") == true }
                let card = VirtualCard(personality: personality, configuration: configuration)
                card.start()
                device = "pcsc:Virtual PCD 00 00"
                stop = { card.stop() }
                benchLines.append(
                    env["NFCBENCH_PCSCD"] == "private"
                        ? "bench: a private pcscd (own mount and network namespace) with the vpcd reader 'Virtual PCD 00 00'"
                        : "bench: the running pcscd's vpcd reader 'Virtual PCD 00 00'")
                benchLines.append("presenting \(name) as a virtual card on vpcd (TCP 35963)")
            } else if benchChoice != "pcscd" {
                let name = tag ?? "ntag215-uri"
                do {
                    (device, stop) = try LibNFCDevices.startVirtualBench(tag: name)
                } catch let e as CLIError {
                    throw e
                } catch {
                    throw CLIError.unavailable(
                        """
                        no virtual bench can be had here: \(error)
                        PC/SC bench: needs pcscd and vsmartcard-vpcd (plus unshare and ip for a private pcscd)
                        PN532 bench: needs libnfc6 and a pseudo-terminal; './bench demo' installs what is missing
                        """)
                }
                benchLines.append(
                    benchChoice == "pn532"
                        ? "bench: the virtual PN532 on a pseudo-terminal, through libnfc's pn532_uart driver (no daemon)"
                        : "bench: no pcscd could be had; the virtual PN532 on a pseudo-terminal, through libnfc's pn532_uart driver"
                )
                benchLines.append("presenting \(name) on \(device)")
            } else {
                throw CLIError.unavailable(
                    "no pcscd with a 'Virtual PCD 00 00' reader: install pcscd and vsmartcard-vpcd, or use --bench pn532"
                )
            }
            defer { stop() }
            // The demo sets its own limits and switches the thermal model off; the header says why.
            var demoOptions = SessionRunner.Options()
            demoOptions.thermal = false
            demoOptions.timeLimit = .seconds(20)
            demoOptions.thermalOffReason = DemoCommand.thermalOffReason
            var demoModel = SessionRunner.headerModel(demoOptions)
            demoModel["short_time_limit_s"] = .double(BenchCommand.seconds(shortLimit))
            let trace = try Traces.open(command: "demo", device: device, model: demoModel, options: traceOptions)
            defer { trace.close() }
            let say: @Sendable (String) -> Void = { text in
                var o: JSONObject = ["t_us": .int(trace.elapsedMicroseconds), "event": "demo"]
                o["message"] = .string(text)
                trace.emit(o)
                if !json, let line = TraceLines.render(o) { Output.out(line) }
            }
            for line in benchLines { say(line) }

            let backend = try DeviceFactory.backend(device)
            var options = SessionRunner.Options()
            options.json = json
            options.thermal = false
            options.thermalOffReason = DemoCommand.thermalOffReason
            say("time limits: the demo's own (20 s, and a short one); " + DemoCommand.thermalOffReason)

            // 3. A first read: the decoded NDEF, then 204.
            say("session 1: NFCNDEFReaderSession(invalidateAfterFirstRead: true) - hold the tag")
            options.firstRead = true
            options.timeLimit = .seconds(20)
            let first = await SessionRunner(backend: backend, options: options, trace: trace).run()

            // 4. A session cut by a short time limit: 201.
            say(
                "session 2: the same session type without first-read and a \(String(format: "%.1f", BenchCommand.seconds(shortLimit))) s time limit"
            )
            options.firstRead = false
            options.timeLimit = shortLimit
            options.sessionNumberOffset = 1
            let second = await SessionRunner(backend: backend, options: options, trace: trace).run()

            // 5. Busy: a session is active; a second one on the same reader is refused (203).
            say("session 3: a session is active; a second session on the same reader begins")
            options.timeLimit = .seconds(20)
            options.sessionNumberOffset = 2
            let holder = SessionRunner(backend: backend, options: options, trace: trace)
            async let held = holder.run()
            for _ in 0..<400 where holder.system.activeSessionCount == 0 {
                try? await Task.sleep(for: .milliseconds(5))
            }
            options.sessionNumberOffset = 3
            let busy = await SessionRunner(backend: backend, options: options, trace: trace).run()
            say("the user taps Done on the first sheet")
            holder.system.userTappedDone()
            let done = await held

            let ok =
                first.code == .readerSessionInvalidationErrorFirstNDEFTagRead
                && second.code == .readerSessionInvalidationErrorSessionTimeout
                && busy.code == .readerSessionInvalidationErrorSystemIsBusy
            say(
                "endings: \(first.code.rawValue), \(second.code.rawValue), \(busy.code.rawValue) (and \(done.code.rawValue) for the held session)"
                    + (ok ? " - as expected" : " - expected 204, 201, 203"))
            trace.close()
            if !json, let path = trace.path { Output.out("trace: \(path)") }
            return ok ? 0 : 1
        })

    /// Why the demo's limits are not the thermal model's (said on screen and in the trace header).
    static let thermalOffReason =
        "the thermal model is off so that its heat does not shorten the three sessions; Core NFC's own limit is 60 s"

    /// `scripts/with-pcscd` beside the bench data (a clone), if there is one.
    static func withPCSCDScript() -> String? {
        guard let hw = DataLocation.hardwareDirectory() else { return nil }
        let script = URL(fileURLWithPath: hw).deletingLastPathComponent().appendingPathComponent("scripts/with-pcscd")
            .path
        return FileManager.default.isExecutableFile(atPath: script) ? script : nil
    }

    /// True when a pcscd answers and lists the vpcd reader "Virtual PCD 00 00".
    static func vpcdReaderAvailable() -> Bool {
        guard let ctx = try? PCSCContext(), let readers = try? ctx.readers() else { return false }
        return readers.contains("Virtual PCD 00 00")
    }

    /// Runs this same command under `with-pcscd` and returns its exit status (69 when the
    /// private bench is missing).
    static func reexecUnderPrivatePCSCD(script: String) -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = [script, DataLocation.executablePath()] + Array(CommandLine.arguments.dropFirst())
        p.standardInput = FileHandle.nullDevice
        var env = ProcessInfo.processInfo.environment
        env["PCSCD_LOG"] = "/dev/null"
        p.environment = env
        let quiet = Pipe()
        p.standardError = quiet  // with-pcscd's own complaints; the demo's stderr is relayed below
        do { try p.run() } catch { return 69 }
        let err = quiet.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        if p.terminationStatus != 69, !err.isEmpty { FileHandle.standardError.write(err) }
        return p.terminationStatus
    }
}
