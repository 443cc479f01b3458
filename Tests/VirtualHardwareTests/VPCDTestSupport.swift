import Foundation
import Glibc
import NFCBase
import NFCBenchTestSupport
import NFCTags
import VirtualHardware

/// A tiny NTAG213-like Type 2 core for the tests: 45 pages, READ (16 bytes, rolls over),
/// WRITE (pages 4–39 only, else NAK 0), GET_VERSION; a NAK makes it silent until reactivated.
struct VPCDTestType2Core: VirtualType2Responder {
    var pages: [[UInt8]]
    var halted = false
    static let version: [UInt8] = [0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x0F, 0x03]

    init() {
        // UID 04 11 22 | BCC0 | 33 44 55 66 | BCC1, then CC E1 10 12 00 and an NDEF TLV.
        let uid: [UInt8] = [0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66]
        let bcc0 = 0x88 ^ uid[0] ^ uid[1] ^ uid[2]
        let bcc1 = uid[3] ^ uid[4] ^ uid[5] ^ uid[6]
        var p: [[UInt8]] = [
            [uid[0], uid[1], uid[2], bcc0], [uid[3], uid[4], uid[5], uid[6]], [bcc1, 0x48, 0x00, 0x00],
            [0xE1, 0x10, 0x12, 0x00], [0x03, 0x03, 0xD0, 0x00], [0x00, 0xFE, 0x00, 0x00],
        ]
        while p.count < 45 { p.append([0, 0, 0, 0]) }
        pages = p
    }

    mutating func respond(to frame: [UInt8]) -> Type2Answer {
        if halted { return .silent }
        switch frame.first {
        case 0x30? where frame.count == 2:
            guard Int(frame[1]) < pages.count else {
                halted = true
                return .nak(0)
            }
            return .data((0..<4).flatMap { pages[(Int(frame[1]) + $0) % pages.count] })
        case 0xA2? where frame.count == 6:
            guard (4...39).contains(Int(frame[1])) else {
                halted = true
                return .nak(0)
            }
            pages[Int(frame[1])] = Array(frame[2...5])
            return .ack
        case 0x60? where frame.count == 1:
            return .data(Self.version)
        default:
            halted = true
            return .nak(0)
        }
    }

    mutating func reactivate() { halted = false }
}

/// A one-connection fake of vpcd's listening side, on an ephemeral port of 127.0.0.1.
/// Blocking calls, meant for `offPool`.
final class VPCDTestServer: @unchecked Sendable {
    let listener: Int32
    let port: UInt16
    private var client: Int32 = -1

    init(port: UInt16 = 0) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = port.bigEndian
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 1) == 0
                    && getsockname(listener, $0, &length) == 0
            }
        }
        guard ok else {
            close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        self.port = UInt16(bigEndian: address.sin_port)
    }

    deinit {
        if client >= 0 { close(client) }
        close(listener)
    }

    /// `poll(2)` of `fd` for input, up to `milliseconds`, again after `EINTR` for the time left:
    /// this test process has signal handlers (Foundation's `Process` takes SIGCHLD), and a child
    /// of another test ending mid-poll interrupted it, so a reply that came in time read as none
    /// (the flake of "Connecting is field on…" in full runs, never alone).
    private func waitReadable(_ fd: Int32, _ milliseconds: Int32) -> Bool {
        let end = ContinuousClock.now + .milliseconds(Int(milliseconds))
        while true {
            let left = end - ContinuousClock.now
            let ms = max(0, Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&p, 1, ms)
            if r == 1 { return true }
            if r < 0 && errno == EINTR && ms > 0 { continue }
            return false
        }
    }

    /// Accepts the card's connection (waits up to `seconds`).
    func accept(seconds: Int32 = 5) -> Bool {
        guard waitReadable(listener, seconds * 1000) else { return false }
        if client >= 0 { close(client) }
        client = Glibc.accept(listener, nil, nil)
        return client >= 0
    }

    func send(_ body: [UInt8]) {
        let frame = [UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
        _ = frame.withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// One message from the card, or nil on EOF / nothing within `milliseconds`.
    func receive(milliseconds: Int32 = 2000) -> [UInt8]? {
        guard let header = read(2, milliseconds), header.count == 2 else { return nil }
        return read(Int(header[0]) << 8 | Int(header[1]), milliseconds)
    }

    /// True when the card closed its side (EOF within `milliseconds`).
    func sawEOF(milliseconds: Int32 = 2000) -> Bool {
        guard waitReadable(client, milliseconds) else { return false }
        var byte: UInt8 = 0
        var n = recv(client, &byte, 1, 0)
        while n < 0 && errno == EINTR { n = recv(client, &byte, 1, 0) }
        return n == 0
    }

    private func read(_ count: Int, _ milliseconds: Int32) -> [UInt8]? {
        var out: [UInt8] = []
        while out.count < count {
            guard waitReadable(client, milliseconds) else { return nil }
            var chunk = [UInt8](repeating: 0, count: count - out.count)
            let n = recv(client, &chunk, chunk.count, 0)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            out += chunk.prefix(n)
        }
        return out
    }
}
