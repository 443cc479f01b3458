import Foundation
import NFCBenchKit
import Testing

@testable import nfcbench

/// One table for every command `nfcbench help` lists: its option table as users rely on it
/// (every option's name and its default), an argv and the value it parses to with the defaults
/// applied, and the documented mistakes with their exact messages and exit status; all in this
/// process (``CLI/interpret(_:environment:)`` and ``InProcessCLI/run(_:environment:)``, the same
/// path `main` takes), no process spawned.
///
/// The `options` column is written out by hand, not read from the tables: renaming an option,
/// adding or removing one, or changing a default fails here, so such a change is made on
/// purpose (add, never rename: an old spelling stays as an alias).
@Suite("Every command: argv → parsed value with defaults applied; every documented mistake; no process")
struct CommandArgvTableTests {
    struct Row: Sendable, CustomStringConvertible {
        /// The command's words.
        var command: [String]
        /// Every option it declares, with its default (nil: none; a flag is off by default).
        var options: [String: OptionValue?]
        /// The words after the command's.
        var argv: [String]
        /// What `argv` gives, by option name (the rest is `options`' defaults).
        var given: [String: OptionValue] = [:]
        /// The positional words it parses to.
        var positionals: [String] = []
        var environment: [String: String] = [:]
        var description: String { (command + argv).joined(separator: " ") }
    }

    /// The trace group, as the commands that trace declare it.
    static let trace: [String: OptionValue?] = ["trace": nil, "no-trace": nil, "redact": nil, "pcapng": nil]

    static func with(_ a: [String: OptionValue?], _ b: [String: OptionValue?]) -> [String: OptionValue?] {
        a.merging(b) { x, _ in x }
    }

    /// `session`'s options and their defaults (two rows use them).
    static let sessionOptions = with(
        [
            "device": nil, "mode": .text("ndef"), "first-read": nil, "timeout": nil, "no-thermal": nil,
            "host-wide": nil, "busy": .text("refuse"), "select-identifiers": nil, "polling": nil,
            "felica-system-codes": nil, "turnover-delay": .duration(.milliseconds(2500)),
            "same-app-begin": .text("kick-out"), "mifare-crc": .text("either"), "type2-probe": .text("iphone"),
            "entitlement": nil, "no-usage-description": nil, "nfc": .text("available"),
            "alert-message": nil, "verbose": nil, "presence-interval": .duration(.milliseconds(250)),
            "json": nil, "quiet": nil,
        ], trace)

