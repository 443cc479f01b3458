// The thin device: what every reader (a libnfc device, a PC/SC reader, the in-process
// simulator, the conformance harness's reader, a test's fake) offers the frontend above it.
// Like a device under nfcpy's ContactlessFrontend: it senses targets and carries commands.
// Target ids, classification, restart and loss rules, faults and locks live once, above it.

/// The RF technology a target was sensed with (NFC Forum Digital's technologies).
public enum NFCTechnology: String, Sendable, Hashable, CaseIterable {
    /// NFC-A / ISO/IEC 14443 Type A (106 kbit/s).
    case iso14443A = "ISO14443A"
    /// NFC-B / ISO/IEC 14443 Type B.
    case iso14443B = "ISO14443B"
    /// NFC-F / FeliCa (JIS X 6319-4), 212 or 424 kbit/s.
    case felica = "FeliCa"
    /// NFC-V / ISO/IEC 15693 vicinity cards.
    case iso15693 = "ISO15693"
}

/// A target as a device sensed it: the activation data the device can show, and the
/// device's key for this presentation.
///
/// `presentation` is the device's own counter: it stays the same while the target stays in
/// the field and changes when a target (even the same card) enters the field again. It is
/// not a Core NFC identity: the frontend gives ids.
public struct SensedTarget: Sendable, Hashable {
    /// The device's key for this presentation.
    public var presentation: UInt64
    public var technology: NFCTechnology
    /// UID / NFCID1 (4, 7 or 10 bytes), PUPI (Type B) or IDm (FeliCa); empty when the
    /// reader would not tell it.
    public var uid: [UInt8]
    /// ATQA / SENS_RES, 2 bytes in wire order (LSB first), when the device shows it.
    public var atqa: [UInt8]?
    /// SAK / SEL_RES, when the device shows it.
    public var sak: UInt8?
    /// ATS including its length byte TL (ISO/IEC 14443-4 §5.2), for ISO-DEP targets.
    public var ats: [UInt8]?
    /// The ATR a PC/SC reader built for the card (PC/SC part 3 §3.1.3.2.3), when that is
    /// all the device shows.
    public var atr: [UInt8]?
    /// FeliCa: PMm (8 bytes of the Polling response, JIS X 6319-4), when the device shows it.
    public var pmm: [UInt8]?
    /// FeliCa: the system code (2 bytes, big-endian as on the wire) the Polling response
    /// carried (Request Code 01), when the device shows it.
    public var systemCode: [UInt8]?
    /// ISO/IEC 15693: the DSFID of the Inventory response, when the device shows it. For
    /// ISO 15693 ``uid`` is the 8-byte UID in big-endian order (`E0` first), as Core NFC's
    /// `identifier` gives it; on the air it goes LSB first.
    public var dsfid: UInt8?

    public init(
        presentation: UInt64, technology: NFCTechnology = .iso14443A, uid: [UInt8], atqa: [UInt8]? = nil,
        sak: UInt8? = nil, ats: [UInt8]? = nil, atr: [UInt8]? = nil, pmm: [UInt8]? = nil,
        systemCode: [UInt8]? = nil, dsfid: UInt8? = nil
    ) {
        self.presentation = presentation
        self.technology = technology
        self.uid = uid
        self.atqa = atqa
        self.sak = sak
        self.ats = ats
        self.atr = atr
        self.pmm = pmm
        self.systemCode = systemCode
        self.dsfid = dsfid
    }
}

/// How a reader carries commands to a target.
public enum TagProtocol: String, Sendable, Hashable {
    /// NFC Forum Type 2 Tag commands (READ `30`, WRITE `A2`, GET_VERSION `60`).
    case type2
    /// ISO-DEP (ISO/IEC 14443-4): command APDUs in, response APDUs out.
    case isoDEP
    /// FeliCa (JIS X 6319-4, NFC Forum Type 3 Tag platform): LEN-first command frames.
    case felica
    /// ISO/IEC 15693-3 (NFC Forum Type 5 Tag platform): request frames (flags, command).
    case iso15693
}

/// A live connection to one target, valid while the frontend hands it out (one exchange
/// sequence, on the device's own thread for hardware).
public enum TagConnection {
    /// A Type 2 tag: READ/WRITE/GET_VERSION commands.
    case type2(any Type2TagTransport)
    /// An ISO-DEP target: APDUs (ISO/IEC 7816-4).
    case iso7816(any APDUTransport)
    /// A FeliCa card: JIS X 6319-4 command frames (Polling, Check, Update…).
    case felica(any FeliCaTransport)
    /// An ISO/IEC 15693 vicinity card: ISO/IEC 15693-3 requests.
    case iso15693(any ISO15693Transport)
}

