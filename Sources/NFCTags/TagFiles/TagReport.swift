/// What `tag show` says about a tag file, found by building the file's emulation core the
/// way every device does (`TagFile.makeEmulationCore()`) and running the real reader
/// procedure against it in memory: ``Type2TagReader`` on the ``NTAG21xCore``,
/// ``Type4TagReader`` on the ``Type4NDEFApplication``. A file no device could present has
/// ``emulationError`` set and nothing read.
///
/// ``ndefMessageBytes`` holds the raw message as the procedure read it; ``ndefMessage`` is
/// the same bytes through `NFCNDEFMessage(bytes:)`, or ``ndefDecodeError`` says why not.
public struct TagReport: Sendable {
    /// A finding a real reader would trip on. Compare by ``kind``.
    public struct Warning: Sendable, Hashable, CustomStringConvertible {
        public enum Kind: String, Sendable, Hashable {
            /// The file's header UID differs from the UID in pages 0–2 (a reader sees the pages').
            case uidMismatch
            /// BCC0 or BCC1 in pages 0–2 does not match the UID bytes.
            case bccMismatch
            /// The tag type (header or GET_VERSION) expects another CC size byte.
            case ccSizeMismatch
            /// The header type and the recorded GET_VERSION answer name different products.
            case typeMismatch
            /// Non-zero bytes in the data area after the Terminator TLV.
            case staleBytesAfterTerminator
            /// AUTH0 puts data-area pages under password protection.
            case auth0ProtectsNDEF
            /// A scheduled fault in the file will interrupt readers.
            case faultsScheduled
            /// A Lock or Memory Control TLV whose length is not 3: skipped by its length.
            case controlTLVLength
            /// Pages the file says were not read: their bytes are unknown (``TagFile/unreadPages``).
            case unreadPages
        }

        public let kind: Kind
        public let message: String
        public var description: String { message }
    }

    /// The file reported on.
    public let file: TagFile
    /// The emulated tag's GET_VERSION answer (through the procedure), `nil` for a plain Ultralight.
    public let version: TagVersion?
    /// The product, from GET_VERSION or else the file's type.
    public let productName: String
    /// The UID a reader sees (pages 0–2 for Type 2; the header for Type 4).
    public let uidOnTag: [UInt8]
    /// Type 2: the CC, the TLV blocks, data-area size and maximum NDEF message size.
    public let layout: Type2TagLayout?
    /// The NDEF message bytes (`nil` when the reader could not read one). Decode with
    /// `NFCNDEFMessage(bytes:)`.
    public let ndefMessageBytes: [UInt8]?
    /// ``ndefMessageBytes`` parsed (`nil` for an empty message, or when parsing failed).
    public var ndefMessage: NFCNDEFMessage? {
        guard let b = ndefMessageBytes, !b.isEmpty else { return nil }
        return try? NFCNDEFMessage(bytes: b)
    }
    /// Why ``ndefMessageBytes`` is not a valid NDEF message, if it is not.
    public var ndefDecodeError: NDEFError? {
        guard let b = ndefMessageBytes, !b.isEmpty else { return nil }
        do {
            _ = try NFCNDEFMessage(bytes: b)
            return nil
        } catch { return error }
    }
    /// Why the Type 2 reader procedure failed, if it did.
    public let readError: Type2TagError?
    /// Type 4: what ``Type4TagReader`` detected, the CC and the application name that
    /// answered (`nil` for Type 2 or when detection failed).
    public let type4Detection: Type4Detection?
    /// Type 4: the CC as the reader detected it.
    public var type4CapabilityContainer: Type4CapabilityContainer? { type4Detection?.capabilityContainer }
    /// Why the Type 4 reader procedure failed, if it did.
    public let type4ReadError: Type4TagError?
    /// Type 3 (FeliCa): the attribute block as ``Type3TagReader`` read it.
    public private(set) var type3Attribute: Type3AttributeInformation? = nil
    /// Why the Type 3 reader procedure failed, if it did.
    public private(set) var type3ReadError: Type3TagError? = nil
    /// Type 5 (ISO 15693): the layout as ``Type5TagReader`` read it.
    public private(set) var type5Layout: Type5TagReader.Layout? = nil
    /// Why the Type 5 reader procedure failed, if it did.
    public private(set) var type5ReadError: Type5TagError? = nil
    /// Why no device could present the file (`TagFile.makeEmulationCore()`'s error, the one a
    /// session, `virtual card` or `virtual pn532` would stop with); nothing was read then.
    public let emulationError: TagFileError?
    public let warnings: [Warning]

    /// `true` when a reader would read the file's NDEF area and it decodes (warnings allowed).
    public var isReadable: Bool {
        emulationError == nil && readError == nil && type4ReadError == nil && ndefDecodeError == nil
            && type3ReadError == nil && type5ReadError == nil && !file.type.isSensedOnly
    }

