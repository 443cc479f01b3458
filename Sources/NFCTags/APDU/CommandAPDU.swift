// ISO/IEC 7816-4:2020 §5.2: command APDU cases 1, 2S, 3S, 4S, 2E, 3E, 4E.

/// A command APDU: header CLA INS P1 P2, optional command data (Nc bytes), optional
/// expected response length Ne (ISO/IEC 7816-4:2020 §5.2).
///
/// Values are checked when built, so ``bytes`` always encodes. The short form carries
/// Nc 1–255 and Ne 1–256 (Le `00` = 256); the extended form Nc 1–65535 and Ne 1–65536
/// (Le `00 00` = 65536); both Lc and Le of one APDU use the same form.
public struct CommandAPDU: Sendable, Hashable, CustomStringConvertible {
    /// How the length fields are encoded.
    public enum LengthEncoding: Sendable, Hashable {
        /// Short unless Nc > 255 or Ne > 256.
        case automatic
        /// Always short; building fails if a length does not fit.
        case short
        /// Always extended (for cases 2–4).
        case extended
    }

    /// The seven command shapes of ISO/IEC 7816-4:2020 §5.2, table 2.
    public enum Case: Sendable, Hashable {
        case case1, case2Short, case3Short, case4Short, case2Extended, case3Extended, case4Extended
    }

    public let cla: UInt8
    public let ins: UInt8
    public let p1: UInt8
    public let p2: UInt8
    /// The command data field; empty when there is no Lc.
    public let data: [UInt8]
    /// Ne, the maximum number of response data bytes expected (1–65536); `nil` when the
    /// command has no Le field. `0` given to an initializer means "absent" too.
    public let le: Int?
    /// `true` when the length fields use the extended form (always `false` for case 1).
    public let isExtended: Bool

    /// Builds a command APDU, choosing the length encoding as `encoding` says.
    /// - Throws: ``APDUError`` `.dataTooLong` (Nc > 65535, or > 255 with `.short`),
    ///   `.leOutOfRange` (Ne outside 0–65536, or > 256 with `.short`).
    public init(
        cla: UInt8 = 0x00, ins: UInt8, p1: UInt8, p2: UInt8, data: [UInt8] = [], le: Int? = nil,
        encoding: LengthEncoding = .automatic
    ) throws(APDUError) {
        let ne = le == 0 ? nil : le
        if let ne, !(1...65536).contains(ne) {
            throw APDUError(.leOutOfRange, "Ne \(ne) is outside 1…65536")
        }
        guard data.count <= 65535 else {
            throw APDUError(.dataTooLong, "Nc \(data.count) exceeds 65535")
        }
        let needsExtended = data.count > 255 || (ne ?? 0) > 256
        let extended: Bool
        switch encoding {
        case .automatic: extended = needsExtended
        case .extended: extended = true
        case .short:
            guard data.count <= 255 else {
                throw APDUError(.dataTooLong, "Nc \(data.count) does not fit a short Lc (max 255)")
            }
            guard (ne ?? 0) <= 256 else {
                throw APDUError(.leOutOfRange, "Ne \(ne ?? 0) does not fit a short Le (max 256)")
            }
            extended = false
        }
        self.cla = cla
        self.ins = ins
        self.p1 = p1
        self.p2 = p2
        self.data = data
        self.le = ne
        self.isExtended = extended && (ne != nil || !data.isEmpty)
    }

