import Glibc
import Synchronization

/// The one way nfcbench writes a file the user named (`--out`, `--backup`, `--trace`,
/// `--pcapng`, `--svg`, `--save`, `profile import --out`, `new-app`'s files): what `cp`,
/// `curl -o` and `tar` users expect.
///
/// - `-` is standard output; so are `/dev/stdout`, `/dev/fd/1` and `/proc/self/fd/1` (and the
///   other descriptors by number): the bytes go into the open descriptor, which stays open.
/// - A path of any length works; only POSIX calls touch it (no Foundation path helper).
/// - Nothing there: a new file, mode ``mode`` (0600 by default, whatever the umask), made as a
///   temporary file beside it that is renamed into place once written and synced (a stream,
///   ``open(streaming:)``, is made at its place at once, so a trace survives `kill -9`).
/// - An existing regular file is replaced atomically: a temporary file in the same folder,
///   given the old file's owner and mode, written, `fsync`ed and `rename`d over it. A file with
///   more than one hard link (or one this user can't give its owner back, or in a folder this
///   user can't write) is truncated and written where it is, as `cp` does, so every link sees it.
/// - A symbolic link is written through to its target, which is then replaced as above; a
///   link owned by someone else in a world-writable sticky folder is refused, as the kernel's
///   `protected_symlinks` would (``FilePath/resolveLinks(_:label:)``).
/// - A FIFO or a character device gets the bytes written into it, never replaced. A folder, a
///   block device or a socket is refused.
/// - Every `write(2)`, `fsync(2)` and `close(2)` is checked: on `ENOSPC` or `EIO` the error
///   (``FileError/Kind/io``, exit 74) names the path and the system's reason, the partial
///   temporary file is removed and the earlier file, if any, is untouched.
///
/// ``plan(_:label:mode:followLinks:)`` checks all of this before a command reads or sends
/// anything (a typo in a folder name costs nothing); the write plans again, as the file system
/// may have changed since.
public struct OutputFile: Sendable, Equatable {
    /// What writing does at the path (see the type's rules).
    public enum Destination: Sendable, Equatable {
        /// An open descriptor (`-`, `/dev/stdout`): written into, left open.
        case descriptor(Int32)
        /// Nothing there yet: a new file.
        case create
        /// A regular file with one link: replaced atomically, keeping `owner`, `group` and `mode`.
        case replace(owner: UInt32, group: UInt32, mode: UInt32)
        /// A regular file with more hard links, or one that can't be replaced: truncated and
        /// written where it is.
        case inPlace
        /// A FIFO or a character device: opened for writing and written into.
        case writeInto
    }

    /// The path as the user gave it.
    public let named: String
    /// How messages name it (`--out x`; the path by default).
    public let label: String
    /// Where the bytes go, after links (`-` for standard output).
    public let path: String
    public let destination: Destination
    /// The mode a new file gets (0600: the user's alone).
    public let mode: UInt32
    /// False for a path that must not be a link (a trace in the trace folder): a link is refused.
    public let followLinks: Bool

