import Glibc

/// A folder no one but its owner controls: the trace folder, the readers' lock folder and the
/// folder of the virtual PN532's pty links are used only when they pass ``prepare(_:createParents:)``.
///
/// The rule: the path is a directory, not a symbolic link (checked with `lstat(2)`, then on
/// the descriptor `open(2)` gives with `O_DIRECTORY | O_NOFOLLOW`), owned by the effective user,
/// writable by no one else. A missing folder is made with mode 0700 whatever the umask. A
/// folder of ours that others may read or enter but not write (0755, as earlier versions made
/// the trace folder) is narrowed to 0700 (`fchmod(2)`): nothing in it can be someone else's.
/// Anything else is refused with a ``PrivateFolderError`` naming the folder and what is wrong.
public enum PrivateFolder {
    /// The folder part of `path` (``FilePath/parent(of:)``).
    public static func parent(of path: String) -> String { FilePath.parent(of: path) }

    /// Makes `path` when it is missing (mode 0700; with `createParents`, missing parents too,
    /// also 0700), then checks it by the rule above. Returns `path`.
    /// Throws ``PrivateFolderError``.
    @discardableResult
    public static func prepare(_ path: String, createParents: Bool = false) throws(PrivateFolderError) -> String {
        guard !path.isEmpty else { throw PrivateFolderError(path: path, problem: "is an empty path") }
        if createParents {
            let parent = Self.parent(of: path)
            var st = stat()
            if !parent.isEmpty, stat(parent, &st) != 0 {
                do { try Folder.make(parent, mode: 0o700) } catch {
                    throw PrivateFolderError(path: error.path, problem: error.reason, unwritable: true)
                }
            }
        }
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            let code = errno
            let parent = FilePath.parent(of: path)
            if code == ENOTDIR, let st = FilePath.status(parent), st.st_mode & S_IFMT != S_IFDIR {
                throw PrivateFolderError(path: parent, problem: "is a file, not a folder")
            }
            throw PrivateFolderError(
                path: path, problem: "cannot be created (\(String(cString: strerror(code))))", unwritable: true)
        }
        var st = stat()
        guard lstat(path, &st) == 0 else {
            throw PrivateFolderError(path: path, problem: "cannot be examined (\(String(cString: strerror(errno))))")
        }
        if st.st_mode & S_IFMT == S_IFLNK {
            throw PrivateFolderError(path: path, problem: "is a symbolic link, not a folder")
        }
        guard st.st_mode & S_IFMT == S_IFDIR else {
            throw PrivateFolderError(path: path, problem: "is a file, not a folder")
        }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            throw PrivateFolderError(path: path, problem: "cannot be opened (\(String(cString: strerror(errno))))")
        }
        defer { close(fd) }
        // The descriptor's object is what counts (the path could have been swapped meanwhile).
        guard fstat(fd, &st) == 0 else {
            throw PrivateFolderError(path: path, problem: "cannot be examined (\(String(cString: strerror(errno))))")
        }
        let euid = geteuid()
        guard st.st_uid == euid else {
            throw PrivateFolderError(
                path: path, problem: "is owned by uid \(st.st_uid), not by this user (uid \(euid))")
        }
        let mode = st.st_mode & 0o7777
        if mode & 0o022 != 0 {
            throw PrivateFolderError(
                path: path,
                problem:
                    "is writable by group or others (mode \(String(mode, radix: 8))); check what is in it, then chmod 700 it"
            )
        }
        if mode != 0o700 && fchmod(fd, 0o700) != 0 {
            throw PrivateFolderError(
                path: path,
                problem:
                    "has mode \(String(mode, radix: 8)) and cannot be made 0700 (\(String(cString: strerror(errno))))")
        }
        // Ours and private, but files must be made in it too (a read-only mount is not).
        guard access(path, W_OK | X_OK) == 0 else {
            throw PrivateFolderError(
                path: path, problem: "cannot be written (\(String(cString: strerror(errno))))", unwritable: true)
        }
        return path
    }
}

/// A folder that ``PrivateFolder`` refused: which, and what is wrong with it.
public struct PrivateFolderError: Error, Sendable, Equatable, CustomStringConvertible {
    public init(path: String, problem: String, unwritable: Bool = false) {
        self.path = path
        self.problem = problem
        self.unwritable = unwritable
    }
    public let path: String
    /// What is wrong, as a sentence without its subject ("is owned by uid 1001, …").
    public let problem: String
    /// True when the folder is fine but can't be made or written (a read-only file system, a
    /// missing home, no permission above it), false when it is refused (not the user's alone,
    /// a link, a file): a command that touches no hardware may then use another folder.
    public let unwritable: Bool
    public var description: String { "\(path) \(problem)" }
}
