import Foundation
import NFCBase
import NFCHardware
public import NFCTags
public import NFCTrace
import ReaderFrontend
public import ReaderSession
import Synchronization
import VirtualHardware

/// The devices `check equivalence` compares, each started the one way the bench starts it
/// (``VirtualBench``): the in-process simulator, a vpcd card behind the real pcscd as a PC/SC
/// part 3 reader shows it and as an ACR122U shows it, and the virtual PN532 through libnfc's own
/// `pn532_uart` driver.
public enum EquivalenceDevice: String, CaseIterable, Sendable {
    case sim, pcsc, acr122u, pn532

    /// The device needs a vpcd slot of pcscd.
    public var usesVPCD: Bool { self == .pcsc || self == .acr122u }

    /// Why this device cannot present `file`'s tag, or nil when it can. A PN532 has no ISO
    /// 15693 (NXP PN532 data sheet: reader/writer modes ISO 14443A/B and FeliCa only), and
    /// neither has an ACR122U, which is a PN532 behind a PC/SC front; the ACR122U
    /// personality models its Type 2 and ISO-DEP paths only, so FeliCa on it is not modelled
    /// here (a real ACR122U reads FeliCa, with its own ATR form `… 03 F0 11 …`).
    public func notOffered(_ file: TagFile) -> String? {
        switch (self, file.type.isISO15693, file.type.isFeliCa) {
        case (.pn532, true, _): "a PN532 has no ISO 15693 (NXP PN532 data sheet)"
        case (.acr122u, true, _): "an ACR122U (a PN532 inside) has no ISO 15693"
        case (.acr122u, _, true): "FeliCa through the ACR122U personality is not modelled (its ATR form 03 F0 11)"
        default: nil
        }
    }
}

/// One vpcd reader entry of a pcscd: its two slots, each a reader on its TCP port.
///
/// `scripts/with-pcscd` serves `hardware/pcsc`'s entry ("Virtual PCD 00 00" on 35963, "… 00 01"
/// on 35964) and, with `NFCBENCH_VPCD_READERS=N`, N − 1 more: entry k is "Virtual PCD k 00 00"
/// and "… 00 01" on ports 35963 + 2k and 35964 + 2k, each with its own copy of the driver
/// (one driver file serves one entry's slots: `shared/reference/virtual-devices.md` B6).
public struct VPCDEntry: Sendable, Hashable {
    public let index: Int
    /// Slot 0's and slot 1's reader names.
    public let readers: [String]
    /// Slot 0's and slot 1's TCP ports.
    public let ports: [UInt16]

    public init(index: Int) {
        self.index = index
        let prefix = index == 0 ? "Virtual PCD" : "Virtual PCD \(index)"
        readers = ["\(prefix) 00 00", "\(prefix) 00 01"]
        ports = [UInt16(35963 + 2 * index), UInt16(35964 + 2 * index)]
    }

    /// The entries whose two readers pcscd lists now (from entry 0 up, stopping at the first gap).
    public static func available(_ readerNames: [String]) -> [VPCDEntry] {
        var out: [VPCDEntry] = []
        for k in 0..<8 {
            let entry = VPCDEntry(index: k)
            guard entry.readers.allSatisfy(readerNames.contains) else { break }
            out.append(entry)
        }
        return out
    }

    /// The entries of the pcscd this process talks to (none without a pcscd).
    public static func available() -> [VPCDEntry] {
        guard let ctx = try? PCSCContext() else { return [] }
        defer { ctx.release() }
        return available((try? ctx.readers()) ?? [])
    }
}

/// One device's run of a row: its session's ending and records, the tag it left (write and
/// format rows) and, for those, another device's read of that tag.
public struct EquivalenceRun: Sendable {
    /// The device string the session ran on (`sim:…`, `pcsc:…`, `pn532_uart:…`).
    public var deviceName: String
    public var ending: NFCReaderError.Code
    /// The session's trace records (the session system's and the app's), oldest first.
    public var records: [JSONObject]
    /// The tag as the run left it: the file with the device's memory (write and format rows).
    public var tagAfter: TagFile?
    /// Write and format rows: the device that read `tagAfter` back, and that read's lines.
    public var readBack: (device: EquivalenceDevice, lines: [String])?
    /// Lines compared beside the Core NFC events: the pages read (rows of faulty files) and
    /// the pages or NDEF file the write left (write and format rows).
    public var extraLines: [String] = []

