import Foundation
import HCEEvents
import NFCHardware
import NFCTags
import NFCTrace
import ReaderSession
import Synchronization
import VirtualHardware

/// `nfcbench emulate`: the phone model as an ISO/IEC 14443-4 card in libnfc target mode.
enum EmulateCommand {
    static let command = Command(
        path: ["emulate"],
        abstract: "Be the phone (HCE default app) in libnfc target mode for one reader",
        usage: "emulate --device CONNSTRING --app-prefixes AID,... [--uid HEX] [--json] [--trace FILE]",
        help: """
            OPTIONS:
              --device D            libnfc connstring: pn532_uart:/dev/ttyUSB0, pn53x_usb, …
                                    (a virtual PN532's pty link works the same)
              --app-prefixes AID,…  the default app's select-identifier-prefixes (hex, 5..16 bytes)
              --uid HEX             the 4-byte UID the phone presents (default 085A3C91; a PN532
                                    forces the first byte to 08, a random UID as an iPhone's)
              --json                JSON Lines: the trace's records on stdout
              --trace FILE          where the trace goes (default: the trace folder, see below)

            The phone model (field → default app woken → ISO-DEP → SELECT routed by prefix, the
            system answering PPSE and 6A 82) answers every APDU the reader sends; the stand-in
            app answers 90 00 to what reaches its CardSession. libnfc can't see a field, only
            the activation (nfc_target_init returning after anticollision and RATS): that is
            the first event, and the model's wake is placed there. Runs until the reader
            releases the card or Ctrl-C. ATS 05 78 80 70 02 (an iPhone's), ATQA 00 04, SAK 20.
            Traces: $NFCBENCH_TRACE_DIR, else $XDG_STATE_HOME/nfcbench/traces, else
            ~/.local/state/nfcbench/traces.
            """,
        run: { args in
            guard let device = try args.option("device") else { throw CLIError.usage("--device is required") }
            let prefixes = try HCELiveCLI.prefixes(try args.option("app-prefixes"))
            let uidText = try args.option("uid")
            let json = args.flag("json")
            let tracePath = try args.option("trace")
            try args.finish()

            var identity = HCEPhoneIdentity()
            if let uidText {
                guard let uid = [UInt8](hex: uidText), uid.count == 4 else {
                    throw CLIError.usage("--uid takes 4 bytes of hex (e.g. 085A3C91), not '\(uidText)'")
                }
                identity.uid = uid
            }
            let app = ContactlessPhone.DefaultApp(name: "app", selectIdentifierPrefixes: prefixes)
            let trace = try HCELiveCLI.openTrace(
                command: "emulate", path: tracePath, json: json,
                header: HCELiveCLI.header(command: "emulate", device: device, app: app, identity: identity))
            let phone = HCELiveCLI.makePhone(app: app, identity: identity, trace: trace, json: json)

            // Locks before frames: opening a PN53x sends frames (wake-up, SAMConfiguration),
            // so the reader's lock comes first; a reader a session holds is refused untouched.
            let spec = try DeviceFactory.resolve(device)
            guard case .libnfc = spec.kind else {
                throw CLIError.usage("emulate needs a libnfc device (target mode), not '\(device)'")
            }
            let lease = try takeReader(spec.identifier)
            defer { lease.release() }
            let nfc: LibNFCDevice
            do {
                nfc = try LibNFCContext().open(device)  // the device keeps its context alive
            } catch {
                throw CLIError.unavailable("can't open libnfc device '\(device)': \(error)")
            }
            if !json {
                Output.err(
                    "emulating on \(nfc.name) (\(device)); waiting for a reader. Ctrl-C stops. Trace: \(trace.path ?? "none")"
                )
            }
            let interrupted = SignalFlag()
            let watcher = SignalWatcher([SIGINT, SIGTERM]) { _ in
                interrupted.set()
                nfc.abort()
            }
            defer { watcher.cancel() }
            let outcome = await HCELiveCLI.onThread {
                HCETargetEmulator.serveOneReader(LibNFCTargetLink(device: nfc), phone: phone, reader: "reader")
            }
            let summary = HCELiveCLI.summary(
                phone.events, extra: ["outcome": .string(outcomeText(outcome, interrupted: interrupted.isSet))])
            trace.emit(summary)
            if !json {
                Output.out(
                    HCELiveCLI.summaryText(phone.events) + "  " + outcomeText(outcome, interrupted: interrupted.isSet))
            }
            switch outcome {
            case .released: return 0
            case .failed where interrupted.isSet: return 0
            case .failed(_, let error): throw CLIError.failure("target mode ended: \(error)")
            }
        })

