import Foundation
import NFCBenchKit
import NFCBenchTestSupport
import NFCFiles
import NFCTags
import ReaderSession
import Synchronization
import Testing

/// The bench logic that moved out of the `nfcbench` executable (issue 32), through its library
/// API: errors and their exit statuses, the doctor's checks over a fake root, a tag write's
/// dry run and the tag snapshot on a simulated reader, the measurement loops' exchange, the
/// new-app manifest's literals.
@Suite("NFCBenchKit: the bench's library logic")
struct BenchLibraryTests {
    @Test("Each error kind ends the command with its sysexits status; a file error keeps its kind")
    func exitStatuses() {
        let cases: [(BenchError, Int32)] = [
            (.usage("u"), 64), (.data("d"), 65), (.noInput("n"), 66), (.unavailable("a"), 69),
            (.cantCreate("c"), 73), (.ioError("i"), 74), (.failure("f"), 1),
        ]
        for (error, status) in cases { #expect(error.exitCode == status) }
        #expect(BenchError.data("why").message == "why")
        #expect(BenchError(FileError(.sameFile, path: "/x", "is the input")).exitCode == 64)
        #expect(BenchError(FileError(.noInput, path: "/x", "is not there")).exitCode == 66)
        #expect(BenchError(BenchDeviceError(.ambiguous, "two readers")).exitCode == 64)
        #expect(BenchError(BenchDeviceError(.unavailable, "no pcscd")).exitCode == 69)
    }

    /// A root folder holding only `proc/modules` with `text`.
    static func root(modules text: String?) throws -> String {
        let dir = NSTemporaryDirectory() + "nfcbench-doctor-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: dir + "/proc", withIntermediateDirectories: true)
        if let text { try text.write(toFile: dir + "/proc/modules", atomically: true, encoding: .utf8) }
        return dir
    }

    @Test(
        "The doctor's module check reads proc/modules below its root: none loaded is fine, a kernel without modules says so"
    )
    func doctorModules() throws {
        let none = try Self.root(modules: "ext4 1 0 - Live 0x0\n")
        defer { try? FileManager.default.removeItem(atPath: none) }
        let d = BenchDoctor(root: none, uid: 1000, groups: [], environment: [:])
        #expect(d.modules() == [DoctorFinding(check: "modules", ok: true, message: "kernel pn533 modules not loaded")])

        let bare = try Self.root(modules: nil)
        defer { try? FileManager.default.removeItem(atPath: bare) }
        let findings = BenchDoctor(root: bare, uid: 1000, groups: [], environment: [:]).modules()
        #expect(findings.count == 1)
        #expect(findings.first?.ok == true)
        #expect(findings.first?.message.hasPrefix("this kernel lists no modules") == true)
    }

    @Test("Unasked, the doctor's pcscd answer is a failure that says so")
    func doctorNotAsked() throws {
        let d = BenchDoctor(root: "/nonexistent", uid: 0, groups: [], environment: [:])
        let why = try #require(
            matched { if case .failure(let why) = d.pcscdAnswer { why } else { nil } }, "expected no answer")
        #expect(why.reason == "not asked")
    }

    /// The tag of `sim:tap-uri` (ntag215-uri), detected in virtual time, and its frontend.
    static func simulatedTag() async throws -> (ReaderFrontend, DetectedTarget) {
        let clock = ManualClock()
        let frontend = try BenchDevice("sim:tap-uri").frontend(clock: clock)
        let stream = frontend.events(.iso14443)
        clock.advance(by: .milliseconds(400))
        var events = stream.makeAsyncIterator()
        guard case .detected(let targets)? = try await events.next(), let target = targets.first else {
            frontend.close()
            throw BenchError.failure("no detection")
        }
        return (frontend, target)
    }

    @Test("A write's dry run names the pages it would write, sends none, and leaves the tag as it was")
    func writeDryRun() async throws {
        let (frontend, target) = try await Self.simulatedTag()
        defer { frontend.close() }
        let message = NFCNDEFMessage(records: [
            try #require(NFCNDEFPayload.wellKnownTypeURIPayload(string: "https://example.com/dry"))
        ]).bytes
        let lines = Mutex<[String]>([])
        let (outcome, before, after) = try await OffPool.run(name: "test.write") {
            try frontend.withTag(target.id) { connection -> (TagWriteOutcome, TagFile, TagFile) in
                let before = try TagSnapshot.take(target, connection)
                let outcome = try TagWrite.perform(
                    target, connection, command: "write", operation: .ndef(message, lock: false), dryRun: true,
                    backup: nil, stop: StopRequest(), viaPCSC: false, say: { l in lines.withLock { $0.append(l) } })
                return (outcome, before, try TagSnapshot.take(target, connection))
            }
        }
        #expect(outcome.status == .dryRun)
        #expect(!outcome.sent.isEmpty)
        #expect(outcome.sent.allSatisfy { $0.hasPrefix("page ") })
        #expect(outcome.backup == nil)
        #expect(outcome.tagState == "Nothing was sent: the tag is unchanged")
        #expect(before.pages == after.pages)
        let said = lines.withLock { $0 }
        #expect(said.first?.hasPrefix("tag: UID \(target.uid.hexString())") == true)
        #expect(said.last == "dry run: nothing written")
        #expect(said.contains { $0.hasPrefix("would send ") && $0.hasSuffix("WRITE (A2) commands, in this order:") })
    }

