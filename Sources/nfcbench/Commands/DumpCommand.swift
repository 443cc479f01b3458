import FoundationEssentials
import NFCBenchKit
import NFCFiles
import NFCTags
import NFCTrace
import ReaderSession

/// `nfcbench dump`: a real tag into our tag-file JSON (hardware/tags/FORMAT.md). Read-only.
enum DumpCommand {
    static let command = Command(
        path: ["dump"],
        abstract: "Read a tag on a reader into a tag file (never writes to the tag)",
        options: [
            DeviceOptions.device(),
            OptionSpec(
                "out", value: "FILE",
                help: """
                    write the tag file there (default, or -: standard output); an existing
                    file is replaced atomically, a FIFO or device written into
                    """),
            OptionSpec(
                "timeout", .duration(bare: .seconds, moreThanZero: false), help: "how long to wait for a tag",
                aliases: ["wait"], default: .duration(.seconds(10))),
            OutputOptions.json(
                """
                with --out FILE: one JSON object on stdout (status, type, uid, out) instead
                of the line on stderr; without it stdout is the tag file, JSON already
                """),
        ] + Traces.Options.table(),
        discussion: """
            Type 2 tags: every page the tag answers (count from GET_VERSION, else the CC size),
            GET_VERSION, the UID. Type 4 tags: the CC and the NDEF file, the UID and the ATS.
            PC/SC does not report ATQA and SAK: the file then gets the values of the tag family
            (44 00 / 00 for Type 2, 44 03 / 20 for Type 4) and a note saying so. The same
            procedure runs on every reader. --redact leaves the dump itself as read (the user's
            data) and hides the UID in what is shown (the line, --json) and traced.
            """,
        validate: { o throws(CLIError) in
            _ = try Traces.Options(o)
            // Without --out, stdout is the tag file: a trace or pcapng there would be mixed into it.
            if !o.has("out"), let dash = o.standardOutputFile(among: ["trace", "pcapng"]) {
                throw .usage(
                    "the tag file (no --out) and \(dash.name) \(dash.value) both write to standard output:"
                        + " give \(dash.name) a file name, or --out FILE")
            }
        },
        run: { o in
            let device = o.string("device")!
            let out = o.string("out")
            let wait = o.duration("timeout")!
            let traceOptions = try Traces.Options(o)
            // The output is checked, and refused when it is the device's own tag file, before
            // the reader is touched.
            let target = try out.map { p throws(CLIError) in try Outputs.plan(p, option: "--out") }
            let inputs = BenchDevice.inputFiles(device)
            try Outputs.refuseSameFiles(
                outputs: (out.map { [NamedFile("--out \($0)", $0)] } ?? []) + traceOptions.outputs, inputs: inputs)
            let reader = try BenchReader.open(
                device, command: "dump", setup: ["out": out.map { .string($0) } ?? .null], trace: traceOptions,
                inputs: inputs)
            defer { reader.close() }
            let file = try await reader.withFirstTag(timeout: wait) { target, connection in
                try TagSnapshot.take(target, connection)
            }
            if let target, target.destination != .descriptor(1) {
                do throws(FileError) { try target.write(Array(file.jsonText().utf8)) } catch { throw CLIError(error) }
                // --redact: the UID shown is its length (the file written keeps it: the user's data).
                let uid = BenchRedaction.hex(file.identifier, redact: traceOptions.redact)
                if o.flag("json") {
                    Output.out(
                        JSONValue.object([
                            "status": "dumped", "type": .string(file.type.rawValue), "uid": .string(uid),
                            "out": .string(target.named),
                        ]).serialized)
                } else {
                    Output.err("dumped \(file.type.rawValue) \(uid) to \(target.named)")
                }
            } else {
                Output.raw(file.jsonText())
            }
            return 0
        })
}
