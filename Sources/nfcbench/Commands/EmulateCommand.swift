import Foundation
import HCEEvents
import NFCBase
import NFCBenchKit
import NFCFiles
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
        options: [
            DeviceOptions.device(
                help: """
                    libnfc connstring: pn532_uart:/dev/ttyUSB0, pn53x_usb, …
                    (a virtual PN532's pty link works the same)
                    """),
            OptionSpec(
                "app-prefixes", value: "AID,…", help: "the default app's select-identifier-prefixes (hex, 5..16 bytes)"),
            OptionSpec(
                "uid", value: "HEX",
                help: """
                    the 4-byte UID the phone presents, the same every time
                    (085A3C91 was the default before; a PN532 forces the first
                    byte to 08). Default: a random UID 08 … as an iPhone's,
                    new per emulation (reported: UIDs starting 08)
                    """),
            HCELiveCLI.uidSeedOption,
            OutputOptions.json("JSON Lines: the trace's records on stdout"),
        ] + Traces.Options.table(),
        discussion: """
            The phone model (field → default app woken → ISO-DEP → SELECT routed by prefix, the
            system answering PPSE and 6A 82) answers every APDU the reader sends; the stand-in
            app answers 90 00 to what reaches its CardSession. libnfc can't see a field, only
            the activation (nfc_target_init returning after anticollision and RATS): that is
            the first event, and the model's wake is placed there. Runs until the reader
            releases the card or Ctrl-C. ATS 05 78 80 70 02 (an iPhone's), ATQA 00 04, SAK 20,
            a random UID 08 … new per emulation (--uid fixes one; the header's uid_seed, given
            to --uid-seed, repeats a run's).
            Traces: $NFCBENCH_TRACE_DIR, else $XDG_STATE_HOME/nfcbench/traces, else
            ~/.local/state/nfcbench/traces.
            """,
        validate: { o throws(CLIError) in
            _ = try Traces.Options(o)
            _ = try HCELiveCLI.prefixes(o.string("app-prefixes"))
            if let uidText = o.string("uid"), [UInt8](hex: uidText)?.count != 4 {
                throw CLIError.usage("--uid takes 4 bytes of hex (e.g. 085A3C91), not '\(uidText)'")
            }
            if o.has("uid"), o.has("uid-seed") {
                throw CLIError.usage("give --uid (a fixed UID) or --uid-seed (random UIDs), not both")
            }
        },
        run: { o in
            let device = o.string("device")!
            let prefixes = try HCELiveCLI.prefixes(o.string("app-prefixes"))
            let uidText = o.string("uid")
            let json = o.flag("json")
            var traceOptions = try Traces.Options(o)
            traceOptions.json = json

            let uidChoice: HCEPhoneIdentity.UIDChoice =
                if let uidText, let uid = [UInt8](hex: uidText) { .fixed(uid) }  // 4 bytes: validate
                else { HCELiveCLI.randomUIDs(seed: o.int("uid-seed")) }
            let app = ContactlessPhone.DefaultApp(name: "app", selectIdentifierPrefixes: prefixes)

            // Locks before frames: opening a PN53x sends frames (wake-up, SAMConfiguration),
            // so the reader's lock comes first; a reader a session holds is refused untouched.
            // The device is open before anything is printed: a wrong one is an error alone,
            // not a table header followed by an error.
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
                throw CLIError.unavailable(
                    "can't open libnfc device '\(device)': \(error)" + LibNFCDevices.openHint(connstring: device))
            }
            let trace = try Traces.open(
                command: "emulate", device: device, model: HCELiveCLI.model(app: app, uid: uidChoice),
                options: traceOptions)
            defer { trace.close() }
            if !json {
                Output.err(
                    "emulating on \(nfc.name) (\(device)); waiting for a reader. Ctrl-C stops. Trace: \(trace.path ?? "none")"
                )
                Output.out(HCELiveCLI.textHeader)
            }
            let phone = HCELiveCLI.makePhone(app: app, uid: uidChoice, trace: trace, json: json)
            let interrupted = SignalFlag()
            let watcher = Signals.handle { sig in
                guard Signals.stops(sig) else { return Signals.runDefault(sig) }
                interrupted.set()
                nfc.abort()
            }
            defer { watcher.cancel() }
            let outcome = await HCELiveCLI.onThread {
                HCETargetEmulator.serveOneReader(LibNFCTargetLink(device: nfc), phone: phone, reader: "reader")
            }
            var summary = HCELiveCLI.summary(
                phone.events.map(HCELiveCLI.record),
                extra: ["outcome": .string(outcomeText(outcome, interrupted: interrupted.isSet))])
            summary.time = trace.elapsedMicroseconds
            let written = trace.emit(summary)
            if !json { Output.out(HCELiveCLI.summaryText(written)) }
            switch outcome {
            case .released: return 0
            case .failed where interrupted.isSet: return 0
            case .failed(_, let error): throw CLIError.failure("target mode ended: \(error)")
            }
        })

    static func outcomeText(_ o: HCETargetOutcome, interrupted: Bool) -> String {
        switch o {
        case .released(let n): "reader released the card after \(Figures.count(n, "APDU"))"
        case .failed(let n, _) where interrupted: "stopped by a signal after \(Figures.count(n, "APDU"))"
        case .failed(let n, let e): "target mode failed after \(Figures.count(n, "APDU")): \(e)"
        }
    }
}

/// `emulate`'s and `walk --device`'s shared option (their live phone is NFCBenchKit's ``HCELive``).
extension HCELive {
    /// `--uid-seed`: the seed of the phone's random UIDs.
    static let uidSeedOption = OptionSpec(
        "uid-seed", .int(0...Int.max), value: "S",
        help: """
            the seed of the random UIDs (default: a new one each run,
            written in the trace header as uid_seed; give it to repeat a run's UIDs)
            """)
}
