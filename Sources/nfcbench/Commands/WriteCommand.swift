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
                    """),
            OptionSpec(
                "timeout", .duration(bare: .seconds, moreThanZero: false), help: "how long to wait for a tag",
                default: .duration(.seconds(10))),
            OutputOptions.json("one JSON object: status, tag, backup, sent, tag_state, interrupted_by, error"),
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

    /// What is written: an NDEF message (then, with `lock`, the lock), or only the lock.
    enum Operation: Sendable {
        case ndef([UInt8], lock: Bool)
        case lock
        /// A blank Type 2 tag's CC and empty NDEF TLV (``/NFCTags/Type2NDEFFormat``); `size`: `--size`.
        case ndefFormat(size: Int?)
    }

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
            backupPlan = r.dryRun ? nil : try Backups.plan(r.backup, environment: ProcessInfo.processInfo.environment)
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
        let say: @Sendable (String) -> Void = { line in toStderr ? Output.err(line) : Output.out(line) }
        if !r.json { say("\(r.dryRun ? "dry run: would write" : "writing") \(r.what) on \(r.device)") }
        let viaPCSC: Bool = if case .pcsc = reader.spec.kind { true } else { false }
        let stop = StopRequest()
        let outcome = try await reader.withFirstTag(timeout: r.timeout) { target, connection -> TagWriteOutcome in
            // From here a SIGINT, SIGTERM or SIGHUP stops the write between two commands, and
            // the report says where it stopped.
            let signals = Signals.handle { sig in
                if Signals.stops(sig) { stop.request(Signals.name(sig)) } else { Signals.runDefault(sig) }
            }
            defer { signals.cancel() }
            return try perform(
                target, connection, r, backup: backupPlan, stop: stop, viaPCSC: viaPCSC, say: say)
        }
        reader.trace.record("write_outcome", json(outcome, r))
        if r.json { Output.out(json(outcome, r).serialized) }
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
        j["sent"] = .array(o.sent.map { .string($0) })
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

    private static func perform(
        _ target: DetectedTarget, _ connection: TagConnection, _ r: Request, backup: Backups.Plan?,
        stop: StopRequest, viaPCSC: Bool, say: @Sendable (String) -> Void
    ) throws -> TagWriteOutcome {
        var version: TagVersion? = nil
        if case .type2(let t) = connection {
            var probe = Type2TagReader(transport: t)
            version = try probe.identify()
        }
        let tag = describe(target, version)
        say("tag: \(tag)")
        var outcome = TagWriteOutcome(operation: r.command, status: .written, tag: tag)
        func refuse(_ why: String) -> TagWriteOutcome {
            outcome.status = .refused
            outcome.error = why
            outcome.tagState = "Nothing was sent: the tag is unchanged"
            return outcome
        }
        /// The read-back of a finished write: the outcome says the new message, or that it differs.
        func readBack(_ back: [UInt8], _ message: [UInt8], backup: String) -> Bool {
            guard back == message else {
                outcome.status = .failed
                outcome.error = "read-back differs from what was written; backup in \(backup)"
                return false
            }
            say("wrote \(message.count) bytes of NDEF; read back identical")
            outcome.sent = ["\(message.count) bytes of NDEF"]
            outcome.tagState = "The tag reads as the new message"
            return true
        }
        /// A write or lock that stopped part way: interrupted when a signal asked for the stop
        /// (`sent` and `state` say where), else failed (`failure`: NFCTags' whole account of
        /// what reached the tag), with the backup to restore from.
        func stoppedPartWay(sent: [String], state: String, failure: String, backup: String) -> TagWriteOutcome {
            outcome.sent += sent
            outcome.tagState = state
            if let why = stop.requested {
                outcome.status = .interrupted
                outcome.interruptedBy = why
            } else {
                outcome.status = .failed
                outcome.error = failure + "; the old content is in \(backup)"
            }
            return outcome
        }
        func takeBackup() throws -> String {
            let path = try saveBackup(target, connection, to: backup)
            outcome.backup = path
            say("backup of the old content: \(path)")
            return path
        }
        if case .ndefFormat(let size) = r.operation {
            guard case .type2(let t) = connection else {
                return refuse("refused: --ndef-format formats blank Type 2 tags (NTAG, Ultralight); nothing written")
            }
            let snapshot: TagFile
            do { snapshot = try TagSnapshot.take(target, connection) } catch {
                return refuse("cannot read the tag: \(error); nothing written")
            }
            let format: Type2NDEFFormat
            do {
                format = try Type2NDEFFormat(
                    type: snapshot.type, pageCount: snapshot.pages.count, page3: snapshot.pages[3], size: size)
            } catch {
                return refuse("refused: \(error); nothing written")
            }
            let cc = format.capabilityContainer.bytes.hexString(separator: " ")
            say(
                "the CC (page 3) is one-time programmable: \(cc) is written for good (data area \(8 * Int(format.sizeByte)) bytes)"
            )
            if r.dryRun {
                say("would send \(Figures.count(format.writes.count, "write")), in this order:")
                for w in format.writes { say("  page \(w.page): \(w.bytes.hexString(separator: " "))") }
                say("dry run: nothing written")
                outcome.status = .dryRun
                outcome.sent = format.writes.map { "page \($0.page)" }
                outcome.tagState = "Nothing was sent: the tag is unchanged"
                return outcome
            }
            let backupPath = try saveBackup(snapshot, uid: target.uid, to: backup)
            outcome.backup = backupPath
            say("backup of the old content: \(backupPath)")
            let sent = Type2WriteRecorder(base: t, stop: stop)
            for w in format.writes {
                do { try sent.write(page: UInt8(w.page), data: w.bytes) } catch {
                    let done = sent.writes.filter { $0.failure == nil }.map { "page \($0.page)" }
                    return stoppedPartWay(
                        sent: done, state: done.contains("page 3") ? "The CC is written" : "The CC is not written",
                        failure: "page \(w.page): \(error)", backup: backupPath)
                }
            }
            outcome.sent = format.writes.map { "page \($0.page)" }
            guard (try? Type2TagReader(transport: t, version: version).readNDEF()) == [] else {
                outcome.status = .failed
                outcome.error = "the tag does not read back as an empty NDEF tag; backup in \(backupPath)"
                return outcome
            }
            say("NDEF-formatted: CC \(cc), an empty NDEF message; read back")
            outcome.tagState = "The tag is NDEF-formatted and holds an empty NDEF message"
            return outcome
        }
        switch connection {
        case .type2(let t):
            let reader = Type2TagReader(transport: t, version: version)
            let layout: Type2TagLayout
            do { layout = try reader.readLayout() } catch {
                return refuse("cannot use this tag: \(error); nothing written")
            }
            guard layout.capabilityContainer.isWritable else {
                return refuse("refused: the tag is read-only (\(layout.capabilityContainer)); nothing written")
            }
            let message: [UInt8]?
            let lock: Bool
            switch r.operation {
            case .ndef(let m, let l): (message, lock) = (m, l)
            case .lock, .ndefFormat: (message, lock) = (nil, true)
            }
            if r.dryRun {
                let recorder = DryRunType2Transport(base: t)
                let dry = Type2TagReader(transport: recorder, version: version)
                do {
                    if let message { try dry.writeNDEF(message) }
                    if message == nil { try dry.setReadOnly(lockBits: true) }
                } catch {
                    return refuse("refused: \(error); nothing written")
                }
                let verb = viaPCSC ? "UPDATE BINARY (FF D6) APDU" : "WRITE (A2) command"
                say("would send \(Figures.count(recorder.writes.count, verb)), in this order:")
                for (page, data) in recorder.writes {
                    let bytes = viaPCSC ? [0xFF, 0xD6, 0x00, page, 0x04] + data : data
                    say("  page \(page): \(bytes.hexString(separator: " "))")
                }
                if message != nil && lock {
                    say(
                        "then would lock: CC byte 3 = \u{0046}h, static lock bytes FF FF, every dynamic lock bit (irreversible)"
                    )
                }
                say("dry run: nothing written")
                outcome.status = .dryRun
                outcome.sent = recorder.writes.map { "page \($0.page)" }
                outcome.tagState = "Nothing was sent: the tag is unchanged"
                return outcome
            }
            let backupPath = try takeBackup()
            if let message {
                let sent = Type2WriteRecorder(base: t, stop: stop)  // the wording says what was sent (NFCTags)
                do {
                    try Type2TagReader(transport: sent, version: version).writeNDEF(message)
                } catch {
                    return stoppedPartWay(
                        sent: sent.writes.filter { $0.failure == nil }.map { "page \($0.page)" },
                        state: NDEFWriteReport.type2State(
                            writes: sent.writes, ndefTLVAddress: layout.ndefTLVAddress, messageLength: message.count),
                        failure: NDEFWriteReport.type2Failure(
                            error, writes: sent.writes, ndefTLVAddress: layout.ndefTLVAddress,
                            messageLength: message.count),
                        backup: backupPath)
                }
                guard readBack(try reader.readNDEF(), message, backup: backupPath) else { return outcome }
            }
            if lock {
                let sent = Type2WriteRecorder(base: t, stop: stop)
                do {
                    try Type2TagReader(transport: sent, version: version).setReadOnly(lockBits: true)
                } catch {
                    let state = NDEFWriteReport.lockState(writes: sent.writes)
                    return stoppedPartWay(
                        sent: sent.writes.filter { $0.failure == nil }.map { "lock page \($0.page)" }, state: state,
                        failure: "lock failed: \(error). \(state)", backup: backupPath)
                }
                say("locked: the tag is now read-only for good")
                outcome.sent += sent.writes.map { "lock page \($0.page)" }
                outcome.tagState = "The tag is read-only for good"
            }
            return outcome
        case .iso7816(let t):
            guard case .ndef(let message, let lock) = r.operation else {
                return refuse("refused: locking a Type 4 Tag is vendor-specific; nothing written")
            }
            let reader = Type4TagReader(transport: AnyAPDUTransport(t))
            let cc: Type4CapabilityContainer
            do { cc = try reader.detect() } catch {
                return refuse("cannot use this tag: \(error); nothing written")
            }
            guard cc.isWritable else {
                return refuse(
                    "refused: the tag is read-only (CC write access \([cc.writeAccess].hexString())); nothing written")
            }
            if lock { return refuse("refused: locking a Type 4 Tag is vendor-specific; nothing written") }
            if r.dryRun {
                let recorder = DryRunAPDUTransport(base: t)
                do { try Type4TagReader(transport: recorder).writeNDEF(message, capabilityContainer: cc) } catch {
                    return refuse("refused: \(error); nothing written")
                }
                say("would send \(Figures.count(recorder.updates.count, "UPDATE BINARY APDU")), in this order:")
                for apdu in recorder.updates { say("  \(apdu.hexString(separator: " "))") }
                say("dry run: nothing written")
                outcome.status = .dryRun
                outcome.sent = recorder.updates.map { $0.hexString(separator: " ") }
                outcome.tagState = "Nothing was sent: the tag is unchanged"
                return outcome
            }
            let backupPath = try takeBackup()
            let sent = APDURecorder(base: t, stop: stop)  // the wording says what was sent (NFCTags)
            do {
                try Type4TagReader(transport: sent).writeNDEF(message, capabilityContainer: cc)
            } catch {
                return stoppedPartWay(
                    sent: sent.exchanges.filter(\.isUpdate).map {
                        $0.command.prefix(5).hexString(separator: " ") + "…"
                    },
                    state: NDEFWriteReport.type4State(exchanges: sent.exchanges),
                    failure: NDEFWriteReport.type4Failure(
                        error, exchanges: sent.exchanges, lengthFieldSize: cc.lengthFieldSize),
                    backup: backupPath)
            }
            _ = readBack(try reader.readNDEF(capabilityContainer: cc), message, backup: backupPath)
            return outcome
        case .felica, .iso15693:
            guard case .ndef(let message, let lock) = r.operation, !lock else {
                return refuse("refused: locking a FeliCa or ISO 15693 tag is not offered here; nothing written")
            }
            let family = connection.isFeliCa ? "Type 3" : "Type 5"
            // The procedure's own checks first (NDEF system / CC, read-only, size), then the
            // writes it would send, recorded and answered as a tag accepting them.
            let dry = VicinityWriteRecorder(connection, send: false)
            do { try dry.writeNDEF(message) } catch {
                return refuse("refused: \(error); nothing written")
            }
            if r.dryRun {
                say("would send \(Figures.count(dry.writes.count, "\(family) write")), in this order:")
                for w in dry.writes { say("  \(w.hexString(separator: " "))") }
                say("dry run: nothing written")
                outcome.status = .dryRun
                outcome.sent = dry.writes.map { $0.hexString(separator: " ") }
                outcome.tagState = "Nothing was sent: the tag is unchanged"
                return outcome
            }
            let backupPath = try takeBackup()
            let sent = VicinityWriteRecorder(connection, send: true)
            do { try sent.writeNDEF(message) } catch {
                return stoppedPartWay(
                    sent: sent.writes.map { $0.hexString(separator: " ") },
                    state: sent.writes.isEmpty
                        ? "Nothing was written: the tag is unchanged"
                        : "\(sent.writes.count) write\(sent.writes.count == 1 ? "" : "s") reached the tag: its NDEF area may be partly written",
                    failure: "\(family) write failed: \(error)", backup: backupPath)
            }
            _ = readBack(try sent.readNDEF(), message, backup: backupPath)
            return outcome
        }
    }

    static func describe(_ target: DetectedTarget, _ version: TagVersion?) -> String {
        var s = "UID \(target.uid.hexString())"
        if let sak = target.sak { s += ", SAK \([sak].hexString())" }
        switch target.kind {
        case .type2: s += ", Type 2" + (version?.product.map { " (\($0.displayName))" } ?? "")
        case .type4: s += ", Type 4 (ISO-DEP)"
        case .felica: s += ", FeliCa (Type 3)"
        case .iso15693: s += ", ISO 15693 (Type 5)"
        case .other: s += ", not a Type 2/3/4/5 tag"
        }
        return s
    }

    /// Reads the tag whole (``TagSnapshot``) and writes it as a new backup (``/NFCFiles/Backups``):
    /// a unique name, never replacing another backup. Throws before anything is sent to the tag.
    static func saveBackup(_ target: DetectedTarget, _ connection: TagConnection, to plan: Backups.Plan?) throws
        -> String
    {
        let file: TagFile
        do { file = try TagSnapshot.take(target, connection) } catch {
            throw CLIError.failure("cannot read the tag for the backup: \(error); nothing written")
        }
        return try saveBackup(file, uid: target.uid, to: plan)
    }

    /// Writes `file` (the tag as just read) as a new backup (``/NFCFiles/Backups``).
    static func saveBackup(_ file: TagFile, uid: [UInt8], to plan: Backups.Plan?) throws -> String {
        let stamp = TagSnapshot.utcNow().filter { $0.isNumber || $0 == "T" }.replacingOccurrences(of: "T", with: "-")
        let stem = "nfcbench-backup-\(uid.hexString())-\(stamp)"
        guard let plan else { throw CLIError.failure("no backup place (a dry run takes none); nothing written") }
        do throws(FileError) { return try plan.write(Array(file.jsonText().utf8), stem: stem) } catch {
            let e = FileError(
                error.kind, path: error.path, "can't write the backup: \(error.reason); nothing written to the tag")
            throw CLIError(e)
        }
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

/// Forwards READ and GET_VERSION to the tag; records WRITEs and answers them ACK.
final class DryRunType2Transport: Type2TagTransport {
    let base: any Type2TagTransport
    private(set) var writes: [(page: UInt8, data: [UInt8])] = []
    init(base: any Type2TagTransport) { self.base = base }
    func read(page: UInt8) throws -> [UInt8] { try base.read(page: page) }
    func write(page: UInt8, data: [UInt8]) throws { writes.append((page, data)) }
    func getVersion() throws -> [UInt8]? { try base.getVersion() }
    func reactivate() throws { try base.reactivate() }
    func fastRead(from first: UInt8, to last: UInt8) throws -> [UInt8] { try base.fastRead(from: first, to: last) }
    var fastReadPageLimit: Int { base.fastReadPageLimit }
    /// A dry run sends no raw frame: only READ and GET_VERSION reach the tag.
    func transceive(_ frame: [UInt8]) throws -> Type2Answer {
        guard frame.first == 0x30 || frame.first == 0x60 else { throw TagCommunicationError.unsupportedCommand(frame) }
        return try base.transceive(frame)
    }
}

/// Forwards every APDU except UPDATE BINARY (`D6`), which it records and answers `90 00`.
final class DryRunAPDUTransport: APDUTransport {
    let base: any APDUTransport
    private(set) var updates: [[UInt8]] = []
    init(base: any APDUTransport) { self.base = base }
    var maximumResponseLength: Int { base.maximumResponseLength }
    func transmit(_ command: [UInt8]) throws -> [UInt8] {
        if command.count >= 2, command[1] == 0xD6 {
            updates.append(command)
            return [0x90, 0x00]
        }
        return try base.transmit(command)
    }
}

extension TagConnection {
    var isFeliCa: Bool {
        if case .felica = self { return true }
        return false
    }
}

/// The Type 3 / Type 5 NDEF procedures over a connection whose write commands (FeliCa
/// Update `08`, ISO 15693 WRITE `21`/`24`/`31`/`34`) are recorded, and sent only when
/// `send` (otherwise answered as a tag accepting them: a dry run).
final class VicinityWriteRecorder: FeliCaTransport, ISO15693Transport, @unchecked Sendable {
    let connection: TagConnection
    let send: Bool
    private(set) var writes: [[UInt8]] = []

    init(_ connection: TagConnection, send: Bool) {
        self.connection = connection
        self.send = send
    }

    func exchange(_ frame: [UInt8]) throws -> [UInt8] {
        guard case .felica(let t) = connection else { throw TagCommunicationError.unsupportedCommand(frame) }
        guard frame.count >= 10, frame[1] == 0x08 else { return try t.exchange(frame) }
        if !send {
            writes.append(frame)
            return [0x0C, 0x09] + Array(frame[2..<10]) + [0x00, 0x00]
        }
        let r = try t.exchange(frame)
        writes.append(frame)
        return r
    }

    func request(_ request: [UInt8]) throws -> [UInt8] {
        guard case .iso15693(let t) = connection else { throw TagCommunicationError.unsupportedCommand(request) }
        guard request.count >= 2, [0x21, 0x24, 0x31, 0x34].contains(request[1]) else { return try t.request(request) }
        if !send {
            writes.append(request)
            return [0x00]
        }
        let r = try t.request(request)
        writes.append(request)
        return r
    }

    func writeNDEF(_ message: [UInt8]) throws {
        if connection.isFeliCa {
            try Type3TagReader(transport: self).writeNDEF(message)
        } else {
            try Type5TagReader(transport: self).writeNDEF(message)
        }
    }

    func readNDEF() throws -> [UInt8] {
        if connection.isFeliCa { return try Type3TagReader(transport: self).readNDEF() }
        return try Type5TagReader(transport: self).readNDEF()
    }
}
