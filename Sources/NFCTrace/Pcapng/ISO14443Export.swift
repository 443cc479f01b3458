import NFCTags

/// One packet of the export: the pseudo-header's event, the frame (no CRC), a comment, and
/// the interface it goes to (``link``).
public struct ISO14443Packet: Sendable, Equatable {
    /// Which interface of the file a packet is on, by the dissector that reads it.
    public enum Link: Sendable, Equatable {
        /// LINKTYPE_ISO_14443 (264): the pseudo-header with ``event`` before ``data``.
        case iso14443
        /// A FeliCa frame without its length byte, for Wireshark's `felica` dissector
        /// (``ExportedPDULinkType``); ``event`` only gives the direction.
        case feliCa
    }

    /// The trace's `t_us` of the record it comes from.
    public var tMicroseconds: Int64
    public var event: ISO14443LinkType.Event
    public var data: [UInt8]
    public var comment: String?
    public var link: Link

    public init(
        tMicroseconds: Int64, event: ISO14443LinkType.Event, data: [UInt8] = [], comment: String? = nil,
        link: Link = .iso14443
    ) {
        self.tMicroseconds = tMicroseconds
        self.event = event
        self.data = data
        self.comment = comment
        self.link = link
    }

    /// Reader to card (PCD → PICC)?
    public var fromReader: Bool { event == .pcdToPICC || event == .pcdToPICCCRCDropped }
    /// Card to reader (PICC → PCD)?
    public var fromCard: Bool { event == .piccToPCD || event == .piccToPCDCRCDropped }
}

/// Turns trace records into ISO/IEC 14443 packets for LINKTYPE_ISO_14443, one record at a
/// time (so a run can export as it goes, and `trace export` reads a file the same way).
///
/// Every frame uses the "CRC dropped" data events (`FA`/`FB`): libnfc, PC/SC and the
/// virtual devices hand over frames without CRC_A (with the plain events Wireshark takes
/// the last two bytes for the CRC and calls RATS malformed). What each trace shows:
///
/// - Sessions and bench runs on a libnfc device (and the simulator): the target's
///   activation (REQA → ATQA, anticollision and SELECT per cascade level, RATS → ATS)
///   rebuilt from what the device reported, marked synthesized (a PN53x runs them itself);
///   Type 2 frames as sent; APDUs inside I-blocks whose framing (block numbers, chaining at
///   FSC/FSD, R(ACK)s) is synthesized by ISO/IEC 14443-4 §7.5's rules (the PN53x frames them).
/// - PC/SC: the reader hides the activation and the block framing. The UID (`FF CA`)
///   becomes the anticollision frames and an ISO-DEP card's ATR historical bytes an ATS,
///   all marked synthesized (no SAK: PC/SC does not report it); APDUs become I-blocks,
///   marked synthesized; a storage card's `FF B0`/`FF D6`/`FF CA` never go over the air:
///   the export shows the frames the reader sends for them (`30`, `A2`, anticollision),
///   marked synthesized, and a transparent exchange's frame as it is.
/// - The virtual PN532: its `air` records, the frames its card exchanged, and its field.
/// - The virtual card on vpcd and the HCE phone (`emulate`, `walk`): field on/off events
///   (the card's vpcd connection; the model's field); the phone's wake and other events as
///   comments on the next packet; APDUs as synthesized I-blocks after a synthesized
///   activation with the phone's identity.
///
/// Type 2 commands get their meaning in the comment ("READ page 4", "WRITE page 5 → ACK"):
/// Wireshark's dissector does not know them. With `redact`, UIDs (BCC recomputed), ATS
/// historical bytes, Type 2 data and APDU data (except SELECT's AID or file id) become
/// zeros of the same length, and status words stay. Frames already redacted in the trace
/// (`"redacted:…"`) cannot be exported: they are counted in ``skippedFrames``.
///
/// Not every target is an ISO/IEC 14443 one, and none of the others is written as one: the
/// family comes from the `detected` record's `family` (or `kind`), the virtual PN532's `air`
/// record's `kind`, the vpcd card's ATR (``/NFCTags/TargetClassification/classify(atr:)``).
/// - FeliCa frames become ``ISO14443Packet/Link/feliCa`` packets (Wireshark's `felica`
///   dissector, on an interface of their own: ``PcapngExport``), without their length byte,
///   each described in its comment ("Check (Read Without Encryption): service 000B, block
///   0"); a target's Polling is synthesized from the IDm, PMm and system code the device
///   reports (when it reports the PMm), as the 14443 activation is. `--redact` zeroes the IDm
///   and block data.
/// - ISO/IEC 15693 frames are left out: Wireshark has no dissector for them. They stay in the
///   trace and are counted in ``skippedISO15693Frames`` (a trace's `frame` or `air` record,
///   a command and its answer, counts as one; so does each APDU of the vpcd card).
public struct ISO14443Exporter: Sendable {
    public let redact: Bool
    /// Frames the trace holds only redacted (or not as hex): left out of the export.
    public private(set) var skippedFrames = 0
    /// ISO/IEC 15693 frames: left out (Wireshark has no dissector for them), kept in the trace.
    public private(set) var skippedISO15693Frames = 0
    /// Why ``skippedISO15693Frames`` are left out, as the export says it.
    public static let iso15693Reason = "ISO 15693 frames: Wireshark has no dissector; kept in the trace"
    /// Packets made so far.
    public private(set) var packetCount = 0

