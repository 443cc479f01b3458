import Synchronization

/// An open libnfc device (`nfc_open`), closed with `nfc_close` by ``close()`` or when released.
///
/// Not thread-safe, as libnfc is not: the owner calls it from one thread at a time (the
/// reader frontend's device thread, or the thread `emulate` runs target mode on). Only
/// ``abort()`` may come from another thread while a call blocks, as libnfc intends.
public final class LibNFCDevice: Sendable {
    // unsafe: a C handle that never changes; used by one thread at a time (above); abort and close run under `closed`
    nonisolated(unsafe) let pointer: LibNFCDevicePointer
    let context: LibNFCContext
    /// Closed yet; held while aborting or closing, so an abort never reaches a closed device.
    private let closed = Mutex(false)

    init(device: LibNFCDevicePointer, context: LibNFCContext) {
        pointer = device
        self.context = context
    }

    deinit { close() }

    /// `nfc_close`: RF off, the port released. Idempotent; the device is unusable afterwards.
    public func close() {
        closed.withLock { c in
            guard !c else { return }
            c = true
            libnfc_close(pointer)
        }
    }

    /// `nfc_device_get_name`, e.g. "PN532 v1.6" or "user defined device".
    public var name: String { libnfc_device_get_name(pointer) }
    /// `nfc_device_get_connstring`.
    public var connstring: String { libnfc_device_get_connstring(pointer) }

    // MARK: plumbing

    private func error(_ raw: Int32, _ operation: String) -> LibNFCError {
        LibNFCError(code: .init(rawValue: raw), operation: operation, message: libnfc_strerror(pointer))
    }

    private func check(_ raw: Int32, _ operation: String) throws {
        if raw < 0 { throw error(raw, operation) }
    }

    private func unwrap<T>(_ r: Result<T, LibNFCCode>, _ operation: String) throws -> T {
        switch r {
        case .success(let v): return v
        case .failure(let c): throw error(c.rawValue, operation)
        }
    }

    /// Ends the blocking call running on this device (`nfc_abort_command`); that call fails
    /// with `NFC_EOPABORTED`. Safe from any thread. libnfc's `pn532_uart` driver aborts by
    /// replacing a pipe the call waits on, so an abort that comes before the call starts
    /// waiting is lost: bound blocking calls (finite polls, timeouts) rather than rely on it.
    public func abort() {
        closed.withLock { c in
            if !c { _ = libnfc_abort_command(pointer) }
        }
    }

    // MARK: device

    /// Modulation types the device offers (`nfc_device_get_supported_modulation`), as
    /// initiator (`initiator: true`) or as target.
    public func supportedModulations(initiator: Bool = true) throws -> [LibNFCModulation.ModulationType] {
        try unwrap(
            libnfc_device_get_supported_modulation(pointer, initiator: initiator),
            "nfc_device_get_supported_modulation"
        )
        .compactMap(LibNFCModulation.ModulationType.init(rawValue:))
    }

    /// Sets a boolean property (`nfc_device_set_property_bool`).
    public func setProperty(_ property: LibNFCProperty, _ enabled: Bool) throws {
        try check(
            libnfc_device_set_property_bool(pointer, property.rawValue, enabled), "nfc_device_set_property_bool")
    }

    /// Sets the default command timeout (`nfc_device_set_property_int(NP_TIMEOUT_COMMAND)`),
    /// in whole milliseconds; `.forever` = 0.
    public func setCommandTimeout(_ timeout: TransceiveTimeout) throws {
        try check(
            libnfc_device_set_property_int(pointer, 0, max(0, timeout.milliseconds)), "nfc_device_set_property_int")
    }

    /// Goes idle (`nfc_idle`): RF off, chip powered down.
    public func idle() throws { try check(libnfc_idle(pointer), "nfc_idle") }

    // MARK: initiator

    /// Becomes an initiator (`nfc_initiator_init`): RF on, infinite select, easy framing,
    /// automatic RATS, CRC and parity handled by the chip.
    public func initiatorInit() throws {
        try check(libnfc_initiator_init(pointer), "nfc_initiator_init")
    }

    /// Targets in the field (`nfc_initiator_list_passive_targets`), at most `max`.
    public func listPassiveTargets(_ modulation: LibNFCModulation = .iso14443a, max: Int = 4) throws -> [LibNFCTarget] {
        try unwrap(
            libnfc_initiator_list_passive_targets(pointer, modulation, max: Swift.max(1, max)),
            "nfc_initiator_list_passive_targets")
    }

