import NFCBenchKit

/// How every command opens its trace: NFCBenchKit's ``/NFCBenchKit/BenchTraces``; the trace
/// group's options are declared here.
typealias Traces = BenchTraces

extension BenchTraces.Options {
    /// The trace group's options: `--trace`, `--no-trace`, and (those the command offers)
    /// `--redact` and `--pcapng`.
    static func table(trace: Bool = true, redact: Bool = true, pcapng: Bool = true) -> [OptionSpec] {
        var t: [OptionSpec] = []
        if trace {
            t.append(
                OptionSpec(
                    "trace", value: "PATH",
                    help: """
                        where the run's trace goes (default: the trace folder, README "Traces"; -:
                        standard output, the text lines then on stderr)
                        """,
                    group: .trace, standardOutput: .whenDash))
            t.append(OptionSpec("no-trace", .flag, help: "keep no trace file", group: .trace))
        }
        if redact {
            t.append(
                OptionSpec(
                    "redact", .flag,
                    help: "replace UIDs, payloads and what was decoded from them in the trace and its exports",
                    group: .trace))
        }
        if pcapng {
            t.append(
                OptionSpec(
                    "pcapng", value: "OUT",
                    help: "also write the frames as they happen to OUT, a pcapng file for Wireshark",
                    group: .trace, completion: .file, standardOutput: .whenDash))
        }
        return t
    }

    /// The trace options a command was given (those its table declares).
    init(_ o: ParsedOptions) throws(CLIError) {
        self.init()
        path = o.string("trace")
        noTrace = o.flag("no-trace")
        if noTrace && path != nil { throw .usage("give --trace PATH or --no-trace, not both") }
        redact = o.flag("redact")
        pcapng = o.string("pcapng")
    }
}