    static func outcomeText(_ o: HCETargetOutcome, interrupted: Bool) -> String {
        switch o {
        case .released(let n): "reader released the card after \(n) APDU(s)"
        case .failed(let n, _) where interrupted: "stopped by a signal after \(n) APDU(s)"
        case .failed(let n, let e): "target mode failed after \(n) APDU(s): \(e)"
        }
    }
}

/// `LibNFCDevice` target mode as an ``HCETargetLink``: `nfc_target_init` waits forever (a
/// signal ends it through `nfc_abort_command`), `NFC_ETGRELEASED` is the reader's release.
struct LibNFCTargetLink: HCETargetLink {
    let device: LibNFCDevice

    func hceTargetInit(uid: [UInt8], atqa: [UInt8], sak: UInt8, ats: [UInt8]) throws -> [UInt8] {
        try device.targetInit(uid: uid, atqa: atqa, sak: sak, ats: ats, timeout: .forever)
    }

    func hceTargetReceive() throws -> [UInt8]? {
        do { return try device.targetReceive(timeout: .forever) } catch let e as LibNFCError
            where e.code == .targetReleased
        {
            return nil
        }
    }

    func hceTargetSend(_ response: [UInt8]) throws {
        try device.targetSend(response, timeout: .forever)
    }
}

/// A flag set from a signal handler's queue.
final class SignalFlag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

/// What `emulate` and `walk --device` share: options, the trace, the live phone, output.
enum HCELiveCLI {
    static func prefixes(_ arg: String?) throws(CLIError) -> [SelectIdentifierPrefix] {
        var prefixes: [SelectIdentifierPrefix] = []
        for word in (arg ?? "").split(separator: ",") where !word.isEmpty {
            do { prefixes.append(try SelectIdentifierPrefix(hex: String(word))) } catch {
                throw CLIError.usage("--app-prefixes: \(error)")
            }
        }
        return prefixes
    }

    static func header(
        command: String, device: String, app: ContactlessPhone.DefaultApp,
        identity: HCEPhoneIdentity, parameters p: HCEParameters = HCEParameters()
    ) -> JSONObject {
        [
            "tool": .string("nfcbench \(CLI.version)"),
            "libnfc": .string(NativeLibraries.libnfcVersion),
            "pcsc_lite": .string(NativeLibraries.pcscLiteVersion),
            "command": .string(command),
            "device": .string(device),
            "app_prefixes": .array(app.selectIdentifierPrefixes.map { .string($0.description) }),
            "phone": .object([
                "uid": .string(identity.uid.hexString()), "atqa": .string(identity.atqa.hexString()),
                "sak": .string(String(format: "%02X", identity.sak)), "ats": .string(identity.ats.hexString()),
                "atr": .string(identity.atr.hexString()),
            ]),
            "parameters": .object(WalkCommand.parametersJSON(liveParameters(p))),
            "started": .string(ISO8601DateFormatter().string(from: Date())),
        ]
    }

    /// The parameters a live phone plays by (no S(WTX): see `HCELivePhone`).
    static func liveParameters(_ p: HCEParameters) -> HCEParameters {
        var live = p
        live.sendsWaitingTimeExtensions = false
        return live
    }

    static func openTrace(command: String, path: String?, json: Bool, header: JSONObject) throws(CLIError)
        -> TraceWriter
    {
        let file = path ?? TraceLocation().newTracePath(command: command)
        do {
            var echo: (@Sendable (String) -> Void)? = nil
            if json { echo = { @Sendable line in Output.out(line) } }
            return try TraceWriter(path: file, header: header, echo: echo)
        } catch {
            throw CLIError.failure("can't create the trace '\(file)': \(error)")
        }
    }

    /// The live phone on the trace's clock; every event becomes a trace line (and, without
    /// `--json`, a text line on stdout).
    static func makePhone(
        app: ContactlessPhone.DefaultApp, identity: HCEPhoneIdentity, trace: TraceWriter,
        json: Bool, expressCredentials: [ContactlessPhone.ExpressCredential] = []
    ) -> HCELivePhone {
        if !json { Output.out(textHeader) }
        return HCELivePhone(
            app: app, identity: identity, expressCredentials: expressCredentials,
            clock: { .microseconds(trace.elapsedMicroseconds) },
            onEvent: { e in
                trace.emit(record(e))
                if !json { Output.out(text(e)) }
            })
    }

