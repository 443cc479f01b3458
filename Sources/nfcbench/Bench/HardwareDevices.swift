import Foundation
import NFCHardware
import NFCTags

/// The two openers the frontend calls on its device thread when polling starts (after the
/// reader's lock was taken).
enum HardwareDevices {
    /// ``PCSCReaderDevice``: `SCardEstablishContext`, the reader checked.
    static func openPCSC(reader: String) throws(NFCDeviceError) -> any NFCDevice {
        try PCSCReaderDevice(reader: reader)
    }

    /// ``LibNFCReaderDevice``: `nfc_open` and `nfc_initiator_init`.
    static func openLibNFC(connstring: String) throws(NFCDeviceError) -> any NFCDevice {
        do throws(NFCDeviceError) {
            return try LibNFCReaderDevice(connstring: connstring)
        } catch {
            throw NFCDeviceError(error.kind, error.reason + openHint(connstring: connstring))
        }
    }

    /// What to check when libnfc can't open `connstring`, from what its path is now: gone
    /// (unplugged, a virtual PN532 that stopped), not a serial device, or a serial device
    /// that another program may hold (libnfc takes no lock of its own).
    static func openHint(connstring: String) -> String {
        guard let path = LibNFCDevices.path(connstring) else { return " (is it plugged in? run 'nfcbench doctor')" }
        var st = stat()
        guard stat(path, &st) == 0 else {
            return " (\(path) does not exist now: is the reader plugged in, or did the virtual PN532 stop?)"
        }
        guard st.st_mode & S_IFMT == S_IFCHR else { return " (\(path) is not a serial device)" }
        return " (is another program using \(path)? run 'nfcbench doctor')"
    }
}
