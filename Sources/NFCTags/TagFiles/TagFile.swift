// Tag files: our JSON format (hardware/tags/FORMAT.md), Flipper Zero `.nfc` (version 2,
// NTAG/Ultralight) and Proxmark3 JSON dumps (`"FileType": "mfu"`).
import FoundationEssentials

/// A tag as a file describes it: identification, and either a Type 2 memory image or a
/// Type 4 NDEF file, plus an optional fault schedule.
public struct TagFile: Sendable, Hashable {
    /// The `type` field.
    public enum TagType: String, Sendable, Hashable, CaseIterable {
        case ntag213, ntag215, ntag216, ultralight
        case ultralightC = "ultralight_c"
        case ultralightEV1 = "ultralight_ev1"
        case type4
        /// MIFARE Classic 1K (SAK `08`): sensed by every reader, never read or written here
        /// (Crypto-1 sectors are not an NFC Forum tag platform); the file holds no sector data.
        case mifareClassic1K = "mifare_classic_1k"
        /// FeliCa Lite-S (RC-S966): one system (12FC when NDEF-formatted), an NFC Forum Type 3 Tag.
        case feliCaLiteS = "felica_lite_s"
        /// A FeliCa Standard-like card: one or more systems with services (a transit card).
        case feliCaStandard = "felica_standard"
        /// NXP ICODE SLIX (ISO/IEC 15693): an NFC Forum Type 5 Tag.
        case icodeSLIX = "icode_slix"
        /// ST ST25TV (ISO/IEC 15693): an NFC Forum Type 5 Tag.
        case st25tv

        /// A card a reader senses but this package does not exchange with (no emulation core).
        public var isSensedOnly: Bool { self == .mifareClassic1K }

        /// A FeliCa card (``TagFile/feliCa``).
        public var isFeliCa: Bool { self == .feliCaLiteS || self == .feliCaStandard }

        /// An ISO/IEC 15693 tag (``TagFile/iso15693``).
        public var isISO15693: Bool { self == .icodeSLIX || self == .st25tv }

        /// An NFC Forum Type 2 tag (NTAG21x, the Ultralight family): a memory of pages.
        public var isType2: Bool { self != .type4 && !isSensedOnly && !isFeliCa && !isISO15693 }

        /// The RF technology a reader senses it with.
        public var technology: NFCTechnology {
            isFeliCa ? .felica : isISO15693 ? .iso15693 : .iso14443A
        }

        /// The Type 2 memory map for `pageCount` pages (Ultralight EV1 has two sizes).
        public func type2Variant(pageCount: Int) -> NTAG21xCore.Variant? {
            switch self {
            case .ntag213: .ntag213
            case .ntag215: .ntag215
            case .ntag216: .ntag216
            case .ultralight: .ultralight
            case .ultralightC: .ultralightC
            case .ultralightEV1: pageCount > 20 ? .ultralightEV1MF0UL21 : .ultralightEV1MF0UL11
            case .type4, .mifareClassic1K, .feliCaLiteS, .feliCaStandard, .icodeSLIX, .st25tv: nil
            }
        }
    }

    /// Which reader produced the file.
    public enum SourceFormat: String, Sendable, Hashable {
        case nfcbench, flipper, proxmark3
    }

    /// What a Type 4 Tag's NDEF application holds (NFC Forum T4T 1.0/2.0 §5.1, 3.0 for ENDEF).
    public struct Type4Contents: Sendable, Hashable {
        /// The NDEF file as a reader READ BINARYs it: NLEN (2 bytes, mapping 1.0 and 2.0) or
        /// ENLEN (4 bytes, mapping 3.0), then the message.
        public var ndefFile: [UInt8]
        /// Maximum NDEF file size the CC announces (bytes, length field included).
        public var maximumNDEFFileSize: Int
        /// Mapping version, "1.0", "2.0" or "3.0".
        public var mappingVersion: String
        /// CC write access `FF` when true.
        public var readOnly: Bool
        /// The NDEF file identifier (2 bytes, `E1 04` by default).
        public var fileID: [UInt8]