    private var source: Source = .unknown
    private var device = ""
    private var phone: Activation?
    private var targets: [Int64: Target] = [:]
    private var link = ISODEPBlockFraming()
    private var notes: [String] = []
    private var lastT: Int64 = 0
    private var pendingCommand: (t: Int64, apdu: [UInt8])?
    private var reader: String?

    private enum Source: Equatable {
        case unknown, session, virtualPN532, virtualCard, hce
    }

    private struct Activation: Sendable {
        var uid: [UInt8]
        var atqa: [UInt8]?
        var sak: UInt8?
        var ats: [UInt8]?
    }

    private struct Target: Sendable {
        var kind: String
        var viaPCSC: Bool
        var family: TargetFamily? = nil
    }

    /// A `detected` target's family: its `family` (a ``/NFCTags/TargetFamily`` name), else its
    /// `kind`.
    private static func family(_ target: TraceRecord.Detected.Target) -> TargetFamily? {
        target.family.flatMap(TargetFamily.init(rawValue:)) ?? TargetFamily(rawValue: target.kind)
    }

    public init(redact: Bool = false) {
        self.redact = redact
    }

    /// The packets `trace` makes (none for records that are not about the air).
    public mutating func add(_ trace: TraceRecord) -> [ISO14443Packet] {
        let event = trace.kind ?? ""
        let t = trace.time ?? lastT
        lastT = t
        let record = trace.json
        if event == .header {
            configure(record)
            return []
        }
        var out: [ISO14443Packet] = []
        if source == .unknown { source = Self.guessSource(record) }
        switch source {
        case .session, .unknown: session(trace, event, t, &out)
        case .virtualPN532: virtualPN532(trace, event, t, &out)
        case .virtualCard: virtualCard(trace, event, t, &out)
        case .hce: hce(record, event, t, &out)
        }
        packetCount += out.count
        return out
    }

    /// Notes that found no packet to ride on, as a last packet-less remainder: attached to
    /// nothing, returned for the caller to put in the file's section comment.
    public mutating func finish() -> [String] {
        defer { notes = [] }
        return notes
    }

    private mutating func configure(_ h: JSONObject) {
        device = h["device"]?.stringValue ?? ""
        switch h["command"]?.stringValue ?? "" {
        case "virtual pn532": source = .virtualPN532
        case "virtual card": source = .virtualCard
        case "emulate", "walk": source = .hce
        case "": source = .unknown
        default: source = .session
        }
        if case .object(let model)? = h["model"], case .object(let p)? = model["phone"],
            let uid = p["uid"].flatMap(\.stringValue).flatMap({ [UInt8](hex: $0) })
        {
            phone = Activation(
                uid: uid, atqa: p["atqa"].flatMap(\.stringValue).flatMap { [UInt8](hex: $0) },
                sak: p["sak"].flatMap(\.stringValue).flatMap { [UInt8](hex: $0) }?.first,
                ats: p["ats"].flatMap(\.stringValue).flatMap { [UInt8](hex: $0) })
        }
    }

    private static func guessSource(_ r: JSONObject) -> Source {
        if r["source"] != nil { return .hce }
        switch TraceRecord(json: r).kind {
        case .cApdu?, .rApdu?, .cardConnected?, .vpcdControl?: return .virtualCard
        case .air?, .field?, .pn532Event?: return .virtualPN532
        default: return .session
        }
    }

    // MARK: sessions and bench runs

    private mutating func session(
        _ r: TraceRecord, _ event: TraceRecord.Kind, _ t: Int64, _ out: inout [ISO14443Packet]
    ) {
        switch event {
        case .detected:
            for target in TraceRecord.Detected(r)?.targets ?? [] { detected(target, t, &out) }
        case .frame:
            if TraceRecord.HostLinkFrame(r) != nil { return }  // a virtual PN532's host-link frame
            guard let exchange = TraceRecord.Frame(r) else { return skip() }
            let target = targets[exchange.target] ?? Target(kind: "other", viaPCSC: device.hasPrefix("pcsc"))
            if target.family == .iso15693 {
                skippedISO15693Frames += 1
                return
            }
            guard let command = [UInt8](hex: exchange.command) else { return skip() }
            var response: [UInt8]?
            if let v = exchange.response {
                guard let h = [UInt8](hex: v) else { return skip() }
                response = h
            }
            if target.family == .felica {
                feliCa(command, response, t, comment: nil, &out)
                return
            }
            switch target.kind {
            case "type2":
                type2(
                    command, response, t, synthesizedBy: target.viaPCSC ? Self.pcscStorageCommand(command) : nil, &out)
            case "type4":
                isoDEP(command, response, t, framing: target.viaPCSC ? .pcsc : framingOfDevice, &out)
            default:
                frame(command, response, t, comment: nil, &out)
            }
        case .lost:
            notes.append("target \(TraceRecord.Lost(r)?.target ?? 0) left the field")
        default:
            break
        }
    }

