public import NFCTags
public import ReaderSession
import Synchronization

/// The harness's in-memory reader: a ``ReaderBackend`` whose field the harness fills and
/// empties at virtual instants, serving each tag through the NFCTags emulation cores
/// (``NTAG21xCore`` behind ``EmulatedType2Transport``, ``Type4NDEFApplication`` behind
/// ``EmulatedAPDUTransport``), so sessions run the real NFC Forum reader procedures.
///
/// Why not VirtualHardware's `SimulatedReader`: a conformance scenario's tags are in the
/// field at absolute times across sessions (a tag left on the reader is still there for
/// the next session), and the harness must know when a polling event has been taken by
/// the session before it moves time on. This reader's streams hand events over one at a
/// time and say when one is still on its way (``isIdle``).
public final class ConformanceReader: ReaderBackend, Sendable {
    public let identifier: String

    private enum Transport: Sendable {
        case type2(EmulatedType2Transport)
        case type4(EmulatedAPDUTransport)
    }

    private struct Presentation: Sendable {
        var target: DetectedTarget
        var transport: Transport
    }

    private struct Stream {
        var buffer: [ReaderBackendEvent] = []
        var waiter: CheckedContinuation<ReaderBackendEvent?, Never>?
        /// An event was handed to the consumer, which has not asked for the next one yet.
        var handed = false
        /// The session that started polling (``ConformanceReader/pollingOwner``).
        var owner: UInt64?
    }

    private struct State {
        var nextTarget: UInt64 = 1
        var nextStream: UInt64 = 1
        var field: [String: Presentation] = [:]
        var streams: [UInt64: Stream] = [:]
        var events: UInt64 = 0
    }

    private let state = Mutex(State())

    private let pollingOwner: @Sendable () -> UInt64?

    /// - Parameters:
    ///   - identifier: the reader's name (sessions lock it): `"sim:conformance"` by default.
    ///   - pollingOwner: names the session whose `begin()` is starting to poll (polling
    ///     starts inside `begin()`, just after its `begin` trace record), so a stream can be
    ///     forgotten once its session is over: a cancelled consumer never asks again.
    public init(identifier: String = "sim:conformance", pollingOwner: @escaping @Sendable () -> UInt64? = { nil }) {
        self.identifier = identifier
        self.pollingOwner = pollingOwner
    }

    /// Presentation names in the field now, sorted.
    public var tagsInField: [String] { state.withLock { $0.field.keys.sorted() } }

    /// Events produced so far (detections and losses, to every open stream).
    public var eventCount: UInt64 { state.withLock { $0.events } }

    /// True when no polling event is waiting for, or being taken by, a session that is
    /// still running (sessions in `ended` no longer take events).
    public func isIdle(ended: Set<UInt64> = []) -> Bool {
        state.withLock { s in
            s.streams.values.allSatisfy { st in
                (!st.handed && st.buffer.isEmpty) || st.owner.map { ended.contains($0) } == true
            }
        }
    }

    /// Puts a tag into the field as presentation `name` (reported with any others presented
    /// in the same call). Throws the tag file's error when no emulation core can be made;
    /// a name already in the field is left as it is.
    public func present(_ tags: [(name: String, file: TagFile, faults: [TagFault])]) throws(TagFileError) {
        var made: [(String, Transport, DetectedTarget.Kind, ISO14443AActivation)] = []
        for t in tags {
            let a = t.file.activation
            let faults = t.file.faults + t.faults
            switch try t.file.makeEmulationCore() {
            case .type4(let app):
                made.append((t.name, .type4(EmulatedAPDUTransport(core: app, faults: faults)), .type4, a))
            case .type2(let image):
                made.append((t.name, .type2(EmulatedType2Transport(core: image, faults: faults)), .type2, a))
            }
        }
        let detected: [DetectedTarget] = state.withLock { s in
            var out: [DetectedTarget] = []
            for (name, transport, kind, a) in made where s.field[name] == nil {
                let target = DetectedTarget(
                    id: DetectedTargetID(s.nextTarget), kind: kind, uid: a.uid, atqa: a.atqa, sak: a.sak,
                    ats: kind == .type4 ? a.ats : nil)
                s.nextTarget += 1
                s.field[name] = Presentation(target: target, transport: transport)
                out.append(target)
            }
            return out
        }
        if !detected.isEmpty { publish(.detected(detected)) }
    }

