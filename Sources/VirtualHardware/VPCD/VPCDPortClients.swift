import Foundation

/// The other cards connected to a vpcd port on this host: the TCP connections whose far end
/// is `127.0.0.1:<port>`, from `/proc/net/tcp` and `/proc/net/tcp6` (state `01`,
/// ESTABLISHED; both list this process's network namespace only), each with the process that
/// owns the socket where `/proc/<pid>/fd` shows it (the same user's processes, or all as root).
///
/// vpcd serves one card per port; a second card's connection is accepted by the kernel into
/// vpcd's listen queue and never answered, so "who else is connected" names what holds the port.
public enum VPCDPortClients {
    /// One client connection of the port.
    public struct Client: Sendable, Equatable {
        /// Its local (ephemeral) port.
        public var localPort: UInt16
        /// The owning process and its command line, when they can be seen.
        public var pid: Int32?
        public var command: String?
    }

    /// The ESTABLISHED connections to `port` on the loopback, except the one from `excludingLocalPort`.
    public static func clients(ofPort port: UInt16, excludingLocalPort: UInt16? = nil) -> [Client] {
        var found: [(localPort: UInt16, inode: String)] = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let f = line.split(separator: " ", omittingEmptySubsequences: true)
                guard f.count > 9, f[3] == "01", let local = portOf(f[1]), let remote = portOf(f[2]), remote == port,
                    local != excludingLocalPort
                else { continue }
                found.append((local, String(f[9])))
            }
        }
        guard !found.isEmpty else { return [] }
        let owners = socketOwners(Set(found.map(\.inode)))
        return found.map { c in
            let pid = owners[c.inode]
            return Client(localPort: c.localPort, pid: pid, command: pid.flatMap(commandLine))
        }
    }

    /// `0100007F:8C7B` → 0x8C7B.
    private static func portOf(_ field: Substring) -> UInt16? {
        guard let colon = field.lastIndex(of: ":") else { return nil }
        return UInt16(field[field.index(after: colon)...], radix: 16)
    }

    /// The pid holding each socket inode (`socket:[INODE]` among its descriptors).
    private static func socketOwners(_ inodes: Set<String>) -> [String: Int32] {
        var owners: [String: Int32] = [:]
        let fm = FileManager.default
        for entry in (try? fm.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry) else { continue }
            for fd in (try? fm.contentsOfDirectory(atPath: "/proc/\(entry)/fd")) ?? [] {
                guard let target = try? fm.destinationOfSymbolicLink(atPath: "/proc/\(entry)/fd/\(fd)"),
                    target.hasPrefix("socket:["), target.hasSuffix("]")
                else { continue }
                let inode = String(target.dropFirst("socket:[".count).dropLast())
                if inodes.contains(inode) { owners[inode] = pid }
            }
        }
        return owners
    }

    /// `/proc/<pid>/cmdline` in a few words (``commandSummary(_:)``).
    private static func commandLine(_ pid: Int32) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"), !data.isEmpty else {
            return nil
        }
        return commandSummary(Array(data))
    }

    /// A `/proc/<pid>/cmdline` (arguments ended by NULs) as a person reads it: the program's
    /// file name, not its folder (the pid names the process; a build folder's path would push
    /// out the arguments that say which card it is), then its arguments with spaces, at most
    /// 100 characters.
    static func commandSummary(_ cmdline: [UInt8]) -> String {
        var words = cmdline.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        while words.last?.isEmpty == true { words.removeLast() }
        if let program = words.first, let slash = program.lastIndex(of: "/"), slash != program.indices.last {
            words[0] = String(program[program.index(after: slash)...])
        }
        let text = words.joined(separator: " ").trimmingCharacters(in: .whitespaces)
        return text.count > 100 ? String(text.prefix(99)) + "…" : text
    }
}
