import Foundation
import Testing

@testable import nfcbench

/// The command line without a process: argv → what it asks for (``CLI/interpret(_:environment:)``),
/// for every command and every documented kind of mistake, with its message and exit status.
/// The option tables are the only place an option is declared: usage, help, "did you mean",
/// completion and the man page are checked against them here.
@Suite("The command line, table-driven: argv → parsed value or mistake, no process")
struct CommandLineTableTests {
    /// One argv and what it parses to: the command's words, each option given (by its name,
    /// with its value) and the positional words.
    struct Row: Sendable, CustomStringConvertible {
        var argv: [String]
        var command: [String]
        var given: [String: OptionValue]
        var positionals: [String] = []
        var environment: [String: String] = [:]
        var description: String { argv.joined(separator: " ") }
    }

    static let rows: [Row] = [
        Row(argv: ["version"], command: ["version"], given: [:]),
        Row(
            argv: ["tag", "show", "t4t-uri", "--json"], command: ["tag", "show"], given: ["json": .flag],
            positionals: ["t4t-uri"]),
        Row(
            argv: [
                "session", "--device", "sim:tap-uri", "--mode=tag", "--timeout", "2s", "--busy", "queue",
                "--select-identifiers", "D2760000850101,,A0000000031010", "--presence-interval", "100", "--json",
                "--no-trace",
            ],
            command: ["session"],
            given: [
                "device": .text("sim:tap-uri"), "mode": .text("tag"), "timeout": .duration(.seconds(2)),
                "busy": .text("queue"), "select-identifiers": .list(["D2760000850101", "A0000000031010"]),
                "presence-interval": .duration(.milliseconds(100)), "json": .flag, "no-trace": .flag,
            ]),
        Row(
            argv: [
                "session", "--device", "d", "--turnover-delay", "0", "--mifare-crc", "omitted", "--entitlement", "ndef",
                "--nfc", "ineligible", "--no-usage-description",
            ],
            command: ["session"],
            given: [
                "device": .text("d"), "turnover-delay": .duration(.zero), "mifare-crc": .text("omitted"),
                "entitlement": .list(["ndef"]), "nfc": .text("ineligible"), "no-usage-description": .flag,
            ]),
        Row(
            argv: ["session", "--timeout", "1.5"], command: ["session"],
            given: ["device": .text("pcsc:0"), "timeout": .duration(.milliseconds(1500))],
            environment: ["NFCBENCH_DEVICE": "pcsc:0"]),
        Row(
            argv: ["demo", "--bench", "pn532", "--timeout", "500ms", "--json", "--trace", "t.jsonl"], command: ["demo"],
            given: [
                "bench": .text("pn532"), "timeout": .duration(.milliseconds(500)), "json": .flag,
                "trace": .text("t.jsonl"),
            ]),
        Row(
            argv: [
                "walk", "--profiles", "transit-gate", "--app-prefixes", "A000000003", "--wake-latency", "400ms",
                "--gap", "1m", "--locked", "--no-wtx",
            ],
            command: ["walk"],
            given: [
                "profiles": .text("transit-gate"), "app-prefixes": .list(["A000000003"]),
                "wake-latency": .duration(.milliseconds(400)), "gap": .duration(.seconds(60)), "locked": .flag,
                "no-wtx": .flag,
            ]),
        Row(
            argv: ["walk", "--device", "pcsc:Virtual PCD 00 00", "--port", "35964"], command: ["walk"],
            given: ["device": .text("pcsc:Virtual PCD 00 00"), "port": .int(35964)]),
        Row(
            argv: [
                "emulate", "--device", "pn532_uart:/tmp/x", "--app-prefixes", "F0010203040506", "--uid", "085A3C91",
            ],
            command: ["emulate"],
            given: [
                "device": .text("pn532_uart:/tmp/x"), "app-prefixes": .text("F0010203040506"), "uid": .text("085A3C91"),
            ]),
        Row(
            argv: ["profile", "import", "-", "--name", "gate", "--out", "-"], command: ["profile", "import"],
            given: ["name": .text("gate"), "out": .text("-")], positionals: ["-"]),
        Row(argv: ["devices", "--json"], command: ["devices"], given: ["json": .flag]),
        Row(
            argv: [
                "virtual", "card", "--tag", "t4t-uri", "--slot", "1", "--present-for", "2", "--absent-for", "250ms",
                "-q",
            ],
            command: ["virtual", "card"],
            given: [
                "tag": .text("t4t-uri"), "slot": .text("1"), "present-for": .duration(.seconds(2)),
                "absent-for": .duration(.milliseconds(250)), "quiet": .flag,
            ]),
        Row(
            argv: ["dump", "--device", "sim:tag:x.json", "--wait", "3", "--out", "-", "--redact"], command: ["dump"],
            given: [
                "device": .text("sim:tag:x.json"), "timeout": .duration(.seconds(3)), "out": .text("-"),
                "redact": .flag,
            ]),
        Row(
            argv: ["dump", "--device", "d", "--timeout", "1m"], command: ["dump"],
            given: ["device": .text("d"), "timeout": .duration(.seconds(60))]),
        Row(
            argv: ["measure", "apdu", "--device", "sim:tap-uri", "--count", "3", "--presence-interval", "50ms"],
            command: ["measure"],
            given: [
                "device": .text("sim:tap-uri"), "count": .int(3), "presence-interval": .duration(.milliseconds(50)),
            ],
            positionals: ["apdu"]),
        Row(
            argv: [
                "virtual", "pn532", "--pty", "-", "--tag", "ntag215-uri", "--timing", "real", "--present-after", "0.5",
            ],
            command: ["virtual", "pn532"],
            given: [
                "pty": .text("-"), "tag": .text("ntag215-uri"), "timing": .text("real"),
                "present-after": .duration(.milliseconds(500)),
            ]),
        Row(
            argv: ["write", "--device", "sim:tap-uri", "--ndef", "uri:https://example.com", "--dry-run", "--json"],
            command: ["write"],
            given: [
                "device": .text("sim:tap-uri"), "ndef": .list(["uri:https://example.com"]), "dry-run": .flag,
                "json": .flag,
            ]),
        Row(
            argv: ["format", "--device", "sim:tap-uri", "--backup", "-", "--timeout", "2"], command: ["format"],
            given: ["device": .text("sim:tap-uri"), "backup": .text("-"), "timeout": .duration(.seconds(2))]),
        Row(
            argv: ["lock", "--device", "sim:tap-uri", "--yes-i-understand-this-is-irreversible"], command: ["lock"],
            given: ["device": .text("sim:tap-uri"), "yes-i-understand-this-is-irreversible": .flag]),
        Row(
            argv: ["doctor", "--device", "pn532_uart:/dev/ttyUSB0", "--json", "--as-uid", "1000"], command: ["doctor"],
            given: ["device": .text("pn532_uart:/dev/ttyUSB0"), "json": .flag, "as-uid": .int(1000)]),
        Row(
            argv: ["bench", "session", "--inputs", "10", "--sessions", "2", "--seed", "7", "--json"],
            command: ["bench", "session"],
            given: ["inputs": .int(10), "sessions": .int(2), "seed": .int(7), "json": .flag]),
        Row(
            argv: ["bench", "ndef-fuzz", "--seed", "3", "--count", "10"], command: ["bench", "ndef-fuzz"],
            given: ["seed": .int(3), "count": .int(10)]),
        Row(
            argv: ["bench", "all", "--rounds", "1", "--idle-seconds", "500ms", "--allow-debug"],
            command: ["bench", "all"],
            given: ["rounds": .int(1), "idle-seconds": .duration(.milliseconds(500)), "allow-debug": .flag]),
        Row(
            argv: ["bench", "fuzz", "--target", "ndef", "--count", "5", "--hang-seconds", "2"],
            command: ["bench", "fuzz"],
            given: ["target": .text("ndef"), "count": .int(5), "hang-seconds": .duration(.seconds(2))]),
        Row(
            argv: ["bench", "explore", "--app", "reference", "--runs", "100"], command: ["bench", "explore"],
            given: ["app": .text("reference"), "runs": .int(100)]),
        Row(
            argv: ["conformance", "--explore", "--seed", "2", "--budget", "10s", "--save", "out"],
            command: ["conformance"],
            given: ["explore": .flag, "seed": .int(2), "budget": .duration(.seconds(10)), "save": .text("out")]),
        Row(argv: ["conformance", "--thermal"], command: ["conformance"], given: ["thermal": .flag]),
        Row(
            argv: ["new-app", "MyApp", "--name", "Badge"], command: ["new-app"], given: ["name": .text("Badge")],
            positionals: ["MyApp"]),
        Row(
            argv: [
                "check", "equivalence", "--tags", "t4t-uri,ntag215-uri", "--modes", "ndef", "--devices", "sim,pn532",
                "--time-limit", "3",
            ],
            command: ["check", "equivalence"],
            given: [
                "tags": .list(["t4t-uri", "ntag215-uri"]), "modes": .list(["ndef"]),
                "devices": .list(["sim", "pn532"]),
                "time-limit": .duration(.seconds(3)),
            ]),
        Row(
            argv: ["trace", "export", "a.jsonl", "--pcapng", "a.pcapng", "--redact"], command: ["trace", "export"],
            given: ["pcapng": .text("a.pcapng"), "redact": .flag], positionals: ["a.jsonl"]),
        Row(
            argv: ["trace", "show", "--verbose", "--", "-"], command: ["trace", "show"], given: ["verbose": .flag],
            positionals: ["-"]),
        Row(
            argv: ["trace", "diff", "a", "b", "--times", "--json"], command: ["trace", "diff"],
            given: ["times": .flag, "json": .flag], positionals: ["a", "b"]),
        Row(
            argv: ["trace", "plot", "a", "--svg", "-"], command: ["trace", "plot"], given: ["svg": .text("-")],
            positionals: ["a"]),
        Row(argv: ["completion", "bash"], command: ["completion"], given: [:], positionals: ["bash"]),
        Row(argv: ["man"], command: ["man"], given: [:]),
        Row(
            argv: ["poll", "--device", "pcsc:0", "--once", "--timeout", "500ms", "--json"], command: ["poll"],
            given: ["device": .text("pcsc:0"), "once": .flag, "timeout": .duration(.milliseconds(500)), "json": .flag]),
        Row(
            argv: ["apdu", "--device", "d", "00A4040007D276000085010100", "00 B0 00 00 0F"], command: ["apdu"],
            given: ["device": .text("d")], positionals: ["00A4040007D276000085010100", "00 B0 00 00 0F"]),
        Row(
            argv: ["apdu", "--device", "d", "--script", "s.apdu", "--allow-write", "--json"], command: ["apdu"],
            given: ["device": .text("d"), "script": .text("s.apdu"), "allow-write": .flag, "json": .flag]),
        Row(
            argv: ["raw", "--device", "d", "30 04", "A2 04 01 02 03 04", "--allow-write"], command: ["raw"],
            given: ["device": .text("d"), "allow-write": .flag], positionals: ["30 04", "A2 04 01 02 03 04"]),
        Row(
            argv: ["restore", "--device", "d", "dump.json", "--dry-run", "--include-lock-bits", "--any-uid"],
            command: ["restore"],
            given: ["device": .text("d"), "dry-run": .flag, "include-lock-bits": .flag, "any-uid": .flag],
            positionals: ["dump.json"]),
        Row(
            argv: ["write", "--device", "d", "--ndef", "uri:https://a.b", "--ndef", "text:hi", "--dry-run", "--json"],
            command: ["write"],
            given: [
                "device": .text("d"), "ndef": .list(["uri:https://a.b", "text:hi"]), "dry-run": .flag, "json": .flag,
            ]),
        Row(
            argv: ["write", "--device", "d", "--message", "show.json"], command: ["write"],
            given: ["device": .text("d"), "message": .text("show.json")]),
    ]

