import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// TCP ports for tests of servers and clients on loopback.
public enum TestPorts {
    /// What went wrong while asking the kernel for a port.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// A TCP port of 127.0.0.1 nothing listens on (bound for a moment by this process, then
    /// freed). Throws ``Failure`` when the kernel gives none.
    public static func free() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { throw Failure(description: "bind 127.0.0.1:0: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }
}