    /// Selects one target (`nfc_initiator_select_passive_target`), the one with `uid` if
    /// given (ISO 14443A). `nil` when none answers.
    public func selectPassiveTarget(_ modulation: LibNFCModulation = .iso14443a, uid: [UInt8] = []) throws
        -> LibNFCTarget?
    {
        try unwrap(
            libnfc_initiator_select_passive_target(pointer, modulation, uid: uid),
            "nfc_initiator_select_passive_target")
    }

    /// Polls for a target (`nfc_initiator_poll_target`, PN53x InAutoPoll) among
    /// `modulations`: `count` polls (1…254; `nil` = endless, `0xFF`) of `period` per
    /// modulation each (rounded to libnfc's 150 ms steps, 1…15): a PN532 polls for about
    /// count × modulations × period (UM0701-02 §7.3.13; libnfc's `nfc-poll` prints the same
    /// product). Returns `nil` when the polls end without a target. An endless poll blocks
    /// until a target comes or ``abort()``.
    public func poll(
        _ modulations: [LibNFCModulation] = [.iso14443a], count: Int? = nil,
        period: Duration = .milliseconds(300)
    ) throws -> LibNFCTarget? {
        let pollCount: UInt8 = count.map { UInt8(clamping: min(254, max(1, $0))) } ?? 0xFF
        let ms = period.components.seconds * 1000 + period.components.attoseconds / 1_000_000_000_000_000
        let units = UInt8(clamping: min(15, max(1, (ms + 75) / 150)))
        return try unwrap(
            libnfc_initiator_poll_target(pointer, modulations, pollCount: pollCount, period: units),
            "nfc_initiator_poll_target")
    }

    /// Deselects the current target (`nfc_initiator_deselect_target`, PN53x InDeselect).
    public func deselect() throws {
        try check(libnfc_initiator_deselect_target(pointer), "nfc_initiator_deselect_target")
    }

    /// Sends bytes to the selected target and returns its answer
    /// (`nfc_initiator_transceive_bytes`). With easy framing on (default) an ISO-DEP
    /// target takes a C-APDU and returns an R-APDU; with it off the bytes go raw.
    /// At most 262 bytes out and `maxResponse` bytes back. Throws `LibNFCError`.
    public func transceive(_ bytes: [UInt8], timeout: TransceiveTimeout = .deviceDefault, maxResponse: Int = 264) throws
        -> [UInt8]
    {
        try unwrap(
            libnfc_initiator_transceive_bytes(
                pointer, bytes, rxCapacity: max(1, maxResponse), timeout: timeout.milliseconds),
            "nfc_initiator_transceive_bytes")
    }

    /// Whether the current target still answers (`nfc_initiator_target_is_present`):
    /// `false` on `NFC_ETGRELEASED`; other failures throw.
    public func isTargetPresent() throws -> Bool {
        let res = libnfc_initiator_target_is_present(pointer)
        if res == LibNFCError.Code.targetReleased.rawValue { return false }
        try check(res, "nfc_initiator_target_is_present")
        return true
    }

    // MARK: target (card emulation)

    /// Becomes an ISO/IEC 14443-4A card (`nfc_target_init`) and waits for a reader to
    /// activate it. A PN532 forces the first UID byte to `08` and takes 4-byte UIDs only.
    /// `atqa` as libnfc stores it (`00 04`), `ats` without TL (historical bytes are taken
    /// from it). Returns the initiator's first frame (empty in PICC mode).
    public func targetInit(
        uid: [UInt8] = [0x08, 0x00, 0xB0, 0x0B], atqa: [UInt8] = [0x00, 0x04], sak: UInt8 = 0x20,
        ats: [UInt8] = [0x75, 0x33, 0x92, 0x03], timeout: TransceiveTimeout = .forever
    ) throws -> [UInt8] {
        try unwrap(
            libnfc_target_init(pointer, uid: uid, atqa: atqa, sak: sak, ats: ats, timeout: timeout.milliseconds),
            "nfc_target_init")
    }

    /// The reader's next C-APDU (`nfc_target_receive_bytes`, PN53x TgGetData).
    /// `NFC_ETGRELEASED` when the reader left.
    public func targetReceive(timeout: TransceiveTimeout = .forever) throws -> [UInt8] {
        try unwrap(libnfc_target_receive_bytes(pointer, timeout: timeout.milliseconds), "nfc_target_receive_bytes")
    }

    /// Sends an R-APDU to the reader (`nfc_target_send_bytes`, PN53x TgSetData).
    public func targetSend(_ bytes: [UInt8], timeout: TransceiveTimeout = .forever) throws {
        try check(libnfc_target_send_bytes(pointer, bytes, timeout: timeout.milliseconds), "nfc_target_send_bytes")
    }
}
