import NFCHardware
import NFCTags

// TEMPORARY (frontend branch only, replaced when the thin hardware devices land): the
// two openers the frontend calls on its device thread.
enum HardwareDevices {
    static func openPCSC(reader: String) throws(NFCDeviceError) -> any NFCDevice {
        throw NFCDeviceError(.failed, "pcsc:\(reader): PC/SC device not wired yet")
    }
    static func openLibNFC(connstring: String) throws(NFCDeviceError) -> any NFCDevice {
        throw NFCDeviceError(.failed, "\(connstring): libnfc device not wired yet")
    }
}

extension LibNFCContext {
    static var driverNames: [String] {
        ["acr122_usb", "acr122s", "arygon", "pn532_i2c", "pn532_spi", "pn532_uart", "pn53x_usb"]
    }
}
