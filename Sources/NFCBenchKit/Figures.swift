import Foundation

/// Numbers as a person reads them on a terminal: counts grouped by thousands, measured
/// values to three significant digits, durations in the unit that suits them, and nouns
/// that agree with their count. JSON output keeps its own precision; these are for text.
package enum Figures {
    /// `1234567` → `1,234,567`.
    package static func grouped(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (n < 0 ? "-" : "") + out
    }

    /// `x` to `significant` digits: `682741` → `683,000`, `297.68` → `298`, `12.345` →
    /// `12.3`, `0.012345` → `0.0123`; no trailing zeros after the point.
    package static func rounded(_ x: Double, significant: Int = 3) -> String {
        guard x.isFinite, x != 0 else { return x == 0 ? "0" : "\(x)" }
        let decimals = significant - 1 - Int(log10(abs(x)).rounded(.down))
        let scale = pow(10, Double(decimals))
        let r = (x * scale).rounded() / scale
        guard decimals > 0 else { return grouped(Int(r)) }
        var text = String(format: "%.\(decimals)f", r)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        if let point = text.firstIndex(of: "."), let whole = Int(text[..<point]), abs(whole) >= 1000 {
            return grouped(whole) + text[point...]
        }
        return text
    }

    /// A duration in µs, ms or s, to three significant digits: `812 µs`, `55.3 ms`, `2.93 s`,
    /// `293 s`.
    package static func duration(_ d: Duration) -> String {
        let c = d.components
        let us = Double(c.seconds) * 1e6 + Double(c.attoseconds) / 1e12
        if abs(us) < 999.5 { return rounded(us) + " µs" }
        if abs(us) < 999_500 { return rounded(us / 1000) + " ms" }
        return rounded(us / 1e6) + " s"
    }

    /// `1 page`, `4 pages`, `1,024 pages`; `many` for irregular plurals.
    package static func count(_ n: Int, _ one: String, _ many: String? = nil) -> String {
        "\(grouped(n)) \(n == 1 ? one : many ?? one + "s")"
    }
}
