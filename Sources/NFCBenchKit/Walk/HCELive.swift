import Foundation
public import HCEEvents
public import NFCHardware
public import NFCTrace
import Synchronization
public import VirtualHardware

/// `LibNFCDevice` target mode as an `HCETargetLink`: `nfc_target_init` waits forever (a
/// signal ends it through `nfc_abort_command`), `NFC_ETGRELEASED` is the reader's release.
public struct LibNFCTargetLink: HCETargetLink {
    public let device: LibNFCDevice

    public init(device: LibNFCDevice) { self.device = device }

    public func hceTargetInit(uid: [UInt8], atqa: [UInt8], sak: UInt8, ats: [UInt8]) throws -> [UInt8] {
        try device.targetInit(uid: uid, atqa: atqa, sak: sak, ats: ats, timeout: .forever)
    }

    public func hceTargetReceive() throws -> [UInt8]? {
        do { return try device.targetReceive(timeout: .forever) } catch let e as LibNFCError
            where e.code == .targetReleased
        {
            return nil
        }
    }

    public func hceTargetSend(_ response: [UInt8]) throws {
        try device.targetSend(response, timeout: .forever)
    }
}

/// A flag set from a signal handler's queue.
public final class SignalFlag: Sendable {
    public init() {}
    private let value = Mutex(false)
    public func set() { value.withLock { $0 = true } }
    public var isSet: Bool { value.withLock { $0 } }
}

/// What `emulate` and `walk --device` share: the app's prefixes, the trace header's model,
/// the live phone on the trace, its records, text lines and summary.
public enum HCELive {
    public static func prefixes(_ arg: String?) throws(BenchError) -> [SelectIdentifierPrefix] {
        var prefixes: [SelectIdentifierPrefix] = []
        for word in (arg ?? "").split(separator: ",") where !word.isEmpty {
            do { prefixes.append(try SelectIdentifierPrefix(hex: String(word))) } catch {
                throw BenchError.usage("--app-prefixes: \(error)")
            }
        }
        return prefixes
    }

    /// The header's `model` for the live phone: the app's prefixes, the phone's identity
    /// (`atqa` in wire order, LSB first, as every trace writes ATQA; `uid` the first
    /// emulation's, `uid_choice` `random` or `fixed`, with `uid_seed` for random ones: each
    /// emulation's UID is on its `isoDepActivated` line) and the model's parameters.
    public static func model(
        app: ContactlessPhone.DefaultApp, uid: HCEPhoneIdentity.UIDChoice,
        identity: HCEPhoneIdentity = HCEPhoneIdentity(), parameters p: HCEParameters = HCEParameters()
    ) -> JSONObject {
        var phone: JSONObject = [
            "uid": .string(uid.firstUID.hexString()), "atqa": .string(identity.atqa.reversed().hexString()),
            "sak": .string(String(format: "%02X", identity.sak)), "ats": .string(identity.ats.hexString()),
            "atr": .string(identity.atr.hexString()),
        ]
        switch uid {
        case .fixed:
            phone["uid_choice"] = .string("fixed")
        case .random(let seed):
            phone["uid_choice"] = .string("random")
            phone["uid_seed"] = .int(Int64(truncatingIfNeeded: seed))
        }
        return [
            "app_prefixes": .array(app.selectIdentifierPrefixes.map { .string($0.description) }),
            "phone": .object(phone),
            "parameters": .object(WalkReport.parametersJSON(liveParameters(p))),
        ]
    }

    /// Random UIDs from `seed`, or from a new seed when none is given.
    public static func randomUIDs(seed: Int?) -> HCEPhoneIdentity.UIDChoice {
        .random(seed: UInt64(seed ?? Int.random(in: 0...Int.max)))
    }

    /// The parameters a live phone plays by (no S(WTX): see `HCELivePhone`).
    public static func liveParameters(_ p: HCEParameters) -> HCEParameters {
        var live = p
        live.sendsWaitingTimeExtensions = false
        return live
    }

    /// The live phone on the trace's clock; every event becomes a trace line (and, without
    /// `--json`, a text line on stdout, under ``textHeader`` that the caller prints once its
    /// own start line is out).
    public static func makePhone(
        app: ContactlessPhone.DefaultApp, uid: HCEPhoneIdentity.UIDChoice, trace: TraceWriter,
        json: Bool, expressCredentials: [ContactlessPhone.ExpressCredential] = []
    ) -> HCELivePhone {
        HCELivePhone(
            app: app, uid: uid, expressCredentials: expressCredentials,
            clock: { .microseconds(trace.elapsedMicroseconds) },
            onEvent: { e in
                let written = trace.emit(record(e))
                if !json { BenchOutput.out(text(written)) }
            })
    }

    public static func record(_ e: HCELiveEvent) -> TraceRecord {
        var o: JSONObject = ["source": .string(e.source.rawValue)]
        if let r = e.reader { o["reader"] = .string(r) }
        if let u = e.uid { o["uid"] = .string(u.hexString()) }
        if let c = e.command { o["apdu"] = .string(c.hexString()) }
        if e.event == TraceRecord.Kind.apdu.rawValue {
            o["response"] = e.response.map { .string($0.hexString()) } ?? .null
            o["answered_by"] = e.answeredBy.map { .string($0.rawValue) } ?? .null
        } else if let r = e.response {
            o["response"] = .string(r.hexString())
        }
        if let d = e.detail { o[WalkReport.detailKey(TraceRecord.Kind(rawValue: e.event))] = .string(d) }
        return TraceRecord(TraceRecord.Kind(rawValue: e.event), at: e.time.wholeMicroseconds, o)
    }

