import Dispatch
import Foundation
import Glibc
import ReaderSession
import Synchronization

/// One waiter of a lock folder's queue (``LockFolder/enqueue(_:poll:attempt:onGranted:)``), on
/// a thread of its own (it blocks between checks). Its ticket is `<queue folder>/<20-digit number>-<pid>`, held with `flock` while
/// it waits; numbers come from `<queue folder>/next` under `flock`. A ticket whose `flock`
/// can be taken belongs to a waiter that died: whoever sees it removes it.
final class FileQueueWaiter: Sendable {
    let folder: String
    let poll: Duration
    let attempt: @Sendable () -> ReaderLease?
    let onGranted: @Sendable (ReaderLease) -> Void
    private let stop = DispatchSemaphore(value: 0)
    private let cancelled = Atomic<Bool>(false)

    init(
        folder: String, poll: Duration, attempt: @escaping @Sendable () -> ReaderLease?,
        onGranted: @escaping @Sendable (ReaderLease) -> Void
    ) {
        self.folder = folder
        self.poll = poll
        self.attempt = attempt
        self.onGranted = onGranted
    }

    func start() {
        let t = Thread { [self] in run() }
        t.name = "nfcbench.reader-queue"
        t.start()
    }

    func cancel() {
        cancelled.store(true, ordering: .releasing)
        stop.signal()
    }

    private func run() {
        guard mkdir(folder, 0o700) == 0 || errno == EEXIST, let number = takeNumber() else { return }
        let name = String(repeating: "0", count: max(0, 20 - String(number).count)) + "\(number)-\(getpid())"
        let path = folder + "/" + name
        // Locked before it has its name, so no one takes a fresh ticket for a dead one.
        let fd = open(path + ".new", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        _ = flock(fd, LOCK_EX)
        guard rename(path + ".new", path) == 0 else {
            unlink(path + ".new")
            close(fd)
            return
        }
        defer {
            unlink(path)
            _ = flock(fd, LOCK_UN)
            close(fd)
        }
        let ns = poll.components.seconds * 1_000_000_000 + poll.components.attoseconds / 1_000_000_000
        while !cancelled.load(ordering: .acquiring) {
            if isFirst(name), let lease = attempt() {
                if cancelled.load(ordering: .acquiring) {
                    lease.release()
                } else {
                    onGranted(lease)
                }
                return
            }
            _ = stop.wait(timeout: .now() + .nanoseconds(Int(max(1_000_000, ns))))
        }
    }

    /// The next ticket number, from `next` under an exclusive `flock`.
    private func takeNumber() -> UInt64? {
        let fd = open(folder + "/next", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        _ = flock(fd, LOCK_EX)
        defer { _ = flock(fd, LOCK_UN) }
        var buf = [UInt8](repeating: 0, count: 32)
        let n = pread(fd, &buf, buf.count, 0)
        let current =
            n > 0
            ? UInt64(String(decoding: buf[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
            : 0
        let text = Array("\(current + 1)\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return current
    }

    /// True when no live ticket is ahead of `name`; stale tickets ahead are removed.
    private func isFirst(_ name: String) -> Bool {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return false }
        for other in entries.filter({ $0 != "next" && !$0.hasSuffix(".new") && $0 < name }).sorted() {
            let path = folder + "/" + other
            let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                unlink(path)  // its waiter is gone
                _ = flock(fd, LOCK_UN)
                continue
            }
            return false
        }
        return true
    }
}
