import FoundationEssentials
import NFCBenchKit
import NFCFiles
import NFCTags
import NFCTrace
import ReaderFrontend
import ReaderSession
import Synchronization
import VirtualHardware

/// `nfcbench measure`: bench timings on a reader, as min / median / p99 / max.
enum MeasureCommand {
    enum What: String, CaseIterable { case detect, apdu, read, removal }

    static let command = Command(
        path: ["measure"],
        abstract: "Time detection, APDU round trips, NDEF reads and removal detection",
        options: [
            DeviceOptions.device(
                help: """
                    pcsc:READER, a libnfc connstring or sim:SCENARIO (every measure on
                    every reader: detect and removal with a person, or --virtual-card)
                    """),
            OptionSpec(
                "count", .int(1...1_000_000), help: "samples (default 100 for apdu and read, 10 for detect/removal)"),
            OptionSpec(
                "presence-interval", .duration(bare: .milliseconds, moreThanZero: true), value: "MS",
                help: """
                    how often the reader's presence is checked (default: the device's,
                    250ms for PC/SC, 100ms for libnfc)
                    """, in: Duration.milliseconds(1)...Duration.seconds(60)),
            OptionSpec(
                "virtual-card", value: "TAG",
                help: """
                    present and remove an in-process vpcd card serving TAG
                    (needed for detect and removal: the bench controls the field);
                    apdu and read rates against it are not comparable with a
                    separate `virtual card` process (on 2 cores they read up to
                    twice as high: fewer processes for the scheduler to place)
                    """),
            OptionSpec("port", .int(1...65535), help: "that card's vpcd port", default: .int(35963)),
            OptionSpec(
                "presence", .choice(["events", "probe"]),
                help: """
                    detect and removal with a person: events (the reader's own: pcscd's status
                    changes, libnfc's presence check), or probe: also a harmless command every
                    --probe-interval (READ page 0; SELECT of the NDEF application), both reported
                    """, default: .text("events")),
            OptionSpec(
                "probe-interval", .duration(bare: .milliseconds, moreThanZero: true),
                help: "with --presence probe: how often the probe is sent", default: .duration(.milliseconds(100)),
                in: Duration.milliseconds(5)...Duration.seconds(10)),
            OptionSpec(
                "timeout", .duration(bare: .seconds, moreThanZero: true),
                help: "detect and removal with a person: how long each prompt waits", default: .duration(.seconds(30))),
            OutputOptions.json(
                """
                one JSON object: count, min_us, median_us, p99_us, max_us,
                per_second (samples per second of the samples' summed time,
                so the trace's writing between runs is left out), total_us
                (the whole measurement), presence_interval_ms (the one in
                use: --presence-interval, else the device's) and, for apdu
                and read, timed: what the clock is read around
                ("SCardTransmit": the library call itself; "transport": our
                transport's transmit or READ, its trace note included;
                "ndef_read": the whole read procedure)
                """),
        ] + Traces.Options.table(redact: false),
        positionals: [
            PositionalSpec(
                name: "WHAT",
                help: """
                    detect    from the tag entering the field to the backend reporting it (identified)
                    apdu      one round trip: SELECT of the NDEF application (Type 4) or a READ of page 0
                              (Type 2; READ BINARY FF B0 through a PC/SC reader); on a PC/SC Type 4 tag the
                              clock is read right around each SCardTransmit, with nothing of ours between
                    read      a whole NDEF read through the NFCTags reader procedure
                    removal   from the tag leaving the field to the backend reporting it lost
                    """, completion: .words(What.allCases.map(\.rawValue)), choices: What.allCases.map(\.rawValue),
                missing: "say what to measure first: measure detect|apdu|read|removal --device D")
        ],
        discussion: """
            The trace (--trace) has every exchange, and its "measured" record has the --json figures.

            Ctrl-C (SIGINT), SIGTERM or SIGHUP stop the measurement: the figures of the samples
            gathered so far are printed (JSON: "interrupted" and "requested" say so), exit 128 + the
            signal (130 for Ctrl-C). A measurement that fails prints the figures so far, then why.
            detect and removal on any reader, with a person: prompts on stderr ("tap the tag now",
            "remove the tag now"), --count tries (default 10), each try's times in --json's "tries" (wall
            clock, ms since 1970). Without a probe the figure runs from the prompt and includes the
            hand; with --presence probe a harmless command goes every --probe-interval while the tag
            is to be removed, and a removal's figure is the reader's lag behind the probe (its event
            after the first unanswered probe): pcscd polls vpcd and readers without an interrupt
            endpoint every 400 ms; an ACR122U is reported to show a removal about 1.6 s after card
            commands (hardware/READERS.md). With --virtual-card the bench presents and removes the
            card itself (PC/SC only). A --virtual-card that vpcd does not take within 3 s (no pcscd, or its port held by
            another card) is an error that says which.
            """,
        validate: { o throws(CLIError) in
            _ = try Traces.Options(o)
            let what = What(rawValue: o.positional(0)!)!
            let timing = what == .detect || what == .removal
            if o.has("presence") && !timing { throw CLIError.usage("--presence goes with measure detect or removal") }
            if o.has("probe-interval") && o.string("presence") != "probe" {
                throw CLIError.usage("--probe-interval goes with --presence probe")
            }
            if o.has("virtual-card") && o.string("presence") == "probe" {
                throw CLIError.usage("give --virtual-card or --presence probe, not both")
            }
        },
        run: { o in try await run(o) })