    static func record(_ e: HCELiveEvent) -> JSONObject {
        var o: JSONObject = [
            "t_us": .int(e.time.wholeMicroseconds), "event": .string(e.event), "source": .string(e.source.rawValue),
        ]
        if let r = e.reader { o["reader"] = .string(r) }
        if let c = e.command { o["apdu"] = .string(c.hexString()) }
        if e.event == "apdu" {
            o["response"] = e.response.map { .string($0.hexString()) } ?? .null
            o["answered_by"] = e.answeredBy.map { .string($0.rawValue) } ?? .null
        } else if let r = e.response {
            o["response"] = .string(r.hexString())
        }
        if let d = e.detail { o[WalkCommand.detailKey(e.event)] = .string(d) }
        return o
    }

    static let textHeader =
        pad("t (ms)", 11, left: true) + "  " + pad("reader", 22) + pad("source", 8) + pad("event", 18) + "detail"

    static func pad(_ s: String, _ n: Int, left: Bool = false) -> String {
        if s.count >= n { return left ? s : s + " " }
        let fill = String(repeating: " ", count: n - s.count)
        return left ? fill + s : s + fill
    }

    static func text(_ e: HCELiveEvent) -> String {
        var detail = e.detail ?? ""
        switch e.event {
        case "apdu":
            detail =
                (e.command?.hexString(separator: " ") ?? "") + " → "
                + (e.response.map { $0.hexString(separator: " ") } ?? "(no answer)")
                + "  [" + (e.answeredBy?.rawValue ?? "reader timeout") + "]"
        case "received", "targetReceive":
            detail = (e.command?.hexString(separator: " ") ?? "") + (detail.isEmpty ? "" : "  " + detail)
        case "targetSend", "vpcdATR":
            detail = (e.response?.hexString(separator: " ") ?? "") + (detail.isEmpty ? "" : "  " + detail)
        case "pcscTransmit":
            detail =
                (e.command?.hexString(separator: " ") ?? "") + " → " + (e.response?.hexString(separator: " ") ?? "")
                + "  " + detail
        case "nfcEvent": detail = "default app woken (scene nfcEvent)"
        default: break
        }
        let ms = String(format: "%.3f", Double(e.time.wholeMicroseconds) / 1000)
        return pad(ms, 11, left: true) + "  " + pad(e.reader ?? "-", 22) + pad(e.source.rawValue, 8) + pad(e.event, 18)
            + detail
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

    static func counts(_ events: [HCELiveEvent]) -> [ReaderCount] {
        var order: [String] = []
        var by: [String: ReaderCount] = [:]
        for e in events {
            let name = e.reader ?? "-"
            if by[name] == nil { order.append(name) }
            var r = by[name] ?? ReaderCount(name: name)
            switch (e.source, e.event) {
            case (.bench, "notShowable"): r.showable = false
            case (.model, "nfcEvent"): r.woke = true
            case (.model, "apdu"):
                if r.wakeBeforeFirstAPDU == nil { r.wakeBeforeFirstAPDU = r.woke }
                switch e.answeredBy {
                case .app?: r.apdusToApp += 1
                case nil: r.timeouts += 1
                default: r.apdusBySystem += 1
                }
            default: break
            }
            by[name] = r
        }
        return order.compactMap { by[$0] }
    }

    static func summary(_ events: [HCELiveEvent], extra: JSONObject = [:]) -> JSONObject {
        let c = counts(events)
        var o: JSONObject = [
            "event": "summary",
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
        return o
    }

    static func summaryText(_ events: [HCELiveEvent]) -> String {
        var out = "\nSUMMARY\n"
        for r in counts(events) {
            out += "  " + pad(r.name, 22)
            if !r.showable {
                out += "not showable over this stack (never reaches ISO-DEP)\n"
                continue
            }
            out += (r.woke ? "woke  " : "quiet ") + "\(r.apdusToApp) APDU to app, \(r.apdusBySystem) by system"
            if r.timeouts > 0 { out += ", \(r.timeouts) reader timeout(s)" }
            out += "\n"
        }
        return out
    }

    /// Runs blocking work on a thread of its own (never on the cooperative pool, where the
    /// stand-in app's task runs).
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let t = Thread { continuation.resume(returning: body()) }
            t.name = "nfcbench.hce"
            t.start()
        }
    }
}
