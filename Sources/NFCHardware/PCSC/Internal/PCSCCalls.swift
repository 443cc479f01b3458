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

/// `SCardTransmit(card, pci, apdu, n, NULL, buf, &len)` with `SCARD_PCI_T0`/`T1`/`RAW`
/// (through the CPCSC shims) chosen by the active protocol. The receive buffer holds an
/// extended R-APDU (65536 + 2 bytes), the most PC/SC can carry.
func pcscTransmit(_ card: PCSCCardHandle, activeProtocol: UInt32, _ apdu: [UInt8]) throws(PCSCError) -> [UInt8] {
    let pci: UnsafePointer<SCARD_IO_REQUEST>
    switch activeProtocol {
    case UInt32(SCARD_PROTOCOL_T0): pci = CPCSC_pciT0()
    case UInt32(SCARD_PROTOCOL_T1): pci = CPCSC_pciT1()
    default: pci = CPCSC_pciRaw()
    }
    let capacity = 65536 + 2
    var rv = 0
    let answer = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
        var length = DWORD(capacity)
        rv = apdu.withUnsafeBufferPointer { send in
            SCardTransmit(card, pci, send.baseAddress, DWORD(send.count), nil, buffer.baseAddress, &length)
        }
        count = rv == 0 ? min(Int(length), capacity) : 0
    }
    try check(rv, "SCardTransmit")
    return answer
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
