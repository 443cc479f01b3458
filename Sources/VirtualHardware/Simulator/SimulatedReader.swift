public import NFCTags
public import ReaderSession
import Synchronization

/// The in-process simulated reader (`--device sim:SCENARIO`): a ``ReaderBackend`` that
/// presents tags from tag files through the NFCTags emulation cores, on the schedule of a
/// ``Scenario``, so a session runs the real NFC Forum reader procedures against them.
///
/// Time: each call to ``events(_:)`` starts the scenario at the clock's `now` (polling
/// begins); steps fire on the injected clock, so a ``ManualClock`` gives virtual time.
/// Type 2 tags are served by ``NTAG21xCore`` through ``EmulatedType2Transport``; Type 4 by
/// ``Type4NDEFApplication`` through ``EmulatedAPDUTransport``. A tag's memory persists
/// across sessions while it stays in the field, and is reset when it is presented again.
/// Faults come from the scenario step and from the tag file itself; a `tag_lost` fault also
/// takes the tag out of the field (the stream reports `.lost`).
public final class SimulatedReader: ReaderBackend, Sendable {
    public let identifier: String
    public let scenario: Scenario
    private let clock: any ReaderSessionClock
    private let tags: [String: TagFile]
    private let state = Mutex(State())

    private enum Transport: Sendable {
        case type2(EmulatedType2Transport)
        case type4(EmulatedAPDUTransport)
    }

    private struct Presentation: Sendable {
        var name: String
        var target: DetectedTarget
        var transport: Transport
    }

    private struct State {
        var nextID: UInt64 = 1
        var inField: [String: Presentation] = [:]  // by presentation name
        var continuation: AsyncThrowingStream<ReaderBackendEvent, any Error>.Continuation?
        var timers: [ReaderSessionTimer] = []
        var epoch: UInt64 = 0
    }

    /// - Parameters:
    ///   - scenario: when tags arrive and leave.
    ///   - tags: every tag file the scenario names, by the name it uses.
    ///   - clock: the session's clock (a ``ManualClock`` in tests).
    /// Throws ``DataFileError/Code/notFound`` when a scenario step names a tag missing from `tags`.
    public init(scenario: Scenario, tags: [String: TagFile], clock: any ReaderSessionClock) throws(DataFileError) {
        for case .present(let tag, _, _) in scenario.steps.map(\.action) where tags[tag] == nil {
            throw DataFileError(.notFound, field: "steps", "no tag file loaded for '\(tag)'")
        }
        self.identifier = "sim:" + scenario.reader
        self.scenario = scenario
        self.tags = tags
        self.clock = clock
    }

    /// The tags in the field now, by presentation name.
    public var tagsInField: [String] { state.withLock { $0.inField.keys.sorted() } }

    /// The Type 2 core of a presentation as it is now (to see what writes did).
    public func type2Core(_ presentation: String) -> NTAG21xCore? {
        state.withLock {
            if case .type2(let t)? = $0.inField[presentation]?.transport { return t.core }
            return nil
        }
    }

