import Synchronization

/// The app's card-emulation session, shaped like Core NFC's `CardSession` (iOS 17.4+,
/// EEA): an event stream that starts with `sessionStarted` and ends with
/// `sessionInvalidated(reason:)`, `startEmulation()`, `stopEmulation(status:)`,
/// `invalidate()`, and APDUs the app answers with `APDU.respond(response:)`.
///
/// A session lives on a ``ContactlessPhone`` (the virtual-time system model); create it
/// with ``ContactlessPhone/makeCardSession()``. Every call happens at the phone's current
/// virtual time (``ContactlessPhone/now``); nothing here waits on a real clock, so the
/// `async` methods never suspend for long: they keep Core NFC's shapes so app code
/// written against Core NFC ports over.
public final class CardSession: Sendable {
    /// Events of the session, Core NFC's `CardSession.Event`.
    public enum Event: Sendable, Equatable, CustomStringConvertible {
        /// The session started (first event).
        case sessionStarted
        /// The phone detected the RF field of an external reader (before any AID).
        case readerDetected
        /// The reader sent an APDU routed to this app (a SELECT matching a declared
        /// prefix, or a command while the app's AID is selected). Answer it with
        /// ``CardSession/APDU/respond(response:)`` within the reader's frame waiting time.
        case received(CardSession.APDU)
        /// The RF link was lost, or the reader selected another AID.
        case readerDeselected
        /// Last event; the reason is any ``CardSession/Error`` except `transmissionError`.
        case sessionInvalidated(reason: CardSession.Error)

        /// Core NFC's name of the case, used in timelines and JSON (`event`).
        public var name: String {
            switch self {
            case .sessionStarted: "sessionStarted"
            case .readerDetected: "readerDetected"
            case .received: "received"
            case .readerDeselected: "readerDeselected"
            case .sessionInvalidated: "sessionInvalidated"
            }
        }

        public var description: String {
            switch self {
            case .received(let apdu): "received(\(apdu.payload.hexString()))"
            case .sessionInvalidated(let reason): "sessionInvalidated(reason: .\(reason))"
            default: name
            }
        }
    }

    /// Core NFC's `CardSession.Error`.
    public enum Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        /// The system invalidated the session (model: the app left the foreground, or
        /// ``ContactlessPhone/systemInvalidates(_:)``).
        case invalidated
        /// The person using the app invalidated the session (model: the app's
        /// ``CardSession/invalidate()``, or the person dismissing the emulation UI).
        case userInvalidated
        /// The emulation reached ``HCEParameters/maximumSessionDuration``.
        case maxSessionDurationReached
        /// A transmission failed (model: `respond` after the deadline, after the field
        /// left, or twice). Never an invalidation reason.
        case transmissionError
        /// A system resource is unavailable (model: the cool-down after
        /// `maxSessionDurationReached`, or another session emulating).
        case systemNotAvailable
        /// The person has not accepted the app's NFC use.
        case accessNotAccepted
        /// The device or region is not eligible (Core NFC `CardSession.isEligible`).
        case systemEligibilityFailed
        /// The NFC radio is off.
        case radioDisabled

