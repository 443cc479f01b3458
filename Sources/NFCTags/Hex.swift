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
        let digits = Array("0123456789ABCDEF".utf8)
        var s = ""
        s.reserveCapacity(count * (2 + separator.utf8.count))
        var first = true
        for b in self {
            if !first { s += separator }
            first = false
            s.unicodeScalars.append(Unicode.Scalar(digits[Int(b >> 4)]))
            s.unicodeScalars.append(Unicode.Scalar(digits[Int(b & 0xF)]))
        }
        return s
    }
}
