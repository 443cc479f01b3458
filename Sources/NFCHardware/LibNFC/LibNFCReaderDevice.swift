public import NFCTags
import Synchronization

/// A libnfc device as a thin reader device (``/NFCBase/NFCDevice``) under the reader frontend: a
/// PN532 on a UART (`pn532_uart:/dev/ttyUSB0`), the virtual PN532 on a pty, or a device of
/// any other driver the installed libnfc has (``LibNFCContext/driverNames``).
///
/// | NFCDevice | libnfc |
/// | --- | --- |
/// | open (``init(connstring:context:)``) | `nfc_open`, `nfc_initiator_init`, infinite select off |
/// | ``sense(_:timeout:)`` | `nfc_initiator_poll_target` (PN532 InAutoPoll), finite: about `timeout` long; endless: rounds of ``endlessRound`` |
/// | ``cancel()`` | `nfc_abort_command` |
/// | ``isPresent(_:)`` | `nfc_initiator_target_is_present`; a select by UID where libnfc has no ping |
/// | ``connect(_:as:)`` | ``LibNFCType2Transport`` (raw frames) or ``LibNFCAPDUTransport`` (easy framing) |
/// | ``release(_:)`` | easy framing and CRC back on; a tag a NAK or silence left IDLE is selected again |
/// | ``reactivate(_:)`` | RF field off and on (every card back to IDLE), then a select by UID |
/// | ``fieldOff()`` / ``fieldOn()`` | `NP_ACTIVATE_FIELD` off / `nfc_initiator_init` again |
/// | ``close()`` | `nfc_close` |
///
/// Sensing polls ISO/IEC 14443-A, and ISO/IEC 14443-B and FeliCa (212 and 424 kbit/s) when
/// asked for and the device offers them (`nfc_device_get_supported_modulation`). libnfc
/// keeps one current target, so at most one target is in the field at a time. Each target a
/// poll finds is a new presentation (the device's own counter); a card that left and came
/// back between two presence checks is IDLE, so the check after it fails and the next poll
/// finds a new presentation.
///
/// The device classifies nothing and gives no target ids: the frontend does both.
///
/// Threads: like libnfc, not thread-safe. The frontend calls it from its device thread
/// only; ``cancel()`` alone may come from another thread.
public final class LibNFCReaderDevice: NFCDevice {
    /// The connstring, e.g. `pn532_uart:/tmp/pn532`.
    public let name: String
    /// ATQA and SAK shown; presence checked every 100 ms (one short exchange each).
    public let traits = NFCDeviceTraits(
        reportsFieldChanges: false, showsActivation: true, presenceInterval: .milliseconds(100))
    /// The open libnfc device.
    public let device: LibNFCDevice
    private let offered: Set<LibNFCModulation.ModulationType>

    /// The target libnfc holds as current, and this device's key for its presentation.
    private struct Current {
        var presentation: UInt64
        var target: LibNFCTarget
    }
    // unsafe: used by one thread at a time, the frontend's device thread (the type's note); cancel() does not touch it
    nonisolated(unsafe) private var current: Current?
    // unsafe: used by one thread at a time, the frontend's device thread (the type's note); cancel() does not touch it
    nonisolated(unsafe) private var nextPresentation: UInt64 = 1
    // unsafe: used by one thread at a time, the frontend's device thread (the type's note); cancel() does not touch it
    nonisolated(unsafe) private var lastType2: LibNFCType2Transport?
    // unsafe: used by one thread at a time, the frontend's device thread (the type's note); cancel() does not touch it
    nonisolated(unsafe) private var fieldWasTurnedOff = false
    /// ``cancel()`` calls so far (any thread): an endless sense ends when it moves.
    private let cancels = Atomic<Int>(0)

