import Glibc

/// Why a file could not be read or written: the path as the user named it, what is wrong in
/// words a person can act on, and the exit status `sysexits.h` gives it.
///
/// - ``Kind/cantCreate``: the output can't be made (its folder is missing or is a file, the path
///   is a folder, no permission, a link refused by the protected-symlinks rule): `73`.
/// - ``Kind/io``: a `write(2)`, `fsync(2)`, `close(2)` or `read(2)` failed part way (`ENOSPC`,
///   `EIO`, …): `74`. Nothing was left half-written at the path (see ``OutputFile``).
/// - ``Kind/noInput``: an input that does not exist or can't be read: `66`.
/// - ``Kind/sameFile``: an output that is the same file as an input or another output of the
///   command, refused before anything is read or sent: `64`.
public struct FileError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case cantCreate
        case io
        case noInput
        case sameFile
    }

    public var kind: Kind
    /// The path as the user named it (`-` for standard input or output), or the label of the
    /// option that named it (`--out x`).
    public var path: String
    /// What is wrong, without its subject: "No space left on device", "the folder a does not exist".
    public var reason: String
    /// The system's error number, when one caused it.
    public var errno: Int32?

    public init(_ kind: Kind, path: String, _ reason: String, errno: Int32? = nil) {
        self.kind = kind
        self.path = path
        self.reason = reason
        self.errno = errno
    }

    /// `kind` for the system error `code` during `what` (a verb: "write", "fsync"), its words
    /// from `strerror(3)`.
    public static func system(_ kind: Kind, path: String, _ code: Int32, during what: String? = nil) -> FileError {
        let words = String(cString: strerror(code))
        return FileError(kind, path: path, what.map { "\($0) failed: \(words)" } ?? words, errno: code)
    }

    /// `sysexits.h`: 73 EX_CANTCREAT, 74 EX_IOERR, 66 EX_NOINPUT, 64 EX_USAGE.
    public var exitCode: Int32 {
        switch kind {
        case .cantCreate: 73
        case .io: 74
        case .noInput: 66
        case .sameFile: 64
        }
    }

    public var description: String { "\(path): \(reason)" }

    /// The same error naming `label` (`--out x`) instead of the bare path.
    public func labelled(_ label: String) -> FileError {
        var e = self
        e.path = label
        return e
    }
}
