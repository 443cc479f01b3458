import Foundation
public import NFCBase
public import NFCFiles
import NFCTags
public import NFCTrace
public import ReaderFrontend
public import ReaderSession
import ReaderSessionLocks

/// A reader for a one-shot bench command (dump, measure, write, format, lock), the same for
/// every device kind: the reader's lock first, then the frontend (which opens the device on
/// its own thread at once, while the trace is made), then the first tag. A command refused because a
/// session holds the reader sends nothing to it.
///
/// The run's trace is kept here, once for every bench command: the header (the command,
/// the reader's identity, what the command was asked), the targets detected, every frame
/// or APDU exchanged through ``withTag(_:_:)`` (the session's `frame` records), the
/// detections and losses a ``watcher()`` sees, and the end of the run.
public final class BenchReader: Sendable {
    public let spec: DeviceFactory.Spec
    public let frontend: ReaderFrontend
    public let trace: TraceWriter
    /// `--redact`: what the command shows of the tag hides its UID and content
    /// (``BenchRedaction``), as its trace does.
    public let redact: Bool
    private let lease: ReaderLease
    /// Ends the trace when a signal's default kills the process (a Ctrl-C while the command
    /// waits for its tag, before it handles signals itself), so the trace still closes.
    private let endOnDeath: BenchSignals.Registration

    private init(
        spec: DeviceFactory.Spec, frontend: ReaderFrontend, lease: ReaderLease, trace: TraceWriter, redact: Bool
    ) {
        self.spec = spec
        self.frontend = frontend
        self.lease = lease
        self.trace = trace
        self.redact = redact
        endOnDeath = BenchSignals.atDeath {
            trace.record(.closed, ["reason": "signal"])
            trace.close()
        }
    }

    /// Resolves `device`, takes its lock, makes its frontend and starts opening the device
    /// (hardware: on the device's thread, `ReaderFrontend/open()`) while it opens the trace of
    /// `command` (with `setup`: what the command was asked).
    public static func open(
        _ device: String, command: String, setup: JSONObject = [:], options: DeviceFactory.Options = .init(),
        trace traceOptions: BenchTraces.Options = .init(), inputs: [NamedFile] = []
    ) throws(BenchError) -> BenchReader {
        let spec = try DeviceFactory.resolve(device)
        // No output may be a file the device reads (a sim: tag file), checked before the lock.
        try BenchOutputs.refuseSameFiles(outputs: traceOptions.outputs, inputs: inputs + BenchDevice.inputFiles(device))
        let lease = try takeReader(spec.identifier)
        do throws(BenchError) {
            let frontend = try DeviceFactory.frontend(spec, options: options)
            // The device opens on its thread (we hold its lock) while the trace is made.
            frontend.open()
            do throws(BenchError) {
                let trace = try BenchTraces.open(
                    command: command, device: spec.identifier, setup: setup, options: traceOptions,
                    touchesHardware: spec.touchesHardware)
                return BenchReader(
                    spec: spec, frontend: frontend, lease: lease, trace: trace, redact: traceOptions.redact)
            } catch {
                frontend.close()
                throw error
            }
        } catch {
            lease.release()
            throw error
        }
    }

    /// Records a detection or a loss (the session's `detected`/`lost` records).
    public func record(_ event: ReaderBackendEvent) {
        switch event {
        case .detected(let targets):
            trace.record(TraceRecord.Detected(targets: targets.map(\.traceTarget)))
        case .lost(let id):
            trace.record(TraceRecord.Lost(target: Int64(id.rawValue)))
        }
    }

    /// Follows the frontend's detections and losses (recording them in the trace).
    public func watcher() -> BackendWatcher {
        BackendWatcher(frontend) { [self] event in record(event) }
    }