        public init(
            ndefFile: [UInt8], maximumNDEFFileSize: Int, mappingVersion: String, readOnly: Bool,
            fileID: [UInt8] = [0xE1, 0x04]
        ) {
            self.ndefFile = ndefFile
            self.maximumNDEFFileSize = maximumNDEFFileSize
            self.mappingVersion = mappingVersion
            self.readOnly = readOnly
            self.fileID = fileID
        }

        /// Bytes of the length field: 2 for mapping 1.0 and 2.0, 4 (ENLEN) for 3.0.
        public var lengthFieldSize: Int { mappingVersion.hasPrefix("3") ? 4 : 2 }

        /// The NDEF message the file holds, `nil` when NLEN/ENLEN exceeds the file.
        public var ndefMessage: [UInt8]? {
            let n = lengthFieldSize
            guard ndefFile.count >= n else { return nil }
            let length = ndefFile.prefix(n).reduce(0) { $0 << 8 | Int($1) }
            guard length <= ndefFile.count - n else { return nil }
            return Array(ndefFile[n..<(n + length)])
        }
    }

    public var type: TagType
    public var activation: ISO14443AActivation
    /// GET_VERSION answer (8 bytes) the file records, if any.
    public var getVersion: [UInt8]?
    /// READ_SIG answer (32 bytes), if any.
    public var signature: [UInt8]?
    /// Type 2 memory image, 4 bytes a page, page 0 first (empty for Type 4).
    public var pages: [[UInt8]]
    /// Type 4 contents (`nil` for Type 2).
    public var type4: Type4Contents?
    /// A FeliCa card (``TagType/isFeliCa``): IDm, PMm, systems, services and blocks; `nil`
    /// otherwise. Such a file has no ISO/IEC 14443-A activation: ``activation`` is
    /// ``TagFile/noTypeAActivation`` and no device shows it.
    public var feliCa: FeliCaCore?
    /// An ISO/IEC 15693 tag (``TagType/isISO15693``): UID, DSFID, AFI, IC reference, blocks and
    /// lock bits; `nil` otherwise. ``activation`` is ``TagFile/noTypeAActivation``.
    public var iso15693: ISO15693Core?
    /// Scheduled transport faults.
    public var faults: [TagFault]
    /// A free comment (our format's `comment`).
    public var comment: String?
    /// Where the file came from.
    public var source: SourceFormat
    /// What the loader assumed or repaired (missing ATQA, padded pages, byte order), for people.
    public var notes: [String]
    /// Type 2 pages the file says were not read (a Flipper `Pages read` below `Pages total`,
    /// our JSON's `unread_pages`), ascending. Their bytes in ``pages`` are placeholders
    /// `00 00 00 00`, not the tag's: emulation answers them (as a real NTAG answers PWD and
    /// PACK, which no reader can read), `tag show` reports them, and ``restorablePages``
    /// leaves them out, so nothing writes them back to a tag.
    public var unreadPages: [Int] = []
    /// Type 2: frames the tag answers its own way, whatever its datasheet says (our JSON's
    /// `answers`, ``Type2FrameAnswer``); ``makeCore()`` gives them to the core, so every
    /// device answers them alike.
    public var frameAnswers: [Type2FrameAnswer] = []

    /// The ``activation`` of a FeliCa or ISO 15693 file, which has none (4 zero bytes, ATQA
    /// `00 00`, SAK `00`): a placeholder no device presents (they present ``feliCa`` or
    /// ``iso15693``).
    public static let noTypeAActivation = try! ISO14443AActivation(uid: [0, 0, 0, 0], atqa: [0, 0], sak: 0)

    public init(
        type: TagType, activation: ISO14443AActivation, getVersion: [UInt8]? = nil, signature: [UInt8]? = nil,
        pages: [[UInt8]] = [], type4: Type4Contents? = nil, faults: [TagFault] = [], comment: String? = nil,
        source: SourceFormat = .nfcbench, notes: [String] = []
    ) {
        self.type = type
        self.activation = activation
        self.getVersion = getVersion
        self.signature = signature
        self.pages = pages
        self.type4 = type4
        self.faults = faults
        self.comment = comment
        self.source = source
        self.notes = notes
    }

