public import Foundation
public import NFCFiles
import NFCHardware
public import NFCTrace

/// How every command opens its trace: one header (`TraceHeader`, with this build's tool
/// and library versions), one location rule (`TraceLocation`), and the pcapng export
/// beside it when `--pcapng OUT` is given.
///
/// Errors are ``BenchError``s with the exit status the command ends with: 64 an output that is
/// an input, 73 a trace or pcapng file that can't be made, 74 one that can't be written, 69 a
/// trace folder refused.
public enum BenchTraces {
    /// The trace options a command takes from its arguments.
    public struct Options: Sendable {
        /// `--trace PATH` (nil: the trace folder).
        public var path: String?
        public var redact = false
        /// `--json`: every record is also printed on stdout.
        public var json = false
        /// `--pcapng OUT`: the frames as they happen, in a pcapng file (ISO/IEC 14443 and
        /// FeliCa; ISO 15693 frames left out and counted: ``/NFCTrace/PcapngExport``).
        public var pcapng: String?
        /// `--no-trace`: no trace file (the records still reach `--json` and `--pcapng`).
        public var noTrace = false

        public init(
            path: String? = nil, redact: Bool = false, json: Bool = false, pcapng: String? = nil, noTrace: Bool = false
        ) {
            self.path = path
            self.redact = redact
            self.json = json
            self.pcapng = pcapng
            self.noTrace = noTrace
        }

        /// The files these options name, for ``BenchOutputs/refuseSameFiles(outputs:inputs:)``.
        public var outputs: [NamedFile] {
            [path.map { NamedFile("--trace \($0)", $0) }, pcapng.map { NamedFile("--pcapng \($0)", $0) }]
                .compactMap { $0 }
        }
    }

    /// Which setting chose the trace's folder, for a trace that can't be written.
    public static func whereFrom(
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
    public static func header(command: String, device: String?, model: JSONObject = [:], setup: JSONObject = [:])
        -> TraceHeader
    {
        TraceHeader(
            tool: "nfcbench \(BenchVersion.version)", libnfc: NativeLibraries.libnfcVersion,
            pcsclite: NativeLibraries.pcscLiteVersion, command: command, device: device, model: model, setup: setup)
    }

    /// Opens the trace of a run of `command` (file name: the command with dashes) and, with
    /// `options.pcapng`, the pcapng export that follows it (``/NFCTrace/TraceLocation/openTrace(command:header:choice:redact:fallback:echo:sinks:environment:)``).
    /// `echo` overrides the `--json` printer (nil: print each line on stdout when
    /// `options.json`). `inputs` are the files the command reads: no output may be one of
    /// them (64). `touchesHardware: false` (a walk, a `sim:` device) lets a trace folder that
    /// can't be written give way to another, with a warning.
    public static func open(
        command: String, device: String?, model: JSONObject = [:], setup: JSONObject = [:],
        options: Options, echo: (@Sendable (String) -> Void)? = nil, inputs: [NamedFile] = [],
        touchesHardware: Bool = true
    ) throws(BenchError) -> TraceWriter {
        try BenchOutputs.refuseSameFiles(outputs: options.outputs, inputs: inputs)
        var sinks: [any TraceSink] = []
        if let out = options.pcapng {
            do {
                // What it left out (ISO 15693 frames) is said when it finishes, and in the trace.
                sinks.append(
                    try PcapngExport(
                        path: out, redact: options.redact, label: "--pcapng \(out)",
                        report: { BenchOutput.err("--pcapng \(out): \($0)") }))
            } catch {
                throw failure(error, options, what: "the pcapng file")
            }
        }
        var printer = echo
        if printer == nil && options.json { printer = { line in BenchOutput.out(line) } }
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
        for w in opened.warnings { BenchOutput.err(w) }
        // With --json, stdout is the trace's records; where the file is goes to stderr.
        if options.json, let path = opened.writer.path { BenchOutput.err("trace: \(path)") }
        return opened.writer
    }

    /// A trace or pcapng file that can't be made (73) or written (74).
    public static func failure(_ error: TraceFileError, _ options: Options, what: String) -> BenchError {
        let message =
            "can't write \(what): \(error)" + (what == "the trace" && options.path == nil ? whereFrom(options) : "")
        return error.kind == .io ? .ioError(message) : .cantCreate(message)
    }

    /// The trace folder refused or not made, as the exit status says (see `open`).
    public static func folderFailure(_ error: PrivateFolderError, _ options: Options) -> BenchError {
        if let st = FilePath.status(error.path), st.st_mode & S_IFMT == S_IFDIR, !error.unwritable {
            return .unavailable("trace folder \(error)" + whereFrom(options))
        }
        return .cantCreate("can't write the trace: trace folder \(error)" + whereFrom(options))
    }
}

/// This build's version, as `nfcbench version` and every trace header say it.
public enum BenchVersion {
    public static let version = "0.1.0"
}
