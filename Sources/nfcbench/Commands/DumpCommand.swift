import FoundationEssentials
import NFCTags
import ReaderSession

/// `nfcbench dump`: a real tag into our tag-file JSON (hardware/tags/FORMAT.md). Read-only.
enum DumpCommand {
    static let command = Command(
        path: ["dump"],
        abstract: "Read a tag on a reader into a tag file (never writes to the tag)",
        usage: "dump --device D [--out FILE] [--wait S] [--trace PATH] [--pcapng OUT] [--redact]",
        help: """
            OPTIONS:
              --device D   pcsc:READER, a libnfc connstring (pn532_uart:PATH…) or sim:SCENARIO
              --out FILE   write the tag file there (default: standard output)
              --wait S     how long to wait for a tag (default 10 s)
              --trace PATH where the run's trace goes (default: the trace folder; its path goes to stderr)
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
            if let out { try OutputFile.check(out, option: "--out") }
            let reader = try BenchReader.open(
                device, command: "dump", setup: ["out": out.map { .string($0) } ?? .null], trace: traceOptions)
            defer { reader.close() }
            let file = try await reader.withFirstTag(timeout: wait) { target, connection in
                try TagSnapshot.take(target, connection)
            }
            if let out {
                do throws(DataFileError) { try file.save(path: out) } catch { throw CLIError(error) }
                Output.err("dumped \(file.type.rawValue) \(file.activation.uid.hexString()) to \(out)")
            } else {
                Output.out(file.jsonText())
            }
            return 0
        })
}
