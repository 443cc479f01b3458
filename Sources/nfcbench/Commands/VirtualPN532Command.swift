import Foundation
import HCEEvents
import NFCFiles
import NFCTags
import NFCTrace
import ReaderSession
import Synchronization
import VirtualHardware

/// `nfcbench virtual pn532`: a virtual PN532 on a pty serving a tag file through the real
/// NFCTags cores, for libnfc clients (ours, nfc-list, nfc-poll, nfc-mfultralight).
enum VirtualPN532Command {
    static let command = Command(
        path: ["virtual", "pn532"],
        abstract: "Run a virtual PN532 on a pseudo-terminal serving a tag file (libnfc pn532_uart)",
        options: [
            OptionSpec("pty", value: "PATH", help: "the symlink to make to the pty (- for none)", required: true),
            OptionSpec(
                "tag", value: "FILE", help: "the tag to serve (our JSON, a Flipper .nfc, a Proxmark3 JSON dump)"),
            OptionSpec(
                "reader", value: "PROFILE",
                help: "be a card emulator's chip instead, with this reader profile's reader in its field",
                completion: .file),
            OptionSpec(
                "timing", .choice(["real", "none"]), value: "real|none",
                help: """
                    real: each byte and answer takes as long as on a real PN532 at its
                    UART speed (8N1, 115 200 baud until SetSerialBaudRate) with the tag
                    106 kbit/s away (ISO/IEC 14443 frame and delay times, the tag's
                    write time); none: as fast as the pty carries bytes
                    """, default: .text("none")),
            OptionSpec(
                "present-after", .duration(bare: .seconds, moreThanZero: false),
                help: "put the tag in the field (or bring the reader) this long after start", default: .duration(.zero)),
            OptionSpec(
                "present-for", .duration(bare: .seconds, moreThanZero: false),
                help: "then keep it there this long, take it away --absent-for, and repeat"),
            OptionSpec(
                "absent-for", .duration(bare: .seconds, moreThanZero: false),
                help: "how long it is away (with --present-for)"),
            OptionSpec(
                "save", value: "FILE",
                help:
                    "on exit, write the tag as it is then (our JSON; - for standard output);\nrefused when it is the --tag file"
            ),
            OutputOptions.json("one JSON line per frame and event (the trace schema) instead of text"),
            OptionSpec(
                "quiet", .flag, help: "no per-frame lines (the trace still has them)", group: .output, short: "q"),
        ] + Traces.Options.table(),
        discussion: """
            Creates a symlink at PATH to a fresh pty (removed on exit) and answers libnfc's
            pn532_uart driver there: connect with pn532_uart:PATH (e.g. LIBNFC_DEVICE=pn532_uart:PATH nfc-list).
            The link is made only where nothing is (or over an old link into /dev/pts); with
            --pty - no link is made: connect to the pty's own path, printed first.
            The tag (our JSON, a Flipper .nfc or a Proxmark3 JSON dump; a name in hardware/tags works)
            is served by the NFCTags emulation cores: NTAG21x/Ultralight or a Type 4 NDEF application;
            writes stay in memory for the run (and go to --save FILE on exit).

            With --reader PROFILE (hardware/readers/, see 'nfcbench profile') the PN532 is a card
            emulator's chip instead (TgInitAsTarget, e.g. nfc-emulate-forum-tag4 or an HCE host) and
            the profile's reader comes into its field: RATS, then its C-APDUs one by one; each
            exchange is printed at the end. Only profiles that reach ISO-DEP can be played this way.

            stdin: 'remove' takes the tag out of the field, 'present' puts it back.
            SIGINT, SIGTERM and SIGHUP stop it cleanly (link removed, exit 0).
            """,
        validate: { o throws(CLIError) in
            _ = try Traces.Options(o)
            if o.has("present-for") != o.has("absent-for") {
                throw CLIError.usage("--present-for and --absent-for go together")
            }
            if o.has("reader"), o.has("tag") || o.has("save") {
                throw CLIError.usage("--reader plays a reader: no --tag or --save with it")
            }
            if !o.has("reader"), !o.has("tag") { throw CLIError.usage("--tag FILE (or --reader PROFILE) is required") }
        },
        run: { o in
            let pty = o.string("pty")!
            let tagName = o.string("tag")
            let readerName = o.string("reader")
            let timing = PN532LinkTiming(rawValue: o.string("timing")!)!
            let after = o.duration("present-after")!
            let presentFor = o.duration("present-for")
            let absentFor = o.duration("absent-for")
            let json = o.flag("json")
            let quiet = o.flag("quiet")
            var traceOptions = try Traces.Options(o)
            traceOptions.json = json && !quiet
            let savePath = o.string("save")
            var inputs: [NamedFile] = []
            if let tagName, let p = DataLocation.resolve(tagName, in: "tags") {
                inputs.append(NamedFile("--tag \(p)", p))
            }
            if let readerName, let p = DataLocation.resolve(readerName, in: "readers") {
                inputs.append(NamedFile("--reader \(p)", p))
            }
            let ptyOutput = pty == "-" ? [] : [NamedFile("--pty \(pty)", pty)]
            try Outputs.refuseSameFiles(
                outputs: ptyOutput + (savePath.map { [NamedFile("--save \($0)", $0)] } ?? []) + traceOptions.outputs,
                inputs: inputs)
            if pty != "-" {
                do throws(FileError) { try SymbolicLink.plan(pty, label: "--pty \(pty)") } catch {
                    throw CLIError(error)
                }
            }
            if let savePath { _ = try Outputs.plan(savePath, option: "--save") }
            let cycle = presentFor.flatMap { p in absentFor.map { (p, $0) } }
            if let readerName {  // validate: no --tag or --save with it
                let script = try readerScript(readerName)
                return try await run(
                    pty: pty, file: nil, reader: script, timing: timing, after: after, cycle: cycle,
                    json: json, quiet: quiet, traceOptions: traceOptions, savePath: nil)
            }
            guard let tagName else { throw CLIError.usage("--tag FILE (or --reader PROFILE) is required") }
            let (file, _) = try loadPN532Card(tagName)
            if let mismatch = file.uidMismatch { Output.err("warning: \(mismatch)") }
            return try await run(
                pty: pty, file: file, reader: nil, timing: timing, after: after, cycle: cycle,
                json: json, quiet: quiet, traceOptions: traceOptions, savePath: savePath)
        })

