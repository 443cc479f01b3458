import Foundation
import Glibc
import NFCBenchTestSupport
import NFCTags
import Testing
import VirtualHardware

/// The virtual PN532 on its pty with the real link timing, driven as libnfc drives a chip:
/// raw frames written, frames read back within a deadline.
@Suite("Virtual PN532: a host ACK aborts the command whose answer the link still holds")
struct PN532AbortOverPTYTests {
    /// The pty's other end in raw mode (as libnfc's uart driver sets it).
    private static func openRaw(_ path: String) throws -> Int32 {
        let fd = open(path, O_RDWR | O_NOCTTY)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var t = termios()
        tcgetattr(fd, &t)
        cfmakeraw(&t)
        tcsetattr(fd, TCSANOW, &t)
        return fd
    }

    /// Everything the chip writes until it has been quiet for `quiet` (after at most `limit`).
    private static func drain(_ fd: Int32, quiet: Duration, limit: Duration) -> [UInt8] {
        var out: [UInt8] = []
        let end = ContinuousClock.now + limit
        var buffer = [UInt8](repeating: 0, count: 512)
        while ContinuousClock.now < end {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ms = Int32(quiet.components.seconds * 1000 + quiet.components.attoseconds / 1_000_000_000_000_000)
            let r = poll(&p, 1, ms)
            if r < 0 && errno == EINTR { continue }
            guard r == 1 else { break }
            let n = read(fd, &buffer, buffer.count)
            guard n > 0 else { break }
            out += buffer[0..<n]
        }
        return out
    }

    @Test("READ then the host's ACK in one write: no READ answer ever comes; GetFirmwareVersion gets its own")
    func abortDropsTheHeldAnswer() async throws {
        let file = try TagFile.load(path: TagFileToDeviceTests.tagsDirectory + "/ntag215-uri.json")
        let fake = try VirtualPN532.start(ptyPath: nil, timing: .real)
        defer { fake.stop() }
        fake.present(try PN532Card(tagFile: file))
        let seen = try await offPool { () throws -> (listed: [[UInt8]], after: [[UInt8]]) in
            let fd = try Self.openRaw(fake.slavePath)
            defer { close(fd) }
            func write(_ frames: [UInt8]) { _ = frames.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } }
            func frame(_ payload: [UInt8]) -> [UInt8] {
                PN532FrameEncoder.informationFrame(tfi: 0xD4, payload: payload)
            }
            write([0x55, 0x55, 0x00, 0x00, 0x00] + frame([0x14, 0x01]))  // wake-up, SAMConfiguration normal
            _ = Self.drain(fd, quiet: .milliseconds(50), limit: .seconds(5))
            write(frame([0x4A, 0x01, 0x00]))  // InListPassiveTarget 106 kbps type A
            let listed = responses(Self.drain(fd, quiet: .milliseconds(50), limit: .seconds(5)))
            // The READ's answer is due after its air time and 26 bytes at 115 200 baud (~5 ms);
            // the abort is in the same write, so it is in before that on any machine.
            write(frame([0x40, 0x01, 0x30, 0x04]) + PN532FrameEncoder.ack)
            write(frame([0x02]))  // GetFirmwareVersion
            let after = responses(Self.drain(fd, quiet: .milliseconds(100), limit: .seconds(5)))
            return (listed, after)
        }
        #expect(seen.listed.first?.first == 0x4B, "InListPassiveTarget answered: \(seen.listed)")
        #expect(seen.after.map { $0.first } == [0x03], "only GetFirmwareVersion's answer: \(seen.after)")
    }

    @Test(
        "READ then GetFirmwareVersion in one write (the chip was late, the host moved on): the READ's answer is never sent, the firmware's is"
    )
    func newCommandSupersedesTheHeldAnswer() async throws {
        let file = try TagFile.load(path: TagFileToDeviceTests.tagsDirectory + "/ntag215-uri.json")
        let fake = try VirtualPN532.start(ptyPath: nil, timing: .real)
        defer { fake.stop() }
        fake.present(try PN532Card(tagFile: file))
        let after = try await offPool { () throws -> [[UInt8]] in
            let fd = try Self.openRaw(fake.slavePath)
            defer { close(fd) }
            func write(_ frames: [UInt8]) { _ = frames.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } }
            func frame(_ payload: [UInt8]) -> [UInt8] {
                PN532FrameEncoder.informationFrame(tfi: 0xD4, payload: payload)
            }
            write([0x55, 0x55, 0x00, 0x00, 0x00] + frame([0x14, 0x01]))
            _ = Self.drain(fd, quiet: .milliseconds(50), limit: .seconds(5))
            write(frame([0x4A, 0x01, 0x00]))
            _ = Self.drain(fd, quiet: .milliseconds(50), limit: .seconds(5))
            write(frame([0x40, 0x01, 0x30, 0x04]) + frame([0x02]))
            return responses(Self.drain(fd, quiet: .milliseconds(100), limit: .seconds(5)))
        }
        #expect(after.map { $0.first } == [0x03], "only GetFirmwareVersion's answer: \(after)")
    }
}