    /// Opens `connstring` (`nfc_open`) and makes the device an initiator
    /// (`nfc_initiator_init`), with infinite select off so a select of a tag that left
    /// answers at once. The frontend calls this on its device thread.
    /// - Throws: ``/NFCBase/NFCDeviceError`` `.failed` naming the connstring and libnfc's error
    ///   (`NFC_ENOTSUCHDEV` when libnfc cannot open it: wrong path, or another program
    ///   holds the port).
    public init(connstring: String, context: LibNFCContext? = nil) throws(NFCDeviceError) {
        name = connstring
        do {
            let ctx = try context ?? LibNFCContext()
            device = try ctx.open(connstring)
        } catch {
            // nfc_open's own error already names the connstring; say it once.
            let named = (error as? LibNFCError).map { $0.operation == "nfc_open" } ?? false
            throw NFCDeviceError(.failed, named ? "\(error)" : "cannot open \(connstring): \(error)")
        }
        do {
            try device.initiatorInit()
            try device.setProperty(.infiniteSelect, false)
            offered = Set(try device.supportedModulations(initiator: true))
        } catch {
            device.close()
            throw NFCDeviceError(.failed, "\(connstring): cannot make it an initiator: \(error)")
        }
    }

    // MARK: NFCDevice

    /// Polls once, finitely: `nfc_initiator_poll_target` with a poll count that keeps the
    /// poll within about `timeout` (a PN532 polls count × modulations × 150 ms; at least one
    /// round), endless for `nil`. A target already current and still present is answered at
    /// once. `[]` when the poll ends empty or ``cancel()`` ended it.
    /// - Throws: ``/NFCBase/NFCDeviceError`` `.gone` when the device fails twice in a row with
    ///   `NFC_EIO` (its port closed, the reader unplugged; one corrupt frame is retried),
    ///   `.failed` for a technology set libnfc cannot poll (only ISO 15693) or another error.
    public func sense(_ technologies: Set<NFCTechnology>, timeout: Duration?) throws(NFCDeviceError)
        -> [SensedTarget]
    {
        if let c = current {
            let sensed = Self.sensed(c)
            if try isPresent(sensed) { return [sensed] }
        }
        let modulations = modulations(for: technologies)
        guard !modulations.isEmpty else {
            throw NFCDeviceError(
                .failed,
                "\(name): libnfc polls ISO 14443-A/B and FeliCa, not \(technologies.map(\.rawValue).sorted())")
        }
        // Endless is rounds of finite polls until a target comes or cancel() is called: an
        // abort libnfc loses (one that comes before its wait begins) then costs one round, not
        // a wait for ever (a loaded test run hung on one).
        let count = Self.pollCount(timeout ?? Self.endlessRound, modulations: modulations)
        let cancelsAtStart = cancels.load(ordering: .acquiring)
        var found: LibNFCTarget?
        repeat {
            do {
                found = try retryingOnce { try device.poll(modulations, count: count, period: .milliseconds(150)) }
            } catch let e where e.code == .aborted {
                return []
            } catch let e where e.code == .timeout || e.code == .rfTransmission || e.code == .chip {
                found = nil
                if timeout != nil { return [] }
            } catch {
                throw deviceError(error, "polling")
            }
        } while found == nil && timeout == nil && cancels.load(ordering: .acquiring) == cancelsAtStart
        guard let found else { return [] }
        let c = Current(presentation: nextPresentation, target: found)
        nextPresentation += 1
        current = c
        lastType2 = nil
        return [Self.sensed(c)]
    }

    /// `nfc_initiator_target_is_present` on the current target (libnfc pings it: READ 0
    /// for an Ultralight/NTAG, R(NAK) for ISO-DEP, a re-select for MIFARE Classic); for a
    /// target libnfc has no ping for (`NFC_EDEVNOTSUPP`), a select by UID. `false` for any
    /// other presentation. Throws ``/NFCBase/NFCDeviceError`` `.gone` as ``sense(_:timeout:)``.
    public func isPresent(_ target: SensedTarget) throws(NFCDeviceError) -> Bool {
        guard let c = current, c.presentation == target.presentation else { return false }
        let present: Bool
        do {
            present = try retryingOnce { () throws(LibNFCError) -> Bool in
                do {
                    return try device.isTargetPresent()
                } catch let e as LibNFCError where e.code == .deviceNotSupported {
                    return try select(c.target) != nil
                } catch let e as LibNFCError where e.code == .invalidArgument {
                    return false  // libnfc holds no current target (a select found none)
                } catch let e as LibNFCError {
                    throw e
                } catch {
                    return false
                }
            }
        } catch let e where e.code == .io || e.code == .noSuchDevice {
            throw deviceError(e, "checking presence")
        } catch {
            present = false
        }
        if !present {
            current = nil
            lastType2 = nil
        }
        return present
    }

