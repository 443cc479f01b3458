// One internal Swift function per libnfc C call, nothing else. Pointers, tuples and C
// enums stay in this folder; the public API sees Swift values only.
internal import CNFC

typealias LibNFCContextPointer = OpaquePointer
typealias LibNFCDevicePointer = OpaquePointer

/// `nfc_init`: a new context, or `nil` when libnfc cannot allocate one.
func libnfc_init() -> LibNFCContextPointer? {
    var context: OpaquePointer?
    nfc_init(&context)
    return context
}

/// `nfc_exit`.
func libnfc_exit(_ context: LibNFCContextPointer) { nfc_exit(context) }

/// `nfc_version`: e.g. "1.8.0".
func libnfc_version() -> String { String(cString: nfc_version()) }

/// The names in libnfc's driver list (`nfc_drivers`, through the CNFC shim), in list order.
func libnfc_driver_names() -> [String] {
    var names = [UnsafePointer<CChar>?](repeating: nil, count: 32)
    let count = cnfc_driver_names(&names, names.count)
    return names.prefix(min(count, names.count)).compactMap { $0.map { String(cString: $0) } }
}

/// `nfc_list_devices`: up to `max` connstrings (each a 1024-char `nfc_connstring`).
func libnfc_list_devices(_ context: LibNFCContextPointer, max: Int) -> [String] {
    let size = MemoryLayout<nfc_connstring>.size  // 1024
    var buffer = [CChar](repeating: 0, count: size * max)
    let found = buffer.withUnsafeMutableBytes { raw -> Int in
        let typed = raw.baseAddress!.assumingMemoryBound(to: nfc_connstring.self)
        return nfc_list_devices(context, typed, max)
    }
    return (0..<min(found, max)).map { i in
        let slice = buffer[(i * size)..<((i + 1) * size)]
        return String(decoding: slice.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// `nfc_open`: `nil` when the device cannot be opened (libnfc logs why).
func libnfc_open(_ context: LibNFCContextPointer, _ connstring: String) -> LibNFCDevicePointer? {
    // `const nfc_connstring` decays to `const char *`; libnfc copies at most 1023 chars.
    var bytes = Array(connstring.utf8.prefix(MemoryLayout<nfc_connstring>.size - 1)).map { CChar(bitPattern: $0) }
    bytes.append(0)
    return nfc_open(context, bytes)
}

/// `nfc_close`.
func libnfc_close(_ device: LibNFCDevicePointer) { nfc_close(device) }

/// `nfc_abort_command`: safe from another thread while a blocking call runs.
func libnfc_abort_command(_ device: LibNFCDevicePointer) -> Int32 { nfc_abort_command(device) }

/// `nfc_idle`.
func libnfc_idle(_ device: LibNFCDevicePointer) -> Int32 { nfc_idle(device) }

/// `nfc_device_get_name`.
func libnfc_device_get_name(_ device: LibNFCDevicePointer) -> String { String(cString: nfc_device_get_name(device)) }

/// `nfc_device_get_connstring`.
func libnfc_device_get_connstring(_ device: LibNFCDevicePointer) -> String {
    String(cString: nfc_device_get_connstring(device))
}

/// `nfc_device_get_last_error`: the last `NFC_E*` code.
func libnfc_device_get_last_error(_ device: LibNFCDevicePointer) -> Int32 { nfc_device_get_last_error(device) }

/// `nfc_strerror`: the text of the last error.
func libnfc_strerror(_ device: LibNFCDevicePointer) -> String { String(cString: nfc_strerror(device)) }

/// `nfc_device_get_supported_modulation`: the modulation types (raw `nfc_modulation_type`)
/// in `initiator` or target mode, or the negative error code.
func libnfc_device_get_supported_modulation(_ device: LibNFCDevicePointer, initiator: Bool) -> Result<
    [UInt32], LibNFCCode
> {
    var list: UnsafePointer<nfc_modulation_type>?
    let res = nfc_device_get_supported_modulation(device, initiator ? N_INITIATOR : N_TARGET, &list)
    guard res >= 0 else { return .failure(LibNFCCode(res)) }
    var out: [UInt32] = []
    var i = 0
    while let list, list[i].rawValue != 0 {
        out.append(list[i].rawValue)
        i += 1
    }
    return .success(out)
}

/// `nfc_device_set_property_bool`.
func libnfc_device_set_property_bool(_ device: LibNFCDevicePointer, _ property: UInt32, _ enable: Bool) -> Int32 {
    nfc_device_set_property_bool(device, nfc_property(rawValue: property), enable)
}

/// `nfc_device_set_property_int` (timeouts in ms).
func libnfc_device_set_property_int(_ device: LibNFCDevicePointer, _ property: UInt32, _ value: Int32) -> Int32 {
    nfc_device_set_property_int(device, nfc_property(rawValue: property), value)
}

/// `nfc_initiator_init`.
func libnfc_initiator_init(_ device: LibNFCDevicePointer) -> Int32 { nfc_initiator_init(device) }

func libnfc_modulation(_ m: LibNFCModulation) -> nfc_modulation {
    nfc_modulation(
        nmt: nfc_modulation_type(rawValue: m.type.rawValue), nbr: nfc_baud_rate(rawValue: m.baudRate.rawValue))
}

/// `nfc_initiator_list_passive_targets`: up to `max` targets, or the negative code.
func libnfc_initiator_list_passive_targets(_ device: LibNFCDevicePointer, _ m: LibNFCModulation, max: Int) -> Result<
    [LibNFCTarget], LibNFCCode
> {
    var targets = [nfc_target](repeating: nfc_target(), count: max)
    let res = nfc_initiator_list_passive_targets(device, libnfc_modulation(m), &targets, max)
    guard res >= 0 else { return .failure(LibNFCCode(res)) }
    return .success(targets.prefix(Int(res)).map(LibNFCTarget.init(c:)))
}

/// `nfc_initiator_select_passive_target`, optionally with a UID (`pbtInitData`).
func libnfc_initiator_select_passive_target(_ device: LibNFCDevicePointer, _ m: LibNFCModulation, uid: [UInt8])
    -> Result<LibNFCTarget?, LibNFCCode>
{
    var target = nfc_target()
    let res = uid.withUnsafeBufferPointer { buf in
        nfc_initiator_select_passive_target(
            device, libnfc_modulation(m), buf.isEmpty ? nil : buf.baseAddress, buf.count, &target)
    }
    guard res >= 0 else { return .failure(LibNFCCode(res)) }
    return .success(res == 0 ? nil : LibNFCTarget(c: target))
}

/// `nfc_initiator_poll_target`: `period` in 150 ms units (1…15), `pollCount` 0xFF = endless.
func libnfc_initiator_poll_target(
    _ device: LibNFCDevicePointer, _ ms: [LibNFCModulation], pollCount: UInt8, period: UInt8
) -> Result<LibNFCTarget?, LibNFCCode> {
    var target = nfc_target()
    let cms = ms.map(libnfc_modulation)
    let res = nfc_initiator_poll_target(device, cms, cms.count, pollCount, period, &target)
    guard res >= 0 else { return .failure(LibNFCCode(res)) }
    return .success(res == 0 ? nil : LibNFCTarget(c: target))
}

/// `nfc_initiator_deselect_target`.
func libnfc_initiator_deselect_target(_ device: LibNFCDevicePointer) -> Int32 { nfc_initiator_deselect_target(device) }

/// `nfc_initiator_transceive_bytes`: `timeout` in ms, 0 = forever, -1 = device default.
func libnfc_initiator_transceive_bytes(_ device: LibNFCDevicePointer, _ tx: [UInt8], rxCapacity: Int, timeout: Int32)
    -> Result<[UInt8], LibNFCCode>
{
    var rx = [UInt8](repeating: 0, count: rxCapacity)
    let res = nfc_initiator_transceive_bytes(device, tx, tx.count, &rx, rx.count, timeout)
    guard res >= 0 else { return .failure(LibNFCCode(res)) }
    return .success(Array(rx.prefix(Int(res))))
}

/// `nfc_initiator_target_is_present` on the current target (`pnt` NULL).
func libnfc_initiator_target_is_present(_ device: LibNFCDevicePointer) -> Int32 {
    nfc_initiator_target_is_present(device, nil)
}

/// `nfc_target_init` for an ISO 14443-4A PICC: returns the initiator's first frame (libnfc
/// returns nothing in PICC mode).
func libnfc_target_init(
    _ device: LibNFCDevicePointer, uid: [UInt8], atqa: [UInt8], sak: UInt8, ats: [UInt8], timeout: Int32
) -> Result<[UInt8], LibNFCCode> {
    var target = nfc_target()
    target.nm = nfc_modulation(nmt: NMT_ISO14443A, nbr: NBR_UNDEFINED)
    withUnsafeMutableBytes(of: &target.nti.nai) { raw in
        raw[0] = atqa.count == 2 ? atqa[0] : 0
        raw[1] = atqa.count == 2 ? atqa[1] : 0
    }
    target.nti.nai.btSak = sak
    target.nti.nai.szUidLen = uid.count
    withUnsafeMutableBytes(of: &target.nti.nai.abtUid) { raw in for (i, b) in uid.prefix(10).enumerated() { raw[i] = b }
    }
    target.nti.nai.szAtsLen = min(ats.count, 254)
    withUnsafeMutableBytes(of: &target.nti.nai.abtAts) { raw in
        for (i, b) in ats.prefix(254).enumerated() { raw[i] = b }
    }
    var rx = [UInt8](repeating: 0, count: 264)
    let res = nfc_target_init(device, &target, &rx, rx.count, timeout)
    guard res >= 0 else { return .failure(LibNFCCode(res)) }
    return .success(Array(rx.prefix(Int(res))))
}

/// `nfc_target_receive_bytes`: the next C-APDU; `timeout` as for transceive.
func libnfc_target_receive_bytes(_ device: LibNFCDevicePointer, timeout: Int32) -> Result<[UInt8], LibNFCCode> {
    var rx = [UInt8](repeating: 0, count: 264)
    let res = nfc_target_receive_bytes(device, &rx, rx.count, timeout)
    guard res >= 0 else { return .failure(LibNFCCode(res)) }
    return .success(Array(rx.prefix(Int(res))))
}

/// `nfc_target_send_bytes`.
func libnfc_target_send_bytes(_ device: LibNFCDevicePointer, _ tx: [UInt8], timeout: Int32) -> Int32 {
    nfc_target_send_bytes(device, tx, tx.count, timeout)
}

extension LibNFCTarget {
    init(c target: nfc_target) {
        let type = LibNFCModulation.ModulationType(rawValue: target.nm.nmt.rawValue) ?? .iso14443a
        let baud = LibNFCModulation.BaudRate(rawValue: target.nm.nbr.rawValue) ?? .undefined
        var t = target
        switch type {
        case .iso14443a:
            let nai = t.nti.nai
            let atqa = withUnsafeBytes(of: nai.abtAtqa) { Array($0) }
            let uid = withUnsafeBytes(of: nai.abtUid) { Array($0.prefix(min(nai.szUidLen, 10))) }
            let ats = withUnsafeBytes(of: nai.abtAts) { Array($0.prefix(min(nai.szAtsLen, 254))) }
            self.init(modulation: LibNFCModulation(type, baud), uid: uid, atqa: atqa, sak: nai.btSak, ats: ats)
        case .felica:
            let nfi = t.nti.nfi
            let id = withUnsafeBytes(of: nfi.abtId) { Array($0) }
            self.init(modulation: LibNFCModulation(type, baud), uid: id, atqa: [], sak: 0, ats: [])
            pmm = withUnsafeBytes(of: nfi.abtPad) { Array($0) }
            systemCode = withUnsafeBytes(of: nfi.abtSysCode) { Array($0) }
        case .iso14443b:
            let pupi = withUnsafeBytes(of: &t.nti.nbi.abtPupi) { Array($0) }
            self.init(modulation: LibNFCModulation(type, baud), uid: pupi, atqa: [], sak: 0, ats: [])
        default:
            self.init(modulation: LibNFCModulation(type, baud), uid: [], atqa: [], sak: 0, ats: [])
        }
    }
}
