import Dispatch
import Foundation
import ReaderSession
import ReaderSessionConformance
import Synchronization
import Testing

/// An app built on background tag reading: it keeps every `NSUserActivity` it is handed and,
/// with `rescans`, begins a reader session "to read the tag again" when one arrives. Its Scan
/// button begins an NDEF session that reads one tag.
private final class TrailApp: NSObject, ConformanceApp, NFCNDEFReaderSessionDelegate, @unchecked Sendable {
    let queue = DispatchQueue(label: "trail-app")
    let rescans: Bool
    let activities = Mutex<[(url: URL?, message: NFCNDEFMessage)]>([])
    let calls = Mutex<[String]>([])
    private var session: NFCNDEFReaderSession?

    init(rescans: Bool = false) { self.rescans = rescans }

    private func start() {
        session = NFCNDEFReaderSession(delegate: self, queue: queue, invalidateAfterFirstRead: true)
        session?.begin()
    }

    func scanTapped(_ request: ScanRequest) { queue.sync { start() } }
    func didEnterBackground() { calls.withLock { $0.append("didEnterBackground") } }
    func willEnterForeground() { calls.withLock { $0.append("willEnterForeground") } }
    func didBecomeActive() { calls.withLock { $0.append("didBecomeActive") } }
    func continueUserActivity(_ userActivity: NSUserActivity) {
        calls.withLock { $0.append("continueUserActivity") }
        guard userActivity.activityType == NSUserActivityTypeBrowsingWeb else { return }
        activities.withLock { $0.append((userActivity.webpageURL, userActivity.ndefMessagePayload)) }
        if rescans { queue.sync { start() } }
    }

    func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {}
}

private func builtin(_ name: String) throws -> ConformanceScenario {
    try #require(try ConformanceBenchData.builtinSuite().first { $0.name == name })
}

private func run(_ s: ConformanceScenario, _ app: TrailApp) async -> ConformanceResult {
    await ConformanceHarness(settleTimeout: .seconds(60)).run(s) { _ in app }
}

@Suite("Conformance harness: background tag reading")
struct BackgroundReadingHarnessTests {
    @Test("background-read-universal-link: the app gets each waypoint's NDEF message as NSUserActivity, no session")
    func delivered() async throws {
        let app = TrailApp()
        let r = await run(try builtin("background-read-universal-link"), app)
        #expect(r.verdict == .pass, "\(r.notes) \(r.breaches)")
        #expect(r.sessions.isEmpty && r.sheets == 0)
        let got = app.activities.withLock { $0 }
        #expect(got.map { $0.url?.absoluteString } == ["https://example.com/stop/1", "https://example.com/stop/2"])
        #expect(
            got.first?.message.records.first?.wellKnownTypeURIPayload()?.absoluteString == "https://example.com/stop/1")
        // From the background: willEnterForeground, the activity, didBecomeActive (the UIKit order).
        let calls = app.calls.withLock { $0 }
        #expect(
            Array(calls.prefix(4)) == [
                "didEnterBackground", "willEnterForeground", "continueUserActivity", "didBecomeActive",
            ])
        #expect(r.background.map(\.kind) == [.read, .tapped, .delivered, .ignored, .read, .tapped, .delivered])
    }

    @Test("An app that begins a session when a background read opens it breaches no-begin-without-user-action")
    func rescanCaught() async throws {
        let r = await run(try builtin("background-read-universal-link"), TrailApp(rescans: true))
        #expect(r.verdict == .breach)
        #expect(r.rulesBreached == [.noBeginWithoutUserAction])
        // Its session was in progress when the Text tag came: the session read it, not the phone.
        #expect(r.background.contains { $0.kind == .unavailable && $0.reason == "reader-session-in-progress" })
    }

    @Test("No background read while a reader session is in progress; the next tag, after it ended, is read")
    func waitsForSession() async throws {
        let app = TrailApp()
        let r = await run(try builtin("background-read-waits-for-session"), app)
        #expect(r.verdict == .pass, "\(r.notes) \(r.breaches)")
        #expect(r.sessions.map(\.ending) == [.readerSessionInvalidationErrorFirstNDEFTagRead])
        #expect(r.background.first?.kind == .unavailable && r.background.first?.tag == "waypoint-1")
        #expect(app.activities.withLock { $0.map { $0.url?.absoluteString } } == ["https://example.com/stop/2"])
    }

    @Test(
        "Without background_reading the phone reads nothing in the background; a tap on no notification is inconclusive"
    )
    func offByDefault() async throws {
        let s = try scenario(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 5000,
             "steps": [{"at_ms": 0, "present": "waypoint-1"}, {"at_ms": 1000, "user": "tap-notification"}]}
            """)
        #expect(s.backgroundReading == nil)
        let app = TrailApp()
        let r = await run(s, app)
        #expect(r.verdict == .inconclusive)
        #expect(r.background.isEmpty)
        #expect(app.activities.withLock { $0.isEmpty })
    }

    @Test("The phone's conditions come from the file: the camera in use means no read; another site goes to Safari")
    func conditions() async throws {
        let camera = try scenario(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 5000,
             "background_reading": {"camera_in_use": true}, "associated_domains": ["example.com"],
             "steps": [{"at_ms": 0, "user": "background"}, {"at_ms": 100, "present": "waypoint-1"}]}
            """)
        let r = await run(camera, TrailApp())
        #expect(r.background.map(\.reason) == ["camera-in-use"])
        // No associated domain: https://example.com/... is not the app's; Safari gets the tap.
        let safari = try scenario(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 5000, "background_reading": true,
             "steps": [{"at_ms": 100, "present": "waypoint-1"}, {"at_ms": 200, "user": "tap-notification"}]}
            """)
        let app = TrailApp()
        let s = await run(safari, app)
        #expect(s.background.map(\.target) == [.safari, .safari])
        #expect(app.activities.withLock { $0.isEmpty })
        // Locked: read, and the tap asks to unlock before the app gets the message.
        let locked = try scenario(
            """
            {"format": "nfcbench-conformance", "version": 1, "duration_ms": 5000,
             "background_reading": {"locked": true}, "associated_domains": ["example.com"],
             "steps": [{"at_ms": 100, "present": "waypoint-3"}, {"at_ms": 200, "user": "tap-notification"}]}
            """)
        let unlocked = TrailApp()
        let l = await run(locked, unlocked)
        #expect(l.background.first { $0.kind == .tapped }?.reason == "unlocked-first")
        #expect(unlocked.activities.withLock { $0.map { $0.url?.absoluteString } } == ["https://example.com/stop/3"])
    }

    @Test("background_reading and associated_domains are read and written back; bad values are refused")
    func format() throws {
        let s = try builtin("background-read-universal-link")
        #expect(s.backgroundReading?.associatedDomains == ["example.com"])
        let again = try scenario(s.fileText, name: s.name)
        #expect(again.backgroundReading == s.backgroundReading)
        #expect(again.steps == s.steps)
        var locked = s
        locked.backgroundReading?.conditions.locked = true
        locked.backgroundReading?.uriRecordRule = .firstRecordOnly
        #expect(try scenario(locked.fileText, name: s.name).backgroundReading == locked.backgroundReading)
        #expect(throws: (any Error).self) {
            try scenario(
                #"{"format": "nfcbench-conformance", "version": 1, "duration_ms": 5, "associated_domains": ["example.com"], "steps": []}"#
            )
        }
        #expect(throws: (any Error).self) {
            try scenario(
                #"{"format": "nfcbench-conformance", "version": 1, "duration_ms": 5, "background_reading": {"camera_in_use": 1}, "steps": []}"#
            )
        }
    }
}
