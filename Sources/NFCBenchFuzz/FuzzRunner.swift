import Foundation
import Glibc
package import ReaderSession
import Synchronization

/// What became of one input.
package enum FuzzOutcome: Sendable {
    /// Parsed or served; the text classes it for the report.
    case accepted(String)
    /// Refused with a typed error (the class: the error's code).
    case rejected(String)
    /// A broken promise that is not a crash: a round trip that does not hold, an answer
    /// longer than the wire allows, a read that returns more than it declared.
    case finding(String)
}

/// A parser a stranger can feed, with valid inputs to start from.
package struct FuzzTarget: Sendable {
    package var name: String
    /// What it reads, for `--help` and the report.
    package var feeds: String
    package var seeds: [[UInt8]]
    /// Tokens the mutator inserts (field names, punctuation, extreme numbers).
    package var dictionary: [[UInt8]] = []
    /// Inputs are cut to this many bytes.
    package var maxInputBytes = 65_536
    /// A generator of its own (hosts' frame sequences); nil: a seed and 1, 2, 4 or 8
    /// mutations (``ByteMutator/mutateDeep(_:using:splice:dictionary:)``).
    package var generate: (@Sendable (inout SplitMix64) -> [UInt8])? = nil
    package var run: @Sendable ([UInt8]) -> FuzzOutcome
}

/// What a run of one target found, with its time and memory.
package struct FuzzReport: Sendable {
    package var target: String
    package var seed: UInt64
    package var from: Int
    package var inputs = 0
    package var accepted: [String: Int] = [:]
    package var rejected: [String: Int] = [:]
    package var findings = 0
    package var findingExamples: [String] = []
    package var elapsed: Duration = .zero
    /// Resident set size after a tenth of the inputs and at the end (KiB), and the peak.
    package var rssAtTenthKiB = 0
    package var rssAtEndKiB = 0
    package var peakRSSKiB = 0

    package var perSecond: Double {
        let s = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return s > 0 ? Double(inputs) / s : 0
    }

    package var lines: [String] {
        let s = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var out = [
            "fuzz \(target) seed \(seed): \(inputs) inputs in \(String(format: "%.1f", s)) s "
                + "(\(Int(perSecond)) inputs/s, \(String(format: "%.1f", s * 1e6 / Double(max(inputs, 1)))) µs each)",
            "  0 crashes, 0 hangs, \(findings) findings; accepted \(accepted.values.reduce(0, +)), "
                + "rejected \(rejected.values.reduce(0, +))",
            "  memory: RSS \(rssAtTenthKiB / 1024) MiB after a tenth, \(rssAtEndKiB / 1024) MiB at the end, "
                + "peak \(peakRSSKiB / 1024) MiB",
        ]
        for (k, n) in accepted.sorted(by: { $0.value > $1.value }).prefix(6) { out.append("  accepted \(k): \(n)") }
        for (k, n) in rejected.sorted(by: { $0.value > $1.value }).prefix(8) { out.append("  rejected \(k): \(n)") }
        for e in findingExamples { out.append("  finding: \(e)") }
        return out
    }
}

