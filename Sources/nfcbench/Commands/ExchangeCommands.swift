import NFCBenchKit
import NFCFiles
import NFCTrace
import Synchronization

/// `nfcbench apdu` and `nfcbench raw`: what scriptor / `opensc-tool -s` and Proxmark3's
/// `hf 14a raw` send, on any reader (``/NFCBenchKit/TagExchanges``); traced like every command.
enum ExchangeCommands {
    static let allowWrite = OptionSpec(
        "allow-write", .flag,
        help: """
            send commands that can change the tag (UPDATE BINARY, WRITE, COMPATIBILITY_WRITE,
            WRITE_SIG, LOCK_SIG, INCR_CNT, PWD_AUTH, ERASE, transparent exchanges…); without
            it such a command is refused before anything is sent (no backup is taken: restore
            takes one, see 'nfcbench dump')
            """)

    static let apdu = Command(
        path: ["apdu"],
        abstract: "Send command APDUs to the ISO-DEP tag on a reader, as scriptor does (status words named)",
        options: [
            DeviceOptions.device(),
            OptionSpec(
                "script", value: "FILE",
                help: "the APDUs, one a line in hex as scriptor reads them (# comments; - for standard input)"),
            allowWrite,
            OptionSpec(
                "timeout", .duration(bare: .seconds, moreThanZero: false), help: "how long to wait for a tag",
                default: .duration(.seconds(10))),
            OutputOptions.json(
                "one JSON object: device, uid, exchanges (line, command, response, sw, status, steps), error"),
        ] + Traces.Options.table(),
        positionals: [
            PositionalSpec(
                name: "HEX", help: "a command APDU in hex (one word, or quoted with spaces); several go in order",
                optional: true, completion: .none, repeats: true)
        ],
        alternateUsage: "apdu --device D --script FILE [--allow-write] [--json]",
        discussion: """
            Each APDU goes to the first ISO-DEP tag the reader finds; the answer is printed with its
            status word named (ISO/IEC 7816-4). A card that answers 61 xx is sent GET RESPONSE
            (00 C0 00 00 xx) until it has no more; 6C xx gets the command again with Le = xx: both
            shown as lines of their own, then '=' and the whole answer. Commands that can change the
            card need --allow-write (refused before anything is sent, exit 64). A Type 2 tag takes no
            APDUs on libnfc or the simulator (use 'nfcbench raw');
            behind a PC/SC reader it takes the reader's storage-card APDUs (FF CA 00 00 00 for the UID,
            FF B0 READ BINARY…), as scriptor sends them. Exit 0 when every APDU was answered (whatever its status
            word), 1 when the tag was lost or did not answer, 65 a script line that is no APDU.
            """,
        validate: { o throws(CLIError) in
            _ = try Traces.Options(o)
            switch (o.has("script"), o.positionals.isEmpty) {
            case (true, false): throw .usage("give HEX… or --script FILE, not both")
            case (false, true): throw .usage("say what to send: apdu --device D HEX… or --script FILE")
            default: break
            }
            // APDUs on the command line are checked here, before anything runs.
            if !o.positionals.isEmpty {
                try refuse(
                    TagExchanges.refusals(apdus: try commands(o), allowWrite: o.flag("allow-write")), what: "APDU")
            }
        },
        run: { o in try await runAPDU(o) })

    static let raw = Command(
        path: ["raw"],
        abstract: "Send raw ISO 14443-3 frames to the Type 2 tag on a reader (CRC added; ACK/NAK/timeout said)",
        options: [
            DeviceOptions.device(), allowWrite,
            OptionSpec(
                "timeout", .duration(bare: .seconds, moreThanZero: false), help: "how long to wait for a tag",
                default: .duration(.seconds(10))),
            OutputOptions.json(
                "one JSON object: device, uid, frames (frame, crc, answer, data|nak, reactivated), error"),
        ] + Traces.Options.table(),
        positionals: [
            PositionalSpec(
                name: "HEX", help: "a frame in hex without its CRC_A (30 04: READ page 4); several go in order",
                completion: .none, missing: "say what to send: raw --device D HEX… (30 04 reads page 4)",
                repeats: true)
        ],
        discussion: """
            Each frame goes to the first Type 2 tag the reader finds, its CRC_A added on the way
            (libnfc: by the chip; PC/SC: through the reader's transparent exchange, FF C2 or the
            ACR122U's FF 00; the simulator: the emulation core). The answer is shown as data, ACK,
            a NAK with its meaning (NTAG21x data sheet §9.3) or no answer (timeout); after a NAK
            or silence the tag is idle, so it is re-activated before the next frame (said).
            WRITE, COMPATIBILITY_WRITE, WRITE_SIG, LOCK_SIG, INCR_CNT and PWD_AUTH need
            --allow-write. Exit 0 when every frame was sent, 1 when the tag was lost or the reader
            can't send raw frames, 65 a frame that is not hex.
            """,
        validate: { o throws(CLIError) in
            _ = try Traces.Options(o)
            for (i, w) in o.positionals.enumerated() where [UInt8](hex: w)?.isEmpty != false {
                throw .data("frame \(i + 1) '\(w)' is not hex bytes (two digits a byte, spaces allowed)")
            }
            let frames = o.positionals.map { [UInt8](hex: $0)! }
            try refuse(TagExchanges.refusals(frames: frames, allowWrite: o.flag("allow-write")), what: "frame")
        },
        run: { o in try await runRaw(o) })

