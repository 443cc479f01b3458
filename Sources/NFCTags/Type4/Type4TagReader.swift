// NFC Forum Type 4 Tag 2.0 / 3.0 §5.4: the NDEF detection, read and update procedures.

/// What NDEF detection found on a Type 4 Tag: the CC, and which NDEF Tag Application name
/// answered (the 1.0 name means the 1.0 command forms).
public struct Type4Detection: Sendable, Hashable {
    /// `true` when the tag answered only the mapping 1.0 name `D2 76 00 00 85 01 00`.
    public let isVersion1Application: Bool
    public let capabilityContainer: Type4CapabilityContainer

    public init(isVersion1Application: Bool, capabilityContainer: Type4CapabilityContainer) {
        self.isVersion1Application = isVersion1Application
        self.capabilityContainer = capabilityContainer
    }

    /// The application name that answered.
    public var applicationName: [UInt8] {
        isVersion1Application
            ? Type4NDEFApplication.version1ApplicationName : Type4NDEFApplication.version2ApplicationName
    }
}

/// The NFC Forum Type 4 Tag NDEF procedures over any ISO-DEP carrier (T4T 2.0 §5.4, T4T 3.0
/// §5.4): what Core NFC's `NFCNDEFTag.queryNDEFStatus`, `readNDEF` and `writeNDEF` do on an
/// ISO 7816 tag.
///
/// Mapping 1.0 tags (T4T 2.0 §5.5 "Coexistence of Type 4 Tag Operation Version 1.0 and
/// Version 2.0", Annex D "Example of Mapping Version 1.0 Detection"): when SELECT of the 2.0
/// application name `D2 76 00 00 85 01 01` answers anything but `9000`, detection selects
/// the 1.0 name `D2 76 00 00 85 01 00` (the 1.0 form: no Le), and a tag found that way is
/// addressed with the 1.0 SELECT by file id (P2 `00`); its CC must say mapping 1.x. Other
/// readers do the same: nfcpy `tt4.py` (`_select_ndef_application`, `_select_fid`) and
/// Android's `rw_t4t.c` (`rw_t4t_sm_detect_ndef` retries with version 1.0,
/// `rw_t4t_select_file`, `rw_t4t_validate_cc_file`). A tag that answers the 2.0 name keeps
/// the 2.0 forms whatever its CC says (both witnesses do so too); ``detectApplication()``
/// tells which name answered.
///
/// Every call runs the whole sequence from the NDEF Tag Application SELECT, so it is valid
/// after any earlier exchange. Reads never ask for more than MLe bytes nor beyond the NDEF
/// file's maximum size; offsets above 7FFF use READ/UPDATE BINARY with an offset data
/// object (INS `B1`/`D7`, T4T 3.0), which a 2.0 tag answers with a status error.
public struct Type4TagReader<Transport: APDUTransport> {
    /// The NDEF Tag Application name, mapping 2.0 and later.
    public static var ndefApplicationAID: [UInt8] { Type4NDEFApplication.version2ApplicationName }
    /// The NDEF Tag Application name of a mapping 1.0 tag, tried when the 2.0 name is not found.
    public static var ndefApplicationAIDVersion1: [UInt8] { Type4NDEFApplication.version1ApplicationName }
    /// The Capability Container file identifier.
    public static var capabilityContainerFileID: UInt16 { 0xE103 }

    public let transport: Transport
    /// When `true`, READ/UPDATE BINARY may use extended lengths (Ne up to MLe, Nc up to MLc)
    /// whatever the transport says; otherwise a READ BINARY asks for the largest Le the CC
    /// (MLe) and the transport (``/NFCBase/APDUTransport/maximumResponseLength``, 256 for a short
    /// APDU) allow, and UPDATE BINARY stays within short APDUs (Nc ≤ 255).
    public var allowsExtendedLength: Bool
    /// The longest NDEF message ``readNDEF()`` reads (default ``NDEFLimits/default``'s 1 MiB,
    /// what the NDEF parser accepts): an NLEN or ENLEN above it is refused with
    /// `.lengthOutOfRange` before any of the message is read. A card may declare an ENDEF file
    /// of FFFFFFFE bytes (T4T 3.0 §4.7) and answer every READ BINARY; without this bound the
    /// reader would ask for up to 4 GiB (found by `nfcbench bench fuzz --target type4-reader`).
    public var maximumMessageBytes: Int

    public init(
        transport: Transport, allowsExtendedLength: Bool = false,
        maximumMessageBytes: Int = NDEFLimits.default.maxMessageBytes
    ) {
        self.transport = transport
        self.allowsExtendedLength = allowsExtendedLength
        self.maximumMessageBytes = maximumMessageBytes
    }

    // MARK: Procedures