    public func events(_ options: NFCPollingOption) -> AsyncThrowingStream<ReaderBackendEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<ReaderBackendEvent, any Error>.makeStream()
        let start = clock.now
        let epoch: UInt64 = state.withLock { s in
            for t in s.timers { t.cancel() }
            s.timers = []
            s.continuation?.finish()
            s.continuation = continuation
            s.epoch += 1
            return s.epoch
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { s in
                guard s.epoch == epoch else { return }
                for t in s.timers { t.cancel() }
                s.timers = []
                s.continuation = nil
            }
        }
        // Tags already in the field are seen as soon as polling starts.
        let present = state.withLock { s in s.inField.values.map(\.target) }
        if !present.isEmpty { continuation.yield(.detected(present.sorted { $0.id < $1.id })) }
        schedule(from: start, epoch: epoch)
        return stream
    }

    private func schedule(from start: Duration, epoch: UInt64) {
        // Steps at the same instant fire together, so tags arriving together are detected together.
        var groups: [(Duration, [Scenario.Action])] = []
        for step in scenario.steps {
            if let last = groups.last, last.0 == step.at {
                groups[groups.count - 1].1.append(step.action)
            } else {
                groups.append((step.at, [step.action]))
            }
        }
        var timers: [ReaderSessionTimer] = []
        for (at, actions) in groups {
            timers.append(clock.schedule(at: start + at) { [weak self] in self?.apply(actions, epoch: epoch) })
        }
        if let every = scenario.repeatEvery, let last = scenario.steps.last {
            let next = start + last.at + every
            timers.append(
                clock.schedule(at: next) { [weak self] in
                    guard let self, self.state.withLock({ $0.epoch == epoch }) else { return }
                    self.schedule(from: next, epoch: epoch)
                })
        }
        state.withLock { s in if s.epoch == epoch { s.timers += timers } else { for t in timers { t.cancel() } } }
    }

    private func apply(_ actions: [Scenario.Action], epoch: UInt64) {
        var detected: [DetectedTarget] = []
        var lost: [DetectedTargetID] = []
        let continuation = state.withLock { s -> AsyncThrowingStream<ReaderBackendEvent, any Error>.Continuation? in
            guard s.epoch == epoch else { return nil }
            for action in actions {
                switch action {
                case .present(let tag, let name, let faults):
                    guard s.inField[name] == nil, let file = tags[tag],
                        let p = Self.makePresentation(
                            file, name: name, faults: file.faults + faults, id: DetectedTargetID(s.nextID))
                    else { continue }
                    s.nextID += 1
                    s.inField[name] = p
                    detected.append(p.target)
                case .remove(let name):
                    if let p = s.inField.removeValue(forKey: name) { lost.append(p.target.id) }
                }
            }
            return s.continuation
        }
        for id in lost { continuation?.yield(.lost(id)) }
        if !detected.isEmpty { continuation?.yield(.detected(detected)) }
    }

    private static func makePresentation(_ file: TagFile, name: String, faults: [TagFault], id: DetectedTargetID)
        -> Presentation?
    {
        let a = file.activation
        if file.type == .type4 {
            guard let core = try? file.makeType4Core() else { return nil }
            let target = DetectedTarget(id: id, kind: .type4, uid: a.uid, atqa: a.atqa, sak: a.sak, ats: a.ats)
            return Presentation(
                name: name, target: target, transport: .type4(EmulatedAPDUTransport(core: core, faults: faults)))
        }
        guard let core = try? file.makeCore() else { return nil }
        let target = DetectedTarget(id: id, kind: .type2, uid: a.uid, atqa: a.atqa, sak: a.sak)
        return Presentation(
            name: name, target: target, transport: .type2(EmulatedType2Transport(core: core, faults: faults)))
    }

    public func restartPolling() {
        let (targets, continuation) = state.withLock {
            s -> ([DetectedTarget], AsyncThrowingStream<ReaderBackendEvent, any Error>.Continuation?) in
            var out: [DetectedTarget] = []
            for name in s.inField.keys.sorted() {
                s.inField[name]!.target = DetectedTarget(
                    id: DetectedTargetID(s.nextID), kind: s.inField[name]!.target.kind,
                    uid: s.inField[name]!.target.uid,
                    atqa: s.inField[name]!.target.atqa, sak: s.inField[name]!.target.sak,
                    ats: s.inField[name]!.target.ats)
                s.nextID += 1
                if case .type4(let t) = s.inField[name]!.transport { t.deselect() }
                out.append(s.inField[name]!.target)
            }
            return (out, s.continuation)
        }
        if !targets.isEmpty { continuation?.yield(.detected(targets)) }
    }

    public func withTag<R>(_ id: DetectedTargetID, _ body: (TagConnection) throws -> R) throws -> R {
        guard let p = state.withLock({ s in s.inField.values.first { $0.target.id == id } }) else {
            throw TagCommunicationError.tagLost
        }
        // The procedures wrap carrier errors in their own; watch the carrier itself so a tag
        // that left mid-exchange leaves the field for the reader too.
        let watch = TagLossWatch()
        defer {
            if watch.tagLost {
                let c = state.withLock { s in
                    s.inField[p.name]?.target.id == id
                        ? {
                            s.inField[p.name] = nil
                            return s.continuation
                        }() : nil
                }
                c?.yield(.lost(id))
            }
        }
        switch p.transport {
        case .type2(let t): return try body(.type2(watch.type2(t)))
        case .type4(let t): return try body(.iso7816(watch.apdu(t)))
        }
    }

    /// Takes a presentation out of the field now (as a scenario `remove` step would).
    public func remove(_ presentation: String) {
        let (id, c) = state.withLock { s in (s.inField.removeValue(forKey: presentation)?.target.id, s.continuation) }
        if let id { c?.yield(.lost(id)) }
    }
}