    /// Parses a command APDU exactly as ISO/IEC 7816-4:2020 §5.2 decodes the body after
    /// the 4-byte header: empty → case 1; 1 byte → 2S; `B1 ≠ 00` and body = 1 + B1 → 3S,
    /// = 2 + B1 → 4S; `B1 = 00` and 3 bytes → 2E; `B1 = 00`, `B2B3 ≠ 0000` and body =
    /// 3 + B2B3 → 3E, = 5 + B2B3 → 4E.
    /// - Throws: ``APDUError`` `.tooShort` (under 4 bytes), `.zeroLc` (short `Lc = 00`
    ///   with data, extended `00 00 00` Lc), `.inconsistentLength` (anything else).
    public init(bytes: [UInt8]) throws(APDUError) {
        guard bytes.count >= 4 else {
            throw APDUError(.tooShort, "a command APDU needs a 4-byte header; got \(bytes.count)")
        }
        let body = bytes[4...]
        let l = body.count
        let b = body.startIndex
        var data: [UInt8] = []
        var ne: Int? = nil
        var extended = false
        if l == 0 {
            // case 1
        } else if l == 1 {
            ne = body[b] == 0 ? 256 : Int(body[b])  // case 2S
        } else if body[b] != 0 {
            let nc = Int(body[b])
            if l == 1 + nc {
                data = Array(body[(b + 1)...])  // case 3S
            } else if l == 2 + nc {
                data = Array(body[(b + 1)..<(b + 1 + nc)])  // case 4S
                let leByte = body[b + 1 + nc]
                ne = leByte == 0 ? 256 : Int(leByte)
            } else {
                throw APDUError(
                    .inconsistentLength, "short Lc \(nc) does not match a body of \(l) bytes")
            }
        } else {
            // B1 = 00: either a short Lc of zero (forbidden) or an extended length.
            guard l >= 3 else {
                throw APDUError(.zeroLc, "short Lc 00 is not allowed (body \(body.hexString()))")
            }
            extended = true
            let n = Int(body[b + 1]) << 8 | Int(body[b + 2])
            if l == 3 {
                ne = n == 0 ? 65536 : n  // case 2E
            } else if n == 0 {
                throw APDUError(.zeroLc, "extended Lc 00 00 00 is not allowed")
            } else if l == 3 + n {
                data = Array(body[(b + 3)...])  // case 3E
            } else if l == 5 + n {
                data = Array(body[(b + 3)..<(b + 3 + n)])  // case 4E
                let e = Int(body[b + 3 + n]) << 8 | Int(body[b + 4 + n])
                ne = e == 0 ? 65536 : e
            } else {
                throw APDUError(
                    .inconsistentLength, "extended Lc \(n) does not match a body of \(l) bytes")
            }
        }
        cla = bytes[0]
        ins = bytes[1]
        p1 = bytes[2]
        p2 = bytes[3]
        self.data = data
        le = ne
        isExtended = extended
    }

    /// Which of the seven shapes this command has.
    public var apduCase: Case {
        switch (data.isEmpty, le == nil, isExtended) {
        case (true, true, _): .case1
        case (true, false, false): .case2Short
        case (true, false, true): .case2Extended
        case (false, true, false): .case3Short
        case (false, true, true): .case3Extended
        case (false, false, false): .case4Short
        case (false, false, true): .case4Extended
        }
    }

    /// The encoded command: header, then Lc and data, then Le, in the chosen form.
    public var bytes: [UInt8] {
        var out: [UInt8] = [cla, ins, p1, p2]
        out.reserveCapacity(4 + 3 + data.count + 2)
        if isExtended {
            if !data.isEmpty {
                out += [0x00, UInt8(data.count >> 8), UInt8(data.count & 0xFF)]
                out += data
            }
            if let ne = le {
                let v = ne == 65536 ? 0 : ne
                if data.isEmpty { out.append(0x00) }
                out += [UInt8(v >> 8), UInt8(v & 0xFF)]
            }
        } else {
            if !data.isEmpty {
                out.append(UInt8(data.count))
                out += data
            }
            if let ne = le { out.append(ne == 256 ? 0 : UInt8(ne)) }
        }
        return out
    }

    public var description: String { bytes.hexString(separator: " ") }
}

// MARK: - Interindustry commands used by the NFC Forum Type 4 Tag procedures

extension CommandAPDU {
    /// Which occurrence of a DF name a SELECT asks for (ISO/IEC 7816-4:2020 §11.2.2, P2 b2-b1).
    public enum SelectOccurrence: UInt8, Sendable {
        /// P2 `00`: first or only occurrence.
        case first = 0x00
        /// P2 `02`: next occurrence.
        case next = 0x02
    }

