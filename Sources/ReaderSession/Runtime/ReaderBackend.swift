public import NFCTags

/// A reader that hardware (PC/SC, libnfc), a virtual device or the in-process simulator
/// plugs into. Small on purpose: polling as a stream, a rediscovery request, and scoped
/// access to one target's transport. No C types.
///
/// Threading: ``events(_:)`` and ``restartPolling()`` must not block. ``withTag(_:_:)``
/// blocks for the exchange; the runtime calls it only from its own serial I/O queue, never
/// from the Swift concurrency pool.
public protocol ReaderBackend: AnyObject, Sendable {
    /// Names the reader and its lock: `"sim:NAME"`, `"pcsc:READER NAME"`, `"pn532_uart:/dev/ttyUSB0"`.
    var identifier: String { get }

    /// Starts RF polling for `options`; the stream reports targets entering (`detected`,
    /// several at once when the reader sees several) and leaving (`lost`) the field until
    /// it is cancelled (field off). Finishing with an error means the reader failed.
    func events(_ options: NFCPollingOption) -> AsyncThrowingStream<ReaderBackendEvent, any Error>

    /// Discovers again: targets still in the field are reported again (Core NFC
    /// `restartPolling()`); the backend may give them new ids.
    func restartPolling()

    /// Runs `body` with the transport of target `id` and returns its value. Throws
    /// `TagCommunicationError.tagLost` when the target is gone, and whatever `body` throws.
    /// Blocking.
    func withTag<R>(_ id: DetectedTargetID, _ body: (TagConnection) throws -> R) throws -> R

    /// Polling as ``events(_:)`` has it, pushed: `handler` gets each event on the thread that
    /// produced it (for an in-memory device, the thread that changed the field), `nil` when
    /// polling ends, an error when the reader failed; nothing after either. Lets a
    /// virtual-time host run a session with no task and no thread hop: the runtime
    /// subscribes only when such a host's ``ReaderSessionExecutor`` runs its hand-offs on one
    /// thread (events from two threads at once could reach `handler` out of order). Returns
    /// nil when the backend offers only the stream (the default); the runtime then reads
    /// the stream.
    func subscribe(
        _ options: NFCPollingOption, _ handler: @escaping @Sendable (Result<ReaderBackendEvent?, any Error>) -> Void
    ) -> (any ReaderBackendSubscription)?
}

extension ReaderBackend {
    public func subscribe(
        _ options: NFCPollingOption, _ handler: @escaping @Sendable (Result<ReaderBackendEvent?, any Error>) -> Void
    ) -> (any ReaderBackendSubscription)? { nil }
}

/// A pushed polling subscription (``ReaderBackend/subscribe(_:_:)``).
public protocol ReaderBackendSubscription: Sendable {
    /// Ends it, as cancelling the stream's task does (the last one to end turns the field
    /// off). An event already on its way on another thread may still arrive. Idempotent.
    func cancel()
}

/// What polling reports.
public enum ReaderBackendEvent: Sendable, Hashable {
    /// Targets found in one polling cycle.
    case detected([DetectedTarget])
    /// A target left the field.
    case lost(DetectedTargetID)
}

/// A target a reader activated: its identity per ISO/IEC 14443-3/-4 and what kind of tag
/// the reader believes it is.
public struct DetectedTarget: Sendable, Hashable, Identifiable {
    /// The tag family, as far as activation tells (SAK, ATS/ATR, GET_VERSION).
    public enum Kind: Sendable, Hashable {
        /// NFC Forum Type 2 Tag (MIFARE Ultralight, NTAG21x): SAK `0x00`.
        case type2
        /// ISO-DEP / NFC Forum Type 4 Tag (DESFire, JCOP, HCE phones): SAK bit 6 (`0x20`).
        case type4
        /// FeliCa (NFC Forum Type 3 Tag platform): delivered as `NFCFeliCaTag`.
        case felica
        /// ISO/IEC 15693 (NFC Forum Type 5 Tag platform): delivered as `NFCISO15693Tag`.
        case iso15693
        /// Anything else (MIFARE Classic, NFC-DEP): reported, not readable here.
        case other
    }

    /// Unique per presentation.
    public let id: DetectedTargetID
    public var kind: Kind
    /// The technology it was found with (one of the polling options).
    public var technology: NFCPollingOption
    /// UID / NFCID1 (4, 7 or 10 bytes).
    public var uid: [UInt8]
    /// ATQA / SENS_RES, 2 bytes as sent (LSB first), if known.
    public var atqa: [UInt8]?
    /// SAK / SEL_RES, if known.
    public var sak: UInt8?
    /// ATS (ISO/IEC 14443-4), without CRC, if the target is ISO-DEP.
    public var ats: [UInt8]?
    /// ATR as a PC/SC reader builds it (PC/SC part 3), if known.
    public var atr: [UInt8]?
    /// FeliCa: PMm from the Polling response, if known.
    public var pmm: [UInt8]?
    /// FeliCa: the system code the activation's Polling response carried (2 bytes), if known.
    public var systemCode: [UInt8]?
    /// ISO 15693: DSFID, if known. ``uid`` is then the 8-byte UID, big-endian.
    public var dsfid: UInt8?
    /// What the frontend classified it as (NFCTags ``/NFCTags/TargetClassification``): finer than
    /// ``kind`` (a MIFARE Classic card is `.other` with family `.mifareClassic`).
    public var family: TargetFamily

    public init(
        id: DetectedTargetID, kind: Kind, technology: NFCPollingOption = .iso14443, uid: [UInt8],
        atqa: [UInt8]? = nil, sak: UInt8? = nil, ats: [UInt8]? = nil, atr: [UInt8]? = nil,
        family: TargetFamily? = nil, pmm: [UInt8]? = nil, systemCode: [UInt8]? = nil, dsfid: UInt8? = nil
    ) {
        self.pmm = pmm
        self.systemCode = systemCode
        self.dsfid = dsfid
        self.id = id
        self.kind = kind
        self.technology = technology
        self.uid = uid
        self.atqa = atqa
        self.sak = sak
        self.ats = ats
        self.atr = atr
        self.family =
            family
            ?? {
                switch kind {
                case .type2: .type2
                case .type4: .isoDEP
                case .felica: .felica
                case .iso15693: .iso15693
                case .other: .other
                }
            }()
    }
}
