import Foundation
import HCEEvents
import NFCBase
import NFCFiles
public import NFCTags
public import NFCTrace
import Synchronization
public import VirtualHardware

/// `virtual pn532`'s serving: a ``/VirtualHardware/VirtualPN532`` on a fresh pty (with a
/// link to it, or none), its frames and events on the trace as they happen (and as text lines
/// on standard output), the tag brought into and out of the field on a schedule or on request,
/// and at the end the tag as it is then saved, or the scripted reader's exchanges listed.
///
/// ``start(pty:file:reader:timing:presentAfter:cycle:json:quiet:traceOptions:savePath:)``
/// makes the chip and opens the trace; ``serve()`` then runs until ``stop()`` (a signal
/// handler, a test). ``present()`` and ``remove()`` may come from any thread meanwhile.
public final class PN532Server: Sendable {
    /// `--pty`: the link's path, or `-` for none.
    public let pty: String
    /// The link made to the pty (nil with `-`).
    public let link: String?
    /// The chip being served.
    public let pn532: VirtualPN532
    /// The served tag file (nil when the chip plays a card emulator's chip for ``reader``).
    public let file: TagFile?
    /// The reader in the field of a chip in target mode (nil when a tag is served).
    public let reader: PN532ReaderScript?
    /// Where the tag goes in after the start (zero: as the chip starts).
    public let presentAfter: Duration
    /// In the field `present` long, then out `absent` long, and again (nil: once in, stays).
    public let cycle: (present: Duration, absent: Duration)?
    /// `--json`: the records go to standard output (through the trace), no text lines.
    public let json: Bool
    /// `--quiet`: nothing on standard output but errors, and with no link (`--pty -`) the pty's
    /// own path alone, which a client needs to connect (the trace still has every record).
    public let quiet: Bool
    /// `--save FILE`: the tag as it is at the end, written there (`-`: standard output).
    public let savePath: String?
    /// The run's trace (its `path` is nil with `--no-trace`).
    public let trace: TraceWriter
    private let presentAtStart: Bool
    private let stopped = Mutex(false)
    private let logged = WakeSignal()
    private let linkCleanup: BenchSignals.Registration?

    /// The device path a libnfc client opens (`pn532_uart:` + this): the link, or the pty's
    /// own path without one.
    public var device: String { link ?? pn532.slavePath }

    private init(
        pty: String, pn532: VirtualPN532, file: TagFile?, reader: PN532ReaderScript?, presentAfter: Duration,
        cycle: (present: Duration, absent: Duration)?, json: Bool, quiet: Bool, savePath: String?,
        trace: TraceWriter, linkCleanup: BenchSignals.Registration?
    ) {
        self.pty = pty
        self.link = pty == "-" ? nil : pty
        self.pn532 = pn532
        self.file = file
        self.reader = reader
        self.presentAfter = presentAfter
        self.cycle = cycle
        self.json = json
        self.quiet = quiet
        self.savePath = savePath
        self.trace = trace
        self.linkCleanup = linkCleanup
        self.presentAtStart = file != nil && presentAfter == .zero
    }

    /// Starts a virtual PN532 serving `file` (or, with `reader`, a chip in target mode whose
    /// field that reader enters) on a fresh pty with a link at `pty` (`-`: none), and opens
    /// the trace (`virtual pn532`, device `pn532_uart:` + ``device``, setup `pty`, `slave`,
    /// `tag_type` and `uid`, or `reader_c_apdus`). The link is removed if the process dies.
    /// `presentAfter` and `cycle` are durations from the start; with `json` the trace's
    /// records are printed (`quiet` or not: they are what `--json` asks for).
    /// - Throws: ``BenchError``: 65 a tag file that can't be emulated, 73 a link that can't be
    ///   made (74 when the disk fails), 69 no pty; the trace's errors of
    ///   ``BenchTraces/open(command:device:model:setup:options:echo:inputs:touchesHardware:)``.
    public static func start(
        pty: String, file: TagFile?, reader: PN532ReaderScript?, timing: PN532LinkTiming = .none,
        presentAfter: Duration = .zero,
        cycle: (present: Duration, absent: Duration)?, json: Bool, quiet: Bool,
        traceOptions: BenchTraces.Options, savePath: String?
    ) throws(BenchError) -> PN532Server {
        let fake: VirtualPN532
        let link = pty == "-" ? nil : pty
        // With no --present-after the tag goes in the field as the chip starts, microseconds
        // after the link appears, not by the serving loop: that came later still on a loaded
        // host, and nfc-mfultralight, started as the link appeared, found no tag.
        let presentAtStart = file != nil && presentAfter == .zero
        do {
            if let file {
                fake = try VirtualPN532.start(tagFile: file, ptyPath: link, timing: timing, present: presentAtStart)
            } else {
                fake = try VirtualPN532.start(ptyPath: link, timing: timing)
            }
        } catch let error as DataFileError {
            throw BenchError(error)
        } catch {
            // The link is the file this command makes (73, or 74 when the disk fails); no pty to
            // make is 69.
            if let e = error as? VirtualPN532Error, e.operation == "symlink" {
                let message = "cannot make the pty link at \(pty): \(error)"
                throw e.errno == ENOSPC || e.errno == EIO ? BenchError.ioError(message) : BenchError.cantCreate(message)
            }
            throw BenchError.unavailable("cannot create the pty link at \(pty): \(error)")
        }
        let device = link ?? fake.slavePath
        let linkCleanup = link.map { BenchSignals.removeAtDeath(link: $0, to: fake.slavePath) }
        var setup: JSONObject = ["pty": .string(device), "slave": .string(fake.slavePath)]
        if let file {
            setup["tag_type"] = .string(file.type.rawValue)
            setup["uid"] = .string(file.identifier.hexString())
        }
        if let reader { setup["reader_c_apdus"] = .int(Int64(reader.steps.count)) }
        var options = traceOptions
        options.json = json
        let trace: TraceWriter
        do {
            trace = try BenchTraces.open(
                command: "virtual pn532", device: "pn532_uart:\(device)",
                model: ["rats": .string(PN532Chip.rats.hexString()), "timing": .string(timing.rawValue)], setup: setup,
                options: options)
        } catch {
            fake.stop()
            linkCleanup?.cancel()
            throw error
        }
        let server = PN532Server(
            pty: pty, pn532: fake, file: file, reader: reader, presentAfter: presentAfter, cycle: cycle, json: json,
            quiet: quiet, savePath: savePath, trace: trace, linkCleanup: linkCleanup)
        let logged = server.logged
        fake.observeLog { logged.signal() }
        return server
    }

