import Foundation

/// The kernel's name of the calling thread (`/proc/thread-self/comm`): what `top -H` and gdb
/// show, and what ``/NFCBase/ThreadName`` sets. Empty when it cannot be read.
public func callingThreadName() -> String {
    let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
    return comm?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
}

/// This process's threads whose kernel name is `name` (`/proc/self/task/*/comm`), by thread id.
public func threads(named name: String) -> [Int32] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.compactMap { tid in
        let comm = try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8)
        return comm?.trimmingCharacters(in: .whitespacesAndNewlines) == name ? Int32(tid) : nil
    }
}