/// What a device can show and how it senses.
public struct NFCDeviceTraits: Sendable, Hashable {
    /// The device reports field changes itself (``NFCDevice/observeField(_:)``): an
    /// in-memory reader. The frontend then senses when told, with no thread and no polling.
    public var reportsFieldChanges: Bool
    /// The device shows ATQA and SAK of an ISO 14443-A target (a PC/SC reader does not: it
    /// shows an ATR).
    public var showsActivation: Bool
    /// How often the frontend checks that a target is still present, for devices that do
    /// not report changes (libnfc: 100 ms; PC/SC: 250 ms, pcscd itself polls every ≈ 400 ms).
    public var presenceInterval: Duration

    public init(reportsFieldChanges: Bool, showsActivation: Bool, presenceInterval: Duration = .milliseconds(100)) {
        self.reportsFieldChanges = reportsFieldChanges
        self.showsActivation = showsActivation
        self.presenceInterval = presenceInterval
    }
}

/// A device failure (not a tag's): the reader is gone, its service stopped, or it refused.
public struct NFCDeviceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure.
    public enum Kind: String, Sendable, Hashable {
        /// The device was unplugged, its port closed, or it stopped answering.
        case gone
        /// The service behind it (pcscd) stopped or is not running.
        case serviceStopped
        /// Any other failure the device reported.
        case failed
    }
    public var kind: Kind
    /// Says what happened, naming the device.
    public var reason: String

    public init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    public var description: String { reason }
}

/// A reader device as the frontend drives it.
///
/// Thin: no target ids, no Core NFC rules, no Type 2 / Type 4 decisions. The frontend calls
/// ``sense(_:timeout:)``, ``isPresent(_:)``, ``connect(_:as:)`` and ``reactivate(_:)`` from
/// one thread at a time (its own thread for hardware; the caller's for devices that
/// ``NFCDeviceTraits/reportsFieldChanges``); only ``cancel()`` comes from another thread.
public protocol NFCDevice: AnyObject, Sendable {
    /// The reader's name as the user gives it: `"sim:desk"`, `"pcsc:ACS ACR122U 00 00"`,
    /// `"pn532_uart:/dev/ttyUSB0"`.
    var name: String { get }
    var traits: NFCDeviceTraits { get }

    /// The targets in the field now, for `technologies`. While the field is empty, waits
    /// until a target comes, `timeout` passes (`nil`: no limit) or ``cancel()`` is called, and
    /// then returns what is there (`[]` when nothing came). A device that reports field
    /// changes answers at once.
    func sense(_ technologies: Set<NFCTechnology>, timeout: Duration?) throws(NFCDeviceError) -> [SensedTarget]

    /// Whether `target` (this presentation) is still in the field. Quick; disturbs no exchange.
    func isPresent(_ target: SensedTarget) throws(NFCDeviceError) -> Bool

    /// A connection carrying `proto`'s commands to `target`. Throws
    /// ``TagCommunicationError`` (`.tagLost` when the presentation is gone).
    func connect(_ target: SensedTarget, as proto: TagProtocol) throws(TagCommunicationError) -> TagConnection

    /// An exchange sequence on `target` ended: put the device back as sensing needs it
    /// (libnfc: the chip's framing and CRC; a tag a NAK left idle is woken).
    func release(_ target: SensedTarget)

    /// Activates `target` again (Core NFC `restartPolling()` rediscovers a target in the
    /// field): Type 2 leaves HALT, ISO-DEP is deselected. Throws `.tagLost` when it left.
    func reactivate(_ target: SensedTarget) throws(TagCommunicationError)

    /// The reader's RF field comes on: polling starts (a simulator starts its scenario's clock).
    func fieldOn()

    /// The RF field goes off: polling ended.
    func fieldOff()

    /// Ends a blocking ``sense(_:timeout:)`` now (libnfc `nfc_abort_command`, PC/SC
    /// `SCardCancel`). Any thread.
    func cancel()

    /// For devices that report field changes: `onChange` is called (on any thread, never
    /// while the device holds a lock the frontend needs) after each change of the field.
    func observeField(_ onChange: (@Sendable () -> Void)?)

    /// Field off and the device released (`nfc_close`, `SCardReleaseContext`). Called once,
    /// from the thread that used the device last.
    func close()
}

extension NFCDevice {
    public func release(_ target: SensedTarget) {}
    public func fieldOn() {}
    public func fieldOff() {}
    public func observeField(_ onChange: (@Sendable () -> Void)?) {}
}
