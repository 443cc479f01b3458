import Foundation
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

    static let fuzz = Command(
        path: ["bench", "fuzz"],
        abstract: "Seeded fuzz of every parser a stranger can feed: no crash, no hang, memory bounded",
        usage:
            "bench fuzz --target NAME|all [--count N] [--seed S] [--from I] [--input HEX] [--hang-seconds S] [--max-rss-mb M] [--show]",
        help: """
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

            OPTIONS:
              --count N         inputs per target (default 1000000)
              --seed S          the seed (default 1); input I is made from S and I alone
              --from I          start at input I (with --count 1 --show: one input, printed)
              --input HEX       run this one input (a crash report's "input:" line)
              --hang-seconds S  an input running longer is a hang (default 10)
              --max-rss-mb M    a resident set above M MiB is a failure (default 512)
              --show            print every input (hex) and its outcome on stderr

            Inputs are the project's own files (hardware/), and hosts' and cards' exchanges,
            mutated: bit flips, inserts, deletes, length fields on their edges, truncations,
            splices, dictionary tokens. A crash, a hang or a resident set over the limit is
            reported with the input and how to run it alone, and ends the run (the signal's
            status, 3, 4); a finding (a broken promise: a round trip, an answer size) exits 1.
            Run it in a release build: swift build -c release --product nfcbench.
            """,
        run: { args in
            let name = try args.option("target") ?? ""
            let count = try args.int("count", in: 1...1_000_000_000) ?? 1_000_000
            let seed = try args.int("seed", in: 0...Int.max).map(UInt64.init) ?? 1
            let from = try args.int("from", in: 0...Int.max) ?? 0
            let hang = try args.int("hang-seconds", in: 1...3600) ?? 10
            let maxRSS = try args.int("max-rss-mb", in: 16...1_000_000) ?? 512
            let show = args.flag("show")
            let given = try args.option("input")
            try args.finish()
            let all = fuzzTargets
            let chosen = name == "all" ? all : all.filter { $0.name == name }
            guard !chosen.isEmpty else {
                throw CLIError.usage(
                    "--target is one of: \(all.map(\.name).joined(separator: ", ")), all")
            }
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
                    t, seed: seed, from: from, count: given == nil ? count : 1, hangLimit: .seconds(hang),
                    maxRSSMiB: maxRSS, show: show
                ) { Output.err($0) }
                for line in report.lines { Output.out(line) }
                findings += report.findings
            }
            return findings == 0 ? 0 : 1
        })
}