    private var framingOfDevice: Framing { device.hasPrefix("sim:") ? .simulator : .libnfc }

    private mutating func detected(_ o: TraceRecord.Detected.Target, _ t: Int64, _ out: inout [ISO14443Packet]) {
        let id = o.id
        let kind = o.kind
        let family = Self.family(o)
        if family == .felica || family == .iso15693 {
            let viaPCSC = o.atqa == nil && o.sak == nil && o.atr != nil
            targets[id] = Target(kind: kind, viaPCSC: viaPCSC, family: family)
            if family == .felica { feliCaDetected(o, viaPCSC: viaPCSC, t, &out) }
            return
        }
        guard let uid = [UInt8](hex: o.uid) else { return skip() }
        let atqa = o.atqa.flatMap { [UInt8](hex: $0) }
        let sak = o.sak.flatMap { [UInt8](hex: $0) }?.first
        var ats = o.ats.flatMap { [UInt8](hex: $0) }
        let atr = o.atr.flatMap { [UInt8](hex: $0) }
        let viaPCSC = atqa == nil && sak == nil && atr != nil
        targets[id] = Target(kind: kind, viaPCSC: viaPCSC)
        var note: String
        if viaPCSC {
            note =
                "synthesized from the UID the PC/SC reader reports (FF CA 00 00 00); PC/SC hides REQA, SELECT and SAK"
            if let atr { note += "; ATR \(atr.hexString(separator: " "))" }
            if kind == "type4", let atr, let parsed = try? ATR(bytes: atr) {
                let historical = Array(parsed.historicalBytes.prefix(250))
                ats = [UInt8(2 + historical.count), 0x08] + historical
                note += "; the ATS is rebuilt from the ATR's historical bytes (FSCI 8 assumed)"
            }
        } else if device.hasPrefix("sim:") {
            note = "synthesized from the simulated reader's target (ATQA, UID, SAK, ATS)"
        } else {
            note =
                "synthesized from the target libnfc reports (ATQA, UID, SAK, ATS): the PN53x runs REQA, anticollision and RATS itself"
        }
        activate(Activation(uid: uid, atqa: atqa, sak: sak, ats: ats), t, note: note, rats: [0xE0, 0x80], &out)
    }

    // MARK: activation and ISO-DEP

    /// REQA → ATQA (when known), each cascade level's anticollision and SELECT → SAK (SELECT
    /// only when the SAK is known), RATS → ATS (when there is an ATS). Resets ISO-DEP state.
    private mutating func activate(
        _ a: Activation, _ t: Int64, note: String, rats: [UInt8], _ out: inout [ISO14443Packet]
    ) {
        link = ISODEPBlockFraming()
        let uid = redact ? [UInt8](repeating: 0, count: a.uid.count) : a.uid
        var first = true
        func comment(_ what: String) -> String {
            defer { first = false }
            return first ? what + " — " + note : what
        }
        if let atqa = a.atqa {
            emit(.pcdToPICCCRCDropped, [0x26], t, comment("REQA"), &out)
            emit(.piccToPCDCRCDropped, atqa, t, comment("ATQA"), &out)
        }
        let levels = ISO14443AActivation.cascadeLevels(uid: uid)
        for (i, level) in levels.enumerated() {
            let n = i + 1
            emit(.pcdToPICCCRCDropped, [level.sel, 0x20], t, comment("anticollision, cascade level \(n)"), &out)
            emit(.piccToPCDCRCDropped, level.anticollisionAnswer, t, comment("UID CL\(n)"), &out)
            guard let sak = a.sak else { continue }
            let last = i == levels.count - 1
            emit(.pcdToPICCCRCDropped, level.select, t, comment("SELECT CL\(n)"), &out)
            emit(
                .piccToPCDCRCDropped, [last ? sak : 0x04], t,
                comment(last ? "SAK" : "SAK (cascade bit: UID not complete)"), &out)
        }
        if var ats = a.ats, !ats.isEmpty {
            if Int(ats[0]) != ats.count { ats = [UInt8(truncatingIfNeeded: ats.count + 1)] + ats }
            if redact { ats = Self.redactedATS(ats) }
            link = ISODEPBlockFraming(ats: ats, rats: rats)
            emit(.pcdToPICCCRCDropped, rats, t, comment("RATS"), &out)
            emit(.piccToPCDCRCDropped, ats, t, comment("ATS"), &out)
        }
    }

    private enum Framing {
        case libnfc, pcsc, simulator, phone

        var note: String {
            switch self {
            case .libnfc: "I-block framing synthesized (the PN53x runs ISO-DEP itself; libnfc passes APDUs)"
            case .pcsc: "I-block framing synthesized (PC/SC hides the block framing)"
            case .simulator: "I-block framing synthesized (the simulated reader passes APDUs)"
            case .phone: "I-block framing synthesized (the phone model answers APDUs)"
            }
        }
    }

