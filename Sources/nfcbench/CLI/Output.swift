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
            if n < 0 { if errno == EINTR { continue } else { return } }
            off += n
        }
    }
}
