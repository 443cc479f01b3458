internal import CNFC
import Synchronization

/// A libnfc context (`nfc_init`).
///
/// Every `LibNFCContext` shares one C context, created on first use and never exited.
/// libnfc 1.8.0 keeps its driver list in a process-wide global that `nfc_init` fills when it
/// is empty and `nfc_exit` frees, whichever context is exited (libnfc/nfc.c:230-257): one
/// context exited while another opens a device leaves that one walking a freed list or none
/// at all (`NFC_ENOTSUCHDEV`). libnfc guards none of its globals, so creating the context,
/// opening and listing devices, and reading the driver list run under one lock.
public final class LibNFCContext: Sendable {
    // unsafe: a C handle that never changes; the calls on it (list, open) run under `shared`, libnfc's globals' lock
    nonisolated(unsafe) let pointer: LibNFCContextPointer

    private struct Shared {
        var context: LibNFCContextPointer?
    }
    /// The process's libnfc context; the lock around libnfc's globals.
    private static let shared = Mutex(Shared())

    /// Wraps `nfc_init` (once per process). Reads `/etc/nfc/libnfc.conf` and the
    /// `LIBNFC_DEVICE`, `LIBNFC_AUTO_SCAN`, `LIBNFC_INTRUSIVE_SCAN`, `LIBNFC_LOG_LEVEL`
    /// environment variables then. Throws `NFC_ESOFT` when libnfc cannot allocate the context.
    public init() throws {
        let p = Self.shared.withLock { s -> LibNFCContextPointer? in
            if s.context == nil { s.context = libnfc_init() }
            return s.context
        }
        guard let p else {
            throw LibNFCError(code: .software, operation: "nfc_init", message: "cannot allocate a libnfc context")
        }
        pointer = p
    }

    /// libnfc's version string (`nfc_version`), e.g. "1.8.0".
    public static var version: String { libnfc_version() }

    /// The names of the drivers the installed libnfc was built with, sorted: Debian's
    /// libnfc 1.8.0 has `["ACR122S", "acr122_usb", "arygon", "pn532_i2c", "pn532_spi",
    /// "pn532_uart", "pn53x_usb"]` (no `pcsc`, `acr122_pcsc` or `pn71xx`). A connstring
    /// starts with one of them (`pn532_uart:/dev/ttyUSB0`). Read from libnfc's
    /// `nfc_drivers` list (libnfc/nfc.c:135-140; see the CNFC shim); `[]` when libnfc
    /// cannot make a context.
    public static var driverNames: [String] {
        guard (try? LibNFCContext()) != nil else { return [] }
        return shared.withLock { _ in libnfc_driver_names() }.sorted()
    }

    /// Connstrings of the devices libnfc knows (`nfc_list_devices`): the configured ones
    /// and, with auto-scan, the ones it finds (e.g. `pn532_uart:/dev/ttyUSB0`). At most `max`.
    public func listDevices(max: Int = 16) -> [String] {
        Self.shared.withLock { _ in libnfc_list_devices(pointer, max: Swift.max(1, max)) }
    }

    /// Opens a device (`nfc_open`) by connstring, e.g. `pn532_uart:/tmp/pn532`; `nil`
    /// opens libnfc's first device. Throws `NFC_ENOTSUCHDEV` when libnfc cannot open it
    /// (its log, `LIBNFC_LOG_LEVEL=3`, says why).
    public func open(_ connstring: String? = nil) throws -> LibNFCDevice {
        let target = connstring ?? listDevices(max: 1).first
        guard let target, let device = Self.shared.withLock({ _ in libnfc_open(pointer, target) }) else {
            throw LibNFCError(
                code: .noSuchDevice, operation: "nfc_open",
                message: "cannot open \(connstring ?? "the first device")")
        }
        return LibNFCDevice(device: device, context: self)
    }
}
