// Internal stand-in for ISO 7816-4 command APDU parsing until the shared `CommandAPDU`
// (branch t4t, Sources/NFCTags/APDU/) is merged; then this file goes and the phone model
// uses that type. Not public on purpose: there must be one APDU type in the package.

/// The parts of a command APDU the phone's router needs (ISO/IEC 7816-4 §5.1).
struct ParsedCommand: Equatable {
    var cla: UInt8
    var ins: UInt8
    var p1: UInt8
    var p2: UInt8
    /// The command data field (empty for cases 1 and 2).
    var data: [UInt8]
    /// Ne when present (0 in the short Le byte means 256).
    var ne: Int?
}

/// Why a command APDU can't be processed, with the status word a card answers.
enum CommandFault: Error, Equatable {
    /// Wrong length: fewer than 4 bytes, or Lc/Le disagree with the byte count → `67 00`.
    case wrongLength
    /// CLA `FF` is invalid (ISO/IEC 7816-4 §5.4.1, reserved for PPS) → `6E 00`.
    case classNotSupported
    /// INS `6X` or `9X` is invalid (ISO/IEC 7816-4 §5.4.2) → `6D 00`.
    case instructionInvalid

    var statusWord: [UInt8] {
        switch self {
        case .wrongLength: [0x67, 0x00]
        case .classNotSupported: [0x6E, 0x00]
        case .instructionInvalid: [0x6D, 0x00]
        }
    }
}

/// Parses short and extended command APDUs (ISO/IEC 7816-4 §5.2, cases 1–4).
func parseCommand(_ bytes: [UInt8]) -> Result<ParsedCommand, CommandFault> {
    guard bytes.count >= 4 else { return .failure(.wrongLength) }
    let cla = bytes[0], ins = bytes[1]
    if cla == 0xFF { return .failure(.classNotSupported) }
    if ins & 0xF0 == 0x60 || ins & 0xF0 == 0x90 { return .failure(.instructionInvalid) }
    var cmd = ParsedCommand(cla: cla, ins: ins, p1: bytes[2], p2: bytes[3], data: [], ne: nil)
    let body = Array(bytes.dropFirst(4))
    if body.isEmpty { return .success(cmd) }  // case 1
    if body.count == 1 {  // case 2 short
        cmd.ne = body[0] == 0 ? 256 : Int(body[0])
        return .success(cmd)
    }
    if body[0] != 0 {  // short Lc
        let lc = Int(body[0])
        if body.count == 1 + lc {
            cmd.data = Array(body[1...lc])
            return .success(cmd)
        }
        if body.count == 2 + lc {
            cmd.data = Array(body[1...lc])
            cmd.ne = body[1 + lc] == 0 ? 256 : Int(body[1 + lc])
            return .success(cmd)
        }
        return .failure(.wrongLength)
    }
    // Extended: body[0] == 00.
    if body.count == 3 {  // case 2 extended
        let le = Int(body[1]) << 8 | Int(body[2])
        cmd.ne = le == 0 ? 65536 : le
        return .success(cmd)
    }
    guard body.count >= 3 else { return .failure(.wrongLength) }
    let lc = Int(body[1]) << 8 | Int(body[2])
    guard lc > 0 else { return .failure(.wrongLength) }
    if body.count == 3 + lc {
        cmd.data = Array(body[3..<(3 + lc)])
        return .success(cmd)
    }
    if body.count == 5 + lc {
        cmd.data = Array(body[3..<(3 + lc)])
        let le = Int(body[3 + lc]) << 8 | Int(body[4 + lc])
        cmd.ne = le == 0 ? 65536 : le
        return .success(cmd)
    }
    return .failure(.wrongLength)
}
