import Glibc
import NFCBenchKit
import Testing

/// The signal thread's gate (``SignalGate``): which taken signals reach the handlers or the
/// defaults. The flake it fixes: a session under `--json` whose output's reader left wrote its
/// `signal` record onto the closed pipe from the signal thread, so that thread took a second
/// SIGPIPE of its own making; when the session had ended by then, the default killed the
/// process by SIGPIPE (141) instead of its exit 12.
@Suite("Signal gate: a SIGPIPE is handed over once")
struct SignalGateTests {
    @Test("The first SIGPIPE passes; every later one is dropped, before and after other signals")
    func pipeOnce() {
        var gate = SignalGate()
        let seen = [SIGPIPE, SIGPIPE, SIGTERM, SIGPIPE].map { gate.admits($0) }
        #expect(seen == [true, false, true, false])
    }

    @Test(
        "Every other policy signal passes each time it comes", arguments: [SIGINT, SIGTERM, SIGHUP, SIGTSTP, SIGCONT])
    func othersAlways(sig: Int32) {
        var gate = SignalGate()
        let seen = [sig, sig, SIGPIPE, sig].map { gate.admits($0) }
        #expect(seen == [true, true, true, true])
    }
}
