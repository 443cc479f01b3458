import Foundation
import Glibc
import NFCBase
import NFCBenchTestSupport
import Testing
import VirtualHardware

/// The virtual PN532's thread stands in for a chip, hardware of its own: it is named and asks
/// to be real-time, so a loaded host does not make it answer later than a real chip (issue 35).
@Suite("Virtual PN532: its thread is 'pn532 chip' and real-time where the host grants it")
struct PN532ThreadPriorityTests {
    @Test("The chip's thread is SCHED_FIFO 1 when real-time is granted, else as it was")
    func chipThreadIsRealTime() async throws {
        let before = Set(threads(named: "pn532 chip"))
        let fake = try VirtualPN532.start(ptyPath: nil)
        defer { fake.stop() }
        // Other tests' chips may start meanwhile: every new one is scheduled the same way.
        var chips: [pid_t] = []
        try await wait(for: "the chip's thread to name itself") {
            chips = threads(named: "pn532 chip").filter { !before.contains($0) }
            return !chips.isEmpty
        }
        let granted = try await offPool { ThreadPriority.realTimeIsGranted() }
        let policy = granted ? SCHED_FIFO : SCHED_OTHER
        try await wait(for: "the chip's thread to be scheduled as asked (policy \(policy))") {
            // -1: that chip (another test's) has stopped since.
            chips.allSatisfy { [policy, -1].contains(sched_getscheduler($0)) }
                && chips.contains { sched_getscheduler($0) == policy }
        }
        if granted {
            var p = sched_param()
            #expect(chips.contains { sched_getparam($0, &p) == 0 && p.sched_priority == 1 })
        }
    }
}

@Suite("JobThread: its jobs run on its own thread, named in the kernel")
struct JobThreadNameTests {
    @Test("A task that prefers a JobThread runs on it; the kernel shows its name cut to 15 bytes")
    func namedInTheKernel() async throws {
        let thread = JobThread(name: "nfcbench.test.job-thread")
        defer { thread.stop() }
        let name = await Task(executorPreference: thread) { callingThreadName() }.value
        #expect(name == "nfcbench.test.j")
        // A name that fits stays whole; a multi-byte character is never cut in half.
        let other = JobThread(name: "naïve-thread-ñame")
        defer { other.stop() }
        let cut = await Task(executorPreference: other) { callingThreadName() }.value
        #expect(cut == "naïve-thread-")  // 14 bytes: the ñ (2 bytes) would make 16
    }
}
