import Dispatch
import Foundation
import NFCBase
import NFCFiles
public import NFCTags
public import NFCTrace
import Synchronization
public import VirtualHardware

/// `virtual card`'s serving: a ``/VirtualHardware/VirtualCard`` (a tag file's personality on
/// vpcd's port) followed as it runs: every event of its log on the trace (and its text line on
/// standard output), its presence on a schedule or on request, and whether vpcd really takes
/// it (``CardLink``): when not within ``grace``, why not, then the end (69) or, with `wait`,
/// the reason said and another try.
///
/// ``start(tagPath:file:personality:kind:port:reversed:traceOptions:json:quiet:wait:otherSlot:grace:)``
/// makes the card and opens the trace; ``serve(presentFor:absentFor:removeAfter:readingStandardInput:)``
/// runs until ``stop()`` (a signal handler), `quit` on standard input, or vpcd not taking the card.
/// The start lines (the card, its ATR, the trace's path) are printed once vpcd has the card in
/// its field, never before: a card vpcd never takes says only why.
public final class VirtualCardServer: Sendable {
    /// The card being served.
    public let card: VirtualCard
    /// The run's trace (its `path` is nil with `--no-trace`).
    public let trace: TraceWriter
    /// `--json`: the trace's records are the output, no text lines.
    public let json: Bool
    /// `--quiet`: nothing on standard output, only errors (the trace keeps everything).
    public let quiet: Bool
    /// `--wait`: when vpcd does not take the card, say why and keep trying.
    public let wait: Bool
    /// What ends the message when another card holds the port (``CardLink/diagnosis(_:after:otherSlot:)``).
    public let otherSlot: String
    /// How long the card may be out of vpcd's hands before the server says why.
    public let grace: Duration
    /// The monotonic microseconds (``VirtualCardTrace/monotonicMicros()``) the records'
    /// `t_us` count from.
    public let startMicros: UInt64
    /// What is printed once vpcd has the card in its field (unless `json` or `quiet`).
    public let startLines: [String]
    private let done = DispatchSemaphore(value: 0)
    private let failure = Mutex<String?>(nil)

    private init(
        card: VirtualCard, trace: TraceWriter, json: Bool, quiet: Bool, wait: Bool, otherSlot: String,
        grace: Duration, startMicros: UInt64, startLines: [String]
    ) {
        self.startLines = startLines
        self.card = card
        self.trace = trace
        self.json = json
        self.quiet = quiet
        self.wait = wait
        self.otherSlot = otherSlot
        self.grace = grace
        self.startMicros = startMicros
    }

    /// Makes the vpcd card of `personality` (vpcd's `port`; `reversed`: the card listens on
    /// 127.0.0.1 and vpcd connects to it), opens its trace (`virtual card`, device
    /// `vpcd:PORT`, setup `tag_file`, `personality`, `tag_type`, `port`, `atr`, `reversed`;
    /// `tagPath` may not be an output). The card is not started yet, and nothing is printed:
    /// the line naming the card and the trace's path (``startLines``) wait for vpcd to take it.
    /// - Throws: ``BenchError``: the trace's errors of
    ///   ``BenchTraces/open(command:device:model:setup:options:echo:inputs:touchesHardware:)``.
    public static func start(
        tagPath: String, file: TagFile, personality: any VirtualCardPersonality, kind: VirtualCardKind,
        port: UInt16, reversed: Bool, traceOptions: BenchTraces.Options, json: Bool, quiet: Bool, wait: Bool,
        otherSlot: String, grace: Duration = CardLink.grace
    ) throws(BenchError) -> VirtualCardServer {
        var configuration = VirtualCard.Configuration(port: port)
        configuration.reversed = reversed
        let card = VirtualCard(personality: personality, configuration: configuration)
        let trace = try BenchTraces.open(
            command: "virtual card", device: "vpcd:\(port)",
            setup: [
                "tag_file": .string(tagPath), "personality": .string(kind.rawValue),
                "tag_type": .string(file.type.rawValue), "port": .int(Int64(port)),
                "atr": .string(personality.atr.hexString()), "reversed": .bool(reversed),
            ],
            options: traceOptions, inputs: [NamedFile("--tag \(tagPath)", tagPath)])
        let start = VirtualCardTrace.monotonicMicros()
        let lines = [
            "virtual card: \(file.type.rawValue) from \(tagPath) on vpcd port \(port)"
                + (reversed ? " (reversed: listening on 127.0.0.1)" : "")
                + ", ATR \(personality.atr.hexString(separator: " "))",
            "trace: \(trace.path ?? "(none)")",
        ]
        return VirtualCardServer(
            card: card, trace: trace, json: json, quiet: quiet, wait: wait, otherSlot: otherSlot, grace: grace,
            startMicros: start, startLines: lines)
    }

