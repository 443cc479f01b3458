public import NFCTrace

/// `nfcbench restore` as a library call, on the tag's connection (its thread): the tag read
/// (`snapshot`, as `dump` reads it), ``/NFCTags/Type2RestorePlan`` made and said, a backup of
/// what the tag held (`backup`, given the snapshot; only when something is to be written), the
/// writes, and the read-back. The report is one JSON object: `status` (`restored`, `dry_run`,
/// `refused`, `failed`, `interrupted`), `dry_run` (whether it was one), `tag`, `writes` (page,
/// bytes, kind, note), `skipped` (page, kind, why), `backup`, `verified`, `sent` (in a dry run
/// empty, as write's; after a stop the count of writes sent), `would_send` (a dry run's writes in
/// order, as write's: `page N`, or a Type 4 tag's UPDATE BINARY APDUs), `interrupted_by`, `error`.
///
/// With `redact` (`--redact`), the lines and the report name neither UID (the tag's, the
/// file's: `UID redacted:7 bytes`, ``BenchRedaction/scrub(_:_:)``) nor the bytes written
/// (`page 4: redacted:4 bytes`); the report's keys are the trace's redacted ones.
public enum TagRestore {
    public static func run(
        _ connection: TagConnection, file: TagFile, name: String, options: Type2RestorePlan.Options, dryRun: Bool,
        stop: StopRequest, redact: Bool = false, snapshot: () throws -> TagFile, backup: (TagFile) throws -> String,
        say: (String) -> Void
    ) throws -> JSONObject {
        guard redact else {
            return try run(
                connection, file: file, name: name, options: options, dryRun: dryRun, stop: stop, redactPages: false,
                snapshot: snapshot, backup: backup, say: say)
        }
        var uids = [file.activation.uid]
        let report = try run(
            connection, file: file, name: name, options: options, dryRun: dryRun, stop: stop, redactPages: true,
            snapshot: {
                let current = try snapshot()
                uids.append(current.activation.uid)
                return current
            }, backup: backup, say: { say(BenchRedaction.scrub($0, uids)) })
        var shown = TraceWriter.redacted(report)
        for e in shown.entries {
            if case .string(let s) = e.value { shown[e.key] = .string(BenchRedaction.scrub(s, uids)) }
        }
        return shown
    }

