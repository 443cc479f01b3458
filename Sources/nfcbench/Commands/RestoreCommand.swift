import Foundation
import NFCBenchKit
import NFCFiles
import NFCTags
import NFCTrace

/// `nfcbench restore`: a dump or a backup written back onto a Type 2 tag, the pages that
/// differ only, in ``/NFCTags/Type2RestorePlan``'s order, after a backup, then read back.
enum RestoreCommand {
    static let command = Command(
        path: ["restore"],
        abstract: "Write a dump or backup back onto its tag on a reader (differing pages only; backup first)",
        options: [
            OptionSpec(
                "include-lock-bits", .flag,
                help: """
                    also write the CC and the static and dynamic lock bits (one-time programmable:
                    IRREVERSIBLE on a real tag)
                    """),
            OptionSpec("include-config", .flag, help: "also write the configuration pages (CFG0/CFG1; AUTH0/AUTH1)"),
            OptionSpec("any-uid", .flag, help: "restore onto a tag whose UID is not the file's"),
        ]
            + WriteCommand.tagWriteOptions(
                dryRun: "read the tag, print the pages the restore would write and those it leaves; write nothing"),
        positionals: [
            PositionalSpec(
                name: "FILE", help: "a tag file: a dump, a backup, or a name in hardware/tags/",
                missing: "say what to restore: restore --device D FILE")
        ],
        discussion: """
            Reads the tag, compares it page by page with FILE and writes only the pages that differ:
            the NDEF length is set to 0 first when the data changes (a reader in between sees an
            empty message), the user pages next with the NDEF length last, then configuration, the
            CC and the lock pages. The UID pages are fixed; PWD and PACK read as 00 on every tag and
            are never written; the CC (OTP), the lock pages and the configuration pages are left as
            they are unless --include-lock-bits / --include-config is given, and each page left
            that differs is said. One-time-programmable bits the tag has and the file has not
            cannot be cleared: said, never tried. Refused, with nothing written: a file of another
            tag type or size, a Type 4 file, another UID (unless --any-uid). A backup of the tag is
            written first, as write takes one; every written page is read back. Exit 0 restored
            (pages left that differ are listed), 1 refused, failed or not verified, 64 usage,
            65/66 the file, 69 no device or tag, 128+N stopped by signal N. A Type 4 file goes onto a
            Type 4 tag as its NDEF message (when it differs: NLEN 0 first, the data, NLEN last, as
            write writes one; the tag's CC is its own), with the same UID rule, backup and read-back.
            """,
        validate: { o throws(CLIError) in _ = try Traces.Options(o) },
        run: { o in try await run(o) })

    static func run(_ o: ParsedOptions) async throws -> Int32 {
        let device = o.string("device")!
        let name = o.positional(0)!
        let path = try DataLocation.require(name, in: "tags")
        let file: TagFile
        do throws(DataFileError) { file = try TagFile.load(path: path) } catch { throw CLIError(error) }
        guard !file.type.isSensedOnly else {
            throw CLIError.data("\(name): a \(file.type.rawValue) tag file holds no memory to restore")
        }

        let options = Type2RestorePlan.Options(
            includeLockBits: o.flag("include-lock-bits"), includeConfig: o.flag("include-config"),
            anyUID: o.flag("any-uid"))
        let dryRun = o.flag("dry-run")
        let json = o.flag("json")
        let traceOptions = try Traces.Options(o)
        let backupPlan: Backups.Plan?
        do throws(FileError) {
            backupPlan =
                dryRun
                ? nil
                : try Backups.plan(
                    o.string("backup"), environment: ProcessInfo.processInfo.environment,
                    namedByUID: !traceOptions.redact)
        } catch { throw CLIError(error) }
        let reader = try BenchReader.open(
            device, command: "restore",
            setup: [
                "file": .string(path), "dry_run": .bool(dryRun), "include_lock_bits": .bool(options.includeLockBits),
                "include_config": .bool(options.includeConfig), "any_uid": .bool(options.anyUID),
            ], trace: traceOptions, inputs: [NamedFile("FILE \(path)", path)])
        defer { reader.close() }
        let say: @Sendable (String) -> Void = { json || o.string("backup") == "-" ? Output.err($0) : Output.out($0) }
        let stop = StopRequest()
        let report = try await reader.withFirstTag(timeout: o.duration("timeout")!) {
            target, connection -> JSONObject in
            let signals = Signals.handle { sig in
                if Signals.stops(sig) { stop.request(Signals.name(sig)) } else { Signals.runDefault(sig) }
            }
            defer { signals.cancel() }
            var r: JSONObject = ["command": "restore", "device": .string(device), "file": .string(path)]
            r.merge(
                try TagRestore.run(
                    connection, file: file, name: name, options: options, dryRun: dryRun, stop: stop,
                    redact: traceOptions.redact, snapshot: { try TagSnapshot.take(target, connection) },
                    backup: { try WriteCommand.saveBackup($0, uid: target.uid, to: backupPlan) }, say: say))
            return r
        }
        reader.trace.record(.restoreOutcome, report)
        if json { Output.out(JSONValue.object(report).serialized) }
        let status: String = report["status"]?.stringValue ?? "failed"
        let ok = status == "restored" || status == "dry_run"
        if !json, !ok, let e = report["error"]?.stringValue { Output.err("error: \(e)") }
        if status == "interrupted", let by = report["interrupted_by"]?.stringValue {
            let signals: [String: Int32] = ["SIGINT": SIGINT, "SIGTERM": SIGTERM, "SIGHUP": SIGHUP]
            return 128 + (signals[by] ?? SIGTERM)
        }
        return ok ? 0 : 1
    }
}
