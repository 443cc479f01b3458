import Dispatch
import ReaderSession
import ReaderSessionConformance
import Synchronization
import Testing

// Core NFC picks the NDEF session's mode from the delegate's shape: implementing the optional
// `readerSession(_:didDetect:)` makes it read-write. These delegates are written as iOS code
// is: a plain `NFCNDEFReaderSessionDelegate` conformance, no second protocol (only `any`
// added, which this package's ExistentialAny setting asks for).

/// Implements `didDetect tags` and never touches a tag: the false pass of the old harness.
private final class IgnoresTags: NSObject, NFCNDEFReaderSessionDelegate, @unchecked Sendable {
    let messages = Mutex(0)
    func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [any NFCNDEFTag]) {}
    func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {
        self.messages.withLock { $0 += 1 }
    }
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {}
}

/// Implements `didDetect tags`: connects, reads, then ends the session with a message.
private final class ReadsTags: NSObject, NFCNDEFReaderSessionDelegate, @unchecked Sendable {
    let read = Mutex<NFCNDEFMessage?>(nil)
    func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [any NFCNDEFTag]) {
        guard let tag = tags.first else { return }
        session.connect(to: tag) { error in
            if error != nil { return session.invalidate(errorMessage: "Could not connect.") }
            tag.readNDEF { message, _ in
                self.read.withLock { $0 = message }
                session.alertMessage = "Read."
                session.invalidate()
            }
        }
    }
    func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {}
}

/// Only the required methods: read-only mode, messages delivered, 204 after the first read.
private final class ReadsMessages: NSObject, NFCNDEFReaderSessionDelegate, @unchecked Sendable {
    let messages = Mutex<[NFCNDEFMessage]>([])
    func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {
        self.messages.withLock { $0 += messages }
    }
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {}
}

/// The app around one of those delegates: Scan begins an NDEF session.
private final class ShapeApp: NSObject, ConformanceApp, @unchecked Sendable {
    let delegate: any NFCNDEFReaderSessionDelegate
    let queue = DispatchQueue(label: "shape-app")
    private(set) var session: NFCNDEFReaderSession?
    init(_ delegate: any NFCNDEFReaderSessionDelegate) { self.delegate = delegate }
    func scanTapped(_ request: ScanRequest) {
        queue.sync {
            let s = NFCNDEFReaderSession(delegate: delegate, queue: queue, invalidateAfterFirstRead: true)
            session = s
            s.begin()
        }
    }
    func didEnterBackground() {}
    func willEnterForeground() {}
}

private let scanAndPresent = """
    {"format": "nfcbench-conformance", "version": 1, "duration_ms": 90000, "thermal": false,
     "steps": [{"at_ms": 0, "user": "scan"}, {"at_ms": 1000, "present": "waypoint-1"}]}
    """

private func run(_ delegate: any NFCNDEFReaderSessionDelegate) async throws -> (ConformanceResult, ShapeApp?) {
    struct Carried: @unchecked Sendable { let delegate: any NFCNDEFReaderSessionDelegate }
    let carried = Carried(delegate: delegate)
    let box = Mutex<ShapeApp?>(nil)
    let r = await ConformanceHarness(settleTimeout: .seconds(60)).run(try scenario(scanAndPresent)) { _ in
        let app = ShapeApp(carried.delegate)
        box.withLock { $0 = app }
        return app
    }
    return (r, box.withLock { $0 })
}

@Suite("The NDEF session's mode comes from the delegate's shape, as in Core NFC")
struct DelegateShapeTests {
    @Test(
        "A delegate that implements didDetect tags (no other protocol) gets a read-write session; ignoring the tag is a breach of reads-a-presented-tag, never a pass"
    )
    func ignoredTagIsNotAPass() async throws {
        let d = IgnoresTags()
        let (r, app) = try await run(d)
        #expect(app?.session?.isReadWrite == true)
        #expect(r.verdict == .breach)
        #expect(r.rulesBreached == [.readsPresentedTag])
        #expect(r.breaches.first?.time == .seconds(60))
        #expect(r.sessions.first?.ending == .readerSessionInvalidationErrorSessionTimeout)
        // Read-write mode: didDetectNDEFs is never called (Core NFC's header says so).
        #expect(d.messages.withLock { $0 } == 0)
    }

    @Test("A delegate that implements didDetect tags and reads the tag passes, with the message read")
    func readTagPasses() async throws {
        let d = ReadsTags()
        let (r, app) = try await run(d)
        #expect(app?.session?.isReadWrite == true)
        #expect(r.verdict == .pass)
        #expect(r.sessions.first?.ending == .readerSessionInvalidationErrorUserCanceled)
        #expect(d.read.withLock { $0 }?.records.isEmpty == false)
    }

    @Test("A delegate with only the required methods gets a read-only session: messages, then 204")
    func readOnly() async throws {
        let d = ReadsMessages()
        let (r, app) = try await run(d)
        #expect(app?.session?.isReadWrite == false)
        #expect(r.verdict == .pass)
        #expect(r.sessions.first?.ending == .readerSessionInvalidationErrorFirstNDEFTagRead)
        #expect(d.messages.withLock { $0.count } == 1)
    }
}
