import NFCBenchKit

/// The device group: `--device D`, or `$NFCBENCH_DEVICE` when it is left out (as libnfc has
/// `LIBNFC_DEVICE`), the same strings for every command (``/NFCBenchKit/BenchDevice``).
enum DeviceOptions {
    static let help = """
        pcsc:READER (a name, an index such as pcsc:0, or a piece of one name), a libnfc
        connstring (pn532_uart:PATH, acr122_usb:…, libnfc), sim:SCENARIO (hardware/scenarios/)
        or sim:tag:FILE (a tag file in the simulated field); see 'nfcbench devices'
        """

    static func device(required: Bool = true, environment: Bool = true, help: String = help) -> OptionSpec {
        OptionSpec(
            "device", value: "D", help: help, group: .device, environment: environment ? "NFCBENCH_DEVICE" : nil,
            required: required, completion: .devices)
    }
}
