public import NFCTags
import Synchronization

/// One PC/SC reader as a thin reader device (``/NFCBase/NFCDevice``) under the reader frontend.
///
/// | NFCDevice | PC/SC |
/// | --- | --- |
/// | open (``init(reader:shareMode:)``) | `SCardEstablishContext`, the reader looked up (`SCardListReaders`) |
/// | ``sense(_:timeout:)`` | `SCardGetStatusChange` bounded by the timeout; on a new card `SCardConnect`, `SCardStatus` (ATR), `FF CA 00 00 00` (UID) |
/// | ``cancel()`` | `SCardCancel` |
/// | ``isPresent(_:)`` | `SCardGetStatusChange` with timeout 0: a card present under the same event count |
/// | ``connect(_:as:)`` | ``PCSCType2TagTransport`` (part 3 storage-card APDUs) or ``PCSCAPDUTransport`` |
/// | ``release(_:)`` | `SCardReconnect(SCARD_RESET_CARD)` after a Type 2 command a NAK or silence failed |
/// | ``reactivate(_:)`` | `SCardReconnect(SCARD_RESET_CARD)`: the reader re-activates the card |
/// | ``fieldOff()`` | `SCardDisconnect(SCARD_LEAVE_CARD)` |
/// | ``close()`` | `SCardDisconnect`, `SCardReleaseContext` |
///
/// A presentation is one value of pcscd's per-reader event counter (the high 16 bits of
/// `dwEventState`, which grows at each insertion and removal): a card that left and came
/// back between two checks has a new count, so it is a new presentation. The reader polls
/// by its own settings (ISO 14443 A/B, FeliCa where it can); the technologies asked for do
/// not change what it reports. It shows an ATR (PC/SC 2.02 part 3 §3.1.3.2.3), not ATQA and
/// SAK. No GET_VERSION at detection: procedures ask when they need to.
///
/// Failures: pcscd gone (`SCARD_E_NO_SERVICE`, `SCARD_E_SERVICE_STOPPED`,
/// `SCARD_F_COMM_ERROR`, `SCARD_E_INVALID_HANDLE`) is ``/NFCBase/NFCDeviceError`` `.serviceStopped`;
/// the reader gone (`SCARD_E_UNKNOWN_READER`, `SCARD_STATE_UNKNOWN`/`UNAVAILABLE`,
/// `SCARD_E_READER_UNAVAILABLE`) is `.gone`.
///
/// Threads: one context, used from the frontend's device thread only; ``cancel()`` alone
/// comes from another thread (`SCardCancel` is meant for that).
///
/// Cancellation: pcsc-lite's `SCardCancel` ends only a `SCardGetStatusChange` already in
/// progress, and one that comes just before the call starts is lost. So ``cancel()`` also
/// leaves a flag, and ``sense(_:timeout:)`` waits in slices of at most
/// ``statusWaitSlice``, checking the flag before each: a cancel that loses that race still
/// ends the sense within one slice, not at its own timeout.
public final class PCSCReaderDevice: NFCDevice {
    /// `"pcsc:" + reader`, the reader's lock name.
    public let name: String
    /// The PC/SC reader name, e.g. `"Virtual PCD 00 00"` or `"ACS ACR122U 00 00"`.
    public let reader: String
    /// ATR only; presence checked every 250 ms (pcscd itself polls a reader every ≈ 400 ms).
    public let traits = NFCDeviceTraits(
        reportsFieldChanges: false, showsActivation: false, presenceInterval: .milliseconds(250))
    /// `SCardConnect`'s share mode; shared by default, as Core NFC apps coexist.
    public let shareMode: PCSCShareMode
    private let context: PCSCContext

    private struct Card {
        var presentation: UInt64
        var eventCount: UInt16
        var handle: PCSCCard
        var atr: [UInt8]
        var uid: [UInt8]
    }
    // unsafe: used by one thread at a time, the frontend's device thread (the type's note); cancel() does not touch it
    nonisolated(unsafe) private var known: PCSCReaderState?
    // unsafe: used by one thread at a time, the frontend's device thread (the type's note); cancel() does not touch it
    nonisolated(unsafe) private var card: Card?
    /// The event count of a card that would not connect (mute, or gone at once): not sensed
    /// again until the reader's state changes.
    // unsafe: used by one thread at a time, the frontend's device thread (the type's note); cancel() does not touch it
    nonisolated(unsafe) private var refused: UInt16?
    // unsafe: used by one thread at a time, the frontend's device thread (the type's note); cancel() does not touch it
    nonisolated(unsafe) private var nextPresentation: UInt64 = 1
    /// Set by ``cancel()``; taken by the status wait of ``sense(_:timeout:)``, cleared when a
    /// sense returns. The one state both threads touch.
    private let cancelPending = Mutex(false)
    /// The longest one `SCardGetStatusChange` of ``sense(_:timeout:)`` blocks: what a cancel
    /// that came before the call started costs at most.
    public static let statusWaitSlice: Duration = .milliseconds(250)

