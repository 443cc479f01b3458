import Glibc

/// Where the backups of `write`, `format` and `lock` go, and how one is written so that no
/// backup ever replaces another.
///
/// - Folder: `$XDG_STATE_HOME/nfcbench/backups`, else `~/.local/state/nfcbench/backups`
///   (made 0700, and used only when it passes ``PrivateFolder``), never the current folder;
///   backups are never rotated.
/// - Name: `nfcbench-backup-<UID>-<yyyyMMdd-HHmmss>.json`; when that name is taken (two writes
///   to one tag in one second), `…-2.json`, `…-3.json`: each is created with `O_EXCL`, so two
///   processes can never take one name. Under `--redact` the name has no UID (``Plan/namedByUID``).
/// - `--backup PATH` chooses: a folder (the name above, in it), a file name (created with
///   `O_EXCL`; when a file is there already, the counter goes before its extension:
///   `b.json` → `b-2.json`), `-` or a FIFO, character device or `/dev/stdout` (written into).
/// - Each backup is written, `fsync`ed and closed, every step checked (mode 0600: a tag's whole
///   memory is the user's alone); a backup that could not be written whole is removed and the
///   error (74) stops the command before anything is sent to the tag.
public enum Backups {
    /// The default folder for `environment`.
    public static func folder(environment: [String: String]) -> String {
        if let x = environment["XDG_STATE_HOME"], !x.isEmpty { return x + "/nfcbench/backups" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? homeFromPasswd()
        return home + "/.local/state/nfcbench/backups"
    }

    /// The home folder from the password database (`getpwuid_r(3)`), for a process without `$HOME`.
    static func homeFromPasswd() -> String {
        var pw = passwd()
        var result: UnsafeMutablePointer<passwd>? = nil
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(geteuid(), &pw, &buffer, buffer.count, &result) == 0, let entry = result,
            let dir = entry.pointee.pw_dir
        else { return "/" }
        return String(cString: dir)
    }

    /// Where one backup will go, checked before the reader is touched (``Backups/plan(_:environment:namedByUID:)``).
    public struct Plan: Sendable, Equatable {
        enum Target: Sendable, Equatable {
            /// A unique name in this folder.
            case folder(String)
            /// This name, or the next free one with a counter.
            case file(String)
            /// Written into (standard output, a FIFO, a character device).
            case stream(OutputFile)
        }
        let target: Target
        /// How messages name it.
        public let label: String
        /// Whether a backup's name carries the tag's UID; `--redact` names it by its time
        /// alone (`nfcbench-backup-<yyyyMMdd-HHmmss>.json`), since the name is shown and traced.
        public var namedByUID = true

        /// Writes `bytes` as a new backup; `stem` names it in a folder (`nfcbench-backup-UID-STAMP`).
        /// Returns the path written (`-` for standard output). Throws ``FileError``.
        public func write(_ bytes: [UInt8], stem: String) throws(FileError) -> String {
            switch target {
            case .stream(let file):
                try file.write(bytes)
                return file.named
            case .folder(let folder):
                return try Backups.writeExclusive(
                    bytes, base: FilePath.join(folder, stem), extension: ".json", label: label)
            case .file(let path):
                let name = FilePath.lastComponent(of: path)
                let folder = FilePath.parent(of: path)
                let stemPart = FilePath.stem(of: name)
                let ext = String(name.dropFirst(stemPart.count))
                return try Backups.writeExclusive(
                    bytes, base: FilePath.join(folder, stemPart), extension: ext, label: label)
            }
        }
    }

    /// Checks where a backup goes: `path` as `--backup` gave it, or the default folder (made
    /// when missing: 0700). Throws ``FileError/Kind/cantCreate`` (73) when it can't be written
    /// (a missing folder, a refused link, a folder that is not the user's alone).
    /// `namedByUID: false` (`--redact`): see ``Plan/namedByUID``.
    public static func plan(_ path: String?, environment: [String: String], namedByUID: Bool = true)
        throws(FileError) -> Plan
    {
        var plan = try planned(path, environment: environment)
        plan.namedByUID = namedByUID
        return plan
    }

    static func planned(_ path: String?, environment: [String: String]) throws(FileError) -> Plan {
        guard let path else {
            let dir = folder(environment: environment)
            do { try PrivateFolder.prepare(dir, createParents: true) } catch {
                throw FileError(
                    .cantCreate, path: "the backup folder \(dir)",
                    "\(error.problem) (give --backup PATH, or set XDG_STATE_HOME)")
            }
            return Plan(target: .folder(dir), label: "the backup folder \(dir)")
        }
        let label = "--backup \(path)"
        if path != "-", let st = FilePath.status(path), st.st_mode & S_IFMT == S_IFDIR {
            guard access(path, W_OK | X_OK) == 0 else {
                let code = errno
                throw FileError(
                    .cantCreate, path: label, "can't write in it (\(String(cString: strerror(code))))", errno: code)
            }
            return Plan(target: .folder(path), label: label)
        }
        let file = try OutputFile.plan(path, label: label)
        switch file.destination {
        case .descriptor, .writeInto: return Plan(target: .stream(file), label: label)
        case .create, .replace, .inPlace: return Plan(target: .file(file.path), label: label)
        }
    }

    /// `base + ext`, else `base-2 + ext`, `base-3 + ext`…, each tried with `O_CREAT | O_EXCL`;
    /// written, synced and closed, checked. Returns the path made.
    static func writeExclusive(_ bytes: [UInt8], base: String, extension ext: String, label: String) throws(FileError)
        -> String
    {
        var n = 1
        while true {
            let path = n == 1 ? base + ext : "\(base)-\(n)\(ext)"
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd < 0 {
                let code = errno
                if code == EEXIST && n < 10_000 {
                    n += 1
                    continue
                }
                throw FileError(
                    FileError.isSpaceOrIO(code) ? .io : .cantCreate, path: label,
                    "can't make \(path) (\(String(cString: strerror(code))))", errno: code)
            }
            let file = OutputFile(
                named: path, label: path, path: path, destination: .create, mode: 0o600, followLinks: false)
            let stream = FileWriter(file: file, fd: fd, owned: true, temporary: nil, createdHere: true)
            if fchmod(fd, 0o600) == 0 { stream.write(bytes) } else { stream.fail(errno, during: "fchmod") }
            do { try stream.finish() } catch {
                unlink(path)
                var e = error
                if let r = e.reason.range(of: "; it holds only") { e.reason = String(e.reason[..<r.lowerBound]) }
                e.reason += "; the partial backup was removed"
                throw e
            }
            if Folder.sync(FilePath.folder(of: path)) != 0 {
                throw FileError(
                    .io, path: path, "fsync of its folder failed: \(String(cString: strerror(EIO)))", errno: EIO)
            }
            return path
        }
    }
}
