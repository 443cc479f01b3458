import Foundation
import NFCBase
import NFCBenchTestSupport
import Synchronization

/// Reads a running process's output (its stdout or stderr pipe) line by line, for tests that
/// wait for a line, signal the process and read what it printed next.
///
/// The pipe is read with blocking `read(2)` calls on a thread of its own (``OffPool``), never
/// through `FileHandle.readabilityHandler`: that handler registers a libdispatch read source
/// on a `dup` of the descriptor in the process-wide epoll set, and under the suite's churn of
/// pipes (hundreds of children, sources never cleared) libdispatch's manager thread crashed
/// once in ~7 full runs in `_dispatch_event_loop_drain` on a freed muxnote (issue 35;
/// swift-corelibs-libdispatch#949, the same crash SourceKit-LSP saw). A source left on a pipe
/// whose child had exited also fired on every pass at end of file until the pipe went away.
/// A blocking read registers nothing with libdispatch.
///
/// The thread reads its own close-on-exec duplicate of the descriptor, so the `Pipe` may go
/// (and its descriptor number be reused) at any time; the thread ends at end of file, when the
/// child and everything that inherited its output have exited. When `process` is given, the
/// reader kills it (SIGKILL) when the reader goes at the end of the test if it still runs, so a
/// test that failed before it ended its child leaves neither the child nor this thread behind.
final class LineReader: Sendable {
    private final class Received: Sendable {
        let state = Mutex<(bytes: [UInt8], ended: Bool)>(([], false))
    }

    private let received = Received()
    private let process: Process?

    /// The readers of each running child's output, by process id: what ``drained(of:timeout:)``
    /// waits for.
    private static let byProcess = Mutex<[Int32: [Received]]>([:])

    init(_ pipe: Pipe, of process: Process? = nil) {
        self.process = process
        if let process {
            let received = self.received
            Self.byProcess.withLock { $0[process.processIdentifier, default: []].append(received) }
        }
        let fd = fcntl(pipe.fileHandleForReading.fileDescriptor, F_DUPFD_CLOEXEC, 0)
        precondition(fd >= 0, "dup of the pipe's read end: errno \(errno)")
        let received = self.received
        OffPool.detach(name: "nfcbench.test.lines") {
            defer { close(fd) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n > 0 {
                    received.state.withLock { $0.bytes += buffer[0..<n] }
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            received.state.withLock { $0.ended = true }
        }
    }

    deinit {
        if let process, process.isRunning { kill(process.processIdentifier, SIGKILL) }
        if let process {
            let received = self.received
            Self.byProcess.withLock { $0[process.processIdentifier]?.removeAll { $0 === received } }
        }
    }

    /// Waits, once `process` has ended, until every reader given it has read its pipe to the
    /// end (or `timeout` passes: a grandchild may still hold the pipe). The kernel reports the
    /// exit before a reader's thread has read the last lines the child wrote, so a test that
    /// checks those lines right after the exit waits here (``SessionCLITests/exit(of:timeout:)``
    /// does).
    static func drained(of process: Process, timeout: Duration = .seconds(10)) async {
        let readers = byProcess.withLock { $0[process.processIdentifier] ?? [] }
        _ = await poll(timeout: timeout, every: .milliseconds(5)) {
            readers.allSatisfy { $0.state.withLock { $0.ended } }
        }
    }

    /// The lines once the pipe has ended (or `timeout` passed): everything the child wrote.
    func toEnd(timeout: Duration = .seconds(10)) async -> [String] {
        _ = await poll(timeout: timeout, every: .milliseconds(5)) { ended }
        return lines
    }

    /// The complete lines so far, and a last line without its newline.
    var lines: [String] {
        received.state.withLock { String(decoding: $0.bytes, as: UTF8.self) }.split(separator: "\n").map(String.init)
    }

    /// True once the pipe reached end of file: ``lines`` will not change any more.
    var ended: Bool { received.state.withLock { $0.ended } }

    /// Waits until `predicate` holds for ``lines`` or `timeout` passes (or the pipe ended, when
    /// no further line can come); true when it held.
    func wait(timeout: Duration = .seconds(10), until predicate: ([String]) -> Bool) async -> Bool {
        _ = await poll(timeout: timeout, every: .milliseconds(20)) { ended || predicate(lines) }
        return predicate(lines)
    }
}