    @Test("Every command's argv parses to the value it means", arguments: rows)
    func parses(_ row: Row) throws {
        let (command, parsed) = try #require(
            InProcessCLI.parsed(row.argv, environment: row.environment),
            "\(row) did not parse: \(CLI.interpret(row.argv, environment: row.environment))")
        #expect(command.path == row.command)
        #expect(parsed.given == row.given)
        #expect(parsed.positionals == row.positionals)
    }

    @Test("Every command has a row above")
    func everyCommandCovered() {
        let covered = Set(Self.rows.map(\.command))
        for c in Registry.commands { #expect(covered.contains(c.path), "no row for \(c.name)") }
    }

    /// The reference apps `--app` takes, from conformance's table.
    static var appNames: [String] {
        let app = Registry.commands.first { $0.path == ["conformance"] }?.options.first { $0.name == "app" }
        guard case .choice(let names)? = app?.kind else { return [] }
        return names
    }

    /// A mistake: argv, the whole message (the first line after `error: `).
    static let mistakes: [(argv: [String], message: String)] = [
        (["sesion"], "unknown command 'sesion' (did you mean 'session'?)"),
        (["frobnicate"], "unknown command 'frobnicate'"),
        (["bench", "fuz"], "unknown command 'nfcbench bench fuz' (did you mean 'fuzz'?)"),
        (["bench"], "'nfcbench bench' needs a command"),
        ([], "missing command"),
        (["session", "--bogus"], "unknown option '--bogus'"),
        (
            ["session", "--device", "sim:tap-uri", "--timout", "3"],
            "unknown option '--timout' (did you mean '--timeout'?)"
        ),
        (["session", "--jsn"], "unknown option '--jsn' (did you mean '--json'?)"),
        (["version", "--bogus"], "unknown option '--bogus'"),
        (
            ["session"],
            "--device D is required (pcsc:READER, pn532_uart:PATH, sim:SCENARIO…; see 'nfcbench devices'), or set NFCBENCH_DEVICE"
        ),
        (
            ["write", "--ndef", "text:x"],
            "--device D is required (pcsc:READER, pn532_uart:PATH, sim:SCENARIO…; see 'nfcbench devices'), or set NFCBENCH_DEVICE"
        ),
        (["write", "--device", "d"], "--ndef SPEC is required, or give --message FILE"),
        (
            ["write", "--device", "d", "--ndef", "text:x", "--message", "m.json"],
            "give --ndef SPEC or --message FILE, not both"
        ),
        (["apdu", "--device", "d"], "say what to send: apdu --device D HEX… or --script FILE"),
        (["apdu", "--device", "d", "--script", "s", "00A40400"], "give HEX… or --script FILE, not both"),
        (
            ["apdu", "--device", "d", "00A4040000", "00D6000001FF"],
            "APDU 2: UPDATE BINARY (INS D6) changes the card: add --allow-write to send it (nothing was sent)"
        ),
        (
            ["raw", "--device", "d", "30 04", "A2 04 00 00 00 00", "1B FF FF FF FF"],
            "frame 2: WRITE (A2) writes a page: add --allow-write to send it (nothing was sent); 1 more like it"
        ),
        (["raw", "--device", "d"], "say what to send: raw --device D HEX… (30 04 reads page 4)"),
        (["restore", "--device", "d"], "say what to restore: restore --device D FILE"),
        (["session", "--device", "a", "--device", "b"], "--device is given twice: give it once"),
        (
            ["dump", "--device", "a", "--wait", "1", "--timeout", "2"],
            "--timeout and --wait are the same option: give it once"
        ),
        (["session", "--device"], "--device needs a value"),
        (["session", "--device", "d", "--json=yes"], "--json takes no value"),
        (
            ["session", "--device", "d", "--mode", "ndf"],
            "--mode is one of ndef, ndef-rw, tag, not 'ndf'; did you mean 'ndef'?"
        ),
        (["session", "--device", "d", "--busy", "wait"], "--busy is one of refuse, queue, not 'wait'"),
        (
            ["session", "--device", "d", "--timeout", "0"],
            "--timeout takes a duration more than 0 such as 500ms, 2s or 1m; a bare number is seconds, not '0'"
        ),
        (
            ["session", "--device", "d", "--timeout", "2x"],
            "--timeout takes a duration more than 0 such as 500ms, 2s or 1m; a bare number is seconds, not '2x'"
        ),
        (["walk", "--wake-latency", "5"], "--wake-latency needs a unit: 5ms or 5s (or us, m), not '5'"),
        (
            ["session", "--device", "d", "--presence-interval", "5"],
            "--presence-interval takes a duration from 10ms to 10s; a bare number is milliseconds, not '5'"
        ),
        (
            ["measure", "--device", "d", "apdu", "--count", "0x10"],
            "--count takes a whole number from 1 to 1000000, not '0x10'"
        ),
        (["measure", "--device", "d"], "say what to measure first: measure detect|apdu|read|removal --device D"),
        (["measure", "--device", "d", "latency"], "WHAT is one of detect, apdu, read, removal, not 'latency'"),
        (
            ["measure", "apdu", "--device", "d", "--presence", "probe"],
            "--presence goes with measure detect or removal"
        ),
        (
            ["measure", "removal", "--device", "d", "--probe-interval", "50ms"],
            "--probe-interval goes with --presence probe"
        ),
        (
            ["check", "equivalence", "--modes", "ndef,tga"],
            "--modes takes a comma-separated list of ndef, ndef-rw, tag, write, format, not 'tga'; did you mean 'tag'?"
        ),
        (
            ["check", "equivalence", "--devices", "sim,acr"],
            "--devices takes a comma-separated list of sim, pcsc, acr122u, pn532, not 'acr'"
        ),
        (["tag", "show"], "missing FILE"),
        (["tag", "show", "a", "b"], "unexpected argument 'b'"),
        (["trace", "export", "a"], "--pcapng OUT is required"),
        (
            ["session", "--device", "d", "--mode", "tag", "--first-read"],
            "--first-read is Core NFC's invalidateAfterFirstRead: only for --mode ndef"
        ),
        (["session", "--device", "d", "--trace", "t", "--no-trace"], "give --trace PATH or --no-trace, not both"),
        (
            ["write", "--device", "d", "--ndef", "text:x", "--lock"],
            "locking is irreversible: it sets the tag's lock bits for good; add --yes-i-understand-this-is-irreversible"
        ),
        (
            ["lock", "--device", "d"],
            "locking is irreversible: it sets the tag's lock bits for good; add --yes-i-understand-this-is-irreversible"
        ),
        (["virtual", "card", "--tag", "t", "--port", "1", "--slot", "0"], "give --port or --slot, not both"),
        (["virtual", "card", "--tag", "t", "--present-for", "1"], "--present-for and --absent-for go together"),
        (["virtual", "card"], "--tag FILE is required"),
        (
            ["virtual", "card", "--tag", "t", "--personality", "acr"],
            "--personality is one of part3, acr122u, not 'acr'"
        ),
        (["virtual", "pn532", "--pty", "-"], "--tag FILE (or --reader PROFILE) is required"),
        (
            ["virtual", "pn532", "--pty", "-", "--reader", "r", "--tag", "t"],
            "--reader plays a reader: no --tag or --save with it"
        ),
        (
            ["virtual", "pn532", "--pty", "-", "--tag", "t", "--timing", "fast"],
            "--timing is one of real, none, not 'fast'"
        ),
        (["walk", "--port", "35963"], "--port goes with --device pcsc:READER"),
        (["conformance", "--seed", "1"], "--seed goes with --explore"),
        (["conformance", "--explore", "--thermal"], "give --thermal or --explore, not both"),
        (["walk", "--device", "pcsc:x", "--policy", "step-aside:300ms"], "give --policy or --device, not both"),
        (["conformance", "--explore", "--save", "-"], "--save DIR is a folder; - (standard output) can't hold one"),
        (["conformance", "--app", "nobody"], "--app is one of \(appNames.joined(separator: ", ")), not 'nobody'"),
        (["bench", "fuzz"], "--target NAME|all is required"),
        (
            ["bench", "fuzz", "--target", "tag"],
            "--target is one of tag-json, tag-flipper, tag-proxmark3, proxmark-trace, scenario, conformance, profile, ndef, pn532, vpcd, type2-reader, type4-reader, all, not 'tag'"
        ),
        (["completion", "tcsh"], "SHELL is one of bash, zsh, fish, not 'tcsh'"),
    ]

    @Test("Every documented mistake: its one message, exit 64, the usage after it, no process")
    func mistakes() {
        for (argv, message) in Self.mistakes {
            guard case .mistake(let got, let help) = CLI.interpret(argv) else {
                Issue.record("\(argv) is not a mistake")
                continue
            }
            #expect(got == message, "\(argv): \(got)")
            #expect(help.contains("USAGE:"), "\(argv)")
        }
        // The exit status of every mistake: 64 (EX_USAGE), with the message on stderr.
        #expect(CLIError.usage("x").exitCode == 64)
    }

    @Test("Every option of every command: in the usage and the help, refused twice, a typo gets its name back")
    func everyOption() throws {
        for c in Registry.commands {
            let help = c.helpText()
            for o in c.options where !o.hidden {
                #expect(c.usage.contains(o.synopsis), "\(c.name): \(o.name) not in usage")
                #expect(help.contains(o.synopsis), "\(c.name): \(o.name) not in help")
            }
            for o in c.options where o.kind != .flag && o.kind != .repeated {
                // A value of the right kind, given twice.
                let value: String =
                    switch o.kind {
                    case .int(let r): String(r.lowerBound)
                    case .duration: "1s"
                    case .choice(let w): w[0]
                    case .list(let of): of?.first ?? "a"
                    default: "v"
                    }
                do {
                    _ = try OptionParser.parse(
                        ["--\(o.name)", value, "--\(o.name)", value], options: c.options, positionals: [])
                    Issue.record("\(c.name) --\(o.name) given twice was taken")
                } catch {
                    #expect(error.message == "--\(o.name) is given twice: give it once", "\(c.name): \(error.message)")
                }
            }
            for o in c.options where o.name.count >= 5 {
                let typo = "--" + String(o.name.dropLast())
                if c.options.contains(where: { $0.spellings.contains(typo) }) { continue }
                do {
                    _ = try OptionParser.parse([typo], options: c.options, positionals: [])
                    Issue.record("\(c.name) \(typo) was taken")
                } catch {
                    #expect(error.message.contains("(did you mean '--"), "\(c.name) \(typo): \(error.message)")
                }
            }
        }
    }

    @Test("Every command takes --quiet; every command that reports a result takes --json")
    func conventions() {
        let noResult: Set<[String]> = [
            ["version"], ["completion"], ["man"], ["new-app"], ["profile", "import"], ["trace", "export"],
            ["trace", "show"], ["trace", "plot"], ["bench", "ndef-fuzz"], ["bench", "fuzz"], ["virtual", "pn532"],
            ["virtual", "card"],
        ]
        for c in Registry.commands {
            #expect(c.options.contains { $0.name == "quiet" }, "\(c.name) has no --quiet")
            if !noResult.contains(c.path) {
                #expect(c.options.contains { $0.name == "json" }, "\(c.name) has no --json")
            }
        }
    }

    @Test("One duration syntax: a number and a unit everywhere; a bare number in the option's own unit")
    func durations() {
        let cases: [(String, DurationUnit?, Duration?)] = [
            ("500ms", .seconds, .milliseconds(500)), ("2s", nil, .seconds(2)), ("1m", .milliseconds, .seconds(60)),
            ("1.5s", .seconds, .milliseconds(1500)), ("250us", nil, .microseconds(250)),
            ("250µs", nil, .microseconds(250)),
            ("1h", .seconds, .seconds(3600)), ("2", .seconds, .seconds(2)), ("100", .milliseconds, .milliseconds(100)),
            ("0", nil, .zero), ("5", nil, nil), ("-1s", .seconds, nil), ("1e3", .seconds, nil), ("inf", .seconds, nil),
            ("0x10", .seconds, nil), ("s", .seconds, nil), ("", .seconds, nil),
        ]
        for (text, bare, expected) in cases {
            let got = try? Durations.parse(text, bare: bare).get()
            #expect(got == expected, "\(text) bare \(String(describing: bare))")
        }
        #expect(Durations.text(.seconds(10)) == "10s")
        #expect(Durations.text(.milliseconds(250)) == "250ms")
        #expect(Durations.text(.seconds(120)) == "2m")
    }

    @Test("Help, version and help for a command are text on stdout, not mistakes")
    func helpAndVersion() throws {
        for argv in [
            ["--help"], ["-h"], ["help"], ["session", "--help"], ["help", "session"], ["bench", "--help"],
            ["--version"],
        ] {
            guard case .text(let t) = CLI.interpret(argv) else {
                Issue.record("\(argv) is not text")
                continue
            }
            #expect(!t.isEmpty)
        }
        let overview = try #require(InProcessCLI.text(["--help"]))
        #expect(overview.contains("COMMANDS:"))
        let session = try #require(InProcessCLI.text(["session", "--help"]))
        // The usage line names every option its help describes (it once left five out).
        for o in [
            "--mode", "--no-thermal", "--select-identifiers", "--alert-message", "--verbose", "--presence-interval",
        ] {
            #expect(session.contains("[\(o)"), "\(o)")
        }
        // A word after -- is not an option, even --help.
        let (_, parsed) = try #require(InProcessCLI.parsed(["trace", "show", "--", "--help"]), "-- --help")
        #expect(parsed.positionals == ["--help"])
    }

    @Test("Completion scripts and the man page come from the tables: every command and option is in each")
    func generated() throws {
        let commands = Registry.commands
        let bash = Generated.bash(commands)
        let zsh = Generated.zsh(commands)
        let fish = Generated.fish(commands)
        let man = Generated.man(commands)
        for c in commands {
            #expect(bash.contains("'\(c.name)')"), "bash: \(c.name)")
            #expect(zsh.contains("'\(c.name)')"), "zsh: \(c.name)")
            #expect(fish.contains(c.path.last!), "fish: \(c.name)")
            #expect(man.contains(".SS \"\(Generated.roff(c.name))\""), "man: \(c.name)")
            for o in c.options {
                #expect(bash.contains("--\(o.name)"), "bash: \(c.name) --\(o.name)")
                #expect(fish.contains("-l \(o.name)"), "fish: \(c.name) --\(o.name)")
                #expect(zsh.contains("--\(o.name)["), "zsh: \(c.name) --\(o.name)")
                if !o.hidden { #expect(man.contains(Generated.roff("--\(o.name)")), "man: \(c.name) --\(o.name)") }
            }
        }
        // --device completes from the connected readers.
        #expect(bash.contains("nfcbench devices --names"))
        #expect(!man.unicodeScalars.contains { !$0.isASCII }, "the man page is ASCII (roff escapes)")
    }

    @Test("bench fuzz's target names in its table are the targets it has")
    func fuzzTargets() {
        #expect(BenchCommand.fuzzTargetNames == BenchCommand.fuzzTargets.map(\.name))
    }
}
