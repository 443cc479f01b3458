public import NFCTags
public import ReaderSession

/// Discovery, written once for every device: ids per presentation, classification,
/// re-reporting after `restartPolling()`, loss, stale ids.
///
/// A value type with one method per input and the actions to perform as its answer; it
/// reads no clock and calls nothing (the house style of a state machine: inputs in, actions
/// out). ``ReaderFrontend`` interprets it over an ``/NFCBase/NFCDevice``.
///
/// Rules:
/// - Ids are unique per presentation and never reused: a card that leaves and comes back is
///   a new target. While polling is off the field is forgotten; when polling starts again,
///   every target in the field is new (Core NFC: each session discovers its own tags).
/// - A target is classified once, when it is first sensed (``/NFCTags/TargetClassification``).
/// - A presentation missing from a sensing result has left: `.lost(id)`.
/// - `restartPolling()` re-activates every target in the field and reports it again under a
///   new id; the old ids are stale (``target(_:)`` answers `nil`). A target whose
///   re-activation fails is reported lost.
/// - A transport that saw the tag leave mid-exchange asks for a presence check at once.
public struct DiscoveryMachine: Sendable {
    /// One target in the field.
    public struct Entry: Sendable, Hashable {
        public var id: DetectedTargetID
        public var sensed: SensedTarget
        public var classification: TargetClassification
    }

    /// What the interpreter does next.
    public enum Action: Sendable, Hashable {
        /// Hand this event to every open polling stream.
        case report(ReaderBackendEvent)
        /// Re-activate these targets, then feed ``DiscoveryMachine/reactivated(_:failed:)``.
        case reactivate([SensedTarget])
        /// Check at once which targets are still present (a transport saw one leave).
        case checkPresence
    }

    /// Whether any polling stream is open.
    public private(set) var isPolling = false
    /// The targets in the field, by the device's presentation key.
    public private(set) var field: [UInt64: Entry] = [:]
    private var nextID: UInt64 = 1

    public init() {}

    /// Targets in the field, oldest first.
    public var targets: [Entry] { field.values.sorted { $0.id < $1.id } }

    /// The entry behind `id`, if it is current (not stale, not gone).
    public func target(_ id: DetectedTargetID) -> Entry? { field.values.first { $0.id == id } }

    /// The first polling stream opened: the field is discovered afresh.
    public mutating func pollingStarted() {
        isPolling = true
        field = [:]
    }

    /// The last polling stream closed (field off): targets are forgotten, without `.lost`.
    public mutating func pollingStopped() {
        isPolling = false
        field = [:]
    }

    /// The device sensed `sensed`: the complete set of targets in the field now.
    public mutating func sensed(_ sensed: [SensedTarget]) -> [Action] {
        guard isPolling else { return [] }
        var actions: [Action] = []
        let now = Set(sensed.map(\.presentation))
        for entry in targets where !now.contains(entry.sensed.presentation) {
            field[entry.sensed.presentation] = nil
            actions.append(.report(.lost(entry.id)))
        }
        var found: [DetectedTarget] = []
        for s in sensed where field[s.presentation] == nil {
            let entry = Entry(id: newID(), sensed: s, classification: TargetClassification.classify(s))
            field[s.presentation] = entry
            found.append(entry.detectedTarget)
        }
        if !found.isEmpty { actions.append(.report(.detected(found))) }
        return actions
    }

    /// Core NFC `restartPolling()`: every target in the field is re-activated, then reported
    /// again under a new id.
    public mutating func restartRequested() -> [Action] {
        guard isPolling, !field.isEmpty else { return [] }
        return [.reactivate(targets.map(\.sensed))]
    }

    /// The re-activation asked for by `.reactivate` is done: `failed` presentations left.
    public mutating func reactivated(_ targets: [SensedTarget], failed: Set<UInt64>) -> [Action] {
        guard isPolling else { return [] }
        var actions: [Action] = []
        var again: [DetectedTarget] = []
        for s in targets {
            guard var entry = field[s.presentation] else { continue }
            if failed.contains(s.presentation) {
                field[s.presentation] = nil
                actions.append(.report(.lost(entry.id)))
                continue
            }
            entry.id = newID()
            field[s.presentation] = entry
            again.append(entry.detectedTarget)
        }
        if !again.isEmpty { actions.append(.report(.detected(again))) }
        return actions
    }

    /// An exchange with `id` ended; `tagLost` when its transport saw the tag leave.
    public mutating func exchangeEnded(_ id: DetectedTargetID, tagLost: Bool) -> [Action] {
        tagLost && target(id) != nil ? [.checkPresence] : []
    }

    private mutating func newID() -> DetectedTargetID {
        defer { nextID += 1 }
        return DetectedTargetID(nextID)
    }
}

extension DiscoveryMachine.Entry {
    /// The target as the session sees it.
    public var detectedTarget: DetectedTarget {
        let kind: DetectedTarget.Kind =
            switch classification.family {
            case .type2: .type2
            case .isoDEP: .type4
            case .felica: .felica
            case .iso15693: .iso15693
            default: .other
            }
        let technology: NFCPollingOption =
            switch sensed.technology {
            case .felica: .iso18092
            case .iso15693: .iso15693
            case .iso14443A, .iso14443B: .iso14443
            }
        return DetectedTarget(
            id: id, kind: kind, technology: technology, uid: sensed.uid, atqa: sensed.atqa, sak: sensed.sak,
            ats: sensed.ats, atr: sensed.atr, family: classification.family, pmm: sensed.pmm,
            systemCode: sensed.systemCode, dsfid: sensed.dsfid)
    }
}
