// The card side of NFC Forum T4T 1.0 / 2.0 / 3.0: an NDEF Tag Application answering C-APDUs.

/// An NFC Forum Type 4 Tag NDEF Tag Application as a card runs it: the CC file `E103` and
/// one NDEF (or ENDEF) file, answering C-APDUs exactly like a real tag (T4T 2.0 §5.4,
/// T4T 3.0; status words per ISO/IEC 7816-4 §5.6).
///
/// A mapping 1.0 core (``mappingVersion`` `10`) is a tag made before T4T 2.0: it answers
/// only to the 1.0 application name `D2 76 00 00 85 01 00` (the 2.0 name gets `6A82`, so a
/// 2.0 reader has to fall back as T4T 2.0 §5.5 and Annex D describe), and takes SELECT by
/// file id with P2 `00` (the 1.0 form) as well as `0C`. libnfc's `nfc-emulate-forum-tag4 -1`
/// emulates such a tag the same way.
///
/// Every virtual device (PN532 emulation, vpcd card, in-process simulator) feeds its
/// C-APDUs to ``respond(to:)`` and sends back what it returns. Pure: no clock, no I/O.
///
/// | Command | Answer |
/// |---|---|
/// | short (< 4 bytes) or malformed length fields | `6700` |
/// | CLA ≠ `00` | `6E00` |
/// | SELECT by name (P1 `04`) of ``applicationName``, P2 `00`/`0C` | `9000`; other AID or P2 `02` → `6A82` |
/// | SELECT by id (P1 `00` P2 `0C`; mapping 1.0 also P2 `00`; 2 bytes) | `9000`; unknown id → `6A82`; app not selected → `6986`; other P1/P2 → `6A86` |
/// | READ BINARY `B0` | up to min(Ne, MLe) bytes, fewer at the end of the file; offset ≥ file size → `6B00`; no file → `6986` |
/// | UPDATE BINARY `D6` | `9000`; read-only or CC → `6982`; Nc > MLc → `6700`; past the end → `6A84`/`6B00` |
/// | READ/UPDATE BINARY with ODO `B1`/`D7` (mapping 3.0 only) | as above, data in a `53` object; bad ODO → `6A80` |
/// | any other INS | `6D00` |
public struct Type4NDEFApplication: Sendable {
    /// The CC file's bytes, served at id `E103`.
    public let capabilityContainer: [UInt8]
    /// The NDEF file's identifier.
    public let ndefFileID: UInt16
    /// The whole NDEF file: length field (NLEN, or ENLEN for an ENDEF file), message, padding.
    /// Reflects every UPDATE BINARY.
    public private(set) var ndefFile: [UInt8]
    /// The mapping version byte (`10`, `20` or `30`): major 1 answers to the 1.0
    /// application name, major 3 takes ODO commands.
    public let mappingVersion: UInt8
    /// MLe: the most data bytes one READ BINARY answer carries.
    public let maximumReadLength: Int
    /// MLc: the most data bytes one UPDATE BINARY may carry.
    public let maximumWriteLength: Int
    /// When `true`, UPDATE BINARY on the NDEF file answers `6982`.
    public let isReadOnly: Bool
    /// Size of the NDEF file's length field: 2 (NLEN) or 4 (ENLEN).
    public let lengthFieldSize: Int
    /// When `true`, a READ BINARY cut short by the end of the file answers `6282` (ISO/IEC
    /// 7816-4 warning) instead of `9000` with the shorter data.
    public var reportsEndOfFile: Bool = false

    private enum SelectedFile: Sendable { case capabilityContainer, ndef }
    private enum State: Sendable {
        /// No application selected (power-up, field lost, or after ``deselect()``).
        case idle
        /// The NDEF Tag Application is selected; `file` is the current EF, if any.
        case selected(file: SelectedFile?)
    }
    private var state: State = .idle

    /// The NDEF Tag Application name from T4T 2.0 on (mapping 2.0 and 3.0).
    public static let version2ApplicationName: [UInt8] = [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01]
    /// The NDEF Tag Application name of a mapping 1.0 tag (T4T 2.0 §5.5, Annex D).
    public static let version1ApplicationName: [UInt8] = [0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x00]

