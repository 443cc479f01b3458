import Foundation
public import NFCFiles
public import NFCTags
import NFCTrace
public import ReaderSession

/// The tag writes of `nfcbench write`, `format` and `lock`, for any reader: an NDEF message
/// (then, with a lock, the lock bits), the lock alone, or a blank Type 2 tag's NDEF format,
/// through NFCTags' Type 2, Type 3, Type 4 and Type 5 procedures, each with a backup first
/// (``/NFCFiles/Backups``), an exact dry run (the commands it would send, recorded by the dry-run
/// transports and never sent), and an outcome that says what reached the tag when it stops part
/// way.
public enum TagWrite {
    /// What is written: an NDEF message (then, with `lock`, the lock), or only the lock.
    public enum Operation: Sendable {
        case ndef([UInt8], lock: Bool)
        case lock
        /// A blank Type 2 tag's CC and empty NDEF TLV (``/NFCTags/Type2NDEFFormat``); `size`: `--size`.
        case ndefFormat(size: Int?)
    }

    /// Writes (or, with `dryRun`, plans) `operation` on the tag just detected: identifies it,
    /// refuses what can't be done (read-only, not NDEF, a lock on Type 4/3/5) with nothing sent,
    /// takes the backup (``saveBackup(_:_:to:)``) before the first byte, writes through NFCTags'
    /// procedures with every command recorded, reads back, then locks when asked. `stop` is
    /// checked between two commands (a signal); `viaPCSC` words a Type 2 dry run as the
    /// reader's UPDATE BINARY APDUs. Each line for a person goes to `say`; with `redact`, a dry
    /// run's lines show what each command writes as its redacted text (`page 5: redacted:4
    /// bytes`, ``BenchRedaction``), the pages and APDU headers kept.
    ///
    /// Returns the outcome however the write ends (written, dry run, refused, failed part way,
    /// interrupted: ``/NFCTags/TagWriteOutcome``); throws only when the backup can't be taken or
    /// a read-back fails to reach the tag (``BenchError``, exit 1 or the file's status).
    public static func perform(
        _ target: DetectedTarget, _ connection: TagConnection, command: String, operation: Operation, dryRun: Bool,
        backup: Backups.Plan?, stop: StopRequest, viaPCSC: Bool, redact: Bool = false,
        say: @Sendable (String) -> Void
    ) throws -> TagWriteOutcome {
        var version: TagVersion? = nil
        if case .type2(let t) = connection {
            var probe = Type2TagReader(transport: t)
            version = try probe.identify()
        }
        let tag = describe(target, version)
        say("tag: \(tag)")
        var outcome = TagWriteOutcome(operation: command, status: .written, tag: tag)
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
        if case .ndefFormat(let size) = operation {
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
            if dryRun {
                say("would send \(Figures.count(format.writes.count, "write")), in this order:")
                for w in format.writes {
                    say("  page \(w.page): \(BenchRedaction.hex(w.bytes, separator: " ", redact: redact))")
                }
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
            switch operation {
            case .ndef(let m, let l): (message, lock) = (m, l)
            case .lock, .ndefFormat: (message, lock) = (nil, true)
            }
            if dryRun {
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
                    let shown =
                        !redact
                        ? bytes.hexString(separator: " ")
                        : viaPCSC ? BenchRedaction.commandAPDU(bytes) : BenchRedaction.text(bytes)
                    say("  page \(page): \(shown)")
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
            guard case .ndef(let message, let lock) = operation else {
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
            if dryRun {
                let recorder = DryRunAPDUTransport(base: t)
                do { try Type4TagReader(transport: recorder).writeNDEF(message, capabilityContainer: cc) } catch {
                    return refuse("refused: \(error); nothing written")
                }
                say("would send \(Figures.count(recorder.updates.count, "UPDATE BINARY APDU")), in this order:")
                for apdu in recorder.updates {
                    say("  \(redact ? BenchRedaction.commandAPDU(apdu) : apdu.hexString(separator: " "))")
                }
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
            guard case .ndef(let message, let lock) = operation, !lock else {
                return refuse("refused: locking a FeliCa or ISO 15693 tag is not offered here; nothing written")
            }
            let family = connection.isFeliCa ? "Type 3" : "Type 5"
            // The procedure's own checks first (NDEF system / CC, read-only, size), then the
            // writes it would send, recorded and answered as a tag accepting them.
            let dry = VicinityWriteRecorder(connection, send: false)
            do { try dry.writeNDEF(message) } catch {
                return refuse("refused: \(error); nothing written")
            }
            if dryRun {
                say("would send \(Figures.count(dry.writes.count, "\(family) write")), in this order:")
                for w in dry.writes {
                    say("  \(redact ? BenchRedaction.head(w, keep: 1) : w.hexString(separator: " "))")
                }
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

    public static func describe(_ target: DetectedTarget, _ version: TagVersion?) -> String {
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
    public static func saveBackup(_ target: DetectedTarget, _ connection: TagConnection, to plan: Backups.Plan?) throws
        -> String
    {
        let file: TagFile
        do { file = try TagSnapshot.take(target, connection) } catch {
            throw BenchError.failure("cannot read the tag for the backup: \(error); nothing written")
        }
        return try saveBackup(file, uid: target.uid, to: plan)
    }

    /// Writes `file` (the tag as just read) as a new backup (``/NFCFiles/Backups``).
    public static func saveBackup(_ file: TagFile, uid: [UInt8], to plan: Backups.Plan?) throws -> String {
        let stamp = TagSnapshot.utcNow().filter { $0.isNumber || $0 == "T" }.replacingOccurrences(of: "T", with: "-")
        guard let plan else { throw BenchError.failure("no backup place (a dry run takes none); nothing written") }
        let stem = plan.namedByUID ? "nfcbench-backup-\(uid.hexString())-\(stamp)" : "nfcbench-backup-\(stamp)"
        do throws(FileError) { return try plan.write(Array(file.jsonText().utf8), stem: stem) } catch {
            let e = FileError(
                error.kind, path: error.path, "can't write the backup: \(error.reason); nothing written to the tag")
            throw BenchError(e)
        }
    }
}
