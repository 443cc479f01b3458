public import Foundation

/// Pins the three processes of a `measure apdu` round trip — the client, pcscd and the card —
/// to one CPU for a while, then puts them back: `bench all`'s one-CPU row. On two cores the
/// scheduler puts the three on one core (≈ 50 µs a round trip here) or spreads them (≈ 120 µs),
/// and which a run gets is luck; on one CPU every run gets the same, so the ratio shows the
/// code. Only the bench's own private pcscd is pinned (`scripts/with-pcscd` exports its pid as
/// `NFCBENCH_PCSCD_PID`), never a shared one. Through util-linux's `taskset` (every thread
/// with `-a`): the affinity calls are GNU extensions Swift's Glibc module does not import.
///
/// ``apart`` is the other fixed placement: the client on a second CPU, pcscd and the card on
/// the first, so every round trip crosses cores (≈ 100 µs here) — the spread mode, without
/// the luck.
public struct OneCPU: Sendable {
    /// The CPU of pcscd and the card: the first this process may run on.
    public let cpu: String
    /// The client's CPU: ``cpu`` itself, or another one for ``apart``.
    public var clientCPU: String
    /// The CPUs this process may run on (`Cpus_allowed_list`), given back afterwards.
    public let allowed: String
    /// pcscd and the card.
    public let processes: [pid_t]

    /// The client on the second CPU this process may run on, pcscd and the card on the first;
    /// nil when only one is allowed.
    public var apart: OneCPU? {
        guard let second = Self.cpus(in: allowed).dropFirst().first else { return nil }
        var a = self
        a.clientCPU = String(second)
        return a
    }

    /// The CPUs of a `Cpus_allowed_list` ("0-3,6"), in order.
    public static func cpus(in list: String) -> [Int] {
        list.split(separator: ",").flatMap { part -> [Int] in
            let ends = part.split(separator: "-").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard let low = ends.first, let high = ends.last, low <= high else { return [] }
            return Array(low...high)
        }
    }

    /// Pinning for this bench's private pcscd and `card`; nil when pcscd is not the bench's own
    /// or `taskset` is missing.
    public static func forPrivatePCSCD(card: pid_t) -> OneCPU? {
        let env = ProcessInfo.processInfo.environment
        guard env["NFCBENCH_PCSCD"] == "private", let text = env["NFCBENCH_PCSCD_PID"], let pcscd = pid_t(text),
            (try? String(contentsOfFile: "/proc/\(pcscd)/comm", encoding: .utf8))?.hasPrefix("pcscd") == true,
            BenchAll.onPath("taskset"),
            let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") })
        else { return nil }
        let allowed = line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces)
        guard let first = cpus(in: allowed).first else { return nil }
        return OneCPU(cpu: String(first), clientCPU: String(first), allowed: allowed, processes: [pcscd, card])
    }

    /// The command prefix that starts a client on ``clientCPU``.
    public var client: [String] { ["taskset", "-c", clientCPU] }

    /// Runs `body` with pcscd and the card on ``cpu``; gives them ``allowed`` back after.
    /// - Throws: when `taskset` cannot pin one of them (the row would say "one CPU" falsely).
    public func pinned<R>(in work: String, _ body: () throws -> R) throws -> R {
        defer { for pid in processes { try? set(pid, to: allowed, in: work) } }
        for pid in processes { try set(pid, to: cpu, in: work) }
        return try body()
    }

    /// `taskset -a` lists the process's threads, then pins each: a thread that ends in between
    /// (pcscd's per-client threads come and go) fails it with "No such process" though every
    /// thread left is pinned. So a failure while the process still runs is tried again, up to
    /// three times in all; a process that is gone, or three failures, throw.
    private func set(_ pid: pid_t, to cpus: String, in work: String) throws {
        var tries = 0
        while true {
            tries += 1
            let r = try BenchSpawn.run(["taskset", "-a", "-p", "-c", cpus, String(pid)], in: work)
            if r.status == 0 { return }
            guard tries < 3, kill(pid, 0) == 0 else {
                throw BenchError.failure("taskset could not pin process \(pid) to CPU \(cpus): \(r.lastError)")
            }
        }
    }
}