    /// The name this tag's NDEF Tag Application answers to: the 1.0 name for mapping 1.x,
    /// the 2.0 name otherwise.
    public var applicationName: [UInt8] {
        mappingVersion >> 4 == 1 ? Self.version1ApplicationName : Self.version2ApplicationName
    }

    /// A conformant tag holding `ndefMessage`.
    /// - Parameters:
    ///   - ndefMessage: the raw NDEF message bytes (may be empty: NLEN 0).
    ///   - maximumFileSize: the NDEF file's size in bytes, length field included
    ///     (T4T 2.0: 5…FFFE; an ENDEF file: FFFF…).
    ///   - mappingVersion: `0x10` (T4T 1.0: the 1.0 application name), `0x20` (T4T 2.0) or
    ///     `0x30` (T4T 3.0: ODO commands, ENDEF when `maximumFileSize` > FFFE or
    ///     `extendedFile` is set).
    ///   - maximumReadLength: MLe (≥ 15).
    ///   - maximumWriteLength: MLc (≥ 1).
    ///   - readOnly: write access `FF` in the CC and `6982` to UPDATE BINARY.
    ///   - fileID: the NDEF file id written into the CC.
    ///   - extendedFile: mapping 3.0 only: `true` writes the ENDEF TLV into the CC, `false` the
    ///     NDEF TLV; `nil` (default) picks ENDEF when `maximumFileSize` is over FFFE.
    /// - Throws: ``Type4TagError`` `.ccInvalid`/`.unsupportedVersion` for values the CC can't
    ///   hold, `.messageTooLarge` when the message does not fit.
    public init(
        ndefMessage: [UInt8], maximumFileSize: Int = 0x0800, mappingVersion: UInt8 = 0x20,
        maximumReadLength: Int = 0xFF, maximumWriteLength: Int = 0xFF, readOnly: Bool = false,
        fileID: UInt16 = 0xE104, extendedFile: Bool? = nil
    ) throws(Type4TagError) {
        let cc = try Type4CapabilityContainer(
            mappingVersion: mappingVersion, maximumReadLength: maximumReadLength,
            maximumWriteLength: maximumWriteLength, ndefFileID: fileID,
            maximumNDEFFileSize: maximumFileSize, writeAccess: readOnly ? 0xFF : 0x00,
            extendedFile: extendedFile)
        guard ndefMessage.count <= cc.maximumNDEFMessageSize else {
            throw Type4TagError(
                .messageTooLarge, "\(ndefMessage.count) bytes; the file holds \(cc.maximumNDEFMessageSize)")
        }
        let width = cc.lengthFieldSize
        var file = (0..<width).reversed().map { UInt8((ndefMessage.count >> ($0 * 8)) & 0xFF) }
        file += ndefMessage
        file += [UInt8](repeating: 0, count: maximumFileSize - file.count)
        self.init(
            rawCapabilityContainer: cc.bytes, ndefFileID: fileID, ndefFile: file,
            mappingVersion: mappingVersion, maximumReadLength: maximumReadLength,
            maximumWriteLength: maximumWriteLength, readOnly: readOnly, lengthFieldSize: width)
    }

    /// A tag serving exactly the given files, unchecked: for misbehaving tags (a CC that lies
    /// about sizes, an NLEN beyond the file). The core still never reads outside `ndefFile`.
    public init(
        rawCapabilityContainer: [UInt8], ndefFileID: UInt16, ndefFile: [UInt8],
        mappingVersion: UInt8 = 0x20, maximumReadLength: Int = 0xFF, maximumWriteLength: Int = 0xFF,
        readOnly: Bool = false, lengthFieldSize: Int = 2
    ) {
        capabilityContainer = rawCapabilityContainer
        self.ndefFileID = ndefFileID
        self.ndefFile = ndefFile
        self.mappingVersion = mappingVersion
        self.maximumReadLength = max(1, maximumReadLength)
        self.maximumWriteLength = max(1, maximumWriteLength)
        isReadOnly = readOnly
        self.lengthFieldSize = lengthFieldSize == 4 ? 4 : 2
    }

