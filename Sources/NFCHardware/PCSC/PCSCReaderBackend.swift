import Foundation
public import NFCTags
public import ReaderSession
import Synchronization

/// One PC/SC reader as a ReaderSession ``ReaderBackend``: `SCardGetStatusChange` for
/// insertion and removal, `SCardConnect` + ATR + `FF CA` to identify the card, and the
/// NFCTags transports (``PCSCType2TagTransport`` for PC/SC part 3 storage cards,
/// ``PCSCAPDUTransport`` for ISO/IEC 14443-4 cards) for the session's procedures.
///
/// Reporting: a card is reported (`.detected`) once when it enters the field and again only
/// after it left (`.lost`) and came back, or after ``restartPolling()`` (with a new id).
/// A card that leaves and returns between two status checks is still seen: pcscd's event
/// counter moves. When pcscd stops or the reader disappears, the event stream finishes with
/// a ``PCSCReaderBackendError``.
///
/// Threads: each ``events(_:)`` stream has its own polling thread and its own PC/SC
/// context for `SCardGetStatusChange` (cancelled with `SCardCancel`); cards are connected on
/// a second context, so ``withTag(_:_:)`` (blocking, called from the session's I/O queue)
/// never waits behind a status wait.
public final class PCSCReaderBackend: ReaderBackend, Sendable {
    /// Tunables.
    public struct Configuration: Sendable {
        /// The `SCardGetStatusChange` timeout slice: how often the poll thread wakes to look
        /// for cancellation and `restartPolling()` requests when nothing changes. Insertion
        /// and removal are reported as soon as pcscd notices them (pcscd itself polls the
        /// reader: ≈ 400 ms for vpcd and most CCID readers). Default 250 ms.
        public var presenceCheckInterval: Duration = .milliseconds(250)
        /// Ask a Type 2 card for GET_VERSION through the reader's transparent exchange to
        /// tell NTAG21x from Ultralight (default true; one or two extra APDUs per detection).
        public var identifyType2Version: Bool = true
        /// `SCardConnect`'s share mode; shared by default, as Core NFC apps coexist.
        public var shareMode: PCSCShareMode = .shared
        public init(presenceCheckInterval: Duration = .milliseconds(250)) {
            self.presenceCheckInterval = presenceCheckInterval
        }
    }

    /// `"pcsc:" + reader`, the session arbiter's lock name.
    public let identifier: String
    /// The PC/SC reader name, e.g. `"Virtual PCD 00 00"` or `"ACS ACR122U 00 00"`.
    public let reader: String
    public let configuration: Configuration

    private struct Current {
        let target: DetectedTarget
        let card: PCSCCard
        let identification: PCSCCardIdentification
    }
    private struct State {
        var current: Current? = nil
        var nextID: UInt64 = 1
        var restartRequested = false
        var streams: [UInt64: PollControl] = [:]
        var nextStream: UInt64 = 0
        var serviceStopped = false
    }
    private let state = Mutex(State())

    /// - Parameters:
    ///   - reader: the PC/SC reader name as ``PCSCContext/readers()`` lists it.
    public init(reader: String, configuration: Configuration = Configuration()) {
        self.reader = reader
        self.identifier = "pcsc:" + reader
        self.configuration = configuration
    }

    /// What identification found for the card behind `id`, while it is the current card.
    public func identification(of id: DetectedTargetID) -> PCSCCardIdentification? {
        state.withLock { s in s.current.flatMap { $0.target.id == id ? $0.identification : nil } }
    }

    /// The card currently reported, if any.
    public var currentTarget: DetectedTarget? { state.withLock { $0.current?.target } }

    // MARK: ReaderBackend

