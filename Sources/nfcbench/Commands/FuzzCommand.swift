import Foundation
import NFCBenchFuzz
import NFCTags

extension BenchCommand {
    /// Every parser a stranger can feed, by `--target` name.
    static var fuzzTargets: [FuzzTarget] {
        [
            FuzzFileTargets.tagJSON, FuzzFileTargets.tagFlipper, FuzzFileTargets.tagProxmark3,
            FuzzFileTargets.proxmarkTraceTarget, FuzzFileTargets.scenario, FuzzFileTargets.conformance,
            FuzzFileTargets.profile, FuzzFileTargets.ndef, FuzzDeviceTargets.pn532, FuzzDeviceTargets.vpcd,
            FuzzDeviceTargets.type2Reader, FuzzDeviceTargets.type4Reader,
        ]
    }

    /// The targets' names, for the option table (building the targets reads their seed files:
    /// not at start). A test checks them against ``fuzzTargets``.
    static let fuzzTargetNames = [
        "tag-json", "tag-flipper", "tag-proxmark3", "proxmark-trace", "scenario", "conformance", "profile", "ndef",
        "pn532", "vpcd", "type2-reader", "type4-reader",
    ]

    static let fuzz = Command(
        path: ["bench", "fuzz"],
        abstract: "Seeded fuzz of every parser a stranger can feed: no crash, no hang, memory bounded",
        options: [
            OptionSpec(
                "target", .choice(fuzzTargetNames + ["all"]), value: "NAME|all",
                help: "the parser to feed (TARGETS above)",
                required: true),
            OptionSpec("count", .int(1...1_000_000_000), help: "inputs per target", default: .int(1_000_000)),
            OptionSpec(
                "seed", .int(0...Int.max), value: "S", help: "the seed; input I is made from S and I alone",
                default: .int(1)),
            OptionSpec(
                "from", .int(0...Int.max), value: "I",
                help: "start at input I (with --count 1 --show: one input, printed)",
                default: .int(0)),
            OptionSpec("input", value: "HEX", help: "run this one input (a crash report's \"input:\" line)"),
            OptionSpec(
                "hang-seconds", .duration(bare: .seconds, moreThanZero: true),
                help: "an input running longer is a hang",
                default: .duration(.seconds(10)), in: Duration.milliseconds(1)...Duration.seconds(3600)),
            OptionSpec(
                "max-rss-mb", .int(16...1_000_000), value: "M", help: "a resident set above M MiB is a failure",
                default: .int(512)),
            OptionSpec("show", .flag, help: "print every input (hex) and its outcome on stderr"),
        ],
        discussion: """
            TARGETS:
              tag-json        tag files in our JSON (then tag show's report, every device's card, our JSON back)
              tag-flipper     Flipper Zero .nfc tag files
              tag-proxmark3   Proxmark3 JSON dumps
              proxmark-trace  Proxmark3 .trace files, through profile import
              scenario        simulator scenario files
              conformance     conformance scenario files
              profile         reader profiles
              ndef            NDEF messages (bench ndef-fuzz's generator, parse and round trip)
              pn532           host frames at the virtual PN532, with cards coming and going
              vpcd            vpcd protocol messages at the virtual card (tag files' personalities)
              type2-reader    a hostile Type 2 tag at the T2T procedures (identify, read, write)
              type4-reader    a hostile Type 4 card at the T4T procedures (detect, read, write)
              all             each of them in turn

            Inputs are the project's own files (hardware/), and hosts' and cards' exchanges,
            mutated: bit flips, inserts, deletes, length fields on their edges, truncations,
            splices, dictionary tokens. A crash, a hang or a resident set over the limit is
            reported with the input and how to run it alone, and ends the run (the signal's
            status, 3, 4); a finding (a broken promise: a round trip, an answer size) exits 1.
            Run it in a release build: swift build -c release --product nfcbench.
            """,
        run: { o in
            let name = o.string("target")!
            let count = o.int("count")!
            let seed = UInt64(o.int("seed")!)
            let from = o.int("from")!
            let hang = o.duration("hang-seconds")!
            let maxRSS = o.int("max-rss-mb")!
            let show = o.flag("show")
            let given = o.string("input")
            let all = fuzzTargets
            let chosen = name == "all" ? all : all.filter { $0.name == name }
            var findings = 0
            for var t in chosen {
                if let given {
                    // One input given in hex (a crash report's "input:" line).
                    guard let bytes = [UInt8](hex: given) else { throw CLIError.usage("--input takes hex bytes") }
                    t.generate = { _ in bytes }
                    t.maxInputBytes = max(t.maxInputBytes, bytes.count)
                }
                guard t.generate != nil || !t.seeds.isEmpty else {
                    throw CLIError.unavailable(
                        "no seed files for \(t.name): bench data (hardware/) not found; set NFCBENCH_DATA")
                }
                let report = FuzzRunner.run(
                    t, seed: seed, from: from, count: given == nil ? count : 1, hangLimit: hang,
                    maxRSSMiB: maxRSS, show: show
                ) { Output.err($0) }
                for line in report.lines { Output.out(line) }
                findings += report.findings
            }
            return findings == 0 ? 0 : 1
        })
}