    /// The NDEF message the file holds now (per NLEN/ENLEN), or `nil` when the length field
    /// points beyond the file.
    public var ndefMessage: [UInt8]? {
        guard ndefFile.count >= lengthFieldSize else { return nil }
        let n = ndefFile[0..<lengthFieldSize].reduce(0) { $0 << 8 | Int($1) }
        guard n <= ndefFile.count - lengthFieldSize else { return nil }
        return Array(ndefFile[lengthFieldSize..<(lengthFieldSize + n)])
    }

    /// `true` while the NDEF Tag Application is selected.
    public var isApplicationSelected: Bool {
        if case .selected = state { return true }
        return false
    }

    /// Forgets the selection, as a tag does when the field drops or the reader deactivates
    /// it (ISO/IEC 14443-4 DESELECT). Files keep their content.
    public mutating func deselect() { state = .idle }

    /// Answers one C-APDU with R-APDU bytes (data + SW1 SW2). Never traps on any input.
    public mutating func respond(to apdu: [UInt8]) -> [UInt8] {
        guard apdu.count >= 4 else { return StatusWord.wrongLength.bytes }
        guard apdu[0] == 0x00 else { return StatusWord.claNotSupported.bytes }
        guard [0xA4, 0xB0, 0xD6, 0xB1, 0xD7].contains(apdu[1]) else { return StatusWord.insNotSupported.bytes }
        guard let command = try? CommandAPDU(bytes: apdu) else { return StatusWord.wrongLength.bytes }
        let answer: ResponseAPDU
        switch command.ins {
        case 0xA4: answer = ResponseAPDU(statusWord: select(command))
        case 0xB0: answer = readBinary(command)
        case 0xD6: answer = ResponseAPDU(statusWord: updateBinary(command))
        case 0xB1: answer = readBinaryODO(command)
        default: answer = ResponseAPDU(statusWord: updateBinaryODO(command))
        }
        return answer.bytes
    }

    // MARK: Commands

    private mutating func select(_ c: CommandAPDU) -> StatusWord {
        switch c.p1 {
        case 0x04:
            guard !c.data.isEmpty else { return .wrongLength }
            switch c.p2 {
            case 0x00, 0x0C:
                guard c.data == applicationName else { return .fileNotFound }
                state = .selected(file: nil)
                return .success
            case 0x02: return .fileNotFound  // one occurrence only: there is no "next"
            default: return .wrongParameters
            }
        case 0x00:
            // T4T 2.0 and 3.0 readers send P2 0C; a 1.0 tag was addressed with P2 00.
            guard c.p2 == 0x0C || (c.p2 == 0x00 && mappingVersion >> 4 == 1) else { return .wrongParameters }
            guard c.data.count == 2 else { return .wrongLength }
            guard case .selected = state else { return .commandNotAllowed }
            let id = UInt16(c.data[0]) << 8 | UInt16(c.data[1])
            if id == 0xE103 {
                state = .selected(file: .capabilityContainer)
            } else if id == ndefFileID {
                state = .selected(file: .ndef)
            } else {
                return .fileNotFound
            }
            return .success
        default:
            return .wrongParameters
        }
    }

    private var currentFile: SelectedFile? {
        if case .selected(let f) = state { return f }
        return nil
    }

    private func fileBytes(_ f: SelectedFile) -> [UInt8] {
        f == .ndef ? ndefFile : capabilityContainer
    }

    /// Bytes from `offset`, at most `limit`; `nil` when the offset is outside the file.
    private func slice(_ f: SelectedFile, offset: Int, limit: Int) -> (bytes: [UInt8], short: Bool)? {
        let file = fileBytes(f)
        guard offset < file.count else { return nil }
        let n = min(limit, file.count - offset)
        return (Array(file[offset..<(offset + n)]), n < limit)
    }

