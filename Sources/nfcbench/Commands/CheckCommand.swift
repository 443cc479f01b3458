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
        abstract: "Run the same sessions on sim:, pcsc: (vpcd card) and pn532_uart: (virtual PN532); compare",
        usage:
            "check equivalence [--tags T,…] [--modes ndef,ndef-rw,tag] [--devices sim,pcsc,pn532] [--time-limit S] [--traces DIR] [--json]",
        help: """
            For every tag file in hardware/tags/ (or --tags) and every session mode, presents the
            tag on each device — the in-process simulator, a vpcd card behind the real pcscd
            ('Virtual PCD 00 00'), and the virtual PN532 through libnfc's own pn532_uart driver —
            and runs the same session the way 'nfcbench session' does (ndef: first read; ndef-rw
            and tag: read the first tag, then Done). Each presentation is a fresh card, so a
            faulty tag fails the same way each time.

            Compared (times ignored): didBecomeActive, the targets detected (family by the
            classification rule, UID), NDEF read outcomes and decoded records, didDetectNDEFs,
            didDetectTags, tag operations and their codes, alert messages, and the ending's code.
            Not compared, in a column of its own: ATQA/SAK, which a PC/SC reader does not show.

            Without a pcscd offering the vpcd reader, the command runs itself inside
            scripts/with-pcscd (a private pcscd), as the demo does.

            OPTIONS:
              --tags T,…        tag files (names in hardware/tags/ or paths); default: all
              --modes M,…       ndef, ndef-rw, tag (default: all three)
              --devices D,…     sim, pcsc, pn532 (default: all three)
              --time-limit S    each session's time limit (default 3 s): tags no session
                                delivers end with 201
              --traces DIR      keep each run's trace there (TAG-MODE-DEVICE.jsonl)
              --json            one JSON object per row

            Exit status: 0 when every row is the same on every device, 1 when one differs,
            69 when a device can't be had.
            """,
        run: { args in try await run(&args) })

    enum Device: String, CaseIterable, Sendable {
        case sim, pcsc, pn532
    }

    static func run(_ args: inout Arguments) async throws -> Int32 {
        let tagNames = try args.option("tags")?.split(separator: ",").map(String.init)
        let modes = try (args.option("modes")?.split(separator: ",").map(String.init) ?? ["ndef", "ndef-rw", "tag"])
            .map { m throws(CLIError) -> SessionRunner.Mode in
                guard let mode = SessionRunner.Mode(rawValue: m) else { throw .usage("unknown mode '\(m)'") }
                return mode
            }
        let devices = try (args.option("devices")?.split(separator: ",").map(String.init) ?? ["sim", "pcsc", "pn532"])
            .map { d throws(CLIError) -> Device in
                guard let device = Device(rawValue: d) else {
                    throw .usage("unknown device '\(d)': sim, pcsc or pn532")
                }
                return device
            }
        let limit = try args.seconds("time-limit", moreThanZero: true) ?? .seconds(3)
        let traces = try args.option("traces")
        let json = args.flag("json")
        try args.finish()

        if devices.contains(.pcsc), ProcessInfo.processInfo.environment["NFCBENCH_PCSCD"] != "private",
            !DemoCommand.vpcdReaderAvailable()
        {
            switch try await DemoCommand.runUnderPrivatePCSCD() {
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
        var rows: [Row] = []
        for (name, path, file) in files {
            for mode in modes {
                // The devices are independent readers (their own locks): run them side by side.
                let runs = try await withThrowingTaskGroup(of: (Device, Run).self) { group in
                    for device in devices {
                        group.addTask {
                            let run = try await session(
                                device, tag: path, file: file, mode: mode, limit: limit,
                                trace: traces.map { "\($0)/\(name)-\(mode.rawValue)-\(device.rawValue).jsonl" })
                            return (device, run)
                        }
                    }
                    var out: [Device: Run] = [:]
                    for try await (device, run) in group { out[device] = run }
                    return out
                }
                let row = Row(tag: name, mode: mode.rawValue, runs: devices.map { ($0, runs[$0]!) })
                rows.append(row)
                if json {
                    Output.out(row.json.serialized)
                } else {
                    Output.out(row.text)
                }
            }
        }
        let differing = rows.filter { !$0.same }.count
        if !json {
            Output.out(
                differing == 0
                    ? "\(rows.count) rows: the same Core NFC events on \(devices.map(\.rawValue).joined(separator: ", "))"
                    : "\(differing) of \(rows.count) rows differ")
        }
        return differing == 0 ? 0 : 1
    }

    /// Every tag file to check: (display name, path, file).
    static func tagFiles(_ names: [String]?) throws(CLIError) -> [(String, String, TagFile)] {
        var paths: [String] = []
        if let names {
            for n in names { paths.append(try DataLocation.require(n, in: "tags")) }
        } else {
            guard let hw = DataLocation.hardwareDirectory() else {
                throw .data("no hardware/ folder (set NFCBENCH_DATA)")
            }
            let dir = hw + "/tags"
            let all = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
            paths = all.filter { $0.hasSuffix(".json") }.sorted().map { dir + "/" + $0 }
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

    /// One session of `mode` on `device` with a fresh card made from `file`.
    static func session(
        _ device: Device, tag: String, file: TagFile, mode: SessionRunner.Mode, limit: Duration, trace: String?
    ) async throws -> Run {
        let records = RecordLog()
        var stop: @Sendable () -> Void = {}
        let frontend: ReaderFrontend
        let deviceName: String
        switch device {
        case .sim:
            let clock = ContinuousReaderClock()
            let scenario = Scenario(
                reader: "equivalence",
                steps: [.init(at: .milliseconds(50), action: .present(tag: "t", as: "t", faults: []))])
            let reader: SimulatedReader
            do { reader = try SimulatedReader(scenario: scenario, tags: ["t": file], clock: clock) } catch {
                throw CLIError.data("\(tag): \(error)")
            }
            frontend = ReaderFrontend(device: reader.field, clock: clock)
            deviceName = "sim:equivalence"
        case .pcsc:
            let personality: any VirtualCardPersonality
            do { personality = try file.makeVirtualCardPersonality() } catch { throw CLIError.data("\(tag): \(error)") }
            // pcscd notices a card leaving only at its next poll (≈ 400 ms for vpcd): start each
            // run from an empty reader, and begin once pcscd shows this run's card, so no run
            // meets the card of the one before.
            let reader = "Virtual PCD 00 00"
            try await onBenchThread { try waitForReader(reader, card: false) }
            let card = VirtualCard(personality: personality, configuration: .init(port: 35963))
            card.start()
            stop = {
                card.stop()
                try? waitForReader(reader, card: false)
            }
            try await onBenchThread { try waitForReader(reader, card: true, atr: personality.atr) }
            frontend = try DeviceFactory.backend("pcsc:" + reader)
            deviceName = "pcsc:" + reader
        case .pn532:
            let started: (device: String, stop: @Sendable () -> Void)
            do { started = try LibNFCDevices.startVirtualBench(tag: tag) } catch let e as CLIError { throw e } catch {
                throw CLIError.unavailable("no virtual PN532: \(error)")
            }
            stop = started.stop
            frontend = try DeviceFactory.backend(started.device)
            deviceName = started.device
        }
        defer {
            frontend.close()
            stop()
        }
        let writer: TraceWriter
        do {
            writer = try TraceWriter(
                path: trace,
                header: Traces.header(
                    command: "check equivalence", device: deviceName, model: ["mode": .string(mode.rawValue)],
                    setup: ["tag_file": .string(tag)]),
                createParentDirectory: false, echo: { records.add($0) })
        } catch {
            throw CLIError.cantCreate("can't write the trace: \(error)")
        }
        defer { writer.close() }
        var options = SessionRunner.Options()
        options.mode = mode
        options.firstRead = mode == .ndef
        options.timeLimit = limit
        options.thermal = false
        options.json = true
        options.doneAfterFirstTag = true
        // The app's Done ends at once here: the reported 2.5 s turnover after invalidate()
        // is the same on every device and would only spend the check's time budget.
        options.invalidationDelay = .zero
        options.alertMessage = "Hold your iPhone near an NFC tag."
        let ending = await SessionRunner(backend: frontend, options: options, trace: writer).run()
        return Run(ending: ending.code, records: records.all)
    }

    /// Waits (blocking, up to 5 s) until pcscd shows `reader` with a card of `atr` or without one.
    static func waitForReader(_ reader: String, card: Bool, atr: [UInt8]? = nil) throws(CLIError) {
        let context: PCSCContext
        do { context = try PCSCContext() } catch { throw .unavailable("no PC/SC service: \(error)") }
        defer { context.release() }
        var known = PCSCReaderState.unaware(reader)
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            let change: PCSCStatusChange
            do { change = try context.waitForStatusChange(readers: [known], timeout: .milliseconds(500)) } catch {
                throw .unavailable("pcscd: \(error)")
            }
            if case .changed(let states) = change, let s = states.first {
                known = s
                if s.hasCard == card && (atr == nil || s.atr == atr) { return }
            }
        }
        throw .unavailable(
            "pcscd did not show \(card ? "the virtual card" : "an empty reader") on '\(reader)' within 5 s")
    }

    /// One device's run: its ending and its trace records.
    struct Run: Sendable {
        var ending: NFCReaderError.Code
        var records: [JSONObject]

        /// The Core NFC-level events, in order, as comparable lines.
        var events: [String] {
            records.compactMap { Self.line($0) }
        }

        /// ATQA/SAK as the device showed them ("not shown" for a PC/SC reader).
        var activation: String {
            for r in records where r["event"]?.stringValue == "detected" {
                guard case .array(let targets)? = r["targets"], case .object(let t)? = targets.first else { continue }
                if let atqa = t["atqa"]?.stringValue, let sak = t["sak"]?.stringValue { return "\(atqa)/\(sak)" }
                return "not shown"
            }
            return "-"
        }

        static func line(_ r: JSONObject) -> String? {
            guard let event = r["event"]?.stringValue else { return nil }
            func v(_ k: String) -> String { r[k].map { $0.serialized } ?? "-" }
            switch event {
            case "didBecomeActive": return event
            case "detected":
                guard case .array(let targets)? = r["targets"] else { return event }
                return "detected "
                    + targets.compactMap { t -> String? in
                        guard case .object(let o) = t else { return nil }
                        return "\(o["family"]?.stringValue ?? "?") \(o["uid"]?.stringValue ?? "?")"
                    }.joined(separator: ", ")
            case "ndefRead": return "ndefRead \(v("outcome")) \(v("code")) \(v("records"))"
            case "didDetectNDEFs": return "didDetectNDEFs \(v("messages"))"
            case "didDetectTags":
                if case .array(let tags)? = r["tags"] { return "didDetectTags \(tags.count)" }
                return event
            case "tagOperation": return "tagOperation \(v("name"))"
            case "tagOperationEnded": return "tagOperationEnded \(v("code"))\(r["result"] != nil ? " success" : "")"
            case "readNDEF": return "app readNDEF \(v("records"))"
            case "readNDEFFailed": return "app readNDEF failed \(v("code"))"
            case "alertMessage": return "alertMessage \(v("message"))"
            case "didInvalidateWithError": return "didInvalidateWithError \(v("code"))"
            default: return nil
            }
        }
    }

    /// One tag × mode: each device's run, compared with the first device's.
    struct Row {
        var tag: String
        var mode: String
        var runs: [(Device, Run)]

        var reference: [String] { runs.first?.1.events ?? [] }

        /// The first difference from the reference, or nil (``TraceDiff/firstDifference(_:_:)``
        /// over the Core NFC-level lines, as `nfcbench trace diff` compares whole records).
        func difference(_ run: Run) -> String? {
            TraceDiff.firstDifference(reference, run.events)
        }

        var same: Bool { runs.allSatisfy { difference($0.1) == nil } }

        var text: String {
            var parts: [String] = []
            for (device, run) in runs.dropFirst() {
                parts.append("\(device.rawValue): " + (difference(run).map { "differs (\($0))" } ?? "same"))
            }
            let ending = runs.first.map { "\($0.1.ending.rawValue)" } ?? "-"
            let activation = runs.map { "\($0.0.rawValue) \($0.1.activation)" }.joined(separator: ", ")
            return "\(tag) \(mode): ending \(ending); " + parts.joined(separator: "; ") + "; ATQA/SAK: \(activation)"
        }

        var json: JSONValue {
            var o: JSONObject = ["tag": .string(tag), "mode": .string(mode), "same": .bool(same)]
            o["targets"] = .array(
                reference.filter { $0.hasPrefix("detected ") }.map { .string(String($0.dropFirst(9))) })
            var devices = JSONObject()
            for (device, run) in runs {
                var d: JSONObject = [
                    "ending": .int(Int64(run.ending.rawValue)), "atqa_sak": .string(run.activation),
                    "events": .int(Int64(run.events.count)),
                ]
                if let diff = difference(run) { d["difference"] = .string(diff) }
                devices[device.rawValue] = .object(d)
            }
            o["devices"] = .object(devices)
            return .object(o)
        }
    }
}

/// The trace records a run wrote, parsed back.
final class RecordLog: Sendable {
    private let lines = Mutex<[JSONObject]>([])
    func add(_ line: String) {
        if case .object(let o)? = try? JSONValue(parsing: line) { lines.withLock { $0.append(o) } }
    }
    var all: [JSONObject] { lines.withLock { $0 } }
}
