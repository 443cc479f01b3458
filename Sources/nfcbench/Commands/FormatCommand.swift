/// `nfcbench format`: an empty NDEF message on an NDEF-formatted tag.
enum FormatCommand {
    static let command = Command(
        path: ["format"],
        abstract: "Write an empty NDEF message on the NDEF-formatted tag on a reader (backup first)",
        options: WriteCommand.tagWriteOptions(
            dryRun: "print the writes; send nothing, take no backup"),
        discussion: """
            Writes an empty NDEF message: on a Type 2 Tag the TLVs 03 00 FE after any Lock/Memory
            Control TLVs (the CC and lock bytes are left as they are); on a Type 4 Tag NLEN = 0.
            The tag must already carry a valid NDEF capability container: this does not turn a blank
            or non-NDEF tag into an NDEF tag, and it never locks anything. A backup of the old content
            (our tag-file JSON) is written first; --dry-run prints the writes and writes nothing.
            Stopped part way (the tag lost, SIGINT, SIGTERM, SIGHUP), it says what was sent, what the
            tag reads as and the backup to restore from, as write does.
            """,
        validate: { o throws(CLIError) in _ = try Traces.Options(o) },
        run: { o in
            try await WriteCommand.run(
                WriteCommand.request(
                    o, command: "format", operation: .ndef([], lock: false),
                    what: "an empty NDEF message (the tag's NDEF content will be erased)"))
        })
}