    private func readBinary(_ c: CommandAPDU) -> ResponseAPDU {
        guard c.p1 & 0x80 == 0 else { return ResponseAPDU(statusWord: .wrongParameters) }  // no SFI
        guard c.data.isEmpty, let ne = c.le else { return ResponseAPDU(statusWord: .wrongLength) }
        guard let f = currentFile else { return ResponseAPDU(statusWord: .commandNotAllowed) }
        let offset = Int(c.p1) << 8 | Int(c.p2)
        let limit = min(ne, maximumReadLength)
        guard let (bytes, short) = slice(f, offset: offset, limit: limit) else {
            return ResponseAPDU(statusWord: .wrongP1P2)
        }
        return ResponseAPDU(data: bytes, statusWord: short && reportsEndOfFile ? .endOfFileReached : .success)
    }

    private mutating func updateBinary(_ c: CommandAPDU) -> StatusWord {
        guard c.p1 & 0x80 == 0 else { return .wrongParameters }
        guard !c.data.isEmpty, c.le == nil, c.data.count <= maximumWriteLength else { return .wrongLength }
        return write(c.data, at: Int(c.p1) << 8 | Int(c.p2))
    }

    private mutating func write(_ data: [UInt8], at offset: Int) -> StatusWord {
        guard let f = currentFile else { return .commandNotAllowed }
        guard f == .ndef, !isReadOnly else { return .securityStatusNotSatisfied }
        guard offset < ndefFile.count else { return .wrongP1P2 }
        guard data.count <= ndefFile.count - offset else { return .notEnoughMemory }
        ndefFile.replaceSubrange(offset..<(offset + data.count), with: data)
        return .success
    }

    private var supportsODO: Bool { mappingVersion >> 4 >= 3 }

    /// The offset of a leading `54 03 xx xx xx` data object, and the bytes after it.
    private func offsetDataObject(_ data: [UInt8]) -> (offset: Int, rest: ArraySlice<UInt8>)? {
        guard data.count >= 5, data[0] == 0x54, data[1] == 0x03 else { return nil }
        return (Int(data[2]) << 16 | Int(data[3]) << 8 | Int(data[4]), data[5...])
    }

    private func readBinaryODO(_ c: CommandAPDU) -> ResponseAPDU {
        guard supportsODO else { return ResponseAPDU(statusWord: .insNotSupported) }
        guard c.p1 == 0, c.p2 == 0 else { return ResponseAPDU(statusWord: .wrongParameters) }
        guard let ne = c.le else { return ResponseAPDU(statusWord: .wrongLength) }
        guard let (offset, rest) = offsetDataObject(c.data), rest.isEmpty else {
            return ResponseAPDU(statusWord: .wrongData)
        }
        guard let f = currentFile else { return ResponseAPDU(statusWord: .commandNotAllowed) }
        // The `53 L` header counts toward Ne and MLe.
        let room = min(ne, maximumReadLength)
        var n = room - 2
        if n >= 0x80 { n = room - 3 }
        if n >= 0x100 { n = room - 4 }
        guard n >= 1 else { return ResponseAPDU(statusWord: .wrongLength) }
        guard let (bytes, short) = slice(f, offset: offset, limit: n) else {
            return ResponseAPDU(statusWord: .wrongP1P2)
        }
        return ResponseAPDU(
            data: [0x53] + BERLength.encode(bytes.count) + bytes,
            statusWord: short && reportsEndOfFile ? .endOfFileReached : .success)
    }

    private mutating func updateBinaryODO(_ c: CommandAPDU) -> StatusWord {
        guard supportsODO else { return .insNotSupported }
        guard c.p1 == 0, c.p2 == 0 else { return .wrongParameters }
        guard c.le == nil, c.data.count <= maximumWriteLength else { return .wrongLength }
        guard let (offset, rest) = offsetDataObject(c.data), rest.first == 0x53,
            let (len, size) = BERLength.decode(rest.dropFirst()), len >= 1,
            rest.count == 1 + size + len
        else { return .wrongData }
        return write(Array(rest.suffix(len)), at: offset)
    }
}
