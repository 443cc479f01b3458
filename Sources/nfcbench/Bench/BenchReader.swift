import Foundation
import NFCTags
import ReaderFrontend
import ReaderSession

/// A reader for a one-shot bench command (dump, measure, write, format, lock), the same for
/// every device kind: the reader's lock first, then the frontend (which opens the device on
/// its own thread when polling starts), then the first tag. A command refused because a
/// session holds the reader sends nothing to it.
final class BenchReader: Sendable {
    let spec: DeviceFactory.Spec
    let frontend: ReaderFrontend
    private let lease: ReaderLease

    private init(spec: DeviceFactory.Spec, frontend: ReaderFrontend, lease: ReaderLease) {
        self.spec = spec
        self.frontend = frontend
        self.lease = lease
    }

    /// Resolves `device`, takes its lock, and makes its frontend (nothing opened yet).
    static func open(_ device: String, options: DeviceFactory.Options = .init()) throws(CLIError) -> BenchReader {
        let spec = try DeviceFactory.resolve(device)
        let lease = try takeReader(spec.identifier)
        do {
            return BenchReader(spec: spec, frontend: try DeviceFactory.frontend(spec, options: options), lease: lease)
        } catch {
            lease.release()
            throw error
        }
    }

    /// The first target the reader senses within `timeout`.
    func firstTarget(timeout: Duration) async throws -> DetectedTarget {
        do {
            return try await frontend.firstTarget(timeout: timeout)
        } catch let e as FrontendError {
            switch e {
            case .noTarget: throw CLIError.unavailable("no tag on \(spec.identifier) within \(timeout.seconds) s")
            case .device(let d): throw CLIError.unavailable("the reader failed: \(d)")
            }
        }
    }

    /// Runs `body` with a connection to `target` on a thread of its own (the frontend hands it
    /// to the device's thread for hardware), never on Swift's cooperative pool.
    func withTag<R: Sendable>(
        _ target: DetectedTarget, _ body: @escaping @Sendable (TagConnection) throws -> R
    ) async throws -> R {
        let frontend = self.frontend
        return try await onBenchThread { try frontend.withTag(target.id, body) }
    }

    /// The first tag's connection for `body`: ``firstTarget(timeout:)`` then ``withTag(_:_:)``.
    func withFirstTag<R: Sendable>(
        timeout: Duration, _ body: @escaping @Sendable (DetectedTarget, TagConnection) throws -> R
    ) async throws -> R {
        let target = try await firstTarget(timeout: timeout)
        guard target.family.tagProtocol != nil else {
            throw CLIError.failure(
                "the tag on \(spec.identifier) is \(target.family.rawValue) (UID \(target.uid.hexString())): not an NFC Forum Type 2 or Type 4 tag"
            )
        }
        return try await withTag(target) { c in try body(target, c) }
    }

    /// Stops polling, closes the device (its thread has returned when this returns) and
    /// releases the lock.
    func close() {
        frontend.close()
        lease.release()
    }
}

/// Runs blocking work on a thread of its own.
func onBenchThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { k in
        Thread { k.resume(with: Result { try body() }) }.start()
    }
}

/// Takes the reader's session lock for a one-shot command (dump, write, format, lock), so it
/// never talks to a tag while a session holds the reader (in this process or another).
func takeReader(_ identifier: String) throws(CLIError) -> ReaderLease {
    switch SessionArbiter.shared.acquire(reader: identifier) {
    case .acquired(let lease): return lease
    case .busy: throw .unavailable("\(identifier) is busy: a reader session holds it (try again when it ends)")
    case .failed(let why): throw .failure("can't take the reader's lock: \(why)")
    }
}
