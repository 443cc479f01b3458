internal import CNFC
import Synchronization

/// A libnfc context (`nfc_init`), released with `nfc_exit` when the last reference goes.
/// Devices opened from it keep it alive.
public final class LibNFCContext: Sendable {
    nonisolated(unsafe) let pointer: LibNFCContextPointer

    /// Wraps `nfc_init`. Reads `/etc/nfc/libnfc.conf` and the `LIBNFC_DEVICE`,
    /// `LIBNFC_AUTO_SCAN`, `LIBNFC_INTRUSIVE_SCAN`, `LIBNFC_LOG_LEVEL` environment variables.
    /// Throws `NFC_ESOFT` when libnfc cannot allocate the context.
    public init() throws {
        guard let p = libnfc_init() else {
            throw LibNFCError(code: .software, operation: "nfc_init", message: "cannot allocate a libnfc context")
        }
        pointer = p
    }

    deinit { libnfc_exit(pointer) }

    /// libnfc's version string (`nfc_version`), e.g. "1.8.0".
    public static var version: String { libnfc_version() }

    /// Connstrings of the devices libnfc knows (`nfc_list_devices`): the configured ones
    /// and, with auto-scan, the ones it finds (e.g. `pn532_uart:/dev/ttyUSB0`). At most `max`.
    public func listDevices(max: Int = 16) -> [String] {
        libnfc_list_devices(pointer, max: Swift.max(1, max))
    }

    /// Opens a device (`nfc_open`) by connstring, e.g. `pn532_uart:/tmp/pn532`; `nil`
    /// opens libnfc's first device. Throws `NFC_ENOTSUCHDEV` when libnfc cannot open it
    /// (its log, `LIBNFC_LOG_LEVEL=3`, says why).
    public func open(_ connstring: String? = nil) throws -> LibNFCDevice {
        let target = connstring ?? listDevices(max: 1).first
        guard let target, let device = libnfc_open(pointer, target) else {
            throw LibNFCError(
                code: .noSuchDevice, operation: "nfc_open",
                message: "cannot open \(connstring ?? "the first device")")
        }
        return LibNFCDevice(device: device, context: self)
    }
}
