import Foundation
import NFCBenchKit
import NFCFiles
import NFCTags
import NFCTrace
import ReaderSession

/// `nfcbench write`, `nfcbench format` and `nfcbench lock`: NDEF writes through NFCTags' Type 2
/// and Type 4 procedures on any reader (written once against the frontend: a Type 2 tag behind a
/// PC/SC reader is written with PC/SC part 3 UPDATE BINARY `FF D6`, on libnfc with WRITE `A2`),
/// each with a backup first (``/NFCFiles/Backups``), an exact dry run, and a report of what was
/// sent and what the tag reads as when it stops part way (a signal, the tag lost:
/// ``/NFCTags/TagWriteOutcome``).
enum WriteCommand {
    static let command = Command(
        path: ["write"],
        abstract: "Write an NDEF message to the tag on a reader (backup first; --dry-run shows the writes)",
        options: [
            OptionSpec(
                "ndef", .repeated, value: "SPEC",
                help: "a record; repeated, the records of one message in the order given:\n" + NDEFSpec.help),
            OptionSpec(
                "message", value: "FILE",
                help: "the message as 'nfcbench tag show --json' prints it (its records: tnf, type, id, payload)"),
            OptionSpec(
                "lock", .flag,
                help: """
                    after writing, make the tag read-only: CC write access Fh, static and dynamic
                    lock bits set. IRREVERSIBLE on a real tag (OTP bits). Needs
                    --yes-i-understand-this-is-irreversible. Type 2 only.
                    """),
            confirmation,
        ]
            + tagWriteOptions(
                dryRun: """
                    read the tag, print exactly the pages (Type 2: WRITE A2, or UPDATE BINARY
                    FF D6 through PC/SC) or APDUs (Type 4) the write would send, and write
                    nothing (no backup either)
                    """),
        discussion: """
            Refused, with nothing written: a read-only CC, pages the write would touch that lock bits
            lock, a message larger than the tag's maximum. A write that stops part way — the tag lost,
            or SIGINT, SIGTERM or SIGHUP, which stop it between two commands — says exactly what was
            sent, what the tag now reads as, and the backup to restore it from. Exit 0 written, 1
            refused or failed, 64 usage, 65 bad SPEC, 69 no device or no tag, 73/74 the backup can't
            be made or written (nothing is sent then), 128+N stopped by signal N.
            """,
        validate: { o throws(CLIError) in
            _ = try Traces.Options(o)
            if o.flag("lock") && !o.flag("yes-i-understand-this-is-irreversible") && !o.flag("dry-run") {
                throw CLIError.usage(lockNeedsConfirmation)
            }
            switch (o.has("ndef"), o.has("message")) {
            case (true, true): throw CLIError.usage("give --ndef SPEC or --message FILE, not both")
            case (false, false):
                throw CLIError.usage("--ndef SPEC is required, or give --message FILE")
            default: break
            }
        },
        run: { o in
            let specs = o.list("ndef") ?? []
            let lock = o.flag("lock")
            let message: [UInt8]
            let what: String
            if let file = o.string("message") {
                message = try messageFile(file)
                what = "NDEF message of \(message.count) bytes (--message \(file))"
            } else {
                message = try NDEFSpec.parse(specs)
                what = "NDEF message of \(message.count) bytes (\(specs.joined(separator: " + ")))"
            }
            return try await run(request(o, command: "write", operation: .ndef(message, lock: lock), what: what))
        })

    /// `--message FILE`: the records of `tag show --json`'s JSON, as message bytes (65 when unusable).
    static func messageFile(_ path: String) throws(CLIError) -> [UInt8] {
        let bytes: [UInt8]
        do { bytes = try InputFile.read(path, label: "--message \(path)") } catch { throw CLIError(error) }
        do { return try NDEFMessageSpec.message(json: bytes, file: "--message \(path)").bytes } catch {
            throw .data(error.description)
        }
    }

    static let lockNeedsConfirmation =
        "locking is irreversible: it sets the tag's lock bits for good; add --yes-i-understand-this-is-irreversible"

    static let confirmation = OptionSpec(
        "yes-i-understand-this-is-irreversible", .flag, help: "the confirmation an irreversible lock needs")

