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
            throw NFCDeviceError(error.kind, "\(error.reason) (is another program using it? run 'nfcbench doctor')")
        }
    }
}
