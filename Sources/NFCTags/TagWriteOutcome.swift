import Synchronization

/// What `write`, `format` or `lock` did to a tag, in one value for both the text a person reads
/// and `--json`: whether it was written, what was sent, what the tag now reads as, and the
/// backup to restore from. An interrupted write (a signal, the tag lost) says all of it too.
public struct TagWriteOutcome: Sendable, Equatable {
    public enum Status: String, Sendable {
        /// Everything was written (and read back identical).
        case written
        /// `--dry-run`: nothing was sent.
        case dryRun = "dry_run"
        /// Refused before anything was sent (read-only, too long, locked pages).
        case refused
        /// A command failed part way (the tag lost, a NAK, a reader failure).
        case failed
        /// A signal stopped it between two commands.
        case interrupted
    }

    /// `write`, `format` or `lock`.
    public var operation: String
    public var status: Status
    /// The tag as identified ("UID 04 …, Type 2 (NTAG215)").
    public var tag: String?
    /// The backup taken before the first byte was sent, if one was.
    public var backup: String?
    /// The commands sent (`page 4`, `NLEN := 0`), in order; for a dry run, the ones that would be.
    public var sent: [String] = []
    /// How many commands the whole operation sends.
    public var planned: Int?
    /// What the tag reads as now, as a sentence.
    public var tagState: String?
    /// The signal that stopped it (`SIGINT`), for ``Status/interrupted``.
    public var interruptedBy: String?
    /// What went wrong, for ``Status/refused``, ``Status/failed`` and ``Status/interrupted``.
    public var error: String?

    public init(operation: String, status: Status, tag: String? = nil, backup: String? = nil) {
        self.operation = operation
        self.status = status
        self.tag = tag
        self.backup = backup
    }

    /// The sentence a person reads for a write that did not finish: what was sent, the tag's
    /// state, and the backup to restore from.
    public var unfinishedText: String {
        var s: String
        switch status {
        case .interrupted:
            s = "\(operation) interrupted by \(interruptedBy ?? "a signal")"
            s += planned.map { " after \(sent.count) of \($0) commands" } ?? " after \(sent.count) commands"
        default:
            s = "\(operation) stopped part way: \(error ?? "failed")"
            s += "; \(sent.count) command(s) sent"
        }
        if !sent.isEmpty { s += " (" + Self.compact(sent).joined(separator: ", ") + ")" }
        if let tagState { s += ". " + tagState }
        if let backup, !sent.isEmpty {
            s += ". The old content is in \(backup): restore the tag from that file"
        } else if let backup {
            s += ". The backup of the old content is in \(backup)"
        }
        return s
    }

    /// `page 4, page 5, page 6` as `pages 4-6` (runs of the same prefix with consecutive numbers).
    static func compact(_ items: [String]) -> [String] {
        var out: [String] = []
        var run: (prefix: String, first: Int, last: Int)? = nil
        func flush() {
            guard let r = run else { return }
            out.append(r.first == r.last ? "\(r.prefix) \(r.first)" : "\(r.prefix)s \(r.first)-\(r.last)")
            run = nil
        }
        for item in items {
            if let space = item.lastIndex(of: " "), let n = Int(item[item.index(after: space)...]) {
                let prefix = String(item[..<space])
                if let r = run, r.prefix == prefix, n == r.last + 1 {
                    run = (prefix, r.first, n)
                    continue
                }
                flush()
                run = (prefix, n, n)
            } else {
                flush()
                out.append(item)
            }
        }
        flush()
        return out
    }
}

/// The stop a signal asks for, checked by ``Type2WriteRecorder`` and ``APDURecorder`` before each
/// command that changes the tag: a write stops between two commands (each one whole on the tag),
/// never in the middle of one.
public final class StopRequest: Sendable {
    private let reason = Mutex<String?>(nil)
    public init() {}
    /// Asks for the stop (`why`: the signal's name); the first reason stays.
    public func request(_ why: String) { reason.withLock { if $0 == nil { $0 = why } } }
    /// The reason, once asked.
    public var requested: String? { reason.withLock { $0 } }
}

/// The error a recorder with a ``StopRequest`` throws instead of sending the next write.
public struct StoppedByRequest: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public var description: String { "stopped by \(reason) before the next write" }
}