    /// Checks `named` for writing and says what writing will do there. Throws
    /// ``FileError/Kind/cantCreate`` (73) naming `label` when it can't be written: its folder is
    /// missing, is a file or can't be written, the path is a folder, a block device or a
    /// socket, a link the protected-symlinks rule refuses, or a descriptor that is not open.
    public static func plan(
        _ named: String, label: String? = nil, mode: UInt32 = 0o600, followLinks: Bool = true
    ) throws(FileError) -> OutputFile {
        let label = label ?? named
        func make(_ path: String, _ d: Destination) -> OutputFile {
            OutputFile(named: named, label: label, path: path, destination: d, mode: mode, followLinks: followLinks)
        }
        func refuse(_ reason: String, _ code: Int32? = nil) -> FileError {
            FileError(.cantCreate, path: label, reason, errno: code)
        }
        guard !named.isEmpty else { throw refuse("an empty path; give a file name, or - for standard output") }
        if named == "-" { return make("-", .descriptor(1)) }
        var path = named
        if followLinks {
            let r = try FilePath.resolveLinks(named, label: label)
            if let fd = r.descriptor {
                guard fcntl(fd, F_GETFD) != -1 else { throw refuse("names descriptor \(fd), which is not open", EBADF) }
                return make(r.path, .descriptor(fd))
            }
            path = r.path
        } else if let st = FilePath.linkStatus(named), st.st_mode & S_IFMT == S_IFLNK {
            throw refuse("is a symbolic link, which is not followed here", ELOOP)
        }
        let euid = geteuid()
        guard let st = FilePath.linkStatus(path) else {
            let code = errno
            let folder = FilePath.folder(of: path)
            guard code == ENOENT else {
                if code == ENOTDIR, let f = FilePath.status(folder), f.st_mode & S_IFMT != S_IFDIR {
                    throw refuse("\(folder) is a file, not a folder", code)
                }
                throw refuse(String(cString: strerror(code)), code)
            }
            guard let f = FilePath.status(folder) else {
                if errno == ENOTDIR { throw refuse("\(folder) is not a folder", ENOTDIR) }
                throw refuse("the folder \(folder) does not exist", ENOENT)
            }
            guard f.st_mode & S_IFMT == S_IFDIR else { throw refuse("\(folder) is a file, not a folder", ENOTDIR) }
            guard access(folder, W_OK | X_OK) == 0 else {
                let code = errno
                throw refuse("can't write in \(folder) (\(String(cString: strerror(code))))", code)
            }
            return make(path, .create)
        }
        switch st.st_mode & S_IFMT {
        case S_IFDIR:
            throw refuse("is a folder; give a file name", EISDIR)
        case S_IFREG:
            let folder = FilePath.folder(of: path)
            let replaceable =
                st.st_nlink == 1 && access(folder, W_OK | X_OK) == 0 && (euid == 0 || st.st_uid == euid)
            if replaceable {
                return make(path, .replace(owner: st.st_uid, group: st.st_gid, mode: UInt32(st.st_mode & 0o7777)))
            }
            guard access(path, W_OK) == 0 else {
                let code = errno
                throw refuse("can't write it (\(String(cString: strerror(code))))", code)
            }
            return make(path, .inPlace)
        case S_IFIFO, S_IFCHR:
            guard access(path, W_OK) == 0 else {
                let code = errno
                throw refuse("can't write it (\(String(cString: strerror(code))))", code)
            }
            return make(path, .writeInto)
        case S_IFLNK:
            throw refuse("is a symbolic link that can't be read", ELOOP)
        default:
            throw refuse(
                "is \(FilePath.kindName(st.st_mode)): nfcbench writes files, FIFOs and character devices, nothing else")
        }
    }

    /// Writes `bytes` as the whole file, by the type's rules, checked to the end (planned
    /// again first). Throws ``FileError``: `cantCreate` (73) when it can't be made, `io` (74)
    /// when a write, fsync or close fails (nothing half-written is left at the path).
    public func write(_ bytes: [UInt8]) throws(FileError) {
        let now = try OutputFile.plan(named, label: label, mode: mode, followLinks: followLinks)
        let stream = try now.open(streaming: false)
        stream.write(bytes)
        try stream.finish()
    }

