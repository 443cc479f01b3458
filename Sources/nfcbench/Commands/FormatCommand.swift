/// `nfcbench format`: an empty NDEF message on an NDEF-formatted tag.
enum FormatCommand {
    static let command = Command(
        path: ["format"],
        abstract: "Write an empty NDEF message on the NDEF-formatted tag on a reader (backup first)",
        usage: "format --device D [--dry-run] [--backup PATH] [--timeout S] [--json] [--trace PATH | --no-trace]",
        help: """
            Writes an empty NDEF message: on a Type 2 Tag the TLVs 03 00 FE after any Lock/Memory
            Control TLVs (the CC and lock bytes are left as they are); on a Type 4 Tag NLEN = 0.
            The tag must already carry a valid NDEF capability container: this does not turn a blank
            or non-NDEF tag into an NDEF tag, and it never locks anything. A backup of the old content
            (our tag-file JSON) is written first; --dry-run prints the writes and writes nothing.
            Stopped part way (the tag lost, SIGINT, SIGTERM, SIGHUP), it says what was sent, what the
            tag reads as and the backup to restore from, as write does.

            OPTIONS:
              --dry-run      print the writes; send nothing, take no backup
            \(WriteCommand.backupHelp)
              --timeout S    how long to wait for a tag (default 10)
              --json         one JSON object: status, tag, backup, sent, tag_state, interrupted_by, error
              --trace PATH   where the run's trace goes (default: the trace folder); --no-trace: none
            """,
        run: { args in
            let device = try WriteCommand.requireDevice(&args)
            let dryRun = args.flag("dry-run")
            let backup = try args.option("backup")
            let timeout = try args.seconds("timeout") ?? .seconds(10)
            let json = args.flag("json")
            let traceOptions = try Traces.Options.parse(&args, redact: true, pcapng: false)
            try args.finish()
            return try await WriteCommand.run(
                .init(
                    command: "format", device: device, operation: .ndef([], lock: false), dryRun: dryRun,
                    backup: backup, timeout: timeout, json: json, traceOptions: traceOptions,
                    what: "an empty NDEF message (the tag's NDEF content will be erased)"))
        })
}
