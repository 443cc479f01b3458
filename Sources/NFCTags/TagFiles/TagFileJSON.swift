/// Our tag JSON (`hardware/tags/FORMAT.md`, `"format": "nfcbench-tag"`, version 1) as the
/// file holds it, decoded by the data files' rule (``DataFile``). ``TagFile/parse(_:)``
/// checks the activation data and pads the pages.
struct TagFileJSON: Decodable {
    var type: TagFile.TagType
    var comment: String?
    var uid: [UInt8]
    var atqa: [UInt8]
    var sak: UInt8
    var ats: [UInt8]?
    var getVersion: [UInt8]?
    var signature: [UInt8]?
    /// Type 2 only.
    var pages: [[UInt8]] = []
    /// Type 2 only: pages the reader that made the file could not read (PWD/PACK).
    var unreadPages: [Int] = []
    /// Type 4 only.
    var type4: TagFile.Type4Contents?
    var faults: [TagFault]
    /// Type 2 only: frames the tag answers its own way (``Type2FrameAnswer``).
    var answers: [Type2FrameAnswer] = []
    /// FeliCa only.
    var feliCa: FeliCaCore?
    /// ISO 15693 only.
    var iso15693: ISO15693Core?

    enum CodingKeys: String, CodingKey {
        case version, type, comment, uid, atqa, sak, ats, signature, pages, faults, answers
        case getVersion = "get_version"
        case ndefFile = "ndef_file"
        case maxNDEFFileSize = "max_ndef_file_size"
        case mappingVersion = "mapping_version"
        case readOnly = "read_only"
        case fileID = "file_id"
        case unreadPages = "unread_pages"
        case idm, pmm, systems, dsfid, afi, blocks
        case maxReadBlocks = "max_read_blocks"
        case maxWriteBlocks = "max_write_blocks"
        case requestResponse = "request_response"
        case icReference = "ic_reference"
        case blockSize = "block_size"
        case lockedBlocks = "locked_blocks"
    }