    static let rows: [Row] = [
        Row(command: ["version"], options: ["quiet": nil], argv: []),
        Row(
            command: ["tag", "show"], options: ["json": nil, "redact": nil, "quiet": nil],
            argv: ["t4t-uri", "--json", "--redact"], given: ["json": .flag, "redact": .flag], positionals: ["t4t-uri"]),
        Row(
            command: ["session"],
            options: sessionOptions,
            argv: [
                "--device", "sim:tap-uri", "--mode=tag", "--timeout", "2s", "--busy", "queue", "--select-identifiers",
                "D2760000850101,,A0000000031010", "--presence-interval", "100", "--json", "--no-trace",
            ],
            given: [
                "device": .text("sim:tap-uri"), "mode": .text("tag"), "timeout": .duration(.seconds(2)),
                "busy": .text("queue"), "select-identifiers": .list(["D2760000850101", "A0000000031010"]),
                "presence-interval": .duration(.milliseconds(100)), "json": .flag, "no-trace": .flag,
            ]),
        // --device left out: NFCBENCH_DEVICE gives it; a bare --timeout is seconds.
        Row(
            command: ["session"],
            options: sessionOptions,
            argv: ["--timeout", "1.5", "-q"],
            given: ["device": .text("pcsc:0"), "timeout": .duration(.milliseconds(1500)), "quiet": .flag],
            environment: ["NFCBENCH_DEVICE": "pcsc:0"]),
        Row(
            command: ["demo"],
            options: [
                "tag": nil, "bench": .text("auto"), "timeout": .duration(.seconds(2)), "json": nil, "trace": nil,
                "no-trace": nil, "pcapng": nil, "quiet": nil,
            ],
            argv: ["--bench", "pn532", "--timeout", "500ms", "--json", "--trace", "t.jsonl"],
            given: [
                "bench": .text("pn532"), "timeout": .duration(.milliseconds(500)), "json": .flag,
                "trace": .text("t.jsonl"),
            ]),
        Row(
            command: ["walk"],
            options: [
                "profiles": nil, "app-prefixes": nil, "policy": .text("stay"), "express": nil, "gap": nil,
                "wake-latency": nil, "locked": nil, "auth-latency": nil, "sheet-latency": nil, "sweep": nil,
                "app-latency": .duration(.zero), "no-wtx": nil, "device": nil, "uid-seed": nil, "port": nil,
                "json": nil, "trace": nil, "no-trace": nil, "pcapng": nil, "quiet": nil,
            ],
            argv: [
                "--profiles", "transit-gate", "--app-prefixes", "A000000003", "--wake-latency", "400ms", "--gap", "1m",
                "--sweep", "wake=0..800ms/400ms", "--sweep", "sheet=0..500ms/500ms", "--locked", "--no-wtx",
            ],
            given: [
                "profiles": .text("transit-gate"), "app-prefixes": .list(["A000000003"]),
                "wake-latency": .duration(.milliseconds(400)), "gap": .duration(.seconds(60)),
                "sweep": .list(["wake=0..800ms/400ms", "sheet=0..500ms/500ms"]), "locked": .flag, "no-wtx": .flag,
            ]),
        Row(
            command: ["emulate"],
            options: with(
                ["device": nil, "app-prefixes": nil, "uid": nil, "uid-seed": nil, "json": nil, "quiet": nil], trace),
            argv: ["--device", "pn532_uart:/tmp/x", "--app-prefixes", "F0010203040506", "--uid-seed", "7"],
            given: [
                "device": .text("pn532_uart:/tmp/x"), "app-prefixes": .text("F0010203040506"), "uid-seed": .int(7),
            ]),
        Row(
            command: ["profile", "import"], options: ["name": nil, "category": nil, "out": nil, "quiet": nil],
            argv: ["-", "--name", "gate", "--out", "-"], given: ["name": .text("gate"), "out": .text("-")],
            positionals: ["-"]),
        Row(
            command: ["devices"], options: ["json": nil, "names": nil, "quiet": nil], argv: ["--names"],
            given: ["names": .flag]),
        Row(
            command: ["virtual", "card"],
            options: with(
                [
                    "tag": nil, "personality": .text("part3"), "port": nil, "slot": nil, "reversed": nil, "wait": nil,
                    "present-for": nil, "absent-for": nil, "remove-after": nil, "json": nil, "quiet": nil,
                ], trace),
            argv: ["--tag", "t4t-uri", "--slot", "1", "--present-for", "2", "--absent-for", "250ms", "-q"],
            given: [
                "tag": .text("t4t-uri"), "slot": .text("1"), "present-for": .duration(.seconds(2)),
                "absent-for": .duration(.milliseconds(250)), "quiet": .flag,
            ]),
        // dump's old --wait is the same option as --timeout.
        Row(
            command: ["dump"],
            options: with(
                ["device": nil, "out": nil, "timeout": .duration(.seconds(10)), "json": nil, "quiet": nil], trace),
            argv: ["--device", "sim:tag:x.json", "--wait", "3", "--out", "-", "--redact"],
            given: [
                "device": .text("sim:tag:x.json"), "timeout": .duration(.seconds(3)), "out": .text("-"),
                "redact": .flag,
            ]),
        Row(
            command: ["poll"],
            options: with(
                ["device": nil, "once": nil, "timeout": .duration(.seconds(2)), "json": nil, "quiet": nil], trace),
            argv: ["--device", "pcsc:0", "--once", "--json"],
            given: ["device": .text("pcsc:0"), "once": .flag, "json": .flag]
        ),
        Row(
            command: ["apdu"],
            options: with(
                [
                    "device": nil, "script": nil, "allow-write": nil, "timeout": .duration(.seconds(10)), "json": nil,
                    "quiet": nil,
                ], trace),
            argv: ["--device", "d", "00A4040007D276000085010100", "00 B0 00 00 0F"], given: ["device": .text("d")],
            positionals: ["00A4040007D276000085010100", "00 B0 00 00 0F"]),
        Row(
            command: ["raw"],
            options: with(
                ["device": nil, "allow-write": nil, "timeout": .duration(.seconds(10)), "json": nil, "quiet": nil],
                trace),
            argv: ["--device", "d", "30 04", "A2 04 01 02 03 04", "--allow-write", "--timeout", "1m"],
            given: ["device": .text("d"), "allow-write": .flag, "timeout": .duration(.seconds(60))],
            positionals: ["30 04", "A2 04 01 02 03 04"]),
        Row(
            command: ["measure"],
            options: [
                "device": nil, "count": nil, "presence-interval": nil, "virtual-card": nil, "port": .int(35963),
                "presence": .text("events"), "probe-interval": .duration(.milliseconds(100)),
                "timeout": .duration(.seconds(30)), "json": nil, "trace": nil, "no-trace": nil, "pcapng": nil,
                "quiet": nil,
            ],
            argv: ["apdu", "--device", "sim:tap-uri", "--count", "3", "--presence-interval", "50ms"],
            given: [
                "device": .text("sim:tap-uri"), "count": .int(3), "presence-interval": .duration(.milliseconds(50)),
            ],
            positionals: ["apdu"]),
        Row(
            command: ["virtual", "pn532"],
            options: with(
                [
                    "pty": nil, "tag": nil, "reader": nil, "timing": .text("none"), "present-after": .duration(.zero),
                    "present-for": nil, "absent-for": nil, "save": nil, "json": nil, "quiet": nil,
                ], trace),
            argv: ["--pty", "-", "--tag", "ntag215-uri", "--timing", "real", "--present-after", "0.5"],
            given: [
                "pty": .text("-"), "tag": .text("ntag215-uri"), "timing": .text("real"),
                "present-after": .duration(.milliseconds(500)),
            ]),
        Row(
            command: ["write"],
            options: [
                "ndef": nil, "message": nil, "lock": nil, "yes-i-understand-this-is-irreversible": nil, "device": nil,
                "dry-run": nil, "backup": nil, "timeout": .duration(.seconds(10)), "json": nil, "trace": nil,
                "no-trace": nil, "redact": nil, "quiet": nil,
            ],
            argv: ["--device", "d", "--ndef", "uri:https://a.b", "--ndef", "text:hi", "--dry-run", "--json"],
            given: [
                "device": .text("d"), "ndef": .list(["uri:https://a.b", "text:hi"]), "dry-run": .flag, "json": .flag,
            ]),
        Row(
            command: ["format"],
            options: [
                "ndef-format": nil, "size": nil, "device": nil, "dry-run": nil, "backup": nil,
                "timeout": .duration(.seconds(10)), "json": nil, "trace": nil, "no-trace": nil, "redact": nil,
                "quiet": nil,
            ],
            argv: ["--device", "sim:tap-uri", "--backup", "-", "--timeout", "2"],
            given: ["device": .text("sim:tap-uri"), "backup": .text("-"), "timeout": .duration(.seconds(2))]),
        Row(
            command: ["restore"],
            options: [
                "include-lock-bits": nil, "include-config": nil, "any-uid": nil, "device": nil, "dry-run": nil,
                "backup": nil, "timeout": .duration(.seconds(10)), "json": nil, "trace": nil, "no-trace": nil,
                "redact": nil, "quiet": nil,
            ],
            argv: ["--device", "d", "dump.json", "--dry-run", "--include-lock-bits", "--any-uid"],
            given: ["device": .text("d"), "dry-run": .flag, "include-lock-bits": .flag, "any-uid": .flag],
            positionals: ["dump.json"]),
        Row(
            command: ["lock"],
            options: [
                "yes-i-understand-this-is-irreversible": nil, "device": nil, "dry-run": nil, "backup": nil,
                "timeout": .duration(.seconds(10)), "json": nil, "trace": nil, "no-trace": nil, "redact": nil,
                "quiet": nil,
            ],
            argv: ["--device", "sim:tap-uri", "--yes-i-understand-this-is-irreversible"],
            given: ["device": .text("sim:tap-uri"), "yes-i-understand-this-is-irreversible": .flag]),
        Row(
            command: ["doctor"],
            options: ["device": nil, "json": nil, "root": .text("/"), "as-uid": nil, "quiet": nil],
            argv: ["--device", "pn532_uart:/dev/ttyUSB0", "--json", "--as-uid", "1000"],
            given: ["device": .text("pn532_uart:/dev/ttyUSB0"), "json": .flag, "as-uid": .int(1000)]),
        Row(
            command: ["bench", "session"],
            options: [
                "inputs": .int(2_000_000), "sessions": .int(10000), "seed": .int(1_313_227_586), "json": nil,
                "quiet": nil,
            ],
            argv: ["--inputs", "10", "--sessions", "2", "--json"],
            given: ["inputs": .int(10), "sessions": .int(2), "json": .flag]),
        Row(
            command: ["bench", "ndef-fuzz"], options: ["seed": .int(1), "count": .int(1_000_000), "quiet": nil],
            argv: ["--count", "10"], given: ["count": .int(10)]),
        Row(
            command: ["bench", "all"],
            options: [
                "rounds": .int(7), "idle-seconds": .duration(.seconds(10)), "count": .int(3000), "json": nil,
                "allow-debug": nil, "quiet": nil,
            ],
            argv: ["--rounds", "1", "--idle-seconds", "500ms", "--allow-debug"],
            given: ["rounds": .int(1), "idle-seconds": .duration(.milliseconds(500)), "allow-debug": .flag]),
        Row(
            command: ["bench", "fuzz"],
            options: [
                "target": nil, "count": .int(1_000_000), "seed": .int(1), "from": .int(0), "input": nil,
                "hang-seconds": .duration(.seconds(10)), "max-rss-mb": .int(512), "show": nil, "quiet": nil,
            ],
            argv: ["--target", "ndef", "--count", "5", "--hang-seconds", "2"],
            given: ["target": .text("ndef"), "count": .int(5), "hang-seconds": .duration(.seconds(2))]),
        Row(
            command: ["bench", "explore"],
            options: [
                "app": .text("reference"), "runs": .int(20000), "seed": .int(1), "depth": .int(0), "json": nil,
                "quiet": nil,
            ],
            argv: ["--app", "busyloop", "--runs", "100"], given: ["app": .text("busyloop"), "runs": .int(100)]),
        Row(
            command: ["conformance"],
            options: [
                "suite": nil, "app": .text("reference"), "thermal": nil, "explore": nil, "seed": .int(1),
                "runs": .int(10000), "depth": .int(2), "budget": nil, "save": nil, "json": nil, "quiet": nil,
            ],
            argv: ["--explore", "--seed", "2", "--budget", "10s", "--save", "out"],
            given: ["explore": .flag, "seed": .int(2), "budget": .duration(.seconds(10)), "save": .text("out")]),
        Row(
            command: ["new-app"], options: ["name": nil, "quiet": nil], argv: ["MyApp", "--name", "Badge"],
            given: ["name": .text("Badge")], positionals: ["MyApp"]),
        Row(
            command: ["check", "equivalence"],
            options: [
                "tags": nil, "modes": .list(["ndef", "ndef-rw", "tag", "write", "format"]),
                "devices": .list(["sim", "pcsc", "acr122u", "pn532"]), "time-limit": .duration(.seconds(3)),
                "traces": nil, "json": nil, "quiet": nil,
            ],
            argv: ["--tags", "t4t-uri,ntag215-uri", "--devices", "sim,pn532"],
            given: ["tags": .list(["t4t-uri", "ntag215-uri"]), "devices": .list(["sim", "pn532"])]),
        Row(
            command: ["trace", "export"], options: ["pcapng": nil, "redact": nil, "json": nil, "quiet": nil],
            argv: ["a.jsonl", "--pcapng", "a.pcapng", "--redact"],
            given: ["pcapng": .text("a.pcapng"), "redact": .flag], positionals: ["a.jsonl"]),
        Row(
            command: ["trace", "show"], options: ["verbose": nil, "quiet": nil], argv: ["--verbose", "--", "-"],
            given: ["verbose": .flag], positionals: ["-"]),
        Row(
            command: ["trace", "diff"], options: ["times": nil, "json": nil, "quiet": nil],
            argv: ["a", "b", "--times"], given: ["times": .flag], positionals: ["a", "b"]),
        Row(
            command: ["trace", "plot"], options: ["svg": nil, "quiet": nil], argv: ["a", "--svg", "-"],
            given: ["svg": .text("-")], positionals: ["a"]),
        Row(
            command: ["completion"], options: ["quiet": nil], argv: ["zsh"], positionals: ["zsh"]),
        Row(command: ["man"], options: ["quiet": nil], argv: []),
    ]