    /// The reader profile as the scripted external reader of a PN532 in target mode.
    static func readerScript(_ name: String) throws(CLIError) -> PN532ReaderScript {
        let path = try DataLocation.require(name, in: "readers")
        let profile: ReaderProfile
        do { profile = try ReaderProfile.load(path: path) } catch { throw CLIError(error) }
        guard profile.reachesISODEP else {
            throw .data(
                "\(profile.name) never reaches ISO-DEP (\(profile.technology)); a PN532 in target mode would never see it"
            )
        }
        return PN532ReaderScript(
            rats: profile.rats ?? [0xE0, 0x80], steps: profile.steps.map { .init(command: $0.apdu) })
    }

    /// The command's tag (through the chip's one card of the run: the same tag each time it
    /// comes back, `hardware/tags/FORMAT.md` Faults) or its scripted reader.
    private final class Control: Sendable {
        let stopped = Mutex(false)
        let fake: VirtualPN532
        let reader: PN532ReaderScript?
        init(fake: VirtualPN532, reader: PN532ReaderScript?) {
            self.fake = fake
            self.reader = reader
        }
        func present() {
            if let reader {
                fake.startReader(reader)
                return
            }
            fake.presentAgain()
        }
        func remove() { if reader == nil { fake.remove() } }
        var current: PN532Card? { fake.currentCard }
        var isStopped: Bool { stopped.withLock { $0 } }
        func stop() { stopped.withLock { $0 = true } }
    }

