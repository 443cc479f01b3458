import Dispatch
import FoundationEssentials
import ReaderSession
import Synchronization

/// The sheet on a terminal: one live line with the alert message, the seconds left and the
/// tags read, redrawn every 200 ms; event lines scroll above it.
final class StatusLine: Sendable {
    private struct State {
        var alert: String
        var deadline: ContinuousClock.Instant?
        var reads = 0
        var active = false
    }
    private let state: Mutex<State>
    // A Dispatch source is thread-safe; only its API lacks the Sendable annotation.
    nonisolated(unsafe) private let timer = DispatchSource.makeTimerSource(
        queue: DispatchQueue(label: "nfcbench.status"))

    init(alert: String) { state = Mutex(State(alert: alert)) }

    func update(_ record: SessionTraceRecord) {
        state.withLock { s in
            switch record.event {
            case .thermal(_, let limit?, _) where !s.active: s.deadline = .now + limit
            case .didBecomeActive: s.active = true
            case .alertMessage(let text): s.alert = text
            case .didDetectNDEFs: s.reads += 1
            case .didInvalidateWithError: s.active = false
            default: break
            }
        }
    }

    func start() {
        timer.schedule(deadline: .now(), repeating: .milliseconds(200))
        timer.setEventHandler { [weak self] in self?.draw() }
        timer.resume()
    }

    func stop() {
        timer.cancel()
        Output.raw("\r\u{1B}[K")
    }

    func printAbove(_ line: String) {
        Output.raw("\r\u{1B}[K" + line + "\n")
        draw()
    }

    private func draw() {
        let s = state.withLock { $0 }
        guard s.active else { return }
        let left = s.deadline.map { max(0, Int(($0 - .now).components.seconds)) }
        var text = "[ \(s.alert) ]"
        if let left { text += "  \(left) s left" }
        text += "  · \(s.reads) tag\(s.reads == 1 ? "" : "s") read  · Ctrl-C = Done"
        Output.raw("\r\u{1B}[K" + text)
    }
}
