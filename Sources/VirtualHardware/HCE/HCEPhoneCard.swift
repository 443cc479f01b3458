import Foundation
import Glibc
public import HCEEvents
import NFCTags
import Synchronization

/// The phone as a vpcd card personality: the ATR a PC/SC contactless reader builds from
/// the phone's ATS (``HCEPhoneIdentity/atr``), and every command APDU passed to the phone
/// model (``HCELivePhone/exchange(_:)``).
///
/// What vpcd can't carry is answered so the reader is never left hanging (vpcd has no
/// timeout, and a zero-length answer hangs it): no answer from the app within the frame
/// waiting time → `6F 00` (logged by the model as a reader timeout); no ISO-DEP link →
/// `6F 00`. ``reset()`` does nothing: pcscd's power-up/reset of a contactless card is
/// not a field change for the phone.
public struct HCEPhonePersonality: VirtualCardPersonality {
    public let phone: HCELivePhone
    public init(phone: HCELivePhone) { self.phone = phone }

    public var atr: [UInt8] { phone.identity.atr }

    public mutating func respond(to apdu: [UInt8]) -> [UInt8] {
        // PC/SC GET DATA (`FF CA`, part 3 §3.2.2.1.3) is the contactless reader's own command:
        // a real one answers it with the UID of the card it activated and never sends it on.
        // vpcd's reader passes it through, so the card answers for it: the phone's UID of this
        // emulation (random per emulation), no APDU in the model.
        if apdu.count >= 2, apdu[0] == 0xFF, apdu[1] == 0xCA {
            let id = phone.identity
            let r = PCSCPart3.getData(apdu, uid: id.uid, historicalBytes: id.historicalBytes)
            phone.note(
                .vpcd, "readerGetData", command: apdu, response: r,
                detail: "PC/SC GET DATA, answered as a contactless reader answers it (the phone sees nothing)")
            return r
        }
        return switch phone.exchange(apdu) {
        case .answered(_, let response) where !response.isEmpty: response
        case .answered, .timedOut, .notActivated: [0x6F, 0x00]
        }
    }

    public mutating func reset() {}
}

/// The phone as a card on vpcd, where the TCP connection is the reader's field:
///
/// - connecting (``enterField(reader:technology:ecp:)``) is "the phone enters the field":
///   logged as `vpcdConnected`, then the model's `fieldOn` (the wake) and ISO-DEP
///   activation, all before vpcd can ask anything, so before any APDU;
/// - control bytes (`00` power off, `01` power on, `02` reset, `04` get ATR) are logged
///   as `vpcdControl` and are not fields; `04` is answered with the phone's ATR;
/// - each APDU goes through ``HCEPhonePersonality``;
/// - the connection closing (``leaveField()``, or vpcd going away) is field off.
///
/// Like ``VirtualCard`` it re-arms `TCP_QUICKACK` before each read (≈ 150 µs per APDU
/// round trip instead of ≈ 40 ms) and retries the connection while vpcd refuses. The
/// blocking I/O runs on a thread per field; the methods here return at once, except
/// ``leaveField()``, which waits for the model's field off.
public final class HCEPhoneCard: Sendable {
    public let phone: HCELivePhone
    public let configuration: VirtualCard.Configuration

    private struct State {
        var fd: Int32 = -1
        var inField = false
        var wanted = false
        var done: DispatchSemaphore?
    }
    private let state = Mutex(State())

    public init(phone: HCELivePhone, configuration: VirtualCard.Configuration = VirtualCard.Configuration()) {
        self.phone = phone
        self.configuration = configuration
    }

    /// True while the card holds its vpcd connection, from the moment its field on is in the
    /// phone's timeline (the `vpcdConnected` line, the wake and the activation) until it ends.
    public var isConnected: Bool { state.withLock { $0.fd >= 0 } }

