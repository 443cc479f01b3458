public import NFCBase
public import NFCTags
import Synchronization

/// The in-process simulated reader (`--device sim:SCENARIO`): an in-memory field
/// (``/NFCTags/EmulatedField``, a thin device) whose tags come and go on the schedule of a
/// ``Scenario``, served by the NFCTags emulation cores, so a session runs the real NFC
/// Forum reader procedures against them. The reader frontend above it does discovery as for
/// any device.
///
/// Time: each time the reader's field comes on (polling starts) the scenario starts at the
/// clock's `now`; steps fire on the injected clock, so a ``/NFCBase/ManualClock`` gives virtual time.
/// A presentation name (a step's `as`) is one physical tag: its memory persists while it
/// stays in the field (across sessions) and when it is presented again under that name, and
/// its file's faults fire once in the whole run (``/NFCTags/FaultPlan``); another name is
/// another copy of the file. Faults come from the tag file and from the scenario step (that
/// presentation's own), through the fault wrapper every device shares.
public final class SimulatedReader: Sendable {
    /// `"sim:" + scenario.reader`: the reader's name and lock name.
    public let identifier: String
    public let scenario: Scenario
    /// The device the frontend drives.
    public let field: EmulatedField
    private let clock: any ReaderSessionClock
    /// One card per tag file, built (and so checked) once: a name's first presentation.
    private let prototypes: [String: EmulatedTag]
    private let timers = Mutex<(epoch: UInt64, list: [ReaderSessionTimer])>((0, []))

    /// - Parameters:
    ///   - scenario: when tags arrive and leave.
    ///   - tags: every tag file the scenario names, by the name it uses.
    ///   - clock: the session's clock (a ``/NFCBase/ManualClock`` in tests).
    /// - Throws: ``/NFCTags/DataFileError`` `.notFound` when a step names a tag missing from `tags`;
    ///   the tag file's own error (naming the tag) when it cannot be emulated.
    public init(scenario: Scenario, tags: [String: TagFile], clock: any ReaderSessionClock) throws(DataFileError) {
        var prototypes: [String: EmulatedTag] = [:]
        for case .present(let tag, _, _) in scenario.steps.map(\.action) where prototypes[tag] == nil {
            guard let file = tags[tag] else {
                throw DataFileError(.notFound, field: "steps", "no tag file loaded for '\(tag)'")
            }
            do {
                prototypes[tag] = try EmulatedTag(file: file)
            } catch {
                throw DataFileError(error.code, field: "steps", "tag '\(tag)' can't be emulated: \(error.description)")
            }
        }
        self.identifier = "sim:" + scenario.reader
        self.scenario = scenario
        self.prototypes = prototypes
        self.clock = clock
        self.field = EmulatedField(name: identifier)
        // The field keeps its scenario player alive until it is closed (the frontend closes
        // its device when it is closed or released).
        field.onField(on: { self.start() }, off: { self.stop() })
    }

    /// The tags in the field now, by presentation name.
    public var tagsInField: [String] { field.tagsInField }

    /// The Type 2 core of a presentation as it is now (to see what writes did).
    public func type2Core(_ presentation: String) -> NTAG21xCore? { field.type2Core(presentation) }

    /// Takes a presentation out of the field now (as a scenario `remove` step would).
    public func remove(_ presentation: String) { field.remove([presentation]) }

    // MARK: The schedule

    private func start() {
        let now = clock.now
        let epoch: UInt64 = timers.withLock { t in
            for timer in t.list { timer.cancel() }
            t = (t.epoch + 1, [])
            return t.epoch
        }
        schedule(from: now, epoch: epoch)
    }

    private func stop() {
        timers.withLock { t in
            for timer in t.list { timer.cancel() }
            t = (t.epoch + 1, [])
        }
    }

    private func schedule(from start: Duration, epoch: UInt64) {
        // Steps at the same instant fire together, so tags arriving together are sensed together.
        var groups: [(Duration, [Scenario.Action])] = []
        for step in scenario.steps {
            if let last = groups.last, last.0 == step.at {
                groups[groups.count - 1].1.append(step.action)
            } else {
                groups.append((step.at, [step.action]))
            }
        }
        var list: [ReaderSessionTimer] = []
        for (at, actions) in groups {
            list.append(clock.schedule(at: start + at) { [weak self] in self?.apply(actions, epoch: epoch) })
        }
        if let every = scenario.repeatEvery, let last = scenario.steps.last {
            let next = start + last.at + every
            list.append(
                clock.schedule(at: next) { [weak self] in
                    guard let self, self.timers.withLock({ $0.epoch == epoch }) else { return }
                    self.schedule(from: next, epoch: epoch)
                })
        }
        let stale: [ReaderSessionTimer] = timers.withLock { t in
            guard t.epoch == epoch else { return list }
            t.list += list
            return []
        }
        for timer in stale { timer.cancel() }
    }

    private func apply(_ actions: [Scenario.Action], epoch: UInt64) {
        guard timers.withLock({ $0.epoch == epoch }) else { return }
        var removed: [String] = []
        var presented: [(key: String, name: String, tag: EmulatedTag, faults: [TagFault])] = []
        for action in actions {
            switch action {
            case .present(let tag, let name, let faults):
                if let prototype = prototypes[tag] {
                    presented.append((tag + "\u{1F}" + name, name, prototype, faults))
                }
            case .remove(let name):
                removed.append(name)
            }
        }
        if !removed.isEmpty { field.remove(removed) }
        if !presented.isEmpty { field.present(presented) }
    }
}
