import Synchronization

/// One tag in an in-memory field: a tag file's emulation core behind the fault wrapper
/// (``FaultyType2Core`` through ``EmulatedType2Transport``, ``FaultyType4Core`` through
/// ``EmulatedAPDUTransport``), or no core at all for a card this package does not read
/// (a MIFARE Classic card is sensed, never exchanged with).
public struct EmulatedTag: Sendable {
    public enum Card: Sendable {
        case type2(EmulatedType2Transport)
        case type4(EmulatedAPDUTransport)
        /// Sensed only (MIFARE Classic…): answers no command.
        case inert
        /// A FeliCa card.
        case feliCa(EmulatedFeliCaTransport)
        /// An ISO 15693 tag.
        case iso15693(EmulatedISO15693Transport)
    }

    public let activation: ISO14443AActivation
    public let card: Card
    /// The faults this card plays: the tag's own (its file's), then this presentation's.
    public let faults: [TagFault]

    /// The card a tag file describes, with the file's faults (``FaultPlan``: once per load)
    /// plus `faults` for its first presentation. Its UID is the one readers see
    /// (``TagFile/readerActivation``).
    /// - Throws: ``TagFileError`` when the file's contents cannot be emulated.
    public init(file: TagFile, faults: [TagFault] = []) throws(TagFileError) {
        activation = file.readerActivation
        self.faults = file.faults + faults
        switch try file.makeEmulationCore() {
        case .type4(let app):
            card = .type4(
                EmulatedAPDUTransport(card: FaultyType4Core(core: app, faults: file.faults, presentation: faults)))
        case .type2(let image):
            card = .type2(
                EmulatedType2Transport(card: FaultyType2Core(core: image, faults: file.faults, presentation: faults)))
        case .sensedOnly: card = .inert
        case .feliCa(let core):
            card = .feliCa(
                EmulatedFeliCaTransport(card: FaultyFeliCaCore(core: core, faults: file.faults, presentation: faults)))
        case .iso15693(let core):
            card = .iso15693(
                EmulatedISO15693Transport(
                    card: FaultyISO15693Core(core: core, faults: file.faults, presentation: faults)))
        }
    }

    private init(activation: ISO14443AActivation, card: Card, faults: [TagFault]) {
        self.activation = activation
        self.card = card
        self.faults = faults
    }

    /// The same tag entering the field again: its memory as it is now, its own faults that
    /// fired spent and the others armed (``FaultPlan/enterField(adding:)``), a tag that left by
    /// `tag_lost` back, and `presentation` as this presentation's faults. Never fails: the
    /// cores already exist.
    public func presentedAgain(adding presentation: [TagFault] = []) -> EmulatedTag {
        switch card {
        case .type2(let t):
            var c = t.card
            c.enterField(adding: presentation)
            return EmulatedTag(
                activation: activation,
                card: .type2(EmulatedType2Transport(card: c, fastReadPageLimit: t.fastReadPageLimit)),
                faults: c.plan.faults)
        case .type4(let t):
            var c = t.card
            c.enterField(adding: presentation)
            return EmulatedTag(
                activation: activation, card: .type4(EmulatedAPDUTransport(card: c)), faults: c.plan.faults)
        case .inert:
            return EmulatedTag(activation: activation, card: .inert, faults: faults)
        case .feliCa(let t):
            var c = t.card
            c.enterField(adding: presentation)
            return EmulatedTag(
                activation: activation, card: .feliCa(EmulatedFeliCaTransport(card: c)), faults: c.plan.faults)
        case .iso15693(let t):
            var c = t.card
            c.enterField(adding: presentation)
            return EmulatedTag(
                activation: activation, card: .iso15693(EmulatedISO15693Transport(card: c)), faults: c.plan.faults)
        }
    }

    /// A `tag_lost` fault fired: the tag has left the field.
    public var isGone: Bool {
        switch card {
        case .type2(let t): t.isGone
        case .type4(let t): t.isGone
        case .inert: false
        case .feliCa(let t): t.isGone
        case .iso15693(let t): t.isGone
        }
    }
}

