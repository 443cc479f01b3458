import Foundation
import NFCTags
import ReaderSession
import Synchronization
import VirtualHardware

/// `nfcbench virtual pn532`: a virtual PN532 on a pty serving a tag file through the real
/// NFCTags cores, for libnfc clients (ours, nfc-list, nfc-poll, nfc-mfultralight).
enum VirtualPN532Command {
    static let command = Command(
        path: ["virtual", "pn532"],
        abstract: "Run a virtual PN532 on a pseudo-terminal serving a tag file (libnfc pn532_uart)",
        usage: "virtual pn532 --pty PATH --tag FILE [--present-after S] [--present-for S --absent-for S] [--json] [--trace FILE] [--save FILE] [--quiet]",
        help: """
        Creates a symlink at PATH to a fresh pty (removed on exit) and answers libnfc's
        pn532_uart driver there: connect with pn532_uart:PATH (e.g. LIBNFC_DEVICE=pn532_uart:PATH nfc-list).
        The tag (our JSON, a Flipper .nfc or a Proxmark3 JSON dump; a name in hardware/tags works)
        is served by the NFCTags emulation cores: NTAG21x/Ultralight or a Type 4 NDEF application;
        writes stay in memory for the run (and go to --save FILE on exit).

        OPTIONS:
          --present-after S   put the tag in the field S seconds after start (default 0)
          --present-for S     then keep it there S seconds, take it away --absent-for S, and repeat
          --json              one JSON line per frame and event (the trace schema) instead of text
          --trace FILE        where the trace goes (default: the trace folder, see 'nfcbench help')
          --save FILE         on exit, write the tag as it is then (our JSON)
          --quiet             no per-frame lines (the trace still has them)
        stdin: 'remove' takes the tag out of the field, 'present' puts it back.
        SIGINT/SIGTERM stop it cleanly (link removed, exit 0).
        """,
        run: { args in
            guard let pty = try args.option("pty") else { throw CLIError.usage("--pty PATH is required") }
            guard let tagName = try args.option("tag") else { throw CLIError.usage("--tag FILE is required") }
            let after = try args.seconds("present-after") ?? .zero
            let presentFor = try args.seconds("present-for")
            let absentFor = try args.seconds("absent-for")
            let json = args.flag("json")
            let quiet = args.flag("quiet")
            let tracePath = try args.option("trace")
            let savePath = try args.option("save")
            try args.finish()
            if (presentFor == nil) != (absentFor == nil) {
                throw CLIError.usage("--present-for and --absent-for go together")
            }
            let path = try DataLocation.require(tagName, in: "tags")
            let file: TagFile
            let card: PN532Card
            do {
                file = try TagFile.load(path: path)
                card = try PN532Card(tagFile: file)
            } catch {
                throw CLIError.data("\(path): \(error)")
            }
            return try await run(pty: pty, file: file, card: card, after: after, cycle: presentFor.flatMap { p in absentFor.map { (p, $0) } },
                                 json: json, quiet: quiet, tracePath: tracePath, savePath: savePath)
        })

    private final class Control: Sendable {
        struct State {
            var stopped = false
            /// The card with its memory as the tag last left the field.
            var card: PN532Card
            var inField = false
        }
        let state: Mutex<State>
        let fake: VirtualPN532
        init(fake: VirtualPN532, card: PN532Card) {
            self.fake = fake
            state = Mutex(State(card: card))
        }
        func present() {
            state.withLock { s in
                guard !s.inField else { return }
                s.inField = true
                // A tag file's faults fire once per run; a re-presented tag is the plain core.
                if let core = s.card.ntag21xCore { s.card.function = .type2(core) }
                fake.present(s.card)
            }
        }
        func remove() {
            state.withLock { s in
                guard s.inField else { return }
                if let now = fake.chip.card { s.card = now }
                s.inField = false
                fake.remove()
            }
        }
        var current: PN532Card { state.withLock { s in s.inField ? (fake.chip.card ?? s.card) : s.card } }
        var stopped: Bool { state.withLock { $0.stopped } }
        func stop() { state.withLock { $0.stopped = true } }
    }

