import NFCBenchKit
import ReaderFrontend
import ReaderSession

/// Turns a `--device` string into the one reader frontend over a thin device, the same for
/// every command (session, dump, measure, write, format, lock, demo), through NFCBenchKit's
/// ``BenchDevice`` (the strings it takes are in its documentation: `sim:SCENARIO`,
/// `pcsc:NAME`, `pcsc:0`, `pcsc:TEXT`, `pcsc`, any libnfc connstring, `libnfc`).
///
/// Resolving sends nothing to a reader: it checks that the PC/SC reader is listed or that a
/// serial path exists. The device itself is opened by the frontend when polling starts,
/// after the reader's lock was taken (locks before frames).
enum DeviceFactory {
    /// A resolved device string: the name the reader is locked and traced by, and its kind.
    typealias Spec = BenchDevice

    struct Options: Sendable {
        /// Presence checks of hardware readers; `nil` = the device's own interval.
        var presenceInterval: Duration? = nil
    }

    /// Resolves `device` (see ``BenchDevice``). Throws usage (64), data (65), no input (66) or
    /// unavailable (69, also when the readers' lock folder is refused: every device is locked
    /// before use).
    static func resolve(_ device: String) throws(CLIError) -> Spec {
        try requireLockFolder()
        do { return try BenchDevice(device) } catch { throw CLIError(error) }
    }

    /// The frontend for `spec` (nothing is opened yet).
    static func frontend(
        _ spec: Spec, clock: any ReaderSessionClock = ContinuousReaderClock(), options: Options = Options()
    ) throws(CLIError) -> ReaderFrontend {
        do { return try spec.frontend(clock: clock, presenceInterval: options.presenceInterval) } catch {
            throw CLIError(error)
        }
    }

    /// `resolve` + `frontend`: the reader a session runs on.
    static func backend(_ device: String, options: Options = Options()) throws(CLIError) -> ReaderFrontend {
        try frontend(resolve(device), options: options)
    }
}

extension CLIError {
    /// A device string's error with the exit status its kind documents (``BenchDeviceError``).
    init(_ error: BenchDeviceError) {
        if let file = error.dataFileError {
            self.init(file)
            return
        }
        switch error.kind {
        case .invalid, .ambiguous: self = .usage(error.message)
        case .notFound: self = .noInput(error.message)
        case .unavailable, .dataFile: self = .unavailable(error.message)
        }
    }
}

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