    public init(
        deviceName: String, ending: NFCReaderError.Code, records: [JSONObject], tagAfter: TagFile? = nil,
        readBack: (device: EquivalenceDevice, lines: [String])? = nil, extraLines: [String] = []
    ) {
        self.deviceName = deviceName
        self.ending = ending
        self.records = records
        self.tagAfter = tagAfter
        self.readBack = readBack
        self.extraLines = extraLines
    }

    /// What is compared, in order: the Core NFC-level events, then ``extraLines``, then the
    /// read-back's lines.
    public var events: [String] {
        records.compactMap(Self.line) + extraLines + (readBack?.lines.map { "read back: " + $0 } ?? [])
    }

    /// ATQA/SAK as the device showed them ("not shown" for a PC/SC reader), ATQA in wire order
    /// as the trace has it (`--json`'s `atqa_sak`).
    public var activation: String { activation(shown: false) }

    /// The same for a person: ATQA most significant byte first, as `poll` and `nfc-list` show it.
    public var activationText: String { activation(shown: true) }

    private func activation(shown: Bool) -> String {
        for r in records where r["event"]?.stringValue == "detected" {
            guard let t = TraceRecord.Detected(TraceRecord(json: r))?.targets.first else { continue }
            if let atqa = t.atqa, let sak = t.sak {
                let bytes = shown ? [UInt8](hex: atqa) : nil
                return "\(bytes.map { ISO14443AActivation.atqaText($0, separator: "") } ?? atqa)/\(sak)"
            }
            return "not shown"
        }
        return "-"
    }

    /// One record as a comparable line, times left out; `nil` for records not compared.
    public static func line(_ r: JSONObject) -> String? {
        guard let event = r["event"]?.stringValue else { return nil }
        func v(_ k: String) -> String { r[k].map { $0.serialized } ?? "-" }
        switch event {
        case "didBecomeActive": return event
        case "detected":
            guard let detected = TraceRecord.Detected(TraceRecord(json: r)) else { return event }
            return "detected " + detected.targets.map { "\($0.family ?? "?") \($0.uid)" }.joined(separator: ", ")
        case "ndefRead": return "ndefRead \(v("outcome")) \(v("code")) \(v("records"))"
        case "didDetectNDEFs": return "didDetectNDEFs \(v("messages"))"
        case "didDetectTags":
            if case .array(let tags)? = r["tags"] { return "didDetectTags \(tags.count)" }
            return event
        case "tagOperation": return "tagOperation \(v("name"))"
        case "tagOperationEnded": return "tagOperationEnded \(v("code"))\(r["result"] != nil ? " success" : "")"
        case "readNDEF": return "app readNDEF \(v("records"))"
        case "readNDEFFailed": return "app readNDEF failed \(v("code"))"
        case "writeNDEF": return "app writeNDEF \(v("records"))"
        case "writeNDEFFailed": return "app writeNDEF failed \(v("code"))"
        case "alertMessage": return "alertMessage \(v("message"))"
        case "didInvalidateWithError": return "didInvalidateWithError \(v("code"))"
        default: return nil
        }
    }

    /// The Type 2 pages the session's READs and FAST_READs got back, as ranges (`0-11`).
    static func pagesRead(_ records: [JSONObject]) -> String {
        var pages = Set<Int>()
        for r in records where r["event"]?.stringValue == "frame" {
            guard let c = r["command"]?.stringValue.flatMap({ [UInt8](hex: $0) }), let op = c.first,
                let answer = r["response"]?.stringValue, !answer.isEmpty
            else { continue }
            if op == 0x30, c.count >= 2 { pages.formUnion(Int(c[1])...(Int(c[1]) + 3)) }
            if op == 0x3A, c.count >= 3, c[2] >= c[1] { pages.formUnion(Int(c[1])...Int(c[2])) }
        }
        var ranges: [String] = []
        var run: (Int, Int)? = nil
        for p in pages.sorted() {
            if let r = run, p == r.1 + 1 {
                run = (r.0, p)
                continue
            }
            if let r = run { ranges.append(r.0 == r.1 ? "\(r.0)" : "\(r.0)-\(r.1)") }
            run = (p, p)
        }
        if let r = run { ranges.append(r.0 == r.1 ? "\(r.0)" : "\(r.0)-\(r.1)") }
        return ranges.isEmpty ? "none" : ranges.joined(separator: ",")
    }