    /// Brings the tag back into the field (the same tag each time it comes back,
    /// `hardware/tags/FORMAT.md` Faults), or the scripted reader.
    public func present() {
        if let reader {
            pn532.startReader(reader)
            return
        }
        pn532.presentAgain()
    }

    /// Takes the tag out of the field (nothing for a scripted reader).
    public func remove() { if reader == nil { pn532.remove() } }

    /// Ends ``serve()`` (at once, from any thread or a signal handler).
    public func stop() {
        stopped.withLock { $0 = true }
        logged.signal()
    }

    private var isStopped: Bool { stopped.withLock { $0 } }

    /// Serves until ``stop()``: prints the start lines (unless `json` or `quiet`; with `quiet`
    /// and no link, the pty's path alone), brings the tag in and out on schedule, traces each
    /// frame and event as the chip logs it (and prints its text line unless `json` or `quiet`),
    /// then stops the chip, records `stopped`, the scripted reader's `reader_exchange`s, saves
    /// the tag to `savePath`, and removes the link.
    /// Returns the exit status, 0.
    /// - Throws: ``BenchError`` when the tag can't be saved (73/74, 64 the `--tag` file).
    public func serve() async throws(BenchError) -> Int32 {
        defer {
            pn532.observeLog(nil)
            trace.close()
            linkCleanup?.cancel()
        }
        let text = !json && !quiet
        if quiet && !json && link == nil {
            BenchOutput.raw(pn532.slavePath + "\n")  // what a client connects to: not a status line
        }
        if text {
            BenchOutput.out(
                link.map { "virtual PN532 on \($0) -> \(pn532.slavePath); connect with pn532_uart:\($0)" }
                    ?? "virtual PN532 on \(pn532.slavePath); connect with pn532_uart:\(pn532.slavePath)")
            let what =
                file.map { "tag: \($0.type.rawValue) UID \($0.identifier.hexString())" }
                ?? "reader: \(reader?.steps.count ?? 0) C-APDUs after RATS \(reader?.rats.hexString() ?? "")"
            BenchOutput.out(what + (trace.path.map { "; trace \($0)" } ?? ""))
        }
        let start = ContinuousClock.now
        var nextChange: ContinuousClock.Instant? =
            presentAtStart ? cycle.map { start + $0.present } : start + presentAfter
        var phaseInField = presentAtStart
        while !isStopped {
            let now = ContinuousClock.now
            if let at = nextChange, now >= at {
                if phaseInField {
                    remove()
                    nextChange = cycle.map { now + $0.absent }
                } else {
                    present()
                    nextChange = cycle.map { now + $0.present }
                }
                phaseInField.toggle()
            }
            // What is new only (the log is taken, not copied whole), as soon as the chip logs
            // it; an idle chip wakes this loop 4 times a second (it polled every 20 ms: 0.6 %
            // of a CPU idle), and never later than the next field change.
            for entry in pn532.takeFrames() { emit(entry, text: text) }
            var timeout = Duration.milliseconds(250)
            if let at = nextChange { timeout = min(timeout, max(.zero, at - ContinuousClock.now)) }
            await logged.wait(timeout: timeout)
        }
        for entry in pn532.takeFrames() { emit(entry, text: text) }
        let final = pn532.currentCard
        let exchanges = pn532.chip.readerExchanges
        pn532.stop()
        trace.record(.stopped, ["reason": "signal"])
        if reader != nil {
            for (i, x) in exchanges.enumerated() {
                var fields = JSONObject()
                fields["apdu"] = .string(x.command.hexString())
                fields["response"] = x.response.map { .string($0.hexString()) } ?? .null
                fields["index"] = .int(Int64(i))
                trace.record(.readerExchange, fields)
                if text {
                    BenchOutput.out(
                        "reader C-APDU \(x.command.hexString(separator: " ")) -> \(x.response.map { $0.hexString(separator: " ") } ?? "no answer")"
                    )
                }
            }
        }
        if let savePath, let final, let file {
            do throws(FileError) { try final.updating(file).save(path: savePath, label: "--save \(savePath)") } catch {
                throw BenchError(error)
            }
            if text && savePath != "-" { BenchOutput.out("saved the tag as it is now to \(savePath)") }
        }
        if text { BenchOutput.out(link.map { "stopped; removed \($0)" } ?? "stopped") }
        return 0
    }