    /// Ends ``serve(presentFor:absentFor:removeAfter:readingStandardInput:)`` (from any thread
    /// or a signal handler).
    public func stop() { done.signal() }

    /// One command line (standard input's, trimmed and lowercased): `remove` and `present`
    /// (recorded as `command` with its `input`), `quit` or `exit` (``stop()``); anything else
    /// is said on standard error.
    public func command(_ line: String) {
        switch line {
        case "remove":
            trace.record(.command, ["input": "remove"])
            card.remove()
        case "present":
            trace.record(.command, ["input": "present"])
            card.present()
        case "quit", "exit":
            stop()
        case "":
            break
        default:
            BenchOutput.err("unknown command '\(line)': remove, present or quit")
        }
    }

    /// Starts the card and serves until ``stop()``: in the field `presentFor`, out
    /// `absentFor`, forever (both or neither); out after `removeAfter`; the commands of
    /// standard input (``command(_:)``) when `readingStandardInput`. Then stops the card,
    /// traces its last events and records `stopped`. Returns the exit status, 0.
    /// - Throws: ``BenchError/unavailable(_:)`` (69) when vpcd never took the card within
    ///   ``grace`` and not `wait`: why, ending "(--wait keeps trying)".
    public func serve(
        presentFor: Duration? = nil, absentFor: Duration? = nil, removeAfter: Duration? = nil,
        readingStandardInput: Bool = true
    ) async throws(BenchError) -> Int32 {
        defer { trace.close() }
        card.start()
        if let presentFor, let absentFor { card.cyclePresence(present: presentFor, absent: absentFor) }
        if let removeAfter {
            DispatchQueue.global().asyncAfter(deadline: .now() + VirtualCardTrace.seconds(removeAfter)) {
                self.trace.record(.command, ["input": "remove-after"])
                self.card.remove()
            }
        }
        if readingStandardInput {
            StdinCommands.start { line in
                self.command(line)
            } onEnd: {
            }
        }
        let stopFollowing = BenchFlag()
        let followerDone = DispatchSemaphore(value: 0)
        // The follower's lines go where this task's do (a test's capture, or the descriptors).
        let capture = BenchOutput.capture
        let follower = Thread {
            BenchOutput.$capture.withValue(capture) { self.follow(until: stopFollowing, then: followerDone) }
        }
        follower.start()
        let done = self.done
        await OffPool.run { done.wait() }
        card.stop()
        // The card's last events (its disconnect) reach the log, then the follower traces what
        // is left and ends: waited for off Swift's cooperative pool.
        await OffPool.run {
            usleep(50_000)
            stopFollowing.set()
            followerDone.wait()
        }
        if let why = failure.withLock({ $0 }) {
            trace.record(.stopped, ["reason": "not in the field"])
            throw BenchError.unavailable(why + " (--wait keeps trying)")
        }
        trace.record(.stopped, [:])
        if !json && !quiet { BenchOutput.out("stopped") }
        return 0
    }

