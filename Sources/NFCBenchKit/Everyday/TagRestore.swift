public import NFCTrace

/// `nfcbench restore` as a library call, on the tag's connection (its thread): the tag read
/// (`snapshot`, as `dump` reads it), ``/NFCTags/Type2RestorePlan`` made and said, a backup of
/// what the tag held (`backup`, given the snapshot; only when something is to be written), the
/// writes, and the read-back. The report is one JSON object: `status` (`restored`, `dry_run`,
/// `refused`, `failed`, `interrupted`), `tag`, `writes` (page, bytes, kind, note), `skipped`
/// (page, kind, why), `backup`, `verified`, `sent`, `interrupted_by`, `error`.
public enum TagRestore {
    public static func run(
        _ connection: TagConnection, file: TagFile, name: String, options: Type2RestorePlan.Options, dryRun: Bool,
        stop: StopRequest, snapshot: () throws -> TagFile, backup: (TagFile) throws -> String,
        say: (String) -> Void
    ) throws -> JSONObject {
        var r: JSONObject = ["status": "refused"]
        guard case .type2(let t) = connection else {
            r["error"] = "the tag is ISO-DEP (Type 4): restore writes Type 2 pages"
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
        for w in plan.writes { say("  page \(w.page): \(w.bytes.hexString(separator: " ")) (\(w.note))") }
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
}