    static func run(
        pty: String, file: TagFile?, reader: PN532ReaderScript?, timing: PN532LinkTiming,
        after: Duration,
        cycle: (Duration, Duration)?,
        json: Bool, quiet: Bool, traceOptions: Traces.Options, savePath: String?
    ) async throws -> Int32 {
        let fake: VirtualPN532
        let link = pty == "-" ? nil : pty
        // With no --present-after the tag goes in the field as the chip starts, microseconds
        // after the link appears, not by the loop below: that came later still on a loaded
        // host, and nfc-mfultralight, started as the link appeared, found no tag.
        let presentAtStart = file != nil && after == .zero
        do {
            if let file {
                fake = try VirtualPN532.start(tagFile: file, ptyPath: link, timing: timing, present: presentAtStart)
            } else {
                fake = try VirtualPN532.start(ptyPath: link, timing: timing)
            }
        } catch let error as DataFileError {
            throw CLIError(error)
        } catch {
            // The link is the file this command makes (73, or 74 when the disk fails); no pty to
            // make is 69.
            if let e = error as? VirtualPN532Error, e.operation == "symlink" {
                let message = "cannot make the pty link at \(pty): \(error)"
                throw e.errno == ENOSPC || e.errno == EIO ? CLIError.ioError(message) : CLIError.cantCreate(message)
            }
            throw CLIError.unavailable("cannot create the pty link at \(pty): \(error)")
        }
        let device = link ?? fake.slavePath
        let linkCleanup = link.map { Signals.removeAtDeath(link: $0, to: fake.slavePath) }
        defer { linkCleanup?.cancel() }
        let control = Control(fake: fake, reader: reader)
        var setup: JSONObject = ["pty": .string(device), "slave": .string(fake.slavePath)]
        if let file {
            setup["tag_type"] = .string(file.type.rawValue)
            setup["uid"] = .string(file.identifier.hexString())
        }
        if let reader { setup["reader_c_apdus"] = .int(Int64(reader.steps.count)) }
        let trace: TraceWriter
        do {
            trace = try Traces.open(
                command: "virtual pn532", device: "pn532_uart:\(device)",
                model: ["rats": .string(PN532Chip.rats.hexString()), "timing": .string(timing.rawValue)], setup: setup,
                options: traceOptions)
        } catch {
            fake.stop()
            throw error
        }
        defer { trace.close() }
        let logged = LogSignal()
        fake.observeLog { logged.signal() }
        defer { fake.observeLog(nil) }
        let signals = Signals.handle { sig in
            guard Signals.stops(sig) else { return Signals.runDefault(sig) }
            control.stop()
            logged.signal()
        }
        defer { signals.cancel() }
        if !json {
            Output.out(
                link.map { "virtual PN532 on \($0) -> \(fake.slavePath); connect with pn532_uart:\($0)" }
                    ?? "virtual PN532 on \(fake.slavePath); connect with pn532_uart:\(fake.slavePath)")
            let what =
                file.map { "tag: \($0.type.rawValue) UID \($0.identifier.hexString())" }
                ?? "reader: \(reader?.steps.count ?? 0) C-APDUs after RATS \(reader?.rats.hexString() ?? "")"
            Output.out(what + (trace.path.map { "; trace \($0)" } ?? ""))
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
        var nextChange: ContinuousClock.Instant? = presentAtStart ? cycle.map { start + $0.0 } : start + after
        var phaseInField = presentAtStart
        while !control.isStopped {
            let now = ContinuousClock.now
            if let at = nextChange, now >= at {
                if phaseInField {
                    control.remove()
                    nextChange = cycle.map { now + $0.1 }
                } else {
                    control.present()
                    nextChange = cycle.map { now + $0.0 }
                }
                phaseInField.toggle()
            }
            // What is new only (the log is taken, not copied whole), as soon as the chip logs
            // it; an idle chip wakes this loop 4 times a second (it polled every 20 ms: 0.6 %
            // of a CPU idle), and never later than the next field change.
            for entry in fake.takeFrames() { emit(entry, trace: trace, text: !json && !quiet) }
            var timeout = Duration.milliseconds(250)
            if let at = nextChange { timeout = min(timeout, max(.zero, at - ContinuousClock.now)) }
            await logged.wait(timeout: timeout)
        }
        for entry in fake.takeFrames() { emit(entry, trace: trace, text: !json && !quiet) }
        let final = control.current
        let exchanges = fake.chip.readerExchanges
        fake.stop()
        trace.record("stopped", ["reason": "signal"])
        if reader != nil {
            for (i, x) in exchanges.enumerated() {
                var fields = JSONObject()
                fields["apdu"] = .string(x.command.hexString())
                fields["response"] = x.response.map { .string($0.hexString()) } ?? .null
                fields["index"] = .int(Int64(i))
                trace.record("reader_exchange", fields)
                if !json {
                    Output.out(
                        "reader C-APDU \(x.command.hexString(separator: " ")) -> \(x.response.map { $0.hexString(separator: " ") } ?? "no answer")"
                    )
                }
            }
        }
        if let savePath, let final, let file {
            do throws(FileError) { try final.updating(file).save(path: savePath, label: "--save \(savePath)") } catch {
                throw CLIError(error)
            }
            if !json && savePath != "-" { Output.out("saved the tag as it is now to \(savePath)") }
        }
        if !json { Output.out(link.map { "stopped; removed \($0)" } ?? "stopped") }
        return 0
    }

    private static func emit(_ e: PN532FrameLogEntry, trace: TraceWriter, text: Bool) {
        var r: JSONObject = ["t_us": .int(e.microseconds)]
        switch e.direction {
        case .event:
            r["event"] = "pn532_event"
            r["note"] = .string(e.note)
        case .hostToChip, .chipToHost:
            r["event"] = "frame"
            r["dir"] = .string(e.direction == .hostToChip ? "host_to_chip" : "chip_to_host")
            r["frame"] = .string(e.bytes.hexString())
        case .air:
            switch e.air {
            case .field(let on, let note)?:
                r["event"] = "field"
                r["state"] = .string(on ? "on" : "off")
                r["note"] = .string(note)
            case .exchange(let kind, let command, let answer, let note)?:
                r["event"] = "air"
                r["kind"] = .string(kind)
                r["command"] = .string(command.hexString())
                r["response"] = answer.map { .string($0.hexString()) } ?? .null
                if let note { r["note"] = .string(note) }
            case nil:
                return
            }
        }
        let written = trace.emit(r)
        if text, let line = self.text(written) { Output.out(line) }
    }

    /// The human line of a virtual PN532 record (what it prints and `trace show` prints).
    static func text(_ r: JSONObject) -> String? {
        let ms = String(format: "%10.3f ms", Double(r["t_us"]?.intValue ?? 0) / 1000)
        func spaced(_ key: String) -> String { TraceLines.spaced(r[key]?.stringValue ?? "") }
        switch r["event"]?.stringValue {
        case "frame":
            return
                "\(ms)  \(r["dir"]?.stringValue == "host_to_chip" ? "host > chip" : "chip > host")  \(spaced("frame"))"
        case "pn532_event":
            return "\(ms)  --- \(r["note"]?.stringValue ?? "")"
        case "field":
            return "\(ms)  air         RF field \(r["state"]?.stringValue ?? "?")"
        case "air":
            let answer = r["response"] == .null ? "(no answer)" : spaced("response")
            let note = r["note"]?.stringValue.map { "  " + $0 } ?? ""
            return "\(ms)  air         \(spaced("command")) → \(answer)\(note)"
        default:
            return nil
        }
    }
}

/// Wakes `virtual pn532`'s loop when the chip logs a frame or the command is stopped: a
/// signal that comes while nobody waits is kept (one), so none is lost between two waits.
private final class LogSignal: Sendable {
    private let state = Mutex<(pending: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func signal() {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { s in
            guard let w = s.waiter else {
                s.pending = true
                return nil
            }
            s.waiter = nil
            return w
        }
        waiter?.resume()
    }

    /// Returns at the next signal (at once when one came since the last wait) or after `timeout`.
    func wait(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.next() }
            group.addTask {
                // A timeout that fires ends the wait as a signal would; one cancelled does nothing.
                guard (try? await Task.sleep(for: timeout)) != nil else { return }
                self.signal()
            }
            await group.next()
            group.cancelAll()
        }
    }

    private func next() async {
        await withCheckedContinuation { (k: CheckedContinuation<Void, Never>) in
            let now: Bool = state.withLock { s in
                if s.pending {
                    s.pending = false
                    return true
                }
                s.waiter = k
                return false
            }
            if now { k.resume() }
        }
    }
}
