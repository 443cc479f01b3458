import NFCHardware
import NFCTags
import NFCTrace
import ReaderSession

/// `nfcbench devices`: the PC/SC readers pcscd serves, with their state and the card's ATR.
enum DevicesCommand {
    static let command = Command(
        path: ["devices"],
        abstract: "List PC/SC readers (state, ATR) and libnfc devices",
        usage: "devices [--json]",
        help: """
            OPTIONS:
              --json   one JSON object per device: backend, device (the --device string), state, atr

            PC/SC readers come from pcscd (SCardListReaders, SCardGetStatusChange). libnfc devices
            come from libnfc's scan (nfc_list_devices; UART devices only with LIBNFC_DEVICE or a
            libnfc.conf entry). When pcscd is not running this says so. Exit status: 0 when at
            least one reader or device is listed, 69 when there is none to use.
            """,
        run: { args in
            let json = args.flag("json")
            try args.finish()
            return list(json: json)
        })

    static func list(json: Bool) -> Int32 {
        var listed = 0
        do {
            let context = try PCSCContext()
            let readers = try context.readers()
            listed += readers.count
            if readers.isEmpty && !json { Output.out("pcsc: pcscd runs, no reader connected") }
            let states: [PCSCReaderState]
            if readers.isEmpty {
                states = []
            } else if case .changed(let s) = try context.waitForStatusChange(
                readers: readers.map(PCSCReaderState.unaware), timeout: .milliseconds(500))
            {
                states = s
            } else {
                states = readers.map { PCSCReaderState(reader: $0, flags: []) }
            }
            for s in states {
                let card = s.hasCard ? TargetClassification.classify(atr: s.atr) : nil
                if json {
                    var o: JSONObject = [
                        "backend": "pcsc", "device": .string("pcsc:\(s.reader)"), "reader": .string(s.reader),
                        "state": .array(stateNames(s.flags).map { .string($0) }),
                        "events": .int(Int64(s.eventCount)),
                    ]
                    if s.hasCard {
                        o["atr"] = .string(s.atr.hexString())
                        o["card"] = .string(kindName(card?.family))
                    }
                    Output.out(JSONValue.object(o).serialized)
                } else {
                    var line = "pcsc:\(s.reader)  \(stateNames(s.flags).joined(separator: ","))"
                    if s.hasCard { line += "  ATR \(s.atr.hexString(separator: " "))  (\(kindName(card?.family)))" }
                    Output.out(line)
                }
            }
        } catch {
            let why = error == .noService ? "pcscd is not running" : "\(error)"
            if json {
                Output.out(JSONValue.object(["backend": "pcsc", "error": .string(why)]).serialized)
            } else {
                Output.err("pcsc: \(why) (start it, or run through \(DataLocation.withPCSCDHint))")
            }
        }
        do {
            let libnfc = try LibNFCContext()
            let devices = libnfc.listDevices()
            listed += devices.count
            if devices.isEmpty && !json {
                Output.out("libnfc: no device found (UART readers need LIBNFC_DEVICE or a libnfc.conf entry)")
            }
            for device in devices {
                if json {
                    Output.out(JSONValue.object(["backend": "libnfc", "device": .string(device)]).serialized)
                } else {
                    Output.out("\(device)  (libnfc)")
                }
            }
        } catch {
            if !json { Output.err("libnfc: \(error)") }
        }
        return listed == 0 ? 69 : 0
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