        public var description: String {
            switch self {
            case .invalidated: "invalidated"
            case .userInvalidated: "userInvalidated"
            case .maxSessionDurationReached: "maxSessionDurationReached"
            case .transmissionError: "transmissionError"
            case .systemNotAvailable: "systemNotAvailable"
            case .accessNotAccepted: "accessNotAccepted"
            case .systemEligibilityFailed: "systemEligibilityFailed"
            case .radioDisabled: "radioDisabled"
            }
        }
    }

    /// Core NFC's `CardSession.EmulationUIStatus`: what the emulation sheet shows when
    /// emulation stops.
    public enum EmulationUIStatus: String, Sendable, Equatable {
        case success, failure, none
    }

    /// A command APDU routed to the app (Core NFC `CardSession.APDU`).
    public struct APDU: Sendable, Equatable, CustomStringConvertible {
        /// The command bytes as the reader sent them (ISO/IEC 7816-4 §5.1), ISO-DEP
        /// framing removed.
        public let payload: [UInt8]
        let id: UInt64
        let session: CardSession

        /// Answers the reader with `response` (data and status word, ISO/IEC 7816-4 §5.1).
        /// Throws `CardSession.Error.transmissionError` when the reader is gone, the
        /// frame waiting time has passed, or the APDU was already answered. An APDU never
        /// answered makes the reader time out after ``HCEParameters/frameWaitingTime``.
        public func respond(response: [UInt8]) async throws(CardSession.Error) {
            try session.phone.respond(apduID: id, session: session.id, response: response)
        }

        public static func == (a: APDU, b: APDU) -> Bool { a.id == b.id && a.payload == b.payload }
        public var description: String { payload.hexString(separator: " ") }
    }

    let id: Int
    let phone: ContactlessPhone
    private let stream: AsyncStream<Event>
    let continuation: AsyncStream<Event>.Continuation
    let record: Mutex<[(at: Duration, event: Event)]> = Mutex([])

    init(id: Int, phone: ContactlessPhone) {
        self.id = id
        self.phone = phone
        (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .unbounded)
    }

    /// Core NFC `init() async throws` on `phone`: throws `radioDisabled`,
    /// `systemEligibilityFailed` or `accessNotAccepted` (documented: `CardSession.init()`);
    /// on a device that does not support card sessions (``ContactlessPhone/Conditions/supported``
    /// false) it is a fatal error, as Core NFC's is (documented: check ``isSupported`` first).
    /// The session delivers `sessionStarted` at once.
    public convenience init(phone: ContactlessPhone) async throws(CardSession.Error) {
        let id = try phone.reserveSession()
        self.init(id: id, phone: phone)
        phone.attach(self)
    }

    /// Core NFC `init() async throws`, on ``ContactlessPhone/current``; without one installed
    /// it throws `systemEligibilityFailed`.
    public convenience init() async throws(CardSession.Error) {
        guard let phone = ContactlessPhone.current else { throw .systemEligibilityFailed }
        try await self.init(phone: phone)
    }

    /// Core NFC `CardSession.isSupported` (a synchronous class property): whether this device
    /// supports card sessions (``ContactlessPhone/current``'s conditions; false without one).
    public class var isSupported: Bool { ContactlessPhone.current?.conditions.supported ?? false }

    /// Core NFC `CardSession.isEligible` (async): whether the system allows card sessions in
    /// the current environment (device and region).
    public static var isEligible: Bool {
        get async { ContactlessPhone.current?.isEligible ?? false }
    }

    /// The events in order; finishes after `sessionInvalidated(reason:)`.
    public var eventStream: AsyncStream<Event> { stream }

    /// Every event delivered so far with its virtual time (for tests and timelines).
    public var history: [(at: Duration, event: Event)] { record.withLock { $0 } }

    /// Text for the emulation sheet (Core NFC `alertMessage`); kept for the record.
    public var alertMessage: String {
        get { phone.alertMessage(session: id) }
        set { phone.setAlertMessage(newValue, session: id) }
    }

    /// Starts card emulation (Core NFC `startEmulation()`); may be called before any
    /// reader is present. Throws `radioDisabled`, `systemEligibilityFailed`,
    /// `accessNotAccepted` or `systemNotAvailable` (the cool-down after a maximum-duration
    /// end, or another session already emulating); on an invalidated session the model
    /// throws `invalidated`.
    public func startEmulation() async throws(CardSession.Error) {
        try phone.startEmulation(session: id)
    }

    /// Stops emulation and shows `status` on the sheet (Core NFC `stopEmulation(status:)`);
    /// the session stays valid.
    public func stopEmulation(status: EmulationUIStatus) async {
        phone.stopEmulation(session: id, status: status)
    }

    /// Ends the session: the stream delivers `sessionInvalidated(reason: .userInvalidated)`
    /// and finishes. A new session needs a new instance (Core NFC `invalidate()`).
    public func invalidate() {
        phone.invalidate(session: id, reason: .userInvalidated)
    }

    /// True between a successful `startEmulation()` and its end (Core NFC
    /// `isEmulationInProgress`).
    public var isEmulationInProgress: Bool {
        get async { phone.isEmulating(session: id) }
    }

    /// False once `sessionInvalidated` was delivered.
    public var isValid: Bool { phone.isValid(session: id) }

    func deliver(_ event: Event, at t: Duration) {
        record.withLock { $0.append((t, event)) }
        continuation.yield(event)
        if case .sessionInvalidated = event { continuation.finish() }
    }
}