    private mutating func isoDEP(
        _ capdu: [UInt8], _ rapdu: [UInt8]?, _ t: Int64, framing: Framing, extra: String? = nil,
        _ out: inout [ISO14443Packet]
    ) {
        let c = redact ? Self.redactedCommandAPDU(capdu) : capdu
        let r = rapdu.map { redact ? Self.redactedResponseAPDU($0) : $0 }
        let blocks = link.exchange(c, r)
        for (i, b) in blocks.enumerated() {
            var comment: String? = nil
            if i == 0 {
                comment = [Self.describeAPDU(capdu), extra, framing.note].compactMap { $0 }.joined(separator: " — ")
            }
            emit(b.fromReader ? .pcdToPICCCRCDropped : .piccToPCDCRCDropped, b.bytes, t, comment, &out)
        }
        if rapdu == nil || rapdu?.isEmpty == true {
            notes.append("no answer to the APDU above (the reader timed out)")
        }
    }

    // MARK: Type 2

    private mutating func type2(
        _ command: [UInt8], _ response: [UInt8]?, _ t: Int64, synthesizedBy: String?, _ out: inout [ISO14443Packet]
    ) {
        var text = Self.describeType2(command)
        var answerPacket: [UInt8]? = nil
        if let response {
            if response.count == 1 && response[0] < 0x10 {
                text += response[0] == 0x0A ? " → ACK" : " → NAK \(String(response[0], radix: 16, uppercase: true))"
            } else {
                answerPacket = redact && command.first != 0x60 ? [UInt8](repeating: 0, count: response.count) : response
            }
        } else {
            text += " → no answer"
        }
        if let synthesizedBy { text += " — synthesized: the PC/SC reader sends it for \(synthesizedBy)" }
        var c = command
        if redact && c.first == 0xA2 && c.count > 2 {
            c = Array(c.prefix(2)) + [UInt8](repeating: 0, count: c.count - 2)
        }
        emit(.pcdToPICCCRCDropped, c, t, text, &out)
        if let answerPacket { emit(.piccToPCDCRCDropped, answerPacket, t, nil, &out) }
    }

    /// What a Type 2 Tag command frame asks (NFC Forum T2T 1.0 §5, NXP NTAG21x §10).
    public static func describeType2(_ f: [UInt8]) -> String {
        guard let code = f.first else { return "empty frame" }
        func page(_ i: Int) -> String { i < f.count ? "\(f[i])" : "?" }
        switch code {
        case 0x30: return "READ page \(page(1))"
        case 0xA2: return "WRITE page \(page(1))"
        case 0xA0: return "COMPATIBILITY WRITE page \(page(1))"
        case 0x60: return "GET_VERSION"
        case 0x3A: return "FAST_READ pages \(page(1))–\(page(2))"
        case 0x1B: return "PWD_AUTH"
        case 0x39: return "READ_CNT"
        case 0x3C: return "READ_SIG"
        case 0xC2: return "SECTOR_SELECT"
        case 0x50: return "HLTA"
        default: return "Type 2 command \(String(format: "%02X", code))"
        }
    }

    /// What a FeliCa command or response is, as its packet's comment says ("Check (Read
    /// Without Encryption): service 000B, block 0"); with or without its length byte.
    public static func describeFeliCa(_ frame: [UInt8]) -> String {
        FeliCaFrames.describe(FeliCaFrames.payload(frame))
    }

    /// The PC/SC pseudo-APDU a storage-card reader gets for this Type 2 frame.
    private static func pcscStorageCommand(_ f: [UInt8]) -> String? {
        switch f.first {
        case 0x30?: f.count > 1 ? "READ BINARY FF B0 00 \(String(format: "%02X", f[1])) 10" : nil
        case 0xA2?: f.count > 1 ? "UPDATE BINARY FF D6 00 \(String(format: "%02X", f[1])) 04" : nil
        default: "a transparent exchange (FF C2 00 01)"
        }
    }

    // MARK: FeliCa

    /// A FeliCa target's Polling, rebuilt from what the device reports (no PMm, as PC/SC
    /// gives: a note only, the IDm is the reader's `FF CA`).
    private mutating func feliCaDetected(
        _ o: TraceRecord.Detected.Target, viaPCSC: Bool, _ t: Int64, _ out: inout [ISO14443Packet]
    ) {
        guard let idm = [UInt8](hex: o.uid) else { return skip() }
        guard let pmm = o.pmm.flatMap({ [UInt8](hex: $0) }), idm.count == 8, pmm.count == 8 else {
            notes.append(
                viaPCSC
                    ? "FeliCa card: the PC/SC reader polls it (its IDm is what the reader reports for FF CA 00 00 00)"
                    : "FeliCa card \(redact ? "" : idm.hexString() + " ")detected (no PMm reported: no Polling rebuilt)"
            )
            return
        }
        let systemCode = o.systemCode.flatMap { [UInt8](hex: $0) }.flatMap { $0.count == 2 ? $0 : nil }
        let note =
            device.hasPrefix("sim:")
            ? "synthesized from the simulated reader's target (IDm, PMm, system code)"
            : "synthesized from the target libnfc reports (IDm, PMm, system code): the PN53x polls itself"
        let polling: [UInt8] = [0x06, 0x00, 0xFF, 0xFF, systemCode == nil ? 0x00 : 0x01, 0x00]
        let answer: [UInt8] = [0x01] + idm + pmm + (systemCode ?? [])
        feliCa(polling, [UInt8(answer.count + 1)] + answer, t, comment: note, &out)
    }

