import Foundation
import NFCBase
import NFCFiles
import NFCTags
import ReaderFrontend
import ReaderSession
import Synchronization
import Testing

/// Collects a frontend's polling events on a task of its own, so tests can wait for them.
final class FrontendEventLog: Sendable {
    private let state = Mutex<(events: [ReaderBackendEvent], error: (any Error)?, finished: ContinuousClock.Instant?)>(
        ([], nil, nil))
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(_ stream: AsyncThrowingStream<ReaderBackendEvent, any Error>) {
        let t = Task { [self] in
            do {
                for try await e in stream { state.withLock { $0.events.append(e) } }
            } catch {
                state.withLock { $0.error = error }
            }
            state.withLock { $0.finished = .now }
        }
        task.withLock { $0 = t }
    }

    convenience init(_ frontend: ReaderFrontend) { self.init(frontend.events(.iso14443)) }

    var all: [ReaderBackendEvent] { state.withLock { $0.events } }
    var error: (any Error)? { state.withLock { $0.error } }
    var finished: ContinuousClock.Instant? { state.withLock { $0.finished } }
    var detections: [DetectedTarget] {
        all.flatMap { e -> [DetectedTarget] in if case .detected(let d) = e { d } else { [] } }
    }
    var losses: [DetectedTargetID] {
        all.compactMap { e -> DetectedTargetID? in if case .lost(let id) = e { id } else { nil } }
    }
    /// The device error the stream ended with, if it did.
    var deviceError: NFCDeviceError? {
        if case .device(let e)? = error as? FrontendError { return e }
        return nil
    }

    /// Waits (real time: the C libraries and the virtual devices run in real time) until
    /// `condition` holds, checking every 10 ms, at most `limit`.
    func wait(_ limit: Duration = .seconds(5), until condition: () -> Bool) async -> Bool {
        let end = ContinuousClock.now + limit
        while ContinuousClock.now < end {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    func cancel() { task.withLock { $0 }?.cancel() }
}

/// Runs blocking work (a frontend's `withTag`, a C call that waits) on a thread of its own,
/// never on Swift's cooperative pool.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await OffPool.run(name: "nfcbench.test.blocking", body)
}

/// `withTag` off the pool.
func withTag<R: Sendable>(
    _ frontend: ReaderFrontend, _ id: DetectedTargetID, _ body: @escaping @Sendable (TagConnection) throws -> R
) async throws -> R {
    try await offPool { try frontend.withTag(id, body) }
}

/// `withTag`'s error, off the pool (`nil` when it succeeded).
func withTagError(
    _ frontend: ReaderFrontend, _ id: DetectedTargetID, _ body: @escaping @Sendable (TagConnection) throws -> Void
) async -> (any Error)? {
    do {
        try await offPool { try frontend.withTag(id, body) }
        return nil
    } catch {
        return error
    }
}

/// The repository's `hardware/tags/` (found from this file's path).
enum BenchTags {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("hardware/tags")

    static func load(_ name: String) throws -> TagFile {
        try TagFile.load(path: directory.appendingPathComponent(name.hasSuffix(".json") ? name : name + ".json").path)
    }
}

/// Opens the existential for the generic reader.
func readType4NDEF(_ transport: some APDUTransport) throws -> [UInt8] {
    try Type4TagReader(transport: transport).readNDEF()
}

extension Type4TagReader {
    /// SELECT of the NDEF Tag Application by name (T4T §5.4.2), Le present.
    static var selectApplicationAPDU: [UInt8] { [0x00, 0xA4, 0x04, 0x00, 0x07] + ndefApplicationAID + [0x00] }
}
