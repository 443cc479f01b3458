import Foundation

/// Pins the three processes of a `measure apdu` round trip — the client, pcscd and the card —
/// to one CPU for a while, then puts them back: `bench all`'s one-CPU row. On two cores the
/// scheduler puts the three on one core (≈ 50 µs a round trip here) or spreads them (≈ 120 µs),
/// and which a run gets is luck; on one CPU every run gets the same, so the ratio shows the
/// code. Only the bench's own private pcscd is pinned (`scripts/with-pcscd` exports its pid as
/// `NFCBENCH_PCSCD_PID`), never a shared one. Through util-linux's `taskset` (every thread
/// with `-a`): the affinity calls are GNU extensions Swift's Glibc module does not import.
struct OneCPU {
    /// The CPU: the first this process may run on.
    let cpu: String
    /// The CPUs this process may run on (`Cpus_allowed_list`), given back afterwards.
    let allowed: String
    /// pcscd and the card.
    let processes: [pid_t]

    /// Pinning for this bench's private pcscd and `card`; nil when pcscd is not the bench's own
    /// or `taskset` is missing.
    static func forPrivatePCSCD(card: pid_t) -> OneCPU? {
        let env = ProcessInfo.processInfo.environment
        guard env["NFCBENCH_PCSCD"] == "private", let text = env["NFCBENCH_PCSCD_PID"], let pcscd = pid_t(text),
            (try? String(contentsOfFile: "/proc/\(pcscd)/comm", encoding: .utf8))?.hasPrefix("pcscd") == true,
            BenchAll.onPath("taskset"),
            let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") })
        else { return nil }
        let allowed = line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces)
        guard let first = allowed.split(whereSeparator: { $0 == "," || $0 == "-" }).first, Int(first) != nil else {
            return nil
        }
        return OneCPU(cpu: String(first), allowed: allowed, processes: [pcscd, card])
    }

    /// The command prefix that starts a client on ``cpu``.
    var client: [String] { ["taskset", "-c", cpu] }

    /// Runs `body` with pcscd and the card on ``cpu``; gives them ``allowed`` back after.
    /// - Throws: when `taskset` cannot pin one of them (the row would say "one CPU" falsely).
    func pinned<R>(in work: String, _ body: () throws -> R) throws -> R {
        defer { for pid in processes { try? set(pid, to: allowed, in: work) } }
        for pid in processes { try set(pid, to: cpu, in: work) }
        return try body()
    }

    private func set(_ pid: pid_t, to cpus: String, in work: String) throws {
        let r = try BenchSpawn.run(["taskset", "-a", "-p", "-c", cpus, String(pid)], in: work)
        guard r.status == 0 else {
            throw CLIError.failure("taskset could not pin process \(pid) to CPU \(cpus): \(r.lastError)")
        }
    }
}
