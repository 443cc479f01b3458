public import Foundation

/// Line 1 of every trace, the same for every command: the one header writer.
///
/// Keys, in this order (``keys``): `schema`, `t_us` (0), `event` (`"header"`), `tool`,
/// `libnfc`, `pcsclite`, `command` (the command as typed: `session`, `virtual card`…),
/// `device` (the reader or virtual device, or `null`), `pid`, `started` (UTC wall-clock time
/// of `t_us` 0, ISO 8601 with microseconds), `model` (the model's parameters: the session's
/// time limit and thermal switch, the phone model's numbers…, each model adds its own block
/// here) and `setup` (what the command was given: tag file, port, pty…). Every key is
/// always present, so a reader of any trace finds the same shape.
///
/// `--redact` never touches `command`, `device`, the versions or `model`: only `setup`'s
/// identifiers and payloads (``TraceWriter/sensitiveKeys``) are redacted.
public struct TraceHeader: Sendable, Equatable {
    /// The header record's keys, in the order they are written.
    public static let keys = [
        TraceRecord.Key.schema, TraceRecord.Key.time, TraceRecord.Key.kind, "tool", "libnfc", "pcsclite", "command",
        "device", "pid", "started", "model",
        "setup",
    ]

    /// `nfcbench 0.1.0`.
    public var tool: String
    /// libnfc's version string (`nfc_version()`), or `unknown`.
    public var libnfc: String
    /// pcsc-lite's version (`PCSCLITE_VERSION_NUMBER`), or `unknown`.
    public var pcsclite: String
    public var command: String
    public var device: String?
    public var pid: Int32
    public var model: JSONObject
    public var setup: JSONObject

    public init(
        tool: String, libnfc: String, pcsclite: String, command: String, device: String?,
        model: JSONObject = [:], setup: JSONObject = [:], pid: Int32 = getpid()
    ) {
        self.tool = tool
        self.libnfc = libnfc
        self.pcsclite = pcsclite
        self.command = command
        self.device = device
        self.pid = pid
        self.model = model
        self.setup = setup
    }

    /// The header record, `started` being the wall-clock time of `t_us` 0.
    public func record(started: Date) -> JSONObject { record(startedText: Self.timestamp(started)) }

    /// The header record with `started` as written (``timestamp(_:)``'s form).
    public func record(startedText started: String) -> JSONObject {
        var o = JSONObject()
        o[TraceRecord.Key.schema] = .string(TraceRecord.schema)
        o[TraceRecord.Key.time] = 0
        o[TraceRecord.Key.kind] = .string(TraceRecord.Kind.header.rawValue)
        o["tool"] = .string(tool)
        o["libnfc"] = .string(libnfc)
        o["pcsclite"] = .string(pcsclite)
        o["command"] = .string(command)
        o["device"] = device.map { .string($0) } ?? .null
        o["pid"] = .int(Int64(pid))
        o["started"] = .string(started)
        o["model"] = .object(model)
        o["setup"] = .object(setup)
        return o
    }

    /// The header of a header record read back (`event` `"header"`), or nil when `record` is
    /// none. Keys it does not know are not kept here (the record keeps them); a missing
    /// `model` or `setup` reads as empty, a missing version as `unknown`.
    public init?(record: TraceRecord) {
        guard record.is(.header) else { return nil }
        func text(_ key: String) -> String { record[key]?.stringValue ?? "unknown" }
        func object(_ key: String) -> JSONObject { if case .object(let o)? = record[key] { o } else { [:] } }
        self.init(
            tool: text("tool"), libnfc: text("libnfc"), pcsclite: text("pcsclite"),
            command: record["command"]?.stringValue ?? "", device: record["device"]?.stringValue,
            model: object("model"), setup: object("setup"), pid: Int32(truncatingIfNeeded: record["pid"]?.intValue ?? 0)
        )
    }

    /// A header record's `started`, as written.
    public static func started(of record: TraceRecord) -> String? { record["started"]?.stringValue }

    /// `2025-03-01T12:34:56.123456Z`: UTC, microseconds (the trace's resolution).
    public static func timestamp(_ date: Date) -> String {
        let us = Int64((date.timeIntervalSince1970 * 1_000_000).rounded(.down))
        var seconds = time_t(us / 1_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        // Digits by hand, not String(format:): its C varargs cast every argument at run time,
        // which costs a scan of every protocol conformance in the program per new type.
        func digits(_ n: Int, _ width: Int) -> String {
            let s = String(n)
            return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
        }
        return
            "\(digits(Int(parts.tm_year) + 1900, 4))-\(digits(Int(parts.tm_mon) + 1, 2))-\(digits(Int(parts.tm_mday), 2))"
            + "T\(digits(Int(parts.tm_hour), 2)):\(digits(Int(parts.tm_min), 2)):\(digits(Int(parts.tm_sec), 2))"
            + ".\(digits(Int(us % 1_000_000), 6))Z"
    }

    /// Microseconds since the Unix epoch of a `started` value (with or without a fraction),
    /// or nil when it is not one.
    public static func epochMicroseconds(_ started: String) -> Int64? {
        // yyyy-MM-ddTHH:mm:ss[.ffffff]Z
        let scalars = Array(started.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= scalars.count else { return nil }
            var v = 0
            for c in scalars[range] {
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            return v
        }
        guard scalars.count >= 20, let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        var fraction = 0
        var digits = 0
        var i = 19
        if i < scalars.count, scalars[i] == UInt8(ascii: ".") {
            i += 1
            while i < scalars.count, scalars[i] >= 48 && scalars[i] <= 57 {
                if digits < 6 {
                    fraction = fraction * 10 + Int(scalars[i] - 48)
                    digits += 1
                }
                i += 1
            }
        }
        while digits < 6 {
            fraction *= 10
            digits += 1
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        return Int64(seconds) * 1_000_000 + Int64(fraction)
    }
}
