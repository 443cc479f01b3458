import NFCTags

/// What the phone's system answers before routing: a command APDU that can't be
/// processed gets its ISO/IEC 7816-4 status word (§5.6) from the system.
/// - bad length (fewer than 4 bytes, Lc/Le disagreeing with the byte count) → `67 00`
///   (`CommandAPDU(bytes:)` throws; assumed), except a SELECT (`INS A4`, short Lc) with bytes
///   past its Lc and Le → `6A 81`: reported, an iPhone answered `6A 81` to
///   `00 A4 04 00 08 <AID 8 bytes> 00 00` (Apple developer forums thread 774626);
/// - CLA `FF` (reserved for PPS, §5.4.1) → `6E 00`;
/// - INS `6X` or `9X` (invalid, §5.4.2) → `6D 00`.
enum ScreenedCommand {
    case command(CommandAPDU)
    case refused(StatusWord)
}

func screenCommand(_ bytes: [UInt8]) -> ScreenedCommand {
    let command: CommandAPDU
    do { command = try CommandAPDU(bytes: bytes) } catch {
        let trailingAfterSelect =
            bytes.count > 5 && bytes[1] == 0xA4 && bytes[4] != 0 && bytes.count > 6 + Int(bytes[4])
        return .refused(trailingAfterSelect ? .funcNotSupported : .wrongLength)
    }
    if command.cla == 0xFF { return .refused(.claNotSupported) }
    if command.ins & 0xF0 == 0x60 || command.ins & 0xF0 == 0x90 { return .refused(.insNotSupported) }
    return .command(command)
}
