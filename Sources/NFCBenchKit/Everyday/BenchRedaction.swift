import Foundation
public import NFCTrace

/// What `--redact` shows on screen and prints with `--json` in place of a tag's identifiers
/// and content: the trace's own text, `redacted:<n> bytes`
/// (``/NFCTrace/TraceWriter/redactedText(_:)``). The trace's records are redacted by the
/// trace itself (``/NFCTrace/TraceWriter/sensitiveKeys``); a tag file the user asked for
/// (`dump --out`, a backup) is the user's data and is never redacted.
public enum BenchRedaction {
    /// `bytes` as `--redact` shows them.
    public static func text(_ bytes: [UInt8]) -> String { TraceWriter.redactedText(bytes.hexString()) }

    /// `bytes` in hex (`separator` between two bytes), or their redacted text when `redact`.
    public static func hex(_ bytes: [UInt8], separator: String = "", redact: Bool) -> String {
        redact ? text(bytes) : bytes.hexString(separator: separator)
    }

    /// `line` with each of `values` (UIDs) in every spelling — hex run together, with spaces,
    /// colons or dashes between the bytes, either case — replaced by its redacted text: for
    /// messages made far from the command (a refusal naming both UIDs).
    public static func scrub(_ line: String, _ values: [[UInt8]]) -> String {
        var out = line
        for v in values where v.count >= 2 {
            for separator in ["", " ", ":", "-"] {
                out = out.replacingOccurrences(
                    of: v.hexString(separator: separator), with: text(v), options: .caseInsensitive)
            }
        }
        return out
    }

    /// Bytes a person still follows without their content: the first `keep` in hex (a
    /// command's code, an APDU's header), the rest as their redacted text.
    public static func head(_ bytes: [UInt8], keep: Int) -> String {
        let kept = Array(bytes.prefix(keep)).hexString(separator: " ")
        guard bytes.count > keep else { return kept }
        return (kept.isEmpty ? "" : kept + " ") + text(Array(bytes.dropFirst(keep)))
    }

    /// A command APDU as `--redact` shows it: CLA INS P1 P2 (and Lc, Le) in hex, the data
    /// field as its redacted text (`00 D6 00 00 05 redacted:5 bytes`).
    public static func commandAPDU(_ c: [UInt8]) -> String {
        guard c.count > 5 else { return c.hexString(separator: " ") }
        let lc = Int(c[4])
        guard lc > 0, c.count >= 5 + lc else { return head(c, keep: 4) }
        let le = Array(c.dropFirst(5 + lc)).hexString(separator: " ")
        return head(Array(c.prefix(5 + lc)), keep: 5) + (le.isEmpty ? "" : " " + le)
    }

    /// A response APDU as `--redact` shows it: the data as its redacted text, SW1 SW2 in hex.
    public static func responseAPDU(_ r: [UInt8]) -> String {
        guard r.count > 2 else { return r.hexString(separator: " ") }
        return text(Array(r.dropLast(2))) + " " + Array(r.suffix(2)).hexString(separator: " ")
    }

    /// A Type 2 frame as `--redact` shows it: the command code, and the page of a WRITE or
    /// COMPATIBILITY_WRITE; a frame of three bytes or fewer (READ, FAST_READ, GET_VERSION…:
    /// a code and addresses) stays whole.
    public static func frame(_ f: [UInt8]) -> String {
        guard f.count > 3 else { return f.hexString(separator: " ") }
        return head(f, keep: [0xA2, 0xA0].contains(f[0]) ? 2 : 1)
    }

    /// A `--json` object as the trace writes it under `--redact`, its `command` kept when it is
    /// the command's name (write, restore), not an APDU.
    public static func json(_ o: JSONObject, commandName: String? = nil) -> JSONObject {
        var out = TraceWriter.redacted(o)
        if let commandName { out["command"] = .string(commandName) }
        return out
    }
}