    /// Opens the file for writing piece by piece (``FileWriter``). `streaming`: a new file is
    /// made at its place at once (a trace that is read, or survives `kill -9`, while the run
    /// goes on); otherwise it is made as a temporary file renamed into place by
    /// ``FileWriter/finish()``. An existing regular file is always replaced at the finish,
    /// so it is untouched when the run fails.
    public func open(streaming: Bool = true) throws(FileError) -> FileWriter {
        func failure(_ code: Int32, _ path: String? = nil) -> FileError {
            let reason =
                path.map { "can't make \($0) (\(String(cString: strerror(code))))" } ?? String(cString: strerror(code))
            return FileError(FileError.isSpaceOrIO(code) ? .io : .cantCreate, path: label, reason, errno: code)
        }
        switch destination {
        case .descriptor(let fd):
            return FileWriter(file: self, fd: fd, owned: false, temporary: nil, createdHere: false)
        case .writeInto:
            let fd = Glibc.open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY)
            guard fd >= 0 else { throw failure(errno) }
            return FileWriter(file: self, fd: fd, owned: true, temporary: nil, createdHere: false)
        case .inPlace:
            let fd = Glibc.open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY)
            guard fd >= 0 else { throw failure(errno) }
            return FileWriter(file: self, fd: fd, owned: true, temporary: nil, createdHere: false)
        case .create where streaming:
            let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(mode))
            guard fd >= 0 else { throw failure(errno) }
            // The umask may have taken bits away from what was asked: the mode is exact.
            if fchmod(fd, mode_t(mode)) != 0 {
                let code = errno
                close(fd)
                unlink(path)
                throw failure(code)
            }
            return FileWriter(file: self, fd: fd, owned: true, temporary: nil, createdHere: true)
        case .create, .replace:
            let (fd, temporary) = try Self.temporaryFile(beside: path, label: label)
            var fileMode = mode
            if case .replace(let owner, let group, let oldMode) = destination {
                fileMode = oldMode
                if owner != geteuid() || group != getegid(), fchown(fd, owner, group) != 0 {
                    let code = errno
                    close(fd)
                    unlink(temporary)
                    throw FileError(
                        .cantCreate, path: label, "can't give it back its owner (\(String(cString: strerror(code))))",
                        errno: code)
                }
            }
            if fchmod(fd, mode_t(fileMode)) != 0 {
                let code = errno
                close(fd)
                unlink(temporary)
                throw failure(code)
            }
            return FileWriter(file: self, fd: fd, owned: true, temporary: temporary, createdHere: false)
        }
    }

    /// A new file (`mkstemp(3)`: `O_EXCL`, mode 0600) in the folder of `path`, named after it
    /// (`.NAME.nfcbench-XXXXXX`, the name shortened so the whole stays within `NAME_MAX`).
    static func temporaryFile(beside path: String, label: String) throws(FileError) -> (Int32, String) {
        let folder = FilePath.parent(of: path)
        var name = FilePath.lastComponent(of: path)
        while name.utf8.count > 200 { name.removeLast() }
        var template = Array(FilePath.join(folder.isEmpty ? "." : folder, ".\(name).nfcbench-XXXXXX").utf8CString)
        let fd = mkstemp(&template)
        guard fd >= 0 else {
            let code = errno
            throw FileError(
                FileError.isSpaceOrIO(code) ? .io : .cantCreate, path: label,
                "can't make a file in \(FilePath.folder(of: path)) (\(String(cString: strerror(code))))", errno: code)
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return (fd, temporary)
    }
}

extension FileError {
    /// Errors of the medium rather than of the request: a full disk, a quota, an I/O error.
    static func isSpaceOrIO(_ code: Int32) -> Bool {
        code == ENOSPC || code == EDQUOT || code == EIO || code == EFBIG
    }
}

/// An output being written (``OutputFile/open(streaming:)``): every `write(2)` is checked;
/// the first failure is kept (``failure``) and later writes are dropped; ``finish()`` syncs,
/// closes and renames into place, and throws that failure. Thread-safe.
///
/// Every failure is also noted in ``OutputFailures``, so a command that wrote a trace on a
/// full disk can end with exit 74 even if the part of it that wrote did not look.
public final class FileWriter: Sendable {
    public let file: OutputFile
    private let state: Mutex<State>
    /// ``StandardOutput/redirect`` as it was when a descriptor (`-`) was opened: where its bytes go.
    private let redirect: (@Sendable (Int32, [UInt8]) -> Void)?

    private struct State {
        var fd: Int32
        var owned: Bool
        var temporary: String?
        var createdHere: Bool
        var written = 0
        var failure: FileError?
        var finished = false
    }

    init(file: OutputFile, fd: Int32, owned: Bool, temporary: String?, createdHere: Bool) {
        self.file = file
        state = Mutex(State(fd: fd, owned: owned, temporary: temporary, createdHere: createdHere))
        redirect = owned ? nil : StandardOutput.redirect
    }

    deinit { abandon() }

    /// Bytes written so far.
    public var bytesWritten: Int { state.withLock { $0.written } }

