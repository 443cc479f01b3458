import Foundation
import NFCBase
import NFCBenchTestSupport
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
        await poll(timeout: limit, every: .milliseconds(10), until: condition)
    }

    func cancel() { task.withLock { $0 }?.cancel() }
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
    static let directory = TestPaths.tags

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

/// A `withTag` body got a connection of another kind than its test expects: thrown, so the
/// test fails (a body that returned instead would let a regression pass).
struct UnexpectedConnection: Error, CustomStringConvertible {
    let description: String
    init(_ connection: TagConnection) { description = "unexpected connection: \(connection)" }
}