    /// The first target the reader senses within `timeout`.
    public func firstTarget(timeout: Duration) async throws -> DetectedTarget {
        do {
            let target = try await frontend.firstTarget(timeout: timeout)
            record(.detected([target]))
            return target
        } catch let e as FrontendError {
            switch e {
            case .noTarget:
                // vpcd's reader holds a card only while a virtual card is connected to its port.
                let vpcd =
                    spec.identifier.hasPrefix("pcsc:Virtual PCD")
                    ? " (vpcd's reader has a card only while one is connected: start 'nfcbench virtual card --tag TAG' first; measure also takes --virtual-card TAG)"
                    : ""
                throw BenchError.unavailable("no tag on \(spec.identifier) within \(timeout.seconds) s\(vpcd)")
            case .device(let d): throw BenchError.unavailable("the reader failed: \(d)")
            }
        }
    }

    /// Runs `body` with a connection to `target` on a thread of its own (the frontend hands it
    /// to the device's thread for hardware), never on Swift's cooperative pool.
    public func withTag<R: Sendable>(
        _ target: DetectedTarget, _ body: @escaping @Sendable (TagConnection) throws -> R
    ) async throws -> R {
        let frontend = self.frontend
        let trace = self.trace
        let id = Int64(target.id.rawValue)
        // What `body` prints goes where the command's output goes (a test's capture too).
        let capture = BenchOutput.capture
        return try await onBenchThread {
            try frontend.withTag(target.id) { connection in
                try BenchOutput.$capture.withValue(capture) {
                    try body(
                        connection.traced { command, response in
                            trace.record(TraceRecord.Frame(target: id, command: command, response: response))
                        })
                }
            }
        }
    }

    /// ``withTag(_:_:)`` for timed work (`measure`): each exchange is noted with the time it
    /// returned (or, through ``TimedTag/transmitRepeatedly(_:count:into:shouldStop:)``, the
    /// time it began), and the notes are written to the trace when `body` calls
    /// ``TimedTag/flush()`` (between timed samples, every few hundred: `measure`), so the
    /// trace's cost stays out of the timings.
    public func withTimedTag<R: Sendable>(
        _ target: DetectedTarget, _ body: @escaping @Sendable (TimedTag) throws -> R
    ) async throws -> R {
        let frontend = self.frontend
        let trace = self.trace
        let id = Int64(target.id.rawValue)
        return try await onBenchThread {
            try frontend.withTag(target.id) { connection in
                let notes = FrameNotes()
                let tag = TimedTag(
                    connection: connection.traced { command, response in
                        notes.add(t: trace.elapsedMicroseconds, command: command, response: response)
                    }, repeating: connection.repeatingAPDUTransport, notes: notes, trace: trace, target: id)
                defer { tag.flush() }
                return try body(tag)
            }
        }
    }

    /// The first tag's connection for `body`: ``firstTarget(timeout:)`` then ``withTag(_:_:)``.
    public func withFirstTag<R: Sendable>(
        timeout: Duration, _ body: @escaping @Sendable (DetectedTarget, TagConnection) throws -> R
    ) async throws -> R {
        let target = try readable(try await firstTarget(timeout: timeout))
        return try await withTag(target) { c in try body(target, c) }
    }

    /// `target`, when it is an NFC Forum Type 2 or Type 4 tag; a clear failure otherwise.
    public func readable(_ target: DetectedTarget) throws(BenchError) -> DetectedTarget {
        guard target.family.tagProtocol != nil else {
            throw .failure(
                "the tag on \(spec.identifier) is \(target.family.rawValue) (UID \(BenchRedaction.hex(target.uid, redact: redact))): not an NFC Forum Type 2 or Type 4 tag"
            )
        }
        return target
    }

    /// Stops polling, closes the device (its thread has returned when this returns),
    /// releases the lock and ends the trace (its path goes to stderr: stdout may be data).
    public func close() {
        endOnDeath.cancel()
        frontend.close()
        lease.release()
        trace.record(.closed)
        trace.close()
        if let path = trace.path { BenchOutput.err("trace: \(path)") }
    }
}

/// A tag under measurement (``BenchReader/withTimedTag(_:_:)``), on its bench thread.
public struct TimedTag {
    /// The tag's connection: every exchange through it is noted for the trace.
    public let connection: TagConnection
    /// The untraced transport, when it times round trips itself (PC/SC).
    fileprivate let repeating: (any RepeatingAPDUTransport)?
    fileprivate let notes: FrameNotes
    fileprivate let trace: TraceWriter
    fileprivate let target: Int64