    /// What a write left on the tag, against the file it started from: each changed Type 2
    /// page, or the Type 4 NDEF file.
    static func memoryLines(before: TagFile, after: TagFile) -> [String] {
        if let t4 = after.type4 {
            return ["NDEF file := \(t4.ndefFile.hexString())"]
        }
        if let f = after.feliCa, let b = before.feliCa {
            var out: [String] = []
            for (i, sys) in f.systems.enumerated() where i < b.systems.count {
                for (k, blk) in sys.blocks.enumerated()
                where k >= b.systems[i].blocks.count || blk != b.systems[i].blocks[k] {
                    out.append("system \(String(format: "%04X", sys.code)) block \(k) := \(blk.hexString())")
                }
            }
            return out.isEmpty ? ["no block changed"] : out
        }
        if let v = after.iso15693, let b = before.iso15693 {
            let changed = v.blocks.indices.filter { $0 >= b.blocks.count || v.blocks[$0] != b.blocks[$0] }
            return changed.isEmpty ? ["no block changed"] : changed.map { "block \($0) := \(v.blocks[$0].hexString())" }
        }
        let changed = after.pages.indices.filter { $0 >= before.pages.count || after.pages[$0] != before.pages[$0] }
        return changed.isEmpty ? ["no page changed"] : changed.map { "page \($0) := \(after.pages[$0].hexString())" }
    }
}

/// One tag file × mode: each device's run, compared with the first device's.
public struct EquivalenceRow: Sendable {
    public var tag: String
    public var mode: EquivalenceMode
    public var runs: [(device: EquivalenceDevice, run: EquivalenceRun)]
    /// The devices that cannot present this tag, each with why (``EquivalenceDevice/notOffered(_:)``):
    /// not run, not compared, said in the row.
    public var notOffered: [(device: EquivalenceDevice, reason: String)] = []

    public init(
        tag: String, mode: EquivalenceMode, runs: [(device: EquivalenceDevice, run: EquivalenceRun)],
        notOffered: [(device: EquivalenceDevice, reason: String)] = []
    ) {
        self.tag = tag
        self.mode = mode
        self.runs = runs
        self.notOffered = notOffered
    }

    public var reference: [String] { runs.first?.run.events ?? [] }

    /// The first difference from the reference, or nil (``/NFCTrace/TraceDiff/firstDifference(_:_:)``
    /// over the Core NFC-level lines, as `nfcbench trace diff` compares whole records).
    public func difference(_ run: EquivalenceRun) -> String? { TraceDiff.firstDifference(reference, run.events) }

    public var same: Bool { runs.allSatisfy { difference($0.run) == nil } }

    public var text: String {
        var parts: [String] = []
        for (device, run) in runs.dropFirst() {
            parts.append("\(device.rawValue): " + (difference(run).map { "differs (\($0))" } ?? "same"))
        }
        for (device, reason) in notOffered { parts.append("\(device.rawValue): not offered (\(reason))") }
        let ending = runs.first.map { "\($0.run.ending.rawValue)" } ?? "-"
        let activation = runs.map { "\($0.device.rawValue) \($0.run.activationText)" }.joined(separator: ", ")
        return "\(tag) \(mode.rawValue): ending \(ending); " + parts.joined(separator: "; ")
            + "; ATQA/SAK: \(activation)"
    }

    public var json: JSONValue {
        var o: JSONObject = ["tag": .string(tag), "mode": .string(mode.rawValue), "same": .bool(same)]
        o["targets"] = .array(reference.filter { $0.hasPrefix("detected ") }.map { .string(String($0.dropFirst(9))) })
        var devices = JSONObject()
        for (device, run) in runs {
            var d: JSONObject = [
                "ending": .int(Int64(run.ending.rawValue)), "atqa_sak": .string(run.activation),
                "events": .int(Int64(run.events.count)),
            ]
            if let diff = difference(run) { d["difference"] = .string(diff) }
            if let back = run.readBack { d["read_back_by"] = .string(back.device.rawValue) }
            devices[device.rawValue] = .object(d)
        }
        for (device, reason) in notOffered { devices[device.rawValue] = .object(["not_offered": .string(reason)]) }
        o["devices"] = .object(devices)
        return .object(o)
    }
}

