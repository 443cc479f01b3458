/// `nfcbench format`: an empty NDEF message on an NDEF-formatted tag.
enum FormatCommand {
    static let command = Command(
        path: ["format"],
        abstract: "Write an empty NDEF message on the NDEF-formatted tag on a reader (backup first)",
        options: [
            OptionSpec(
                "ndef-format", .flag,
                help: """
                    NDEF-format a blank NTAG / Ultralight: an empty NDEF TLV, then the CC
                    E1 10 <size> 00 in page 3 (one-time programmable: IRREVERSIBLE on a real tag)
                    """),
            OptionSpec(
                "size", .int(8...2048), value: "BYTES",
                help: "with --ndef-format: the CC's data area in bytes (default: the product's, from GET_VERSION)"),
        ]
            + WriteCommand.tagWriteOptions(
                dryRun: "print the writes; send nothing, take no backup"),
        discussion: """
            Writes an empty NDEF message: on a Type 2 Tag the TLVs 03 00 FE after any Lock/Memory
            Control TLVs (the CC and lock bytes are left as they are); on a Type 4 Tag NLEN = 0.
            The tag must already carry a valid NDEF capability container, and it never locks anything;
            --ndef-format turns a blank NTAG / Ultralight (CC 00 00 00 00) into an NDEF tag: 03 00 FE
            in page 4, then the CC E1 10 <size> 00 in page 3, whose bits are one-time programmable
            (said before it is written; the size from GET_VERSION, the tag type, or --size). A backup of the old content
            (our tag-file JSON) is written first; --dry-run prints the writes and writes nothing.
            Stopped part way (the tag lost, SIGINT, SIGTERM, SIGHUP), it says what was sent, what the
            tag reads as and the backup to restore from, as write does.
            """,
        validate: { o throws(CLIError) in
            _ = try Traces.Options(o)
            if o.has("size") && !o.flag("ndef-format") { throw .usage("--size goes with --ndef-format") }
        },
        run: { o in
            if o.flag("ndef-format") {
                return try await WriteCommand.run(
                    WriteCommand.request(
                        o, command: "format", operation: .ndefFormat(size: o.int("size")),
                        what: "the capability container and an empty NDEF message (a blank tag becomes an NDEF tag)"))
            }
            return try await WriteCommand.run(
                WriteCommand.request(
                    o, command: "format", operation: .ndef([], lock: false),
                    what: "an empty NDEF message (the tag's NDEF content will be erased)"))
        })
}
