import Foundation
import NFCTags
import ReaderSession

/// `nfcbench write`, and `nfcbench lock`: NDEF writes through NFCTags' Type 2 and Type 4
/// procedures on any reader (written once against the frontend: a Type 2 tag behind a PC/SC
/// reader is written with PC/SC part 3 UPDATE BINARY `FF D6`, on libnfc with WRITE `A2`),
/// with a backup first and an exact dry run.
enum WriteCommand {
    static let command = Command(
        path: ["write"],
        abstract: "Write an NDEF message to the tag on a reader (backup first; --dry-run shows the writes)",
        usage:
            "write --device D --ndef SPEC [--dry-run] [--backup FILE] [--timeout S] [--lock --yes-i-understand-this-is-irreversible]",
        help: """
            OPTIONS:
              --device D     pcsc:READER, a libnfc connstring (pn532_uart:PATH, acr122_usb:…, 'libnfc'),
                             or sim:SCENARIO
              --ndef SPEC    the message, one record:
            \(NDEFSpec.help)
              --dry-run      read the tag, print exactly the pages (Type 2: WRITE A2, or UPDATE BINARY
                             FF D6 through PC/SC) or APDUs (Type 4) the write would send, and write
                             nothing (no backup either)
              --backup FILE  where the old content goes (our tag-file JSON) before anything is written;
                             default ./nfcbench-backup-<UID>-<time>.json
              --timeout S    how long to wait for a tag (default 10)
              --lock         after writing, make the tag read-only: CC write access Fh, static and dynamic
                             lock bits set. IRREVERSIBLE on a real tag (OTP bits). Needs
                             --yes-i-understand-this-is-irreversible. Type 2 only.

            Refused, with nothing written: a read-only CC, pages the write would touch that lock bits
            lock, a message larger than the tag's maximum. A write that fails part way says exactly
            which pages were written (Type 2) and where the backup is. Exit 0 written, 1 refused or
            failed, 64 usage, 65 bad SPEC, 69 no device or no tag.
            """,
        run: { args in
            let device = try requireDevice(&args)
            guard let spec = try args.option("ndef") else { throw CLIError.usage("--ndef SPEC is required") }
            let dryRun = args.flag("dry-run")
            let backup = try args.option("backup")
            let timeout = try args.seconds("timeout") ?? .seconds(10)
            let lock = args.flag("lock")
            let confirmed = args.flag("yes-i-understand-this-is-irreversible")
            try args.finish()
            if lock && !confirmed && !dryRun {
                throw CLIError.usage(
                    "--lock is irreversible: it sets the tag's lock bits for good; add --yes-i-understand-this-is-irreversible"
                )
            }
            let message = try NDEFSpec.parse(spec)
            return try await write(
                command: "write", device: device, message: message, dryRun: dryRun, backup: backup,
                timeout: timeout, lock: lock, what: "NDEF message of \(message.count) bytes (\(spec))")
        })

    static func requireDevice(_ args: inout Arguments) throws(CLIError) -> String {
        guard let device = try args.device() else {
            throw .usage(
                "--device D is required (pcsc:READER, pn532_uart:PATH, … ; see 'nfcbench devices'), or set NFCBENCH_DEVICE"
            )
        }
        return device
    }

    /// Shared by write and format: backup, refusals, the write, read-back, and the optional lock.
    static func write(
        command: String, device: String, message: [UInt8], dryRun: Bool, backup: String?, timeout: Duration,
        lock: Bool, what: String
    ) async throws -> Int32 {
        // The backup's place is checked before the reader is touched: a tag is never
        // written without its backup, and a typo in the folder costs nothing.
        if !dryRun {
            try OutputFile.check(
                backup ?? "nfcbench-backup.json", option: "--backup",
                label: backup == nil ? "the backup goes to the current folder by default (--backup FILE)" : nil)
        }
        let reader = try BenchReader.open(
            device, command: command,
            setup: [
                "message_bytes": .int(Int64(message.count)), "dry_run": .bool(dryRun), "lock": .bool(lock),
                "backup": backup.map { .string($0) } ?? .null,
            ])
        defer { reader.close() }
        Output.out("\(dryRun ? "dry run: would write" : "writing") \(what) on \(device)")
        let viaPCSC: Bool = if case .pcsc = reader.spec.kind { true } else { false }
        let report = try await reader.withFirstTag(timeout: timeout) { target, connection -> [String] in
            try perform(
                target, connection, message: message, dryRun: dryRun, backup: backup, lock: lock, viaPCSC: viaPCSC)
        }
        for line in report { Output.out(line) }
        return 0
    }