    /// One entry of a FeliCa file's `systems`.
    struct FeliCaSystemJSON: Decodable {
        var code: UInt16
        var services: [UInt16]
        var blocks: [[UInt8]]
        enum CodingKeys: String, CodingKey { case code, services, blocks }
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let code = try c.decodeHex(.code, count: 2)
            guard code[0] != 0xFF, code[1] != 0xFF else {
                throw c.dataError(.code, "FF in a system code is Polling's wildcard, not a system")
            }
            self.code = UInt16(code[0]) << 8 | UInt16(code[1])
            services = []
            if c.contains(.services) {
                var list = try c.nestedUnkeyedContainer(forKey: .services)
                while !list.isAtEnd {
                    let at = list.codingPath + [DataFileKey(index: list.currentIndex)]
                    let s = try list.decode(String.self)
                    guard let b = [UInt8](hex: s), b.count == 2 else {
                        throw DataFileError.decodingError(
                            at: at, "expected a 2-byte service code (\"000B\"), got \"\(s)\"")
                    }
                    services.append(UInt16(b[0]) << 8 | UInt16(b[1]))
                }
            } else {
                services = [0x000B, 0x0009]
            }
            blocks = try TagFileJSON.decodeBlocks(c, .blocks, size: 16, maximum: 0xFFFF)
        }
    }

    /// A list of hex strings of `size` bytes each.
    static func decodeBlocks<K: CodingKey>(_ c: KeyedDecodingContainer<K>, _ key: K, size: Int, maximum: Int) throws
        -> [[UInt8]]
    {
        guard c.contains(key) else { throw c.dataError(key, "missing", code: .missingField) }
        var list = try c.nestedUnkeyedContainer(forKey: key)
        if let n = list.count, n > maximum { throw c.dataError(key, "\(n) blocks; at most \(maximum)") }
        var out: [[UInt8]] = []
        while !list.isAtEnd {
            let at = list.codingPath + [DataFileKey(index: list.currentIndex)]
            let s = try list.decode(String.self)
            guard let b = [UInt8](hex: s), b.count == size else {
                throw DataFileError.decodingError(at: at, "expected \(size) bytes of hex, got \"\(s)\"")
            }
            out.append(b)
        }
        guard !out.isEmpty else { throw c.dataError(key, "no blocks") }
        return out
    }

    /// A FeliCa file: `idm`, `pmm`, `systems`, optional Check/Update limits and Request Response.
    private mutating func decodeFeliCa(_ c: KeyedDecodingContainer<CodingKeys>) throws {
        for key in [CodingKeys.atqa, .sak, .ats, .pages, .ndefFile, .blockSize] where c.contains(key) {
            throw c.dataError(key, "a \(type.rawValue) file has no \(key.stringValue) (it has idm, pmm and systems)")
        }
        let idm = try c.decodeHex(.idm, count: 8)
        let pmm = try c.decodeHex(.pmm, count: 8)
        guard c.contains(.systems) else {
            throw c.dataError(
                .systems, "a FeliCa card needs \"systems\": [{\"code\": \"12FC\", ...}]", code: .missingField)
        }
        let systems = try c.decode([FeliCaSystemJSON].self, forKey: .systems)
        guard (1...16).contains(systems.count) else { throw c.dataError(.systems, "1 to 16 systems") }
        let lite = type == .feliCaLiteS
        feliCa = FeliCaCore(
            pmm: pmm,
            systems: systems.enumerated().map { n, s in
                FeliCaCore.System(
                    code: s.code, idm: FeliCaCore.idm(idm, system: n),
                    services: s.services.map(FeliCaCore.Service.init),
                    blocks: s.blocks)
            },
            maximumReadBlocks: try c.ifPresent(.maxReadBlocks) { try c.decodeWholeNumber($0, in: 1...15) }
                ?? (lite ? 4 : 15),
            maximumWriteBlocks: try c.ifPresent(.maxWriteBlocks) { try c.decodeWholeNumber($0, in: 1...13) }
                ?? (lite ? 1 : 13),
            answersRequestResponse: try c.ifPresent(.requestResponse) { try c.decode(Bool.self, forKey: $0) } ?? true)
    }

    /// An ISO 15693 file: `uid` (8 bytes, `E0` first), `block_size`, `blocks`, the rest optional.
    private mutating func decodeISO15693(_ c: KeyedDecodingContainer<CodingKeys>) throws {
        for key in [CodingKeys.atqa, .sak, .ats, .pages, .ndefFile, .idm, .pmm, .systems] where c.contains(key) {
            throw c.dataError(
                key, "a \(type.rawValue) file has no \(key.stringValue) (it has uid, block_size and blocks)")
        }
        let uid = try c.decodeHex(.uid, count: 8)
        guard uid[0] == 0xE0 else {
            throw c.dataError(.uid, "an ISO 15693 UID starts with E0 (big-endian, as printed: E0 04 01 ...)")
        }
        let blockSize = try c.decodeWholeNumber(.blockSize, in: 1...32)
        let blocks = try Self.decodeBlocks(c, .blocks, size: blockSize, maximum: 2048)
        var locked: Set<Int> = []
        if c.contains(.lockedBlocks) {
            var list = try c.nestedUnkeyedContainer(forKey: .lockedBlocks)
            while !list.isAtEnd {
                let at = list.codingPath + [DataFileKey(index: list.currentIndex)]
                let v = try list.decode(Double.self)
                guard v == v.rounded(), v >= 0, v < Double(blocks.count) else {
                    throw DataFileError.decodingError(
                        at: at, "expected a block number 0 to \(blocks.count - 1), found \(v)")
                }
                locked.insert(Int(v))
            }
        }
        func byte(_ k: CodingKeys) throws -> UInt8 { try c.ifPresent(k) { try c.decodeHex($0, count: 1)[0] } ?? 0 }
        iso15693 = ISO15693Core(
            uid: uid, dsfid: try byte(.dsfid), afi: try byte(.afi), icReference: try byte(.icReference),
            blockSize: blockSize, blocks: blocks, lockedBlocks: locked)
    }

    /// `mapping_version`'s values.
    enum MappingVersion: String, CaseIterable {
        case v1 = "1.0"
        case v2 = "2.0"
        case v3 = "3.0"
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let version = try c.decodeWholeNumber(.version, in: 0...Int(Int32.max))
        guard version == 1 else {
            throw c.dataError(.version, "format version \(version); this build reads 1", code: .unsupported)
        }
        type = try c.decodeChoice(TagFile.TagType.self, forKey: .type)
        comment = try c.ifPresent(.comment) { try c.decode(String.self, forKey: $0) }
        if type.isFeliCa || type.isISO15693 {
            uid = []
            atqa = []
            sak = 0
            faults = try c.ifPresent(.faults) { try c.decode([TagFault].self, forKey: $0) } ?? []
            if type.isFeliCa { try decodeFeliCa(c) } else { try decodeISO15693(c) }
            return
        }
        for key in [CodingKeys.idm, .pmm, .systems, .blockSize, .blocks] where c.contains(key) {
            throw c.dataError(key, "only for FeliCa and ISO 15693 files")
        }
        uid = try c.decodeHex(.uid)
        atqa = try c.decodeHex(.atqa, count: 2)
        sak = try c.decodeHex(.sak, count: 1)[0]
        ats = try c.ifPresent(.ats) { try c.decodeHex($0) }
        getVersion = try c.ifPresent(.getVersion) { try c.decodeHex($0, count: 8) }
        signature = try c.ifPresent(.signature) { try c.decodeHex($0, count: 32) }
        faults = try c.ifPresent(.faults) { try c.decode([TagFault].self, forKey: $0) } ?? []

        let type4Keys: [CodingKeys] = [.ndefFile, .maxNDEFFileSize, .mappingVersion, .readOnly, .fileID]
        if type == .type4 {
            if c.contains(.pages) { throw c.dataError(.pages, "a type4 tag has no pages (it has ndef_file)") }
            if c.contains(.unreadPages) {
                throw c.dataError(.unreadPages, "a type4 tag has no pages (it has ndef_file)")
            }
            if c.contains(.answers) { throw c.dataError(.answers, "only for Type 2 files") }
            let ndef = try c.decodeHex(.ndefFile)
            let mapping = try c.decodeChoice(MappingVersion.self, forKey: .mappingVersion)
            // T4T 1.0 and 2.0: 0005-FFFE; 3.0 (ENDEF): up to 7FFFFFFF, bounded here at 16 MiB: the
            // emulation cores hold the whole file in memory.
            let maxSize = try c.decodeWholeNumber(.maxNDEFFileSize, in: mapping == .v3 ? 5...(16 << 20) : 5...0xFFFE)
            let contents = TagFile.Type4Contents(
                ndefFile: ndef, maximumNDEFFileSize: maxSize, mappingVersion: mapping.rawValue,
                readOnly: try c.ifPresent(.readOnly) { try c.decode(Bool.self, forKey: $0) } ?? false,
                fileID: try c.ifPresent(.fileID) { try c.decodeHex($0, count: 2) } ?? [0xE1, 0x04])
            guard ndef.count <= maxSize else {
                throw c.dataError(.ndefFile, "\(ndef.count) bytes exceed max_ndef_file_size \(maxSize)")
            }
            guard contents.ndefMessage != nil else { throw c.dataError(.ndefFile, "its length field exceeds the file") }
            type4 = contents
        } else if type.isSensedOnly {
            if let key = (type4Keys + [.pages, .unreadPages, .getVersion, .signature]).first(where: c.contains) {
                throw c.dataError(key, "a \(type.rawValue) file holds no memory image (the card is sensed, never read)")
            }
        } else {
            if let key = type4Keys.first(where: c.contains) {
                throw c.dataError(key, "only for \"type\": \"type4\"")
            }
            answers = try c.ifPresent(.answers) { try c.decode([Type2FrameAnswer].self, forKey: $0) } ?? []
            guard c.contains(.pages) else {
                throw c.dataError(.pages, "a Type 2 tag needs \"pages\": [\"04A23B91\", ...]", code: .missingField)
            }
            var list = try c.nestedUnkeyedContainer(forKey: .pages)
            if let n = list.count, n > TagFile.maximumPages {
                throw c.dataError(.pages, "\(n) pages; at most \(TagFile.maximumPages)")
            }
            while !list.isAtEnd {
                let at = list.codingPath + [DataFileKey(index: list.currentIndex)]
                let s = try list.decode(String.self)
                guard let page = [UInt8](hex: s), page.count == 4 else {
                    throw DataFileError.decodingError(at: at, "expected 4 bytes of hex, got \"\(s)\"")
                }
                pages.append(page)
            }
            if c.contains(.unreadPages) {
                var unread = try c.nestedUnkeyedContainer(forKey: .unreadPages)
                while !unread.isAtEnd {
                    let at = unread.codingPath + [DataFileKey(index: unread.currentIndex)]
                    let v = try unread.decode(Double.self)
                    guard v == v.rounded(), v >= 0, v < Double(TagFile.maximumPages) else {
                        throw DataFileError.decodingError(at: at, "expected a page number, found \(v)")
                    }
                    unreadPages.append(Int(v))
                }
            }
        }
    }
}
