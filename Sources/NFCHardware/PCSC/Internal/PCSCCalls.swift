// The one place NFCHardware's PC/SC code calls pcsc-lite: one internal function per C call,
// each turning the `LONG` result into a typed PCSCError (swift-system's Syscalls.swift style).
// On Linux pcsc-lite's DWORD is `unsigned long` and LONG is `long`: converted here, nowhere else.
internal import CPCSC
import Glibc

typealias PCSCContextHandle = Int
typealias PCSCCardHandle = Int

@inline(__always)
private func check(_ rv: Int, _ function: String) throws(PCSCError) {
    if rv != 0 { throw PCSCError(code: UInt32(truncatingIfNeeded: rv), function: function) }
}

/// `SCardEstablishContext(SCARD_SCOPE_SYSTEM, NULL, NULL, &ctx)`.
func pcscEstablishContext() throws(PCSCError) -> PCSCContextHandle {
    var ctx: SCARDCONTEXT = 0
    try check(SCardEstablishContext(DWORD(SCARD_SCOPE_SYSTEM), nil, nil, &ctx), "SCardEstablishContext")
    return ctx
}

/// `SCardReleaseContext(ctx)`.
func pcscReleaseContext(_ ctx: PCSCContextHandle) throws(PCSCError) {
    try check(SCardReleaseContext(ctx), "SCardReleaseContext")
}

/// `SCardIsValidContext(ctx)`.
func pcscIsValidContext(_ ctx: PCSCContextHandle) -> Bool {
    SCardIsValidContext(ctx) == 0
}

/// `SCardCancel(ctx)`.
func pcscCancel(_ ctx: PCSCContextHandle) throws(PCSCError) {
    try check(SCardCancel(ctx), "SCardCancel")
}

/// `SCardListReaders(ctx, NULL, buf, &len)`, twice (size, then names); the multi-string
/// is split at NULs. `SCARD_E_NO_READERS_AVAILABLE` is an empty list.
func pcscListReaders(_ ctx: PCSCContextHandle) throws(PCSCError) -> [String] {
    for _ in 0..<3 {  // the list can grow between the two calls
        var length: DWORD = 0
        var rv = SCardListReaders(ctx, nil, nil, &length)
        if UInt32(truncatingIfNeeded: rv) == PCSCError.noReadersAvailable.code { return [] }
        try check(rv, "SCardListReaders")
        var buffer = [CChar](repeating: 0, count: Int(length))
        rv = SCardListReaders(ctx, nil, &buffer, &length)
        if UInt32(truncatingIfNeeded: rv) == PCSCError.noReadersAvailable.code { return [] }
        if UInt32(truncatingIfNeeded: rv) == PCSCError.insufficientBuffer.code { continue }
        try check(rv, "SCardListReaders")
        let bytes = buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }
        return bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }
    throw PCSCError(code: PCSCError.insufficientBuffer.code, function: "SCardListReaders")
}

/// One reader's row for `SCardGetStatusChange`, in Swift terms.
struct PCSCRawReaderState {
    var name: String
    var currentState: UInt32
    var eventState: UInt32 = 0
    var atr: [UInt8] = []
}

/// `SCardGetStatusChange(ctx, timeoutMs, states, n)`; `timeoutMs` `nil` = `INFINITE`.
/// Returns the rows with `dwEventState` and the ATR filled in.
func pcscGetStatusChange(
    _ ctx: PCSCContextHandle, timeoutMs: UInt32?, _ rows: [PCSCRawReaderState]
) throws(PCSCError) -> [PCSCRawReaderState] {
    // Keep the C strings alive for the whole call.
    let names: [UnsafeMutablePointer<CChar>?] = rows.map { strdup($0.name) }
    defer { for n in names { free(n) } }
    var states: [SCARD_READERSTATE] = rows.indices.map { i in
        var s = SCARD_READERSTATE()
        s.szReader = UnsafePointer(names[i])
        s.dwCurrentState = DWORD(rows[i].currentState)
        return s
    }
    let rv = SCardGetStatusChange(
        ctx, DWORD(timeoutMs ?? UInt32(INFINITE)), &states, DWORD(states.count))
    try check(rv, "SCardGetStatusChange")
    return rows.indices.map { i in
        var out = rows[i]
        out.eventState = UInt32(truncatingIfNeeded: states[i].dwEventState)
        let n = min(Int(states[i].cbAtr), Int(MAX_ATR_SIZE))
        out.atr = withUnsafeBytes(of: states[i].rgbAtr) { Array($0.prefix(n)) }
        return out
    }
}