/// Why the check could not run a device.
public struct EquivalenceError: Error, Sendable, CustomStringConvertible {
    public var description: String
    /// The device or service is not there (exit 69), rather than a bad tag file (65).
    public var unavailable: Bool
    init(_ description: String, unavailable: Bool = true) {
        self.description = description
        self.unavailable = unavailable
    }
}

/// `nfcbench check equivalence` as a library: the same session on every device gives the same
/// Core NFC events, for every tag file and mode. Write and format rows also compare the bytes
/// the write left on the tag and have another device read them back; rows of a faulty file
/// also compare the pages read before the loss.
///
/// Rows run side by side, one per vpcd reader entry at a time (``VPCDEntry``: pcsc on its
/// slot 0, acr122u on slot 1), the devices of a row together; without vpcd devices, four rows
/// at a time. Each device's card is fresh for its run: a file's faults fire on each.
public struct EquivalenceCheck: Sendable {
    public var devices: [EquivalenceDevice]
    public var modes: [EquivalenceMode]
    /// Each session's time limit: tags no session delivers end with 201.
    public var timeLimit: Duration
    /// The vpcd entries to run pcsc and acr122u on.
    public var entries: [VPCDEntry]

    public init(
        devices: [EquivalenceDevice] = EquivalenceDevice.allCases,
        modes: [EquivalenceMode] = EquivalenceMode.allCases, timeLimit: Duration = .seconds(3),
        entries: [VPCDEntry] = []
    ) {
        self.devices = devices
        self.modes = modes
        self.timeLimit = timeLimit
        self.entries = entries
    }

    /// The rows for `files` (name, file), each row handed to `row` as soon as it and every row
    /// before it are done (so they come in order), and all of them returned.
    /// - Throws: ``EquivalenceError`` when a device can't be had.
    public func run(
        _ files: [(name: String, file: TagFile)], row: @escaping @Sendable (EquivalenceRow) -> Void = { _ in }
    ) async throws -> [EquivalenceRow] {
        let needsVPCD = devices.contains(where: \.usesVPCD)
        if needsVPCD && entries.isEmpty {
            throw EquivalenceError("no vpcd reader in pcscd (scripts/with-pcscd serves one)")
        }
        var work: [(name: String, file: TagFile, mode: EquivalenceMode)] = []
        for (name, file) in files {
            for mode in modes where !(mode.writes && file.type.isSensedOnly) { work.append((name, file, mode)) }
        }
        let pool = EntryPool(needsVPCD ? entries : (0..<4).map { VPCDEntry(index: $0) })
        let done = OrderedRows(count: work.count, deliver: row)
        let check = self
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (i, w) in work.enumerated() {
                group.addTask {
                    let entry = await pool.take()
                    do {
                        let r = try await check.row(w.name, w.file, w.mode, entry: entry, serial: i)
                        await pool.give(entry)
                        done.finished(i, r)
                    } catch {
                        await pool.give(entry)
                        throw error
                    }
                }
            }
            try await group.waitForAll()
        }
        return done.all
    }

    /// One row: every device's run side by side; for a write row, then each device's tag read
    /// back by the next device.
    func row(
        _ name: String, _ file: TagFile, _ mode: EquivalenceMode, entry: VPCDEntry, serial: Int
    ) async throws -> EquivalenceRow {
        let devices = self.devices.filter { $0.notOffered(file) == nil }
        let runs = try await legs(devices.map { ($0, file, mode) }, entry: entry, serial: serial)
        var out = EquivalenceRow(
            tag: name, mode: mode, runs: [],
            notOffered: self.devices.compactMap { d in d.notOffered(file).map { (d, $0) } })
        for (i, device) in devices.enumerated() {
            var run = runs[i]
            if !file.faults.isEmpty && file.type.isType2 {
                run.extraLines.append("pages read: " + EquivalenceRun.pagesRead(run.records))
            }
            if mode.writes, let after = run.tagAfter {
                run.extraLines += EquivalenceRun.memoryLines(before: file, after: after)
            }
            out.runs.append((device, run))
        }
        guard mode.writes, devices.count > 1 else { return out }
        // Each device's result on the next device: ndef-rw reads it and taps Done.
        var backs: [(EquivalenceDevice, TagFile, EquivalenceMode)] = []
        for i in devices.indices {
            let reader = devices[(i + 1) % devices.count]
            var left = out.runs[i].run.tagAfter ?? file
            left.faults = []  // the tag's faults fired in the write run; the read-back reads what it left
            backs.append((reader, left, .ndefRW))
        }
        let read = try await legs(backs, entry: entry, serial: serial)
        for i in devices.indices {
            out.runs[i].run.readBack = (backs[i].0, read[i].records.compactMap(EquivalenceRun.line))
        }
        return out
    }

    /// Runs the given sessions side by side, each device once at most (their readers differ).
    func legs(
        _ legs: [(EquivalenceDevice, TagFile, EquivalenceMode)], entry: VPCDEntry, serial: Int
    ) async throws -> [EquivalenceRun] {
        let limit = timeLimit
        return try await withThrowingTaskGroup(of: (Int, EquivalenceRun).self) { group in
            for (i, leg) in legs.enumerated() {
                group.addTask {
                    (i, try await EquivalenceLeg.run(leg.0, leg.1, leg.2, limit: limit, entry: entry, serial: serial))
                }
            }
            var out = [EquivalenceRun?](repeating: nil, count: legs.count)
            for try await (i, run) in group { out[i] = run }
            return out.map { $0! }
        }
    }
}

