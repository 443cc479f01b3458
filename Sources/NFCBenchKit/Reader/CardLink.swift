import Foundation
public import VirtualHardware

/// Whether an in-process vpcd card (`VirtualCard`) is really in the reader's field, and why
/// not, in words a person can act on: for `virtual card`, the demo and `measure`.
public enum CardLink {
    /// How long a card may wait for vpcd before a command says why it is not in the field.
    public static let grace: Duration = .seconds(3)

    /// Waits until `card` is in the field (vpcd spoke to it), at most `within`; throws
    /// ``BenchError/unavailable(_:)`` (69) saying why not. `otherSlot` ends the message when
    /// another card holds the port: what this command's user can do instead.
    public static func awaitInField(
        _ card: VirtualCard, within: Duration = grace, otherSlot: String
    ) async throws(BenchError) {
        let end = ContinuousClock.now + within
        while ContinuousClock.now < end {
            if card.link.state == .inField { return }
            try? await Task.sleep(for: .milliseconds(10))
        }
        if card.link.state == .inField { return }
        throw .unavailable(
            diagnosis(card, after: within, otherSlot: otherSlot) ?? "the virtual card is not in the field")
    }

    /// Why `card` is not in the field (nil when it is, or was taken out on request); when
    /// another card holds the port, `otherSlot` (the command's own way out) ends it.
    public static func diagnosis(
        _ card: VirtualCard, after: Duration? = nil, otherSlot: String
    ) -> String? {
        let port = card.configuration.port
        let host = card.configuration.host
        let waited = after.map { " for \($0.seconds) s" } ?? ""
        switch card.link.state {
        case .inField, .removed, .stopped:
            return nil
        case .refused(let e) where card.configuration.reversed:
            return
                "the virtual card could not listen on \(host):\(port) for vpcd's reversed mode\(waited): \(String(cString: strerror(e)))"
                + (e == EADDRINUSE ? " (another card, or another program, listens there)" : "")
        case .listening:
            return
                "the virtual card listens on \(host):\(port) but vpcd did not connect\(waited): no pcscd with a reversed-mode vpcd reader for that port (hardware/pcsc-loopback/vpcd) runs here"
        case .refused(let e) where e == ECONNREFUSED:
            return
                "the virtual card could not connect to vpcd on \(host):\(port)\(waited): nothing listens there, so no pcscd with vpcd's reader for that port runs here (install pcscd and vsmartcard-vpcd, or run under scripts/with-pcscd; a socket-activated pcscd starts only when a client connects: run 'nfcbench devices' first)"
        case .refused(let e):
            // ETIMEDOUT: vpcd's listen queue is full of other cards' connections.
            let others = VPCDPortClients.clients(ofPort: port)
            if !others.isEmpty { return taken(port, by: others, waited: waited, otherSlot: otherSlot) }
            return
                "the virtual card could not connect to vpcd on \(host):\(port)\(waited): \(String(cString: strerror(e)))"
        case .unanswered(let local):
            let others = VPCDPortClients.clients(ofPort: port, excludingLocalPort: local)
            if others.isEmpty {
                return
                    "vpcd's port \(port) took the virtual card's connection but pcscd never polled the card\(waited): what listens on \(port) is not a vpcd reader pcscd polls"
            }
            return taken(port, by: others, waited: waited, otherSlot: otherSlot)
        }
    }

    /// The port is held by the cards connected to it (named by process where it can be seen).
    private static func taken(
        _ port: UInt16, by others: [VPCDPortClients.Client], waited: String, otherSlot: String
    ) -> String {
        let who = others.map { c in
            c.pid.map { "pid \($0)" + (c.command.map { " '\($0)'" } ?? "") } ?? "from local port \(c.localPort)"
        }.joined(separator: ", ")
        return
            "vpcd's port \(port) is taken: another card is connected to it (\(who)); vpcd serves one card per port, so pcscd never polled this one\(waited). Stop that card, or \(otherSlot)"
    }
}
