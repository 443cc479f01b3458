public import Foundation
public import NFCTrace
import Synchronization

/// The bench's helpers, devices and figures.
public final class BenchAll: Sendable {
    /// One printed figure: ours, theirs (or a goal), their ratio.
    public struct Row: Sendable {
        public var name: String
        public var unit: String
        public var ours: Double
        public var theirs: Double?
        public var theirsName: String?
        /// ours / theirs, or the median of per-round ratios where that is the rule.
        public var ratio: Double?
        public var runs: Int
        public var goal: String
        public var met: Bool?

        public var json: JSONObject {
            var o = JSONObject()
            o["figure"] = .string(name)
            o["unit"] = .string(unit)
            o["ours"] = .double(ours)
            if let theirs { o["theirs"] = .double(theirs) }
            if let theirsName { o["theirs_name"] = .string(theirsName) }
            if let ratio { o["ratio"] = .double(ratio) }
            o["runs"] = .int(Int64(runs))
            o["goal"] = .string(goal)
            if let met { o["met"] = .bool(met) }
            return o
        }
    }

    public let rounds: Int
    public let idle: Duration
    public let count: Int
    public let work: String
    public let nfcbench = BenchData.executablePath()
    public let scripts: String
    /// The children started beside the bench, and the virtual card's process among them (for
    /// the one-CPU measure apdu pairs).
    private let children = Mutex<(started: [BenchSpawn.Running], cardPID: pid_t?)>(([], nil))
    private let loadBefore: String
    private let date = Date()

    public static let tags = ["ntag213-text", "ntag215-uri", "ntag216-empty"]
    /// The FeliCa Lite-S of the NDEF-read row, on a virtual PN532 with --timing real.
    public static let type3Tag = "felica-lite-s-uri"