    static func run(_ o: ParsedOptions) async throws -> Int32 {
        let device = o.string("device")!
        let what = What(rawValue: o.positional(0)!)!
        let count = o.int("count") ?? ((what == .detect || what == .removal) ? 10 : 100)
        let json = o.flag("json")
        let interval = o.duration("presence-interval")
        let virtualTag = o.string("virtual-card")
        let port = o.int("port")!
        let traceOptions = try Traces.Options(o)
        // The tag file first: a typo in its name is an error before any trace is made.
        var cardUID: [UInt8] = []
        var personality: (any VirtualCardPersonality)? = nil
        if let virtualTag {
            let path = try DataLocation.require(virtualTag, in: "tags")
            do {
                let file = try TagFile.load(path: path)
                personality = try file.makeVirtualCardPersonality()
                cardUID = file.identifier
            } catch let error as DataFileError {
                throw CLIError(error)
            } catch {
                throw CLIError.data("\(path): \(error)")
            }
        }
        let reader = try BenchReader.open(
            device, command: "measure",
            setup: [
                "what": .string(what.rawValue), "count": .int(Int64(count)),
                "virtual_card": virtualTag.map { .string($0) } ?? .null,
            ],
            options: .init(presenceInterval: interval), trace: traceOptions,
            inputs: virtualTag.flatMap { DataLocation.resolve($0, in: "tags") }.map {
                [NamedFile("--virtual-card \($0)", $0)]
            }
                ?? [])
        defer { reader.close() }

        var card: VirtualCard? = nil
        if let personality {
            guard case .pcsc = reader.spec.kind else {
                throw CLIError.usage("--virtual-card serves a vpcd card: it needs a pcsc: reader")
            }
            card = VirtualCard(personality: personality, configuration: .init(port: UInt16(port)))
        }
        defer { card?.stop() }
        if let card {
            card.start()
            try await CardLink.awaitInField(card, otherSlot: MeasureCommand.otherSlot)
        }
        // The tag for apdu and read first (a wait a signal ends the usual way), then from here a
        // signal stops the sampling, and the figures gathered so far are printed.
        let target =
            what == .apdu || what == .read
            ? try reader.readable(try await reader.firstTarget(timeout: .seconds(10))) : nil
        let gathered = BenchMeasure.Samples()
        let timed = Mutex<String?>(nil)
        let interrupted = InterruptFlag()
        let stopSignal = Mutex<Int32?>(nil)
        let signals = Signals.handle { sig in
            guard Signals.stops(sig) else { return Signals.runDefault(sig) }
            stopSignal.withLock { if $0 == nil { $0 = sig } }
            interrupted.set()
        }
        defer { signals.cancel() }
        let started = ContinuousClock.now
        var failure: (any Error)? = nil
        let tries = BenchMeasure.Tries()
        do {
            switch what {
            case .detect, .removal:
                if let card {
                    try await BenchMeasure.presence(
                        reader.watcher(), card: card, uid: cardUID, count: count, removal: what == .removal,
                        into: gathered, interrupted: interrupted)
                } else {
                    try await BenchMeasure.person(
                        reader, removal: what == .removal, count: count, probe: o.string("presence") == "probe",
                        interval: o.duration("probe-interval")!, timeout: o.duration("timeout")!, into: tries,
                        interrupted: interrupted)
                }
            case .apdu, .read:
                let read = what == .read
                try await reader.withTimedTag(target!) { tag in
                    if !read, tag.repeatsAPDUs {
                        timed.withLock { $0 = "SCardTransmit" }
                        try BenchMeasure.repeatedSelect(tag, count: count, into: gathered, interrupted: interrupted)
                    } else {
                        timed.withLock { $0 = read ? "ndef_read" : "transport" }
                        try BenchMeasure.exchange(
                            tag.connection, count: count, read: read, into: gathered, interrupted: interrupted,
                            flush: tag.flush)
                    }
                }
            }
        } catch is CancellationError {
        } catch let e as CLIError {
            // Say what the card was doing when the reader saw nothing.
            if let card, let why = CardLink.diagnosis(card, otherSlot: MeasureCommand.otherSlot) {
                failure = CLIError.unavailable("\(e.message): \(why)")
            } else {
                failure = e
            }
        } catch {
            failure = error
        }
        let samples = gathered.all + tries.all.map { .microseconds(Int64($0.figureMicroseconds.rounded())) }
        let total = ContinuousClock.now - started
        let sig = stopSignal.withLock { $0 }
        guard let stats = TimingStatistics(samples) else {
            if let failure { throw failure }
            if let sig {
                Output.err("measure \(what.rawValue): stopped by \(Signals.name(sig)) before the first sample")
                return 128 + sig
            }
            throw CLIError.failure("no samples")
        }
        let cut = samples.count < count ? (sig.map { "stopped by \(Signals.name($0))" } ?? "failed") : nil
        let (figures, perSecond) = BenchMeasure.figures(
            stats, samples: samples, total: total, requested: count, cut: cut, timed: timed.withLock { $0 },
            tries: tries.all, presence: o.string("presence")!, probeInterval: o.duration("probe-interval"))
        reader.trace.record(.measured, figures)
        if json {
            // The interval in use: the one asked for, else the device's own.
            let out = BenchMeasure.jsonReport(
                what: what.rawValue, device: reader.spec.identifier, figures: figures,
                presenceInterval: reader.frontend.presenceInterval)
            Output.out(JSONValue.object(out).serialized)
        } else {
            if let cut {
                Output.out(
                    "\(cut) after \(Figures.grouped(samples.count)) of \(Figures.grouped(count)) samples; the figures so far:"
                )
            }
            Output.out("\(what.rawValue) on \(reader.spec.identifier): \(stats.text)")
            if what == .apdu { Output.out("\(Figures.rounded(perSecond)) APDUs per second") }
        }
        if let failure { throw failure }
        if let sig { return 128 + sig }
        return 0
    }

    /// What to do when another card holds vpcd's port (``CardLink``): measure's own flags.
    static let otherSlot =
        "use the other vpcd slot (--port 35964 with --device \"pcsc:Virtual PCD 00 01\")"
}
