import Glibc

/// The card side's socket calls (one function per libc call group), all blocking.
enum VPCDSocket {
    /// `socket` + `connect` to `host:port` (IPv4), `TCP_NODELAY` on; nil when refused.
    static func connect(host: String, port: UInt16) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(fd)
            return nil
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            let e = errno
            close(fd)
            errno = e  // the caller reports why (ECONNREFUSED: nothing listens)
            return nil
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    /// The local port of a connected socket (`getsockname`), 0 when unknown.
    static func localPort(_ fd: Int32) -> UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let rc = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return rc == 0 ? UInt16(bigEndian: address.sin_port) : 0
    }

    /// Reversed mode: `socket` + `bind` + `listen` on `host:port`, which must be an IPv4
    /// loopback address (127.0.0.0/8): nothing this card opens is reachable from the network.
    /// `SO_REUSEADDR` on, so the card can re-enter the field at once. Nil on failure or for
    /// a non-loopback `host`.
    static func listen(host: String, port: UInt16) -> Int32? {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1, UInt32(bigEndian: address.sin_addr.s_addr) >> 24 == 127
        else { return nil }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0, Glibc.listen(fd, 1) == 0 else {
            let e = errno
            close(fd)
            errno = e  // the caller reports why (EADDRINUSE: another card listens there)
            return nil
        }
        return fd
    }

    /// Waits up to `timeoutMilliseconds` for a connection on `listener` and accepts it
    /// (`TCP_NODELAY` on); nil when none came or the socket failed.
    static func accept(_ listener: Int32, timeoutMilliseconds: Int32) -> Int32? {
        var p = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, timeoutMilliseconds) == 1, p.revents & Int16(POLLIN) != 0 else { return nil }
        var peer = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = withUnsafeMutablePointer(to: &peer) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.accept(listener, $0, &length)
            }
        }
        guard fd >= 0 else { return nil }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    /// `setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, 1)`: ACK at once; Linux clears it again.
    static func armQuickAck(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_QUICKACK, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Reads exactly `count` bytes; nil on EOF or error.
    static func read(_ fd: Int32, count: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = out.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + done, count - done, 0) }
            if n > 0 {
                done += n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            return nil
        }
        return out
    }

    /// Writes a 2-byte big-endian length and `message` in one `send` (`MSG_NOSIGNAL`: a closed
    /// peer is an error, not SIGPIPE). False on failure.
    static func write(_ fd: Int32, message: [UInt8]) -> Bool {
        let frame = [UInt8(message.count >> 8), UInt8(message.count & 0xFF)] + message
        var done = 0
        while done < frame.count {
            let n = frame.withUnsafeBytes { send(fd, $0.baseAddress! + done, frame.count - done, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                done += n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            return false
        }
        return true
    }
}