    /// The data area in bytes (Type 2: 8 × MLEN; Type 4: maximum NDEF file size).
    public var dataAreaSize: Int? {
        layout?.dataAreaSize ?? file.type4?.maximumNDEFFileSize ?? type3Attribute?.maximumNDEFMessageSize
            ?? type5Layout?.capabilityContainer.areaSize
    }

    /// The largest NDEF message the tag can hold (Type 2: ``Type2TagLayout/maximumNDEFMessageSize``;
    /// Type 4: maximum file size minus the NLEN/ENLEN field).
    public var maximumNDEFMessageSize: Int? {
        layout?.maximumNDEFMessageSize ?? file.type4.map { $0.maximumNDEFFileSize - $0.lengthFieldSize }
            ?? type3Attribute?.maximumNDEFMessageSize ?? type5Layout?.maximumNDEFMessageSize
    }

    /// Runs the reader procedure against the file's image and collects warnings.
    public init(file: TagFile) {
        self.file = file
        var warnings: [Warning] = []
        func warn(_ kind: Warning.Kind, _ message: String) { warnings.append(Warning(kind: kind, message: message)) }
        if !file.faults.isEmpty {
            warn(
                .faultsScheduled,
                "\(file.faults.count) scheduled fault\(file.faults.count == 1 ? "" : "s"): "
                    + file.faults.map(\.summary).joined(
                        separator: ", "))
        }

        if !file.unreadPages.isEmpty {
            warn(.unreadPages, Self.unreadPagesMessage(file))
        }

        let built = Result { () throws(TagFileError) in try file.makeEmulationCore() }
        guard case .success(.type2(let core)) = built else {
            version = nil
            productName =
                switch file.type {
                case .type4: "Type 4 Tag"
                case .mifareClassic1K: "MIFARE Classic 1K"
                case .feliCaLiteS: "FeliCa Lite-S"
                case .feliCaStandard: "FeliCa Standard"
                case .icodeSLIX: "ICODE SLIX"
                case .st25tv: "ST25TV"
                default: file.type.rawValue
                }
            uidOnTag = file.feliCa?.systems.first?.idm ?? file.iso15693?.uid ?? file.activation.uid
            layout = nil
            readError = nil
            var detection: Type4Detection? = nil
            var ndef: [UInt8]? = nil
            var failure: Type4TagError? = nil
            switch built {
            case .success(.type4(let app)):
                emulationError = nil
                let reader = Type4TagReader(transport: EmulatedAPDUTransport(core: app))
                do {
                    let detected = try reader.detectApplication()
                    detection = detected
                    ndef = try reader.readNDEF(detection: detected)
                } catch { failure = error }
            case .failure(let error): emulationError = error
            case .success(.type2): emulationError = nil
            case .success(.sensedOnly): emulationError = nil
            case .success(.feliCa(let core)):
                emulationError = nil
                let reader = Type3TagReader(transport: EmulatedFeliCaTransport(card: FaultyFeliCaCore(core: core)))
                do {
                    type3Attribute = try reader.readAttribute().attribute
                    ndef = try reader.readNDEF()
                } catch {
                    // A card with no NDEF system (a transit card) is not an error of the file.
                    if error.code != .noNDEF { type3ReadError = error }
                }
            case .success(.iso15693(let core)):
                emulationError = nil
                let reader = Type5TagReader(transport: EmulatedISO15693Transport(card: FaultyISO15693Core(core: core)))
                do {
                    type5Layout = try reader.readLayout()
                    ndef = try reader.readNDEF()
                } catch { type5ReadError = error }
            }
            type4Detection = detection
            ndefMessageBytes = ndef
            type4ReadError = failure
            self.warnings = warnings
            return
        }
        emulationError = nil
        type4Detection = nil
        type4ReadError = nil

        // Identification from the pages.
        let header = core.pages.prefix(3).flatMap { $0 }
        if let u = try? ISO14443AActivation.type2UID(fromPages: header) {
            uidOnTag = u.uid
            if let mismatch = file.uidMismatch { warn(.uidMismatch, mismatch) }
            if u.storedBCC0 != u.expectedBCC0 {
                warn(
                    .bccMismatch,
                    "BCC0 is \([u.storedBCC0].hexString()), expected \([u.expectedBCC0].hexString()) (88 ⊕ UID0 ⊕ UID1 ⊕ UID2)"
                )
            }
            if u.storedBCC1 != u.expectedBCC1 {
                warn(
                    .bccMismatch,
                    "BCC1 is \([u.storedBCC1].hexString()), expected \([u.expectedBCC1].hexString()) (UID3 ⊕ UID4 ⊕ UID5 ⊕ UID6)"
                )
            }
        } else {
            uidOnTag = file.activation.uid
        }

        // The procedure, as a reader runs it.
        let transport = EmulatedType2Transport(core: core)
        var reader = Type2TagReader(transport: transport)
        var identifyError: Type2TagError? = nil
        let identified: TagVersion?
        do { identified = try reader.identify() } catch {
            identified = nil
            identifyError = error
        }
        version = identified
        productName = identified?.product?.displayName ?? identified?.description ?? core.variant.rawValue
        if let recorded = file.getVersion, let v = try? TagVersion(bytes: recorded), let p = v.product,
            p.layout != core.variant.layout
        {
            warn(.typeMismatch, "file type \(file.type.rawValue) but its GET_VERSION says \(p.displayName)")
        }

        var layout: Type2TagLayout? = nil
        var ndef: [UInt8]? = nil
        var failure: Type2TagError? = nil
        do {
            let l = try reader.readLayout()
            layout = l
            for w in l.warnings { warn(.controlTLVLength, w.message) }
            let expected = core.variant.layout.ccSizeByte
            if l.capabilityContainer.sizeByte != expected {
                warn(
                    .ccSizeMismatch,
                    "\(productName) ships with CC size \([expected].hexString()) (\(Int(expected) * 8) bytes) "
                        + "but the CC says \([l.capabilityContainer.sizeByte].hexString()) (\(l.dataAreaSize) bytes)")
            }
            if let t = l.terminator {
                let area = try reader.readDataArea()
                let reserved = l.reservedAreas
                var stale: [Int] = []
                for a in (t.address + 1)..<l.dataArea.upperBound where area[a - 16] != 0 {
                    if !reserved.contains(where: { $0.range.contains(a) }) { stale.append(a) }
                }
                if let first = stale.first {
                    warn(
                        .staleBytesAfterTerminator,
                        "\(stale.count) non-zero byte\(stale.count == 1 ? "" : "s") after the Terminator, first at page "
                            + "\(first / 4) byte \(first % 4); a reader that ignores the Terminator would see them")
                }
            }
            ndef = try reader.readNDEF()
        } catch {
            failure = error
        }
        // AUTH0 from the image itself (the reader cannot see it once read-protected).
        let memory = core.variant.layout
        if let cfg = memory.configurationPage, let access = memory.accessPage {
            let auth0 = Int(core.pages[cfg][3])
            let dataEnd = layout.map { ($0.dataArea.upperBound + 3) / 4 } ?? memory.lastUserPage + 1
            if auth0 < dataEnd {
                let prot = core.pages[access][0] & 0x80 != 0
                warn(
                    .auth0ProtectsNDEF,
                    "AUTH0 = \([UInt8(auth0)].hexString()): data-area pages \(max(auth0, 4))-\(dataEnd - 1) are "
                        + (prot ? "read and write protected" : "write protected") + " until PWD_AUTH")
            }
        }
        self.layout = layout
        self.ndefMessageBytes = ndef
        self.readError = failure ?? identifyError
        self.warnings = warnings
    }

