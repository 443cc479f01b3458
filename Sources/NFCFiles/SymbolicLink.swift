import Glibc

/// The links nfcbench makes at a path the user names (`virtual pn532 --pty PATH`): a link is
/// made only where nothing is, or over an old link into `/dev/pts/` (a virtual device's, left
/// behind by a `kill -9`); a file, a folder, a FIFO, a device or any other link there is never
/// replaced (73).
public enum SymbolicLink {
    /// Checks that a link can be made at `path`. `label` names it in errors (`--pty x`).
    /// Throws ``FileError/Kind/cantCreate`` (73).
    public static func plan(_ path: String, label: String) throws(FileError) {
        guard !path.isEmpty else { throw FileError(.cantCreate, path: label, "an empty path") }
        if let st = FilePath.linkStatus(path) {
            guard st.st_mode & S_IFMT == S_IFLNK, isStalePTYLink(path) else {
                let what =
                    st.st_mode & S_IFMT == S_IFLNK
                    ? "a symbolic link to \(FilePath.linkTarget(path) ?? "?")" : FilePath.kindName(st.st_mode)
                throw FileError(
                    .cantCreate, path: label,
                    "is already \(what): a link is made only where nothing is (or over an old /dev/pts link); give another path",
                    errno: EEXIST)
            }
            return
        }
        let folder = FilePath.folder(of: path)
        guard let f = FilePath.status(folder) else {
            throw FileError(.cantCreate, path: label, "the folder \(folder) does not exist", errno: ENOENT)
        }
        guard f.st_mode & S_IFMT == S_IFDIR else {
            throw FileError(.cantCreate, path: label, "\(folder) is a file, not a folder", errno: ENOTDIR)
        }
        guard access(folder, W_OK | X_OK) == 0 else {
            let code = errno
            throw FileError(
                .cantCreate, path: label, "can't write in \(folder) (\(String(cString: strerror(code))))", errno: code)
        }
    }

    /// Makes `path` a symbolic link to `target` (planned again first). Throws ``FileError``:
    /// 73 when it can't be made there, 74 when the file system fails (`ENOSPC`, `EIO`).
    public static func make(_ path: String, to target: String, label: String) throws(FileError) {
        try plan(path, label: label)
        if FilePath.linkStatus(path) != nil { unlink(path) }
        guard symlink(target, path) == 0 else {
            let code = errno
            throw FileError(
                FileError.isSpaceOrIO(code) ? .io : .cantCreate, path: label,
                "can't make the link (\(String(cString: strerror(code))))", errno: code)
        }
    }

    /// Removes `path` if it is still a link to `target` (what this process made).
    public static func remove(_ path: String, ifTo target: String) {
        if FilePath.linkTarget(path) == target { unlink(path) }
    }

    /// A link into `/dev/pts/` (a pseudo-terminal's slave): what a virtual device leaves.
    static func isStalePTYLink(_ path: String) -> Bool {
        FilePath.linkTarget(path)?.hasPrefix("/dev/pts/") == true
    }
}
