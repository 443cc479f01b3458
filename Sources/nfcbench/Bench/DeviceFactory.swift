import FoundationEssentials
import NFCFiles
import NFCHardware
import NFCTags
import ReaderFrontend
import ReaderSession

/// Turns a `--device` string into the one reader frontend over a thin device, the same for
/// every command (session, dump, measure, write, format, lock, demo).
///
/// | string | device |
/// | --- | --- |
/// | `sim:NAME` | the in-process simulated reader playing `hardware/scenarios/NAME.json` |
/// | `pcsc:READER NAME` | a PC/SC reader (`nfcbench devices` lists the names) |
/// | `pcsc` | the only PC/SC reader, or an error naming the choices |
/// | `DRIVER:…` | a libnfc connstring, for any driver the installed libnfc has (`pn532_uart:/dev/ttyUSB0`) |
/// | `libnfc` | the first device libnfc finds |
///
/// Resolving sends nothing to a reader: it checks that the PC/SC reader is listed or that a
/// serial path exists. The device itself is opened by the frontend when polling starts,
/// after the reader's lock was taken (locks before frames).
enum DeviceFactory {
    /// A resolved device string: the name the reader is locked and traced by, and how to
    /// make its frontend.
    struct Spec: Sendable {
        /// The reader's identity: `sim:NAME`, `pcsc:READER`, or the libnfc connstring with
        /// a serial path resolved to the device it points at (two links to one pty are one reader).
        var identifier: String
        var kind: Kind
        enum Kind: Sendable {
            case simulated(String)
            case pcsc(reader: String)
            case libnfc(connstring: String)
        }

        /// False for the simulated reader: a command on it may fall back to another trace folder.
        var touchesHardware: Bool {
            if case .simulated = kind { false } else { true }
        }
    }

    /// The files `device` reads (a `sim:` scenario and its tag files, or `sim:tag:FILE`), for the
    /// check that no output is one of them; none for hardware.
    static func inputs(_ device: String) -> [NamedFile] {
        let (scheme, rest) = split(device)
        return scheme == "sim" ? SimulatedDevice.inputs(rest) : []
    }

    struct Options: Sendable {
        /// Presence checks of hardware readers; `nil` = the device's own interval.
        var presenceInterval: Duration? = nil
    }

    /// Resolves `device` (see the table above). Throws usage (64), data (65) or unavailable (69,
    /// also when the readers' lock folder is refused: every device is locked before use).
    static func resolve(_ device: String) throws(CLIError) -> Spec {
        try requireLockFolder()
        let (scheme, rest) = split(device)
        switch scheme {
        case "sim":
            _ = try SimulatedDevice.source(rest)
            return Spec(identifier: device, kind: .simulated(rest))
        case "pcsc":
            let reader = rest.isEmpty ? try onlyPCSCReader() : rest
            try requirePCSCReader(reader)
            return Spec(identifier: "pcsc:" + reader, kind: .pcsc(reader: reader))
        case "libnfc":
            guard let first = LibNFCDevices.firstDevice() else {
                throw .unavailable(
                    "libnfc finds no device (set LIBNFC_DEVICE or /etc/nfc/libnfc.conf; run 'nfcbench doctor')")
            }
            return Spec(identifier: LibNFCDevices.lockIdentity(first), kind: .libnfc(connstring: first))
        default:
            guard LibNFCDevices.isConnstring(device) else {
                throw .usage(
                    "unknown device '\(device)': use sim:SCENARIO, pcsc:READER (see 'nfcbench devices') or a libnfc connstring (drivers: \(LibNFCDevices.drivers.joined(separator: ", ")))"
                )
            }
            try LibNFCDevices.requirePath(device)
            return Spec(identifier: LibNFCDevices.lockIdentity(device), kind: .libnfc(connstring: device))
        }
    }

    /// The frontend for `spec` (nothing is opened yet).
    static func frontend(
        _ spec: Spec, clock: any ReaderSessionClock = ContinuousReaderClock(), options: Options = Options()
    ) throws(CLIError) -> ReaderFrontend {
        let configuration = ReaderFrontend.Configuration(presenceInterval: options.presenceInterval)
        switch spec.kind {
        case .simulated(let name):
            let reader = try SimulatedDevice.reader(name, clock: clock)
            return ReaderFrontend(device: reader.field, clock: clock, configuration: configuration)
        case .pcsc(let reader):
            return ReaderFrontend(
                identifier: spec.identifier, clock: clock, configuration: configuration,
                open: { () throws(NFCDeviceError) in try HardwareDevices.openPCSC(reader: reader) })
        case .libnfc(let connstring):
            return ReaderFrontend(
                identifier: spec.identifier, clock: clock, configuration: configuration,
                open: { () throws(NFCDeviceError) in try HardwareDevices.openLibNFC(connstring: connstring) })
        }
    }

    /// `resolve` + `frontend`: the reader a session runs on.
    static func backend(_ device: String, options: Options = Options()) throws(CLIError) -> ReaderFrontend {
        try frontend(resolve(device), options: options)
    }

    static func split(_ device: String) -> (scheme: String, rest: String) {
        guard let colon = device.firstIndex(of: ":") else { return (device, "") }
        return (String(device[..<colon]), String(device[device.index(after: colon)...]))
    }

    /// A clear "unavailable" (69) when pcscd does not answer or has no reader of that name,
    /// before anything begins (a session would otherwise end as if the reader had failed).
    static func requirePCSCReader(_ reader: String) throws(CLIError) {
        let readers: [String]
        do {
            readers = try PCSCContext().readers()
        } catch {
            throw .unavailable(
                "no PC/SC service: \(error) (is pcscd running? start it, or run the command through \(DataLocation.withPCSCDHint) for a private pcscd with vpcd's reader; 'nfcbench doctor' checks the bench)"
            )
        }
        guard readers.contains(reader) else {
            throw .unavailable(
                "pcscd has no reader '\(reader)'; it has: "
                    + (readers.isEmpty ? "none" : readers.map { "pcsc:\($0)" }.joined(separator: ", ")))
        }
    }

    static func onlyPCSCReader() throws(CLIError) -> String {
        let readers: [String]
        do {
            readers = try PCSCContext().readers()
        } catch {
            throw .unavailable("no PC/SC service: \(error)")
        }
        guard readers.count == 1, let only = readers.first else {
            throw .usage(
                readers.isEmpty
                    ? "no PC/SC reader connected"
                    : "several PC/SC readers; name one: \(readers.map { "pcsc:\($0)" }.joined(separator: ", "))")
        }
        return only
    }
}