    /// A transport for the current target: ``LibNFCType2Transport`` (raw frames, CRC_A
    /// here; the chip's framing is off until ``release(_:)``) or ``LibNFCAPDUTransport``.
    /// Throws `.tagLost` for another presentation, `.readerFailure` when the chip refuses.
    public func connect(_ target: SensedTarget, as proto: TagProtocol) throws(TagCommunicationError)
        -> TagConnection
    {
        guard let c = current, c.presentation == target.presentation else { throw .tagLost }
        do {
            switch proto {
            case .type2:
                let t = try LibNFCType2Transport(device: device, target: c.target)
                lastType2 = t
                return .type2(t)
            case .isoDEP:
                return .iso7816(try LibNFCAPDUTransport(device: device))
            case .felica:
                return .felica(try LibNFCFeliCaTransport(device: device))
            case .iso15693:
                // libnfc has no ISO 15693 modulation (nfc-types.h); sense never finds one.
                throw TagCommunicationError.unsupportedCommand([])
            }
        } catch let e as TagCommunicationError {
            throw e
        } catch {
            throw .readerFailure("\(name): \(error)")
        }
    }

    /// Puts the chip's easy framing and CRC back (a Type 2 connection turned them off), and
    /// selects again by UID a tag that a NAK or silence left IDLE (NTAG21x datasheet §9.3),
    /// so presence checks and the next exchange find it.
    public func release(_ target: SensedTarget) {
        try? device.setProperty(.easyFraming, true)
        try? device.setProperty(.handleCRC, true)
        defer { lastType2 = nil }
        guard let t = lastType2, t.leftTagIdle, let c = current, c.presentation == target.presentation else { return }
        if let again = try? select(c.target) { current?.target = again }
    }

    /// Core NFC `restartPolling()` for a target in the field: the RF field goes off and on
    /// (every card falls back to IDLE, ISO/IEC 14443-3 §6.2, so a selected Type 2 tag or an
    /// active ISO-DEP card can be selected afresh), then the target is selected by UID
    /// (`nfc_initiator_select_passive_target`). Throws `.tagLost` when it no longer answers.
    public func reactivate(_ target: SensedTarget) throws(TagCommunicationError) {
        guard let c = current, c.presentation == target.presentation else { throw .tagLost }
        lastType2 = nil
        let again: LibNFCTarget?
        do {
            try device.setProperty(.activateField, false)
            try device.setProperty(.activateField, true)
            try device.setProperty(.easyFraming, true)
            try device.setProperty(.handleCRC, true)
            again = try select(c.target)
        } catch let e as LibNFCError {
            current = nil
            throw e.tagCommunicationError
        } catch {
            current = nil
            throw .readerFailure("\(name): \(error)")
        }
        guard let again else {
            current = nil
            throw .tagLost
        }
        current?.target = again
    }

    /// Polling starts: the device becomes an initiator again if ``fieldOff()`` turned the RF
    /// field off (`nfc_initiator_init`). A failure shows at the next sense.
    public func fieldOn() {
        guard fieldWasTurnedOff else { return }
        fieldWasTurnedOff = false
        try? device.initiatorInit()
        try? device.setProperty(.infiniteSelect, false)
    }

    /// Polling ended: the RF field goes off (`NP_ACTIVATE_FIELD`) and the target is forgotten.
    public func fieldOff() {
        current = nil
        lastType2 = nil
        fieldWasTurnedOff = true
        try? device.setProperty(.activateField, false)
    }

    /// `nfc_abort_command`: ends a blocking poll. Any thread. An abort that comes before the
    /// poll starts waiting is lost (libnfc's `pn532_uart` replaces a pipe), which is why a
    /// sense is bounded, and an endless one polls in rounds of ``endlessRound`` and ends at the
    /// round's end once cancelled.
    public func cancel() {
        cancels.add(1, ordering: .releasing)
        device.abort()
    }