    /// The first write that failed, if one did.
    public var failure: FileError? { state.withLock { $0.failure } }

    /// Writes all of `bytes` (retrying after `EINTR` and short writes). False once a write has
    /// failed (this one or an earlier one): nothing more is written.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        state.withLock { s in
            guard !s.finished, s.failure == nil else { return false }
            if let redirect {
                redirect(s.fd, bytes)
                s.written += bytes.count
                return true
            }
            var off = 0
            while off < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.write(s.fd, $0.baseAddress! + off, $0.count - off) }
                if n < 0 {
                    if errno == EINTR { continue }
                    fail(&s, errno, during: "write")
                    return false
                }
                if n == 0 {
                    fail(&s, EIO, during: "write")
                    return false
                }
                off += n
                s.written += n
            }
            return true
        }
    }

    /// `fsync(2)` (a regular file's; a FIFO, a terminal or a device has none), `close(2)` and,
    /// for a temporary file, `rename(2)` into place and the folder's `fsync`. Throws the first
    /// failure (``FileError/Kind/io``, 74), after removing the temporary file. Once only; later
    /// calls return the same outcome.
    public func finish() throws(FileError) {
        let outcome: FileError? = state.withLock { s in
            guard !s.finished else { return s.failure }
            if s.failure == nil, redirect == nil {
                var st = stat()
                if fstat(s.fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, fsync(s.fd) != 0,
                    errno != EINVAL && errno != EROFS
                {
                    fail(&s, errno, during: "fsync")
                }
            }
            if s.owned, close(s.fd) != 0, s.failure == nil, errno != EINTR { fail(&s, errno, during: "close") }
            s.fd = -1
            s.finished = true
            // A file made here that never got a byte is not left behind as if it were an output.
            if s.failure != nil, s.createdHere, s.written == 0 { unlink(file.path) }
            if let temporary = s.temporary {
                if s.failure == nil, rename(temporary, file.path) != 0 {
                    let code = errno
                    s.failure = FileError(
                        FileError.isSpaceOrIO(code) ? .io : .cantCreate, path: file.label,
                        "can't put the file in place (\(String(cString: strerror(code))))", errno: code)
                    OutputFailures.note(s.failure!)
                }
                if s.failure != nil {
                    unlink(temporary)
                } else if Folder.sync(FilePath.folder(of: file.path)) != 0 {
                    fail(&s, EIO, during: "fsync of the folder")
                }
                s.temporary = nil
            }
            return s.failure
        }
        if let outcome { throw outcome }
    }

    /// Stops without finishing: closes, and removes a temporary file (the earlier file stays).
    public func abandon() {
        state.withLock { s in
            guard !s.finished else { return }
            s.finished = true
            if s.owned && s.fd >= 0 { close(s.fd) }
            s.fd = -1
            if let temporary = s.temporary { unlink(temporary) }
            s.temporary = nil
        }
    }

    /// Records a failure of a step outside ``write(_:)`` (nothing more is written).
    func fail(_ code: Int32, during what: String) {
        state.withLock { s in if s.failure == nil { fail(&s, code, during: what) } }
    }

    private func fail(_ s: inout State, _ code: Int32, during what: String) {
        var e = FileError.system(.io, path: file.label, code, during: what)
        switch file.destination {
        case .replace: e.reason += "; the file there is unchanged"
        case .create where s.temporary != nil: e.reason += "; nothing was left there"
        case .create, .inPlace: e.reason += s.written > 0 ? "; it holds only the first \(s.written) bytes" : ""
        case .descriptor, .writeInto: break
        }
        s.failure = e
        OutputFailures.note(e)
    }
}

/// Every output failure of this process, in order (``FileWriter`` notes its own; a
/// command's standard output too, through ``StandardOutput``): what a command reports at its
/// end, so a run whose trace or output hit a full disk never ends with success.
public enum OutputFailures {
    private static let list = Mutex<[FileError]>([])

    /// Notes `error` (the same path and reason once).
    public static func note(_ error: FileError) {
        list.withLock { l in if !l.contains(error) { l.append(error) } }
    }

    /// The failures noted so far.
    public static var all: [FileError] { list.withLock { $0 } }
}