    /// A FeliCa exchange (frames as the trace holds them, LEN first): a packet each way on
    /// the FeliCa interface, each described in its comment, `comment` added to the command's.
    private mutating func feliCa(
        _ command: [UInt8], _ response: [UInt8]?, _ t: Int64, comment: String?, _ out: inout [ISO14443Packet]
    ) {
        let c = FeliCaFrames.payload(command)
        emitFeliCa(
            fromReader: true, c, t, [FeliCaFrames.describe(c), comment].compactMap { $0 }.joined(separator: " — "),
            &out)
        if let response, !response.isEmpty {
            let r = FeliCaFrames.payload(response)
            emitFeliCa(fromReader: false, r, t, FeliCaFrames.describe(r), &out)
        } else {
            notes.append("no answer")
        }
    }

    private mutating func emitFeliCa(
        fromReader: Bool, _ payload: [UInt8], _ t: Int64, _ comment: String, _ out: inout [ISO14443Packet]
    ) {
        var parts = notes
        notes = []
        parts.append(comment)
        out.append(
            ISO14443Packet(
                tMicroseconds: t, event: fromReader ? .pcdToPICCCRCDropped : .piccToPCDCRCDropped,
                data: redact ? FeliCaFrames.redacted(payload) : payload, comment: parts.joined(separator: "; "),
                link: .feliCa))
    }

    // MARK: the virtual PN532

    private mutating func virtualPN532(
        _ r: TraceRecord, _ event: TraceRecord.Kind, _ t: Int64, _ out: inout [ISO14443Packet]
    ) {
        switch event {
        case .field:
            let field = TraceRecord.FieldChange(r)
            emit(field?.isOn == true ? .fieldOn : .fieldOff, [], t, field?.note, &out)
        case .air:
            guard let air = TraceRecord.Air(r) else { return skip() }
            let kind = air.exchange
            if kind == "iso15693" {
                skippedISO15693Frames += 1
                return
            }
            guard let command = [UInt8](hex: air.command) else { return skip() }
            var answer: [UInt8]?
            if let v = air.response {
                guard let h = [UInt8](hex: v) else { return skip() }
                answer = h
            }
            let note = air.note
            if kind == "type2" {
                type2(command, answer, t, synthesizedBy: nil, &out)
                return
            }
            if kind == "felica" {
                feliCa(command, answer, t, comment: note, &out)
                return
            }
            if kind == "deselect" {
                // Wireshark 4.0 reads an INF byte into every S-block, so an S(DESELECT) (no
                // INF) is always "malformed" there: it stays a comment.
                notes.append(
                    "S(DESELECT) \(command.hexString()) → \(answer?.hexString() ?? "no answer") (not a packet: Wireshark 4.0 reads an INF byte into every S-block and rejects a DESELECT)"
                )
                return
            }
            if !command.isEmpty {
                emit(
                    .pcdToPICCCRCDropped, redact ? Self.redactedAir(command, kind: kind, fromReader: true) : command, t,
                    note, &out)
            }
            if let answer, !answer.isEmpty {
                emit(
                    .piccToPCDCRCDropped, redact ? Self.redactedAir(answer, kind: kind, fromReader: false) : answer, t,
                    command.isEmpty ? note : nil, &out)
            }
        case .pn532Event:
            if let n = TraceRecord.PN532Event(r)?.note { notes.append("virtual PN532: " + n) }
        default:
            break
        }
    }

    // MARK: the virtual card on vpcd

    private mutating func virtualCard(
        _ r: TraceRecord, _ event: TraceRecord.Kind, _ t: Int64, _ out: inout [ISO14443Packet]
    ) {
        switch event {
        case .cardConnected:
            link = ISODEPBlockFraming()
            emit(.fieldOn, [], t, "the virtual card connected to vpcd: it enters the reader's field", &out)
        case .cardDisconnected:
            emit(.fieldOff, [], t, "the virtual card left vpcd (\(r["reason"]?.stringValue ?? "?"))", &out)
        case .vpcdControl:
            // Power on/off/reset are pcscd's, not fields; "get ATR" is bookkeeping.
            guard r["code"]?.stringValue != "04" else { return }
            notes.append("pcscd: \(r["meaning"]?.stringValue ?? "control") (vpcd control, not a field change)")
        case .atr:
            if let atr = hex(r["atr"]), atr != cardATR {
                notes.append("ATR \(atr.hexString(separator: " "))")
                cardATR = atr
                cardFamily = TargetClassification.classify(atr: atr).family
            }
        case .cApdu where cardFamily == .iso15693:
            skippedISO15693Frames += 1
        case .cApdu:
            guard let apdu = TraceRecord.CommandAPDU(r).flatMap({ [UInt8](hex: $0.apdu) }) else { return skip() }
            pendingCommand = (t, apdu)
        case .rApdu:
            guard let (ct, apdu) = pendingCommand else { return }
            pendingCommand = nil
            guard let response = TraceRecord.ResponseAPDU(r).flatMap({ [UInt8](hex: $0.response) }) else {
                return skip()
            }
            pcscAPDU(apdu, response, ct, &out)
        default:
            break
        }
    }