    private static func perform(
        _ target: DetectedTarget, _ connection: TagConnection,
        message: [UInt8], dryRun: Bool, backup: String?, lock: Bool, viaPCSC: Bool
    ) throws -> [String] {
        var version: TagVersion? = nil
        if case .type2(let t) = connection {
            var probe = Type2TagReader(transport: t)
            version = try probe.identify()
        }
        var lines = ["tag: \(describe(target, version))"]
        switch connection {
        case .type2(let t):
            let reader = Type2TagReader(transport: t, version: version)
            let layout: Type2TagLayout
            do { layout = try reader.readLayout() } catch {
                throw CLIError.failure("cannot use this tag: \(error); nothing written")
            }
            guard layout.capabilityContainer.isWritable else {
                throw CLIError.failure("refused: the tag is read-only (\(layout.capabilityContainer)); nothing written")
            }
            if dryRun {
                let recorder = DryRunType2Transport(base: t)
                do { try Type2TagReader(transport: recorder, version: version).writeNDEF(message) } catch {
                    throw CLIError.failure("refused: \(error); nothing written")
                }
                if viaPCSC {
                    lines.append(
                        "would send \(Figures.count(recorder.writes.count, "UPDATE BINARY (FF D6) APDU")), in this order:"
                    )
                    for (page, data) in recorder.writes {
                        let apdu: [UInt8] = [0xFF, 0xD6, 0x00, page, 0x04] + data
                        lines.append("  page \(page): \(apdu.hexString(separator: " "))")
                    }
                } else {
                    lines.append(
                        "would send \(Figures.count(recorder.writes.count, "WRITE (A2) command")), in this order:")
                    for (page, data) in recorder.writes {
                        lines.append("  page \(page): \(data.hexString(separator: " "))")
                    }
                }
                if lock {
                    lines.append(
                        "then would lock: CC byte 3 = \u{0046}h, static lock bytes FF FF, every dynamic lock bit (irreversible)"
                    )
                }
                lines.append("dry run: nothing written")
                return lines
            }
            let backupPath = try saveBackup(target, connection, to: backup)
            lines.append("backup of the old content: \(backupPath)")
            let sent = Type2WriteRecorder(base: t)  // the wording says what was sent (NFCTags)
            do {
                try Type2TagReader(transport: sent, version: version).writeNDEF(message)
            } catch {
                throw CLIError.failure(
                    NDEFWriteReport.type2Failure(
                        error, writes: sent.writes, ndefTLVAddress: layout.ndefTLVAddress, messageLength: message.count)
                        + "; the old content is in \(backupPath)")
            }
            let back = try reader.readNDEF()
            guard back == message else {
                throw CLIError.failure("read-back differs from what was written; backup in \(backupPath)")
            }
            lines.append("wrote \(message.count) bytes of NDEF; read back identical")
            if lock {
                do { try reader.setReadOnly(lockBits: true) } catch {
                    throw CLIError.failure("lock failed: \(error)")
                }
                lines.append("locked: the tag is now read-only for good")
            }
        case .iso7816(let t):
            let reader = Type4TagReader(transport: AnyAPDUTransport(t))
            let cc: Type4CapabilityContainer
            do { cc = try reader.detect() } catch {
                throw CLIError.failure("cannot use this tag: \(error); nothing written")
            }
            guard cc.isWritable else {
                throw CLIError.failure(
                    "refused: the tag is read-only (CC write access \([cc.writeAccess].hexString())); nothing written")
            }
            if lock { throw CLIError.failure("refused: locking a Type 4 Tag is vendor-specific; nothing written") }
            if dryRun {
                let recorder = DryRunAPDUTransport(base: t)
                do { try Type4TagReader(transport: recorder).writeNDEF(message, capabilityContainer: cc) } catch {
                    throw CLIError.failure("refused: \(error); nothing written")
                }
                lines.append(
                    "would send \(Figures.count(recorder.updates.count, "UPDATE BINARY APDU")), in this order:")
                for apdu in recorder.updates { lines.append("  \(apdu.hexString(separator: " "))") }
                lines.append("dry run: nothing written")
                return lines
            }
            let backupPath = try saveBackup(target, connection, to: backup)
            lines.append("backup of the old content: \(backupPath)")
            let sent = APDURecorder(base: t)  // the wording says what was sent (NFCTags)
            do { try Type4TagReader(transport: sent).writeNDEF(message, capabilityContainer: cc) } catch {
                throw CLIError.failure(
                    NDEFWriteReport.type4Failure(error, exchanges: sent.exchanges, lengthFieldSize: cc.lengthFieldSize)
                        + "; the old content is in \(backupPath)")
            }
            let back = try reader.readNDEF(capabilityContainer: cc)
            guard back == message else {
                throw CLIError.failure("read-back differs from what was written; backup in \(backupPath)")
            }
            lines.append("wrote \(message.count) bytes of NDEF; read back identical")
        }
        return lines
    }

