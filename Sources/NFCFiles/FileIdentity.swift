import Glibc

/// Which file a path is, for refusing an output that would destroy an input or another
/// output of the same command: the device and inode after links are resolved (`stat(2)`), or,
/// for a file that does not exist yet, its folder's device and inode and its name (two outputs
/// to one new name are the same file too). `/dev/null` is no file for this purpose (writing
/// and reading it destroys nothing).
public enum FileIdentity: Hashable, Sendable {
    case inode(device: UInt64, inode: UInt64)
    case entry(device: UInt64, inode: UInt64, name: String)

    /// The identity of what `path` names now (`-`: `standardStream`, 0 for an input, 1 for an
    /// output); nil for `/dev/null`, or when neither it nor its folder can be examined.
    public static func of(_ path: String, standardStream: Int32) -> FileIdentity? {
        if path == "-" { return ofDescriptor(standardStream) }
        if let fd = FilePath.namedDescriptor(path) { return ofDescriptor(fd) }
        if let st = FilePath.status(path) { return of(st) }
        // Not there yet (or a dangling link): where it would be made.
        let target =
            (try? FilePath.resolveLinks(path, label: path)).map { $0.descriptor == nil ? $0.path : path } ?? path
        if let fd = FilePath.namedDescriptor(target) { return ofDescriptor(fd) }
        if let st = FilePath.status(target) { return of(st) }
        guard let folder = FilePath.status(FilePath.folder(of: target)) else { return nil }
        return .entry(
            device: UInt64(folder.st_dev), inode: UInt64(folder.st_ino), name: FilePath.lastComponent(of: target))
    }

    /// The identity of an open descriptor (`fstat(2)`); nil for `/dev/null` or a closed one.
    public static func ofDescriptor(_ fd: Int32) -> FileIdentity? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        return of(st)
    }

    static func of(_ st: stat) -> FileIdentity? {
        if st.st_mode & S_IFMT == S_IFCHR, isNullDevice(st.st_rdev) { return nil }
        return .inode(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }

    /// Character device 1:3 (`/dev/null`, wherever its node is).
    static func isNullDevice(_ rdev: dev_t) -> Bool {
        let r = UInt64(rdev)
        // gnu_dev_major/minor: the major is bits 8–19 and 32–43, the minor bits 0–7 and 20–31.
        let major = ((r >> 8) & 0xFFF) | ((r >> 32) & 0xFFFF_F000)
        let minor = (r & 0xFF) | ((r >> 12) & 0xFFFF_FF00)
        return major == 1 && minor == 3
    }
}

/// One file a command names: what it is for (`label`, as a message names it: `--out x`,
/// `the trace T`) and its path (`-`: standard input for an input, standard output for an output).
public struct NamedFile: Sendable, Equatable {
    public var label: String
    public var path: String
    public init(_ label: String, _ path: String) {
        self.label = label
        self.path = path
    }
}

/// The check every command makes before it reads or sends anything: no output is the same
/// file (``FileIdentity``) as one of its inputs or another of its outputs.
public enum SameFile {
    /// Throws ``FileError/Kind/sameFile`` (exit 64) for the first output that is the same file as
    /// an input (it would be destroyed) or an earlier output (one would overwrite the other).
    public static func refuse(outputs: [NamedFile], inputs: [NamedFile] = []) throws(FileError) {
        var seen: [(NamedFile, FileIdentity, isInput: Bool)] = []
        for input in inputs {
            if let id = FileIdentity.of(input.path, standardStream: 0) { seen.append((input, id, true)) }
        }
        for output in outputs {
            guard let id = FileIdentity.of(output.path, standardStream: 1) else { continue }
            if let (other, _, isInput) = seen.first(where: { $0.1 == id }) {
                let what =
                    isInput
                    ? "is the same file as \(other.label), which this command reads: writing it would destroy it"
                    : "is the same file as \(other.label): one output would overwrite the other"
                throw FileError(.sameFile, path: output.label, what + "; give another name")
            }
            seen.append((output, id, false))
        }
    }
}