    /// Starts connecting to vpcd (retrying every ``VirtualCard/Configuration/retryInterval``
    /// while it refuses); once connected the phone is in `reader`'s field. Does nothing
    /// while a field is already being served.
    public func enterField(reader: String? = nil, technology: ReaderTechnology = .iso14443A, ecp: [UInt8]? = nil) {
        let done = DispatchSemaphore(value: 0)
        let start = state.withLock { s in
            guard !s.inField else { return false }
            s.inField = true
            s.wanted = true
            s.done = done
            return true
        }
        guard start else { return }
        let t = Thread { [self] in
            serveField(reader: reader, technology: technology, ecp: ecp)
            state.withLock { $0.inField = false }
            done.signal()
        }
        t.name = "nfcbench.hce.vpcd.\(configuration.port)"
        t.start()
    }

    /// Leaves the field: closes the connection (pcscd sees the card removed at its next
    /// poll) and waits until the model's field off is done. Also ends a connection attempt.
    public func leaveField() {
        let done: DispatchSemaphore? = state.withLock { s in
            s.wanted = false
            if s.fd >= 0 { shutdown(s.fd, Int32(SHUT_RDWR)) }
            defer { s.done = nil }
            return s.done
        }
        done?.wait()
    }

    private func serveField(reader: String?, technology: ReaderTechnology, ecp: [UInt8]?) {
        var fd: Int32 = -1
        while state.withLock({ $0.wanted }) {
            if let c = VPCDSocket.connect(host: configuration.host, port: configuration.port) {
                fd = c
                break
            }
            Thread.sleep(forTimeInterval: Double(configuration.retryInterval.wholeMicroseconds) / 1e6)
        }
        guard fd >= 0 else { return }
        phone.setReader(reader)
        phone.note(.vpcd, "vpcdConnected", detail: "phone enters the field (vpcd port \(configuration.port))")
        phone.fieldOn(technology, ecp: ecp)
        if technology.supportsISODEP { phone.activateISODEP() }
        // Published only now: whoever sees `isConnected` finds the field on in the timeline
        // (`walk --device` took the field-on time from it, and once read it before it was
        // there). A `leaveField()` meanwhile could not shut the socket down, so do it here.
        let kept = state.withLock { s in
            guard s.wanted else { return false }
            s.fd = fd
            return true
        }
        if !kept { shutdown(fd, Int32(SHUT_RDWR)) }
        var personality = HCEPhonePersonality(phone: phone)
        let why = serve(fd, &personality)
        state.withLock { $0.fd = -1 }
        close(fd)
        phone.note(.vpcd, "vpcdDisconnected", detail: why)
        phone.fieldOff()
    }

    /// Serves vpcd until the connection ends; returns why.
    private func serve(_ fd: Int32, _ personality: inout HCEPhonePersonality) -> String {
        func ended() -> String { state.withLock { $0.wanted } ? "vpcd closed the connection" : "phone left the field" }
        while true {
            if configuration.quickAck { VPCDSocket.armQuickAck(fd) }
            guard let header = VPCDSocket.read(fd, count: 2) else { return ended() }
            let length = Int(header[0]) << 8 | Int(header[1])
            if configuration.quickAck { VPCDSocket.armQuickAck(fd) }
            guard let body = length == 0 ? [] : VPCDSocket.read(fd, count: length) else { return ended() }
            if body.count <= 1 {
                let code = body.first
                phone.note(.vpcd, "vpcdControl", command: body, detail: Self.controlName(code))
                if code == 0x04 {
                    let atr = personality.atr
                    guard VPCDSocket.write(fd, message: atr) else { return ended() }
                    phone.note(.vpcd, "vpcdATR", response: atr)
                }
                continue
            }
            let answer = personality.respond(to: body)
            guard VPCDSocket.write(fd, message: answer) else { return ended() }
        }
    }

    static func controlName(_ code: UInt8?) -> String {
        switch code {
        case 0x00?: "power off (pcscd; not a field change)"
        case 0x01?: "power on (pcscd; not a field change)"
        case 0x02?: "reset (pcscd; not a field change)"
        case 0x04?: "get ATR"
        case let c?: String(format: "unknown control byte %02X (ignored)", c)
        case nil: "empty message (ignored)"
        }
    }
}