    private var cardATR: [UInt8] = []
    private var cardFamily: TargetFamily?

    private mutating func pcscAPDU(_ c: [UInt8], _ r: [UInt8], _ t: Int64, _ out: inout [ISO14443Packet]) {
        if cardFamily == .felica {
            feliCaCardAPDU(c, r, t, &out)
            return
        }
        guard c.count >= 4, c[0] == 0xFF else {
            if !link.active {
                var ats: [UInt8] = [0x02, 0x08]
                if let parsed = try? ATR(bytes: cardATR) {
                    let h = Array(parsed.historicalBytes.prefix(250))
                    ats = [UInt8(2 + h.count), 0x08] + h
                }
                emitRATS(
                    ats, t,
                    note:
                        "synthesized: rebuilt from the ATR's historical bytes (FSCI 8 assumed); PC/SC hides the activation",
                    &out)
            }
            isoDEP(c, r, t, framing: .pcsc, &out)
            return
        }
        let body = r.count >= 2 ? Array(r.dropLast(2)) : []
        let sw = r.suffix(2).hexString(separator: " ")
        switch (c[1], c[2]) {
        case (0xCA, 0x00):
            guard r.suffix(2) == [0x90, 0x00], !body.isEmpty else {
                notes.append("GET DATA (UID) FF CA answered \(sw)")
                return
            }
            activate(
                Activation(uid: body), t,
                note: "synthesized: the PC/SC reader's anticollision, whose UID it reports for GET DATA FF CA 00 00 00",
                rats: [0xE0, 0x80], &out)
        case (0xB0, _):
            var page = Int(c[3])
            var rest = body[...]
            var first = true
            if rest.isEmpty {
                type2(
                    [0x30, c[3]], nil, t,
                    synthesizedBy: "READ BINARY \(c.hexString(separator: " ")) (answered \(sw))", &out)
            }
            while !rest.isEmpty {
                let chunk = Array(rest.prefix(16))
                rest = rest.dropFirst(16)
                type2(
                    [0x30, UInt8(truncatingIfNeeded: page)], chunk, t,
                    synthesizedBy: first ? "READ BINARY \(c.hexString(separator: " "))" : "the same READ BINARY",
                    &out)
                first = false
                page += 4
            }
        case (0xD6, _):
            type2(
                [0xA2, c[3]] + c.dropFirst(5), r.suffix(2) == [0x90, 0x00] ? [0x0A] : [0x00], t,
                synthesizedBy: "UPDATE BINARY FF D6 00 \(String(format: "%02X", c[3])) 04 (answered \(sw))", &out)
        case (0xC2, _) where c[3] == 0x01:
            guard let frame = Self.transparentFrame(c) else {
                notes.append("transparent exchange \(c.hexString(separator: " ")) → \(sw)")
                return
            }
            let answer = Self.transparentAnswer(r)
            type2(frame, answer, t, synthesizedBy: nil, &out)
        default:
            notes.append(
                "PC/SC \(c.hexString(separator: " ")) → \(r.hexString(separator: " ")) (not sent over the air)")
        }
    }

    /// The vpcd FeliCa card (ACS direct transmit, `FF 00 00 00 Lc <frame, LEN first>` →
    /// `<answer> 90 00`): the frames as FeliCa packets; other APDUs (GET DATA: the IDm) are not
    /// sent over the air and become notes.
    private mutating func feliCaCardAPDU(_ c: [UInt8], _ r: [UInt8], _ t: Int64, _ out: inout [ISO14443Packet]) {
        let sw = r.suffix(2).hexString(separator: " ")
        guard c.count > 5, c[0] == 0xFF, c[1] == 0x00, c[2] == 0x00, c[3] == 0x00, Int(c[4]) == c.count - 5 else {
            if c.count >= 2, c[0] == 0xFF, c[1] == 0xCA {
                notes.append(
                    "GET DATA FF CA → \(sw): the IDm the reader got from its own Polling (not sent over the air)")
                return
            }
            notes.append(
                "PC/SC \(redact ? Self.zeros(c, keep: 5).hexString(separator: " ") : c.hexString(separator: " ")) → \(sw) (not sent over the air)"
            )
            return
        }
        let answer = r.suffix(2) == [0x90, 0x00] ? Array(r.dropLast(2)) : nil
        feliCa(
            Array(c.dropFirst(5)), answer, t,
            comment: "the PC/SC reader's direct transmit FF 00 00 00" + (answer == nil ? " (answered \(sw))" : ""),
            &out)
    }