/// `SCardConnect(ctx, reader, share, protocols, &card, &active)`; returns (card, active).
func pcscConnect(
    _ ctx: PCSCContextHandle, reader: String, shareMode: UInt32, protocols: UInt32
) throws(PCSCError) -> (PCSCCardHandle, UInt32) {
    var card: SCARDHANDLE = 0
    var active: DWORD = 0
    try check(
        SCardConnect(ctx, reader, DWORD(shareMode), DWORD(protocols), &card, &active), "SCardConnect")
    return (card, UInt32(truncatingIfNeeded: active))
}

/// `SCardReconnect(card, share, protocols, initialization, &active)`; returns the protocol.
func pcscReconnect(
    _ card: PCSCCardHandle, shareMode: UInt32, protocols: UInt32, initialization: UInt32
) throws(PCSCError) -> UInt32 {
    var active: DWORD = 0
    try check(
        SCardReconnect(card, DWORD(shareMode), DWORD(protocols), DWORD(initialization), &active),
        "SCardReconnect")
    return UInt32(truncatingIfNeeded: active)
}

/// `SCardDisconnect(card, disposition)`.
func pcscDisconnect(_ card: PCSCCardHandle, disposition: UInt32) throws(PCSCError) {
    try check(SCardDisconnect(card, DWORD(disposition)), "SCardDisconnect")
}

/// The receive buffer ``pcscTransmit(_:activeProtocol:_:into:)`` needs: an extended R-APDU
/// (65536 + 2 bytes), the most PC/SC can carry.
let pcscReceiveCapacity = 65536 + 2

/// `SCardTransmit(card, pci, apdu, n, NULL, buf, &len)` with `SCARD_PCI_T0`/`T1`/`RAW`
/// (through the CPCSC shims) chosen by the active protocol, into `buffer` (at least
/// ``pcscReceiveCapacity`` bytes, reused by the caller: no allocation per APDU). Returns the
/// answer's length.
func pcscTransmit(
    _ card: PCSCCardHandle, activeProtocol: UInt32, _ apdu: [UInt8], into buffer: UnsafeMutableBufferPointer<UInt8>
) throws(PCSCError) -> Int {
    let pci = pcscSendPCI(activeProtocol)
    return try apdu.withUnsafeBufferPointer { (send) throws(PCSCError) -> Int in
        try pcscTransmit(card, pci: pci, send, into: buffer)
    }
}

/// `SCARD_PCI_T0`, `SCARD_PCI_T1` or `SCARD_PCI_RAW` (through the CPCSC shims) for the active
/// protocol.
func pcscSendPCI(_ activeProtocol: UInt32) -> UnsafePointer<SCARD_IO_REQUEST> {
    switch activeProtocol {
    case UInt32(SCARD_PROTOCOL_T0): CPCSC_pciT0()
    case UInt32(SCARD_PROTOCOL_T1): CPCSC_pciT1()
    default: CPCSC_pciRaw()
    }
}

/// `SCardTransmit(card, pci, send, n, NULL, buffer, &len)` with the PCI already chosen
/// (``pcscSendPCI(_:)``) and the command's bytes already in memory: the call alone, for a
/// caller that times it. Returns the answer's length.
func pcscTransmit(
    _ card: PCSCCardHandle, pci: UnsafePointer<SCARD_IO_REQUEST>, _ send: UnsafeBufferPointer<UInt8>,
    into buffer: UnsafeMutableBufferPointer<UInt8>
) throws(PCSCError) -> Int {
    var length = DWORD(buffer.count)
    try check(
        SCardTransmit(card, pci, send.baseAddress, DWORD(send.count), nil, buffer.baseAddress, &length),
        "SCardTransmit")
    return min(Int(length), buffer.count)
}

