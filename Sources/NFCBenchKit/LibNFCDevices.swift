import Foundation
import NFCHardware

/// libnfc device strings: which drivers exist (from the installed libnfc), what a connstring
/// names, and what to check when one does not open.
public enum LibNFCDevices {
    /// The driver names of the installed libnfc (`nfc_drivers` after `nfc_init`), sorted.
    public static var drivers: [String] { LibNFCContext.driverNames }

    /// `true` for a connstring whose driver the installed libnfc has
    /// (`pn532_uart:/dev/ttyUSB0`, `acr122_usb:…`, or a bare driver name).
    public static func isConnstring(_ device: String) -> Bool {
        let driver = device.split(separator: ":", maxSplits: 1).first.map(String.init) ?? device
        return drivers.contains(driver)
    }

    /// The first device libnfc finds (`nfc_list_devices`), if any.
    public static func firstDevice() -> String? {
        (try? LibNFCContext())?.listDevices(max: 1).first
    }

    /// What libnfc lists (`nfc_list_devices`, with the configured and scanned devices).
    public static func list() -> [String] {
        (try? LibNFCContext())?.listDevices(max: 16) ?? []
    }

    /// The path a serial, SPI or I²C connstring names (`pn532_uart:/dev/ttyUSB0:115200` →
    /// `/dev/ttyUSB0`); `nil` for USB connstrings.
    public static func path(_ connstring: String) -> String? {
        let parts = connstring.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[1].hasPrefix("/") else { return nil }
        return String(parts[1])
    }

    /// The reader's identity for locks and traces: the connstring with its path resolved
    /// through symbolic links (a link to a pty and the pty are one reader).
    public static func lockIdentity(_ connstring: String) -> String {
        guard let path = path(connstring), let resolved = realpath(path, nil) else { return connstring }
        defer { free(resolved) }
        // realpath(3), not URL.resolvingSymlinksInPath: no Foundation type lookups on the way
        // to nfc_open (issue 15's start-up budget).
        // Concatenated, not joined(separator:) (a run-time associated-type lookup, which scans
        // every conformance in the program).
        var parts = connstring.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        parts[1] = String(cString: resolved)
        var out = parts[0]
        for p in parts.dropFirst() { out += ":" + p }
        return out
    }

    /// ``BenchDeviceError/Kind/unavailable`` when a serial path does not exist, before anything is opened.
    public static func requirePath(_ connstring: String) throws(BenchDeviceError) {
        guard let path = path(connstring) else { return }
        guard FileManager.default.fileExists(atPath: path) else {
            throw BenchDeviceError(
                .unavailable, "\(path) does not exist (is the reader plugged in? 'nfcbench doctor' checks the bench)")
        }
    }

    /// ``/NFCHardware/LibNFCReaderDevice``: `nfc_open` and `nfc_initiator_init`, with what to
    /// check added to libnfc's error (``openHint(connstring:)``).
    public static func open(connstring: String) throws(NFCDeviceError) -> any NFCDevice {
        do throws(NFCDeviceError) {
            return try LibNFCReaderDevice(connstring: connstring)
        } catch {
            throw NFCDeviceError(error.kind, error.reason + openHint(connstring: connstring))
        }
    }

    /// What to check when libnfc can't open `connstring`, from what its path is now: gone
    /// (unplugged, a virtual PN532 that stopped), not a serial device, or a serial device
    /// that another program may hold (libnfc takes no lock of its own).
    public static func openHint(connstring: String) -> String {
        guard let path = path(connstring) else { return " (is it plugged in? run 'nfcbench doctor')" }
        var st = stat()
        guard stat(path, &st) == 0 else {
            return " (\(path) does not exist now: is the reader plugged in, or did the virtual PN532 stop?)"
        }
        guard st.st_mode & S_IFMT == S_IFCHR else { return " (\(path) is not a serial device)" }
        return " (is another program using \(path)? run 'nfcbench doctor')"
    }
}