    /// NDEF detection (T4T §5.4.2): SELECT the NDEF Tag Application (`00 A4 04 00 07 D2 76
    /// 00 00 85 01 01 00`), SELECT the CC file (`00 A4 00 0C 02 E1 03`), READ BINARY the CC.
    /// When the 2.0 name is not found: SELECT `00 A4 04 00 07 D2 76 00 00 85 01 00` (1.0),
    /// then `00 A4 00 00 02 E1 03` (T4T 2.0 §5.5, Annex D).
    /// - Returns: the parsed Capability Container.
    /// - Throws: ``Type4TagError`` `.applicationNotFound` (neither name answered `9000`),
    ///   `.fileNotFound`, `.ccInvalid`, `.unsupportedVersion` (also a CC above 1.x behind
    ///   the 1.0 name), `.unexpectedStatus`, `.communication`.
    public func detect() throws(Type4TagError) -> Type4CapabilityContainer {
        try detectApplication().capabilityContainer
    }

    /// ``detect()``, also saying which NDEF Tag Application name answered.
    public func detectApplication() throws(Type4TagError) -> Type4Detection {
        let select = try apdu { () throws(APDUError) in try CommandAPDU.select(aid: Self.ndefApplicationAID) }
        let sw = try exchange(select).statusWord
        var version1 = false
        if !sw.isSuccess {
            let select1 = try apdu { () throws(APDUError) in
                try CommandAPDU.select(aid: Self.ndefApplicationAIDVersion1, le: nil)
            }
            let sw1 = try exchange(select1).statusWord
            guard sw1.isSuccess else {
                throw Type4TagError(
                    .applicationNotFound,
                    "SELECT NDEF Tag Application answered \(sw) (2.0 name) and \(sw1) (1.0 name)")
            }
            version1 = true
        }
        try selectFile(Self.capabilityContainerFileID, version1: version1)
        // MLe is not known yet; 15 is the least every tag supports (T4T §5.1).
        let head = try readBinary(offset: 0, count: 15, maximumRead: 15, fileSize: nil)
        let ccLength = Int(head[0]) << 8 | Int(head[1])
        guard ccLength >= 15 else { throw .ccInvalid("CCLEN \(ccLength) is below 000F") }
        var cc = head
        // The first TLV: NDEF (04, 6 bytes, ends at 15) or ENDEF (06, 8 bytes, ends at 17).
        let tlvEnd = 9 + Int(head[8])
        if head[7] == 0x06, tlvEnd > 15, tlvEnd <= ccLength {
            cc += try readBinary(offset: 15, count: tlvEnd - 15, maximumRead: 15, fileSize: ccLength)
        }
        let parsed = try Type4CapabilityContainer(bytes: cc)
        // A tag found under the 1.0 name maps NDEF the 1.0 way (Android's
        // rw_t4t_validate_cc_file refuses a CC version above the application's).
        if version1 && parsed.majorVersion != 1 {
            throw Type4TagError(
                .unsupportedVersion(parsed.mappingVersion),
                "CC mapping \(parsed.majorVersion).\(parsed.mappingVersion & 0xF) behind the 1.0 application name")
        }
        return Type4Detection(isVersion1Application: version1, capabilityContainer: parsed)
    }

    /// NDEF read (T4T §5.4.3): detection, SELECT the NDEF file named by the CC, READ BINARY
    /// NLEN (2 bytes) or ENLEN (4 bytes, ENDEF file), then the message in chunks of at most MLe.
    /// - Returns: the raw NDEF message bytes (empty when NLEN is 0).
    /// - Throws: ``Type4TagError``; `.lengthOutOfRange` when NLEN exceeds max size − 2
    ///   (− 4 for ENLEN) or ``maximumMessageBytes``, `.accessDenied` when the CC denies reading.
    public func readNDEF() throws(Type4TagError) -> [UInt8] {
        try readNDEF(detection: detectApplication())
    }

    /// ``readNDEF()`` after a ``detect()`` the caller already ran (the application and CC
    /// must still be the tag's). Without the ``Type4Detection`` the file-select form follows
    /// the CC: P2 `00` for mapping 1.x.
    public func readNDEF(capabilityContainer cc: Type4CapabilityContainer) throws(Type4TagError) -> [UInt8] {
        try readNDEF(detection: Type4Detection(isVersion1Application: cc.majorVersion == 1, capabilityContainer: cc))
    }

