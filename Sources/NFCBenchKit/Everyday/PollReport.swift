public import NFCTrace

/// What `nfcbench poll` says of each arrival and departure in the field: one line for a
/// person (as `nfc-list` and `pcsc_scan` show a card) and one JSON object per event.
///
/// An arrival shows the technology, the UID and what the reader showed of the activation:
/// ATQA (printed most significant byte first, as `nfc-list` prints it; the JSON keeps the
/// wire order, LSB first, as tag files and traces do), SAK and ATS from a libnfc device or the
/// simulator; the ATR and its PC/SC part 3 reading (storage card: standard and card name; or
/// ISO/IEC 14443-4 with its historical bytes) from a PC/SC reader.
///
/// FeliCa (IDm/PMm) and ISO/IEC 15693 targets are not polled yet: the frontend's poll is
/// ISO/IEC 14443 (``technologies``); their fields join ``arrival(_:at:redact:)`` when the frontend
/// senses them.
public enum PollReport {
    /// The polling options `poll` asks the frontend for.
    public static let technologies: NFCPollingOption = .iso14443

    /// The time since the poll started, as the lines print it (`12.345s`); a time before the
    /// start (a tag already in the field, its detection stamped as the poll began) is `0.000s`.
    public static func seconds(_ d: Duration) -> String {
        let d = max(d, .zero)
        let ms = d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
        let fraction = String(ms % 1000)
        return "\(ms / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)s"
    }

    /// The reading of a PC/SC part 3 contactless ATR, `nil` for another ATR; with `redact`,
    /// the historical bytes of an ISO/IEC 14443-4 card as their redacted text.
    public static func atrReading(_ atr: [UInt8], redact: Bool = false) -> String? {
        guard let parsed = try? ATR(bytes: atr), let card = parsed.contactless else { return nil }
        switch card {
        case .storageCard(let standard, let name):
            return "PC/SC part 3 storage card: \(standard.name), \(name.name)"
        case .iso14443_4(let historical):
            return
                "PC/SC part 3 ISO/IEC 14443-4 card, historical bytes \(BenchRedaction.hex(historical, separator: " ", redact: redact))"
        }
    }

    /// The family as a short word (`Type 2`, `ISO-DEP`, `MIFARE Classic`…).
    public static func familyName(_ family: TargetFamily) -> String {
        switch family {
        case .type2: "Type 2"
        case .isoDEP: "ISO-DEP"
        case .mifareClassic: "MIFARE Classic"
        case .mifarePlusSL2: "MIFARE Plus SL2"
        case .nfcDEP: "NFC-DEP"
        case .felica: "FeliCa"
        case .iso15693: "ISO 15693"
        case .other: "other"
        }
    }

    /// The technology's name (`ISO14443A`, …).
    public static func technologyName(_ t: DetectedTarget) -> String {
        if t.technology.contains(.iso18092) { return NFCTechnology.felica.rawValue }
        if t.technology.contains(.iso15693) { return NFCTechnology.iso15693.rawValue }
        return NFCTechnology.iso14443A.rawValue
    }

    /// An arrival: `+ 0.412s ISO14443A UID 04518A2B6C1F90 ATQA 0044 SAK 00 (Type 2)`. With
    /// `redact` (`--redact`) the UID, ATS and ATR are their redacted text in the line and in
    /// the JSON, as the trace writes them (`UID redacted:7 bytes`).
    public static func arrival(_ t: DetectedTarget, at elapsed: Duration, redact: Bool = false) -> (
        line: String, json: JSONObject
    ) {
        var parts = [
            "+", seconds(elapsed), technologyName(t), "UID",
            t.uid.isEmpty ? "(not shown)" : BenchRedaction.hex(t.uid, redact: redact),
        ]
        if let atqa = t.atqa { parts += ["ATQA", atqa.reversed().hexString()] }
        if let sak = t.sak { parts += ["SAK", [sak].hexString()] }
        if let ats = t.ats { parts += ["ATS", BenchRedaction.hex(ats, redact: redact)] }
        if let atr = t.atr { parts += ["ATR", BenchRedaction.hex(atr, redact: redact)] }
        var line = parts.joined(separator: " ") + " (\(familyName(t.family))"
        let reading = t.atr.flatMap { atrReading($0, redact: redact) }
        if let reading { line += "; \(reading)" }
        line += ")"
        var json = t.json
        json["event"] = "arrived"
        json["t_ms"] = .int(milliseconds(elapsed))
        json["technology"] = .string(technologyName(t))
        if let reading { json["atr_reading"] = .string(reading) }
        return (line, redact ? TraceWriter.redacted(json) : json)
    }

    /// A departure: `- 3.104s UID 04518A2B6C1F90 left (in the field 2.692s)` (`redact`: as
    /// ``arrival(_:at:redact:)``).
    public static func departure(_ t: DetectedTarget, arrivedAt: Duration, at elapsed: Duration, redact: Bool = false)
        -> (line: String, json: JSONObject)
    {
        let uid = BenchRedaction.hex(t.uid, redact: redact)
        let line = "- \(seconds(elapsed)) UID \(uid) left (in the field \(seconds(elapsed - arrivedAt)))"
        let json: JSONObject = [
            "event": "left", "t_ms": .int(milliseconds(elapsed)), "id": .int(Int64(t.id.rawValue)),
            "uid": .string(uid), "present_ms": .int(milliseconds(elapsed - arrivedAt)),
        ]
        return (line, json)
    }

    static func milliseconds(_ d: Duration) -> Int64 {
        d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
    }
}
