import NFCBenchKit
import NFCTrace

/// `nfcbench poll`: the field as `nfc-list`/`nfc-poll` and `pcsc_scan` show it (lines from
/// ``/NFCBenchKit/PollReport``): no session, no sheet, no time limit, no heat model.
enum PollCommand {
    static let command = Command(
        path: ["poll"],
        abstract: "Watch the field: a line per tag arriving and leaving (--once: what is there now, as nfc-list)",
        options: [
            DeviceOptions.device(),
            OptionSpec(
                "once", .flag,
                help: "list the tags in the field now and exit: 0 one or more found, 1 none (as nfc-list)"),
            OptionSpec(
                "timeout", .duration(bare: .seconds, moreThanZero: true),
                help: "with --once: how long to wait for a tag", default: .duration(.seconds(2))),
            OutputOptions.json(
                """
                one JSON object a line per event: event (arrived, left), t_ms, id, uid,
                technology, family, atqa/sak/ats (wire order) or atr and atr_reading
                """),
        ] + Traces.Options.table(),
        discussion: """
            Polls the reader the way every command does (the same frontend: classification, presence
            checks) and prints each arrival with its time since the start, technology, UID and what
            the reader shows of the activation: ATQA, SAK and ATS on libnfc devices and the
            simulator; the ATR and its PC/SC part 3 reading through PC/SC. Each departure follows
            when the reader sees the tag gone (libnfc: presence checked every 100 ms; PC/SC:
            pcscd's events, about 400 ms for vpcd and readers without an interrupt endpoint).
            Until Ctrl-C (SIGINT, SIGTERM or SIGHUP: exit 0). FeliCa and ISO 15693 targets are
            not polled yet.
            """,
        validate: { o throws(CLIError) in _ = try Traces.Options(o) },
        run: { o in try await run(o) })

    static func run(_ o: ParsedOptions) async throws -> Int32 {
        let device = o.string("device")!
        let once = o.flag("once")
        let json = o.flag("json")
        let reader = try BenchReader.open(
            device, command: "poll", setup: ["once": .bool(once)], trace: try Traces.Options(o))
        let redact = reader.redact
        defer { reader.close() }
        let watcher = reader.watcher()
        defer { watcher.stop() }
        let started = ContinuousClock.now
        func show(_ r: (line: String, json: JSONObject)) {
            if json { Output.out(r.json.serialized) } else { Output.out(r.line) }
        }
        if once {
            let targets: [DetectedTarget]
            let at: ContinuousClock.Instant
            do {
                (targets, at, _) = try await watcher.next(
                    from: 0, timeout: o.duration("timeout")!, what: "tag"
                ) { e -> [DetectedTarget]? in
                    if case .detected(let t) = e { return t }
                    return nil
                }
            } catch let e as CLIError where e.exitCode == 69 && e.message.hasPrefix("no tag") {
                Output.err("no tag on \(reader.spec.identifier) within \(Durations.text(o.duration("timeout")!))")
                return 1
            }
            for t in targets { show(PollReport.arrival(t, at: at - started, redact: redact)) }
            return 0
        }
        let stop = InterruptFlag()
        let signals = Signals.handle { sig in
            if Signals.stops(sig) { stop.set() } else { Signals.runDefault(sig) }
        }
        defer { signals.cancel() }
        if !json { Output.err("polling \(reader.spec.identifier) (Ctrl-C to stop)") }
        var present: [DetectedTargetID: (DetectedTarget, Duration)] = [:]
        var index = 0
        while true {
            let event: ReaderBackendEvent
            let at: ContinuousClock.Instant
            do {
                (event, at, index) = try await watcher.next(
                    from: index, timeout: .seconds(86_400 * 365), what: "event", interrupted: stop
                ) { $0 }
            } catch is CancellationError {
                return 0
            }
            switch event {
            case .detected(let targets):
                for t in targets {
                    present[t.id] = (t, at - started)
                    show(PollReport.arrival(t, at: at - started, redact: redact))
                }
            case .lost(let id):
                guard let (t, arrived) = present.removeValue(forKey: id) else { continue }
                show(PollReport.departure(t, arrivedAt: arrived, at: at - started, redact: redact))
            }
        }
    }
}