    /// ``readNDEF()`` after a ``detectApplication()`` the caller already ran.
    public func readNDEF(detection: Type4Detection) throws(Type4TagError) -> [UInt8] {
        let cc = detection.capabilityContainer
        guard cc.isReadable else {
            throw Type4TagError(.accessDenied, "CC read access \([cc.readAccess].hexString())")
        }
        try selectFile(cc.ndefFileID, version1: detection.isVersion1Application)
        let n = try lengthField(cc)
        guard n <= cc.maximumNDEFMessageSize else {
            throw Type4TagError(
                .lengthOutOfRange, "NLEN \(n) exceeds the file's room of \(cc.maximumNDEFMessageSize) bytes")
        }
        guard n <= maximumMessageBytes else {
            throw Type4TagError(
                .lengthOutOfRange, "NLEN \(n) exceeds the reader's limit of \(maximumMessageBytes) bytes (NDEFLimits)")
        }
        if n == 0 { return [] }
        return try readBinary(
            offset: cc.lengthFieldSize, count: n, maximumRead: readLimit(cc), fileSize: cc.maximumNDEFFileSize)
    }

    /// NDEF update (T4T §5.4.4): detection, refusal unless write access is `00`, SELECT the
    /// NDEF file, UPDATE BINARY NLEN = 0, the message in chunks of at most MLc, then NLEN; an
    /// empty message (`format`) is the first UPDATE BINARY alone.
    /// A tag lost midway leaves NLEN 0 (an empty tag), never a torn message.
    /// - Throws: ``Type4TagError`` `.readOnly`, `.messageTooLarge`, and the detection errors.
    public func writeNDEF(_ message: [UInt8]) throws(Type4TagError) {
        try writeNDEF(message, detection: detectApplication())
    }

    /// ``writeNDEF(_:)`` after a ``detect()`` the caller already ran (file-select form as
    /// ``readNDEF(capabilityContainer:)`` chooses it).
    public func writeNDEF(_ message: [UInt8], capabilityContainer cc: Type4CapabilityContainer) throws(Type4TagError) {
        try writeNDEF(
            message, detection: Type4Detection(isVersion1Application: cc.majorVersion == 1, capabilityContainer: cc))
    }

    /// ``writeNDEF(_:)`` after a ``detectApplication()`` the caller already ran.
    public func writeNDEF(_ message: [UInt8], detection: Type4Detection) throws(Type4TagError) {
        let cc = detection.capabilityContainer
        guard cc.isWritable else {
            throw Type4TagError(.readOnly, "CC write access \([cc.writeAccess].hexString())")
        }
        guard message.count <= cc.maximumNDEFMessageSize else {
            throw Type4TagError(
                .messageTooLarge, "\(message.count) bytes; the file holds \(cc.maximumNDEFMessageSize)")
        }
        try selectFile(cc.ndefFileID, version1: detection.isVersion1Application)
        let width = cc.lengthFieldSize
        try updateBinary(offset: 0, data: [UInt8](repeating: 0, count: width), cc: cc)
        // An empty message (format) is that one UPDATE BINARY: its NLEN 0 is the final length.
        guard !message.isEmpty else { return }
        try updateBinary(offset: width, data: message, cc: cc)
        let length = (0..<width).reversed().map { UInt8((message.count >> ($0 * 8)) & 0xFF) }
        try updateBinary(offset: 0, data: length, cc: cc)
    }

    /// The largest NDEF message the tag can hold, from its CC.
    public func maximumNDEFMessageSize() throws(Type4TagError) -> Int {
        try detect().maximumNDEFMessageSize
    }

    // MARK: Steps

    private func readLimit(_ cc: Type4CapabilityContainer) -> Int {
        min(cc.maximumReadLength, allowsExtendedLength ? 65536 : min(65536, transport.maximumResponseLength))
    }

    private func writeLimit(_ cc: Type4CapabilityContainer) -> Int {
        min(cc.maximumWriteLength, allowsExtendedLength ? 65535 : 255)
    }

    private func lengthField(_ cc: Type4CapabilityContainer) throws(Type4TagError) -> Int {
        let b = try readBinary(
            offset: 0, count: cc.lengthFieldSize, maximumRead: readLimit(cc), fileSize: cc.maximumNDEFFileSize)
        return b.reduce(0) { $0 << 8 | Int($1) }
    }

    /// SELECT by file id: P2 `0C` (T4T 2.0/3.0), or `00` for a mapping 1.0 tag.
    private func selectFile(_ id: UInt16, version1: Bool) throws(Type4TagError) {
        let sw = try exchange(CommandAPDU.selectFile(id: id, noResponseData: !version1)).statusWord
        if sw == .fileNotFound {
            throw Type4TagError(.fileNotFound, "SELECT file \([UInt8(id >> 8), UInt8(id & 0xFF)].hexString())")
        }
        guard sw.isSuccess else { throw .unexpectedStatus(sw) }
    }