    @Test("A real write without a backup place is refused before any byte is sent")
    func writeNeedsBackup() async throws {
        let (frontend, target) = try await Self.simulatedTag()
        defer { frontend.close() }
        let message = NFCNDEFMessage(records: [
            try #require(NFCNDEFPayload.wellKnownTypeURIPayload(string: "https://example.com/no"))
        ]).bytes
        let (thrown, before, after) = try await OffPool.run(name: "test.write") {
            try frontend.withTag(target.id) { connection -> (BenchError?, TagFile, TagFile) in
                let before = try TagSnapshot.take(target, connection)
                var thrown: BenchError? = nil
                do {
                    _ = try TagWrite.perform(
                        target, connection, command: "write", operation: .ndef(message, lock: false), dryRun: false,
                        backup: nil, stop: StopRequest(), viaPCSC: false, say: { _ in })
                } catch let e as BenchError {
                    thrown = e
                }
                return (thrown, before, try TagSnapshot.take(target, connection))
            }
        }
        #expect(thrown == .failure("no backup place (a dry run takes none); nothing written"))
        #expect(before.pages == after.pages)
    }

    @Test("The dump's snapshot of a simulated NTAG215 holds its shipped file's pages and UID")
    func snapshot() async throws {
        let (frontend, target) = try await Self.simulatedTag()
        defer { frontend.close() }
        let file = try TagFile.load(path: try #require(BenchData.resolve("ntag215-uri", in: "tags")))
        let taken = try await OffPool.run(name: "test.dump") {
            try frontend.withTag(target.id) { try TagSnapshot.take(target, $0) }
        }
        #expect(taken.identifier == file.identifier)
        // Every page as shipped but PWD (second to last), which a READ returns as 00s (NTAG21x
        // datasheet §8.8.1): a dump never holds the password.
        #expect(taken.pages.count == file.pages.count)
        #expect(taken.pages.dropLast(2) == file.pages.dropLast(2))
        #expect(taken.pages[taken.pages.count - 2] == [0, 0, 0, 0])
        #expect(taken.pages.last == file.pages.last)
    }

    @Test("measure's exchange loop takes one sample per READ and flushes every flushEvery samples")
    func measureExchange() async throws {
        let (frontend, target) = try await Self.simulatedTag()
        defer { frontend.close() }
        let samples = BenchMeasure.Samples()
        let flushes = Mutex(0)
        try await OffPool.run(name: "test.measure") {
            try frontend.withTag(target.id) { connection in
                try BenchMeasure.exchange(
                    connection, count: BenchMeasure.flushEvery + 3, read: false, into: samples,
                    interrupted: InterruptFlag(), flush: { flushes.withLock { $0 += 1 } })
            }
        }
        #expect(samples.all.count == BenchMeasure.flushEvery + 3)
        #expect(flushes.withLock { $0 } == 1)
        let stopped = InterruptFlag()
        stopped.set()
        let none = BenchMeasure.Samples()
        try await OffPool.run(name: "test.measure") {
            try frontend.withTag(target.id) { connection in
                try BenchMeasure.exchange(connection, count: 10, read: true, into: none, interrupted: stopped)
            }
        }
        #expect(none.all.isEmpty)
    }

    @Test("new-app's manifest literals escape quotes, backslashes and newlines")
    func literals() {
        #expect(AppScaffold.literal(#"a "b" \c"#) == #""a \"b\" \\c""#)
        #expect(AppScaffold.literal("x\ny") == #""x\ny""#)
    }

    @Test("A signal forwarder holds signals until the child's pid is known, and remembers a forwarded stop")
    func forwarder() {
        let f = SignalForwarder()
        #expect(!f.forwardedStop)
        f.send(SIGTSTP)
        #expect(f.forwardedStop)
    }
}