    static func describe(_ target: DetectedTarget, _ version: TagVersion?) -> String {
        var s = "UID \(target.uid.hexString())"
        if let sak = target.sak { s += ", SAK \([sak].hexString())" }
        switch target.kind {
        case .type2: s += ", Type 2" + (version?.product.map { " (\($0.displayName))" } ?? "")
        case .type4: s += ", Type 4 (ISO-DEP)"
        case .other: s += ", not a Type 2/4 tag"
        }
        return s
    }

    static func saveBackup(_ target: DetectedTarget, _ connection: TagConnection, to path: String?) throws -> String {
        let file: TagFile
        do { file = try TagSnapshot.take(target, connection) } catch {
            throw CLIError.failure("cannot read the tag for the backup: \(error); nothing written")
        }
        let stamp = TagSnapshot.utcNow().replacingOccurrences(of: ":", with: "")
        let out = path ?? "nfcbench-backup-\(target.uid.hexString())-\(stamp).json"
        do { try file.save(path: out) } catch {
            throw CLIError.cantCreate("can't write the backup: \(error); nothing written to the tag")
        }
        return out
    }
}

/// `nfcbench lock`: the irreversible step on its own.
enum LockCommand {
    static let command = Command(
        path: ["lock"],
        abstract: "Make the Type 2 tag on a reader read-only for good (irreversible)",
        usage: "lock --device D --yes-i-understand-this-is-irreversible [--timeout S]",
        help: """
            Writes CC byte 3 = Fh (read-only), the static lock bytes FF FF and every dynamic lock bit
            (NFC Forum T2T 1.0 §6.4.4). On a real tag these are one-time-programmable: the tag can
            never be written again. Refused on an already read-only tag.
            """,
        run: { args in
            let device = try WriteCommand.requireDevice(&args)
            let confirmed = args.flag("yes-i-understand-this-is-irreversible")
            let timeout = try args.seconds("timeout") ?? .seconds(10)
            try args.finish()
            guard confirmed else {
                throw CLIError.usage("locking is irreversible; add --yes-i-understand-this-is-irreversible")
            }
            let reader = try BenchReader.open(device, command: "lock")
            defer { reader.close() }
            let lines = try await reader.withFirstTag(timeout: timeout) { target, connection -> [String] in
                guard case .type2(let t) = connection else {
                    throw CLIError.failure("refused: locking a Type 4 Tag is vendor-specific")
                }
                var probe = Type2TagReader(transport: t)
                let version = try probe.identify()
                do {
                    try Type2TagReader(transport: t, version: version).setReadOnly(lockBits: true)
                } catch {
                    throw CLIError.failure("lock failed: \(error)")
                }
                return [
                    "tag: \(WriteCommand.describe(target, version))",
                    "locked: the tag is now read-only for good",
                ]
            }
            for l in lines { Output.out(l) }
            return 0
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
