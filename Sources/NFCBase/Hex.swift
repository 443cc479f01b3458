extension Array where Element == UInt8 {
    /// Bytes from hex text such as `"D2 76 00 00 85 01 01"` or `"d2760000850101"`;
    /// spaces, colons and dashes between bytes are ignored. `nil` on any other character
    /// or an odd number of digits.
    public init?(hex: some StringProtocol) {
        var out: [UInt8] = []
        out.reserveCapacity(hex.utf8.count / 2)
        var high: UInt8? = nil
        for c in hex.utf8 {
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c &- UInt8(ascii: "A") &+ 10
            case UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: "-"), UInt8(ascii: "\t"):
                if high != nil { return nil }
                continue
            default: return nil
            }
            if let h = high {
                out.append(h << 4 | v)
                high = nil
            } else {
                high = v
            }
        }
        if high != nil { return nil }
        self = out
    }
}

extension Collection where Element == UInt8 {
    /// Uppercase hex, two digits a byte, joined by `separator` (`""` by default).
    public func hexString(separator: String = "") -> String {
        let digits: StaticString = "0123456789ABCDEF"
        let sep = Array(separator.utf8)
        let length = count * 2 + Swift.max(0, count - 1) * sep.count
        guard length > 0 else { return "" }
        // Written as UTF-8 bytes in one go: appending scalar by scalar cost more than the
        // exchange it describes when a trace records thousands of frames.
        return String(unsafeUninitializedCapacity: length) { out in
            digits.withUTF8Buffer { d in
                var i = 0
                for b in self {
                    if i > 0 {
                        for c in sep {
                            out[i] = c
                            i += 1
                        }
                    }
                    out[i] = d[Int(b >> 4)]
                    out[i + 1] = d[Int(b & 0xF)]
                    i += 2
                }
                return i
            }
        }
    }
}