/// Runs a target's inputs with a watchdog: a crash (a trap, a bad access, an abort, a stack
/// overflow) prints the target, seed, input number and the input itself before the process
/// dies with the signal; an input that runs longer than the hang limit, or a resident set
/// above the memory limit, is reported the same way and ends the process (exit 3 and 4).
/// Input `i` comes from its own generator seeded with `seed` and `i`, so
/// `--from I --count 1` reproduces it alone.
package enum FuzzRunner {
    package static func input(_ t: FuzzTarget, seed: UInt64, index: Int) -> [UInt8] {
        var rng = SplitMix64(seed: seed &+ UInt64(truncatingIfNeeded: index) &* 0xD1B5_4A32_D192_ED03)
        var b: [UInt8]
        if let generate = t.generate {
            b = generate(&rng)
        } else {
            b = t.seeds.randomElement(using: &rng) ?? []
            if Int.random(in: 0..<64, using: &rng) != 0 {  // now and then a seed as it is
                for _ in 0..<(1 << Int.random(in: 0...3, using: &rng)) {
                    ByteMutator.mutateDeep(&b, using: &rng, splice: t.seeds, dictionary: t.dictionary)
                }
            }
        }
        if b.count > t.maxInputBytes { b.removeLast(b.count - t.maxInputBytes) }
        return b
    }

    package static func run(
        _ t: FuzzTarget, seed: UInt64, from: Int, count: Int, hangLimit: Duration, maxRSSMiB: Int,
        show: Bool, log: (String) -> Void
    ) -> FuzzReport {
        FuzzWitness.arm(target: t.name, seed: seed, maxInputBytes: t.maxInputBytes)
        let watchdog = FuzzWatchdog(hangLimit: hangLimit, maxRSSKiB: maxRSSMiB * 1024)
        defer { watchdog.stop() }
        var report = FuzzReport(target: t.name, seed: seed, from: from)
        let clock = ContinuousClock()
        let start = clock.now
        for i in from..<(from + count) {
            let b = input(t, seed: seed, index: i)
            FuzzWitness.record(index: i, input: b)
            let outcome = t.run(b)
            report.inputs += 1
            switch outcome {
            case .accepted(let k): report.accepted[k, default: 0] += 1
            case .rejected(let k): report.rejected[k, default: 0] += 1
            case .finding(let what):
                report.findings += 1
                if report.findingExamples.count < 5 {
                    report.findingExamples.append("input #\(i): \(what); input \(b.hexString())")
                    log("finding at input #\(i): \(what)")
                }
            }
            if show { log("input #\(i) (\(b.count) bytes) \(outcome): \(b.hexString())") }
            let done = i - from + 1
            if done == max(1, count / 10) { report.rssAtTenthKiB = FuzzWatchdog.residentKiB() }
            if done % 100_000 == 0 { log("\(t.name): \(done) inputs, \(report.findings) findings") }
        }
        FuzzWitness.record(index: -1, input: [])
        report.elapsed = clock.now - start
        report.rssAtEndKiB = FuzzWatchdog.residentKiB()
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        report.peakRSSKiB = Int(usage.ru_maxrss)
        return report
    }
}

