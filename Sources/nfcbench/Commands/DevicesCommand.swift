import NFCBenchKit
import NFCHardware
import NFCTags
import NFCTrace
import ReaderSession

/// `nfcbench devices`: the PC/SC readers pcscd serves, with their state and the card's ATR.
enum DevicesCommand {
    static let command = Command(
        path: ["devices"],
        abstract: "List PC/SC readers (state, ATR) and libnfc devices",
        options: [
            OutputOptions.json(
                "one JSON object per device: backend, device (the --device string), index (pcsc:N), state, atr"),
            OptionSpec(
                "names", .flag, help: "only the --device strings, one a line (for shell completion)", hidden: true),
        ],
        discussion: """
            PC/SC readers come from pcscd (SCardListReaders, SCardGetStatusChange). libnfc devices
            come from libnfc's scan (nfc_list_devices; UART devices only with LIBNFC_DEVICE or a
            libnfc.conf entry). When pcscd is not running this says so. Exit status: 0 when at
            least one reader or device is listed, 69 when there is none to use.

            A command's device is a PC/SC reader by its full name (pcsc:NAME), by its place in this
            list (pcsc:0, pcsc:1…, as pcsc_scan numbers them) or by a piece of its name that fits only
            it (pcsc:ACR122); an exact name always wins. Left out, the device of session, dump,
            measure, write, format, lock and emulate is $NFCBENCH_DEVICE.
            """,
        run: { o in
            if o.flag("names") {
                let list = BenchDevice.list(statusTimeout: .milliseconds(200))
                let names =
                    list.pcscReaders.flatMap { ["pcsc:\($0.index)", $0.device] } + list.libnfcDevices + list.simulated
                for n in names { Output.out(n) }
                return 0
            }
            return list(json: o.flag("json"))
        })

    static func list(json: Bool) -> Int32 {
        let list = BenchDevice.list()
        if let error = list.pcscError {
            let why = error == .noService ? "pcscd is not running" : "\(error)"
            if json {
                Output.out(JSONValue.object(["backend": "pcsc", "error": .string(why)]).serialized)
            } else {
                Output.err("pcsc: \(why) (start it, or run through \(DataLocation.withPCSCDHint))")
            }
        } else if list.pcscReaders.isEmpty && !json {
            Output.out("pcsc: pcscd runs, no reader connected")
        }
        for r in list.pcscReaders {
            let s = r.state
            if json {
                var o: JSONObject = [
                    "backend": "pcsc", "device": .string(r.device), "reader": .string(s.reader),
                    "index": .int(Int64(r.index)), "state": .array(stateNames(s.flags).map { .string($0) }),
                    "events": .int(Int64(s.eventCount)),
                ]
                if s.hasCard {
                    o["atr"] = .string(s.atr.hexString())
                    o["card"] = .string(kindName(r.card?.family))
                }
                Output.out(JSONValue.object(o).serialized)
            } else {
                var line = "\(r.device)  \(stateNames(s.flags).joined(separator: ","))"
                if s.hasCard { line += "  ATR \(s.atr.hexString(separator: " "))  (\(kindName(r.card?.family)))" }
                Output.out(line)
            }
        }
        if let error = list.libnfcError {
            if !json { Output.err("libnfc: \(error)") }
        } else if list.libnfcDevices.isEmpty && !json {
            Output.out("libnfc: no device found (UART readers need LIBNFC_DEVICE or a libnfc.conf entry)")
        }
        for device in list.libnfcDevices {
            if json {
                Output.out(JSONValue.object(["backend": "libnfc", "device": .string(device)]).serialized)
            } else {
                Output.out("\(device)  (libnfc)")
            }
        }
        return list.pcscReaders.count + list.libnfcDevices.count == 0 ? 69 : 0
    }

    static func stateNames(_ f: PCSCReaderFlags) -> [String] {
        if f.contains(.present) {
            return ["present"] + (f.contains(.mute) ? ["mute"] : []) + (f.contains(.exclusive) ? ["exclusive"] : [])
                + (f.contains(.inUse) ? ["in use"] : [])
        }
        if f.contains(.empty) { return ["empty"] }
        if f.contains(.unavailable) { return ["unavailable"] }
        return ["unknown"]
    }

    static func kindName(_ k: TargetFamily?) -> String {
        switch k {
        case .type2?: "Type 2 tag"
        case .isoDEP?: "ISO 14443-4 / Type 4"
        default: "other card"
        }
    }
}