    /// Starts a polling thread for this reader. `options` is accepted as is: a PC/SC reader
    /// polls by its own firmware settings (ISO 14443 A/B, FeliCa where it can).
    public func events(_ options: NFCPollingOption) -> AsyncThrowingStream<ReaderBackendEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<ReaderBackendEvent, any Error>.makeStream()
        let control = PollControl()
        let number = state.withLock { s in
            s.nextStream += 1
            s.streams[s.nextStream] = control
            return s.nextStream
        }
        continuation.onTermination = { [weak self] _ in
            control.stop()
            _ = self?.state.withLock { $0.streams.removeValue(forKey: number) }
        }
        let thread = Thread { [self] in
            self.poll(control: control, continuation: continuation)
            _ = self.state.withLock { $0.streams.removeValue(forKey: number) }
        }
        thread.name = "nfcbench.pcsc.poll"
        thread.start()
        return stream
    }

    /// Reports the card in the field again, under a new id (Core NFC `restartPolling()`):
    /// the old id's ``withTag(_:_:)`` fails with `tagLost` from then on.
    public func restartPolling() {
        let controls = state.withLock { s in
            s.restartRequested = true
            return Array(s.streams.values)
        }
        for c in controls { c.wake() }
    }

    /// Runs `body` with the transport for the current card.
    /// - Throws: `TagCommunicationError.tagLost` when `id` is not the card in the field
    ///   (removed, replaced, or re-reported by ``restartPolling()``); errors of `body`, where a
    ///   PC/SC failure after the card was replaced also becomes `.tagLost`.
    public func withTag<R>(_ id: DetectedTargetID, _ body: (TagConnection) throws -> R) throws -> R {
        guard let current = state.withLock({ s in s.current.flatMap { $0.target.id == id ? $0 : nil } }) else {
            throw TagCommunicationError.tagLost
        }
        let connection: TagConnection =
            current.target.kind == .type4
            ? .iso7816(PCSCAPDUTransport(card: current.card))
            : .type2(PCSCType2TagTransport(card: current.card))
        do {
            return try body(connection)
        } catch let error as PCSCError {
            throw isCurrent(id) ? error.tagCommunicationError : TagCommunicationError.tagLost
        } catch let error as TagCommunicationError {
            if case .readerFailure = error, !isCurrent(id) { throw TagCommunicationError.tagLost }
            // pcscd dying looks like a card leaving (vpcd answers 0 bytes): tell them apart.
            if error == .tagLost, serviceStoppedRecently() {
                throw TagCommunicationError.readerFailure("pcscd stopped")
            }
            throw error
        }
    }

    /// After a "tag lost": true when pcscd turns out to be gone. Asks for up to 600 ms, as a
    /// killed pcscd may break its reader connections before its socket stops accepting; ends
    /// early when the polling thread saw pcscd fail or saw the card leave.
    private func serviceStoppedRecently() -> Bool {
        for _ in 0..<6 {
            if state.withLock({ $0.serviceStopped }) { return true }
            if (try? PCSCContext()) == nil { return true }
            usleep(100_000)
        }
        return false
    }

    private func isCurrent(_ id: DetectedTargetID) -> Bool {
        state.withLock { $0.current?.target.id == id }
    }

    // MARK: Polling thread

    private func poll(
        control: PollControl, continuation: AsyncThrowingStream<ReaderBackendEvent, any Error>.Continuation
    ) {
        let watcher: PCSCContext
        let cards: PCSCContext
        do {
            watcher = try PCSCContext()
            cards = try PCSCContext()
        } catch {
            continuation.finish(throwing: PCSCReaderBackendError(error, reader: reader))
            return
        }
        guard control.attach(watcher) else {
            continuation.finish()
            return
        }
        var known = PCSCReaderState.unaware(reader)
        var reported: (eventCount: UInt16, id: DetectedTargetID)? = nil

        func drop() {
            let old = state.withLock { s in
                defer { s.current = nil }
                return s.current
            }
            if let old {
                try? old.card.disconnect(.leave)
                continuation.yield(.lost(old.target.id))
            }
            reported = nil
        }

        func report(_ s: PCSCReaderState) {
            switch identify(context: cards, atr: s.atr) {
            case .success(let current):
                state.withLock { $0.current = current }
                reported = (s.eventCount, current.target.id)
                continuation.yield(.detected([current.target]))
            case .failure:
                // The card left during identification, or is mute: wait for the next change.
                reported = (s.eventCount, DetectedTargetID(0))
            }
        }

        while !control.isStopped {
            let outcome: PCSCStatusChange
            do {
                outcome = try watcher.waitForStatusChange(
                    readers: [known], timeout: configuration.presenceCheckInterval)
            } catch {
                if control.isStopped { break }
                let failure = PCSCReaderBackendError(error, reader: reader)
                if case .serviceStopped = failure { state.withLock { $0.serviceStopped = true } }
                drop()
                continuation.finish(throwing: failure)
                return
            }
            if control.isStopped { break }
            if case .changed(let states) = outcome, let s = states.first {
                if s.flags.contains(.unknown) || s.flags.contains(.unavailable) {
                    drop()
                    continuation.finish(throwing: PCSCReaderBackendError.readerGone(reader))
                    return
                }
                known = s
                if s.hasCard {
                    if let r = reported, r.eventCount == s.eventCount {
                        // Same presentation (only INUSE/EXCLUSIVE changed): nothing new.
                    } else {
                        if reported != nil { drop() }
                        report(s)
                    }
                } else if reported != nil {
                    drop()
                }
            }
            let restart = state.withLock { s in
                defer { s.restartRequested = false }
                return s.restartRequested
            }
            if restart, known.hasCard {
                drop()
                report(known)
            }
        }
        // Field off: forget the card without reporting it lost (the stream is over).
        let old = state.withLock { s in
            defer { s.current = nil }
            return s.current
        }
        try? old?.card.disconnect(.leave)
        control.detach()
        continuation.finish()
    }

    private func identify(context: PCSCContext, atr statusATR: [UInt8]) -> Result<Current, PCSCError> {
        let card: PCSCCard
        do {
            card = try context.connect(reader: reader, shareMode: configuration.shareMode)
        } catch {
            return .failure(error)
        }
        let atr = (try? card.status().atr) ?? statusATR
        var identification = PCSCCardIdentification.classify(atr: atr)
        identification.uid = (try? card.uid()) ?? nil
        if identification.kind == .type2, configuration.identifyType2Version {
            if let answer = try? card.getVersion(), let version = try? TagVersion(bytes: answer) {
                identification.version = version
            } else if card.transparentExchangeKind == .pcscPart3 || card.transparentExchangeKind == .acr122uPseudoAPDU {
                // The tag did not answer GET_VERSION: an Ultralight (or Ultralight C); the tag is
                // now idle, so have the reader re-select it.
                try? card.reconnect(.reset)
            }
        }
        let id = state.withLock { s in
            defer { s.nextID += 1 }
            return DetectedTargetID(s.nextID)
        }
        let target = DetectedTarget(
            id: id, kind: identification.kind, technology: .iso14443, uid: identification.uid ?? [],
            atr: atr)
        return .success(Current(target: target, card: card, identification: identification))
    }
}

