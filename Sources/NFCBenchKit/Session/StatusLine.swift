import Dispatch
import FoundationEssentials
public import ReaderSession
import Synchronization

/// The sheet on a terminal: one live line with the alert message, the seconds left and the
/// tags read, redrawn every 200 ms; event lines scroll above it.
///
/// The tags read are the app's reads (``SessionRunner/reads``: `didDetectNDEFs` in
/// read-only mode, the app's `readNDEF` in read-write and tag modes), the count the exit
/// status uses. Seconds left are rounded up, as a countdown shows them: "1 s left" until
/// the limit, never "0 s left" with time to go. Time is the session's clock.
public final class StatusLine: Sendable {
    private struct State {
        var alert: String
        var deadline: Duration?
        var active = false
    }
    private let state: Mutex<State>
    private let reads: Counter
    private let clock: any ReaderSessionClock
    private let output: @Sendable (String) -> Void
    /// The redraw timer, made by ``start()`` (a Dispatch source released before it ever
    /// ran would trap, so none exists until the line is drawn).
    private let timer = Mutex<(any DispatchSourceTimer)?>(nil)

    public init(
        alert: String, reads: Counter, clock: any ReaderSessionClock,
        output: @escaping @Sendable (String) -> Void = { BenchOutput.raw($0) }
    ) {
        state = Mutex(State(alert: alert))
        self.reads = reads
        self.clock = clock
        self.output = output
    }

    public func update(_ record: SessionTraceRecord) {
        let now = clock.now
        state.withLock { s in
            switch record.event {
            case .thermal(_, let limit?, _) where !s.active: s.deadline = now + limit
            case .didBecomeActive: s.active = true
            case .alertMessage(let text): s.alert = text
            case .didInvalidateWithError: s.active = false
            default: break
            }
        }
    }

    public func start() {
        timer.withLock { timer in
            let t = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "nfcbench.status"))
            t.schedule(deadline: .now(), repeating: .milliseconds(200))
            t.setEventHandler { [weak self] in self?.draw() }
            t.resume()
            timer = t
        }
    }

    public func stop() {
        timer.withLock { t in
            t?.cancel()
            t = nil
        }
        output("\r\u{1B}[K")
    }

    public func printAbove(_ line: String) {
        output("\r\u{1B}[K" + line + "\n")
        draw()
    }

    /// The line as it reads now; nil while no session is active.
    public var text: String? {
        let s = state.withLock { $0 }
        guard s.active else { return nil }
        return Self.text(alert: s.alert, left: s.deadline.map { $0 - clock.now }, reads: reads.value)
    }

    /// `[ alert ]  12 s left  · 1 tag read  · Ctrl-C = Done`.
    public static func text(alert: String, left: Duration?, reads: Int) -> String {
        var text = "[ \(alert) ]"
        if let left { text += "  \(secondsLeft(left)) s left" }
        text += "  · \(reads) tag\(reads == 1 ? "" : "s") read  · Ctrl-C = Done"
        return text
    }

    /// Whole seconds left, rounded up (0.2 s left is "1 s left"); 0 once the time is up.
    public static func secondsLeft(_ left: Duration) -> Int {
        guard left > .zero else { return 0 }
        let (s, a) = left.components
        return Int(s) + (a > 0 ? 1 : 0)
    }

    private func draw() {
        guard let text else { return }
        output("\r\u{1B}[K" + text)
    }
}