/// Hands out vpcd entries, one row at a time each.
private actor EntryPool {
    private var free: [VPCDEntry]
    private var waiting: [CheckedContinuation<VPCDEntry, Never>] = []
    init(_ entries: [VPCDEntry]) { free = entries }
    func take() async -> VPCDEntry {
        if !free.isEmpty { return free.removeFirst() }
        return await withCheckedContinuation { waiting.append($0) }
    }
    func give(_ e: VPCDEntry) {
        if waiting.isEmpty { free.append(e) } else { waiting.removeFirst().resume(returning: e) }
    }
}

/// Rows as they finish, delivered in order: under the lock, so two rows finishing together
/// cannot hand their rows out of order.
private final class OrderedRows: Sendable {
    private let state: Mutex<(rows: [EquivalenceRow?], next: Int)>
    private let deliver: @Sendable (EquivalenceRow) -> Void
    init(count: Int, deliver: @escaping @Sendable (EquivalenceRow) -> Void) {
        state = Mutex((Array(repeating: nil, count: count), 0))
        self.deliver = deliver
    }
    func finished(_ i: Int, _ row: EquivalenceRow) {
        state.withLock { s in
            s.rows[i] = row
            while s.next < s.rows.count, let r = s.rows[s.next] {
                deliver(r)
                s.next += 1
            }
        }
    }
    var all: [EquivalenceRow] { state.withLock { $0.rows.compactMap { $0 } } }
}

/// One device's session on a fresh card made from a tag file.
enum EquivalenceLeg {
    static func run(
        _ device: EquivalenceDevice, _ file: TagFile, _ mode: EquivalenceMode, limit: Duration, entry: VPCDEntry,
        serial: Int
    ) async throws -> EquivalenceRun {
        switch device {
        case .sim: return try await sim(file, mode, limit: limit, serial: serial)
        case .pcsc, .acr122u: return try await vpcd(device, file, mode, limit: limit, entry: entry)
        case .pn532: return try await pn532(file, mode, limit: limit)
        }
    }

    static func sim(_ file: TagFile, _ mode: EquivalenceMode, limit: Duration, serial: Int) async throws
        -> EquivalenceRun
    {
        let clock = ContinuousReaderClock()
        let scenario = Scenario(
            reader: "equivalence-\(serial)-\(UInt32.random(in: 0...UInt32.max))",
            steps: [.init(at: .milliseconds(50), action: .present(tag: "t", as: "t", faults: []))])
        let reader: SimulatedReader
        do throws(DataFileError) {
            reader = try SimulatedReader(scenario: scenario, tags: ["t": file], clock: clock)
        } catch {
            throw EquivalenceError(error.description, unavailable: false)
        }
        let frontend = ReaderFrontend(device: reader.field, clock: clock)
        defer { frontend.close() }
        let (ending, records) = await EquivalenceSession.run(frontend: frontend, mode: mode, limit: limit, file: file)
        let after = file.withMemory(type2: reader.field.type2Core("t"), type4: reader.field.type4Core("t"))
            .withMemory(feliCa: reader.field.feliCaCore("t"), iso15693: reader.field.iso15693Core("t"))
        return EquivalenceRun(deviceName: reader.identifier, ending: ending, records: records, tagAfter: after)
    }

