public import Glibc

/// Folders made by nfcbench: `mkdir -p` with a mode (0700 by default: what nfcbench makes holds
/// tag data), every error naming the first folder that can't be made and the system's reason.
public enum Folder {
    /// Makes `dir` and the folders above it that are missing, each with `mode` (less the umask
    /// for `mkdir(2)`; a folder made 0700 is 0700 whatever the umask, as the umask only takes
    /// bits away). Throws ``FileError/Kind/cantCreate`` (`ENOSPC`/`EIO`: ``FileError/Kind/io``).
    public static func make(_ dir: String, mode: mode_t = 0o700) throws(FileError) {
        if let st = FilePath.status(dir) {
            if st.st_mode & S_IFMT == S_IFDIR { return }
            throw FileError(.cantCreate, path: dir, "is \(FilePath.kindName(st.st_mode)), not a folder", errno: ENOTDIR)
        }
        let parent = FilePath.parent(of: dir)
        if !parent.isEmpty && parent != dir { try make(parent, mode: mode) }
        if mkdir(dir, mode) != 0 && errno != EEXIST {
            let code = errno
            throw FileError(
                code == ENOSPC || code == EIO || code == EDQUOT ? .io : .cantCreate, path: dir,
                "can't make this folder: " + String(cString: strerror(code)), errno: code)
        }
    }

    /// `fsync(2)` of a folder, so a file renamed or made in it survives a crash (errors other
    /// than `EIO` are ignored: some file systems refuse a folder's fsync).
    static func sync(_ dir: String) -> Int32 {
        let fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        return fsync(fd) != 0 && errno == EIO ? EIO : 0
    }
}