    private func emit(_ e: PN532FrameLogEntry, text: Bool) {
        guard let r = Self.record(e) else { return }
        let written = trace.emit(r)
        if text, let line = Self.text(written) { BenchOutput.out(line) }
    }

    /// The trace record of a chip's log entry (without the trace's own fields): `frame` (`dir`
    /// `host_to_chip` or `chip_to_host`, `frame` hex), `pn532_event` (`note`), `field`
    /// (`state` `on`/`off`, `note`) or `air` (`kind`, `command`, `response` hex or null,
    /// `note`); `t_us` the chip's microseconds. Nil for an air entry with nothing on it.
    public static func record(_ e: PN532FrameLogEntry) -> TraceRecord? {
        let t = e.microseconds
        switch e.direction {
        case .event:
            return TraceRecord.PN532Event(note: e.note).record(at: t)
        case .hostToChip, .chipToHost:
            return TraceRecord.HostLinkFrame(
                direction: e.direction == .hostToChip ? .hostToChip : .chipToHost, frame: e.bytes.hexString()
            ).record(at: t)
        case .air:
            switch e.air {
            case .field(let on, let note)?:
                return TraceRecord.FieldChange(on: on, note: note).record(at: t)
            case .exchange(let exchange, let command, let answer, let note)?:
                return TraceRecord.Air(
                    exchange: exchange, command: command.hexString(), response: answer?.hexString(), note: note
                ).record(at: t)
            case nil:
                return nil
            }
        }
    }

    /// The human line of a virtual PN532 record (what `virtual pn532` prints and `trace show`
    /// prints of its trace): the time in milliseconds, then what happened; nil for records it
    /// does not show.
    public static func text(_ r: TraceRecord) -> String? {
        let ms = String(format: "%10.3f ms", Double(r.time ?? 0) / 1000)
        switch r.kind ?? "" {
        case .frame:
            let f = TraceRecord.HostLinkFrame(r)
            return
                "\(ms)  \(f?.direction == .hostToChip ? "host > chip" : "chip > host")  \(TraceLines.spaced(f?.frame ?? ""))"
        case .pn532Event:
            return "\(ms)  --- \(TraceRecord.PN532Event(r)?.note ?? "")"
        case .field:
            return "\(ms)  air         RF field \(TraceRecord.FieldChange(r)?.state.rawValue ?? "?")"
        case .air:
            let air = TraceRecord.Air(r)
            let answer = air?.response.map { TraceLines.spaced($0) } ?? "(no answer)"
            let note = air?.note.map { "  " + $0 } ?? ""
            return "\(ms)  air         \(TraceLines.spaced(air?.command ?? "")) → \(answer)\(note)"
        default:
            return nil
        }
    }

    /// A reader profile (a path or a name in `hardware/readers/`) as the scripted external
    /// reader of a PN532 in target mode: its RATS (`E0 80` when it gives none) and C-APDUs.
    /// - Throws: ``BenchError``: 66 no such profile, 65 one that can't be read or never reaches
    ///   ISO-DEP.
    public static func readerScript(_ name: String) throws(BenchError) -> PN532ReaderScript {
        let path: String
        do { path = try BenchData.require(name, in: "readers") } catch { throw BenchError(error) }
        let profile: ReaderProfile
        do { profile = try ReaderProfile.load(path: path) } catch { throw BenchError(error) }
        guard profile.reachesISODEP else {
            throw .data(
                "\(profile.name) never reaches ISO-DEP (\(profile.technology)); a PN532 in target mode would never see it"
            )
        }
        return PN532ReaderScript(
            rats: profile.rats ?? [0xE0, 0x80], steps: profile.steps.map { .init(command: $0.apdu) })
    }
}

/// Wakes a serving loop when the chip logs a frame or the server is stopped: a signal that
/// comes while nobody waits is kept (one), so none is lost between two waits.
final class WakeSignal: Sendable {
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