    static func run(
        _ connection: TagConnection, file: TagFile, name: String, options: Type2RestorePlan.Options, dryRun: Bool,
        stop: StopRequest, redactPages: Bool, snapshot: () throws -> TagFile, backup: (TagFile) throws -> String,
        say: (String) -> Void
    ) throws -> JSONObject {
        var r: JSONObject = ["status": "refused", "dry_run": .bool(dryRun)]
        guard case .type2(let t) = connection else {
            return try type4(
                connection, file: file, name: name, anyUID: options.anyUID, dryRun: dryRun, stop: stop,
                redactPages: redactPages, snapshot: snapshot, backup: backup, say: say)
        }
        guard file.type.isType2 else {
            r["error"] = .string(
                "refused: the file is a \(file.type.rawValue) tag; the tag is a Type 2 tag; nothing written")
            return r
        }
        let current = try snapshot()
        let uid = current.activation.uid.hexString()
        r["tag"] = .string("\(current.type.rawValue) UID \(uid)")
        let plan: Type2RestorePlan
        do { plan = try Type2RestorePlan(file: file, current: current, options: options) } catch {
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
        say("\(dryRun ? "dry run: would write" : "restoring") \(name) onto \(current.type.rawValue) UID \(uid)")
        for w in plan.writes {
            say("  page \(w.page): \(BenchRedaction.hex(w.bytes, separator: " ", redact: redactPages)) (\(w.note))")
        }
        for s in plan.skipped { say("  left page \(s.page): \(s.why)") }
        if plan.writes.isEmpty { say("nothing to write: the tag holds the file's pages already") }
        if dryRun {
            r["status"] = "dry_run"
            // As write's: nothing sent, what would be in `would_send`, in the order it would go.
            r["sent"] = .array([])
            r["would_send"] = .array(plan.writes.map { .string("page \($0.page)") })
            say("dry run: nothing written")
            return r
        }
        guard !plan.writes.isEmpty else {
            r["status"] = "restored"
            r["verified"] = true
            return r
        }
        let saved = try backup(current)
        r["backup"] = .string(saved)
        say("backup of the old content: \(saved)")
        do throws(Type2RestoreStopped) { try plan.apply(t, stop: stop) } catch {
            r["status"] = error.stoppedBy == nil ? "failed" : "interrupted"
            r["interrupted_by"] = error.stoppedBy.map { .string($0) } ?? .null
            r["sent"] = .int(Int64(error.written))
            r["error"] = .string(
                "\(error.cause); \(error.written) of \(plan.writes.count) writes sent; the old content is in \(saved)")
            return r
        }
        let differing = try plan.verify(t)
        r["verified"] = .bool(differing.isEmpty)
        if differing.isEmpty {
            r["status"] = "restored"
            say("wrote \(Figures.count(plan.writes.count, "page")); read back identical")
        } else {
            r["status"] = "failed"
            let pages = differing.map(String.init).joined(separator: ", ")
            r["error"] = .string("read-back differs on pages \(pages); the old content is in \(saved)")
        }
        return r
    }

    /// A Type 4 file onto a Type 4 tag: its NDEF message, when it differs, written as `write`
    /// writes one (NLEN 0 first, the data, NLEN last: NFC Forum T4T §5.5); the CC is the tag's
    /// own and is never written. Refused: another tag type, a read-only CC, a message larger than
    /// the tag's file, another UID unless `anyUID` (PC/SC shows the UID through `FF CA`).
    static func type4(
        _ connection: TagConnection, file: TagFile, name: String, anyUID: Bool, dryRun: Bool, stop: StopRequest,
        redactPages: Bool, snapshot: () throws -> TagFile, backup: (TagFile) throws -> String,
        say: (String) -> Void
    ) throws -> JSONObject {
        var r: JSONObject = ["status": "refused", "dry_run": .bool(dryRun)]
        guard case .iso7816(let t) = connection, let want = file.type4?.ndefMessage else {
            r["error"] = .string(
                "refused: the file is a \(file.type.rawValue) tag; the tag is a Type 4 tag; nothing written")
            return r
        }
        let current = try snapshot()
        let uid = current.activation.uid.hexString()
        r["tag"] = .string("type4 UID \(uid)")
        if current.activation.uid != file.activation.uid && !anyUID {
            r["error"] = .string(
                "refused: the file is of the tag with UID \(file.activation.uid.hexString()); this tag's UID is \(uid) (add --any-uid to restore its content onto another tag); nothing written"
            )
            return r
        }
        let reader = Type4TagReader(transport: Transport(base: t))
        let cc = try reader.detect()
        guard cc.isWritable else {
            r["error"] = "refused: the tag is read-only (its CC's write access); nothing written"
            return r
        }
        guard want.count <= cc.maximumNDEFMessageSize else {
            r["error"] = .string(
                "refused: the file's message is \(want.count) bytes; this tag holds at most \(cc.maximumNDEFMessageSize); nothing written"
            )
            return r
        }
        let differs = current.type4?.ndefMessage != want
        r["writes"] = .array(differs ? [.object(["ndef": .string(want.hexString()), "kind": "ndef_file"])] : [])
        r["skipped"] = .array([])
        say("\(dryRun ? "dry run: would write" : "restoring") \(name) onto type4 UID \(uid)")
        say(
            differs
                ? "  the NDEF message, \(want.count) bytes (NLEN 0 first, NLEN last)"
                : "nothing to write: the tag holds the file's NDEF message already")
        if dryRun {
            // As write's dry run on a Type 4 tag: the UPDATE BINARY APDUs it would send, recorded.
            var wouldSend: [[UInt8]] = []
            if differs {
                let recorder = DryRunAPDUTransport(base: t)
                try Type4TagReader(transport: recorder).writeNDEF(want, capabilityContainer: cc)
                wouldSend = recorder.updates
            }
            r["status"] = "dry_run"
            r["sent"] = .array([])
            r["would_send"] = .array(
                wouldSend.map { .string(redactPages ? BenchRedaction.commandAPDU($0) : $0.hexString(separator: " ")) })
            say("dry run: nothing written")
            return r
        }
        if !differs {
            r["status"] = "restored"
            r["verified"] = true
            return r
        }
        let saved = try backup(current)
        r["backup"] = .string(saved)
        say("backup of the old content: \(saved)")
        if let why = stop.requested {
            r["status"] = "interrupted"
            r["interrupted_by"] = .string(why)
            r["error"] = .string("stopped by \(why) before the first write; the tag is unchanged")
            return r
        }
        do { try reader.writeNDEF(want, capabilityContainer: cc) } catch {
            r["status"] = "failed"
            r["error"] = .string("\(error); the old content is in \(saved)")
            return r
        }
        let back = try reader.readNDEF(capabilityContainer: cc)
        r["verified"] = .bool(back == want)
        r["status"] = back == want ? "restored" : "failed"
        if back == want {
            say("wrote the NDEF message; read back identical")
        } else {
            r["error"] = .string("read-back differs from the file's message; the old content is in \(saved)")
        }
        return r
    }

    /// `any APDUTransport` as the concrete type `Type4TagReader` takes.
    struct Transport: APDUTransport {
        let base: any APDUTransport
        func transmit(_ command: [UInt8]) throws -> [UInt8] { try base.transmit(command) }
        var maximumResponseLength: Int { base.maximumResponseLength }
    }
}
