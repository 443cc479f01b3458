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
        abstract: "Write a dump or backup back onto the Type 2 tag on a reader (differing pages only; backup first)",
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
            65/66 the file, 69 no device or tag, 128+N stopped by signal N.
            """,
        validate: { o throws(CLIError) in _ = try Traces.Options(o) },
        run: { o in try await run(o) })

    static func run(_ o: ParsedOptions) async throws -> Int32 {
        let device = o.string("device")!
        let name = o.positional(0)!
        let path = try DataLocation.require(name, in: "tags")
        let file: TagFile
        do throws(DataFileError) { file = try TagFile.load(path: path) } catch { throw CLIError(error) }
        guard file.type.isType2 else {
            throw CLIError.data(
                "\(name): a \(file.type.rawValue) tag file; restore writes Type 2 pages (NTAG, Ultralight)")
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
                dryRun ? nil : try Backups.plan(o.string("backup"), environment: ProcessInfo.processInfo.environment)
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
            guard case .type2(let t) = connection else {
                r["status"] = "refused"
                r["error"] = "the tag is ISO-DEP (Type 4): restore writes Type 2 pages"
                return r
            }
            let current = try TagSnapshot.take(target, connection)
            r["tag"] = .string("\(current.type.rawValue) UID \(target.uid.hexString())")
            let plan: Type2RestorePlan
            do { plan = try Type2RestorePlan(file: file, current: current, options: options) } catch {
                r["status"] = "refused"
                r["error"] = .string("refused: \(error); nothing written")
                return r
            }
            r["writes"] = .array(
                plan.writes.map {
                    .object([
                        "page": .int(Int64($0.page)), "bytes": .string($0.bytes.hexString()),
                        "kind": .string($0.kind.rawValue), "note": .string($0.note),
                    ])
                })
            r["skipped"] = .array(
                plan.skipped.map {
                    .object(["page": .int(Int64($0.page)), "kind": .string($0.kind.rawValue), "why": .string($0.why)])
                })
            say(
                "\(dryRun ? "dry run: would write" : "restoring") \(name) onto \(current.type.rawValue) UID \(target.uid.hexString())"
            )
            for w in plan.writes {
                say("  page \(w.page): \(w.bytes.hexString(separator: " ")) (\(w.note))")
            }
            for s in plan.skipped { say("  left page \(s.page): \(s.why)") }
            if plan.writes.isEmpty { say("nothing to write: the tag holds the file's pages already") }
            if dryRun {
                r["status"] = "dry_run"
                say("dry run: nothing written")
                return r
            }
            guard !plan.writes.isEmpty else {
                r["status"] = "restored"
                r["verified"] = true
                return r
            }
            let backup = try WriteCommand.saveBackup(current, uid: target.uid, to: backupPlan)
            r["backup"] = .string(backup)
            say("backup of the old content: \(backup)")
            do throws(Type2RestoreStopped) { try plan.apply(t, stop: stop) } catch {
                r["status"] = error.stoppedBy == nil ? "failed" : "interrupted"
                r["interrupted_by"] = error.stoppedBy.map { .string($0) } ?? .null
                r["sent"] = .int(Int64(error.written))
                r["error"] = .string(
                    "\(error.cause); \(error.written) of \(plan.writes.count) writes sent; the old content is in \(backup)"
                )
                return r
            }
            let differing = try plan.verify(t)
            r["verified"] = .bool(differing.isEmpty)
            if differing.isEmpty {
                r["status"] = "restored"
                say("wrote \(Figures.count(plan.writes.count, "page")); read back identical")
            } else {
                r["status"] = "failed"
                r["error"] = .string(
                    "read-back differs on pages \(differing.map(String.init).joined(separator: ", ")); the old content is in \(backup)"
                )
            }
            return r
        }
        reader.trace.record("restore_outcome", report)
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
