import NFCBenchKit
import NFCTags
import VirtualHardware

/// `nfcbench virtual card`: a tag file served as a vsmartcard vpcd card to the real pcscd.
enum VirtualCardCommand {
    /// What to do when another card holds vpcd's port (``CardLink``): this command's own flags.
    static let otherSlot = "use the other vpcd slot (--slot 1, port 35964)"

    static let command = Command(
        path: ["virtual", "card"],
        abstract: "Serve a tag file as a virtual card in pcscd's vpcd reader",
        options: [
            OptionSpec(
                "tag", value: "FILE",
                help: "a tag file (our JSON, Flipper .nfc, Proxmark3 dump) or a name in hardware/tags/",
                required: true, completion: .file),
            OptionSpec(
                "personality", .choice(VirtualCardKind.allCases.map(\.rawValue)), value: "P",
                help: """
                    how the reader shows the card: part3, a PC/SC 2.01 part 3
                    reader (FF CA, FF B0/FF D6, FF C2 transparent exchange); acr122u,
                    an ACS ACR122U (a PN532 behind its firmware: FF 00 00 00 Lc D4 …
                    direct transmit, FF 00 48 00 00 firmware version, FF 00 40 LED and
                    buzzer, 63 00 where the card timed out)
                    """, default: .text("part3")),
            OptionSpec("port", .int(1...65535), help: "vpcd's TCP port (default 35963 = \"Virtual PCD 00 00\")"),
            OptionSpec(
                "slot", .choice(["0", "1"]), value: "0|1", help: "the Debian vpcd slot: 0 = port 35963, 1 = port 35964"),
            OptionSpec(
                "reversed", .flag,
                help: """
                    vpcd's reversed mode, for a shared pcscd: the card listens on
                    127.0.0.1:PORT and vpcd connects to it (reader.conf entry
                    hardware/pcsc-loopback/vpcd); nothing listens beyond loopback
                    """),
            OptionSpec(
                "wait", .flag,
                help: """
                    when vpcd does not take the card (no pcscd, or the port held by
                    another card), keep trying, saying why, instead of exiting 69
                    """),
            OptionSpec(
                "present-for", .duration(bare: .seconds, moreThanZero: false),
                help: "alternate presence with --absent-for: in the field this long, out, forever"),
            OptionSpec(
                "absent-for", .duration(bare: .seconds, moreThanZero: false),
                help: "out of the field this long (with --present-for)"),
            OptionSpec(
                "remove-after", .duration(bare: .seconds, moreThanZero: false),
                help: "take the card out of the field after this long"),
            OutputOptions.json("print the trace records (JSON Lines) instead of text lines"),
        ] + Traces.Options.table(),
        discussion: """
            A type4 file becomes a T4T NDEF application behind an ISO/IEC 14443-4 ATR; a Type 2
            file (NTAG21x, Ultralight) its memory image behind a PC/SC part 3 storage-card ATR.
            Once vpcd has the card in its field: a line naming the card, the trace's path, then one
            line per connection, control byte and APDU (every line is also in the trace); nothing
            before, so a card vpcd never takes prints only why. --quiet prints nothing but errors. Standard input takes
            commands, one per line: 'remove', 'present', 'quit'. SIGINT (Ctrl-C), SIGTERM or SIGHUP stops the card cleanly (exit 0).
            vpcd must be configured in pcscd (scripts/with-pcscd runs a private one). The card is in
            the field once pcscd polls it through vpcd; when that does not happen within 3 s
            (nothing listens on the port, or another card holds it: vpcd serves one card per port)
            the command says why and exits 69, or with --wait says why and keeps trying.
            """,
        validate: { o throws(CLIError) in
            _ = try Traces.Options(o)
            if o.has("port") && o.has("slot") { throw CLIError.usage("give --port or --slot, not both") }
            if o.has("present-for") != o.has("absent-for") {
                throw CLIError.usage("--present-for and --absent-for go together")
            }
        },
        run: { o in try await run(o) })

    static func run(_ o: ParsedOptions) async throws -> Int32 {
        let tagName = o.string("tag")!
        let personalityName = o.string("personality")!
        let portOption = o.int("port")
        let slot = o.string("slot").flatMap { Int($0) }
        let presentFor = o.duration("present-for")
        let absentFor = o.duration("absent-for")
        let removeAfter = o.duration("remove-after")
        let json = o.flag("json")
        let quiet = o.flag("quiet")
        let wait = o.flag("wait")
        let reversed = o.flag("reversed")
        var traceOptions = try Traces.Options(o)
        traceOptions.json = json
        let port = UInt16(portOption ?? (slot == 1 ? 35964 : 35963))

        let kind = VirtualCardKind(rawValue: personalityName)!
        let (path, file, personality) = try kind.load(tagName)
        if let mismatch = file.uidMismatch { Output.err("warning: \(mismatch)") }

        let server = try VirtualCardServer.start(
            tagPath: path, file: file, personality: personality, kind: kind, port: port, reversed: reversed,
            traceOptions: traceOptions, json: json, quiet: quiet, wait: wait, otherSlot: otherSlot)
        let signals = Signals.handle { sig in
            if Signals.stops(sig) { server.stop() } else { Signals.runDefault(sig) }
        }
        defer { signals.cancel() }
        return try await server.serve(presentFor: presentFor, absentFor: absentFor, removeAfter: removeAfter)
    }
}

/// A tag file (found by name in `hardware/tags/`, or a path) as a vpcd card's personality
/// (`virtual card`, the demo): NFCBenchKit's ``VirtualCardKind/load(_:)``.
func loadVirtualCard(_ tag: String, as kind: VirtualCardKind = .part3) throws(CLIError) -> (
    path: String, file: TagFile, personality: any VirtualCardPersonality
) {
    try kind.load(tag)
}
