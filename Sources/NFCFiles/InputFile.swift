import Glibc

/// The one way nfcbench reads a file the user named (a tag file, a trace, a scenario, a
/// profile): `-` is standard input (so are `/dev/stdin` and `/dev/fd/0`), anything that can be
/// opened and read is read to its end (a FIFO, a process substitution), and every error names
/// the path: ``FileError/Kind/noInput`` (66) when it does not exist, is a folder or can't be
/// opened, ``FileError/Kind/io`` (74) when a `read(2)` fails part way.
public enum InputFile {
    /// Inputs larger than this are refused (no data file nfcbench reads comes near it; a trace
    /// is capped at 16 MiB by default).
    public static let maximumBytes = 1 << 30

    /// The bytes of `path` (`-`: standard input). `label` names it in errors (the path by default).
    public static func read(_ path: String, label: String? = nil) throws(FileError) -> [UInt8] {
        let label = label ?? path
        let fd: Int32
        let owned: Bool
        if path == "-" {
            fd = 0
            owned = false
        } else {
            guard !path.isEmpty else { throw FileError(.noInput, path: label, "an empty path; give a file name") }
            fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
            guard fd >= 0 else {
                let code = errno
                switch code {
                case ENOENT: throw FileError(.noInput, path: label, "no such file", errno: code)
                case ENOTDIR:
                    throw FileError(.noInput, path: label, "no such file (a part of the path is a file)", errno: code)
                case EACCES: throw FileError(.noInput, path: label, "cannot be read (permissions?)", errno: code)
                default: throw FileError.system(.noInput, path: label, code)
                }
            }
            owned = true
        }
        defer { if owned { close(fd) } }
        var st = stat()
        if fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFDIR {
            throw FileError(.noInput, path: label, "is a folder, not a file", errno: EISDIR)
        }
        var bytes: [UInt8] = []
        if st.st_mode & S_IFMT == S_IFREG, st.st_size > 0 { bytes.reserveCapacity(Int(st.st_size)) }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EISDIR { throw FileError(.noInput, path: label, "is a folder, not a file", errno: code) }
                throw FileError.system(.io, path: label, code, during: "read")
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            guard bytes.count <= maximumBytes else {
                throw FileError(.io, path: label, "larger than \(maximumBytes >> 20) MiB: not read", errno: EFBIG)
            }
        }
        return bytes
    }
}