    /// Reads exactly `count` bytes from `offset` of the current file, in exchanges of at most
    /// `maximumRead` response bytes, accepting a tag's short reads; past 7FFF with ODO.
    private func readBinary(
        offset: Int, count: Int, maximumRead: Int, fileSize: Int?
    ) throws(Type4TagError) -> [UInt8] {
        if let fileSize, offset + count > fileSize {
            throw Type4TagError(.lengthOutOfRange, "read of \(count) at \(offset) leaves the \(fileSize)-byte file")
        }
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            let at = offset + out.count
            let want = count - out.count
            let chunk: [UInt8]
            if at <= 0x7FFF {
                let n = min(want, maximumRead)
                let command = try apdu { () throws(APDUError) in try CommandAPDU.readBinary(offset: at, length: n) }
                chunk = try readAnswer(command, expecting: n)
            } else {
                // Response is `53 L data`; the DDO header counts toward Le.
                var n = min(want, maximumRead - 2)
                if n >= 0x80 { n = min(want, maximumRead - 3) }
                if n >= 0x100 { n = min(want, maximumRead - 4) }
                let le = n + 1 + BERLength.size(of: n)
                let command = try apdu { () throws(APDUError) in try CommandAPDU.readBinaryODO(offset: at, length: le) }
                let ddo = try readAnswer(command, expecting: le)
                guard ddo.first == 0x53, let (len, size) = BERLength.decode(ddo.dropFirst()),
                    ddo.count == 1 + size + len, len <= n
                else {
                    throw .communication(
                        .malformedResponse(
                            "READ BINARY ODO answer is not a 53 data object of at most \(n) bytes: \(ddo.prefix(8).hexString())"
                        ))
                }
                chunk = Array(ddo[(1 + size)...])
            }
            guard !chunk.isEmpty else {
                throw .communication(.malformedResponse("READ BINARY at \(at) returned no data"))
            }
            out += chunk
        }
        return out
    }

    /// One READ BINARY exchange: data of 1…`expecting` bytes with `9000`, or `6282` (end of file).
    private func readAnswer(_ command: CommandAPDU, expecting n: Int) throws(Type4TagError) -> [UInt8] {
        let r = try exchange(command)
        guard r.statusWord.isSuccess || (r.statusWord == .endOfFileReached && !r.data.isEmpty) else {
            throw .unexpectedStatus(r.statusWord)
        }
        guard r.data.count <= n else {
            throw .communication(.malformedResponse("asked \(n) bytes, got \(r.data.count)"))
        }
        return r.data
    }

    private func updateBinary(offset: Int, data: [UInt8], cc: Type4CapabilityContainer) throws(Type4TagError) {
        let limit = writeLimit(cc)
        var done = 0
        while done < data.count {
            let at = offset + done
            let command: CommandAPDU
            let n: Int
            if at <= 0x7FFF {
                n = min(data.count - done, limit)
                let part = Array(data[done..<(done + n)])
                command = try apdu { () throws(APDUError) in try CommandAPDU.updateBinary(offset: at, data: part) }
            } else {
                // Data field is `54 03 off off off 53 L data`.
                var m = min(data.count - done, limit - 7)
                if m >= 0x80 { m = min(data.count - done, limit - 8) }
                if m >= 0x100 { m = min(data.count - done, limit - 9) }
                guard m >= 1 else {
                    throw Type4TagError(
                        .lengthOutOfRange, "MLc \(cc.maximumWriteLength) is too small for UPDATE BINARY with ODO")
                }
                n = m
                let part = Array(data[done..<(done + n)])
                command = try apdu { () throws(APDUError) in try CommandAPDU.updateBinaryODO(offset: at, data: part) }
            }
            let sw = try exchange(command).statusWord
            if sw == .securityStatusNotSatisfied {
                throw Type4TagError(.readOnly, "UPDATE BINARY answered \(sw)")
            }
            guard sw.isSuccess else { throw .unexpectedStatus(sw) }
            done += n
        }
    }

    private func exchange(_ command: CommandAPDU) throws(Type4TagError) -> ResponseAPDU {
        let raw: [UInt8]
        do {
            raw = try transport.transmit(command.bytes)
        } catch let e as TagCommunicationError {
            throw .communication(e)
        } catch {
            throw .communication(.readerFailure(String(describing: error)))
        }
        guard let r = try? ResponseAPDU(bytes: raw) else {
            throw .communication(.malformedResponse("response of \(raw.count) byte(s) has no SW1 SW2"))
        }
        return r
    }

    /// Builds a command whose parameters the procedure has already bounded; a failure here
    /// is reported as a length error rather than trapping.
    private func apdu(_ build: () throws(APDUError) -> CommandAPDU) throws(Type4TagError) -> CommandAPDU {
        do { return try build() } catch {
            throw Type4TagError(.lengthOutOfRange, error.reason)
        }
    }
}