/// An in-memory field of emulated tags as an ``/NFCBase/NFCDevice``: the in-process simulator
/// (`sim:`), the conformance harness's reader and tests put tags in and take them out; the
/// frontend above senses them like any reader's.
///
/// Each presentation has a name (the scenario's `as`) and a serial number (its
/// ``/NFCBase/SensedTarget/presentation``). A tag whose `tag_lost` fault fired is no longer sensed
/// (it left the field). Thread-safe; reports every change to the observer.
public final class EmulatedField: NFCDevice {
    public let name: String
    public let traits = NFCDeviceTraits(reportsFieldChanges: true, showsActivation: true)

    private struct Presentation: Sendable {
        var serial: UInt64
        var tag: EmulatedTag
    }

    private struct State {
        var field: [String: Presentation] = [:]
        /// Every tag presented with a key, by key, as it was last: what comes back when the
        /// key is presented again.
        var shelf: [String: EmulatedTag] = [:]
        var nextSerial: UInt64 = 1
        var observer: (@Sendable () -> Void)?
        var onFieldOn: (@Sendable () -> Void)?
        var onFieldOff: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    public init(name: String) { self.name = name }

    /// What to do when a reader's field comes on (polling starts) and goes off.
    public func onField(on: (@Sendable () -> Void)?, off: (@Sendable () -> Void)?) {
        state.withLock {
            $0.onFieldOn = on
            $0.onFieldOff = off
        }
    }

    /// Names of the presentations in the field now, sorted.
    public var tagsInField: [String] {
        state.withLock { s in s.field.filter { !$0.value.tag.isGone }.keys.sorted() }
    }

    /// The Type 2 core of a presentation as it is now (to see what writes did).
    public func type2Core(_ presentation: String) -> NTAG21xCore? {
        state.withLock {
            if case .type2(let t)? = $0.field[presentation]?.tag.card { return t.core }
            return nil
        }
    }

    /// The Type 4 application of a presentation as it is now.
    public func type4Core(_ presentation: String) -> Type4NDEFApplication? {
        state.withLock {
            if case .type4(let t)? = $0.field[presentation]?.tag.card { return t.core }
            return nil
        }
    }

    /// The FeliCa core of a presentation as it is now.
    public func feliCaCore(_ presentation: String) -> FeliCaCore? {
        state.withLock {
            if case .feliCa(let t)? = $0.field[presentation]?.tag.card { return t.core }
            return nil
        }
    }

    /// The ISO 15693 core of a presentation as it is now.
    public func iso15693Core(_ presentation: String) -> ISO15693Core? {
        state.withLock {
            if case .iso15693(let t)? = $0.field[presentation]?.tag.card { return t.core }
            return nil
        }
    }

    /// Puts tags into the field together (one sensing sees them all). A name already in
    /// the field stays as it is.
    public func present(_ tags: [(name: String, tag: EmulatedTag)]) {
        let observer: (@Sendable () -> Void)? = state.withLock { s in
            var changed = false
            for (name, tag) in tags where s.field[name].map({ $0.tag.isGone }) ?? true {
                s.field[name] = Presentation(serial: s.nextSerial, tag: tag)
                s.nextSerial += 1
                changed = true
            }
            return changed ? s.observer : nil
        }
        observer?()
    }

    /// Puts tags into the field together, each the same tag as the last time its `key` was
    /// presented here (``EmulatedTag/presentedAgain(adding:)``: its memory as it left, the
    /// faults of its file that fired spent), or `tag` the first time; `faults` are this
    /// presentation's own. A name already in the field stays as it is. The key names a
    /// physical tag: the simulator and the conformance reader use the tag file and the
    /// presentation name, so the same name is the same tag and another name another copy.
    public func present(_ tags: [(key: String, name: String, tag: EmulatedTag, faults: [TagFault])]) {
        let observer: (@Sendable () -> Void)? = state.withLock { s in
            var changed = false
            for t in tags where s.field[t.name].map({ $0.tag.isGone }) ?? true {
                let tag = (s.shelf[t.key] ?? t.tag).presentedAgain(adding: t.faults)
                s.shelf[t.key] = tag
                s.field[t.name] = Presentation(serial: s.nextSerial, tag: tag)
                s.nextSerial += 1
                changed = true
            }
            return changed ? s.observer : nil
        }
        observer?()
    }

