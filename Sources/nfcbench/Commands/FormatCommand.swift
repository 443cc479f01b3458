/// `nfcbench format`: an empty NDEF message on an NDEF-formatted tag.
enum FormatCommand {
    static let command = Command(
        path: ["format"],
        abstract: "Write an empty NDEF message on the NDEF-formatted tag on a reader (backup first)",
        usage: "format --device D [--dry-run] [--backup FILE] [--timeout S]",
        help: """
            Writes an empty NDEF message: on a Type 2 Tag the TLVs 03 00 FE after any Lock/Memory
            Control TLVs (the CC and lock bytes are left as they are); on a Type 4 Tag NLEN = 0.
            The tag must already carry a valid NDEF capability container: this does not turn a blank
            or non-NDEF tag into an NDEF tag, and it never locks anything. A backup of the old content
            (our tag-file JSON) is written first; --dry-run prints the writes and writes nothing.
            """,
        run: { args in
            let device = try WriteCommand.requireDevice(&args)
            let dryRun = args.flag("dry-run")
            let backup = try args.option("backup")
            let timeout = try args.seconds("timeout") ?? .seconds(10)
            try args.finish()
            return try await WriteCommand.write(
                command: "format", device: device, message: [], dryRun: dryRun, backup: backup, timeout: timeout,
                lock: false,
                what: "an empty NDEF message (the tag's NDEF content will be erased)")
        })
}
