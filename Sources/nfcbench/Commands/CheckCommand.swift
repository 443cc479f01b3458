import Foundation
import NFCBenchKit
import NFCFiles
import NFCHardware
import NFCTags
import NFCTrace
import ReaderFrontend
import ReaderSession
import Synchronization
import VirtualHardware

/// `nfcbench check equivalence`: the same session on every device gives the same Core NFC
/// events. The check that one frontend and one fault wrapper make a tag behave the same on
/// every reader.
enum CheckCommand {
    static let equivalence = Command(
        path: ["check", "equivalence"],
        abstract:
            "Run the same sessions on sim:, pcsc: (vpcd card, as a part 3 reader and as an ACR122U) and pn532_uart: (virtual PN532); compare",
        options: [
            OptionSpec(
                "tags", .list(of: nil), value: "T,…",
                help: """
                    tag files (names in hardware/tags/, paths, or folders: every
                    .json and .nfc tag file in them); default: hardware/tags/
                    """),
            OptionSpec(
                "modes", .list(of: EquivalenceMode.allCases.map(\.rawValue)), value: "M,…",
                help: "session modes (write and format skip cards that are sensed only)",
                default: .list(EquivalenceMode.allCases.map(\.rawValue))),
            OptionSpec(
                "devices", .list(of: EquivalenceDevice.allCases.map(\.rawValue)), value: "D,…", help: "the devices",
                default: .list(EquivalenceDevice.allCases.map(\.rawValue))),
            OptionSpec(
                "time-limit", .duration(bare: .seconds, moreThanZero: true),
                help: "each session's time limit: tags no session\ndelivers end with 201",
                default: .duration(.seconds(3))),
            OptionSpec("traces", value: "DIR", help: "keep each run's trace there (TAG-MODE-DEVICE.jsonl)"),
            OutputOptions.json("one JSON object per row"),
        ],
        discussion: """
            For every tag file in hardware/tags/ (or --tags) and every session mode, presents the
            tag on each device — the in-process simulator, a vpcd card behind the real pcscd as a
            PC/SC part 3 reader shows it ('Virtual PCD 00 00') and as an ACR122U shows it ('… 00 01',
            its PN532 behind the reader's firmware), and the virtual PN532 through libnfc's own
            pn532_uart driver — and runs the same session on each (ndef: first read; ndef-rw and
            tag: read the first tag, then Done; write: write a Text record, then Done; format:
            write an empty message). Each device's card is fresh: a faulty tag file's faults fire
            on each, once (hardware/tags/FORMAT.md, Faults).

            Compared (times ignored): didBecomeActive, the targets detected (family by the
            classification rule, UID), NDEF read outcomes and decoded records, didDetectNDEFs,
            didDetectTags, tag operations and their codes, what the app read or wrote, alert
            messages, and the ending's code; for a faulty file, the pages its reads got; for
            write and format, the pages (or NDEF file) the write left, which the next device in
            the list then reads back (compared too). Not compared, in a column of its own:
            ATQA/SAK, which a PC/SC reader does not show.

            Rows run side by side, one per vpcd reader entry of pcscd. Without a pcscd offering
            the vpcd reader, the command runs itself inside scripts/with-pcscd (a private pcscd
            with 4 vpcd entries, NFCBENCH_VPCD_READERS), as the demo does.

            Exit status: 0 when every row is the same on every device, 1 when one differs,
            65 for a tag file that can't be read, 69 when a device can't be had, 74 when a trace
            in --traces could not be written to the end.
            """,
        run: { o in try await run(o) })