/// The reader's largest APDU data size, from PC/SC part 10's FEATURE_GET_TLV_PROPERTIES
/// (`SCardControl` with `CM_IOCTL_GET_FEATURE_REQUEST`, then the feature's control code;
/// property `dwMaxAPDUDataSize`, PC/SC 2.02.09 part 10 §2.6.14). `nil` when the reader does
/// not offer the feature (vpcd 3.3, many readers): only short APDUs are known to pass.
func pcscMaxAPDUDataSize(_ card: PCSCCardHandle) -> Int? {
    var buffer = [UInt8](repeating: 0, count: 256)
    func control(_ code: UInt32) -> [UInt8]? {
        var returned: DWORD = 0
        let rv = buffer.withUnsafeMutableBytes { out in
            SCardControl(card, DWORD(code), nil, 0, out.baseAddress, DWORD(out.count), &returned)
        }
        return rv == 0 ? Array(buffer.prefix(Int(returned))) : nil
    }
    // CM_IOCTL_GET_FEATURE_REQUEST = SCARD_CTL_CODE(3400) (reader.h): tag, length 4, code (big-endian).
    guard let features = control(0x4200_0000 + 3400) else { return nil }
    var i = 0
    var tlvCode: UInt32? = nil
    while i + 6 <= features.count {
        if features[i] == UInt8(FEATURE_GET_TLV_PROPERTIES), features[i + 1] == 4 {
            tlvCode = features[(i + 2)..<(i + 6)].reduce(0) { $0 << 8 | UInt32($1) }
        }
        i += 2 + Int(features[i + 1])
    }
    guard let tlvCode, let properties = control(tlvCode) else { return nil }
    // Properties: tag, length, value little-endian.
    i = 0
    while i + 2 <= properties.count {
        let tag = properties[i]
        let length = Int(properties[i + 1])
        guard i + 2 + length <= properties.count else { return nil }
        if tag == UInt8(PCSCv2_PART10_PROPERTY_dwMaxAPDUDataSize), length == 4 {
            return properties[(i + 2)..<(i + 6)].reversed().reduce(0) { $0 << 8 | Int($1) }
        }
        i += 2 + length
    }
    return nil
}

/// What `SCardStatus` reports.
struct PCSCRawCardStatus {
    var readerNames: [String]
    var state: UInt32
    var activeProtocol: UInt32
    var atr: [UInt8]
}

/// `SCardStatus(card, names, &nameLen, &state, &protocol, atr, &atrLen)`.
func pcscStatus(_ card: PCSCCardHandle) throws(PCSCError) -> PCSCRawCardStatus {
    var nameLength: DWORD = 0
    var state: DWORD = 0
    var proto: DWORD = 0
    var atrLength = DWORD(MAX_ATR_SIZE)
    var atr = [UInt8](repeating: 0, count: Int(MAX_ATR_SIZE))
    try check(SCardStatus(card, nil, &nameLength, &state, &proto, &atr, &atrLength), "SCardStatus")
    var names = [CChar](repeating: 0, count: max(Int(nameLength), 1))
    atrLength = DWORD(MAX_ATR_SIZE)
    try check(SCardStatus(card, &names, &nameLength, &state, &proto, &atr, &atrLength), "SCardStatus")
    let bytes = names.prefix(Int(nameLength)).map { UInt8(bitPattern: $0) }
    return PCSCRawCardStatus(
        readerNames: bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) },
        state: UInt32(truncatingIfNeeded: state),
        activeProtocol: UInt32(truncatingIfNeeded: proto),
        atr: Array(atr.prefix(min(Int(atrLength), Int(MAX_ATR_SIZE)))))
}