    /// Whether ``transmitRepeatedly(_:count:into:shouldStop:)`` can be used: the transport
    /// times each round trip itself, right around its library call (`RepeatingAPDUTransport`).
    public var repeatsAPDUs: Bool { repeating != nil }

    /// Writes the exchanges noted so far to the trace (call it outside the timing), with one
    /// `write(2)` for all of them.
    public func flush() {
        let records = notes.take().map { n -> TraceRecord in
            TraceRecord.Frame(target: target, command: n.command, response: n.response).record(at: n.t)
        }
        trace.emit(contentsOf: records)
    }

    /// `RepeatingAPDUTransport.transmitRepeatedly(_:count:into:shouldStop:)` on the untraced
    /// transport; each round trip is then noted for the trace at the time it began, and a
    /// failed one (no response) at the time it failed. Only when ``repeatsAPDUs``.
    public func transmitRepeatedly(
        _ command: [UInt8], count: Int, into exchanges: inout TimedAPDUExchanges, shouldStop: () -> Bool
    ) throws {
        guard let repeating else { throw TagCommunicationError.unsupportedCommand(command) }
        let first = exchanges.count
        func note() {
            for i in first..<exchanges.count {
                notes.add(
                    t: trace.elapsedMicroseconds(at: exchanges.starts[i]), command: command,
                    response: Array(exchanges.response(i)))
            }
        }
        do {
            try repeating.transmitRepeatedly(command, count: count, into: &exchanges, shouldStop: shouldStop)
        } catch {
            note()
            notes.add(t: trace.elapsedMicroseconds, command: command, response: nil)
            throw error
        }
        note()
    }
}

extension TagConnection {
    /// The ISO-DEP transport, when it times round trips itself.
    fileprivate var repeatingAPDUTransport: (any RepeatingAPDUTransport)? {
        if case .iso7816(let t) = self { return t as? any RepeatingAPDUTransport }
        return nil
    }
}

/// Exchanges noted during a timed sample (one thread), written to the trace after it.
// unchecked: one sample's: made, filled and flushed inside one frontend.withTag body, which runs on one thread
private final class FrameNotes: @unchecked Sendable {
    public struct Note {
        public var t: Int64
        public var command: [UInt8]
        public var response: [UInt8]?
    }
    private var notes: [Note] = []
    public func add(t: Int64, command: [UInt8], response: [UInt8]?) {
        notes.append(Note(t: t, command: command, response: response))
    }
    public func take() -> [Note] {
        defer { notes.removeAll(keepingCapacity: true) }
        return notes
    }
}

/// Runs blocking work on a thread of its own.
public func onBenchThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await OffPool.run(name: "nfcbench.bench", body)
}

/// Checks the readers' lock folder (`LockFolder/prepare(_:)`): a folder
/// that is a link, someone else's or writable by others is refused with exit 69, naming it.
@discardableResult
public func requireLockFolder() throws(BenchError) -> String {
    do { return try LockFolder.prepare() } catch {
        throw .unavailable(
            "lock folder \(error) (it is $NFCBENCH_LOCK_DIR, else $XDG_RUNTIME_DIR/nfcbench, else /tmp/nfcbench-<uid>: set NFCBENCH_LOCK_DIR to a folder only you write)"
        )
    }
}

/// Takes the reader's session lock for a one-shot command (dump, write, format, lock), so it
/// never talks to a tag while a session holds the reader (in this process or another).
public func takeReader(_ identifier: String) throws(BenchError) -> ReaderLease {
    switch SessionArbiter.shared.acquire(reader: identifier) {
    case .acquired(let lease): return lease
    case .busy:
        throw .unavailable(
            "\(identifier) is busy: another nfcbench session or command holds it (try again when it ends)")
    case .failed(let why): throw .failure("can't take the reader's lock: \(why)")
    }
}

extension Duration {
    /// Whole and fractional seconds, for messages (`2.5`).
    var seconds: String {
        let (s, a) = components
        let ms = a / 1_000_000_000_000_000
        return ms == 0 ? "\(s)" : String(format: "%.3g", Double(s) + Double(ms) / 1000)
    }
}
