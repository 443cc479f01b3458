import Foundation
import Glibc
import ReaderSession

/// The thermal model's state between processes: one small JSON file beside the reader's lock
/// (``LockFolder/heatFilePath(forLockName:)``: `<lock folder>/<lock name>.heat`, mode 0600), so
/// heat follows the lock scope (per reader, or `host.heat` with a host-wide arbiter) and two
/// CLI runs in a row on one reader see it.
///
/// Contents: `{"schema":"nfcbench.heat/1","heat":H,"field_on":B,"boottime_ns":T}`: the heat
/// in field-seconds at `T`, a `CLOCK_BOOTTIME` instant (system-wide, counts suspend, restarts
/// at boot: a saved instant later than now means a reboot, and the system has cooled).
/// Every read-modify-write holds an exclusive `flock(2)` on the file. This is the only place
/// that touches heat files.
struct HeatFile: ThermalStateStore {
    let path: String

    typealias Saved = SavedThermalState

    /// `CLOCK_BOOTTIME` now, in nanoseconds.
    func bootNanoseconds() -> UInt64 { Self.bootNanoseconds() }

    static func bootNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_BOOTTIME, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// Reads the saved state (nil when there is none or it does not parse), lets `body`
    /// change it, and writes back what `body` leaves (nothing when it leaves nil). Without a
    /// usable file, `body` runs on nil and nothing is written: heat then stays in this process.
    func update<R>(_ body: (inout Saved?) -> R) -> R {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            var none: Saved? = nil
            return body(&none)
        }
        defer { close(fd) }
        var rc: Int32
        repeat { rc = flock(fd, LOCK_EX) } while rc != 0 && errno == EINTR
        defer { _ = flock(fd, LOCK_UN) }
        var bytes = [UInt8](repeating: 0, count: 512)
        let n = pread(fd, &bytes, bytes.count, 0)
        var saved = n > 0 ? Self.parse(Array(bytes[0..<n])) : nil
        let before = saved
        let result = body(&saved)
        if let saved, saved != before {
            let line = Array(Self.serialize(saved).utf8)
            _ = ftruncate(fd, 0)
            _ = line.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        }
        return result
    }

    static func serialize(_ s: Saved) -> String {
        let heat = s.heat.isFinite ? String(format: "%.6f", s.heat) : "0"
        return
            "{\"schema\":\"nfcbench.heat/1\",\"heat\":\(heat),\"field_on\":\(s.fieldOn),\"boottime_ns\":\(s.bootNanoseconds)}\n"
    }

    /// Parses what ``serialize(_:)`` writes; nil for anything else.
    static func parse(_ bytes: [UInt8]) -> Saved? {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        func field(_ key: String) -> Substring? {
            guard let r = text.range(of: "\"\(key)\":") else { return nil }
            return text[r.upperBound...].prefix { $0 != "," && $0 != "}" && $0 != "\n" }
        }
        guard text.contains("\"schema\":\"nfcbench.heat/1\""), let h = field("heat").flatMap({ Double($0) }),
            h.isFinite, h >= 0, let on = field("field_on"), on == "true" || on == "false",
            let t = field("boottime_ns").flatMap({ UInt64($0) })
        else { return nil }
        return Saved(heat: h, fieldOn: on == "true", bootNanoseconds: t)
    }
}