    // MARK: Loading

    /// Parses the bytes of a tag file (``parse(_:)``); every error names `file` (`NFCFiles`'
    /// `TagFile.load(path:)` reads the file and calls this).
    public static func parse(bytes: [UInt8], file: String?) throws(TagFileError) -> TagFile {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw TagFileError(.syntax, file: file, "not UTF-8 text")
        }
        do { return try parse(text) } catch { throw file.map { error.inFile($0) } ?? error }
    }

    /// Parses tag-file text: Flipper `.nfc` when it starts with `Filetype: Flipper NFC device`,
    /// otherwise JSON: ours (`"format": "nfcbench-tag"`) or a Proxmark3 dump (`"FileType": "mfu"`).
    public static func parse(_ text: String) throws(TagFileError) -> TagFile {
        let trimmed = text.drop { $0.isWhitespace }
        if trimmed.hasPrefix("Filetype:") { return try parseFlipper(text) }
        guard trimmed.hasPrefix("{") else {
            throw TagFileError(.unrecognizedFormat, "not a Flipper .nfc file and not JSON")
        }
        let data = Data(text.utf8)
        let tree = try DataFile.parse(data, file: nil)
        guard let object = tree as? [String: Any] else {
            throw TagFileError(.syntax, "top level is not a JSON object")
        }
        if object["format"] as? String == "nfcbench-tag" { return try parseOurs(data, tree: tree) }
        if object["FileType"] as? String == "mfu" { return try parseProxmark3(JSONFields(object)) }
        if let t = object["FileType"] as? String {
            throw TagFileError(.unsupported, field: "FileType", "Proxmark3 dump of type \"\(t)\"; only \"mfu\" is read")
        }
        throw TagFileError(
            .unrecognizedFormat, field: "format", "JSON without \"format\": \"nfcbench-tag\" or \"FileType\": \"mfu\"")
    }

    // MARK: Our JSON

    /// Our JSON through its `Decodable` shape (``TagFileJSON``), then the checks it shares
    /// with the other formats (UID length, ATQA, page count).
    private static func parseOurs(_ data: Data, tree: Any) throws(TagFileError) -> TagFile {
        let j = try DataFile.decode(TagFileJSON.self, from: data, tree: tree, file: nil)
        if j.type.isFeliCa || j.type.isISO15693 {
            var file = TagFile(
                type: j.type, activation: noTypeAActivation, faults: j.faults, comment: j.comment, source: .nfcbench)
            file.feliCa = j.feliCa
            file.iso15693 = j.iso15693
            return file
        }
        var file = TagFile(
            type: j.type, activation: try makeActivation(uid: j.uid, atqa: j.atqa, sak: j.sak, ats: j.ats),
            getVersion: j.getVersion, signature: j.signature, type4: j.type4, faults: j.faults, comment: j.comment,
            source: .nfcbench)
        if j.type4 == nil && !j.type.isSensedOnly {
            file.pages = try checkPages(j.pages, type: j.type, field: "pages", notes: &file.notes)
            guard j.unreadPages.allSatisfy(file.pages.indices.contains) else {
                throw TagFileError(
                    .invalidValue, field: "unread_pages", "expected page numbers 0 to \(file.pages.count - 1)")
            }
            file.unreadPages = Array(Set(j.unreadPages)).sorted()
            file.frameAnswers = j.answers
        }
        return file
    }

    // MARK: Proxmark3

    private static func parseProxmark3(_ j: JSONFields) throws(TagFileError) -> TagFile {
        guard let card = j.raw["Card"] as? [String: Any] else {
            throw TagFileError(.missingField, field: "Card", "Proxmark3 mfu dump without \"Card\"")
        }
        let c = JSONFields(card, prefix: "Card.")
        let uid = try c.hex("UID")
        let version = try c.optionalHex("Version", count: 8)
        guard let blocks = j.raw["blocks"] as? [String: Any] else {
            throw TagFileError(.missingField, field: "blocks", "Proxmark3 mfu dump without \"blocks\"")
        }
        guard blocks.count <= Self.maximumPages else {
            throw TagFileError(.invalidValue, field: "blocks", "\(blocks.count) blocks; at most \(Self.maximumPages)")
        }
        var pages: [[UInt8]] = []
        while let item = blocks[String(pages.count)] {
            guard let s = item as? String, let p = [UInt8](hex: s), p.count == 4 else {
                throw TagFileError(.invalidValue, field: "blocks.\(pages.count)", "expected 4 bytes of hex")
            }
            pages.append(p)
        }
        guard pages.count == blocks.count else {
            throw TagFileError(
                .invalidValue, field: "blocks", "keys are not \"0\"..\"\(blocks.count - 1)\" without gaps")
        }
        var notes: [String] = []
        let type = try type2Type(version: version, pageCount: pages.count, field: "Card.Version")
        let atqa = try c.optionalHex("ATQA", count: 2).map { wireOrderATQA($0, notes: &notes) }
        let sak = try c.optionalHex("SAK", count: 1)?[0]
        if atqa == nil || sak == nil { notes.append("dump records no ATQA/SAK; assumed 00 44 / 00 (NXP Type 2)") }
        var file = TagFile(
            type: type, activation: try makeActivation(uid: uid, atqa: atqa ?? [0x44, 0x00], sak: sak ?? 0, ats: nil),
            getVersion: version, signature: try c.optionalHex("Signature", count: 32),
            source: .proxmark3, notes: notes)
        file.pages = try checkPages(pages, type: type, field: "blocks", notes: &file.notes)
        return file
    }

    // MARK: Flipper Zero

    /// The most pages a Type 2 tag file may declare (NTAG216 has 231; NTAG I2C plus 2k 485).
    static let maximumPages = 1024

    private static func parseFlipper(_ text: String) throws(TagFileError) -> TagFile {
        var values: [String: (value: String, line: Int)] = [:]
        var pageLines: [Int: (bytes: [UInt8], line: Int)] = [:]
        // Character.isNewline also splits "\r\n" (one Character in Swift): CRLF files read too.
        for (i, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let colon = line.firstIndex(of: ":") else {
                throw TagFileError(.syntax, line: i + 1, "expected \"key: value\", got \"\(line)\"")
            }
            let key = String(line[..<colon])
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if key.hasPrefix("Page ") {
                guard let n = Int(key.dropFirst(5)), (0..<Self.maximumPages).contains(n) else {
                    throw TagFileError(
                        .invalidValue, field: key, line: i + 1, "page numbers run from 0 to \(Self.maximumPages - 1)")
                }
                guard let bytes = [UInt8](hex: value), bytes.count == 4 else {
                    throw TagFileError(.invalidValue, field: key, line: i + 1, "expected 4 hex bytes, got \"\(value)\"")
                }
                if let earlier = pageLines[n] {
                    throw TagFileError(
                        .invalidValue, field: key, line: i + 1, "page \(n) is already given on line \(earlier.line)")
                }
                pageLines[n] = (bytes, i + 1)
            } else {
                values[key] = (value, i + 1)
            }
        }
        func required(_ key: String) throws(TagFileError) -> (value: String, line: Int) {
            guard let v = values[key] else {
                throw TagFileError(.missingField, field: key, "Flipper file has no \"\(key)\" line")
            }
            return v
        }
        func hex(_ key: String, count: Int? = nil) throws(TagFileError) -> [UInt8]? {
            guard let (v, line) = values[key] else { return nil }
            guard let b = [UInt8](hex: v), count == nil || b.count == count else {
                throw TagFileError(
                    .invalidValue, field: key, line: line,
                    "expected \(count.map { "\($0) " } ?? "")hex bytes, got \"\(v)\"")
            }
            return b
        }
        let filetype = try required("Filetype")
        guard filetype.value == "Flipper NFC device" else {
            throw TagFileError(.unrecognizedFormat, field: "Filetype", line: filetype.line, "\"\(filetype.value)\"")
        }
        let fv = try required("Version")
        guard let formatVersion = Int(fv.value), (2...4).contains(formatVersion) else {
            throw TagFileError(
                .unsupported, field: "Version", line: fv.line,
                "Flipper format version \(fv.value); read: 2 (3 and 4 tolerated)")
        }
        var device = try required("Device type")
        if device.value == "NTAG/Ultralight", let sub = values["NTAG/Ultralight type"] { device = sub }
        let type: TagType
        switch device.value {
        case "NTAG213": type = .ntag213
        case "NTAG215": type = .ntag215
        case "NTAG216": type = .ntag216
        case "Mifare Ultralight", "Ultralight": type = .ultralight
        case "Mifare Ultralight C", "Ultralight C": type = .ultralightC
        case "Mifare Ultralight 11", "Mifare Ultralight 21", "Ultralight 11", "Ultralight 21": type = .ultralightEV1
        default:
            throw TagFileError(
                .unsupported, field: "Device type", line: device.line,
                "\"\(device.value)\"; read: NTAG213/215/216, Mifare Ultralight (C, 11, 21)")
        }
        var notes: [String] = []
        guard let uid = try hex("UID") else {
            throw TagFileError(.missingField, field: "UID", "Flipper file has no \"UID\" line")
        }
        guard let atqaRaw = try hex("ATQA", count: 2) else {
            throw TagFileError(.missingField, field: "ATQA", "no \"ATQA\" line")
        }
        guard let sak = try hex("SAK", count: 1) else {
            throw TagFileError(.missingField, field: "SAK", "no \"SAK\" line")
        }
        let atqa = wireOrderATQA(atqaRaw, notes: &notes)
        let activation: ISO14443AActivation
        do { activation = try ISO14443AActivation(uid: uid, atqa: atqa, sak: sak[0]) } catch {
            throw TagFileError(.invalidValue, field: "UID", line: values["UID"]?.line, error.description)
        }
        let total = try required("Pages total")
        guard let pageTotal = Int(total.value), (4...Self.maximumPages).contains(pageTotal) else {
            throw TagFileError(
                .invalidValue, field: "Pages total", line: total.line,
                "\"\(total.value)\"; a Type 2 tag has 4 to \(Self.maximumPages) pages")
        }
        // "Pages read" below "Pages total": the Flipper could not read the rest (PWD and PACK,
        // or pages behind AUTH0) and lists them as 00. They are unknown, not zero.
        var pagesRead = pageTotal
        if let read = values["Pages read"] {
            guard let n = Int(read.value), (0...pageTotal).contains(n) else {
                throw TagFileError(
                    .invalidValue, field: "Pages read", line: read.line, "\"\(read.value)\"; 0 to \(pageTotal)")
            }
            pagesRead = n
        }
        var pages: [[UInt8]] = []
        var unread: [Int] = []
        for n in 0..<pageTotal {
            if n >= pagesRead || pageLines[n] == nil {
                if n < 4 { throw TagFileError(.missingField, field: "Page \(n)", "pages 0-3 are required") }
                unread.append(n)
                pages.append([0, 0, 0, 0])
            } else if let p = pageLines[n] {
                pages.append(p.bytes)
            }
        }
        if let first = unread.first {
            let range = unread.count == 1 ? "page \(first)" : "pages \(first)-\(unread.last ?? first)"
            notes.append(
                "\(range) (\(unread.count) of \(pageTotal)) not read by the Flipper (\"Pages read: \(pagesRead)\"): "
                    + "unknown, held as 00 00 00 00; emulation answers that, write/restore never writes them")
        }
        if let extra = pageLines.keys.filter({ $0 >= pageTotal }).min() {
            throw TagFileError(
                .invalidValue, field: "Page \(extra)", line: pageLines[extra]?.line,
                "page beyond \"Pages total: \(pageTotal)\"")
        }
        var file = TagFile(
            type: type, activation: activation, getVersion: try hex("Mifare version", count: 8),
            signature: try hex("Signature", count: 32), source: .flipper, notes: notes)
        file.pages = try checkPages(pages, type: type, field: "Pages total", notes: &file.notes)
        file.unreadPages = unread
        return file
    }

    // MARK: Shared checks

    private static func makeActivation(uid: [UInt8], atqa: [UInt8], sak: UInt8, ats: [UInt8]?) throws(TagFileError)
        -> ISO14443AActivation
    {
        do { return try ISO14443AActivation(uid: uid, atqa: atqa, sak: sak, ats: ats) } catch {
            throw TagFileError(
                .invalidValue, field: error == .atqaLength(atqa.count) ? "atqa" : "uid", error.description)
        }
    }

    private static func type2Type(version: [UInt8]?, pageCount: Int, field: String) throws(TagFileError) -> TagType {
        if let version, let product = (try? TagVersion(bytes: version))?.product {
            switch product {
            case .ntag213, .ntag213TT: return .ntag213
            case .ntag215: return .ntag215
            case .ntag216: return .ntag216
            case .ultralightEV1MF0UL11, .ultralightEV1MF0UL21: return .ultralightEV1
            default:
                throw TagFileError(.unsupported, field: field, "\(product.displayName) is not emulated")
            }
        }
        if pageCount == 16 { return .ultralight }
        if pageCount == 48 { return .ultralightC }  // MF0ICU2: no GET_VERSION, 48 pages
        throw TagFileError(
            .unsupported, field: field, "no known GET_VERSION and \(pageCount) pages: cannot tell the tag type")
    }

    /// ATQA in wire order. ISO/IEC 14443-3 §6.5.2.1: the first byte on the wire carries the
    /// bit-frame anticollision bits b5–b1, exactly one of them set. Files that store ATQA
    /// as a number (`00 44`) are turned round; when both orders qualify, the file's is kept.
    static func wireOrderATQA(_ b: [UInt8], notes: inout [String]) -> [UInt8] {
        func plausible(_ first: UInt8) -> Bool { (first & 0x1F).nonzeroBitCount == 1 }
        if !plausible(b[0]) && plausible(b[1]) {
            notes.append(
                "ATQA \(b.hexString(separator: " ")) read as a number; wire order \([b[1], b[0]].hexString(separator: " "))"
            )
            return [b[1], b[0]]
        }
        return b
    }

    private static func checkPages(_ pages: [[UInt8]], type: TagType, field: String, notes: inout [String])
        throws(TagFileError) -> [[UInt8]]
    {
        guard let variant = type.type2Variant(pageCount: pages.count) else { return pages }
        let total = variant.layout.totalPages
        guard pages.count <= total else {
            throw TagFileError(.invalidValue, field: field, "\(pages.count) pages; \(variant.rawValue) has \(total)")
        }
        guard pages.count >= 4 else {
            throw TagFileError(.invalidValue, field: field, "\(pages.count) pages; at least pages 0-3 are needed")
        }
        if pages.count < total {
            notes.append("\(total - pages.count) pages missing after page \(pages.count - 1); filled with 00")
            return pages + [[UInt8]](repeating: [0, 0, 0, 0], count: total - pages.count)
        }
        return pages
    }

    // MARK: Restoring

    /// The Type 2 pages a restore may write back to a tag, in order: pages 2 and on (0–1 hold
    /// the UID, read-only on every NTAG/Ultralight), without ``unreadPages``, whose bytes
    /// are placeholders and would, for PWD, set a password of 00 00 00 00.
    public var restorablePages: [(page: Int, bytes: [UInt8])] {
        let unread = Set(unreadPages)
        return pages.indices.filter { $0 >= 2 && !unread.contains($0) }.map { ($0, pages[$0]) }
    }

    // MARK: Emulation

    /// An emulation core holding this file's Type 2 image and signature; throws
    /// `.unsupported` for a Type 4 file, `.invalidValue` when the image does not fit.
    public func makeCore() throws(TagFileError) -> NTAG21xCore {
        guard let variant = type.type2Variant(pageCount: pages.count) else {
            throw TagFileError(.unsupported, field: "type", "a Type 4 file has no Type 2 memory image")
        }
        do {
            var core = try NTAG21xCore(
                variant: variant, pages: pages, signature: signature ?? [UInt8](repeating: 0, count: 32))
            core.frameAnswers = frameAnswers
            return core
        } catch {
            throw TagFileError(.invalidValue, field: "pages", error.description)
        }
    }

    /// The T4T NDEF application core serving this Type 4 file's NDEF file exactly as stored
    /// (padded with zeros to the maximum size; a lying NLEN stays a lying NLEN) behind a CC
    /// built from the file's mapping version, maximum size, access and file id. Throws
    /// `.unsupported` for a Type 2 file and `.invalidValue` when the CC can't hold the values.
    public func makeType4Core() throws(TagFileError) -> Type4NDEFApplication {
        guard let t4 = type4 else {
            throw TagFileError(.unsupported, field: "type", "a Type 2 file has no NDEF application")
        }
        guard t4.fileID.count == 2 else { throw TagFileError(.invalidValue, field: "file_id", "needs 2 bytes") }
        let version: UInt8 = t4.mappingVersion.hasPrefix("3") ? 0x30 : t4.mappingVersion.hasPrefix("1") ? 0x10 : 0x20
        let fileID = UInt16(t4.fileID[0]) << 8 | UInt16(t4.fileID[1])
        let cc: Type4CapabilityContainer
        do {
            cc = try Type4CapabilityContainer(
                mappingVersion: version, maximumReadLength: 0xFF, maximumWriteLength: 0xFF, ndefFileID: fileID,
                maximumNDEFFileSize: t4.maximumNDEFFileSize, writeAccess: t4.readOnly ? 0xFF : 0x00,
                extendedFile: t4.lengthFieldSize == 4)
        } catch {
            // Mapping 3.0 files carry a 4-byte ENLEN: their CC needs the ENDEF File Control
            // TLV, which T4T 3.0 allows only for files of FFFF bytes or more.
            let hint =
                t4.lengthFieldSize == 4 && t4.maximumNDEFFileSize < 0xFFFF
                ? "; a mapping 3.0 file starts with a 4-byte ENLEN, whose ENDEF File Control TLV needs a file of at least 65535 bytes (use mapping 2.0 for a smaller one)"
                : ""
            throw TagFileError(.invalidValue, field: "max_ndef_file_size", "\(error)" + hint)
        }
        var file = t4.ndefFile
        if file.count < t4.maximumNDEFFileSize {
            file += [UInt8](repeating: 0, count: t4.maximumNDEFFileSize - file.count)
        }
        return Type4NDEFApplication(
            rawCapabilityContainer: cc.bytes, ndefFileID: fileID, ndefFile: file, mappingVersion: version,
            readOnly: t4.readOnly, lengthFieldSize: t4.lengthFieldSize)
    }

    // MARK: Saving

    /// Our JSON (`hardware/tags/FORMAT.md`), one page a line.
    public func jsonText() -> String {
        func q(_ s: String) -> String {
            var out = "\""
            for u in s.unicodeScalars {
                switch u {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case _ where u.value < 0x20: out += String(format: "\\u%04x", u.value)
                default: out.unicodeScalars.append(u)
                }
            }
            return out + "\""
        }
        var lines: [String] = ["  \"format\": \"nfcbench-tag\"", "  \"version\": 1", "  \"type\": \(q(type.rawValue))"]
        if let comment { lines.append("  \"comment\": \(q(comment))") }
        if let f = feliCa {
            lines.append("  \"idm\": \(q(f.systems.first?.idm.hexString() ?? ""))")
            lines.append("  \"pmm\": \(q(f.pmm.hexString()))")
            lines.append("  \"max_read_blocks\": \(f.maximumReadBlocks)")
            lines.append("  \"max_write_blocks\": \(f.maximumWriteBlocks)")
            lines.append("  \"request_response\": \(f.answersRequestResponse)")
            let systems = f.systems.map { s in
                "    {\"code\": \(q(String(format: "%04X", s.code))), \"services\": ["
                    + s.services.map { q(String(format: "%04X", $0.code)) }.joined(separator: ", ")
                    + "], \"blocks\": [\n"
                    + s.blocks.map { "      \(q($0.hexString()))" }.joined(separator: ",\n") + "\n    ]}"
            }
            lines.append("  \"systems\": [\n" + systems.joined(separator: ",\n") + "\n  ]")
        } else if let v = iso15693 {
            lines.append("  \"uid\": \(q(v.uid.hexString()))")
            lines.append("  \"dsfid\": \(q([v.dsfid].hexString()))")
            lines.append("  \"afi\": \(q([v.afi].hexString()))")
            lines.append("  \"ic_reference\": \(q([v.icReference].hexString()))")
            lines.append("  \"block_size\": \(v.blockSize)")
            lines.append(
                "  \"blocks\": [\n" + v.blocks.map { "    \(q($0.hexString()))" }.joined(separator: ",\n") + "\n  ]")
            if !v.lockedBlocks.isEmpty {
                lines.append(
                    "  \"locked_blocks\": [\(v.lockedBlocks.sorted().map(String.init).joined(separator: ", "))]")
            }
        } else {
            lines.append("  \"uid\": \(q(activation.uid.hexString()))")
            lines.append("  \"atqa\": \(q(activation.atqa.hexString()))")
            lines.append("  \"sak\": \(q([activation.sak].hexString()))")
            if let ats = activation.ats { lines.append("  \"ats\": \(q(ats.hexString()))") }
        }
        if let getVersion { lines.append("  \"get_version\": \(q(getVersion.hexString()))") }
        if let signature { lines.append("  \"signature\": \(q(signature.hexString()))") }
        if let t4 = type4 {
            lines.append("  \"ndef_file\": \(q(t4.ndefFile.hexString()))")
            lines.append("  \"max_ndef_file_size\": \(t4.maximumNDEFFileSize)")
            lines.append("  \"mapping_version\": \(q(t4.mappingVersion))")
            lines.append("  \"read_only\": \(t4.readOnly)")
            lines.append("  \"file_id\": \(q(t4.fileID.hexString()))")
        } else if !type.isSensedOnly && type.isType2 {
            lines.append(
                "  \"pages\": [\n" + pages.map { "    \(q($0.hexString()))" }.joined(separator: ",\n") + "\n  ]")
            if !unreadPages.isEmpty {
                lines.append("  \"unread_pages\": [\(unreadPages.map(String.init).joined(separator: ", "))]")
            }
        }
        if !frameAnswers.isEmpty {
            lines.append(
                "  \"answers\": [\n"
                    + frameAnswers.map {
                        "    {\"frame\": \(q($0.frame.hexString())), \"answer\": \(q($0.answerText))}"
                    }.joined(separator: ",\n") + "\n  ]")
        }
        if !faults.isEmpty {
            lines.append(
                "  \"faults\": [\n"
                    + faults.map {
                        "    {" + $0.jsonFields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}"
                    }.joined(separator: ",\n") + "\n  ]")
        }
        return "{\n" + lines.joined(separator: ",\n") + "\n}\n"
    }
}

/// Typed access to one JSON object's fields, with the field name in every error.
private struct JSONFields {
    let raw: [String: Any]
    let prefix: String

    init(_ raw: [String: Any], prefix: String = "") {
        self.raw = raw
        self.prefix = prefix
    }

    func string(_ key: String) throws(TagFileError) -> String {
        guard let v = raw[key] else { throw TagFileError(.missingField, field: prefix + key, "required") }
        guard let s = v as? String else { throw TagFileError(.invalidValue, field: prefix + key, "expected a string") }
        return s
    }

    func hex(_ key: String, count: Int? = nil) throws(TagFileError) -> [UInt8] {
        let s = try string(key)
        guard let b = [UInt8](hex: s) else {
            throw TagFileError(.invalidValue, field: prefix + key, "\"\(s)\" is not hex")
        }
        if let count, b.count != count {
            throw TagFileError(.invalidValue, field: prefix + key, "expected \(count) bytes, got \(b.count)")
        }
        return b
    }

    func optionalHex(_ key: String, count: Int? = nil) throws(TagFileError) -> [UInt8]? {
        raw[key] == nil ? nil : try hex(key, count: count)
    }
}
