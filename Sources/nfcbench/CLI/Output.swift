import Foundation

/// Plain writes to stdout and stderr (unbuffered, so lines interleave correctly with
/// subprocesses and survive a SIGKILL).
enum Output {
    static func out(_ text: String) { write(1, text.hasSuffix("\n") ? text : text + "\n") }
    static func err(_ text: String) { write(2, text.hasSuffix("\n") ? text : text + "\n") }
    /// Writes without adding a newline (status lines).
    static func raw(_ text: String, fd: Int32 = 1) { write(fd, text) }

    static var stdoutIsTerminal: Bool { isatty(1) == 1 }

    private static func write(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Foundation.write(fd, $0.baseAddress! + off, $0.count - off) }
            if n < 0 {
                if errno == EINTR { continue }
                // Nobody reads this pipe any more: end the command as SIGPIPE would, cleanly.
                if errno == EPIPE { Signals.outputClosed() }
                return
            }
            off += n
        }
    }
}

/// Output files a command was told to write (`--out`, `--backup`, `--svg`, `--pcapng`),
/// checked before anything is read or sent, so a typo in a folder name costs nothing.
enum OutputFile {
    /// Throws can't-create (73) when `path` can't be made: its folder is missing or is a
    /// file, the path is a folder, or the folder is not writable. The message starts with
    /// `label` (default: `option path`, e.g. `--out /x/tag.json`).
    static func check(_ path: String, option: String, label: String? = nil) throws(CLIError) {
        let what = label ?? "\(option) \(path)"
        let fm = FileManager.default
        var isFolder: ObjCBool = false
        if fm.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            throw .cantCreate("\(what): is a folder; give a file name")
        }
        let dir = (path as NSString).deletingLastPathComponent
        let folder = dir.isEmpty ? "." : dir
        guard fm.fileExists(atPath: folder, isDirectory: &isFolder) else {
            throw .cantCreate("\(what): the folder \(folder) does not exist")
        }
        guard isFolder.boolValue else { throw .cantCreate("\(what): \(folder) is a file, not a folder") }
        guard access(folder, W_OK) == 0 else {
            throw .cantCreate("\(what): can't write in \(folder) (\(String(cString: strerror(errno))))")
        }
    }
}
