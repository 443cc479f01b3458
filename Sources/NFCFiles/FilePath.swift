public import Glibc

/// Path operations on plain strings with POSIX calls only: Foundation's path helpers
/// (`NSString.deletingLastPathComponent`, `URL`) can trap on Linux for short or odd paths
/// (a one-letter name crashed the tool), and cost a command's start.
public enum FilePath {
    /// The folder part of `path`, as `NSString.deletingLastPathComponent` gives it ("/a/b" →
    /// "/a", "/a" → "/", "a" → "", trailing slashes ignored).
    public static func parent(of path: String) -> String {
        var p = Substring(path)
        while p.count > 1 && p.hasSuffix("/") { p = p.dropLast() }
        guard let slash = p.lastIndex(of: "/") else { return "" }
        var d = p[..<slash]
        while d.count > 1 && d.hasSuffix("/") { d = d.dropLast() }
        return d.isEmpty ? "/" : String(d)
    }

    /// The last component of `path` ("/a/b.json" → "b.json", "b" → "b", "/a/" → "a", "/" → "/").
    public static func lastComponent(of path: String) -> String {
        var p = Substring(path)
        while p.count > 1 && p.hasSuffix("/") { p = p.dropLast() }
        guard let slash = p.lastIndex(of: "/") else { return String(p) }
        let name = p[p.index(after: slash)...]
        return name.isEmpty ? String(p) : String(name)
    }

    /// `name` without its last extension ("a.json" → "a", "a" → "a", ".hidden" → ".hidden").
    public static func stem(of name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    /// The folder a path's file is made in: its parent, or "." for a bare name.
    public static func folder(of path: String) -> String {
        let p = parent(of: path)
        return p.isEmpty ? "." : p
    }

    /// `name` in `folder` ("." + "x" → "x", "/" + "x" → "/x").
    public static func join(_ folder: String, _ name: String) -> String {
        if folder.isEmpty || folder == "." { return name }
        return folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    /// `lstat(2)`: the entry itself (a link is not followed); nil when it can't be examined.
    public static func linkStatus(_ path: String) -> stat? {
        var st = stat()
        return lstat(path, &st) == 0 ? st : nil
    }

    /// `stat(2)`: links followed; nil when it can't be examined.
    public static func status(_ path: String) -> stat? {
        var st = stat()
        return stat(path, &st) == 0 ? st : nil
    }

    /// What a symbolic link points to, as written in the link; nil when `path` is no link.
    public static func linkTarget(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { readlink(path, $0.baseAddress!, $0.count) }
        guard n >= 0 else { return nil }
        return String(decoding: buffer[0..<n], as: UTF8.self)
    }

    /// The descriptor a path names by itself: `/dev/stdout` (1), `/dev/stderr` (2),
    /// `/dev/stdin` (0), `/dev/fd/N`, `/proc/self/fd/N`; nil for any other path.
    public static func namedDescriptor(_ path: String) -> Int32? {
        switch path {
        case "/dev/stdin": return 0
        case "/dev/stdout": return 1
        case "/dev/stderr": return 2
        default: break
        }
        for prefix in ["/dev/fd/", "/proc/self/fd/"] where path.hasPrefix(prefix) {
            return Int32(path.dropFirst(prefix.count))
        }
        return nil
    }

    /// What a file's mode says it is, in words ("a FIFO", "a block device").
    static func kindName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: "a file"
        case S_IFDIR: "a folder"
        case S_IFLNK: "a symbolic link"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "a special file"
        }
    }

    /// Where a chain of symbolic links ends, the links themselves checked by the kernel's
    /// `protected_symlinks` rule (fs/namei.c `may_follow_link`), whether or not the sysctl is
    /// on: a link in a sticky, world-writable folder (`/tmp`) is followed only when it is
    /// the follower's own or the folder owner's. Stops at a path that names a descriptor
    /// (``namedDescriptor(_:)``). At most 40 links (the kernel's `MAXSYMLINKS`).
    public struct Resolution: Sendable, Equatable {
        /// The path the chain ends at (not a link, or a link that can't be read).
        public var path: String
        /// The links followed, in order.
        public var links: [String]
        /// Set when the chain ended at a path naming a descriptor (`/dev/stdout`, `/proc/self/fd/1`).
        public var descriptor: Int32?
    }

    public static func resolveLinks(_ path: String, label: String) throws(FileError) -> Resolution {
        var current = path
        var links: [String] = []
        let euid = geteuid()
        while true {
            if let fd = namedDescriptor(current) { return Resolution(path: current, links: links, descriptor: fd) }
            guard let st = linkStatus(current), st.st_mode & S_IFMT == S_IFLNK else {
                return Resolution(path: current, links: links, descriptor: nil)
            }
            guard links.count < 40 else {
                throw FileError(.cantCreate, path: label, "too many levels of symbolic links (\(path))", errno: ELOOP)
            }
            if st.st_uid != euid, let folder = status(Self.folder(of: current)),
                folder.st_mode & (S_ISVTX | S_IWOTH) == (S_ISVTX | S_IWOTH), folder.st_uid != st.st_uid
            {
                throw FileError(
                    .cantCreate, path: label,
                    "\(current) is a symbolic link owned by uid \(st.st_uid) in the world-writable sticky folder \(Self.folder(of: current)): not followed, as the kernel's protected_symlinks rule says",
                    errno: EACCES)
            }
            guard let target = linkTarget(current) else {
                return Resolution(path: current, links: links, descriptor: nil)
            }
            links.append(current)
            current = target.hasPrefix("/") ? target : join(parent(of: current), target)
        }
    }
}
