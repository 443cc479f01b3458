import Foundation
import NFCFiles
import NFCHardware
import NFCTrace

/// How every command opens its trace: one header (``TraceHeader``, with this build's tool
/// and library versions), one location rule (``TraceLocation``), and the pcapng export
/// beside it when `--pcapng OUT` is given.
enum Traces {
    /// The trace options a command takes from its arguments.
    struct Options: Sendable {
        /// `--trace PATH` (nil: the trace folder).
        var path: String?
        var redact = false
        /// `--json`: every record is also printed on stdout.
        var json = false
        /// `--pcapng OUT`: the ISO/IEC 14443 frames as they happen, in a pcapng file.
        var pcapng: String?
        /// `--no-trace`: no trace file (the records still reach `--json` and `--pcapng`).
        var noTrace = false

        init(
            path: String? = nil, redact: Bool = false, json: Bool = false, pcapng: String? = nil, noTrace: Bool = false
        ) {
            self.path = path
            self.redact = redact
            self.json = json
            self.pcapng = pcapng
            self.noTrace = noTrace
        }

        /// The trace group's options: `--trace`, `--no-trace`, and (those the command offers)
        /// `--redact` and `--pcapng`.
        static func table(trace: Bool = true, redact: Bool = true, pcapng: Bool = true) -> [OptionSpec] {
            var t: [OptionSpec] = []
            if trace {
                t.append(
                    OptionSpec(
                        "trace", value: "PATH",
                        help: "where the run's trace goes (default: the trace folder, README \"Traces\")",
                        group: .trace))
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
                        group: .trace, completion: .file))
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

        /// The files these options name, for ``Outputs/refuseSameFiles(outputs:inputs:)``.
        var outputs: [NamedFile] {
            [path.map { NamedFile("--trace \($0)", $0) }, pcapng.map { NamedFile("--pcapng \($0)", $0) }]
                .compactMap { $0 }
        }
    }

    /// Which setting chose the trace's folder, for a trace that can't be written.
    static func whereFrom(
        _ options: Options, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        if options.path != nil { return " (--trace)" }
        if let d = environment["NFCBENCH_TRACE_DIR"], !d.isEmpty {
            return
                " (the folder is $NFCBENCH_TRACE_DIR, '\(d)': set it to a folder you can write, or give --trace PATH)"
        }
        return " (the default trace folder, README \"Traces\": set NFCBENCH_TRACE_DIR, or give --trace PATH)"
    }

    /// The header every trace of this build starts with.
    static func header(command: String, device: String?, model: JSONObject = [:], setup: JSONObject = [:])
        -> TraceHeader
    {
        TraceHeader(
            tool: "nfcbench \(CLI.version)", libnfc: NativeLibraries.libnfcVersion,
            pcsclite: NativeLibraries.pcscLiteVersion, command: command, device: device, model: model, setup: setup)
    }

    /// Opens the trace of a run of `command` (file name: the command with dashes) and, with
    /// `options.pcapng`, the pcapng export that follows it (``/NFCTrace/TraceLocation/openTrace(command:header:choice:redact:fallback:echo:sinks:environment:)``).
    /// `echo` overrides the `--json` printer (nil: print each line on stdout when
    /// `options.json`). `inputs` are the files the command reads: no output may be one of
    /// them (64). `touchesHardware: false` (a walk, a `sim:` device) lets a trace folder that
    /// can't be written give way to another, with a warning.
    static func open(
        command: String, device: String?, model: JSONObject = [:], setup: JSONObject = [:],
        options: Options, echo: (@Sendable (String) -> Void)? = nil, inputs: [NamedFile] = [],
        touchesHardware: Bool = true
    ) throws(CLIError) -> TraceWriter {
        try Outputs.refuseSameFiles(outputs: options.outputs, inputs: inputs)
        var sinks: [any TraceSink] = []
        if let out = options.pcapng {
            do { sinks.append(try PcapngExport(path: out, redact: options.redact, label: "--pcapng \(out)")) } catch {
                throw failure(error, options, what: "the pcapng file")
            }
        }
        var printer = echo
        if printer == nil && options.json { printer = { line in Output.out(line) } }
        let choice: TraceLocation.Choice =
            options.noTrace ? .none : options.path.map { .file($0) } ?? .folder
        let opened: (writer: TraceWriter, warnings: [String])
        do {
            opened = try TraceLocation.openTrace(
                command: command, header: header(command: command, device: device, model: model, setup: setup),
                choice: choice, redact: options.redact, fallback: !touchesHardware, echo: printer, sinks: sinks)
        } catch {
            for sink in sinks { sink.finish() }
            if let folder = error.folder { throw folderFailure(folder, options) }
            throw failure(error, options, what: "the trace")
        }
        for w in opened.warnings { Output.err(w) }
        // With --json, stdout is the trace's records; where the file is goes to stderr.
        if options.json, let path = opened.writer.path { Output.err("trace: \(path)") }
        return opened.writer
    }

    /// A trace or pcapng file that can't be made (73) or written (74).
    static func failure(_ error: TraceFileError, _ options: Options, what: String) -> CLIError {
        let message =
            "can't write \(what): \(error)" + (what == "the trace" && options.path == nil ? whereFrom(options) : "")
        return error.kind == .io ? .ioError(message) : .cantCreate(message)
    }

    /// The trace folder refused or not made, as the exit status says (see ``open``).
    static func folderFailure(_ error: PrivateFolderError, _ options: Options) -> CLIError {
        if let st = FilePath.status(error.path), st.st_mode & S_IFMT == S_IFDIR, !error.unwritable {
            return .unavailable("trace folder \(error)" + whereFrom(options))
        }
        return .cantCreate("can't write the trace: trace folder \(error)" + whereFrom(options))
    }
}