    /// Connects to pcscd (`SCardEstablishContext`) and checks that it has `reader`.
    /// - Throws: ``/NFCBase/NFCDeviceError`` `.serviceStopped` when pcscd does not answer, `.gone`
    ///   when it has no reader of that name (the reason lists the readers it has).
    public init(reader: String, shareMode: PCSCShareMode = .shared) throws(NFCDeviceError) {
        self.reader = reader
        self.name = "pcsc:" + reader
        self.shareMode = shareMode
        let name = "pcsc:" + reader
        do {
            context = try PCSCContext()
        } catch {
            throw Self.deviceError(error, name)
        }
        let readers: [String]
        do {
            readers = try context.readers()
        } catch {
            context.release()
            throw Self.deviceError(error, name)
        }
        guard readers.contains(reader) else {
            context.release()
            throw NFCDeviceError(
                .gone,
                "pcscd has no reader \"\(reader)\"; it has: "
                    + (readers.isEmpty ? "none" : readers.map { "pcsc:\($0)" }.joined(separator: ", ")))
        }
    }

    // MARK: NFCDevice

    /// The card in the reader, if any. When the reader is empty (or holds a card that would
    /// not connect), waits for pcscd to report a change, at most `timeout` (`nil`: no limit),
    /// ended early by ``cancel()``. A new card is connected (shared) and read: its ATR
    /// (`SCardStatus`) and its UID (`FF CA 00 00 00`; empty when the reader refuses it).
    /// - Throws: ``/NFCBase/NFCDeviceError`` (see the type's note).
    public func sense(_ technologies: Set<NFCTechnology>, timeout: Duration?) throws(NFCDeviceError)
        -> [SensedTarget]
    {
        // A cancel that comes while this sense returns was for this one: the next starts afresh.
        defer { cancelPending.withLock { $0 = false } }
        var state: PCSCReaderState
        if let known { state = known } else { state = try status() }
        if !isSensable(state) {
            guard let changed = try waitForChange(from: state, timeout: timeout) else { return [] }
            state = changed
        }
        try accept(state)
        guard state.hasCard, refused != state.eventCount else {
            drop()
            return []
        }
        if let c = card, c.eventCount == state.eventCount { return [sensed(c)] }
        drop()
        let handle: PCSCCard
        do {
            handle = try context.connect(reader: reader, shareMode: shareMode)
        } catch {
            if Self.isServiceOrReader(error) { throw Self.deviceError(error, name) }
            refused = state.eventCount  // mute, or gone already: wait for the next change
            return []
        }
        let atr = (try? handle.status().atr) ?? state.atr
        let uid = (try? handle.uid()) ?? []
        let c = Card(presentation: nextPresentation, eventCount: state.eventCount, handle: handle, atr: atr, uid: uid)
        nextPresentation += 1
        card = c
        return [sensed(c)]
    }

    /// A status check that does not wait (`SCardGetStatusChange`, timeout 0): the card is
    /// present and pcscd's event count has not moved since it was sensed.
    public func isPresent(_ target: SensedTarget) throws(NFCDeviceError) -> Bool {
        guard let c = card, c.presentation == target.presentation else { return false }
        let state = try status()
        try accept(state)
        let present = state.hasCard && state.eventCount == c.eventCount
        if !present { drop() }
        return present
    }

    /// ``PCSCType2TagTransport`` or ``PCSCAPDUTransport`` on the card's connection;
    /// `.tagLost` for another presentation.
    public func connect(_ target: SensedTarget, as proto: TagProtocol) throws(TagCommunicationError)
        -> TagConnection
    {
        guard let c = card, c.presentation == target.presentation else { throw .tagLost }
        switch proto {
        case .type2: return .type2(PCSCType2TagTransport(card: c.handle))
        case .isoDEP: return .iso7816(PCSCAPDUTransport(card: c.handle))
        case .felica: return .felica(PCSCFeliCaTransport(card: c.handle))
        case .iso15693: return .iso15693(PCSCISO15693Transport(card: c.handle))
        }
    }

    /// A Type 2 tag that a NAK or silence left IDLE is re-activated by the reader
    /// (`SCardReconnect` with `SCARD_RESET_CARD`), so the next exchange finds it.
    public func release(_ target: SensedTarget) {
        guard let c = card, c.presentation == target.presentation, c.handle.tagLeftIdle else { return }
        try? c.handle.reconnect(.reset)
    }

    /// `SCardReconnect(SCARD_RESET_CARD)`: the reader re-activates the card (Core NFC
    /// `restartPolling()`). `.tagLost` when the card is gone.
    public func reactivate(_ target: SensedTarget) throws(TagCommunicationError) {
        guard let c = card, c.presentation == target.presentation else { throw .tagLost }
        do {
            try c.handle.reconnect(.reset)
        } catch {
            let e = error.tagCommunicationError
            if e == .tagLost || e == .noResponse { drop() }
            throw e == .noResponse ? .tagLost : e
        }
    }

    /// Polling ended: the card's connection ends (`SCARD_LEAVE_CARD`), the card is forgotten.
    public func fieldOff() { drop() }

