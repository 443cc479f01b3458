import Foundation
import NFCBenchKit
import NFCFiles
import NFCTags
import VirtualHardware

/// `nfcbench virtual pn532`: a virtual PN532 on a pty serving a tag file through the real
/// NFCTags cores, for libnfc clients (ours, nfc-list, nfc-poll, nfc-mfultralight).
enum VirtualPN532Command {
    static let command = Command(
        path: ["virtual", "pn532"],
        abstract: "Run a virtual PN532 on a pseudo-terminal serving a tag file (libnfc pn532_uart)",
        options: [
            OptionSpec("pty", value: "PATH", help: "the symlink to make to the pty (- for none)", required: true),
            OptionSpec(
                "tag", value: "FILE", help: "the tag to serve (our JSON, a Flipper .nfc, a Proxmark3 JSON dump)"),
            OptionSpec(
                "reader", value: "PROFILE",
                help: "be a card emulator's chip instead, with this reader profile's reader in its field",
                completion: .file),
            OptionSpec(
                "timing", .choice(["real", "none"]), value: "real|none",
                help: """
                    real: each byte and answer takes as long as on a real PN532 at its
                    UART speed (8N1, 115 200 baud until SetSerialBaudRate) with the tag
                    106 kbit/s away (ISO/IEC 14443 frame and delay times, the tag's
                    write time); none: as fast as the pty carries bytes
                    """, default: .text("none")),
            OptionSpec(
                "present-after", .duration(bare: .seconds, moreThanZero: false),
                help: "put the tag in the field (or bring the reader) this long after start", default: .duration(.zero)),
            OptionSpec(
                "present-for", .duration(bare: .seconds, moreThanZero: false),
                help: "then keep it there this long, take it away --absent-for, and repeat"),
            OptionSpec(
                "absent-for", .duration(bare: .seconds, moreThanZero: false),
                help: "how long it is away (with --present-for)"),
            OptionSpec(
                "save", value: "FILE",
                help:
                    "on exit, write the tag as it is then (our JSON; - for standard output);\nrefused when it is the --tag file",
                standardOutput: .whenDash),
            OutputOptions.json("one JSON line per frame and event (the trace schema) instead of text"),
        ] + Traces.Options.table(),
        discussion: """
            Creates a symlink at PATH to a fresh pty (removed on exit) and answers libnfc's
            pn532_uart driver there: connect with pn532_uart:PATH (e.g. LIBNFC_DEVICE=pn532_uart:PATH nfc-list).
            The link is made only where nothing is (or over an old link into /dev/pts); with
            --pty - no link is made: connect to the pty's own path, printed first (with --quiet, alone
            on its line: the one line --quiet prints). The trace has every frame, --quiet or not.
            The tag (our JSON, a Flipper .nfc or a Proxmark3 JSON dump; a name in hardware/tags works)
            is served by the NFCTags emulation cores: NTAG21x/Ultralight or a Type 4 NDEF application;
            writes stay in memory for the run (and go to --save FILE on exit).

            With --reader PROFILE (hardware/readers/, see 'nfcbench profile') the PN532 is a card
            emulator's chip instead (TgInitAsTarget, e.g. nfc-emulate-forum-tag4 or an HCE host) and
            the profile's reader comes into its field: RATS, then its C-APDUs one by one; each
            exchange is printed at the end. Only profiles that reach ISO-DEP can be played this way.

            stdin: 'remove' takes the tag out of the field, 'present' puts it back.
            SIGINT, SIGTERM and SIGHUP stop it cleanly (link removed, exit 0).
            """,
        validate: { o throws(CLIError) in
            _ = try Traces.Options(o)
            if o.has("present-for") != o.has("absent-for") {
                throw CLIError.usage("--present-for and --absent-for go together")
            }
            if o.has("reader"), o.has("tag") || o.has("save") {
                throw CLIError.usage("--reader plays a reader: no --tag or --save with it")
            }
            if !o.has("reader"), !o.has("tag") { throw CLIError.usage("--tag FILE (or --reader PROFILE) is required") }
            // --pty - --quiet prints the pty's path alone on stdout: what a client reads there.
            if o.string("pty") == "-", o.flag("quiet"),
                let dash = o.standardOutputFile(among: ["trace", "pcapng", "save"])
            {
                throw CLIError.usage(
                    "--pty - --quiet prints the pty's path on standard output, and \(dash.name) \(dash.value) writes"
                        + " there too: give \(dash.name) a file name, or leave out --quiet (the path then goes to stderr)"
                )
            }
        },
        run: { o in
            let pty = o.string("pty")!
            let tagName = o.string("tag")
            let readerName = o.string("reader")
            let timing = PN532LinkTiming(rawValue: o.string("timing")!)!
            let after = o.duration("present-after")!
            let presentFor = o.duration("present-for")
            let absentFor = o.duration("absent-for")
            let json = o.flag("json")
            let quiet = o.flag("quiet")
            let traceOptions = try Traces.Options(o)
            let savePath = o.string("save")
            var inputs: [NamedFile] = []
            if let tagName, let p = DataLocation.resolve(tagName, in: "tags") {
                inputs.append(NamedFile("--tag \(p)", p))
            }
            if let readerName, let p = DataLocation.resolve(readerName, in: "readers") {
                inputs.append(NamedFile("--reader \(p)", p))
            }
            let ptyOutput = pty == "-" ? [] : [NamedFile("--pty \(pty)", pty)]
            try Outputs.refuseSameFiles(
                outputs: ptyOutput + (savePath.map { [NamedFile("--save \($0)", $0)] } ?? []) + traceOptions.outputs,
                inputs: inputs)
            if pty != "-" {
                do throws(FileError) { try SymbolicLink.plan(pty, label: "--pty \(pty)") } catch {
                    throw CLIError(error)
                }
            }
            if let savePath { _ = try Outputs.plan(savePath, option: "--save") }
            let cycle = presentFor.flatMap { p in absentFor.map { (present: p, absent: $0) } }
            let server: PN532Server
            if let readerName {  // validate: no --tag or --save with it
                server = try PN532Server.start(
                    pty: pty, file: nil, reader: try PN532Server.readerScript(readerName), timing: timing,
                    presentAfter: after, cycle: cycle, json: json, quiet: quiet, traceOptions: traceOptions,
                    savePath: nil)
            } else {
                guard let tagName else { throw CLIError.usage("--tag FILE (or --reader PROFILE) is required") }
                let (file, _) = try loadPN532Card(tagName)
                if let mismatch = file.uidMismatch { Output.err("warning: \(mismatch)") }
                server = try PN532Server.start(
                    pty: pty, file: file, reader: nil, timing: timing, presentAfter: after, cycle: cycle, json: json,
                    quiet: quiet, traceOptions: traceOptions, savePath: savePath)
            }
            let signals = Signals.handle { sig in
                guard Signals.stops(sig) else { return Signals.runDefault(sig) }
                server.stop()
            }
            defer { signals.cancel() }
            // stdin commands.
            let input = Thread {
                while let line = readLine() {
                    switch line.trimmingCharacters(in: .whitespaces) {
                    case "remove": server.remove()
                    case "present": server.present()
                    case "": continue
                    default: Output.err("unknown command '\(line)': use 'remove' or 'present'")
                    }
                }
            }
            input.start()
            return try await server.serve()
        })
}