    /// The frame inside a Transparent Exchange's Transceive data object `95`.
    private static func transparentFrame(_ c: [UInt8]) -> [UInt8]? {
        guard c.count > 5 else { return nil }
        var rest = c.dropFirst(5)
        while let tag = rest.popFirst(), let len = rest.popFirst() {
            guard rest.count >= Int(len) else { return nil }
            if tag == 0x95 { return Array(rest.prefix(Int(len))) }
            rest = rest.dropFirst(Int(len))
        }
        return nil
    }

    /// The card's answer inside a Transparent Exchange's Response data object `97`.
    private static func transparentAnswer(_ r: [UInt8]) -> [UInt8]? {
        var rest = r.dropLast(2)[...]
        while let tag = rest.popFirst(), var len = rest.popFirst().map(Int.init) {
            if len == 0x81, let l = rest.popFirst() { len = Int(l) }
            guard rest.count >= len else { return nil }
            if tag == 0x97 { return Array(rest.prefix(len)) }
            rest = rest.dropFirst(len)
        }
        return nil
    }

    private mutating func emitRATS(_ ats: [UInt8], _ t: Int64, note: String, _ out: inout [ISO14443Packet]) {
        let a = redact ? Self.redactedATS(ats) : ats
        link = ISODEPBlockFraming(ats: a, rats: [0xE0, 0x80])
        emit(.pcdToPICCCRCDropped, [0xE0, 0x80], t, "RATS — " + note, &out)
        emit(.piccToPCDCRCDropped, a, t, "ATS", &out)
    }

    // MARK: the HCE phone (emulate, walk)

    private mutating func hce(_ r: JSONObject, _ event: TraceRecord.Kind, _ t: Int64, _ out: inout [ISO14443Packet]) {
        let source = r["source"]?.stringValue ?? "model"  // a virtual walk's records are all the model's
        if let name = r["reader"]?.stringValue, name != reader {
            reader = name
            notes.append("reader: \(name)")
        }
        switch (source, event) {
        case ("model", "fieldOn"):
            link = ISODEPBlockFraming()
            let technology = r["technology"]?.stringValue ?? ""
            emit(.fieldOn, [], t, "field on (\(technology))", &out)
            if let range = technology.range(of: "ECP "), let ecp = [UInt8](hex: technology[range.upperBound...]) {
                emit(
                    .pcdToPICCCRCDropped, ecp, t,
                    "ECP frame (Apple enhanced contactless polling), before anticollision", &out)
            }
        case ("model", "fieldOff"):
            emit(.fieldOff, [], t, nil, &out)
        case ("model", "isoDepActivated"):
            var p =
                phone
                ?? Activation(
                    uid: [0x08, 0x00, 0x00, 0x00], atqa: [0x04, 0x00], sak: 0x20, ats: [0x05, 0x78, 0x80, 0x70, 0x02])
            // The live phone's UID is new each emulation: the line says which one it presented.
            if let uid = hex(r["uid"]), !uid.isEmpty { p.uid = uid }
            activate(
                p, t, note: "synthesized from the phone's identity (the model's ISO-DEP activation)",
                rats: lastRATS ?? [0xE0, 0x80], &out)
        case ("model", "apdu"):
            guard let c = hex(r["apdu"]) else { return skip() }
            var response: [UInt8]? = nil
            if let v = r["response"], v != .null {
                guard let h = hex(v) else { return skip() }
                response = h
            }
            let by = r["answered_by"]?.stringValue.map { "answered by the \($0)" } ?? "no answer: reader timeout"
            isoDEP(c, response, t, framing: .phone, extra: by, &out)
        case ("model", "nfcEvent"):
            notes.append("the default contactless app is woken (readerDetected, scene nfcEvent)")
        case ("model", "wakeSuppressed"):
            notes.append("wake suppressed (\(r["detail"]?.stringValue ?? ""))")
        case ("libnfc", "activation"):
            if let rats = hex(r["apdu"]), rats.first == 0xE0 { lastRATS = rats }
            notes.append("libnfc: nfc_target_init returned (the reader activated the phone)")
        case ("bench", "notShowable"):
            notes.append("not showable over this stack: \(r["detail"]?.stringValue ?? "")")
        default:
            break
        }
    }

    private var lastRATS: [UInt8]?

    // MARK: plumbing

    private mutating func frame(
        _ command: [UInt8], _ response: [UInt8]?, _ t: Int64, comment: String?, _ out: inout [ISO14443Packet]
    ) {
        emit(.pcdToPICCCRCDropped, redact ? Self.zeros(command, keep: 1) : command, t, comment, &out)
        if let response, !response.isEmpty {
            emit(.piccToPCDCRCDropped, redact ? Self.zeros(response, keep: 0) : response, t, nil, &out)
        } else {
            notes.append("no answer")
        }
    }