/// The input being run, where a signal handler can print it without allocating: a banner
/// made before the run, the input's number, and the input copied into a fixed buffer.
private enum FuzzWitness {
    // unsafe: written by arm() and record() on the fuzz thread; report() reads it after an acquiring load of `index`
    package nonisolated(unsafe) static var input = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1)
    // unsafe: written by record() before its releasing store of `index`; read by report() after an acquiring load
    package nonisolated(unsafe) static var inputCount = 0
    // unsafe: used only by arm(), on the thread that starts each run (report() reads bannerCopy instead)
    package nonisolated(unsafe) static var banner: [UInt8] = []
    // unsafe: written by arm() before the run's first input, then only read (by report(), in a signal handler: no lock)
    package nonisolated(unsafe) static var bannerCopy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1)
    // unsafe: used only by report(), which runs once, just before the process ends (crash handler or watchdog)
    package nonisolated(unsafe) static var scratch = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 8192)
    package static let index = Atomic<Int>(-1)
    // unsafe: used only by arm(), on the thread that starts a fuzz run (one run at a time)
    package nonisolated(unsafe) static var installed = false

    package static func arm(target: String, seed: UInt64, maxInputBytes: Int) {
        input.deallocate()
        input = .allocate(capacity: maxInputBytes)
        inputCount = 0
        banner = Array("bench fuzz --target \(target) --seed \(seed): ".utf8)
        bannerCopy.deallocate()
        bannerCopy = .allocate(capacity: banner.count)
        _ = bannerCopy.initialize(from: banner)
        index.store(-1, ordering: .relaxed)
        guard !installed else { return }
        installed = true
        // Its own stack, so a stack overflow can still be reported.
        var stack = stack_t()
        stack.ss_sp = UnsafeMutableRawPointer.allocate(byteCount: 1 << 16, alignment: 16)
        stack.ss_size = 1 << 16
        sigaltstack(&stack, nil)
        for sig in [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGABRT] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { sig in FuzzWitness.crashed(sig) }
            action.sa_flags = Int32(SA_ONSTACK) | Int32(bitPattern: UInt32(SA_RESETHAND))
            sigemptyset(&action.sa_mask)
            sigaction(sig, &action, nil)
        }
    }

    package static func record(index i: Int, input b: [UInt8]) {
        let n = min(b.count, input.count)
        b.withUnsafeBufferPointer { src in
            if n > 0 { input.baseAddress!.update(from: src.baseAddress!, count: n) }
        }
        inputCount = n
        index.store(i, ordering: .releasing)
    }

    /// Signal handler: only `write(2)` and fixed buffers.
    package static func crashed(_ sig: Int32) {
        report(what: "crash (signal ", number: Int(sig), then: ")")
        raise(sig)  // SA_RESETHAND: the default action now (a core, the signal's exit status)
    }

    /// Writes "<banner><what><number><then> at input #N; reproduce: … --from N --count 1\ninput: <hex>\n".
    package static func report(what: StaticString, number: Int?, then: StaticString) {
        func put(_ p: UnsafeRawPointer, _ n: Int) {
            var off = 0
            while off < n {
                let w = write(2, p + off, n - off)
                if w <= 0 { return }
                off += w
            }
        }
        func put(_ s: StaticString) { put(s.utf8Start, s.utf8CodeUnitCount) }
        func putNumber(_ v: Int) {
            var v = v
            var digits = 0
            let base = scratch.baseAddress! + 64
            repeat {
                digits += 1
                base[-digits] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
            } while v > 0
            put(base - digits, digits)
        }
        let i = index.load(ordering: .acquiring)
        put(bannerCopy.baseAddress!, bannerCopy.count)
        put(what)
        if let number { putNumber(number) }
        put(then)
        put(" at input #")
        putNumber(i)
        put("; reproduce it alone with --from ")
        putNumber(i)
        put(" --count 1 --show\ninput: ")
        let hex: StaticString = "0123456789ABCDEF"
        var k = 0
        while k < inputCount {
            let chunk = min(inputCount - k, scratch.count / 2)
            for j in 0..<chunk {
                let byte = input[k + j]
                scratch[2 * j] = hex.utf8Start[Int(byte >> 4)]
                scratch[2 * j + 1] = hex.utf8Start[Int(byte & 0xF)]
            }
            put(scratch.baseAddress!, 2 * chunk)
            k += chunk
        }
        put("\n")
    }
}

/// Watches the run from its own thread: the same input for longer than the hang limit, or a
/// resident set above the limit, is reported (``FuzzWitness``) and ends the process.
private final class FuzzWatchdog: Sendable {
    private let stopped = Atomic<Bool>(false)

    package init(hangLimit: Duration, maxRSSKiB: Int) {
        let limit = Double(hangLimit.components.seconds) + Double(hangLimit.components.attoseconds) / 1e18
        let thread = Thread { [self] in
            var last = FuzzWitness.index.load(ordering: .acquiring)
            var since = Date()
            while !self.stopped.load(ordering: .relaxed) {
                usleep(100_000)
                let now = FuzzWitness.index.load(ordering: .acquiring)
                if now != last {
                    last = now
                    since = Date()
                } else if now >= 0, Date().timeIntervalSince(since) > limit {
                    FuzzWitness.report(what: "hang (no end after the limit)", number: nil, then: "")
                    _exit(3)
                }
                if Self.residentKiB() > maxRSSKiB {
                    FuzzWitness.report(what: "memory over the limit (MiB) ", number: maxRSSKiB / 1024, then: "")
                    _exit(4)
                }
            }
        }
        thread.name = "nfcbench.fuzz.watchdog"
        thread.start()
    }

    package func stop() { stopped.store(true, ordering: .relaxed) }

    /// The resident set now, in KiB (`/proc/self/statm`, pages).
    package static func residentKiB() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }
}