    /// The APDUs of the command line or the script, each with its line (an argument's number).
    static func commands(_ o: ParsedOptions) throws(CLIError) -> [(line: Int, bytes: [UInt8])] {
        do {
            if let path = o.string("script") {
                let bytes: [UInt8]
                do { bytes = try InputFile.read(path, label: "--script \(path)") } catch { throw CLIError(error) }
                var out: [(Int, [UInt8])] = []
                for step in try APDUScript.parse(String(decoding: bytes, as: UTF8.self)) {
                    switch step {
                    case .apdu(let b, let line): out.append((line, b))
                    case .reset(let line):
                        throw CLIError.data(
                            "--script \(path): line \(line): 'reset' is not taken yet; split the script there")
                    }
                }
                if out.isEmpty { throw CLIError.data("--script \(path) holds no APDU") }
                return out
            }
            return try o.positionals.enumerated().map { i, w throws(APDUScriptError) in
                (i + 1, try APDUScript.command(w, line: i + 1))
            }
        } catch let e as APDUScriptError {
            throw .data(o.string("script").map { "--script \($0): \(e)" } ?? "APDU \(e.line): \(e.reason)")
        } catch let e as CLIError {
            throw e
        } catch {
            throw .data("\(error)")
        }
    }

    static func refuse(_ refusals: [(line: Int, why: String)], what: String) throws(CLIError) {
        guard let first = refusals.first else { return }
        throw .usage(
            "\(what) \(first.line): \(first.why): add --allow-write to send it (nothing was sent)"
                + (refusals.count > 1 ? "; \(refusals.count - 1) more like it" : ""))
    }

    static func runAPDU(_ o: ParsedOptions) async throws -> Int32 {
        let commands = try commands(o)
        // A script's commands are checked once it is read, before the reader is opened.
        try refuse(TagExchanges.refusals(apdus: commands, allowWrite: o.flag("allow-write")), what: "line")
        let json = o.flag("json")
        let reader = try BenchReader.open(
            o.string("device")!, command: "apdu",
            setup: ["apdus": .int(Int64(commands.count)), "allow_write": .bool(o.flag("allow-write"))],
            trace: try Traces.Options(o))
        defer { reader.close() }
        let collected = Collected()
        var failure: String? = nil
        let target = try reader.readable(try await reader.firstTarget(timeout: o.duration("timeout")!))
        do {
            try await reader.withTag(target) { c in
                var i = 0
                try TagExchanges.apdus(commands.map(\.bytes), over: c) { e in
                    let line = commands[i].line
                    i += 1
                    collected.add(TagExchanges.json(e, line: line))
                    if !json { for l in TagExchanges.lines(e, redact: reader.redact) { Output.out(l) } }
                }
            }
        } catch {
            failure = "\(error)"
        }
        return finish(reader, target, key: "exchanges", collected, failure: failure, json: json)
    }

    static func runRaw(_ o: ParsedOptions) async throws -> Int32 {
        let frames = o.positionals.map { [UInt8](hex: $0)! }
        let json = o.flag("json")
        let reader = try BenchReader.open(
            o.string("device")!, command: "raw",
            setup: ["frames": .int(Int64(frames.count)), "allow_write": .bool(o.flag("allow-write"))],
            trace: try Traces.Options(o))
        defer { reader.close() }
        let collected = Collected()
        var failure: String? = nil
        let target = try reader.readable(try await reader.firstTarget(timeout: o.duration("timeout")!))
        do {
            try await reader.withTag(target) { c in
                try TagExchanges.frames(frames, over: c) { r in
                    collected.add(TagExchanges.json(r, redact: reader.redact))
                    if !json { for l in TagExchanges.lines(r, redact: reader.redact) { Output.out(l) } }
                }
            }
        } catch TagCommunicationError.unsupportedCommand {
            failure = "\(reader.spec.identifier) cannot send raw frames (no transparent exchange)"
        } catch {
            failure = "\(error)"
        }
        return finish(reader, target, key: "frames", collected, failure: failure, json: json)
    }

    static func finish(
        _ reader: BenchReader, _ target: DetectedTarget, key: String, _ collected: Collected, failure: String?,
        json: Bool
    ) -> Int32 {
        let failure = failure.map { reader.redact ? BenchRedaction.scrub($0, [target.uid]) : $0 }
        if json {
            let o: JSONObject = [
                "device": .string(reader.spec.identifier), "uid": .string(target.uid.hexString()),
                key: .array(collected.all.map { .object($0) }), "error": failure.map { .string($0) } ?? .null,
            ]
            // --redact: the trace's redaction (uid, command, response, frame, data).
            Output.out(JSONValue.object(reader.redact ? BenchRedaction.json(o) : o).serialized)
        } else if let failure {
            Output.err("error: \(failure)")
        }
        return failure == nil ? 0 : 1
    }

    /// The answers gathered on the tag's thread.
    final class Collected: Sendable {
        private let items = Mutex<[JSONObject]>([])
        func add(_ o: JSONObject) { items.withLock { $0.append(o) } }
        var all: [JSONObject] { items.withLock { $0 } }
    }
}