    /// Follows the card's log (on a thread of its own): traces every event, prints the human
    /// line; and watches that vpcd takes the card: says why not, then ends the serving or
    /// (`wait`) keeps trying. Nothing is printed on standard output before vpcd first has the
    /// card in its field: then the start lines, then the lines held back until then.
    private func follow(until stopFollowing: BenchFlag, then followerDone: DispatchSemaphore) {
        var everInField = false
        var said: String? = nil
        let text = !json && !quiet
        var heldBack: [String] = []
        let graceMicros =
            UInt64(grace.components.seconds) * 1_000_000 + UInt64(grace.components.attoseconds / 1_000_000_000_000)
        while true {
            let link = card.link
            if link.state == .inField {
                if !everInField && text {
                    for line in startLines + heldBack { BenchOutput.out(line) }
                    heldBack = []
                }
                everInField = true
                said = nil
            } else if VirtualCardTrace.monotonicMicros() >= link.sinceMicros + graceMicros,
                let why = CardLink.diagnosis(card, otherSlot: otherSlot)
            {
                if !everInField && !wait {
                    if failure.withLock({ $0 }) == nil {
                        trace.record(.notInField, ["reason": .string(why)])
                        failure.withLock { $0 = why }
                        done.signal()
                    }
                } else if why != said {
                    trace.record(.waiting, ["reason": .string(why)])
                    if text { BenchOutput.err("waiting: \(why); trying again (Ctrl-C stops)") }
                    said = why
                }
            }
            let new = card.takeEvents()
            // The events since the last look go to the trace with one write(2).
            let records = new.map { VirtualCardTrace.record(of: $0, since: startMicros) }
            for written in trace.emit(contentsOf: records) where text {
                guard let line = VirtualCardTrace.text(written) else { continue }
                if everInField { BenchOutput.out(line) } else { heldBack.append(line) }
            }
            if new.isEmpty {
                if stopFollowing.isSet {
                    followerDone.signal()
                    return
                }
                usleep(10_000)
            }
        }
    }
}

/// How the vpcd card shows its tag (`virtual card --personality`).
public enum VirtualCardKind: String, CaseIterable, Sendable {
    /// A PC/SC 2.01.09 part 3 reader (``/VirtualHardware/TagFileCardPersonality``).
    case part3
    /// An ACS ACR122U (``/VirtualHardware/ACR122UPersonality``).
    case acr122u

    /// A tag file (found by name in `hardware/tags/`, or a path) as a vpcd card's personality
    /// of this kind (`virtual card`, the demo): the path, the file and the personality.
    /// - Throws: ``BenchError``: 65 naming the file when it can't be loaded or emulated, 66
    ///   when it is missing.
    public func load(_ tag: String) throws(BenchError) -> (
        path: String, file: TagFile, personality: any VirtualCardPersonality
    ) {
        let path: String
        do { path = try BenchData.require(tag, in: "tags") } catch { throw BenchError(error) }
        do {
            let file = try TagFile.load(path: path)
            let personality: any VirtualCardPersonality =
                switch self {
                case .part3: try file.makeVirtualCardPersonality()
                case .acr122u: try file.makeACR122UPersonality()
                }
            return (path, file, personality)
        } catch let e as DataFileError {
            throw BenchError(e)
        } catch {
            throw BenchError.data("\(path): \(error)")
        }
    }
}

/// Reads standard input line by line on a thread of its own: each line trimmed of spaces and
/// lowercased to `handle`, then `onEnd` at the end of input.
public enum StdinCommands {
    public static func start(
        _ handle: @escaping @Sendable (String) -> Void, onEnd: @escaping @Sendable () -> Void
    ) {
        let t = Thread {
            while let line = readLine(strippingNewline: true) {
                handle(line.trimmingCharacters(in: .whitespaces).lowercased())
            }
            onEnd()
        }
        t.name = "nfcbench.stdin"
        t.start()
    }
}

