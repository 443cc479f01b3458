// PN532 host-link frames (NXP UM0701-02 §6.2): information frames (normal and extended),
// ACK, NACK and the syntax-error frame, with the LCS/DCS checksums.

/// One frame as the fake PN532 reads it from the host (libnfc), after preamble skipping.
public enum PN532HostFrame: Sendable, Equatable {
    /// An information frame with TFI `D4`: the command code followed by its parameters.
    case command([UInt8])
    /// `00 00 FF 00 FF 00` from the host: abort the running command (UM0701 §6.2.1.3).
    case ack
    /// `00 00 FF FF 00 00` from the host: resend the last response.
    case nack
    /// A frame whose length checksum, TFI or data checksum is wrong; the reason says which.
    /// A chip stays silent: the host times out (libnfc `NFC_ETIMEOUT`).
    case malformed(String)
}

/// Builders for the frames a PN532 sends to its host (UM0701-02 §6.2.1).
public enum PN532FrameEncoder {
    /// The ACK frame `00 00 FF 00 FF 00`, sent after every valid command frame.
    public static let ack: [UInt8] = [0x00, 0x00, 0xFF, 0x00, 0xFF, 0x00]
    /// The application-level error frame `00 00 FF 01 FF 7F 81 00` (unknown command,
    /// bad parameters); libnfc turns it into `NFC_EIO`.
    public static let errorFrame: [UInt8] = [0x00, 0x00, 0xFF, 0x01, 0xFF, 0x7F, 0x81, 0x00]

    /// An information frame around `payload` (command code + 1 and data, without TFI).
    /// Normal frame when TFI + payload ≤ 255 bytes, extended frame above that
    /// (`00 00 FF FF FF LENM LENL LCS …`). One preamble byte `00`, postamble `00`.
    public static func informationFrame(tfi: UInt8 = 0xD5, payload: [UInt8]) -> [UInt8] {
        let length = payload.count + 1
        var frame: [UInt8] = [0x00, 0x00, 0xFF]
        if length <= 0xFF {
            let len = UInt8(length)
            frame += [len, 0 &- len]
        } else {
            let m = UInt8(truncatingIfNeeded: length >> 8)
            let l = UInt8(truncatingIfNeeded: length)
            frame += [0xFF, 0xFF, m, l, 0 &- (m &+ l)]
        }
        frame.append(tfi)
        frame += payload
        frame.append(0 &- payload.reduce(tfi, &+))
        frame.append(0x00)
        return frame
    }
}

/// An incremental parser of host→chip bytes. Feed it whatever `read()` returned; take frames
/// out with ``next()``. Everything before a start code `00 FF` is skipped: the `55`
/// wake-up bytes, runs of `00`, stray postambles (UM0701-02 §6.2.1, §7.2.11).
public struct PN532FrameParser: Sendable {
    private var buffer: [UInt8] = []
    /// Commands longer than this are refused as malformed (firmware limit: 264 data bytes
    /// plus TFI and command code).
    public static let maximumFrameLength = 266

    public init() {}

    /// Bytes waiting for the rest of their frame.
    public var pendingByteCount: Int { buffer.count }

    public mutating func append(_ bytes: some Sequence<UInt8>) { buffer.append(contentsOf: bytes) }

    /// The next complete frame, or `nil` when more bytes are needed.
    public mutating func next() -> PN532HostFrame? {
        while true {
            guard let start = startCode() else {
                // Keep a trailing 00: it may be the first half of a start code.
                if buffer.last == 0x00 { buffer = [0x00] } else { buffer.removeAll() }
                return nil
            }
            if start > 0 { buffer.removeFirst(start) }
            // buffer now begins with 00 FF.
            guard buffer.count >= 4 else { return nil }
            let b2 = buffer[2]
            let b3 = buffer[3]
            switch (b2, b3) {
            case (0x00, 0xFF):
                buffer.removeFirst(4)
                return .ack
            case (0xFF, 0x00):
                buffer.removeFirst(4)
                return .nack
            case (0xFF, 0xFF):
                guard buffer.count >= 7 else { return nil }
                let m = buffer[4]
                let l = buffer[5]
                let lcs = buffer[6]
                guard m &+ l &+ lcs == 0 else {
                    buffer.removeFirst(2)
                    return .malformed(
                        "extended frame LCS \(lcs.pn532Hex) does not match length \(m.pn532Hex)\(l.pn532Hex)")
                }
                let length = Int(m) << 8 | Int(l)
                return body(headerLength: 7, length: length)
            default:
                guard b2 &+ b3 == 0 else {
                    buffer.removeFirst(2)
                    return .malformed("LCS \(b3.pn532Hex) does not match LEN \(b2.pn532Hex)")
                }
                return body(headerLength: 4, length: Int(b2))
            }
        }
    }

    private mutating func body(headerLength: Int, length: Int) -> PN532HostFrame? {
        guard length >= 2, length <= Self.maximumFrameLength else {
            buffer.removeFirst(headerLength)
            return .malformed("frame length \(length) outside 2…\(Self.maximumFrameLength)")
        }
        let total = headerLength + length + 1  // + DCS; the postamble is skipped as noise
        guard buffer.count >= total else { return nil }
        let data = Array(buffer[headerLength..<(headerLength + length)])
        let dcs = buffer[total - 1]
        buffer.removeFirst(total)
        guard data[0] == 0xD4 else { return .malformed("TFI \(data[0].pn532Hex), expected D4") }
        guard data.reduce(dcs, &+) == 0 else { return .malformed("DCS \(dcs.pn532Hex) does not match the data") }
        return .command(Array(data.dropFirst()))
    }

    private func startCode() -> Int? {
        guard buffer.count >= 2 else { return nil }
        for i in 0..<(buffer.count - 1) where buffer[i] == 0x00 && buffer[i + 1] == 0xFF {
            return i
        }
        return nil
    }
}

extension UInt8 {
    var pn532Hex: String {
        let d = Array("0123456789ABCDEF")
        return String([d[Int(self >> 4)], d[Int(self & 0xF)]])
    }
}
