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

    enum CodingKeys: String, CodingKey {
        case version, type, comment, uid, atqa, sak, ats, signature, pages, faults
        case getVersion = "get_version"
        case ndefFile = "ndef_file"
        case maxNDEFFileSize = "max_ndef_file_size"
        case mappingVersion = "mapping_version"
        case readOnly = "read_only"
        case fileID = "file_id"
        case unreadPages = "unread_pages"
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