    static func run(pty: String, file: TagFile, card: PN532Card, after: Duration, cycle: (Duration, Duration)?,
                    json: Bool, quiet: Bool, tracePath: String?, savePath: String?) async throws -> Int32 {
        let fake: VirtualPN532
        do { fake = try VirtualPN532.start(ptyPath: pty) } catch {
            throw CLIError.unavailable("cannot create the pty link at \(pty): \(error)")
        }
        let control = Control(fake: fake, card: card)
        let trace: TraceWriter
        var header = JSONObject()
        header["tool"] = .string("nfcbench \(CLI.version)")
        header["command"] = .string("virtual pn532")
        header["pty"] = .string(pty)
        header["slave"] = .string(fake.slavePath)
        header["tag_type"] = .string(file.type.rawValue)
        header["uid"] = .string(file.activation.uid.hexString())
        var echo: (@Sendable (String) -> Void)? = nil
        if json && !quiet { echo = { @Sendable line in Output.out(line) } }
        do {
            let where_ = tracePath ?? TraceLocation().newTracePath(command: "virtual-pn532")
            trace = try TraceWriter(path: where_, header: header, echo: echo)
        } catch {
            fake.stop()
            throw CLIError.failure("cannot open the trace: \(error)")
        }
        let signals = SignalWatcher([SIGINT, SIGTERM]) { _ in control.stop() }
        defer { signals.cancel() }
        if !json {
            Output.out("virtual PN532 on \(pty) -> \(fake.slavePath); connect with pn532_uart:\(pty)")
            Output.out("tag: \(file.type.rawValue) UID \(file.activation.uid.hexString())\(trace.path.map { "; trace \($0)" } ?? "")")
        }
        // stdin commands.
        let input = Thread {
            while let line = readLine() {
                switch line.trimmingCharacters(in: .whitespaces) {
                case "remove": control.remove()
                case "present": control.present()
                case "": continue
                default: Output.err("unknown command '\(line)': use 'remove' or 'present'")
                }
            }
        }
        input.start()

        let start = ContinuousClock.now
        var nextChange: ContinuousClock.Instant? = start + after
        var printed = 0
        while !control.stopped {
            let now = ContinuousClock.now
            if let at = nextChange, now >= at {
                let inField = control.state.withLock { $0.inField }
                if inField {
                    control.remove()
                    nextChange = cycle.map { now + $0.1 }
                } else {
                    control.present()
                    nextChange = cycle.map { now + $0.0 }
                }
            }
            let log = fake.frameLog
            if log.count > printed {
                for entry in log[printed...] { emit(entry, trace: trace, text: !json && !quiet) }
                printed = log.count
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        for entry in fake.frameLog.dropFirst(printed) { emit(entry, trace: trace, text: !json && !quiet) }
        let final = control.current
        fake.stop()
        trace.record("stopped", ["reason": "signal"])
        if let savePath {
            do { try final.updating(file).save(path: savePath) } catch {
                throw CLIError.failure("cannot save the tag to \(savePath): \(error)")
            }
            if !json { Output.out("saved the tag as it is now to \(savePath)") }
        }
        if !json { Output.out("stopped; removed \(pty)") }
        return 0
    }

    private static func emit(_ e: PN532FrameLogEntry, trace: TraceWriter, text: Bool) {
        let dir: String = switch e.direction {
        case .hostToChip: "host_to_chip"
        case .chipToHost: "chip_to_host"
        case .event: "event"
        }
        if e.direction == .event {
            trace.record("pn532_event", at: e.microseconds, ["note": .string(e.note)])
        } else {
            trace.record("frame", at: e.microseconds, ["dir": .string(dir), "frame": .string(e.bytes.hexString())])
        }
        guard text else { return }
        let ms = String(format: "%10.3f ms", Double(e.microseconds) / 1000)
        switch e.direction {
        case .hostToChip: Output.out("\(ms)  host > chip  \(e.bytes.hexString(separator: " "))")
        case .chipToHost: Output.out("\(ms)  chip > host  \(e.bytes.hexString(separator: " "))")
        case .event: Output.out("\(ms)  --- \(e.note)")
        }
    }
}