    /// How long one round of an endless ``sense(_:timeout:)`` polls: the longest a lost abort
    /// delays the end of a cancelled endless sense.
    public static let endlessRound: Duration = .milliseconds(600)

    /// `nfc_close`.
    public func close() {
        current = nil
        lastType2 = nil
        device.close()
    }

    // MARK: Helpers

    private static func sensed(_ c: Current) -> SensedTarget {
        let t = c.target
        switch t.modulation.type {
        case .iso14443b:
            return SensedTarget(presentation: c.presentation, technology: .iso14443B, uid: t.uid)
        case .felica:
            return SensedTarget(
                presentation: c.presentation, technology: .felica, uid: t.uid, pmm: t.pmm.count == 8 ? t.pmm : nil,
                systemCode: t.systemCode.count == 2 && t.systemCode != [0, 0] ? t.systemCode : nil)
        default:
            // libnfc keeps ATQA as the PN53x reports it (`00 44`); the wire order is LSB first.
            let atqa: [UInt8]? = t.atqa.count == 2 ? [t.atqa[1], t.atqa[0]] : nil
            // libnfc strips the ATS's length byte TL; put it back (ISO/IEC 14443-4 §5.2.1).
            let ats: [UInt8]? =
                t.sak & 0x20 != 0 && !t.ats.isEmpty ? [UInt8(truncatingIfNeeded: t.ats.count + 1)] + t.ats : nil
            return SensedTarget(
                presentation: c.presentation, technology: .iso14443A, uid: t.uid, atqa: atqa, sak: t.sak, ats: ats)
        }
    }

    private func modulations(for technologies: Set<NFCTechnology>) -> [LibNFCModulation] {
        var out: [LibNFCModulation] = []
        if technologies.contains(.iso14443A) { out.append(.iso14443a) }
        if technologies.contains(.iso14443B), offered.contains(.iso14443b) { out.append(.iso14443b) }
        if technologies.contains(.felica), offered.contains(.felica) { out += [.felica212, .felica424] }
        return out
    }

    /// Polls of 150 ms per modulation that fit in `timeout` (at least one; `nil`: endless).
    /// libnfc adds an ISO 14443-4A poll before each ISO 14443-A one while automatic RATS is
    /// on (libnfc/chips/pn53x.c, `pn53x_initiator_poll_target`), so that one counts twice.
    static func pollCount(_ timeout: Duration?, modulations: [LibNFCModulation]) -> Int? {
        guard let timeout else { return nil }
        let types = modulations.count + (modulations.contains(.iso14443a) ? 1 : 0)
        let ms = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        return Int(max(1, min(254, ms / Int64(150 * max(1, types)))))
    }

    /// Select by UID (`nfc_initiator_select_passive_target`); `nil` when nobody answers.
    private func select(_ t: LibNFCTarget) throws(LibNFCError) -> LibNFCTarget? {
        do {
            return try device.selectPassiveTarget(t.modulation, uid: t.modulation.type == .iso14443a ? t.uid : [])
        } catch let e as LibNFCError {
            throw e
        } catch {
            return nil
        }
    }

    /// Runs `call`; a first `NFC_EIO` (a corrupt frame from the chip) is retried once.
    private func retryingOnce<T>(_ call: () throws -> T) throws(LibNFCError) -> T {
        do {
            return try call()
        } catch let e as LibNFCError where e.code == .io {
            do { return try call() } catch let e as LibNFCError { throw e } catch {
                throw LibNFCError(code: .software, operation: "", message: "\(error)")
            }
        } catch let e as LibNFCError {
            throw e
        } catch {
            throw LibNFCError(code: .software, operation: "", message: "\(error)")
        }
    }

    private func deviceError(_ e: LibNFCError, _ doing: String) -> NFCDeviceError {
        if e.code == .io || e.code == .noSuchDevice {
            return NFCDeviceError(
                .gone, "\(name): the reader stopped answering while \(doing) (unplugged, or its port closed): \(e)")
        }
        return NFCDeviceError(.failed, "\(name): \(doing) failed: \(e)")
    }
}
