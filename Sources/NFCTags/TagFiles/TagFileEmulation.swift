// The one way from a tag file to a device: every transport and `tag show` build the
// emulation core here, so a file that `tag show` accepts is a file every device presents.

extension TagFile {
    /// The emulation core that serves a tag file: the same value on every device.
    public enum EmulationCore: Sendable {
        /// An NTAG21x / Ultralight memory image (``makeCore()``).
        case type2(NTAG21xCore)
        /// A T4T NDEF Tag Application (``makeType4Core()``).
        case type4(Type4NDEFApplication)
        /// A card readers sense but this package does not read (MIFARE Classic): no core.
        case sensedOnly
        /// A FeliCa card (``TagFile/feliCa``).
        case feliCa(FeliCaCore)
        /// An ISO/IEC 15693 tag (``TagFile/iso15693``).
        case iso15693(ISO15693Core)
    }

    /// Checks the file against what a tag can be and builds its emulation core: the Type 2
    /// image must fit the product's memory map; the Type 4 values must fit a CC of the file's
    /// mapping version (a mapping 3.0 file has a 4-byte ENLEN, so its file needs an ENDEF
    /// File Control TLV, which T4T 3.0 allows only from FFFF bytes).
    ///
    /// The in-process simulator, the conformance reader, the virtual PN532, the vpcd card
    /// and `tag show` all call this, and report its error; none of them drops it.
    /// - Throws: ``TagFileError`` `.unsupported` or `.invalidValue`, naming the field.
    public func makeEmulationCore() throws(TagFileError) -> EmulationCore {
        if type.isSensedOnly { return .sensedOnly }
        if type.isFeliCa {
            guard let feliCa else {
                throw TagFileError(.missingField, field: "systems", "a FeliCa file without systems")
            }
            return .feliCa(feliCa)
        }
        if type.isISO15693 {
            guard let iso15693 else {
                throw TagFileError(.missingField, field: "blocks", "an ISO 15693 file without blocks")
            }
            return .iso15693(iso15693)
        }
        if type == .type4 { return .type4(try makeType4Core()) }
        return .type2(try makeCore())
    }
}

// One UID per tag file: what every device shows a reader.
extension TagFile {
    /// The activation a reader sees (anticollision, SELECT, `FF CA`, the trace, `tag show`):
    /// the file's, except that a Type 2 tag's UID is the one in its pages 0–2, because a real
    /// tag answers anticollision and a PC/SC reader's `FF CA` from that memory. A file whose
    /// header UID differs (a Flipper dump whose pages were edited, for instance) is served with
    /// the pages' UID, and ``uidMismatch`` says so.
    public var readerActivation: ISO14443AActivation {
        guard let pagesUID, pagesUID != activation.uid,
            let a = try? ISO14443AActivation(
                uid: pagesUID, atqa: activation.atqa, sak: activation.sak, ats: activation.ats)
        else { return activation }
        return a
    }

    /// What a reader shows as the tag's identifier: a FeliCa card's IDm (its first system's),
    /// an ISO 15693 tag's UID (big-endian), else ``readerActivation``'s UID.
    public var identifier: [UInt8] {
        feliCa?.systems.first?.idm ?? iso15693?.uid ?? readerActivation.uid
    }

    /// The UID in pages 0–2 of a Type 2 file (bytes 0–2 and 4–7), `nil` for other files.
    public var pagesUID: [UInt8]? {
        guard type.isType2, pages.count >= 3 else { return nil }
        return try? ISO14443AActivation.type2UID(fromPages: pages.prefix(3).flatMap { $0 }).uid
    }

    /// One line when the header UID and the pages' differ, saying that readers see the pages'.
    public var uidMismatch: String? {
        guard let pagesUID, pagesUID != activation.uid else { return nil }
        return "header UID \(activation.uid.hexString(separator: " ")) differs from pages 0-2 UID "
            + pagesUID.hexString(separator: " ") + "; readers see the pages' UID"
    }
}

extension TagFile {
    /// This file with a device's memory as it is now (a Type 2 core's pages, or a Type 4
    /// application's NDEF file): what a virtual tag holds after a reader wrote to it. A page a
    /// reader changed is known now; the file's other unread pages stay unknown.
    public func withMemory(type2 core: NTAG21xCore?, type4 app: Type4NDEFApplication?) -> TagFile {
        var out = self
        if let core {
            out.pages = core.pages
            out.unreadPages = unreadPages.filter { core.pages.indices.contains($0) && core.pages[$0] == pages[$0] }
        }
        if let app, var t4 = out.type4 {
            t4.ndefFile = app.ndefFile
            out.type4 = t4
        }
        return out
    }
}

extension TagFile {
    /// This file with a FeliCa card's or an ISO 15693 tag's memory as it is now (after a
    /// reader wrote to it).
    public func withMemory(feliCa core: FeliCaCore?, iso15693 tag: ISO15693Core?) -> TagFile {
        var out = self
        if let core, out.feliCa != nil {
            // Keep which system the card selected out of the file: only the memory matters.
            out.feliCa?.systems = core.systems
        }
        if let tag, out.iso15693 != nil {
            out.iso15693?.blocks = tag.blocks
            out.iso15693?.lockedBlocks = tag.lockedBlocks
            out.iso15693?.afi = tag.afi
            out.iso15693?.dsfid = tag.dsfid
        }
        return out
    }
}