/// A flag one thread sets and another polls.
public final class BenchFlag: Sendable {
    private let value = Atomic<Bool>(false)
    public init() {}
    public var isSet: Bool { value.load(ordering: .acquiring) }
    public func set() { value.store(true, ordering: .releasing) }
}

/// The virtual card's trace records: their shapes, their human lines and the clock they count.
public enum VirtualCardTrace {
    /// `CLOCK_MONOTONIC` in microseconds (the clock of ``/VirtualHardware/VirtualCardEvent/timestampMicros``).
    public static func monotonicMicros() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1_000
    }

    /// `d` in seconds, fractions included.
    public static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    /// The record of event `e`: `t_us` (microseconds since `start`, monotonic), `event` and
    /// the fields of ``fields(of:)``.
    public static func record(of e: VirtualCardEvent, since start: UInt64) -> TraceRecord {
        let (kind, fields) = fields(of: e)
        return TraceRecord(kind, at: Int64(e.timestampMicros) - Int64(start), fields)
    }

    /// An event's record name and fields: `card_connected` (`port`), `card_disconnected`
    /// (`reason`), `vpcd_control` (`code` two hex digits, `meaning`), `atr` (`atr`), `c_apdu`
    /// (`apdu`), `r_apdu` (`response`), `fault` (`fault`); bytes in hex.
    public static func fields(of e: VirtualCardEvent) -> (TraceRecord.Kind, JSONObject) {
        switch e.kind {
        case .connected(let port): (.cardConnected, ["port": .int(Int64(port))])
        case .disconnected(let why): (.cardDisconnected, ["reason": .string(why.rawValue)])
        case .control(let c):
            (.vpcdControl, ["code": .string(String(format: "%02X", c)), "meaning": .string(controlName(c))])
        case .atr(let b): (.atr, ["atr": .string(b.hexString())])
        case .command(let b): typed(TraceRecord.CommandAPDU(apdu: b.hexString()))
        case .response(let b): typed(TraceRecord.ResponseAPDU(response: b.hexString()))
        case .fault(let f): typed(TraceRecord.Fault(fault: "\(f)"))
        }
    }

    private static func typed(_ p: some TracePayload) -> (TraceRecord.Kind, JSONObject) { (type(of: p).kind, p.fields) }

    /// What a vpcd control byte asks: `power off`, `power on`, `reset`, `get ATR`, else `unknown`.
    public static func controlName(_ c: UInt8) -> String {
        switch c {
        case 0x00: "power off"
        case 0x01: "power on"
        case 0x02: "reset"
        case 0x04: "get ATR"
        default: "unknown"
        }
    }

    /// The human line of a virtual card record (what `virtual card` prints and `trace show`
    /// prints of its trace), or nil for records it does not show.
    public static func text(_ r: TraceRecord) -> String? {
        func spaced(_ key: String) -> String { TraceLines.spaced(r[key]?.stringValue ?? "") }
        let what: String
        switch r.kind ?? "" {
        case .cardConnected: what = "in the field (connected to vpcd :\(r["port"]?.intValue ?? 0))"
        case .cardDisconnected: what = "out of the field (\(r["reason"]?.stringValue ?? "?"))"
        case .vpcdControl: what = "vpcd \(r["code"]?.stringValue ?? "?") \(r["meaning"]?.stringValue ?? "")"
        case .atr: what = "ATR    \(spaced("atr"))"
        case .cApdu: what = "C-APDU \(TraceLines.spaced(TraceRecord.CommandAPDU(r)?.apdu ?? ""))"
        case .rApdu: what = "R-APDU \(TraceLines.spaced(TraceRecord.ResponseAPDU(r)?.response ?? ""))"
        case .fault: what = "fault \(TraceRecord.Fault(r)?.fault ?? "")"
        default: return nil
        }
        return String(format: "%10.3f ms  ", Double(r.time ?? 0) / 1000) + what
    }
}
