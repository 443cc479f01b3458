import FoundationEssentials
import NFCBenchKit
import NFCFiles
import NFCTags
import ReaderSession

/// `nfcbench dump`: a real tag into our tag-file JSON (hardware/tags/FORMAT.md). Read-only.
enum DumpCommand {
    static let command = Command(
        path: ["dump"],
        abstract: "Read a tag on a reader into a tag file (never writes to the tag)",
        usage: "dump --device D [--out FILE] [--wait S] [--trace PATH | --no-trace] [--pcapng OUT] [--redact]",
        help: """
            OPTIONS:
              --device D   pcsc:READER, a libnfc connstring (pn532_uart:PATH…), sim:SCENARIO or
                           sim:tag:FILE (a tag file in the simulated field)
              --out FILE   write the tag file there (default, or -: standard output); an existing
                           file is replaced atomically, a FIFO or device written into
              --wait S     how long to wait for a tag (default 10 s)
              --trace PATH where the run's trace goes (default: the trace folder; its path goes to stderr)
              --no-trace   keep no trace
              --pcapng OUT also write the frames read to OUT for Wireshark (see 'nfcbench trace export')
              --redact     replace UIDs and payloads in the trace and the pcapng file (not in the dump)

            Type 2 tags: every page the tag answers (count from GET_VERSION, else the CC size),
            GET_VERSION, the UID. Type 4 tags: the CC and the NDEF file, the UID and the ATS.
            PC/SC does not report ATQA and SAK: the file then gets the values of the tag family
            (44 00 / 00 for Type 2, 44 03 / 20 for Type 4) and a note saying so. The same
            procedure runs on every reader.
            """,
        run: { args in
            guard let device = try args.device() else {
                throw CLIError.usage("--device is required (or set NFCBENCH_DEVICE)")
            }
            let out = try args.option("out")
            let wait = try args.seconds("wait") ?? .seconds(10)
            let traceOptions = try Traces.Options.parse(&args)
            try args.finish()
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
                Output.err("dumped \(file.type.rawValue) \(file.activation.uid.hexString()) to \(target.named)")
            } else {
                Output.raw(file.jsonText())
            }
            return 0
        })
}