    static func vpcd(
        _ device: EquivalenceDevice, _ file: TagFile, _ mode: EquivalenceMode, limit: Duration, entry: VPCDEntry
    ) async throws -> EquivalenceRun {
        let personality: any VirtualCardPersonality
        do throws(VirtualCardTagFileError) {
            personality =
                device == .acr122u ? try file.makeACR122UPersonality() : try file.makeVirtualCardPersonality()
        } catch { throw EquivalenceError(error.description, unavailable: false) }
        let slot = device == .acr122u ? 1 : 0
        let reader = entry.readers[slot]
        // pcscd notices a card leaving only at its next poll (≈ 400 ms for vpcd): start each run
        // from an empty reader and begin once pcscd shows this run's card, so no run meets the
        // card of the one before.
        try await offPool { try waitForReader(reader, card: false) }
        let card = VirtualCard(personality: personality, configuration: .init(port: entry.ports[slot]))
        card.start()
        let frontend: ReaderFrontend
        do {
            // Opening the reader connects to pcscd (blocking): off the pool too.
            frontend = try await offPool {
                try waitForReader(reader, card: true, atr: personality.atr)
                return try BenchDevice("pcsc:" + reader).frontend()
            }
        } catch {
            card.stop()
            throw error as? EquivalenceError ?? EquivalenceError("\(reader): \(error)")
        }
        let (ending, records) = await EquivalenceSession.run(frontend: frontend, mode: mode, limit: limit, file: file)
        try? await offPool { frontend.close() }
        let after = card.withPersonality { p -> TagFile in
            switch p {
            case let p as TagFileCardPersonality: file.withMemory(type2: p.type2Core, type4: p.type4Application)
            case let p as ACR122UPersonality: file.withMemory(type2: p.type2Core, type4: p.type4Application)
            case let p as FeliCaPersonality: file.withMemory(feliCa: p.card.core, iso15693: nil)
            case let p as ISO15693Personality: file.withMemory(feliCa: nil, iso15693: p.card.core)
            default: file
            }
        }
        card.stop()
        try? await offPool { try waitForReader(reader, card: false) }
        return EquivalenceRun(deviceName: "pcsc:" + reader, ending: ending, records: records, tagAfter: after)
    }

    static func pn532(_ file: TagFile, _ mode: EquivalenceMode, limit: Duration) async throws -> EquivalenceRun {
        // Starting the chip and libnfc's open of it (pn532_uart's waits) block: off the pool.
        let fake: VirtualPN532 = try await offPool {
            do throws(BenchDeviceError) { return try VirtualBench.startPN532(tagFile: file) } catch {
                throw EquivalenceError(error.message, unavailable: error.kind == .unavailable)
            }
        }
        defer { fake.stop() }
        let name = VirtualBench.pn532Device(fake)
        let frontend: ReaderFrontend = try await offPool {
            do throws(BenchDeviceError) { return try BenchDevice(name).frontend() } catch {
                throw EquivalenceError(error.message)
            }
        }
        let (ending, records) = await EquivalenceSession.run(frontend: frontend, mode: mode, limit: limit, file: file)
        try? await offPool { frontend.close() }
        let after = fake.currentCard.map { $0.updating(file) }
        return EquivalenceRun(deviceName: name, ending: ending, records: records, tagAfter: after)
    }

    /// Waits (blocking, up to 5 s) until pcscd shows `reader` with a card of `atr` or without one.
    static func waitForReader(_ reader: String, card: Bool, atr: [UInt8]? = nil) throws(EquivalenceError) {
        let context: PCSCContext
        do { context = try PCSCContext() } catch { throw EquivalenceError("no PC/SC service: \(error)") }
        defer { context.release() }
        var known = PCSCReaderState.unaware(reader)
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            let change: PCSCStatusChange
            do { change = try context.waitForStatusChange(readers: [known], timeout: .milliseconds(500)) } catch {
                throw EquivalenceError("pcscd: \(error)")
            }
            if case .changed(let states) = change, let s = states.first {
                known = s
                if s.hasCard == card && (atr == nil || s.atr == atr) { return }
            }
        }
        throw EquivalenceError(
            "pcscd did not show \(card ? "the virtual card" : "an empty reader") on '\(reader)' within 5 s")
    }

    /// Blocking work on a thread of its own (never on the cooperative pool's two threads).
    static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await OffPool.run(name: "nfcbench.equivalence", body)
    }
}