    /// Takes presentation `name` out of the field (nothing when it is not there).
    public func remove(_ name: String) {
        if let id = state.withLock({ $0.field.removeValue(forKey: name)?.target.id }) { publish(.lost(id)) }
    }

    // MARK: ReaderBackend

    public func events(_ options: NFCPollingOption) -> AsyncThrowingStream<ReaderBackendEvent, any Error> {
        let owner = pollingOwner()
        let id: UInt64 = state.withLock { s in
            let id = s.nextStream
            s.nextStream += 1
            var stream = Stream()
            stream.owner = owner
            let present = s.field.values.map(\.target).sorted { $0.id < $1.id }
            if !present.isEmpty { stream.buffer.append(.detected(present)) }
            s.streams[id] = stream
            return id
        }
        return AsyncThrowingStream(unfolding: { [weak self] in await self?.next(id) })
    }

    public func restartPolling() {
        let targets: [DetectedTarget] = state.withLock { s in
            var out: [DetectedTarget] = []
            for name in s.field.keys.sorted() {
                guard var p = s.field[name] else { continue }
                let t = p.target
                p.target = DetectedTarget(
                    id: DetectedTargetID(s.nextTarget), kind: t.kind, uid: t.uid, atqa: t.atqa, sak: t.sak, ats: t.ats)
                s.nextTarget += 1
                if case .type4(let a) = p.transport { a.deselect() }
                s.field[name] = p
                out.append(p.target)
            }
            return out
        }
        if !targets.isEmpty { publish(.detected(targets)) }
    }

    public func withTag<R>(_ id: DetectedTargetID, _ body: (TagConnection) throws -> R) throws -> R {
        guard let (name, p) = state.withLock({ s in s.field.first { $0.value.target.id == id } }) else {
            throw TagCommunicationError.tagLost
        }
        // A tag_lost fault takes the tag out of the field mid-exchange. The procedures may
        // wrap the carrier's error in their own, so watch the carrier itself.
        let watch = TagLossWatch()
        defer {
            if watch.tagLost {
                let gone = state.withLock { s in
                    s.field[name]?.target.id == id ? s.field.removeValue(forKey: name) != nil : false
                }
                if gone { publish(.lost(id)) }
            }
        }
        switch p.transport {
        case .type2(let t): return try body(.type2(watch.type2(t)))
        case .type4(let t): return try body(.iso7816(watch.apdu(t)))
        }
    }

    // MARK: Implementation

    private func publish(_ event: ReaderBackendEvent) {
        let waiters: [CheckedContinuation<ReaderBackendEvent?, Never>] = state.withLock { s in
            s.events += 1
            var out: [CheckedContinuation<ReaderBackendEvent?, Never>] = []
            for id in s.streams.keys {
                if let w = s.streams[id]?.waiter {
                    s.streams[id]?.waiter = nil
                    s.streams[id]?.handed = true
                    out.append(w)
                } else {
                    s.streams[id]?.buffer.append(event)
                }
            }
            return out
        }
        for w in waiters { w.resume(returning: event) }
    }

    private func next(_ id: UInt64) async -> ReaderBackendEvent? {
        if Task.isCancelled {
            close(id)
            return nil
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (k: CheckedContinuation<ReaderBackendEvent?, Never>) in
                let now: ReaderBackendEvent?? = state.withLock { s in
                    guard var st = s.streams[id] else { return .some(nil) }
                    st.handed = false
                    if !st.buffer.isEmpty {
                        let e = st.buffer.removeFirst()
                        st.handed = true
                        s.streams[id] = st
                        return .some(e)
                    }
                    st.waiter = k
                    s.streams[id] = st
                    return .none
                }
                if let now { k.resume(returning: now) }
            }
        } onCancel: {
            close(id)
        }
    }

    private func close(_ id: UInt64) {
        let w = state.withLock { $0.streams.removeValue(forKey: id)?.waiter }
        w?.resume(returning: nil)
    }
}