    /// `SCardCancel`: ends a status wait in progress. Any thread. A cancel that comes before
    /// the wait starts (pcsc-lite forgets it) is remembered: the sense under way, or the next
    /// one, returns at its next slice (``statusWaitSlice``).
    public func cancel() {
        cancelPending.withLock { $0 = true }
        try? context.cancel()
    }

    /// The card's connection ends and the context is released (`SCardReleaseContext`).
    public func close() {
        drop()
        context.release()
    }

    // MARK: Helpers

    private func sensed(_ c: Card) -> SensedTarget {
        // A PC/SC reader reports the air interface only in a storage card's ATR (PC/SC part 3
        // supplement, table 3): FeliCa and ISO 15693 there; everything else is left to the
        // ATR rules of TargetClassification, under ISO 14443-A.
        var technology = NFCTechnology.iso14443A
        if case .storageCard(let standard, let cardName)? = (try? ATR(bytes: c.atr))?.contactless {
            if cardName == .felica {
                technology = .felica
            } else if [.iso15693Part1, .iso15693Part2, .iso15693Part3, .iso15693Part4].contains(standard) {
                technology = .iso15693
            }
        }
        // ISO 15693: the reader's `FF CA` gives the UID LSB first (as the air carries it, and as
        // nfcbench's vpcd card and an ACR1552 answer; reader-specific): reversed here, once, to
        // the big-endian order of Core NFC's `identifier`, when it arrived LSB first (`E0` last).
        let uid = technology == .iso15693 && c.uid.count == 8 && c.uid.last == 0xE0 ? Array(c.uid.reversed()) : c.uid
        return SensedTarget(presentation: c.presentation, technology: technology, uid: uid, atr: c.atr)
    }

    /// Waits for the reader's state to differ from `state`, in slices of at most
    /// ``statusWaitSlice`` up to `timeout` (`nil`: no limit); `nil` on timeout or cancel.
    /// The cancel flag is taken before each slice: `SCardCancel` ends a slice in progress,
    /// the flag one that had not started when the cancel came.
    private func waitForChange(from state: PCSCReaderState, timeout: Duration?) throws(NFCDeviceError)
        -> PCSCReaderState?
    {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now + $0 }
        while true {
            if cancelPending.withLock({ p in
                defer { p = false }
                return p
            }) {
                return nil
            }
            var slice = Self.statusWaitSlice
            if let deadline {
                let left = deadline - clock.now
                if left < slice { slice = max(left, .zero) }
            }
            let outcome: PCSCStatusChange
            do {
                outcome = try context.waitForStatusChange(readers: [state], timeout: slice)
            } catch {
                throw Self.deviceError(error, name)
            }
            switch outcome {
            case .changed(let states):
                return states.first
            case .cancelled:
                return nil
            case .timeout:
                if let deadline, clock.now >= deadline { return nil }
            }
        }
    }

    /// There is something to report without waiting: a card present that is not refused.
    private func isSensable(_ s: PCSCReaderState) -> Bool {
        s.hasCard && refused != s.eventCount
    }

    /// The reader's state now (`SCardGetStatusChange` with `SCARD_STATE_UNAWARE`, timeout 0).
    private func status() throws(NFCDeviceError) -> PCSCReaderState {
        do {
            switch try context.waitForStatusChange(readers: [.unaware(reader)], timeout: .zero) {
            case .changed(let states) where !states.isEmpty: return states[0]
            default: return known ?? .unaware(reader)
            }
        } catch {
            throw Self.deviceError(error, name)
        }
    }

    /// Remembers `s`; a reader pcscd no longer knows is gone.
    private func accept(_ s: PCSCReaderState) throws(NFCDeviceError) {
        known = s
        if s.flags.contains(.unknown) || s.flags.contains(.unavailable) {
            drop()
            throw NFCDeviceError(.gone, "reader \"\(reader)\" is gone (pcscd reports it \(s.flags))")
        }
    }

    private func drop() {
        if let c = card { try? c.handle.disconnect(.leave) }
        card = nil
    }

    private static func isServiceOrReader(_ e: PCSCError) -> Bool {
        switch e {
        case .noService, .serviceStopped, .commError, .invalidHandle, .unknownReader, .readerUnavailable,
            .noReadersAvailable:
            true
        default: false
        }
    }

    static func deviceError(_ e: PCSCError, _ name: String) -> NFCDeviceError {
        switch e {
        case .noService, .serviceStopped, .commError, .invalidHandle:
            NFCDeviceError(.serviceStopped, "\(name): pcscd stopped or is not running (\(e.name))")
        case .unknownReader, .readerUnavailable, .noReadersAvailable:
            NFCDeviceError(.gone, "\(name): the reader is gone (\(e.name))")
        default:
            // Anything else may still be pcscd dying under the call (pcsc-lite reports a reset
            // socket as SCARD_W_SECURITY_VIOLATION): a new context tells, without waiting.
            (try? PCSCContext()) == nil
                ? NFCDeviceError(.serviceStopped, "\(name): pcscd stopped (\(e.name))")
                : NFCDeviceError(.failed, "\(name): PC/SC failure: \(e)")
        }
    }
}