    /// SELECT by DF name: `00 A4 04 <P2> Lc <AID> 00` (ISO/IEC 7816-4 §11.2.2; NFC Forum
    /// T4T 2.0 §5.4.2 "NDEF Tag Application Select" uses `D2 76 00 00 85 01 01`, P2 `00`, Le `00`).
    /// - Parameters:
    ///   - aid: the application identifier, 5–16 bytes (ISO/IEC 7816-5).
    ///   - occurrence: P2, ``SelectOccurrence/first`` (`00`) by default or ``SelectOccurrence/next`` (`02`).
    ///   - le: Ne; `256` (Le `00`) by default, `nil` for no Le (T4T 1.0 style).
    /// - Throws: ``APDUError/Code/invalidParameter`` for an AID length outside 5–16.
    public static func select(
        aid: [UInt8], occurrence: SelectOccurrence = .first, le: Int? = 256
    ) throws(APDUError) -> CommandAPDU {
        guard (5...16).contains(aid.count) else {
            throw APDUError(.invalidParameter, "an AID has 5 to 16 bytes; got \(aid.count)")
        }
        return try CommandAPDU(ins: 0xA4, p1: 0x04, p2: occurrence.rawValue, data: aid, le: le)
    }

    /// SELECT by file identifier, no response data: `00 A4 00 0C 02 <id>` (ISO/IEC 7816-4
    /// §11.2.2; NFC Forum T4T 2.0 §5.4.3 "Capability Container Select" / "NDEF Select").
    /// With `noResponseData: false`, P2 is `00` (first or only occurrence): the form a
    /// mapping 1.0 tag is addressed with (T4T 2.0 §5.5 and Annex D; nfcpy `tt4.py`
    /// `_select_fid`, Android `rw_t4t_select_file`).
    public static func selectFile(id: UInt16, noResponseData: Bool = true) -> CommandAPDU {
        CommandAPDU(
            unchecked: 0x00, 0xA4, 0x00, noResponseData ? 0x0C : 0x00, data: [UInt8(id >> 8), UInt8(id & 0xFF)],
            le: nil)
    }

    /// READ BINARY of the current EF: `00 B0 <offset> Le` (ISO/IEC 7816-4 §11.3.3;
    /// T4T 2.0 §5.4.4).
    /// - Parameters:
    ///   - offset: 0–7FFF (P1 b8 is 0: no short EF identifier).
    ///   - length: Ne, 1–65536 (extended form above 256).
    /// - Throws: ``APDUError`` `.invalidParameter` for the offset, `.leOutOfRange` for `length`.
    public static func readBinary(offset: Int, length: Int) throws(APDUError) -> CommandAPDU {
        guard (0...0x7FFF).contains(offset) else {
            throw APDUError(.invalidParameter, "READ BINARY offset \(offset) is outside 0…7FFF")
        }
        guard length >= 1 else { throw APDUError(.leOutOfRange, "READ BINARY of \(length) bytes") }
        return try CommandAPDU(ins: 0xB0, p1: UInt8(offset >> 8), p2: UInt8(offset & 0xFF), le: length)
    }

    /// UPDATE BINARY of the current EF: `00 D6 <offset> Lc <data>` (ISO/IEC 7816-4 §11.3.5;
    /// T4T 2.0 §5.4.5).
    /// - Throws: ``APDUError`` `.invalidParameter` (offset outside 0–7FFF, empty data),
    ///   `.dataTooLong` (more than 65535 bytes).
    public static func updateBinary(offset: Int, data: [UInt8]) throws(APDUError) -> CommandAPDU {
        guard (0...0x7FFF).contains(offset) else {
            throw APDUError(.invalidParameter, "UPDATE BINARY offset \(offset) is outside 0…7FFF")
        }
        guard !data.isEmpty else { throw APDUError(.invalidParameter, "UPDATE BINARY with no data") }
        return try CommandAPDU(ins: 0xD6, p1: UInt8(offset >> 8), p2: UInt8(offset & 0xFF), data: data)
    }