    /// Whether this process loaded libswiftCore.so: a plain `swift build -c release` (in a
    /// fresh user's run its `version` took 6.8 ms to ours ≤ 3 ms), not `./bench install`'s
    /// static link, which the figures and goals are for.
    public static var dynamicSwiftRuntime: Bool {
        ((try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8)) ?? "").contains("/libswiftCore.so")
    }
    /// Pairs of unpinned measure apdu runs a round (`apduPairs(round:pairs:transmit:client:prefix:label:)`);
    /// the pinned placements, steadier, run two.
    public static let unpinnedPairs = 8
    /// The A/A control's row: the C loop against a copy of itself, run as the goal row is.
    public static let controlRow = "measure apdu A/A control, C loop vs its copy"
    public static let timings = ["none", "real"]

    public init(rounds: Int, idle: Duration, count: Int) throws(BenchError) {
        self.rounds = rounds
        self.idle = idle
        self.count = count
        guard let scripts = BenchData.scriptsDirectory() else {
            throw .unavailable("no hardware/ folder beside the binary: bench all runs from a clone")
        }
        self.scripts = scripts
        work = NSTemporaryDirectory() + "nfcbench-bench-all-\(getpid())"
        loadBefore = Self.loadAverage()
        do { try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true) } catch {
            throw .failure("cannot make \(work): \(error)")
        }
        // The children's traces go to the work folder (removed at the end), never the user's
        // trace folder: it keeps only the newest 100, and a bench run writes about 15 a round.
        setenv("NFCBENCH_TRACE_DIR", work + "/traces", 1)
    }

    public func stop() {
        let started = children.withLock { c in
            defer { c = ([], nil) }
            return c.started
        }
        for r in started { _ = r.stop() }
        try? FileManager.default.removeItem(atPath: work)
    }

    public var header: String {
        let build: String
        #if DEBUG
            build = "DEBUG build (not the release's figures)"
        #else
            build =
                Self.dynamicSwiftRuntime
                ? "release build with the dynamic Swift runtime (start-up and idle figures are not ./bench install's static build's)"
                : "release build"
        #endif
        return """
            nfcbench bench all: \(rounds) round\(rounds == 1 ? "" : "s"), interleaved; \(build) \(nfcbench)
            \(Self.iso8601(date)); \(Self.machine()); load average before \(loadBefore), after \(Self.loadAverage())
            """
    }

    // MARK: running

    /// `pairs` pairs of `measure apdu` and the C loop in counterbalanced order (ours, C, C,
    /// ours, …; the next round C, ours, ours, C, …), so neither side always runs right after
    /// the dumps or right after the other. Returns the mean rates (APDU/s) and prints them.
    ///
    /// Unpinned, a run of 3,000 APDUs (a third of a second) on 2 cores shared with pcscd and
    /// the card swings by ±8 % (coefficient of variation) with where the scheduler puts the
    /// three processes; with two pairs a round, the C loop against a copy of itself (an A/A
    /// control, 50 and 60 shell-loop rounds) gave a median of 7 rounds below 0.98 in 16 % and
    /// 28 % of draws. ``unpinnedPairs`` pairs a round halve that spread.
    private func apduPairs(
        round: Int, pairs: Int, transmit: String, client: APDUClient = .measure, prefix: [String] = [],
        label: String = ""
    ) throws -> (ours: Double, c: Double) {
        let order: [Bool] = (0..<pairs).flatMap { p in (round + p) % 2 == 1 ? [true, false] : [false, true] }
        var oursRates: [Double] = []
        var cRates: [Double] = []
        for ours in order {
            if ours, case .cLoop(let copy) = client {
                oursRates.append(try cLoopRate(prefix + [copy, "Virtual PCD 00 00", "\(count)"]))
            } else if ours {
                let o = try checked(
                    BenchSpawn.run(
                        prefix + [
                            nfcbench, "measure", "apdu", "--device", "pcsc:Virtual PCD 00 00", "--count", "\(count)",
                            "--json",
                        ],
                        captureOutput: true, in: work), "measure apdu")
                guard let r = Self.number(o.output, key: "per_second") else {
                    throw BenchError.failure("measure apdu printed no rate")
                }
                oursRates.append(r)
            } else {
                cRates.append(try cLoopRate(prefix + [transmit, "Virtual PCD 00 00", "\(count)"]))
            }
        }
        BenchOutput.err(
            "bench all: round \(round) measure apdu\(label): ours \(oursRates.map { String(Int($0)) }.joined(separator: ", ")), C \(cRates.map { String(Int($0)) }.joined(separator: ", ")) APDU/s"
        )
        return (oursRates.reduce(0, +) / Double(oursRates.count), cRates.reduce(0, +) / Double(cRates.count))
    }

    /// What runs on the "ours" side of `apduPairs(round:pairs:transmit:client:prefix:label:)`.
    public enum APDUClient {
        /// `nfcbench measure apdu`.
        case measure
        /// A byte-identical copy of the C loop at this path: the A/A control.
        case cLoop(String)
    }

    /// The APDUs per second a C loop run (`argv`) printed: its third figure.
    private func cLoopRate(_ argv: [String]) throws -> Double {
        let c = try checked(BenchSpawn.run(argv, captureOutput: true, in: work), "measure-vs-c-transmit")
        guard
            let r = c.output.split(separator: " ").dropFirst(2).first.flatMap({
                Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
            })
        else { throw BenchError.failure("the C loop printed no rate") }
        return r
    }

    public func run() throws -> [Row] {
        let tools = try prepare()
        var startupOurs: [Duration] = []
        var startupC: [Duration] = []
        var openOurs: [Double] = []
        var openTheirs: [Double] = []
        var contextOurs: [Double] = []
        var dumps: [String: (ours: [Duration], theirs: [Duration])] = [:]
        // A whole-process NDEF read of the FeliCa Lite-S: session --first-read (to its 204)
        // against nfc-read-forum-tag3 -o, both Check block 0 and the NDEF blocks.
        var type3: (ours: [Duration], theirs: [Duration]) = ([], [])
        var apdu = APDURates()
        // The C loop against a copy of itself, as the goal row is run: how far apart two
        // identical clients land unpinned in this very run (the placement's spread, not code).
        var control = APDURates()
        let oneCPU = children.withLock { $0.cardPID }.flatMap { OneCPU.forPrivatePCSCD(card: $0) }
        // The pinned placements (rows without a goal of their own), each with its label.
        let placements: [(name: String, label: String, pinning: OneCPU?)] = [
            ("measure apdu, client, pcscd and card on one CPU", " (one CPU)", oneCPU),
            ("measure apdu, client apart from pcscd and card", " (apart)", oneCPU?.apart),
        ]
        var pinned = placements.map { _ in APDURates() }
        var inputs: [Double] = []
        var walk: [Double] = []
        var conformance: [Duration] = []
        var explore: [Double] = []

        for round in 1...rounds {
            BenchOutput.err("bench all: round \(round) of \(rounds)")
            for _ in 0..<3 {
                startupOurs.append(
                    try checked(BenchSpawn.run([nfcbench, "version"], in: work), "nfcbench version").wall)
                startupC.append(try checked(BenchSpawn.run([tools.versionC], in: work), "version-c").wall)
            }
            // Spawn → nfc_open / SCardEstablishContext, through the probe.
            let device = "pn532_uart:\(pty("ntag215-uri", "none"))"
            openOurs.append(
                try probed(
                    [nfcbench, "dump", "--device", device, "--out", "\(work)/probe.json"], "nfc_open", tools.probe))
            openTheirs.append(
                try probed(["nfc-mfultralight", "r", "\(work)/probe.mfd"], "nfc_open", tools.probe, device: device))
            contextOurs.append(
                try probed(
                    [nfcbench, "dump", "--device", "pcsc:Virtual PCD 00 00", "--out", "\(work)/probe4.json"],
                    "SCardEstablishContext", tools.probe))
            for tag in Self.tags {
                for timing in Self.timings {
                    let device = "pn532_uart:\(pty(tag, timing))"
                    let ours = try checked(
                        BenchSpawn.run([nfcbench, "dump", "--device", device, "--out", "\(work)/d.json"], in: work),
                        "dump \(tag)")
                    let theirs = try checked(
                        BenchSpawn.run(
                            ["nfc-mfultralight", "r", "\(work)/d.mfd"],
                            environment: ["LIBNFC_DEVICE": device, "LIBNFC_AUTO_SCAN": "false"], in: work),
                        "nfc-mfultralight r \(tag)")
                    dumps["\(tag) \(timing)", default: ([], [])].ours.append(ours.wall)
                    dumps["\(tag) \(timing)", default: ([], [])].theirs.append(theirs.wall)
                }
            }
            do {
                let device = "pn532_uart:\(pty(Self.type3Tag, "real"))"
                let ours = try checked(
                    BenchSpawn.run(
                        [nfcbench, "session", "--device", device, "--first-read", "--no-thermal", "--timeout", "10"],
                        in: work), "session --first-read \(Self.type3Tag)")
                let theirs = try checked(
                    BenchSpawn.run(
                        ["nfc-read-forum-tag3", "-o", "\(work)/t3.ndef"],
                        environment: ["LIBNFC_DEVICE": device, "LIBNFC_AUTO_SCAN": "false"], in: work),
                    "nfc-read-forum-tag3 -o \(Self.type3Tag)")
                type3.ours.append(ours.wall)
                type3.theirs.append(theirs.wall)
            }
            // The goal's pairs and the control's, in turns first, so neither always follows the dumps.
            for goal in round % 2 == 1 ? [true, false] : [false, true] {
                if goal {
                    apdu.add(try apduPairs(round: round, pairs: Self.unpinnedPairs, transmit: tools.transmit))
                } else {
                    control.add(
                        try apduPairs(
                            round: round, pairs: Self.unpinnedPairs, transmit: tools.transmit,
                            client: .cLoop(tools.transmitCopy), label: " (A/A control)"))
                }
            }
            for (i, placement) in placements.enumerated() {
                guard let pinning = placement.pinning else { continue }
                pinned[i].add(
                    try pinning.pinned(in: work) {
                        try apduPairs(
                            round: round, pairs: 2, transmit: tools.transmit, prefix: pinning.client,
                            label: placement.label)
                    })
            }
            let session = try checked(
                BenchSpawn.run(
                    [nfcbench, "bench", "session", "--inputs", "1000000", "--json"], captureOutput: true, in: work),
                "bench session")
            if let r = Self.number(session.output, key: "inputs_per_second") { inputs.append(r) }
            if let w = Self.number(session.output, key: "walk_seconds") { walk.append(w) }
            conformance.append(
                try checked(BenchSpawn.run([nfcbench, "conformance"], in: work), "conformance").wall)
            let explored = try checked(
                BenchSpawn.run(
                    [nfcbench, "bench", "explore", "--runs", "5000", "--json"], captureOutput: true, in: work),
                "bench explore")
            if let r = Self.number(explored.output, key: "runs_per_cpu_second") { explore.append(r) }
        }

        BenchOutput.err("bench all: idle sessions, \(idle.seconds) s")
        let sim = try BenchSpawn.start(
            [nfcbench, "session", "--device", "sim:no-tag", "--time-limit", "\(Int(BenchAll.seconds(idle)) + 30)"],
            in: work)
        let pcsc = try BenchSpawn.start(
            [
                nfcbench, "session", "--device", "pcsc:Virtual PCD 00 01", "--time-limit",
                "\(Int(BenchAll.seconds(idle)) + 30)",
            ],
            in: work)
        Thread.sleep(forTimeInterval: BenchAll.seconds(idle))
        let simIdle = sim.stop()
        let pcscIdle = pcsc.stop()

        var rows: [Row] = []
        let ms = { (d: Duration) in TimingStatistics.microseconds(d) / 1000 }
        let su = Self.median(startupOurs.map(ms))
        let sc = Self.median(startupC.map(ms))
        rows.append(
            Row(
                name: "start-up: nfcbench version (whole process)", unit: "ms", ours: su, theirs: sc,
                theirsName: "C printing the same", ratio: su / sc, runs: startupOurs.count, goal: "ours ≤ 3 ms",
                met: su <= 3))
        let oo = Self.median(openOurs) / 1000
        let ot = Self.median(openTheirs) / 1000
        rows.append(
            Row(
                name: "start-up: spawn → nfc_open (dump pn532_uart)", unit: "ms", ours: oo, theirs: ot,
                theirsName: "nfc-mfultralight r", ratio: oo / ot, runs: openOurs.count, goal: "ours ≤ 5 ms",
                met: oo <= 5))
        let co = Self.median(contextOurs) / 1000
        rows.append(
            Row(
                name: "start-up: spawn → SCardEstablishContext (dump pcsc)", unit: "ms", ours: co, theirs: nil,
                theirsName: nil, ratio: nil, runs: contextOurs.count, goal: "ours ≤ 5 ms", met: co <= 5))
        for timing in Self.timings {
            for tag in Self.tags {
                guard let d = dumps["\(tag) \(timing)"] else { continue }
                let o = Self.median(d.ours.map(ms))
                let t = Self.median(d.theirs.map(ms))
                let goal: String
                let met: Bool?
                switch (tag, timing) {
                case ("ntag215-uri", "none"): (goal, met) = ("≤ 1.10", o / t <= 1.10)
                case ("ntag215-uri", "real"): (goal, met) = ("≤ 0.80", o / t <= 0.80)
                default: (goal, met) = ("", nil)
                }
                rows.append(
                    Row(
                        name: "dump \(tag) --timing \(timing) (whole process)", unit: "ms", ours: o, theirs: t,
                        theirsName: "nfc-mfultralight r", ratio: o / t, runs: d.ours.count, goal: goal, met: met))
            }
        }
        if !type3.ours.isEmpty {
            let o = Self.median(type3.ours.map(ms))
            let t = Self.median(type3.theirs.map(ms))
            rows.append(
                Row(
                    name: "NDEF read \(Self.type3Tag) --timing real (session --first-read, whole process)", unit: "ms",
                    ours: o, theirs: t, theirsName: "nfc-read-forum-tag3 -o", ratio: o / t, runs: type3.ours.count,
                    goal: "≤ 1.10", met: o / t <= 1.10))
        }
        let ar = Self.median(apdu.ratios)
        rows.append(
            Row(
                name: "measure apdu (APDU/s, median of per-round ratios)", unit: "APDU/s", ours: Self.median(apdu.ours),
                theirs: Self.median(apdu.c), theirsName: "C SCardTransmit loop", ratio: ar, runs: apdu.ratios.count,
                goal: "≥ 0.98", met: ar >= 0.98))
        if !control.ratios.isEmpty {
            rows.append(
                Row(
                    name: Self.controlRow, unit: "APDU/s", ours: Self.median(control.ours),
                    theirs: Self.median(control.c), theirsName: "C SCardTransmit loop",
                    ratio: Self.median(control.ratios), runs: control.ratios.count, goal: "", met: nil))
        }
        for (placement, rates) in zip(placements, pinned) where !rates.ratios.isEmpty {
            rows.append(
                Row(
                    name: placement.name, unit: "APDU/s", ours: Self.median(rates.ours), theirs: Self.median(rates.c),
                    theirsName: "C SCardTransmit loop", ratio: Self.median(rates.ratios), runs: rates.ratios.count,
                    goal: "", met: nil))
        }
        let ips = Self.median(inputs)
        rows.append(
            Row(
                name: "session machine inputs/s", unit: "inputs/s", ours: ips, theirs: 1_000_000,
                theirsName: "target", ratio: ips / 1_000_000, runs: inputs.count, goal: "≥ 1,000,000",
                met: ips >= 1_000_000))
        let w = Self.median(walk) * 1000
        rows.append(
            Row(
                name: "random walk, 10,000 sessions", unit: "ms", ours: w, theirs: 1000, theirsName: "target",
                ratio: w / 1000, runs: walk.count, goal: "< 1 s", met: w < 1000))
        rows.append(
            Row(
                name: "conformance suite (whole process)", unit: "ms", ours: Self.median(conformance.map(ms)),
                theirs: nil, theirsName: nil, ratio: nil, runs: conformance.count, goal: "", met: nil))
        let rps = Self.median(explore)
        rows.append(
            Row(
                name: "conformance explorer, runs per CPU-second", unit: "runs/s", ours: rps, theirs: 2000,
                theirsName: "target", ratio: rps / 2000, runs: explore.count, goal: "≥ 2,000 per core",
                met: rps >= 2000))
        for (name, outcome) in [("sim:no-tag", simIdle), ("pcsc: empty reader", pcscIdle)] {
            let percent = TimingStatistics.microseconds(outcome.cpu) / TimingStatistics.microseconds(outcome.wall) * 100
            rows.append(
                Row(
                    name: "idle session CPU, \(name), \(Int(BenchAll.seconds(idle))) s", unit: "%", ours: percent,
                    theirs: nil,
                    theirsName: nil, ratio: nil, runs: 1, goal: "< 1 %", met: percent < 1))
        }
        return rows
    }

    /// One measure apdu row's round means (APDU/s) and their ratios, round by round.
    public struct APDURates: Sendable {
        public var ours: [Double] = []
        public var c: [Double] = []
        public var ratios: [Double] = []

        public mutating func add(_ round: (ours: Double, c: Double)) {
            ours.append(round.ours)
            c.append(round.c)
            ratios.append(round.ours / round.c)
        }
    }

    // MARK: setup

    public struct Tools: Sendable {
        public var transmit: String
        /// A byte-identical copy of `transmit`, the A/A control's "ours" side.
        public var transmitCopy: String
        public var versionC: String
        public var probe: String
    }

    private func prepare() throws -> Tools {
        for tool in ["cc", "nfc-mfultralight", "nfc-read-forum-tag3"] where !Self.onPath(tool) {
            throw BenchError.unavailable("\(tool) is missing (apt-get install build-essential libnfc-bin)")
        }
        let tools = Tools(
            transmit: "\(work)/transmit", transmitCopy: "\(work)/transmit-copy", versionC: "\(work)/version-c",
            probe: "\(work)/exec-probe.so")
        let builds: [[String]] = [
            [
                "cc", "-O2", "-I/usr/include/PCSC", "-o", tools.transmit, "\(scripts)/measure-vs-c-transmit.c",
                "-lpcsclite",
            ],
            [
                "cc", "-O2", "-I/usr/include/PCSC", "-o", tools.versionC, "\(scripts)/version-c.c", "-lnfc",
                "-Wl,--no-as-needed", "-lpcsclite",
            ],
            [
                "cc", "-O2", "-shared", "-fPIC", "-I/usr/include/PCSC", "-o", tools.probe, "\(scripts)/exec-probe.c",
                "-ldl",
            ],
        ]
        for b in builds {
            let r = try BenchSpawn.run(b, in: work)
            guard r.status == 0 else { throw BenchError.unavailable("cannot build \(b[b.count - 2]) with cc") }
        }
        do { try FileManager.default.copyItem(atPath: tools.transmit, toPath: tools.transmitCopy) } catch {
            throw BenchError.failure("cannot copy the C loop for the A/A control: \(error)")
        }
        // The devices: one virtual card for measure apdu and the pcsc dump, a virtual PN532 per tag and timing.
        let card = try BenchSpawn.start([nfcbench, "virtual", "card", "--tag", "t4t-uri", "--quiet"], in: work)
        children.withLock { $0 = ($0.started + [card], card.pid) }
        for tag in Self.tags {
            for timing in Self.timings {
                let pn532 = try BenchSpawn.start(
                    [
                        nfcbench, "virtual", "pn532", "--pty", pty(tag, timing), "--tag", tag, "--timing", timing,
                        "--quiet", "--trace", "/dev/null",
                    ], in: work)
                children.withLock { $0.started.append(pn532) }
            }
        }
        let type3 = try BenchSpawn.start(
            [
                nfcbench, "virtual", "pn532", "--pty", pty(Self.type3Tag, "real"), "--tag", Self.type3Tag,
                "--timing", "real", "--quiet", "--trace", "/dev/null",
            ], in: work)
        children.withLock { $0.started.append(type3) }
        for (tag, timings) in Self.tags.map({ ($0, Self.timings) }) + [(Self.type3Tag, ["real"])] {
            for timing in timings {
                var waited = 0
                while (try? FileManager.default.destinationOfSymbolicLink(atPath: pty(tag, timing))) == nil {
                    guard waited < 500 else { throw BenchError.failure("the virtual PN532 for \(tag) did not start") }
                    usleep(10_000)
                    waited += 1
                }
            }
        }
        Thread.sleep(forTimeInterval: 1.5)  // pcscd sees the virtual card (it polls vpcd)
        return tools
    }

    private func pty(_ tag: String, _ timing: String) -> String { "\(work)/\(tag)-\(timing).pty" }

    private func checked(_ o: BenchSpawn.Outcome, _ what: String) throws -> BenchSpawn.Outcome {
        guard o.status == 0 else {
            throw BenchError.failure("\(what) exited \(o.status)" + (o.lastError.isEmpty ? "" : ": \(o.lastError)"))
        }
        return o
    }

    /// µs from spawn to `function`, through the LD_PRELOAD probe.
    private func probed(_ argv: [String], _ function: String, _ probe: String, device: String? = nil) throws -> Double {
        let out = "\(work)/probe-\(UInt32.random(in: 0...UInt32.max)).txt"
        defer { unlink(out) }
        var env = ["LD_PRELOAD": probe, "NFCBENCH_PROBE_OUT": out]
        if let device {
            env["LIBNFC_DEVICE"] = device
            env["LIBNFC_AUTO_SCAN"] = "false"
        }
        env["NFCBENCH_SPAWN_NS"] = String(BenchSpawn.monotonicNanoseconds())
        _ = try checked(BenchSpawn.run(argv, environment: env, in: work), argv.prefix(2).joined(separator: " "))
        let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(function + " ") }),
            let us = Double(line.split(separator: " ")[1])
        else { throw BenchError.failure("the exec probe saw no \(function) in \(argv[0])") }
        return us
    }

    // MARK: figures

    /// A duration in seconds, as a `Double`.
    public static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    public static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let s = values.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    public static func number(_ json: String, key: String) -> Double? {
        guard let r = json.range(of: "\"\(key)\":") else { return nil }
        let rest = json[r.upperBound...].prefix { "0123456789.eE+-".contains($0) }
        return Double(rest)
    }

    public static func table(_ rows: [Row]) -> String {
        func f(_ v: Double?, _ unit: String) -> String {
            guard let v else { return "" }
            if unit == "APDU/s" || unit == "inputs/s" || unit == "runs/s" { return String(format: "%.0f", v) }
            if unit == "%" { return String(format: "%.2f %%", v) }
            return String(format: "%.2f %@", v, unit)
        }
        var lines = [
            "figure".padded(52) + "ours".padded(14) + "theirs".padded(14) + "ratio".padded(8) + "runs".padded(6)
                + "goal"
        ]
        for r in rows {
            let mark = r.met.map { $0 ? " ✓" : " ✗" } ?? ""
            lines.append(
                r.name.padded(52) + f(r.ours, r.unit).padded(14) + f(r.theirs, r.unit).padded(14)
                    + ratioText(r).padded(8) + "\(r.runs)".padded(6) + r.goal
                    + mark + (r.theirsName.map { "  (theirs: \($0))" } ?? ""))
        }
        return lines.joined(separator: "\n")
    }

    /// The ratio to two decimals, or to three when two would print the goal's own bound
    /// ("≥ 0.98" beside 0.976 would read 0.98 ✗): the printed figure never contradicts its mark.
    public static func ratioText(_ r: Row) -> String {
        guard let ratio = r.ratio else { return "" }
        let two = String(format: "%.2f", ratio)
        let bound = r.goal.split(separator: " ").last.flatMap { Double($0) }
        if r.met != nil, let bound, r.goal.hasPrefix("≥") || r.goal.hasPrefix("≤"), Double(two) == bound,
            ratio != bound
        {
            return String(format: "%.3f", ratio)
        }
        return two
    }

    public static func onPath(_ tool: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)")
        }
    }

    public static func loadAverage() -> String {
        ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "").split(separator: " ").prefix(3)
            .joined(separator: " ")
    }

    public static func machine() -> String {
        let cpu =
            ((try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? "").split(separator: "\n")
            .first { $0.hasPrefix("model name") }.map {
                String($0.split(separator: ":").last ?? "").trimmingCharacters(in: .whitespaces)
            }
            ?? "unknown CPU"
        return "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(cpu)"
    }

    public static func iso8601(_ d: Date) -> String { d.formatted(.iso8601) }
}

extension String {
    fileprivate func padded(_ n: Int) -> String {
        count >= n ? self + " " : self + String(repeating: " ", count: n - count)
    }
}
