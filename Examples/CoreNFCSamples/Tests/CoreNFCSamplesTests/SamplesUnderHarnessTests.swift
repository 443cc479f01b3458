import CoreNFCSamples
import Foundation
import ReaderSession
import ReaderSessionConformance
import Testing

// No `import UIKit` here: Swift Testing would look for its UIKit cross-import overlay, which
// only Apple platforms have. The screens' buttons are reached through CoreNFCSamples.

/// The user in front of the app's screens: Scan taps a screen's button on the main thread,
/// as a finger would. Which screen: a tag-session Scan reads with the tag reader; a
/// read-write one uses `readWrite` (the scan or the writer screen); a plain one the
/// messages screen.
private final class Screens: ConformanceApp, @unchecked Sendable {
    enum ReadWrite { case scan, writer }
    let env: ConformanceEnvironment
    let readWrite: ReadWrite
    @MainActor var messages: MessagesViewController?
    @MainActor var scan: ScanViewController?
    @MainActor var writer: WriterViewController?
    @MainActor var tagReader: TagReaderViewController?

    init(_ env: ConformanceEnvironment, readWrite: ReadWrite) {
        self.env = env
        self.readWrite = readWrite
    }

    func scanTapped(_ request: ScanRequest) {
        env.async(on: .main) { MainActor.assumeIsolated { self.tap(request) } }
    }

    @MainActor private func tap(_ request: ScanRequest) {
        if request.session == .tag {
            let vc = tagReader ?? TagReaderViewController()
            tagReader = vc
            vc.loadViewIfNeeded()
            vc.readButton.sendActions(for: .touchUpInside)
        } else if request.readWrite, readWrite == .writer {
            let vc = writer ?? WriterViewController()
            writer = vc
            vc.loadViewIfNeeded()
            vc.writeButton.sendActions(for: .touchUpInside)
        } else if request.readWrite {
            let vc = scan ?? ScanViewController()
            scan = vc
            vc.loadViewIfNeeded()
            vc.scanButton.sendActions(for: .touchUpInside)
        } else {
            let vc = messages ?? MessagesViewController()
            messages = vc
            vc.loadViewIfNeeded()
            vc.scanButton.sendActions(for: .touchUpInside)
        }
    }

    func didEnterBackground() {}
    func willEnterForeground() {}
}

private func scenario(_ json: String) throws -> ConformanceScenario {
    try ConformanceScenario(json: Data(json.utf8), name: "samples") { try ConformanceBenchData.tagFile($0) }
}

private final class Holder: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Screens?
    func set(_ s: Screens) { lock.withLock { value = s } }
    var screens: Screens? { lock.withLock { value } }
}

/// Runs a scenario with fresh screens; hands back the verdict and the screens.
private func run(_ json: String, readWrite: Screens.ReadWrite = .scan) async throws -> (ConformanceResult, Screens) {
    let holder = Holder()
    let result = await ConformanceHarness(settleTimeout: .seconds(60)).run(try scenario(json)) { env in
        let s = Screens(env, readWrite: readWrite)
        holder.set(s)
        return s
    }
    return (result, try #require(holder.screens))
}

@Suite("Core NFC samples, written as iOS apps, under the conformance harness")
struct SamplesUnderHarnessTests {
    @Test("The read-only reader reads the tag held to the phone: 204, the URI on screen, a pass")
    func messagesReader() async throws {
        let (r, screens) = try await run(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 10000,
             "steps": [{"at_ms": 0, "user": "scan"}, {"at_ms": 1500, "present": "ntag215-uri"}],
             "expect_endings": [204]}
            """)
        #expect(r.verdict == .pass, "\(r.notes) \(r.breaches)")
        #expect(r.sessions.map(\.ending) == [.readerSessionInvalidationErrorFirstNDEFTagRead])
        let label = await MainActor.run { screens.messages?.messageLabel.text }
        #expect(label == "https://example.com/nfcbench")
    }

    @Test(
        "The read-write reader (didDetect tags, no second protocol) connects, reads and ends the session: 200, a pass")
    func scanReader() async throws {
        let (r, screens) = try await run(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 10000,
             "steps": [{"at_ms": 0, "user": "scan", "read_write": true}, {"at_ms": 1500, "present": "ntag215-uri"}],
             "expect_endings": [200],
             "expect_events": [{"event": "tagOperationEnded"}]}
            """)
        #expect(r.verdict == .pass, "\(r.notes) \(r.breaches)")
        #expect(r.sessions.map(\.ending) == [.readerSessionInvalidationErrorUserCanceled])
        let label = await MainActor.run { screens.scan?.messageLabel.text }
        #expect(label == "https://example.com/nfcbench")
    }

    @Test(
        "The writer writes its message to an empty tag (200); a read-only session then reads it back from the tag: 204")
    func writerThenReadBack() async throws {
        let (r, screens) = try await run(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 20000,
             "steps": [{"at_ms": 0, "user": "scan", "read_write": true}, {"at_ms": 1000, "present": "ntag216-empty"},
                       {"at_ms": 8000, "user": "scan"}],
             "expect_endings": [200, 204],
             "expect_events": [{"event": "frame", "command": "A2"}]}
            """, readWrite: .writer)
        #expect(r.verdict == .pass, "\(r.notes) \(r.breaches)")
        #expect(
            r.sessions.map(\.ending) == [
                .readerSessionInvalidationErrorUserCanceled, .readerSessionInvalidationErrorFirstNDEFTagRead,
            ])
        let (wrote, readBack, records) = await MainActor.run {
            (
                screens.writer?.wrote, screens.messages?.messageLabel.text,
                screens.messages?.detectedMessages.first?.records.count
            )
        }
        #expect(wrote == true)
        #expect(readBack == "https://example.com/products/42")
        #expect(records == 2)
    }

    @Test("The tag reader selects and reads an ISO 7816 tag's capability container: 200, a pass")
    func tagReaderISO7816() async throws {
        let (r, screens) = try await run(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 10000,
             "select_identifiers": ["D2760000850101"],
             "steps": [{"at_ms": 0, "user": "scan", "session": "tag"}, {"at_ms": 1000, "present": "t4t-uri"}],
             "expect_endings": [200]}
            """)
        #expect(r.verdict == .pass, "\(r.notes) \(r.breaches)")
        let result = await MainActor.run { screens.tagReader?.result }
        #expect(result?.hasPrefix("ISO 7816 D2760000850101: CC 000F20") == true, "\(result ?? "nil")")
    }

    @Test("The tag reader reads a MIFARE Ultralight's first pages: 200, the UID and pages 0-3 on screen")
    func tagReaderMiFare() async throws {
        let (r, screens) = try await run(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 10000,
             "steps": [{"at_ms": 0, "user": "scan", "session": "tag"}, {"at_ms": 1000, "present": "ntag213-text"}],
             "expect_endings": [200]}
            """)
        #expect(r.verdict == .pass, "\(r.notes) \(r.breaches)")
        let result = await MainActor.run { screens.tagReader?.result }
        #expect(result == "MIFARE 041C7E228A5180: 041C7EEE228A518079480000E1101200")
    }
}