    /// Which pages were not read, what they are on this product, and what follows.
    static func unreadPagesMessage(_ file: TagFile) -> String {
        let pages = file.unreadPages
        var runs: [String] = []
        var i = 0
        while i < pages.count {
            var j = i
            while j + 1 < pages.count && pages[j + 1] == pages[j] + 1 { j += 1 }
            runs.append(i == j ? "\(pages[i])" : "\(pages[i])-\(pages[j])")
            i = j + 1
        }
        var roles: [String] = []
        if let layout = file.type.type2Variant(pageCount: file.pages.count)?.layout {
            if let p = layout.passwordPage, pages.contains(p) { roles.append("PWD (page \(p))") }
            if let p = layout.packPage, pages.contains(p) { roles.append("PACK (page \(p))") }
        }
        return
            "\(pages.count) page\(pages.count == 1 ? "" : "s") not read when the file was made (\(runs.joined(separator: ", "))"
            + (roles.isEmpty ? "" : "; \(roles.joined(separator: ", ")), which no reader can read")
            + "): their bytes are unknown; emulation answers 00 00 00 00 for them, and a restore never writes them"
    }

    /// A plain-text report, one fact a line.
    public var text: String { text(hiding: nil) }

    /// The report with the tag's identifiers (UID or IDm, the systems' IDm, ATS) and content
    /// (the NDEF message, each record's payload and what was decoded from it) shown as `hide`
    /// shows their bytes (`tag show --redact`); nil shows them.
    public func text(hiding hide: (([UInt8]) -> String)?) -> String {
        func shown(_ bytes: [UInt8]) -> String { hide?(bytes) ?? bytes.hexString(separator: " ") }
        var out: [String] = []
        out.append("Tag:       \(productName) (\(file.source.rawValue) file, type \(file.type.rawValue))")
        if file.type.isSensedOnly {
            out.append(
                "Not an NFC Forum tag platform: every reader senses it (SAK rule, NXP AN10833), none reads it here")
        }
        if let f = file.feliCa {
            out.append("IDm:       \(shown(uidOnTag))")
            out.append("PMm:       \(f.pmm.hexString(separator: " "))")
            for sys in f.systems {
                let services = sys.services.map { String(format: "%04X", $0.code) }.joined(separator: ", ")
                out.append(
                    "System \(String(format: "%04X", sys.code)): IDm \(hide?(sys.idm) ?? sys.idm.hexString()), services \(services), "
                        + "\(sys.blocks.count) blocks")
            }
        } else if let v = file.iso15693 {
            out.append(
                "UID:       \(shown(uidOnTag)) (IC manufacturer \([v.icManufacturerCode].hexString()))"
            )
            out.append(
                "DSFID/AFI: \([v.dsfid].hexString()) / \([v.afi].hexString()), IC reference \([v.icReference].hexString()), "
                    + "\(v.blocks.count) blocks of \(v.blockSize) bytes"
                    + (v.lockedBlocks.isEmpty
                        ? "" : ", locked \(v.lockedBlocks.sorted().map(String.init).joined(separator: ","))"))
        } else {
            out.append("UID:       \(shown(uidOnTag))")
            out.append(
                "ATQA/SAK:  \(file.activation.atqaText) / \([file.activation.sak].hexString())"
                    + (file.activation.ats.map { ", ATS \(shown($0))" } ?? ""))
        }
        if let a = type3Attribute {
            out.append(
                "Attribute: Ver \([a.version].hexString()), Nbr \(a.nbr), Nbw \(a.nbw), Nmaxb \(a.nmaxb), WriteF \([a.writeFlag].hexString()), "
                    + "RWFlag \([a.rwFlag].hexString()), Ln \(a.length)")
        }
        if file.feliCa != nil, type3Attribute == nil, type3ReadError == nil {
            out.append(
                "NDEF:      no system 12FC: not an NFC Forum Type 3 Tag (its services are read with Read Without Encryption)"
            )
        }
        if let l = type5Layout {
            out.append(
                "CC:        \(l.capabilityContainer.bytes.hexString(separator: " ")) (\(l.capabilityContainer.areaSize) bytes, "
                    + (l.capabilityContainer.supportsReadMultiple ? "READ MULTIPLE" : "READ SINGLE only") + ")")
        }
        if let version { out.append("Version:   \(version.bytes.hexString(separator: " "))") }
        if let layout {
            out.append(layout.capabilityContainer.description)
            out.append("TLVs:")
            for t in layout.tlvs { out.append("  \(t)") }
        }
        if let t4 = file.type4 {
            out.append(
                "NDEF file: \(t4.fileID.hexString()) mapping \(t4.mappingVersion), \(t4.ndefFile.count) of "
                    + "\(t4.maximumNDEFFileSize) bytes, " + (t4.readOnly ? "read-only" : "read/write"))
        }
        if let d = type4Detection {
            out.append("CC:        \(d.capabilityContainer.description), application \(d.applicationName.hexString())")
        }
        if let d = dataAreaSize { out.append("Data area:            \(d) bytes") }
        if let m = maximumNDEFMessageSize { out.append("Maximum NDEF message: \(m) bytes") }
        if let ndef = ndefMessageBytes {
            if ndef.isEmpty {
                out.append("NDEF message: empty")
            } else if ndef.count <= 32 || hide != nil {
                out.append("NDEF message (\(ndef.count) bytes): \(shown(ndef))")
            } else {  // long messages 16 bytes a line, not one endless hex line
                out.append("NDEF message (\(ndef.count) bytes):")
                for i in stride(from: 0, to: ndef.count, by: 16) {
                    out.append("  " + Array(ndef[i..<min(i + 16, ndef.count)]).hexString(separator: " "))
                }
            }
        }
        if let message = ndefMessage {
            // Everything the JSON report says of each record, warnings and nested records included.
            for (i, d) in message.descriptions.enumerated() {
                out += (hide.map { d.hidingContent($0) } ?? d).textLines(number: "\(i + 1)")
            }
        }
        if let e = ndefDecodeError { out.append("NDEF message does not parse: \(e)") }
        if let readError { out.append("Read failed: \(readError)") }
        if let type4ReadError { out.append("Read failed: \(type4ReadError)") }
        if let type3ReadError { out.append("Read failed: \(type3ReadError)") }
        if let type5ReadError { out.append("Read failed: \(type5ReadError)") }
        if let emulationError { out.append("No device can present it: \(emulationError)") }
        for w in warnings { out.append("warning: \(w)") }
        for n in file.notes { out.append("note: \(n)") }
        return out.joined(separator: "\n")
    }
}
