import Glibc

/// The calling thread's name in the kernel (`/proc/self/task/TID/comm`), which `top -H`,
/// `ps -L`, `perf sched`, gdb and Foundation's `Thread.current.name` on Linux show. Foundation's
/// `Thread.name`, set before `start()`, does not reach the kernel there, so a thread that must be
/// found by name names itself once it runs.
public enum ThreadName {
    /// `pthread_setname_np`, a GNU extension Swift's Glibc module does not show, looked up at run
    /// time.
    private typealias SetName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32
    private static let setName: SetName? = dlsym(nil, "pthread_setname_np").map {
        unsafeBitCast($0, to: SetName.self)
    }

    /// Names the calling thread `name`, cut to the kernel's 15 bytes (on a character boundary);
    /// false when the kernel refused it or the call is missing.
    @discardableResult
    public static func setCallingThread(_ name: String) -> Bool {
        var bytes: [UInt8] = []
        for ch in name {
            let utf8 = Array(String(ch).utf8)
            if bytes.count + utf8.count > 15 { break }
            bytes += utf8
        }
        guard let setName else { return false }
        let cString = bytes.map { CChar(bitPattern: $0) } + [0]
        return cString.withUnsafeBufferPointer { setName(pthread_self(), $0.baseAddress!) == 0 }
    }
}
