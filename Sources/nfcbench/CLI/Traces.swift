import Foundation
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

        init(path: String? = nil, redact: Bool = false, json: Bool = false, pcapng: String? = nil) {
            self.path = path
            self.redact = redact
            self.json = json
            self.pcapng = pcapng
        }

        /// Reads `--trace`, `--redact` and `--pcapng` (those the command offers).
        static func parse(
            _ args: inout Arguments, trace: Bool = true, redact: Bool = true, pcapng: Bool = true
        ) throws(CLIError) -> Options {
            var o = Options()
            if trace { o.path = try args.option("trace") }
            if redact { o.redact = args.flag("redact") }
            if pcapng { o.pcapng = try args.option("pcapng") }
            return o
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
    /// `options.pcapng`, the pcapng export that follows it. `echo` overrides the `--json`
    /// printer (nil: print each line on stdout when `options.json`).
    static func open(
        command: String, device: String?, model: JSONObject = [:], setup: JSONObject = [:],
        options: Options, echo: (@Sendable (String) -> Void)? = nil
    ) throws(CLIError) -> TraceWriter {
        let file: String
        if let path = options.path {
            file = path
        } else {
            let location = TraceLocation()
            // The folder is checked before rotation deletes anything in it (README "Traces").
            // A folder that can't be made (a file in the way) is 73; one that exists but is
            // refused (not ours, a link, writable by others: ``PrivateFolder``) is 69.
            do { try location.prepare() } catch { throw folderFailure(error, options) }
            file = location.newTracePath(command: command)  // spaces become "-" there
        }
        var sinks: [any TraceSink] = []
        if let out = options.pcapng {
            do { sinks.append(try PcapngExport(path: out, redact: options.redact)) } catch {
                throw .cantCreate("can't write the pcapng file (--pcapng): \(error)")
            }
        }
        var printer = echo
        if printer == nil && options.json { printer = { line in Output.out(line) } }
        let writer: TraceWriter
        do {
            writer = try TraceWriter(
                path: file, header: header(command: command, device: device, model: model, setup: setup),
                redact: options.redact, createParentDirectory: options.path == nil, echo: printer, sinks: sinks)
        } catch {
            if let folder = error.folder { throw folderFailure(folder, options) }
            throw .cantCreate("can't write the trace: \(error)" + whereFrom(options))
        }
        // With --json, stdout is the trace's records; where the file is goes to stderr.
        if options.json { Output.err("trace: \(file)") }
        return writer
    }

    /// The trace folder refused or not made, as the exit status says (see ``open``).
    static func folderFailure(_ error: PrivateFolderError, _ options: Options) -> CLIError {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: error.path, isDirectory: &isFolder), isFolder.boolValue {
            return .unavailable("trace folder \(error)" + whereFrom(options))
        }
        return .cantCreate("can't write the trace: trace folder \(error)" + whereFrom(options))
    }
}
