import Glibc
import Synchronization

/// A command's standard output and error, written with checked `write(2)`s: a failure other
/// than `EPIPE` (which means the reader left: ``write(_:_:)`` returns it for the caller's
/// signal policy) is noted in ``OutputFailures`` as an I/O error of "standard output", and
/// nothing more is written there, so `nfcbench tag show --json > file` on a full disk ends
/// with 74 instead of success and an empty file.
public enum StandardOutput {
    private static let failed = Mutex<Set<Int32>>([])

    /// Where an output file on a descriptor (`-`, `/dev/stdout`) opened in this task writes
    /// instead of the descriptor (nil: the descriptor itself): a command run inside a test
    /// process, whose standard output is captured, gets its `--trace -` there too.
    @TaskLocal public static var redirect: (@Sendable (Int32, [UInt8]) -> Void)?

    /// Writes all of `bytes` to `fd` (1 or 2). Returns 0, or the `errno` of the write that failed.
    @discardableResult
    public static func write(_ fd: Int32, _ bytes: [UInt8]) -> Int32 {
        if failed.withLock({ $0.contains(fd) }) { return EIO }
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + off, $0.count - off) }
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                if code != EPIPE { fail(fd, code, during: "write") }
                return code
            }
            off += n
        }
        return 0
    }

    /// At the end of a command: standard output's `fsync(2)` when it is a regular file (a full
    /// disk may only say so then). Its failure, like every other, is in ``OutputFailures``.
    public static func finish() {
        var st = stat()
        if !failed.withLock({ $0.contains(1) }), fstat(1, &st) == 0, st.st_mode & S_IFMT == S_IFREG {
            if fsync(1) != 0, errno != EINVAL && errno != EROFS { fail(1, errno, during: "fsync") }
        }
    }

    static func name(_ fd: Int32) -> String { fd == 2 ? "standard error" : "standard output" }

    private static func fail(_ fd: Int32, _ code: Int32, during what: String) {
        let first = failed.withLock { $0.insert(fd).inserted }
        if first { OutputFailures.note(FileError.system(.io, path: name(fd), code, during: what)) }
    }
}
