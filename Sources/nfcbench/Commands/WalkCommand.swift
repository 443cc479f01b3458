import Foundation
import HCEEvents
import NFCBenchKit
import NFCFiles
import NFCHardware
import NFCTags
import NFCTrace
import ReaderSession
import VirtualHardware

/// `nfcbench walk`: reader profiles played against the phone model, in virtual time.
enum WalkCommand {
    static let command = Command(
        path: ["walk"],
        abstract: "Walk a phone past reader profiles: who wakes the default app, who it could serve",
        options: [
            OptionSpec(
                "profiles", value: "LIST|DIR",
                help: """
                    profile names or files, comma-separated, or a folder of
                    *.json (default: every profile in hardware/readers/)
                    """, completion: .file),
            OptionSpec(
                "app-prefixes", .list(of: nil), value: "AID,…",
                help: """
                    the default app's select-identifier-prefixes: full AIDs,
                    RIDs or prefixes of 5..16 bytes, hex (default: none)
                    """),
            OptionSpec(
                "policy", value: "P",
                help: """
                    stay: the app stays up until field off;
                    step-aside:300ms: it steps aside 300 ms after a wake that
                    brought it no APDU
                    """, default: .text("stay"), completion: .words(["stay", "step-aside:"])),
            OptionSpec(
                "express", .list(of: nil), value: "ECP,…",
                help: """
                    ECP frames (hex, no CRC) of express credentials in Wallet;
                    a reader polling with one of them wins over the default app
                    """),
            OptionSpec(
                "gap", .duration(bare: .seconds, moreThanZero: false),
                help: "virtual time between two readers (default 2s; 0.2s with --device)"),
            OptionSpec(
                "wake-latency", .duration(bare: nil, moreThanZero: false),
                help: """
                    launching the default app after the field (default 400ms,
                    assumed: Apple's launch target; Apple publishes no number;
                    0 is the best case, the default before issue 31)
                    """),
            OptionSpec(
                "locked", .flag,
                help: """
                    the phone is locked: it authenticates before it wakes
                    the app (--auth-latency, default 1s, assumed)
                    """),
            OptionSpec(
                "auth-latency", .duration(bare: nil, moreThanZero: false), help: "how long that authentication takes"),
            OptionSpec(
                "sheet-latency", .duration(bare: nil, moreThanZero: false),
                help: """
                    startEmulation() until the card answers (the emulation
                    sheet; default 500ms, assumed; 0 before issue 31)
                    """),
            OptionSpec(
                "sweep", .repeated, value: "NAME=FROM..TO/STEP",
                help: """
                    play the walk once per value of a latency and print how
                    many readers are served: NAME is wake, auth (with
                    --locked) or sheet, e.g. wake=0ms..800ms/100ms; give it
                    again for another table
                    """),
            OptionSpec(
                "app-latency", .duration(bare: nil, moreThanZero: false),
                help: "how long the app takes to answer an APDU",
                default: .duration(.zero)),
            OptionSpec(
                "no-wtx", .flag,
                help: """
                    the system sends no S(WTX) while the app wakes or works
                    (by default it does, as the corpus iPhone trace shows,
                    until the reader's limit, 1 s, assumed)
                    """),
            DeviceOptions.device(
                required: false, environment: false,
                help: "pcsc:READER: play the walk through the real pcscd instead (below)"),
            HCELiveCLI.uidSeedOption,
            OptionSpec(
                "port", .int(1...65535),
                help: """
                    with --device: the vpcd TCP port of READER (default
                    35963, Debian's "Virtual PCD 00 00"; 35964 is "… 00 01")
                    """),
            OutputOptions.json("JSON Lines: one object per event, then a summary object"),
        ] + Traces.Options.table(redact: false),
        alternateUsage:
            "walk --device pcsc:READER [--port N] [--profiles LIST|DIR] [--app-prefixes AID,…] [--express ECP,…] [--gap DURATION] [--json] [--trace PATH | --no-trace] [--pcapng OUT]",
        discussion: """
            Virtual time only: no hardware, no real waiting. The stand-in app creates a
            CardSession on each wake (after authentication when locked, and its launch), starts
            emulation and answers every APDU with 90 00. A SELECT for the app while it is still
            waking is held by the system with S(WTX) frames (shown as 'wtx'). The summary says
            for each reader why it was served, useless or did not wake the app, and lists every
            parameter with its source (documented, reported or assumed). The app's launch
            (400 ms) and the emulation sheet (500 ms) take time by default, both assumed;
            --wake-latency 0 --sheet-latency 0 is the best case (the defaults before issue 31).

            --sweep wake=0ms..800ms/100ms plays the walk once per value (durations with a
            unit, as every option writes them; a step of at most 1000 values) and prints a
            table: the value, how many readers the app served, wakes, useless wakes, S(WTX)
            and which readers were served. wake, auth (with --locked) and sheet can each be
            swept; give --sweep again for another table. --json prints one record per value
            and a summary with what was held fixed.

            With --device pcsc:READER the same phone model is a virtual card on vpcd and each
            ISO-DEP profile is played by a PC/SC client through pcscd, in real time: the
            card's connection to vpcd is the phone entering the field (the wake, logged
            before any APDU), the client connects and transmits the profile's C-APDUs no
            earlier than their times (pcscd first needs ~0.4 s to notice the card), and the
            card disconnecting is field off. pcscd's power-up/down control bytes are logged,
            not taken as fields. Profiles that never reach ISO-DEP (MIFARE Classic doors,
            FeliCa, Type 2 readers) can't be shown over PC/SC: each gets a 'notShowable'
            line. --gap defaults to 0.2 s here; --policy is not available (the app stays).
            Every line also goes to the trace (µs since the start, monotonic).
            """,
        validate: { o throws(CLIError) in
            _ = try Traces.Options(o)
            if !o.has("device"), o.has("port") { throw CLIError.usage("--port goes with --device pcsc:READER") }
            if let device = o.string("device"), !device.hasPrefix("pcsc:") || device.count <= 5 {
                throw CLIError.usage("--device takes pcsc:READER (e.g. 'pcsc:Virtual PCD 00 00'), not '\(device)'")
            }
            if o.has("device"), o.string("policy") != "stay" {
                throw CLIError.usage("give --policy or --device, not both")
            }
            if !o.has("device"), o.has("uid-seed") { throw CLIError.usage("--uid-seed goes with --device pcsc:READER") }
            let sweeps = try WalkReport.sweeps(o.list("sweep") ?? [], locked: o.flag("locked"))
            if o.has("device"), !sweeps.isEmpty {
                throw CLIError.usage("--sweep plays the walk in virtual time: give --sweep or --device, not both")
            }
        },
        run: { o in
            let profilesArg = o.string("profiles")
            let prefixesArg = o.list("app-prefixes")
            let policyArg = o.string("policy")!
            let expressArg = o.list("express")
            let gapArg = o.duration("gap")
            let gap = gapArg ?? .seconds(2)
            let json = o.flag("json")
            let device = o.string("device")
            let port = o.int("port")
            let traceOptions = try Traces.Options(o)
            var parameters = HCEParameters.walkDefaults
            if let d = o.duration("wake-latency") { parameters.wakeLatency = d }
            if let d = o.duration("auth-latency") { parameters.authenticationLatency = d }
            if let d = o.duration("sheet-latency") { parameters.emulationStartLatency = d }
            let appLatency = o.duration("app-latency")!
            let locked = o.flag("locked")
            if o.flag("no-wtx") { parameters.sendsWaitingTimeExtensions = false }

            guard let policy = AppPolicy(policyArg) else {
                throw CLIError.usage(
                    "--policy takes 'stay' or 'step-aside:N' (e.g. step-aside:300ms), not '\(policyArg)'")
            }
            var prefixes: [SelectIdentifierPrefix] = []
            for word in prefixesArg ?? [] {
                do { prefixes.append(try SelectIdentifierPrefix(hex: String(word))) } catch {
                    throw CLIError.usage("--app-prefixes: \(error)")
                }
            }
            var express: [ContactlessPhone.ExpressCredential] = []
            for (i, word) in (expressArg ?? []).enumerated() {
                guard let b = [UInt8](hex: word), b.first == 0x6A, b.count >= 2 else {
                    throw CLIError.usage("--express: '\(word)' is not an ECP frame (hex starting 6A)")
                }
                express.append(.init(name: "express\(i + 1)", ecpFrame: b))
            }
            let sweeps = try WalkReport.sweeps(o.list("sweep") ?? [], locked: locked)
            let profiles = try WalkReport.loadProfiles(profilesArg)
            if let device {  // pcsc:READER, and no --policy: validate
                return try await PCSCWalk(
                    reader: String(device.dropFirst(5)), port: UInt16(port ?? 35963), profiles: profiles,
                    app: .init(name: "app", selectIdentifierPrefixes: prefixes), express: express,
                    gap: gapArg ?? .milliseconds(200), json: json, traceOptions: traceOptions,
                    uid: HCELiveCLI.randomUIDs(seed: o.int("uid-seed"))
                ).run()
            }
            let walk = ReaderWalk(
                profiles: profiles, app: .init(name: "app", selectIdentifierPrefixes: prefixes),
                policy: policy, parameters: parameters, expressCredentials: express, gap: gap, locked: locked,
                appLatency: appLatency)
            // The trace is the walk's records (the --json lines) after the header; its model
            // block has every phone parameter with its source.
            let trace = try Traces.open(
                command: "walk", device: nil,
                model: [
                    "app_prefixes": .array(prefixes.map { .string($0.description) }),
                    "policy": .string(policy.description), "gap_us": .int(gap.wholeMicroseconds),
                    "locked": .bool(locked), "app_latency_us": .int(appLatency.wholeMicroseconds),
                    "parameters": .object(WalkReport.parametersJSON(parameters)),
                ],
                setup: ["profiles": .array(profiles.map { .string($0.name) })], options: traceOptions,
                inputs: try WalkReport.profileFiles(profilesArg).map { NamedFile("the profile \($0)", $0) },
                touchesHardware: false
            )
            defer { trace.close() }
            if !sweeps.isEmpty {
                var records: [TraceRecord] = []
                for sweep in sweeps {
                    records += await sweep.run(walk).map { WalkReport.sweepLine($0, sweep.parameter) }
                }
                var summary = WalkReport.sweepSummaryJSON(sweeps, walk: walk)
                summary.time = 0
                records.append(summary)
                trace.emit(contentsOf: records)
                if json {
                    for r in records { Output.out(r.line) }
                } else {
                    Output.out(WalkReport.sweepTables(records))
                }
                return 0
            }
            let result = await walk.run()
            var records = result.events.map(WalkReport.jsonLine)
            var summary = WalkReport.summaryJSON(result.summary, walk: walk)
            summary.time = result.events.last?.time.wholeMicroseconds ?? 0
            records.append(summary)
            trace.emit(contentsOf: records)
            if json {
                for r in records { Output.out(r.line) }
            } else {
                Output.out(WalkReport.timeline(records))
            }
            return 0
        })
}