    /// Takes presentations out of the field together.
    public func remove(_ names: [String]) {
        let observer: (@Sendable () -> Void)? = state.withLock { s in
            var changed = false
            for n in names where s.field.removeValue(forKey: n) != nil { changed = true }
            return changed ? s.observer : nil
        }
        observer?()
    }

    // MARK: NFCDevice

    public func sense(_ technologies: Set<NFCTechnology>, timeout: Duration?) throws(NFCDeviceError) -> [SensedTarget] {
        state.withLock { s in
            // Tags that left by a fault are gone from the field for good.
            for (name, p) in s.field where p.tag.isGone { s.field[name] = nil }
            return s.field.values.sorted { $0.serial < $1.serial }.compactMap { p -> SensedTarget? in
                switch p.tag.card {
                case .feliCa(let t):
                    // Polling with the wildcard and Request Code 01, as a reader activates
                    // NFC-F (libnfc's default initiator data `00 FF FF 01 00`).
                    guard technologies.contains(.felica), let r = t.activate(), r.count >= 17 else { return nil }
                    return SensedTarget(
                        presentation: p.serial, technology: .felica, uid: Array(r[1..<9]), pmm: Array(r[9..<17]),
                        systemCode: r.count >= 19 ? Array(r[17..<19]) : nil)
                case .iso15693(let t):
                    guard technologies.contains(.iso15693), let r = t.inventory(), r.count == 10
                    else { return nil }
                    return SensedTarget(
                        presentation: p.serial, technology: .iso15693, uid: Array(r[2..<10].reversed()), dsfid: r[1])
                case .type2, .type4, .inert:
                    guard technologies.contains(.iso14443A) else { return nil }
                    let a = p.tag.activation
                    return SensedTarget(
                        presentation: p.serial, uid: a.uid, atqa: a.atqa, sak: a.sak,
                        ats: a.sak & 0x20 != 0 ? a.ats : nil)
                }
            }
        }
    }

    public func isPresent(_ target: SensedTarget) throws(NFCDeviceError) -> Bool {
        state.withLock { s in s.field.values.contains { $0.serial == target.presentation && !$0.tag.isGone } }
    }

    private func tag(_ target: SensedTarget) -> EmulatedTag? {
        state.withLock { s in s.field.values.first { $0.serial == target.presentation }?.tag }
    }

    public func connect(_ target: SensedTarget, as proto: TagProtocol) throws(TagCommunicationError) -> TagConnection {
        guard let tag = tag(target), !tag.isGone else { throw .tagLost }
        switch (tag.card, proto) {
        case (.type2(let t), .type2): return .type2(t)
        case (.type4(let t), .isoDEP): return .iso7816(t)
        case (.feliCa(let t), .felica): return .felica(t)
        case (.iso15693(let t), .iso15693): return .iso15693(t)
        default: throw .noResponse
        }
    }

    public func reactivate(_ target: SensedTarget) throws(TagCommunicationError) {
        guard let tag = tag(target), !tag.isGone else { throw .tagLost }
        switch tag.card {
        case .type2(let t):
            do { try t.reactivate() } catch let e as TagCommunicationError { throw e } catch { throw .tagLost }
        case .type4(let t): t.deselect()
        case .inert: break
        case .feliCa(let t): _ = t.activate()
        case .iso15693(let t): t.resetToReady()
        }
    }

    public func cancel() {}

    public func observeField(_ onChange: (@Sendable () -> Void)?) { state.withLock { $0.observer = onChange } }

    public func fieldOn() { state.withLock { $0.onFieldOn }?() }

    public func fieldOff() { state.withLock { $0.onFieldOff }?() }

    /// Forgets the observer and the field handlers (they may keep their owners alive).
    public func close() {
        state.withLock { s in
            s.observer = nil
            s.onFieldOn = nil
            s.onFieldOff = nil
        }
    }
}
