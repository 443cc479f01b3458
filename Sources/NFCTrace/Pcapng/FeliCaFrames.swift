/// FeliCa frames (JIS X 6319-4; the command codes of Sony's FeliCa card user's manual) as the
/// pcapng export writes them for Wireshark's `felica` dissector, which reads the command
/// code at offset 0: the trace's frames start with LEN (the length byte, counting itself),
/// so it is dropped; neither side carries the CRC.
enum FeliCaFrames {
    /// The frame without its length byte (`frame` as it is when its first byte is not its
    /// length: a frame recorded without one).
    static func payload(_ frame: [UInt8]) -> [UInt8] {
        guard let len = frame.first, Int(len) == frame.count, frame.count > 1 else { return frame }
        return Array(frame.dropFirst())
    }

    /// What a command or response (without LEN) is, for the packet's comment: Wireshark's
    /// dissector names the command but leaves the fields of most commands undecoded (Write
    /// Without Encryption, Request Service, Request System Code…). No IDm and no data, so
    /// the text is the same with `--redact`.
    static func describe(_ p: [UInt8]) -> String {
        guard let code = p.first else { return "empty FeliCa frame" }
        func hex(_ range: Range<Int>) -> String {
            range.upperBound <= p.count ? p[range].hexString() : "?"
        }
        func status() -> String {
            guard p.count >= 11 else { return "" }
            let flags = "status \(p[9...10].hexString(separator: " "))"
            return p[9] == 0 ? flags : flags + " (error)"
        }
        switch code {
        case 0x00:
            var s = "Polling, system code \(hex(1..<3))"
            if p.count > 3 { s += ", request code \(hex(3..<4))" }
            if p.count > 4 { s += ", \(Int(p[4]) + 1) time slot\(p[4] == 0 ? "" : "s")" }
            return s
        case 0x01:
            return "Polling response" + (p.count >= 19 ? ", system code \(hex(17..<19))" : "")
        case 0x02: return "Request Service"
        case 0x03: return "Request Service response"
        case 0x04: return "Request Response"
        case 0x05: return "Request Response response" + (p.count > 9 ? ", mode \(p[9])" : "")
        case 0x06, 0x08:
            let name = code == 0x06 ? "Check (Read Without Encryption)" : "Update (Write Without Encryption)"
            guard let lists = serviceAndBlockLists(p) else { return name }
            let services = lists.services.map { String(format: "%04X", $0) }.joined(separator: ", ")
            let blocks = lists.blocks.map(String.init).joined(separator: ", ")
            return "\(name): service\(lists.services.count == 1 ? "" : "s") \(services), "
                + "block\(lists.blocks.count == 1 ? "" : "s") \(blocks)"
        case 0x07:
            var s = "Check response, " + status()
            if p.count > 11, p[9] == 0 { s += ", \(p[11]) block\(p[11] == 1 ? "" : "s")" }
            return s
        case 0x09: return "Update response, " + status()
        case 0x0A: return "Search Service Code"
        case 0x0B: return "Search Service Code response"
        case 0x0C: return "Request System Code"
        case 0x0D: return "Request System Code response" + (p.count > 9 ? ", \(p[9]) system(s)" : "")
        default: return "FeliCa command \(String(format: "%02X", code))"
        }
    }

    /// The service codes (little-endian on the wire) and block numbers of a Check or Update
    /// command (without LEN): `code IDm(8) m services(2m) n blocks(2 or 3 bytes each)`; a
    /// 2-byte element has bit 7 of its first byte set.
    static func serviceAndBlockLists(_ p: [UInt8]) -> (services: [UInt16], blocks: [Int], end: Int)? {
        guard p.count > 9 else { return nil }
        let m = Int(p[9])
        var i = 10
        var services: [UInt16] = []
        for _ in 0..<m {
            guard i + 2 <= p.count else { return nil }
            services.append(UInt16(p[i]) | UInt16(p[i + 1]) << 8)
            i += 2
        }
        guard i < p.count else { return nil }
        let n = Int(p[i])
        i += 1
        var blocks: [Int] = []
        for _ in 0..<n {
            guard i + 2 <= p.count else { return nil }
            if p[i] & 0x80 != 0 {
                blocks.append(Int(p[i + 1]))
                i += 2
            } else {
                guard i + 3 <= p.count else { return nil }
                blocks.append(Int(p[i + 1]) | Int(p[i + 2]) << 8)
                i += 3
            }
        }
        return (services, blocks, i)
    }

    /// `--redact`: the IDm (the card's identifier, in every frame after Polling) and block
    /// data become zeros; command codes, PMm, system and service codes, block numbers and
    /// status flags stay.
    static func redacted(_ p: [UInt8]) -> [UInt8] {
        guard let code = p.first, code != 0x00 else { return p }
        var out = p
        for i in 1..<min(9, out.count) { out[i] = 0 }
        switch code {
        case 0x07 where out.count > 12:
            for i in 12..<out.count { out[i] = 0 }
        case 0x08:
            if let lists = serviceAndBlockLists(p) {
                for i in lists.end..<out.count { out[i] = 0 }
            }
        default:
            break
        }
        return out
    }
}
