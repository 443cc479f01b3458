import Foundation
import NFCBenchKit
import NFCFiles
import NFCHardware
import NFCTrace
import ReaderSession

/// `nfcbench session`: an iPhone-faithful Core NFC reader session on a reader.
enum SessionCommand {
    static let command = Command(
        path: ["session"],
        abstract: "Run a Core NFC reader session on a reader (real, virtual or simulated)",
        usage:
            "session --device D [--mode ndef|ndef-rw|tag] [--first-read] [--timeout S] [--host-wide] [--busy refuse|queue] [--turnover-delay S] [--mifare-crc either|appended|omitted] [--entitlement F,…] [--no-usage-description] [--nfc S] [--json] [--trace PATH | --no-trace] [--pcapng OUT] [--redact]",
        help: """
            OPTIONS:
              --device D          sim:SCENARIO (hardware/scenarios/), sim:tag:FILE (a tag file in the
                                  simulated field), pcsc:"READER NAME", pn532_uart:PATH or another
                                  libnfc connstring ('nfcbench devices')
              --mode M            ndef     NFCNDEFReaderSession, read-only: didDetectNDEFs (default)
                                  ndef-rw  NFCNDEFReaderSession with tag objects: connect, readNDEF,
                                           restartPolling() for the next tag
                                  tag      NFCTagReaderSession (ISO 14443), the same app behaviour
              --first-read        invalidateAfterFirstRead: end with 204 after the first read
                                  (ndef mode only, as in Core NFC)
              --timeout S         the session's time limit in seconds (Core NFC: 60)
              --no-thermal        switch the thermal and quick-restart model off
              --host-wide         lock every reader of this host, like one phone (default: per reader);
                                  the thermal model's heat follows the lock: per reader, or per host
              --busy P            refuse (default): a session begun while another holds the reader
                                  ends at once with 203, as NFCNDEFReaderSession.h's init discussion
                                  says; queue: it waits in line, first come first served across
                                  processes, and begins when the reader is free (the class note's
                                  FIFO queue). 203 is the default because an app must handle 203
                                  anyway and the seed article's table gives it
              --select-identifiers AID,…   the app's Info.plist ISO 7816 select-identifiers for
                                  --mode tag (default D2760000850101, the NFC Forum NDEF application);
                                  sendCommand may SELECT by name only these (others: 2)
              --turnover-delay S  seconds from the app's invalidate() to didInvalidateWithError
                                  (default 2.5, reported; 0: at once, the model before)
              --same-app-begin P  kick-out (default, reported): a begin() while the same app's
                                  session runs ends that one with 202; busy-policy: as --busy
              --mifare-crc C      either (default): sendMiFareCommand takes a Type 2 frame with
                                  its CRC_A appended (Apple's page) or without (field reports);
                                  appended: only with; omitted: only without (the model before)
              --entitlement F,…   the app's com.apple.developer.nfc.readersession.formats:
                                  NDEF, TAG (default both); a session of another format gets 2
              --no-usage-description   the Info.plist has no NFCReaderUsageDescription: the
                                  session runs, no tag is ever delivered
              --nfc S             available (default), radio-disabled (6), ineligible (7),
                                  access-not-accepted (8): what begin() meets
              --alert-message T   the sheet's text
              --json              JSON Lines on stdout: the trace's records (t_us, event, code, reason…)
              --trace PATH        write the trace here (default: see README "Traces")
              --pcapng OUT        also write the frames as they happen to OUT, a pcapng file for
                                  Wireshark (LINKTYPE_ISO_14443; 'nfcbench trace export' makes
                                  one from any trace later)
              --redact            replace UIDs, payloads and what was decoded from them in the
                                  trace, the output and the pcapng file
              --verbose           also show frames and tag operations
              --presence-interval MS   PC/SC presence-check interval (default 250)

            Ctrl-C is the sheet's Done (200). Ctrl-Z or SIGTSTP is leaving the foreground: the
            session ends with 202, then the process stops if it is the terminal's foreground job;
            nothing restarts on SIGCONT. A second session on the same reader, in this process or
            another, is refused at once with 203 (or waits, with --busy queue).

            MODEL (every number and rule, with its source; the trace header's "model" has them):
            \(SessionRunner.facts(SessionRunner.Options()).table(indent: "  "))

            EXIT STATUS:
              0   204 (first read), or Done (200) after at least one read
              10  Done (200) with nothing read     11  timeout (201)
              12  left the foreground (202)        13  system busy (203)
              14  too hot (203 from the thermal model; 13 before; --no-thermal on a lab bench)
              1   any other ending (1-8, 100-105, 300, 400-403) or a failure
              64  usage error                      69  the device or its service is missing
            """,
        run: { args in
            guard let device = try args.device() else {
                throw CLIError.usage("--device is required (or set NFCBENCH_DEVICE)")
            }
            var options = SessionRunner.Options()
            if let m = try args.option("mode") {
                guard let mode = SessionRunner.Mode(rawValue: m) else {
                    throw CLIError.usage(
                        "--mode is one of \(SessionRunner.Mode.allCases.map(\.rawValue).joined(separator: ", ")), not '\(m)'"
                    )
                }
                options.mode = mode
            }
            options.firstRead = args.flag("first-read")
            if options.firstRead && options.mode != .ndef {
                throw CLIError.usage("--first-read is Core NFC's invalidateAfterFirstRead: only for --mode ndef")
            }
            if let t = try args.seconds("timeout", moreThanZero: true) { options.timeLimit = t }
            options.thermal = !args.flag("no-thermal")
            options.hostWide = args.flag("host-wide")
            if let b = try args.option("busy") {
                guard let p = ReaderSystemModel.BusyPolicy(rawValue: b) else {
                    throw CLIError.usage("--busy is refuse or queue, not '\(b)'")
                }
                options.busy = p
            }
            if let list = try args.option("select-identifiers") {
                var aids: [String] = []
                for word in list.split(separator: ",") where !word.isEmpty {
                    guard let b = [UInt8](hex: word), (5...16).contains(b.count) else {
                        throw CLIError.usage("--select-identifiers: '\(word)' is not a hex AID of 5 to 16 bytes")
                    }
                    aids.append(word.uppercased())
                }
                options.selectIdentifiers = aids
            }
            if let d = try args.seconds("turnover-delay") { options.invalidationDelay = d }
            if let p = try args.option("same-app-begin") {
                guard let v = ReaderSystemModel.SameAppBegin(rawValue: p) else {
                    throw CLIError.usage("--same-app-begin is kick-out or busy-policy, not '\(p)'")
                }
                options.sameAppBegin = v
            }
            if let c = try args.option("mifare-crc") {
                guard let v = ReaderSystemModel.MiFareCRC(rawValue: c) else {
                    throw CLIError.usage("--mifare-crc is either, appended or omitted, not '\(c)'")
                }
                options.miFareCRC = v
            }
            if let list = try args.option("entitlement") {
                var formats: Set<ReaderSystemModel.ReaderSessionFormat> = []
                for word in list.split(separator: ",") where !word.isEmpty {
                    guard let f = ReaderSystemModel.ReaderSessionFormat(rawValue: word.uppercased()) else {
                        throw CLIError.usage("--entitlement lists NDEF and TAG, not '\(word)'")
                    }
                    formats.insert(f)
                }
                options.readerSessionFormats = formats
            }
            options.hasUsageDescription = !args.flag("no-usage-description")
            if let n = try args.option("nfc") {
                guard let v = ReaderSystemModel.NFCAvailability(rawValue: n) else {
                    throw CLIError.usage(
                        "--nfc is one of \(ReaderSystemModel.NFCAvailability.allCases.map(\.rawValue).joined(separator: ", ")), not '\(n)'"
                    )
                }
                options.availability = v
            }
            if let a = try args.option("alert-message") { options.alertMessage = a }
            options.json = args.flag("json")
            options.verbose = args.flag("verbose")
            var traceOptions = try Traces.Options.parse(&args)
            traceOptions.json = options.json
            var factory = DeviceFactory.Options()
            if let ms = try args.int("presence-interval", in: 10...10_000) {
                factory.presenceInterval = .milliseconds(ms)
            }
            try args.finish()

            let inputs = BenchDevice.inputFiles(device)
            try Outputs.refuseSameFiles(outputs: traceOptions.outputs, inputs: inputs)
            let backend = try DeviceFactory.backend(device, options: factory)
            let trace = try Traces.open(
                command: "session", device: device, model: SessionRunner.headerModel(options), options: traceOptions,
                inputs: inputs, touchesHardware: !device.hasPrefix("sim:"))
            options.statusLine = Output.stdoutIsTerminal
            let ending = await SessionRunner(backend: backend, options: options, trace: trace).run()
            trace.close()
            if !options.json, let path = trace.path { Output.out("trace: \(path)") }
            return ending.exitStatus
        })
}