    /// The options write, format and lock share: the device, `--dry-run`, `--backup`,
    /// `--timeout`, `--json`, the trace (no pcapng: a write's frames are in the trace).
    static func tagWriteOptions(dryRun: String) -> [OptionSpec] {
        [
            DeviceOptions.device(),
            OptionSpec("dry-run", .flag, help: dryRun),
            OptionSpec(
                "backup", value: "PATH",
                help: """
                    where the old content goes (our tag-file JSON, 0600) before the first byte is
                    sent: a file name (never replaced: a taken name gets -2, -3… before its
                    extension), a folder, or - (standard output). Default: a new file
                    nfcbench-backup-<UID>-<time>.json in $XDG_STATE_HOME/nfcbench/backups (else
                    ~/.local/state/nfcbench/backups), never rotated
                    """, standardOutput: .whenDash),
            OptionSpec(
                "timeout", .duration(bare: .seconds, moreThanZero: false), help: "how long to wait for a tag",
                default: .duration(.seconds(10))),
            OutputOptions.json(
                "one JSON object: status, dry_run, tag, backup, sent (would_send in a dry run), tag_state,"
                    + " interrupted_by, error"),
        ] + Traces.Options.table(redact: true, pcapng: false)
    }

    /// The request write, format and lock make of their options.
    static func request(_ o: ParsedOptions, command: String, operation: Operation, what: String) throws(CLIError)
        -> Request
    {
        Request(
            command: command, device: o.string("device")!, operation: operation, dryRun: o.flag("dry-run"),
            backup: o.string("backup"), timeout: o.duration("timeout")!, json: o.flag("json"),
            traceOptions: try Traces.Options(o), what: what)
    }

    /// What is written (``/NFCBenchKit/TagWrite/Operation``).
    typealias Operation = TagWrite.Operation

    /// One `write`, `format` or `lock` as the command line asked for it.
    struct Request: Sendable {
        var command: String
        var device: String
        var operation: Operation
        var dryRun: Bool
        var backup: String?
        var timeout: Duration
        var json: Bool
        var traceOptions: Traces.Options
        var what: String
    }

    /// Shared by write, format and lock: the backup's place checked before the reader is
    /// touched, the backup taken before the first byte is sent, refusals, the write, read-back,
    /// the optional lock, and the report (text, or one JSON object) however it ends.
    static func run(_ r: Request) async throws -> Int32 {
        // The backup's place is checked before the reader is touched: a tag is never written
        // without its backup, and a typo in the folder costs nothing. It may not be a file the
        // device reads (a sim: tag file) or the trace.
        let backupPlan: Backups.Plan?
        do throws(FileError) {
            backupPlan =
                r.dryRun
                ? nil
                : try Backups.plan(
                    r.backup, environment: ProcessInfo.processInfo.environment, namedByUID: !r.traceOptions.redact)
        } catch { throw CLIError(error) }
        let backupFile = r.backup.flatMap { b -> NamedFile? in
            if let st = FilePath.status(b), st.st_mode & S_IFMT == S_IFDIR { return nil }
            return NamedFile("--backup \(b)", b)
        }
        try Outputs.refuseSameFiles(
            outputs: (r.dryRun ? [] : backupFile.map { [$0] } ?? []) + r.traceOptions.outputs,
            inputs: BenchDevice.inputFiles(r.device))
        var setup: JSONObject = ["dry_run": .bool(r.dryRun), "backup": r.backup.map { .string($0) } ?? .null]
        switch r.operation {
        case .ndef(let m, let lock):
            setup["message_bytes"] = .int(Int64(m.count))
            setup["lock"] = .bool(lock)
        case .lock: setup["lock"] = .bool(true)
        case .ndefFormat(let size):
            setup["ndef_format"] = .bool(true)
            setup["size"] = size.map { .int(Int64($0)) } ?? .null
        }
        let reader = try BenchReader.open(r.device, command: r.command, setup: setup, trace: r.traceOptions)
        defer { reader.close() }
        // Lines for a person: stdout, unless the JSON object (or the backup, with --backup -) is
        // there; then stderr, so the backup's path is said the moment it is written.
        let toStderr = r.json || r.backup == "-"
        let redact = r.traceOptions.redact
        let say: @Sendable (String) -> Void = { line in
            let shown = redact ? TagWrite.redactingUIDs(line) : line
            toStderr ? Output.err(shown) : Output.out(shown)
        }
        // --redact: what is written without the message itself ("NDEF message of 19 bytes").
        let what = redact ? String(r.what.prefix { $0 != "(" }).trimmingCharacters(in: .whitespaces) : r.what
        if !r.json { say("\(r.dryRun ? "dry run: would write" : "writing") \(what) on \(r.device)") }
        let viaPCSC: Bool = if case .pcsc = reader.spec.kind { true } else { false }
        let stop = StopRequest()
        let outcome = try await reader.withFirstTag(timeout: r.timeout) { target, connection -> TagWriteOutcome in
            // From here a SIGINT, SIGTERM or SIGHUP stops the write between two commands, and
            // the report says where it stopped.
            let signals = Signals.handle { sig in
                if Signals.stops(sig) { stop.request(Signals.name(sig)) } else { Signals.runDefault(sig) }
            }
            defer { signals.cancel() }
            return try TagWrite.perform(
                target, connection, command: r.command, operation: r.operation, dryRun: r.dryRun,
                backup: backupPlan, stop: stop, viaPCSC: viaPCSC, redact: redact, say: say)
        }
        // --redact: the tag's UID in `tag` too (the trace redacts the other keys itself).
        var result = json(outcome, r)
        if redact {
            result["tag"] = outcome.tag.map { .string(TagWrite.redactingUIDs($0)) } ?? .null
        }
        reader.trace.record(.writeOutcome, result)
        if r.json {
            var shown = redact ? TraceWriter.redacted(result) : result
            shown["command"] = .string(r.command)  // the command's name, not an APDU
            Output.out(shown.serialized)
        }
        switch outcome.status {
        case .written, .dryRun:
            return 0
        case .refused:
            if !r.json { Output.err("error: \(outcome.error ?? "refused")") }
            return 1
        case .failed:
            if !r.json { Output.err("error: \(outcome.error ?? outcome.unfinishedText)") }
            return 1
        case .interrupted:
            if !r.json { Output.err("error: \(outcome.unfinishedText)") }
            let sig = ["SIGINT": SIGINT, "SIGTERM": SIGTERM, "SIGHUP": SIGHUP, "SIGPIPE": SIGPIPE][
                outcome.interruptedBy ?? ""]
            return 128 + (sig ?? SIGTERM)
        }
    }

