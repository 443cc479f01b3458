import Foundation
public import NFCTags
public import ReaderSession
import Synchronization

/// A libnfc device as a ReaderSession reader (``ReaderBackend``), e.g. a PN532 on a UART
/// (`pn532_uart:/dev/ttyUSB0`) or the virtual PN532 on a pty.
///
/// Polling runs on its own thread: `nfc_initiator_poll_target` (PN53x InAutoPoll) for
/// ISO 14443A, plus ISO 14443B and FeliCa 212/424 when the options ask for ISO 18092 and
/// the device offers them; ending the stream calls `nfc_abort_command`. A found target is
/// identified: SAK bit `20` → ISO-DEP (Type 4); SAK `00` → Type 2, then GET_VERSION (`60`)
/// with the re-activation (`nfc_initiator_select_passive_target` by UID) a NAKed or silent
/// probe needs; anything else → `.other`. A tag that stays in the field is reported once;
/// it is reported again (under a new id) only after it left, or after ``restartPolling()``.
/// While a target is in the field, `nfc_initiator_target_is_present` runs every
/// ``presenceInterval``; a failed check reports `.lost`. When the device itself fails
/// (`NFC_EIO`: the pty or USB serial port closed, the reader unplugged) the stream finishes
/// with ``TagCommunicationError/readerFailure(_:)`` naming the connstring.
public final class LibNFCReaderBackend: ReaderBackend, Sendable {
    /// The connstring, e.g. `pn532_uart:/tmp/pn532`.
    public let identifier: String
    /// The open device (`nfc_open`).
    public let device: LibNFCDevice
    /// How often presence is checked while a target is in the field.
    public let presenceInterval: Duration

    private struct Current: Sendable {
        var target: DetectedTarget
        var libnfcTarget: LibNFCTarget
        var version: TagVersion?
    }
    private struct State: Sendable {
        var current: Current?
        var continuation: AsyncThrowingStream<ReaderBackendEvent, any Error>.Continuation?
        var generation = 0
        var cancelled = true
        var restartRequested = false
        var nextID: UInt64 = 1
        var threadRunning = false
    }
    private let state = Mutex(State())
    /// Held for a whole ``withTag(_:_:)`` and for each presence check, so they never interleave.
    private let ioLock = NSLock()

    /// Opens `connstring` (`nfc_open`) and makes the device an initiator. Throws
    /// ``LibNFCError`` (`NFC_ENOTSUCHDEV` when libnfc cannot open it).
    public init(connstring: String, context: LibNFCContext? = nil, presenceInterval: Duration = .milliseconds(100))
        throws
    {
        let ctx = try context ?? LibNFCContext()
        device = try ctx.open(connstring)
        identifier = connstring
        self.presenceInterval = presenceInterval
        try device.initiatorInit()
    }

    deinit {
        state.withLock { $0.cancelled = true }
        device.abort()
    }

    /// The GET_VERSION answer of target `id`, when it is the current Type 2 target and answered.
    public func tagVersion(of id: DetectedTargetID) -> TagVersion? {
        state.withLock { s in s.current?.target.id == id ? s.current?.version : nil }
    }

    // MARK: ReaderBackend