    /// READ BINARY with an offset data object: `00 B1 00 00 05 54 03 <offset:3> Le`
    /// (ISO/IEC 7816-4 §11.3.3 odd INS; NFC Forum T4T 3.0 "READ_BINARY with ODO", for
    /// offsets above 7FFF). The answer's data is a discretionary data object `53 L <bytes>`
    /// whose header counts toward Ne (see ``Type4TagReader``).
    /// - Parameters:
    ///   - offset: 0–FFFFFF.
    ///   - length: Ne, 1–65536.
    public static func readBinaryODO(offset: Int, length: Int) throws(APDUError) -> CommandAPDU {
        guard (0...0xFF_FFFF).contains(offset) else {
            throw APDUError(.invalidParameter, "ODO offset \(offset) is outside 0…FFFFFF")
        }
        guard length >= 1 else { throw APDUError(.leOutOfRange, "READ BINARY of \(length) bytes") }
        return try CommandAPDU(ins: 0xB1, p1: 0x00, p2: 0x00, data: offsetDataObject(offset), le: length)
    }

    /// UPDATE BINARY with an offset data object: `00 D7 00 00 Lc 54 03 <offset:3> 53 <L> <data>`
    /// (ISO/IEC 7816-4 §11.3.5 odd INS; NFC Forum T4T 3.0 "UPDATE_BINARY with ODO"); `L` is a
    /// BER-TLV length (`n`, `81 n` or `82 nn nn`).
    /// - Throws: ``APDUError`` `.invalidParameter` (offset beyond FFFFFF, empty data),
    ///   `.dataTooLong` when the whole data field exceeds 65535 bytes.
    public static func updateBinaryODO(offset: Int, data: [UInt8]) throws(APDUError) -> CommandAPDU {
        guard (0...0xFF_FFFF).contains(offset) else {
            throw APDUError(.invalidParameter, "ODO offset \(offset) is outside 0…FFFFFF")
        }
        guard !data.isEmpty else { throw APDUError(.invalidParameter, "UPDATE BINARY with no data") }
        guard data.count <= 0xFFFF else { throw APDUError(.dataTooLong, "\(data.count) bytes") }
        let field = offsetDataObject(offset) + [0x53] + BERLength.encode(data.count) + data
        return try CommandAPDU(ins: 0xD7, p1: 0x00, p2: 0x00, data: field)
    }

    /// The offset data object `54 03 <offset:3>` (ISO/IEC 7816-4 §11.3.2).
    static func offsetDataObject(_ offset: Int) -> [UInt8] {
        [0x54, 0x03, UInt8((offset >> 16) & 0xFF), UInt8((offset >> 8) & 0xFF), UInt8(offset & 0xFF)]
    }

    /// For literals known valid: short form, no checks.
    private init(unchecked cla: UInt8, _ ins: UInt8, _ p1: UInt8, _ p2: UInt8, data: [UInt8], le: Int?) {
        self.cla = cla
        self.ins = ins
        self.p1 = p1
        self.p2 = p2
        self.data = data
        self.le = le
        isExtended = false
    }
}

/// BER-TLV length fields (ISO/IEC 7816-4:2020 §6.3; up to `82 nn nn`), for the `53`
/// discretionary data objects of READ/UPDATE BINARY with ODO.
enum BERLength {
    /// `n` (< 80), `81 n` (< 100) or `82 hi lo` (≤ FFFF).
    static func encode(_ n: Int) -> [UInt8] {
        if n < 0x80 { return [UInt8(n)] }
        if n < 0x100 { return [0x81, UInt8(n)] }
        return [0x82, UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)]
    }

    /// Bytes the length field takes for a value of `n`.
    static func size(of n: Int) -> Int { n < 0x80 ? 1 : n < 0x100 ? 2 : 3 }

    /// Decodes a length at the start of `bytes`: (value, bytes used), or `nil` when
    /// truncated, indefinite (`80`) or longer than `82`.
    static func decode(_ bytes: ArraySlice<UInt8>) -> (value: Int, size: Int)? {
        guard let first = bytes.first else { return nil }
        let s = bytes.startIndex
        switch first {
        case 0x00...0x7F: return (Int(first), 1)
        case 0x81:
            guard bytes.count >= 2 else { return nil }
            return (Int(bytes[s + 1]), 2)
        case 0x82:
            guard bytes.count >= 3 else { return nil }
            return (Int(bytes[s + 1]) << 8 | Int(bytes[s + 2]), 3)
        default: return nil
        }
    }
}
