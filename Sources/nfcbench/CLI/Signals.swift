import Dispatch
import Foundation

/// Turns Unix signals into calls on a queue (a Dispatch signal source per signal; the
/// default action is set to ignore first so the source, not the default, handles them).
///
/// The bench maps them to Core NFC endings: SIGINT (Ctrl-C) is the sheet's Done button
/// (200); SIGTSTP (Ctrl-Z) is leaving the foreground (202).
final class SignalWatcher: @unchecked Sendable {
    private var sources: [any DispatchSourceSignal] = []
    private let queue = DispatchQueue(label: "nfcbench.signals")

    init(_ signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
        for sig in signals {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler { handler(sig) }
            source.resume()
            sources.append(source)
        }
    }

    /// Restores the default actions.
    func cancel() {
        for s in sources {
            s.cancel()
        }
        sources.removeAll()
    }

    /// Stops this process the way a terminal's Ctrl-Z would, but only when it runs in the
    /// foreground process group of its controlling terminal (otherwise there is nobody to
    /// resume it, so it keeps running).
    static func stopIfForegroundOfTerminal() {
        for fd in [Int32(0), 1, 2] where isatty(fd) == 1 {
            if tcgetpgrp(fd) == getpgrp() {
                raise(SIGSTOP)
            }
            return
        }
    }
}