    public func events(_ options: NFCPollingOption) -> AsyncThrowingStream<ReaderBackendEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<ReaderBackendEvent, any Error>.makeStream()
        let (generation, previous) = state.withLock {
            s -> (Int, AsyncThrowingStream<ReaderBackendEvent, any Error>.Continuation?) in
            let old = s.continuation
            s.generation += 1
            s.continuation = continuation
            s.cancelled = false
            s.current = nil
            return (s.generation, old)
        }
        previous?.finish()
        device.abort()
        let modulations = modulations(for: options)
        continuation.onTermination = { [weak self] _ in self?.stop(generation) }
        let thread = Thread { [self] in self.pollLoop(generation, modulations, continuation) }
        thread.name = "LibNFCReaderBackend \(identifier)"
        thread.start()
        return stream
    }

    public func restartPolling() {
        state.withLock { $0.restartRequested = true }
    }

    public func withTag<R>(_ id: DetectedTargetID, _ body: (TagConnection) throws -> R) throws -> R {
        ioLock.lock()
        defer { ioLock.unlock() }
        guard let current = state.withLock({ s in s.current?.target.id == id ? s.current : nil }) else {
            throw TagCommunicationError.tagLost
        }
        switch current.target.kind {
        case .type2:
            let transport = try LibNFCType2Transport(device: device, target: current.libnfcTarget)
            defer { restoreFraming() }
            do {
                return try body(.type2(transport))
            } catch {
                // A NAK leaves the tag idle (NTAG21x §9.3); wake it so presence checks see it.
                if Self.leftTagIdle(error) { try? transport.reactivate() }
                throw error
            }
        case .type4:
            return try body(.iso7816(try LibNFCAPDUTransport(device: device)))
        case .other:
            throw TagCommunicationError.readerFailure(
                "\(identifier): target \(current.libnfcTarget.modulation) has no NDEF transport here")
        }
    }

    // MARK: polling thread

    private func modulations(for options: NFCPollingOption) -> [LibNFCModulation] {
        var wanted: [LibNFCModulation] = []
        if options.contains(.iso14443) || options.isEmpty { wanted.append(.iso14443a) }
        let offered = (try? device.supportedModulations(initiator: true)) ?? [.iso14443a]
        if options.contains(.iso14443), offered.contains(.iso14443b) { wanted.append(.iso14443b) }
        if options.contains(.iso18092), offered.contains(.felica) { wanted += [.felica212, .felica424] }
        return wanted.isEmpty ? [.iso14443a] : wanted
    }

    private func isLive(_ generation: Int) -> Bool {
        state.withLock { !$0.cancelled && $0.generation == generation }
    }

    private func stop(_ generation: Int) {
        let mine = state.withLock { s -> Bool in
            guard s.generation == generation else { return false }
            s.cancelled = true
            s.current = nil
            s.continuation = nil
            return true
        }
        guard mine else { return }
        // A poll may be just about to start when the flag is set: abort a few times until
        // the thread has seen the flag (each abort ends the blocking call in progress).
        let backend = self
        DispatchQueue.global().async {
            for _ in 0..<20 {
                backend.device.abort()
                if !backend.state.withLock({ $0.threadRunning }) { return }
                usleep(50_000)
            }
        }
    }

    private func pollLoop(
        _ generation: Int, _ modulations: [LibNFCModulation],
        _ continuation: AsyncThrowingStream<ReaderBackendEvent, any Error>.Continuation
    ) {
        state.withLock { $0.threadRunning = true }
        defer { state.withLock { if $0.generation == generation { $0.threadRunning = false } } }
        func fail(_ error: LibNFCError) {
            guard isLive(generation) else { return }
            continuation.finish(
                throwing: TagCommunicationError.readerFailure(
                    "\(identifier): the reader stopped answering (unplugged, or its port closed): \(error)"))
        }
        var ioFailures = 0
        while isLive(generation) {
            // 1. Wait for a target. No target is current while polling, so withTag never
            //    touches the device (whose queue the endless poll occupies).
            ioLock.lock()
            state.withLock { $0.current = nil }
            restoreFraming()
            ioLock.unlock()
            let found: LibNFCTarget?
            do {
                found = try device.poll(modulations, count: nil)
                ioFailures = 0
            } catch let e as LibNFCError {
                // One bad frame is NFC_EIO too: only a second failure in a row means unplugged.
                if e.code == .io || e.code == .noSuchDevice {
                    if ioFailures > 0 {
                        fail(e)
                        return
                    }
                    ioFailures += 1
                    usleep(20_000)
                    continue
                }
                if e.code != .aborted && e.code != .timeout { usleep(50_000) }
                continue
            } catch {
                continue
            }
            guard let found, isLive(generation) else { continue }
            state.withLock { $0.restartRequested = false }
            guard report(found, generation, continuation) else { return }

            // 2. Watch it until it leaves.
            while isLive(generation) {
                usleep(
                    UInt32(
                        clamping: presenceInterval.components.seconds * 1_000_000
                            + presenceInterval.components.attoseconds / 1_000_000_000_000))
                guard isLive(generation) else { return }
                let restart = state.withLock { s -> Bool in
                    defer { s.restartRequested = false }
                    return s.restartRequested
                }
                ioLock.lock()
                let check = Result { try device.isTargetPresent() }
                ioLock.unlock()
                if case .failure(let e as LibNFCError) = check, e.code == .io || e.code == .noSuchDevice {
                    if ioFailures > 0 {
                        fail(e)
                        return
                    }
                    ioFailures += 1
                    continue
                }
                ioFailures = 0
                guard case .success(true) = check else {
                    let lost = state.withLock { s -> DetectedTargetID? in
                        defer { s.current = nil }
                        return s.current?.target.id
                    }
                    if let lost { continuation.yield(.lost(lost)) }
                    break
                }
                if restart {
                    // Core NFC restartPolling(): the tag still in the field is discovered
                    // again, under a new id; the old id is no longer valid.
                    ioLock.lock()
                    state.withLock { $0.current = nil }
                    let again = try? device.selectPassiveTarget(found.modulation, uid: found.uid)
                    ioLock.unlock()
                    guard let again else { continue }
                    guard report(again, generation, continuation) else { return }
                }
            }
        }
    }

    /// Identifies `target`, makes it current and yields `.detected`. `false` when the stream ended.
    private func report(
        _ target: LibNFCTarget, _ generation: Int,
        _ continuation: AsyncThrowingStream<ReaderBackendEvent, any Error>.Continuation
    ) -> Bool {
        var kind: DetectedTarget.Kind
        var version: TagVersion? = nil
        switch target.modulation.type {
        case .iso14443a where target.isISODEP: kind = .type4
        case .iso14443a where target.sak & 0x60 == 0: kind = .type2
        case .iso14443b: kind = .type4
        default: kind = .other
        }
        var libnfcTarget = target
        if kind == .type2 {
            ioLock.lock()
            if let t = try? LibNFCType2Transport(device: device, target: target) {
                var reader = Type2TagReader(transport: t)
                version = try? reader.identify()
                libnfcTarget = t.target
            }
            restoreFraming()
            ioLock.unlock()
        }
        let technology: NFCPollingOption = target.modulation.type == .felica ? .iso18092 : .iso14443
        let atqa: [UInt8]? = target.atqa.count == 2 ? [target.atqa[1], target.atqa[0]] : nil
        let (detected, live) = state.withLock { s -> (DetectedTarget, Bool) in
            let id = DetectedTargetID(s.nextID)
            s.nextID += 1
            let d = DetectedTarget(
                id: id, kind: kind, technology: technology, uid: target.uid,
                atqa: target.modulation.type == .iso14443a ? atqa : nil,
                sak: target.modulation.type == .iso14443a ? target.sak : nil,
                ats: target.ats.isEmpty ? nil : [UInt8(truncatingIfNeeded: target.ats.count + 1)] + target.ats)
            let live = !s.cancelled && s.generation == generation
            if live { s.current = Current(target: d, libnfcTarget: libnfcTarget, version: version) }
            return (d, live)
        }
        guard live else { return false }
        continuation.yield(.detected([detected]))
        return true
    }

    /// A NAK somewhere in `error` (a Type 2 procedure wraps it).
    static func leftTagIdle(_ error: any Error) -> Bool {
        switch error {
        case TagCommunicationError.nak: return true
        case let e as Type2TagError:
            switch e.code {
            case .communication(.nak), .writeInterrupted(_, .nak): return true
            default: return false
            }
        default: return false
        }
    }

    /// Back to the chip's framing and CRC (a Type 2 transport switches them off).
    private func restoreFraming() {
        try? device.setProperty(.easyFraming, true)
        try? device.setProperty(.handleCRC, true)
    }
}
