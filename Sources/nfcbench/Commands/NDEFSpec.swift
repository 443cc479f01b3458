import NFCBenchKit

/// The `--ndef SPEC` syntax (``/NFCBenchKit/NDEFMessageSpec``): one record a spec, repeated
/// in order, or a file of NDEF message bytes. Errors are data errors (exit 65).
enum NDEFSpec {
    /// The lines `write --help` shows, indented for its OPTIONS block.
    static let help = NDEFMessageSpec.help

    /// The message one SPEC describes.
    static func parse(_ spec: String) throws(CLIError) -> [UInt8] { try parse([spec]) }

    /// The message of several specs, one record each in order (MB on the first, ME on the last).
    static func parse(_ specs: [String]) throws(CLIError) -> [UInt8] {
        do { return try NDEFMessageSpec.messageBytes(specs) } catch { throw .data(error.description) }
    }
}
