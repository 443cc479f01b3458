public import NFCTrace

/// `nfcbench apdu` and `nfcbench raw` as library calls: command APDUs to an ISO-DEP target
/// (``/NFCTags/APDUExchange``: 61 xx and 6C xx followed) and raw ISO/IEC 14443-3 frames to a
/// Type 2 tag (``/NFCTags/Type2RawFrame``), each answer handed to `each` as it comes, so a
/// script that stops part way (the tag lost) has shown what it got.
///
/// Whether a command may change the tag is checked before anything is sent
/// (``refusals(apdus:allowWrite:)``, ``refusals(frames:allowWrite:)``).
public enum TagExchanges {
    /// Why a connection can't carry what was asked.
    public struct WrongTarget: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
    }

    /// `(line, why)` for every command that can change the card, when `allowWrite` is false.
    public static func refusals(apdus: [(line: Int, bytes: [UInt8])], allowWrite: Bool) -> [(line: Int, why: String)] {
        allowWrite ? [] : apdus.compactMap { a in APDUScript.changesCard(a.bytes).map { (a.line, $0) } }
    }

    /// `(index, why)` for every frame that can change the tag, when `allowWrite` is false.
    public static func refusals(frames: [[UInt8]], allowWrite: Bool) -> [(line: Int, why: String)] {
        allowWrite ? [] : frames.enumerated().compactMap { i, f in Type2RawFrame.changesTag(f).map { (i + 1, $0) } }
    }

    /// Sends each APDU in order over an ISO-DEP connection, or to a Type 2 tag's PC/SC reader
    /// (its storage-card pseudo-APDUs, ``/NFCBase/ReaderAPDUCarrier``); `each` gets its exchange.
    /// Throws ``WrongTarget`` for a Type 2 tag on a reader that takes no APDUs (libnfc, the
    /// simulator), or what the transport throws.
    public static func apdus(
        _ commands: [[UInt8]], over connection: TagConnection, each: (APDUExchange) -> Void
    ) throws {
        let wrong = WrongTarget(
            description:
                "the tag is a Type 2 tag and this reader takes no APDUs for it (only PC/SC readers do): send its commands with 'nfcbench raw'"
        )
        let transmit: ([UInt8]) throws -> [UInt8]
        switch connection {
        case .iso7816(let t): transmit = { try t.transmit($0) }
        case .type2(let t):
            guard let carrier = t as? any ReaderAPDUCarrier else { throw wrong }
            transmit = { try carrier.transmitReaderAPDU($0) }
        case .felica, .iso15693:
            throw WrongTarget(
                description:
                    "the tag is a FeliCa or ISO 15693 tag, which takes its own commands, not APDUs: 'nfcbench apdu' sends APDUs to ISO-DEP tags and, through PC/SC, to Type 2 tags"
            )
        }
        for c in commands {
            do { each(try APDUExchange.run(c, transmit)) } catch TagCommunicationError.unsupportedCommand {
                throw wrong
            }
        }
    }

    /// One raw frame and what came back.
    public struct RawExchange: Sendable, Equatable {
        /// The frame as given (CRC_A excluded).
        public var frame: [UInt8]
        /// The CRC_A that goes on the air after it (added by the reader chip or the carrier).
        public var crc: [UInt8] { iso14443CRCA(frame) }
        public var answer: Type2Answer
        /// The tag was re-activated after a NAK or silence left it idle.
        public var reactivated: Bool
    }

    /// Sends each frame to a Type 2 tag; after a NAK or silence the tag is idle, so it is
    /// re-activated (WUPA, anticollision, select) before the next frame. Throws
    /// ``WrongTarget`` for an ISO-DEP target, `.unsupportedCommand` when the reader can't
    /// send raw frames (a PC/SC reader without a transparent exchange).
    public static func frames(
        _ frames: [[UInt8]], over connection: TagConnection, each: (RawExchange) -> Void
    ) throws {
        guard case .type2(let t) = connection else {
            throw WrongTarget(
                description:
                    "the tag is ISO-DEP: raw sends ISO 14443-3 frames to Type 2 tags; send APDUs with 'nfcbench apdu'")
        }
        for (i, f) in frames.enumerated() {
            let answer: Type2Answer
            do { answer = try t.transceive(f) } catch TagCommunicationError.noResponse { answer = .silent }
            let idle: Bool =
                switch answer {
                case .nak, .silent: true
                default: false
                }
            let reactivated = idle && i < frames.count - 1
            if reactivated { try t.reactivate() }
            each(RawExchange(frame: f, answer: answer, reactivated: reactivated))
        }
    }

    /// The lines `apdu` prints for one exchange, scriptor's way: `> command`, `< response`
    /// with the status word named; GET RESPONSE and Le retries as lines of their own.
    /// With `redact` (`--redact`), each command's data field and each answer's data are their
    /// redacted text; headers and status words stay (``BenchRedaction/commandAPDU(_:)``).
    public static func lines(_ e: APDUExchange, redact: Bool = false) -> [String] {
        func command(_ c: [UInt8]) -> String {
            redact ? BenchRedaction.commandAPDU(c) : c.hexString(separator: " ")
        }
        func response(_ r: [UInt8]) -> String {
            redact ? BenchRedaction.responseAPDU(r) : r.hexString(separator: " ")
        }
        var out: [String] = []
        for s in e.steps {
            out.append("> " + command(s.command) + (s.reason.map { "    (\($0))" } ?? ""))
            out.append("< " + response(s.response) + sw(s.response))
        }
        if e.steps.count > 1 { out.append("= " + response(e.response) + sw(e.response)) }
        return out
    }

    private static func sw(_ r: [UInt8]) -> String {
        guard r.count >= 2 else { return "" }
        return " : " + StatusWord(sw1: r[r.count - 2], sw2: r[r.count - 1]).name
    }

    /// The JSON of one exchange: `line`, `command`, `response` (the whole answer), `sw`,
    /// `status`, and `steps` (each command and response sent, with `reason`).
    public static func json(_ e: APDUExchange, line: Int) -> JSONObject {
        [
            "line": .int(Int64(line)), "command": .string(e.steps[0].command.hexString()),
            "response": .string(e.response.hexString()),
            "sw": e.statusWord.map { .string($0.bytes.hexString()) } ?? .null,
            "status": e.statusWord.map { .string($0.name) } ?? .null,
            "steps": .array(
                e.steps.map {
                    .object([
                        "command": .string($0.command.hexString()), "response": .string($0.response.hexString()),
                        "reason": $0.reason.map { .string($0) } ?? .null,
                    ])
                }),
        ]
    }

    /// The lines `raw` prints for one frame. With `redact` (`--redact`), a frame's data (a
    /// WRITE's bytes, a password: ``BenchRedaction/frame(_:)``), its CRC then, and the answer's
    /// data are their redacted text; ACK, NAK and silence stay.
    public static func lines(_ r: RawExchange, redact: Bool = false) -> [String] {
        let name = Type2RawFrame.name(r.frame).map { "    (\($0))" } ?? ""
        let frame = redact ? BenchRedaction.frame(r.frame) : r.frame.hexString(separator: " ")
        let crc = redact && r.frame.count > 3 ? "" : " " + r.crc.hexString(separator: " ")
        var answer = Type2RawFrame.describe(r.answer)
        if redact, case .data(let d) = r.answer { answer = BenchRedaction.text(d) }
        var out = ["> \(frame) [CRC_A\(crc) added]\(name)", "< \(answer)"]
        if r.reactivated { out.append("  (the tag was re-activated: WUPA, anticollision, select)") }
        return out
    }

    /// The JSON of one frame: `frame`, `crc`, `answer` (`data`, `ack`, `nak`, `silent`),
    /// `data` or `nak`, `reactivated`.
    /// With `redact`, the CRC of a frame whose data `lines(_:redact:)` hides is redacted too
    /// (the trace's redaction, ``/NFCTrace/TraceWriter/redacted(_:)``, does the rest).
    public static func json(_ r: RawExchange, redact: Bool = false) -> JSONObject {
        let crc = redact && r.frame.count > 3 ? BenchRedaction.text(r.crc) : r.crc.hexString()
        var o: JSONObject = [
            "frame": .string(r.frame.hexString()), "crc": .string(crc),
            "reactivated": .bool(r.reactivated),
        ]
        switch r.answer {
        case .data(let d):
            o["answer"] = "data"
            o["data"] = .string(d.hexString())
        case .ack: o["answer"] = "ack"
        case .nak(let v):
            o["answer"] = "nak"
            o["nak"] = .int(Int64(v))
            o["meaning"] = .string(Type2RawFrame.nakMeaning(v))
        case .silent: o["answer"] = "silent"
        }
        return o
    }
}
