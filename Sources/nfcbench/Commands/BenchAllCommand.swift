import Foundation
import NFCBenchKit
import NFCTrace

/// `nfcbench bench all`: every comparison of issue 15 in one go, interleaved round by round,
/// with medians and ratios. Figures come from whole processes (spawned and reaped here) and
/// from the commands' own JSON; nothing is timed inside a test.
enum BenchAllCommand {
    static let command = Command(
        path: ["bench", "all"],
        abstract: "Run every benchmark comparison interleaved (release build): medians and ratios",
        options: [
            OptionSpec("rounds", .int(1...1000), help: "rounds", default: .int(7)),
            OptionSpec(
                "idle-seconds", .duration(bare: .seconds, moreThanZero: false), help: "how long each idle session runs",
                default: .duration(.seconds(10))),
            OptionSpec("count", .int(1...10_000_000), help: "APDUs per measure apdu run", default: .int(3000)),
            OutputOptions.json("one JSON object per figure"),
            OptionSpec("allow-debug", .flag, help: "run from a debug build (figures then say nothing of the release)"),
        ],
        discussion: """
            Runs, in one go and round by round so that a drifting machine hits every figure alike:
              start-up      nfcbench version vs a C program printing the same versions
                            (scripts/version-c.c), 3 pairs a round; and from spawn to nfc_open /
                            SCardEstablishContext of dump, for us and for nfc-mfultralight, timed
                            by an LD_PRELOAD probe (scripts/exec-probe.c)
              dump          whole-process NTAG213/215/216 dump through libnfc's pn532_uart vs
                            nfc-mfultralight r, on virtual PN532s with --timing none and real
              NDEF read    whole-process session --first-read (to its 204) of the FeliCa
                            Lite-S vs nfc-read-forum-tag3 -o, on a virtual PN532 with --timing real
              measure apdu  APDUs/s of measure apdu vs a C SCardTransmit loop
                            (scripts/measure-vs-c-transmit.c) on the same vpcd card, eight
                            pairs a round in counterbalanced order (ours C C ours …, then
                            C ours ours C …); a round's ratio is its mean rates' ratio; then
                            eight pairs of the C loop against a byte-identical copy of itself,
                            the A/A control: how far apart two identical clients land here,
                            unpinned, in the same run (its "ours" is the copy); under
                            its own private pcscd, two pairs a round with client, pcscd and
                            card pinned to one CPU, and two with the client pinned to another
                            CPU than pcscd and the card (the two placements the scheduler
                            picks between, without the luck)
              session       machine inputs/s and the 10,000-session random walk (bench session)
              conformance   the built-in suite, whole process
              explore       the conformance explorer's runs per CPU-second on the reference
                            app (bench explore --runs 5000, seed 1)
            then the CPU an idle session spends (sim:no-tag and an empty PC/SC reader) over
            --idle-seconds. Prints each figure's median, the other side's, their ratio and the goal;
            "runs" is how many values a median is of: rounds for the measure apdu rows (each
            round the mean of its pairs, their ratio the median of the rounds' ratios, which need
            not equal ours ÷ theirs), single runs for the others.
            Exit status: 0 when every goal is met, 1 when one is not (named on stderr).

            Needs cc, libnfc-dev, libpcsclite-dev, libnfc-bin (nfc-mfultralight,
            nfc-read-forum-tag3) and pcscd with vsmartcard-vpcd; without a pcscd offering the
            vpcd reader it runs itself inside
            scripts/with-pcscd. Build it first: ./bench install (static release).
            """,
        run: { o in
            let rounds = o.int("rounds")!
            let idle = o.duration("idle-seconds")!
            let count = o.int("count")!
            let json = o.flag("json")
            let allowDebug = o.flag("allow-debug")
            #if DEBUG
                guard allowDebug else {
                    // Name the release binary when ./bench install has made it: a debug build
                    // first on PATH (the README's .build/debug) would otherwise answer again.
                    let exe = URL(fileURLWithPath: DataLocation.executablePath())
                    let release = exe.deletingLastPathComponent().deletingLastPathComponent()
                        .deletingLastPathComponent().appendingPathComponent("release/nfcbench").path
                    let run =
                        FileManager.default.isExecutableFile(atPath: release)
                        ? "run \(release) bench all" : "./bench install, then its bin/nfcbench bench all"
                    throw CLIError.usage("bench all measures the release build: \(run) (or --allow-debug)")
                }
            #endif
            if ProcessInfo.processInfo.environment["NFCBENCH_PCSCD"] != "private", !PrivatePCSCD.vpcdReaderAvailable() {
                Output.err("bench all: no pcscd offers the vpcd reader here: running under a private pcscd")
                switch try await PrivatePCSCD.runUnderPrivatePCSCD() {
                case .ran(let status): return status
                case .unavailable(let why):
                    throw CLIError.unavailable("no pcscd with the vpcd reader, and no private one: \(why)")
                }
            }
            let bench = try BenchAll(rounds: rounds, idle: idle, count: count)
            let rows = try await onBenchThread { () throws -> [BenchAll.Row] in
                defer { bench.stop() }
                return try bench.run()
            }
            if json {
                for r in rows { Output.out(JSONValue.object(r.json).serialized) }
            } else {
                Output.out(bench.header)
                Output.out(BenchAll.table(rows))
            }
            let missed = rows.filter { $0.met == false }.map(\.name)
            if !missed.isEmpty {
                Output.err(
                    "bench all: \(missed.count) goal\(missed.count == 1 ? "" : "s") not met (exit 1): \(missed.joined(separator: "; "))"
                )
            }
            return missed.isEmpty ? 0 : 1
        })
}