    /// Adds a packet (with the notes waiting for one). A one-byte reader frame other than
    /// REQA/WUPA (GET_VERSION `60`, R(NAK) `B2`, R(ACK) `A2`) gets its CRC_A and the plain
    /// event: Wireshark takes every one-byte reader frame for a short frame and its answer
    /// for an ATQA (a one-byte answer is then malformed).
    private mutating func emit(
        _ event: ISO14443LinkType.Event, _ data: [UInt8], _ t: Int64, _ comment: String?,
        _ out: inout [ISO14443Packet]
    ) {
        var event = event
        var data = data
        if event == .pcdToPICCCRCDropped, data.count == 1, data[0] != 0x26, data[0] != 0x52 {
            event = .pcdToPICC
            data += iso14443CRCA(data)
        }
        var parts = notes
        notes = []
        if let comment { parts.append(comment) }
        out.append(
            ISO14443Packet(
                tMicroseconds: t, event: event, data: data, comment: parts.isEmpty ? nil : parts.joined(separator: "; ")
            ))
    }

    private mutating func skip() { skippedFrames += 1 }

    private func hex(_ v: JSONValue?) -> [UInt8]? {
        guard let s = v?.stringValue else { return nil }
        return [UInt8](hex: s)
    }

    // MARK: redaction and descriptions

    static func zeros(_ b: [UInt8], keep: Int) -> [UInt8] {
        Array(b.prefix(keep)) + [UInt8](repeating: 0, count: max(0, b.count - keep))
    }

    /// TL, T0 and the interface bytes stay; historical bytes become zeros.
    static func redactedATS(_ ats: [UInt8]) -> [UInt8] {
        guard ats.count >= 2 else { return ats }
        let interface = [0x10, 0x20, 0x40].filter { ats[1] & UInt8($0) != 0 }.count
        return zeros(ats, keep: min(ats.count, 2 + interface))
    }

    /// Header (and Lc/Le) kept; the data field zeroed except SELECT's (an AID or file id).
    static func redactedCommandAPDU(_ c: [UInt8]) -> [UInt8] {
        guard c.count > 5, c[1] != 0xA4 else { return c }
        let lc = Int(c[4])
        guard lc > 0, c.count >= 5 + lc else { return c }
        return Array(c.prefix(5)) + [UInt8](repeating: 0, count: lc) + c.suffix(from: 5 + lc)
    }

    /// Data zeroed, SW1 SW2 kept.
    static func redactedResponseAPDU(_ r: [UInt8]) -> [UInt8] {
        guard r.count > 2 else { return r }
        return [UInt8](repeating: 0, count: r.count - 2) + r.suffix(2)
    }

    /// A frame of the virtual PN532's `air` record, by the record's kind.
    static func redactedAir(_ f: [UInt8], kind: String, fromReader: Bool) -> [UInt8] {
        func uidPart(_ p: ArraySlice<UInt8>) -> [UInt8] {
            var part: [UInt8] = p.first == 0x88 ? [0x88, 0, 0, 0] : [0, 0, 0, 0]
            part.append(part.reduce(0, ^))
            return part
        }
        switch (kind, fromReader) {
        case ("anticollision", false) where f.count == 5: return uidPart(f[0..<4])
        case ("select", true) where f.count == 7: return Array(f.prefix(2)) + uidPart(f[2..<6])
        case ("rats", false): return redactedATS(f)
        case ("block", true) where f.count > 1 && f[0] & 0xC0 == 0:
            return [f[0]] + redactedCommandAPDU(Array(f.dropFirst()))
        case ("block", false) where f.count > 1 && f[0] & 0xC0 == 0:
            return [f[0]] + redactedResponseAPDU(Array(f.dropFirst()))
        default: return f
        }
    }

    /// A short name for common command APDUs (ISO/IEC 7816-4 instructions).
    public static func describeAPDU(_ c: [UInt8]) -> String? {
        guard c.count >= 4 else { return nil }
        switch c[1] {
        case 0xA4:
            if c[2] == 0x04, c.count > 5 {
                let aid = Array(c.dropFirst(5).prefix(Int(c[4])))
                let name =
                    switch aid.hexString() {
                    case "D2760000850101": " (NDEF Tag Application)"
                    case "325041592E5359532E4444463031": " (PPSE 2PAY.SYS.DDF01)"
                    case "4F53452E5641532E3031": " (Apple VAS OSE.VAS.01)"
                    default: ""
                    }
                return "SELECT by AID \(aid.hexString())\(name)"
            }
            if c[2] == 0x00, c.count > 5 { return "SELECT file \(c.dropFirst(5).prefix(Int(c[4])).hexString())" }
            return "SELECT"
        case 0xB0: return "READ BINARY offset \(Int(c[2]) << 8 | Int(c[3]))"
        case 0xD6: return "UPDATE BINARY offset \(Int(c[2]) << 8 | Int(c[3]))"
        case 0xCA: return "GET DATA"
        case 0xB2: return "READ RECORD"
        case 0xA8: return "GET PROCESSING OPTIONS"
        default: return nil
        }
    }
}