    @Test("argv parses to the value it means: every declared option by name, the defaults applied", arguments: rows)
    func parses(_ row: Row) throws {
        let (command, parsed) = try #require(
            InProcessCLI.parsed(row.command + row.argv, environment: row.environment),
            "\(row): \(CLI.interpret(row.command + row.argv, environment: row.environment))")
        #expect(command.path == row.command)
        // The option table's names: none renamed, added or dropped without this table saying so.
        #expect(parsed.declared == Set(row.options.keys), "\(row)")
        #expect(Set(command.options.map(\.name)) == Set(row.options.keys))
        // Each option's default, as the table declares it and as the parsed value applies it.
        for o in command.options {
            #expect(o.defaultValue == row.options[o.name] ?? nil, "\(row.command) --\(o.name)'s default")
        }
        for (name, defaultValue) in row.options {
            let expected = row.given[name] ?? defaultValue
            #expect(parsed.given[name] ?? parsed.defaults[name] == expected, "\(row): --\(name)")
        }
        #expect(parsed.given == row.given, "\(row)")
        #expect(parsed.positionals == row.positionals, "\(row)")
    }

    @Test("Every command `nfcbench help` lists has a row, and every row is a command it lists")
    func everyListedCommand() throws {
        let overview = try #require(InProcessCLI.text(["help"]))
        let listing = try #require(overview.components(separatedBy: "COMMANDS:\n").last)
        let listed = listing.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  ") else { return nil }
            return line.dropFirst(2).components(separatedBy: "  ").first
        }
        #expect(listed.count == Registry.commands.count, "\(listed)")
        #expect(Set(listed) == Set(Self.rows.map { $0.command.joined(separator: " ") }))
    }

    static let device =
        "--device D is required (pcsc:READER, pn532_uart:PATH, sim:SCENARIO…; see 'nfcbench devices'), or set NFCBENCH_DEVICE"

    /// A documented mistake: argv and its message (what follows `error: `); each exits 64.
    static let mistakes: [(argv: [String], message: String)] = [
        // A mistyped command gets the nearest name.
        (["sesion"], "unknown command 'sesion' (did you mean 'session'?)"),
        (["sesion", "--device", "sim:tap-uri"], "unknown command 'sesion' (did you mean 'session'?)"),
        (["walkk"], "unknown command 'walkk' (did you mean 'walk'?)"),
        (["bench", "fuz"], "unknown command 'nfcbench bench fuz' (did you mean 'fuzz'?)"),
        (["frobnicate"], "unknown command 'frobnicate'"),
        // A mistyped subcommand, in every group: two letters swapped count as one slip.
        (["tag", "shwo"], "unknown command 'nfcbench tag shwo' (did you mean 'show'?)"),
        (["trace", "shwo", "t.jsonl"], "unknown command 'nfcbench trace shwo' (did you mean 'show'?)"),
        (["trace", "exprot"], "unknown command 'nfcbench trace exprot' (did you mean 'export'?)"),
        (["virtual", "crad"], "unknown command 'nfcbench virtual crad' (did you mean 'card'?)"),
        (["virtual", "pn352"], "unknown command 'nfcbench virtual pn352' (did you mean 'pn532'?)"),
        (["check", "equivalnece"], "unknown command 'nfcbench check equivalnece' (did you mean 'equivalence'?)"),
        (["profile", "improt"], "unknown command 'nfcbench profile improt' (did you mean 'import'?)"),
        (["bench", "sesion"], "unknown command 'nfcbench bench sesion' (did you mean 'session'?)"),
        (
            ["measure", "apud", "--device", "d"],
            "WHAT is one of detect, apdu, read, removal, not 'apud'; did you mean 'apdu'?"
        ),
        // A mistyped option: the nearest spelling the command takes.
        (
            ["session", "--device", "sim:tap-uri", "--timout", "3"],
            "unknown option '--timout' (did you mean '--timeout'?)"
        ),
        (["dump", "--device", "d", "--ot", "x"], "unknown option '--ot' (did you mean '--out'?)"),
        (["measure", "apdu", "--device", "d", "--cuont", "3"], "unknown option '--cuont' (did you mean '--count'?)"),
        (["tag", "show", "x", "--jsn"], "unknown option '--jsn' (did you mean '--json'?)"),
        (["walk", "--profile", "x"], "unknown option '--profile' (did you mean '--profiles'?)"),
        (["write", "--device", "d", "--ndf", "text:x"], "unknown option '--ndf' (did you mean '--ndef'?)"),
        // A single-value option given twice, under one spelling or two.
        (["session", "--device", "a", "--device", "b"], "--device is given twice: give it once"),
        (["poll", "--device", "d", "--timeout", "1", "--timeout", "2"], "--timeout is given twice: give it once"),
        (
            ["dump", "--device", "a", "--wait", "1", "--timeout", "2"],
            "--timeout and --wait are the same option: give it once"
        ),
        (["conformance", "--app", "reference", "--app", "busyloop"], "--app is given twice: give it once"),
        // A flag given twice, as a single-value option is (--ndef, a list of records, repeats).
        (["session", "--device", "d", "--first-read", "--first-read"], "--first-read is given twice: give it once"),
        (["tag", "show", "x", "-q", "--quiet"], "--quiet and -q are the same option: give it once"),
        (
            ["write", "--device", "d", "--ndef", "text:a", "--ndef", "text:b", "--dry-run", "--dry-run"],
            "--dry-run is given twice: give it once"
        ),
        // Two outputs on standard output: --json with an output file that is standard output.
        (
            ["session", "--device", "d", "--trace", "-", "--json"],
            "--json and --trace - both write to standard output: give --trace a file name, or leave out --json"
        ),
        (
            ["write", "--device", "d", "--ndef", "text:x", "--json", "--backup", "-"],
            "--json and --backup - both write to standard output: give --backup a file name, or leave out --json"
        ),
        (
            ["virtual", "pn532", "--pty", "p", "--tag", "t", "--save", "-", "--json"],
            "--json and --save - both write to standard output: give --save a file name, or leave out --json"
        ),
        (
            ["poll", "--device", "d", "--json", "--trace", "/dev/stdout"],
            "--json and --trace /dev/stdout both write to standard output: give --trace a file name, or leave out --json"
        ),
        // A bad duration: one message per kind, the option's bare unit named.
        (
            ["session", "--device", "d", "--timeout", "2x"],
            "--timeout takes a duration more than 0 such as 500ms, 2s or 1m; a bare number is seconds, not '2x'"
        ),
        (
            ["session", "--device", "d", "--timeout", "0"],
            "--timeout takes a duration more than 0 such as 500ms, 2s or 1m; a bare number is seconds, not '0'"
        ),
        (
            ["poll", "--device", "d", "--timeout", "soon"],
            "--timeout takes a duration more than 0 such as 500ms, 2s or 1m; a bare number is seconds, not 'soon'"
        ),
        (["walk", "--wake-latency", "5"], "--wake-latency needs a unit: 5ms or 5s (or us, m), not '5'"),
        (["conformance", "--explore", "--budget", "5"], "--budget needs a unit: 5ms or 5s (or us, m), not '5'"),
        (
            ["virtual", "card", "--tag", "t", "--present-for", "1m2"],
            "--present-for takes a duration such as 500ms, 2s or 1m; a bare number is seconds, not '1m2'"
        ),
        // --device left out (and no NFCBENCH_DEVICE), on every command that needs a reader.
        (["session"], device), (["dump"], device), (["poll"], device), (["apdu", "00A4040000"], device),
        (["raw", "30 04"], device), (["measure", "apdu"], device), (["write", "--ndef", "text:x"], device),
        (["format"], device), (["restore", "f.json"], device),
        (["lock", "--yes-i-understand-this-is-irreversible"], device), (["emulate"], device),
    ]

    @Test("Every documented mistake: its exact message on stderr, the usage after it, nothing on stdout, exit 64")
    func mistakes() async {
        for (argv, message) in Self.mistakes {
            #expect(InProcessCLI.mistake(argv) == message, "\(argv)")
            let r = await InProcessCLI.run(argv, environment: [:])
            #expect(r.status == 64, "\(argv)")
            let first = r.stderr.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init)
            #expect(first == "error: \(message)", "\(argv): \(r.stderr)")
            #expect(r.stderr.contains("\nUSAGE:"), "\(argv): \(r.stderr)")
            #expect(r.stdout.isEmpty, "\(argv): \(r.stdout)")
        }
    }
}
