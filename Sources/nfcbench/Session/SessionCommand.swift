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
        options: [
            DeviceOptions.device(
                help: """
                    sim:SCENARIO (hardware/scenarios/), sim:tag:FILE (a tag file in the
                    simulated field), pcsc:"READER NAME" (or pcsc:0, a piece of one name),
                    pn532_uart:PATH or another libnfc connstring ('nfcbench devices')
                    """),
            OptionSpec(
                "mode", .choice(SessionRunner.Mode.allCases.map(\.rawValue)), value: "M",
                help: """
                    ndef     NFCNDEFReaderSession, read-only: didDetectNDEFs
                    ndef-rw  NFCNDEFReaderSession with tag objects: connect, readNDEF,
                             restartPolling() for the next tag
                    tag      NFCTagReaderSession (ISO 14443), the same app behaviour
                    """, default: .text("ndef")),
            OptionSpec(
                "first-read", .flag,
                help: "invalidateAfterFirstRead: end with 204 after the first read\n(ndef mode only, as in Core NFC)"),
            OptionSpec(
                "timeout", .duration(bare: .seconds, moreThanZero: true),
                help: "the session's time limit (Core NFC: 60s)"),
            OptionSpec("no-thermal", .flag, help: "switch the thermal and quick-restart model off"),
            OptionSpec(
                "host-wide", .flag,
                help: """
                    lock every reader of this host, like one phone (default: per reader);
                    the thermal model's heat follows the lock: per reader, or per host
                    """),
            OptionSpec(
                "busy", .choice(ReaderSystemModel.BusyPolicy.allCases.map(\.rawValue)), value: "P",
                help: """
                    refuse: a session begun while another holds the reader ends at once
                    with 203, as NFCNDEFReaderSession.h's init discussion says; queue: it
                    waits in line, first come first served across processes, and begins
                    when the reader is free (the class note's FIFO queue). 203 is the
                    default because an app must handle 203 anyway and the seed article's
                    table gives it
                    """, default: .text("refuse")),
            OptionSpec(
                "select-identifiers", .list(of: nil), value: "AID,…",
                help: """
                    the app's Info.plist ISO 7816 select-identifiers for --mode tag
                    (default D2760000850101, the NFC Forum NDEF application);
                    sendCommand may SELECT by name only these (others: 2)
                    """),
            OptionSpec(
                "polling", .list(of: ["iso14443", "iso18092", "iso15693"]), value: "P,…",
                help: """
                    --mode tag: NFCTagReaderSession's polling options (iso18092 is
                    FeliCa, iso15693 vicinity tags); a tag of another family is not
                    delivered. Default iso14443
                    """),
            OptionSpec(
                "felica-system-codes", .list(of: nil), value: "SC,…",
                help: """
                    the app's Info.plist FeliCa system codes (4 hex digits each, no FF
                    byte; default 12FC): --polling iso18092 polls them in order and
                    delivers a card on the first that answers, none: not delivered
                    """),
            OptionSpec(
                "turnover-delay", .duration(bare: .seconds, moreThanZero: false),
                help: "from the app's invalidate() to didInvalidateWithError\n(reported; 0: at once, the model before)",
                default: .duration(.milliseconds(2500))),
            OptionSpec(
                "same-app-begin", .choice(ReaderSystemModel.SameAppBegin.allCases.map(\.rawValue)), value: "P",
                help: """
                    kick-out (reported): a begin() while the same app's
                    session runs ends that one with 202; busy-policy: as --busy
                    """, default: .text("kick-out")),
            OptionSpec(
                "mifare-crc", .choice(ReaderSystemModel.MiFareCRC.allCases.map(\.rawValue)), value: "C",
                help: """
                    either: sendMiFareCommand takes a Type 2 frame with
                    its CRC_A appended (Apple's page) or without (field reports);
                    appended: only with; omitted: only without (the model before)
                    """, default: .text("either")),
            OptionSpec(
                "type2-probe", .choice(Type2ProbeModel.allCases.map(\.rawValue)), value: "P",
                help: """
                    iphone (reported-inferred): the iPhone's Type 2 discovery
                    (READ 02, 1A 00, HLTA, WUPA…, 0.69 s) before a Type 2 tag is
                    reported; a tag that mishandles it is never reported. off: no
                    frame before the tag is reported (the model before)
                    """, default: .text("iphone")),
            OptionSpec(
                "entitlement", .list(of: nil), value: "F,…",
                help: """
                    the app's com.apple.developer.nfc.readersession.formats:
                    NDEF, TAG (default both); a session of another format gets 2
                    """),
            OptionSpec(
                "no-usage-description", .flag,
                help: "the Info.plist has no NFCReaderUsageDescription: the\nsession runs, no tag is ever delivered"),
            OptionSpec(
                "nfc", .choice(ReaderSystemModel.NFCAvailability.allCases.map(\.rawValue)), value: "S",
                help: """
                    available, radio-disabled (6), ineligible (7),
                    access-not-accepted (8): what begin() meets
                    """, default: .text("available")),
            OptionSpec("alert-message", value: "T", help: "the sheet's text"),
            OptionSpec("verbose", .flag, help: "also show frames and tag operations"),
            OptionSpec(
                "presence-interval", .duration(bare: .milliseconds, moreThanZero: true), value: "MS",
                help: "PC/SC presence-check interval", default: .duration(.milliseconds(250)),
                in: Duration.milliseconds(10)...Duration.seconds(10)),
            OutputOptions.json("JSON Lines on stdout: the trace's records (t_us, event, code, reason…)"),
        ] + Traces.Options.table(),
        discussion: """
            Ctrl-C is the sheet's Done (200). Ctrl-Z or SIGTSTP is leaving the foreground: the
            session ends with 202, then the process stops if it is the terminal's foreground job;
            nothing restarts on SIGCONT. A second session on the same reader, in this process or
            another, is refused at once with 203 (or waits, with --busy queue).
            """,
        footer: """
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
        validate: { o throws(CLIError) in _ = try options(o) },
        run: { o in
            let device = o.string("device")!
            var options = try options(o)
            var traceOptions = try Traces.Options(o)
            traceOptions.json = options.json
            var factory = DeviceFactory.Options()
            factory.presenceInterval = o.has("presence-interval") ? o.duration("presence-interval") : nil

            let inputs = BenchDevice.inputFiles(device)
            try Outputs.refuseSameFiles(outputs: traceOptions.outputs, inputs: inputs)
            let backend = try DeviceFactory.backend(device, options: factory)
            let trace = try Traces.open(
                command: "session", device: device, model: SessionRunner.headerModel(options), options: traceOptions,
                inputs: inputs, touchesHardware: !device.hasPrefix("sim:"))
            // --quiet, or stdout a file (--trace -): no live line either.
            options.statusLine = Output.stdoutIsTerminal && !Output.quiet && !Output.linesOnStandardError
            let ending = await SessionRunner(backend: backend, options: options, trace: trace).run()
            trace.close()
            if !options.json, let path = trace.path { Output.out("trace: \(path)") }
            return ending.exitStatus
        })

    /// The session's options, checked: `--first-read` only with `--mode ndef`, each AID 5 to 16
    /// bytes of hex.
    static func options(_ o: ParsedOptions) throws(CLIError) -> SessionRunner.Options {
        _ = try Traces.Options(o)
        var options = SessionRunner.Options()
        options.mode = SessionRunner.Mode(rawValue: o.string("mode")!)!
        options.firstRead = o.flag("first-read")
        if options.firstRead && options.mode != .ndef {
            throw CLIError.usage("--first-read is Core NFC's invalidateAfterFirstRead: only for --mode ndef")
        }
        if let t = o.duration("timeout") { options.timeLimit = t }
        options.thermal = !o.flag("no-thermal")
        options.hostWide = o.flag("host-wide")
        options.busy = ReaderSystemModel.BusyPolicy(rawValue: o.string("busy")!)!
        if let list = o.list("select-identifiers") {
            var aids: [String] = []
            for word in list {
                guard let b = [UInt8](hex: word), (5...16).contains(b.count) else {
                    throw CLIError.usage("--select-identifiers: '\(word)' is not a hex AID of 5 to 16 bytes")
                }
                aids.append(word.uppercased())
            }
            options.selectIdentifiers = aids
        }
        if let list = o.list("polling") {
            var polling: NFCPollingOption = []
            for word in list {
                switch word {
                case "iso14443": polling.insert(.iso14443)
                case "iso18092": polling.insert(.iso18092)
                default: polling.insert(.iso15693)
                }
            }
            options.polling = polling
        }
        if let list = o.list("felica-system-codes") {
            for word in list where [UInt8](hex: word)?.count != 2 {
                throw CLIError.usage("--felica-system-codes: '\(word)' is not a 2-byte hex system code (12FC)")
            }
            options.feliCaSystemCodes = list.map { $0.uppercased() }
        }
        if o.has("turnover-delay") { options.invalidationDelay = o.duration("turnover-delay")! }
        if o.has("same-app-begin") { options.sameAppBegin = .init(rawValue: o.string("same-app-begin")!)! }
        if o.has("mifare-crc") { options.miFareCRC = .init(rawValue: o.string("mifare-crc")!)! }
        if o.has("type2-probe") { options.type2Probe = .init(rawValue: o.string("type2-probe")!)! }
        if let list = o.list("entitlement") {
            var formats: Set<ReaderSystemModel.ReaderSessionFormat> = []
            for word in list {
                guard let f = ReaderSystemModel.ReaderSessionFormat(rawValue: word.uppercased()) else {
                    throw CLIError.usage("--entitlement takes a comma-separated list of NDEF, TAG, not '\(word)'")
                }
                formats.insert(f)
            }
            options.readerSessionFormats = formats
        }
        options.hasUsageDescription = !o.flag("no-usage-description")
        if o.has("nfc") { options.availability = .init(rawValue: o.string("nfc")!)! }
        if let a = o.string("alert-message") { options.alertMessage = a }
        options.json = o.flag("json")
        options.verbose = o.flag("verbose")
        return options
    }
}