    /// The outcome as `--json` prints it (and the trace's `write_outcome` record).
    static func json(_ o: TagWriteOutcome, _ r: Request) -> JSONObject {
        var j: JSONObject = [
            "command": .string(r.command), "device": .string(r.device), "status": .string(o.status.rawValue),
        ]
        j["tag"] = o.tag.map { .string($0) } ?? .null
        j["backup"] = o.backup.map { .string($0) } ?? .null
        // A dry run sends nothing: what it would send is `would_send`, and `sent` stays empty.
        let dryRun = o.status == .dryRun
        j["dry_run"] = .bool(dryRun)
        j["sent"] = .array(dryRun ? [] : o.sent.map { .string($0) })
        if dryRun { j["would_send"] = .array(o.sent.map { .string($0) }) }
        j["tag_state"] = o.tagState.map { .string($0) } ?? .null
        j["interrupted_by"] = o.interruptedBy.map { .string($0) } ?? .null
        j["error"] = o.error.map { .string($0) } ?? .null
        if case .ndef(let m, _) = r.operation {
            // The message as sent (or as a dry run would send it): its bytes and its records.
            j["ndef"] = .string(m.hexString())
            j["records"] = m.isEmpty ? .array([]) : (try? NFCNDEFMessage(bytes: m))?.recordsJSON ?? .null
        }
        // The file to restore from when the tag was changed but not as asked.
        let changed = (o.status == .failed || o.status == .interrupted) && !o.sent.isEmpty
        j["restore_from"] = changed ? o.backup.map { .string($0) } ?? .null : .null
        return j
    }

    /// ``/NFCBenchKit/TagWrite/saveBackup(_:uid:to:)``.
    static func saveBackup(_ file: TagFile, uid: [UInt8], to plan: Backups.Plan?) throws -> String {
        try TagWrite.saveBackup(file, uid: uid, to: plan)
    }
}

/// `nfcbench lock`: the irreversible step on its own, with a backup first and a dry run.
enum LockCommand {
    static let command = Command(
        path: ["lock"],
        abstract: "Make the Type 2 tag on a reader read-only for good (irreversible; backup first)",
        options: [WriteCommand.confirmation]
            + WriteCommand.tagWriteOptions(dryRun: "print the WRITEs the lock would send; send nothing, take no backup"),
        discussion: """
            Writes CC byte 3 = Fh (read-only), the static lock bytes FF FF and every dynamic lock bit
            (NFC Forum T2T 1.0 §6.4.4). On a real tag these are one-time-programmable: the tag can
            never be written again. Refused on an already read-only tag. A backup of the tag's
            content is taken first (as write takes one); --dry-run prints the writes and sends none
            (it needs no confirmation flag).
            """,
        validate: { o throws(CLIError) in
            _ = try Traces.Options(o)
            guard o.flag("yes-i-understand-this-is-irreversible") || o.flag("dry-run") else {
                throw CLIError.usage(WriteCommand.lockNeedsConfirmation)
            }
        },
        run: { o in
            try await WriteCommand.run(
                WriteCommand.request(
                    o, command: "lock", operation: .lock, what: "the lock bits (the tag becomes read-only for good)"))
        })
}