/// What the PC/SC backend learned about a card: the ATR's reading (PC/SC 2.02 part 3
/// §3.1.3.2.3), the UID (`FF CA 00 00 00`) and, for Type 2 tags, GET_VERSION.
public struct PCSCCardIdentification: Sendable, Hashable {
    /// `.type2` for a storage card named MIFARE Ultralight / Ultralight C / EV1 (NTAG21x
    /// readers report these), `.type4` for an ISO/IEC 14443-4 ATR, `.other` otherwise
    /// (MIFARE Classic, FeliCa, a contact card, an ATR that is not part 3).
    public var kind: DetectedTarget.Kind
    /// The card's ATR.
    public var atr: [UInt8]
    /// The part 3 reading of the ATR, `nil` when it is not in the contactless form.
    public var contactless: PCSCContactlessCard?
    /// The UID from `FF CA`, `nil` when the reader refused it.
    public var uid: [UInt8]?
    /// GET_VERSION's answer (NTAG21x, Ultralight EV1); `nil` for a plain Ultralight or a
    /// reader without a transparent exchange (then the CC size has to decide).
    public var version: TagVersion?

    public init(
        kind: DetectedTarget.Kind, atr: [UInt8], contactless: PCSCContactlessCard?,
        uid: [UInt8]? = nil, version: TagVersion? = nil
    ) {
        self.kind = kind
        self.atr = atr
        self.contactless = contactless
        self.uid = uid
        self.version = version
    }

    /// Reads an ATR: pure, never traps.
    public static func classify(atr: [UInt8]) -> PCSCCardIdentification {
        let parsed = try? ATR(bytes: atr)
        let contactless = parsed?.contactless
        let kind: DetectedTarget.Kind
        switch contactless {
        case .storageCard(let standard, let name)?:
            let type2Names: [PCSCCardName] = [.mifareUltralight, .mifareUltralightC, .mifareUltralightEV1]
            kind = standard == .iso14443APart3 && type2Names.contains(name) ? .type2 : .other
        case .iso14443_4?:
            kind = .type4
        default:
            kind = .other
        }
        return PCSCCardIdentification(kind: kind, atr: atr, contactless: contactless)
    }
}

/// Why a PC/SC event stream ended.
public enum PCSCReaderBackendError: Error, Sendable, Hashable, CustomStringConvertible {
    /// pcscd is not running or stopped (`SCARD_E_NO_SERVICE`, `SCARD_E_SERVICE_STOPPED`,
    /// `SCARD_F_COMM_ERROR`).
    case serviceStopped(PCSCError)
    /// The reader was unplugged or is not known to pcscd (`SCARD_E_UNKNOWN_READER`,
    /// `SCARD_STATE_UNKNOWN`, `SCARD_E_READER_UNAVAILABLE`).
    case readerGone(String)
    /// Any other PC/SC failure.
    case failed(PCSCError)

    init(_ error: PCSCError, reader: String) {
        switch error {
        case .noService, .serviceStopped, .commError, .invalidHandle: self = .serviceStopped(error)
        case .unknownReader, .readerUnavailable, .noReadersAvailable: self = .readerGone(reader)
        default: self = .failed(error)
        }
    }

    public var description: String {
        switch self {
        case .serviceStopped(let e): "pcscd stopped or is not running (\(e.name))"
        case .readerGone(let r): "reader \"\(r)\" is gone"
        case .failed(let e): "PC/SC failure: \(e)"
        }
    }
}

/// Stop/wake requests for one polling thread: cancels its `SCardGetStatusChange`.
private final class PollControl: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let context = Mutex<PCSCContext?>(nil)

    var isStopped: Bool { stopped.load(ordering: .acquiring) }

    /// False when stop() already came.
    func attach(_ c: PCSCContext) -> Bool {
        context.withLock { $0 = c }
        return !isStopped
    }

    func detach() { context.withLock { $0 = nil } }

    func stop() {
        stopped.store(true, ordering: .releasing)
        wake()
    }

    func wake() {
        if let c = context.withLock({ $0 }) { try? c.cancel() }
    }
}
