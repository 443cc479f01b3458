import Foundation
public import HCEEvents
import NFCTags
public import NFCTrace
import ReaderSession
import VirtualHardware

/// The walk's reading of its options and its reports (`nfcbench walk`): `--sweep` values,
/// the reader profiles `--profiles` names, and the walk's records as JSON lines, summaries
/// and the human timeline and sweep tables. Pure apart from reading the profile files.
public enum WalkReport {
    /// A profile named on `--profiles`: a path, or a name in `hardware/readers/`.
    static func requireProfile(_ word: String) throws(BenchError) -> String {
        do { return try BenchData.require(word, in: "readers") } catch { throw BenchError(error) }
    }

    /// `--sweep NAME=FROM..TO/STEP` values, each a `WalkSweep` (durations as every option
    /// writes them: `0`, `250us`, `100ms`, `1.5s`).
    public static func sweeps(_ specs: [String], locked: Bool) throws(BenchError) -> [WalkSweep] {
        var out: [WalkSweep] = []
        for spec in specs {
            func refuse(_ why: String) -> BenchError {
                .usage("--sweep '\(spec)': \(why) (e.g. wake=0ms..800ms/100ms)")
            }
            let parts = spec.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw refuse("give NAME=FROM..TO/STEP") }
            guard let parameter = WalkSweepParameter(rawValue: parts[0]) else {
                throw refuse("NAME is wake, auth or sheet, not '\(parts[0])'")
            }
            if parameter == .auth, !locked {
                throw refuse("an unlocked phone does not authenticate: add --locked")
            }
            let range = parts[1].split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            let ends = range[0].components(separatedBy: "..")
            guard range.count == 2, ends.count == 2 else { throw refuse("give FROM..TO/STEP") }
            var d: [Duration] = []
            for text in [ends[0], ends[1], range[1]] {
                guard case .success(let v) = Durations.parse(text, bare: nil) else {
                    throw refuse("'\(text)' is not a duration with a unit")
                }
                d.append(v)
            }
            do { out.append(try WalkSweep(parameter, from: d[0], to: d[1], step: d[2])) } catch {
                throw refuse("\(error)")
            }
        }
        return out
    }

    /// One sweep row as a record: `{"event":"sweep","parameter":"wake_latency","value_us":…,
    /// "readers":10,"served":2,"wakes":9,"useless_wakes":7,"wtx":…,"served_readers":[…]}`.
    public static func sweepLine(_ r: WalkSweep.Row, _ p: WalkSweepParameter) -> TraceRecord {
        TraceRecord(
            .sweep, at: 0,
            [
                "parameter": .string(p.key), "value_us": .int(r.value.wholeMicroseconds),
                "readers": .int(Int64(r.readers)), "served": .int(Int64(r.served)), "wakes": .int(Int64(r.wakes)),
                "useless_wakes": .int(Int64(r.uselessWakes)), "wtx": .int(Int64(r.waitingTimeExtensions)),
                "served_readers": .array(r.servedReaders.map { .string($0) }),
            ])
    }

    /// The sweep's closing record: what was held fixed (every parameter with its source).
    /// (No `t_us`: set ``/NFCTrace/TraceRecord/time`` when it is written.)
    public static func sweepSummaryJSON(_ sweeps: [WalkSweep], walk: ReaderWalk) -> TraceRecord {
        TraceRecord(
            .summary, at: nil,
            [
                "sweep": .array(sweeps.map { .string($0.parameter.key) }),
                "readers": .int(Int64(walk.profiles.count)), "policy": .string(walk.policy.description),
                "app_prefixes": .array(walk.app.selectIdentifierPrefixes.map { .string($0.description) }),
                "locked": .bool(walk.locked), "app_latency_us": .int(walk.appLatency.wholeMicroseconds),
                "parameters": .object(parametersJSON(walk.parameters)),
            ])
    }

    /// The sweep records as text: one table per swept latency (value, readers served, wakes,
    /// useless wakes, S(WTX), which readers), then what was held fixed.
    public static func sweepTables(_ records: [TraceRecord]) -> String {
        func figure(_ us: Int64) -> String { us == 0 ? "0 ms" : Figures.duration(.microseconds(us)) }
        func lpad(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }
        let rows = records.filter { $0.is(.sweep) }
        let summary = records.last { $0.is(.summary) }
        var order: [String] = []
        for r in rows { if let p = r["parameter"]?.stringValue, !order.contains(p) { order.append(p) } }
        var out = ""
        for p in order {
            out += "SWEEP \(p): readers served as it varies (every other parameter as below)\n"
            out += lpad(p, 24) + lpad("served", 10) + lpad("wakes", 7) + lpad("useless", 9) + lpad("S(WTX)", 8)
            out += "  served readers\n"
            for r in rows where r["parameter"]?.stringValue == p {
                let readers = r["readers"]?.intValue ?? 0
                let served = r["served"]?.intValue ?? 0
                let names: [String] =
                    if case .array(let a)? = r["served_readers"] { a.compactMap(\.stringValue) } else { [] }
                out += lpad(figure(r["value_us"]?.intValue ?? 0), 24) + lpad("\(served) of \(readers)", 10)
                out += lpad("\(r["wakes"]?.intValue ?? 0)", 7) + lpad("\(r["useless_wakes"]?.intValue ?? 0)", 9)
                out +=
                    lpad("\(r["wtx"]?.intValue ?? 0)", 8) + "  "
                    + (names.isEmpty ? "none" : names.joined(separator: ", "))
                out += "\n"
            }
            out += "\n"
        }
        guard let s = summary else { return out }
        let swept: Set<String> =
            if case .array(let a)? = s["sweep"] { Set(a.compactMap(\.stringValue)) } else { [] }
        let prefixes: [String] =
            if case .array(let a)? = s["app_prefixes"] { a.compactMap(\.stringValue) } else { [] }
        out +=
            "HELD FIXED (policy \(s["policy"]?.stringValue ?? "?"), app prefixes: \(prefixes.joined(separator: ",").nonEmpty ?? "none"), "
        out +=
            "locked: \(s["locked"] == .bool(true) ? "yes" : "no"), app latency \(figure(s["app_latency_us"]?.intValue ?? 0)))\n"
        if case .object(let parameters)? = s["parameters"] {
            for e in parameters.entries.sorted(by: { $0.key < $1.key }) {
                let value = e.value["value_us"]?.intValue.map(figure) ?? e.value["value"]?.stringValue ?? ""
                out += "  " + e.key.padding(toLength: max(32, e.key.count + 1), withPad: " ", startingAt: 0)
                out += value.padding(toLength: max(12, value.count + 1), withPad: " ", startingAt: 0)
                out += (e.value["source"]?.stringValue ?? "")
                out += swept.contains(e.key) ? " (swept above; this value in the other tables)\n" : "\n"
            }
        }
        return out
    }

    public static func loadProfiles(_ arg: String?) throws(BenchError) -> [ReaderProfile] {
        try loadProfiles(files: profileFiles(arg))
    }

    /// The profile files `--profiles` names (all of hardware/readers/ without it).
    public static func profileFiles(_ arg: String?) throws(BenchError) -> [String] {
        let fm = FileManager.default
        var files: [String] = []
        func addDirectory(_ dir: String) throws(BenchError) {
            guard let names = try? fm.contentsOfDirectory(atPath: dir) else {
                throw .noInput("\(dir): the folder cannot be read")
            }
            let json = names.filter { $0.hasSuffix(".json") }.sorted()
            guard !json.isEmpty else { throw .noInput("\(dir): holds no *.json profile") }
            files += json.map { dir + "/" + $0 }
        }
        if let arg {
            for word in arg.split(separator: ",").map(String.init) where !word.isEmpty {
                var isDir: ObjCBool = false
                if fm.fileExists(atPath: word, isDirectory: &isDir), isDir.boolValue {
                    try addDirectory(word)
                } else {
                    files.append(try Self.requireProfile(word))
                }
            }
        } else {
            guard let hw = BenchData.hardwareDirectory(environment: ProcessInfo.processInfo.environment) else {
                throw .noInput("no hardware/readers folder found (set NFCBENCH_DATA or use --profiles)")
            }
            try addDirectory(hw + "/readers")
        }
        return files
    }

    public static func loadProfiles(files: [String]) throws(BenchError) -> [ReaderProfile] {
        var profiles: [ReaderProfile] = []
        for f in files {
            do { profiles.append(try ReaderProfile.load(path: f)) } catch { throw BenchError(error) }
        }
        return profiles
    }

    /// A timeline event's record: `t_us`, `reader`, `event`, then its fields.
    public static func jsonLine(_ e: WalkEvent) -> TraceRecord {
        var o = JSONObject()
        if let c = e.command { o["apdu"] = .string(c.hexString()) }
        if e.event == TraceRecord.Kind.apdu.rawValue {
            o["response"] = e.response.map { .string($0.hexString()) } ?? .null
            o["answered_by"] = e.answeredBy.map { .string($0.rawValue) } ?? .null
        }
        if let d = e.detail { o[WalkReport.detailKey(TraceRecord.Kind(rawValue: e.event))] = .string(d) }
        return TraceRecord(
            TraceRecord.Kind(rawValue: e.event), at: e.time.wholeMicroseconds, leading: ["reader": .string(e.reader)], o
        )
    }

    /// The JSON key of a timeline event's detail: `reason` (sessionInvalidated), `status`
    /// (stopEmulation), `technology` (fieldOn), else `detail`.
    public static func detailKey(_ event: TraceRecord.Kind) -> String {
        switch event {
        case .sessionInvalidated: "reason"
        case .stopEmulation: "status"
        case .fieldOn: "technology"
        default: "detail"
        }
    }

    /// (No `t_us`: set ``/NFCTrace/TraceRecord/time`` when it is written.)
    public static func summaryJSON(_ s: WalkSummary, walk: ReaderWalk) -> TraceRecord {
        let p = walk.parameters
        let fields: JSONObject = [
            "readers": .int(Int64(s.readers.count)),
            "wakes": .int(Int64(s.wakes)),
            "servable_wakes": .int(Int64(s.servableWakes)),
            "useless_wakes": .int(Int64(s.uselessWakes)),
            "up_for_nothing_us": .int(s.upForNothing.wholeMicroseconds),
            "policy": .string(walk.policy.description),
            "app_prefixes": .array(walk.app.selectIdentifierPrefixes.map { .string($0.description) }),
            "locked": .bool(walk.locked),
            "app_latency_us": .int(walk.appLatency.wholeMicroseconds),
            "parameters": .object(parametersJSON(p)),
            "per_reader": .array(
                s.readers.map { r in
                    .object([
                        "reader": .string(r.name), "woke": .bool(r.woke), "served": .bool(r.served),
                        "apdus_to_app": .int(Int64(r.apdusToApp)), "apdus_by_system": .int(Int64(r.apdusBySystem)),
                        "up_for_nothing_us": .int(r.upForNothing.wholeMicroseconds),
                        "woke_at_us": r.wokeAt.map { .int($0.wholeMicroseconds) } ?? .null,
                        "wtx": .int(Int64(r.waitingTimeExtensions)),
                        "reason": .string(r.reason),
                    ])
                }),
        ]
        return TraceRecord(.summary, at: nil, fields)
    }

    /// Every phone parameter with its value and source: `{"wake_latency": {"value_us": 0,
    /// "source": "assumed", "ref": "…"}, …}` (the model block of walk and emulate traces).
    public static func parametersJSON(_ p: HCEParameters) -> JSONObject {
        var o: JSONObject = [:]
        for f in p.facts {
            var e: JSONObject = [:]
            if let us = f.microseconds { e["value_us"] = .int(us) } else { e["value"] = .string(f.value) }
            e["source"] = .string(f.source)
            e["ref"] = .string(f.reference)
            o[f.key] = .object(e)
        }
        return o
    }

    public static func ms(_ d: Duration) -> String {
        let us = d.wholeMicroseconds
        return String(format: "%.3f", Double(us) / 1000)
    }

    /// The walk's timeline as text, from its records (events, then the summary): what
    /// `walk` prints and `trace show` of a walk trace prints.
    public static func timeline(_ records: [TraceRecord]) -> String {
        if records.contains(where: { $0.is(.sweep) }) { return sweepTables(records) }
        let events = records.filter { !$0.is(.summary) && !$0.is(.header) }
        let readerWidth = max(8, (events.map { ($0["reader"]?.stringValue ?? "").count }.max() ?? 0) + 2)
        func pad(_ s: String, _ n: Int) -> String {
            s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count)
        }
        func lpad(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }
        func ms(_ us: Int64) -> String { String(format: "%.3f", Double(us) / 1000) }
        // Figures (the summary, the parameters) to three significant digits; the timeline
        // keeps the clock's resolution.
        func figure(_ us: Int64) -> String { us == 0 ? "0 ms" : Figures.duration(.microseconds(us)) }
        var out = lpad("t (ms)", 12) + "  " + pad("reader", readerWidth) + pad("event", 20) + "detail\n"
        var lastReader: String?
        for e in events {
            let reader = e["reader"]?.stringValue ?? "-"
            let event = e.kind ?? "?"
            if let l = lastReader, l != reader { out += "\n" }
            lastReader = reader
            func spaced(_ key: String) -> String? { e[key]?.stringValue.map(TraceLines.spaced) }
            var detail = e[detailKey(event)]?.stringValue ?? ""
            switch event {
            case .apdu:
                detail =
                    (spaced("apdu") ?? "") + " → " + (spaced("response") ?? "(no answer)")
                    + "  [" + (e["answered_by"]?.stringValue ?? "reader timeout") + "]"
            case .received: detail = spaced("apdu") ?? ""
            case .heldForApp: detail = (spaced("apdu") ?? "") + "  [system: the app is still waking; held for it]"
            case .wtx:
                let block = spaced("apdu") ?? "F2 01"
                detail =
                    "S(WTX) \(block) → \(block)  [system: the app is not ready; the reader grants another frame waiting time]"
            case .nfcEvent: detail = "default app woken (scene nfcEvent)"
            default: break
            }
            out +=
                lpad(ms(e.time ?? 0), 12) + "  " + pad(reader, readerWidth) + pad(event.rawValue, 20) + detail
                + "\n"
        }
        guard let s = records.last(where: { $0.is(.summary) }) else { return out }
        let prefixes: [String] =
            if case .array(let a)? = s["app_prefixes"] { a.compactMap(\.stringValue) } else { [] }
        out +=
            "\nSUMMARY (policy \(s["policy"]?.stringValue ?? "?"), app prefixes: \(prefixes.joined(separator: ",").nonEmpty ?? "none"))\n"
        if case .array(let readers)? = s["per_reader"] {
            for case .object(let x) in readers {
                out +=
                    "  " + pad(x["reader"]?.stringValue ?? "-", readerWidth)
                    + (x["woke"] == .bool(true) ? "woke  " : "quiet ")
                    + (x["served"] == .bool(true)
                        ? "served (\(Figures.count(Int(x["apdus_to_app"]?.intValue ?? 0), "APDU")) to the app)"
                        : "useless, up \(figure(x["up_for_nothing_us"]?.intValue ?? 0)) for nothing")
                    + "\n"
                if let why = x["reason"]?.stringValue { out += "  " + pad("", readerWidth) + "      " + why + "\n" }
            }
        }
        out +=
            "  readers \(s["readers"]?.intValue ?? 0), wakes \(s["wakes"]?.intValue ?? 0), wakes the app could serve \(s["servable_wakes"]?.intValue ?? 0), useless wakes \(s["useless_wakes"]?.intValue ?? 0), app up for nothing \(figure(s["up_for_nothing_us"]?.intValue ?? 0))\n"
        if case .object(let parameters)? = s["parameters"] {
            out += "\nPARAMETERS (value, source, where from)\n"
            // Sorted by name: a trace read back keeps no key order.
            for e in parameters.entries.sorted(by: { $0.key < $1.key }) {
                let value = e.value["value_us"]?.intValue.map(figure) ?? e.value["value"]?.stringValue ?? ""
                out +=
                    "  " + pad(e.key, 32) + pad(value, 12) + pad(e.value["source"]?.stringValue ?? "", 11)
                    + (e.value["ref"]?.stringValue ?? "") + "\n"
            }
            let locked = s["locked"] == .bool(true) ? "yes" : "no"
            out += "  " + pad("locked", 32) + pad(locked, 12) + pad("set", 11) + "--locked\n"
            out += "  " + pad("app_latency", 32) + pad(figure(s["app_latency_us"]?.intValue ?? 0), 12)
            out += pad("set", 11) + "--app-latency (the stand-in app)\n"
        }
        return out
    }
}

extension String {
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}