    public static let textHeader =
        pad("t (ms)", 11, left: true) + "  " + pad("reader", 22) + pad("source", 8) + pad("event", 18) + "detail"

    public static func pad(_ s: String, _ n: Int, left: Bool = false) -> String {
        if s.count >= n { return left ? s : s + " " }
        let fill = String(repeating: " ", count: n - s.count)
        return left ? fill + s : s + fill
    }

    /// The human line of a live-phone record (what `emulate`, `walk --device` and
    /// `trace show` print).
    public static func text(_ r: TraceRecord) -> String {
        func spaced(_ key: String) -> String? { r[key]?.stringValue.map(TraceLines.spaced) }
        let event = r.kind ?? "?"
        var detail = r[WalkReport.detailKey(event)]?.stringValue ?? ""
        switch event {
        case .apdu:
            detail =
                (spaced("apdu") ?? "") + " → " + (spaced("response") ?? "(no answer)")
                + "  [" + (r["answered_by"]?.stringValue ?? "reader timeout") + "]"
        case .received, .targetReceive:
            detail = (spaced("apdu") ?? "") + (detail.isEmpty ? "" : "  " + detail)
        case .targetSend, .vpcdATR:
            detail = (spaced("response") ?? "") + (detail.isEmpty ? "" : "  " + detail)
        case "pcscTransmit":
            detail = (spaced("apdu") ?? "") + " → " + (spaced("response") ?? "") + "  " + detail
        case .nfcEvent: detail = "default app woken (scene nfcEvent)"
        default: break
        }
        let ms = String(format: "%.3f", Double(r.time ?? 0) / 1000)
        return pad(ms, 11, left: true) + "  " + pad(r["reader"]?.stringValue ?? "-", 22)
            + pad(r["source"]?.stringValue ?? "-", 8) + pad(event.rawValue, 18) + detail
    }

    /// Per-reader counts from a timeline, in first-seen order.
    struct ReaderCount {
        var name: String
        var showable = true
        var woke = false
        var apdusToApp = 0
        var apdusBySystem = 0
        var timeouts = 0
        var wakeBeforeFirstAPDU: Bool?
    }

    static func counts(_ records: [TraceRecord]) -> [ReaderCount] {
        var order: [String] = []
        var by: [String: ReaderCount] = [:]
        for e in records {
            guard let event = e.kind, event != .summary, event != .header else { continue }
            let name = e["reader"]?.stringValue ?? "-"
            if by[name] == nil { order.append(name) }
            var r = by[name] ?? ReaderCount(name: name)
            switch (e["source"]?.stringValue ?? "", event) {
            case ("bench", "notShowable"): r.showable = false
            case ("model", "nfcEvent"): r.woke = true
            case ("model", "apdu"):
                if r.wakeBeforeFirstAPDU == nil { r.wakeBeforeFirstAPDU = r.woke }
                switch e["answered_by"]?.stringValue {
                case "app"?: r.apdusToApp += 1
                case nil: r.timeouts += 1
                default: r.apdusBySystem += 1
                }
            default: break
            }
            by[name] = r
        }
        return order.compactMap { by[$0] }
    }

    /// The summary record (no `t_us`: set ``/NFCTrace/TraceRecord/time`` when it is written).
    public static func summary(_ records: [TraceRecord], extra: JSONObject = [:]) -> TraceRecord {
        let c = counts(records)
        var o: JSONObject = [
            "readers": .int(Int64(c.count)),
            "shown": .int(Int64(c.filter(\.showable).count)),
            "not_showable": .array(c.filter { !$0.showable }.map { .string($0.name) }),
            "wakes": .int(Int64(c.filter(\.woke).count)),
            "served": .int(Int64(c.filter { $0.apdusToApp > 0 }.count)),
            "per_reader": .array(
                c.map { r in
                    .object([
                        "reader": .string(r.name), "showable": .bool(r.showable), "woke": .bool(r.woke),
                        "apdus_to_app": .int(Int64(r.apdusToApp)), "apdus_by_system": .int(Int64(r.apdusBySystem)),
                        "reader_timeouts": .int(Int64(r.timeouts)),
                        "wake_before_first_apdu": r.wakeBeforeFirstAPDU.map { .bool($0) } ?? .null,
                    ])
                }),
        ]
        for e in extra.entries { o[e.key] = e.value }
        return TraceRecord(.summary, at: nil, o)
    }

    /// The SUMMARY block of a summary record (and its `outcome`: how `emulate` ended).
    public static func summaryText(_ s: TraceRecord) -> String {
        var out = "\nSUMMARY\n"
        if case .array(let readers)? = s["per_reader"] {
            for case .object(let r) in readers {
                out += "  " + pad(r["reader"]?.stringValue ?? "-", 22)
                if r["showable"] == .bool(false) {
                    out += "not showable over this stack (never reaches ISO-DEP)\n"
                    continue
                }
                out +=
                    (r["woke"] == .bool(true) ? "woke  " : "quiet ")
                    + "\(Figures.count(Int(r["apdus_to_app"]?.intValue ?? 0), "APDU")) to the app, "
                    + "\(r["apdus_by_system"]?.intValue ?? 0) by the system"
                let timeouts = Int(r["reader_timeouts"]?.intValue ?? 0)
                if timeouts > 0 { out += ", \(Figures.count(timeouts, "reader timeout"))" }
                out += "\n"
            }
        }
        if let outcome = s["outcome"]?.stringValue { out += "  " + outcome }
        return out
    }

    /// Runs blocking work on a thread of its own (never on the cooperative pool, where the
    /// stand-in app's task runs).
    public static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await OffPool.run(name: "nfcbench.hce", body)
    }
}