    static func run(_ o: ParsedOptions) async throws -> Int32 {
        let tagNames = o.list("tags")
        let modes = o.list("modes")!.map { EquivalenceMode(rawValue: $0)! }
        let devices = o.list("devices")!.map { EquivalenceDevice(rawValue: $0)! }
        let limit = o.duration("time-limit")!
        let traces = o.string("traces")
        let json = o.flag("json")

        if devices.contains(where: \.usesVPCD), ProcessInfo.processInfo.environment["NFCBENCH_PCSCD"] != "private",
            !PrivatePCSCD.vpcdReaderAvailable()
        {
            let readers = ProcessInfo.processInfo.environment["NFCBENCH_VPCD_READERS"] ?? "4"
            switch try await PrivatePCSCD.runUnderPrivatePCSCD(environment: ["NFCBENCH_VPCD_READERS": readers]) {
            case .ran(let status): return status
            case .unavailable(let why):
                throw CLIError.unavailable("no pcscd with the vpcd reader, and no private one: \(why)")
            }
        }
        if let traces {
            guard traces != "-" else {
                throw CLIError.usage("--traces DIR is a folder; - (standard output) can't hold one")
            }
            let inputs = (tagNames ?? []).compactMap { DataLocation.resolve($0, in: "tags") }.map {
                NamedFile("the tag file \($0)", $0)
            }
            try Outputs.refuseSameFiles(outputs: [NamedFile("--traces \(traces)", traces)], inputs: inputs)
            do throws(FileError) { try Folder.make(traces) } catch {
                throw CLIError(FileError(error.kind, path: "--traces \(traces)", error.description))
            }
        }
        let files = try tagFiles(tagNames)
        let check = EquivalenceCheck(
            devices: devices, modes: modes, timeLimit: limit,
            entries: devices.contains(where: \.usesVPCD) ? VPCDEntry.available() : [])
        let rows: [EquivalenceRow]
        let traceFailures = Mutex(0)
        do {
            rows = try await check.run(files.map { ($0.0, $0.2) }) { row in
                Output.out(json ? row.json.serialized : row.text)
                if let traces, !writeTraces(row, files: files, to: traces) { traceFailures.withLock { $0 += 1 } }
            }
        } catch let error as EquivalenceError {
            throw error.unavailable ? CLIError.unavailable(error.description) : CLIError.data(error.description)
        }
        if let traces, traceFailures.withLock({ $0 }) > 0 {
            throw CLIError.ioError(
                "\(traceFailures.withLock { $0 }) row(s)' traces in \(traces) are missing or incomplete")
        }
        let differing = rows.filter { !$0.same }.count
        if !json {
            // Devices that cannot present a tag (a PN532 and ISO 15693) are said, not hidden.
            let partial = rows.filter { !$0.notOffered.isEmpty }.count
            let note = partial == 0 ? "" : " (\(partial) of them on the devices that offer the tag's family)"
            Output.out(
                differing == 0
                    ? "\(rows.count) rows: the same Core NFC events on \(devices.map(\.rawValue).joined(separator: ", "))"
                        + note
                    : "\(differing) of \(rows.count) rows differ")
        }
        return differing == 0 ? 0 : 1
    }

    /// Each run's records of `row` as a trace of its own (`TAG-MODE-DEVICE.jsonl` in `folder`),
    /// each written to the end (``TraceWriter/failure``); false when one could not be.
    static func writeTraces(_ row: EquivalenceRow, files: [(String, String, TagFile)], to folder: String) -> Bool {
        let path = files.first { $0.0 == row.tag }?.1 ?? row.tag
        var complete = true
        for (device, run) in row.runs {
            let header = Traces.header(
                command: "check equivalence", device: run.deviceName, model: ["mode": .string(row.mode.rawValue)],
                setup: ["tag_file": .string(path)])
            let file = "\(folder)/\(row.tag)-\(row.mode.rawValue)-\(device.rawValue).jsonl"
            let writer: TraceWriter
            do { writer = try TraceWriter(path: file, header: header, createParentDirectory: false) } catch {
                Output.err("can't write the trace \(file): \(error)")
                complete = false
                continue
            }
            _ = writer.emit(contentsOf: run.records.map(TraceRecord.init(json:)))
            writer.close()
            if let failure = writer.failure {
                Output.err("the trace \(file) is incomplete: \(failure)")
                complete = false
            }
        }
        return complete
    }

    /// Every tag file to check: (display name, path, file). A folder names every `.json` and
    /// `.nfc` file in it.
    static func tagFiles(_ names: [String]?) throws(CLIError) -> [(String, String, TagFile)] {
        var paths: [String] = []
        func folder(_ dir: String) -> [String] {
            let all = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
            return all.filter { $0.hasSuffix(".json") || $0.hasSuffix(".nfc") }.sorted().map { dir + "/" + $0 }
        }
        if let names {
            for n in names {
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: n, isDirectory: &isDirectory), isDirectory.boolValue {
                    paths += folder(n)
                } else {
                    paths.append(try DataLocation.require(n, in: "tags"))
                }
            }
        } else {
            guard let hw = DataLocation.hardwareDirectory() else {
                throw .data("no hardware/ folder (set NFCBENCH_DATA)")
            }
            paths = folder(hw + "/tags")
        }
        var out: [(String, String, TagFile)] = []
        for p in paths {
            do {
                let file = try TagFile.load(path: p)
                out.append((((p as NSString).lastPathComponent as NSString).deletingPathExtension, p, file))
            } catch {
                throw .data("\(p): \(error)")
            }
        }
        return out
    }
}
