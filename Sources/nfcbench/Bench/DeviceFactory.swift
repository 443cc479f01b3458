import NFCHardware
import NFCTags
import ReaderFrontend
import ReaderSession

/// Turns a `--device` string into a reader backend.
///
/// | string | backend |
/// | --- | --- |
/// | `pcsc:READER NAME` | a ``ReaderFrontend`` over ``PCSCReaderDevice`` on that PC/SC reader (`nfcbench devices` lists the names) |
/// | `pcsc` | the only PC/SC reader, or an error naming the choices |
/// | `sim:NAME` | the in-process simulated reader playing `hardware/scenarios/NAME.json` (``SimulatedDevice``) |
/// | `pn532_uart:PATH`, other libnfc connstrings | a ``ReaderFrontend`` over ``LibNFCReaderDevice`` (hook: `openLibNFCBackend` in LibNFCDevices.swift) |
enum DeviceFactory {
    struct Options: Sendable {
        var presenceCheckInterval: Duration = .milliseconds(250)
    }

    static func backend(_ device: String, options: Options = Options()) throws(CLIError) -> any ReaderBackend {
        if isLibNFCDevice(device) { return try openLibNFCBackend(device) }
        if split(device).scheme == "sim" {
            return try SimulatedDevice.backend(split(device).rest, clock: ContinuousReaderClock())
        }
        return try pcscBackend(device, options: options)
    }

    /// The PC/SC backend for `device`, or an error saying why it can't be one.
    static func pcscBackend(_ device: String, options: Options = Options()) throws(CLIError) -> ReaderFrontend {
        let (scheme, rest) = split(device)
        switch scheme {
        case "pcsc":
            let reader = rest.isEmpty ? try onlyPCSCReader() : rest
            try requirePCSCReader(reader)
            // Opened by the frontend on its device thread when polling starts.
            return ReaderFrontend(
                identifier: "pcsc:" + reader, configuration: .init(presenceInterval: options.presenceCheckInterval),
                open: { () throws(NFCDeviceError) in try PCSCReaderDevice(reader: reader) })
        case "sim":
            throw .usage("'\(device)' is the simulated reader, not a PC/SC reader")
        case let s where LibNFCContext.driverNames.contains(s):
            throw .unavailable(
                "libnfc devices ('\(scheme):') are not available to this command yet; use a pcsc: reader")
        default:
            throw .usage(
                "unknown device '\(device)': use pcsc:READER (see 'nfcbench devices'), sim:NAME or a libnfc connstring")
        }
    }

    static func split(_ device: String) -> (scheme: String, rest: String) {
        guard let colon = device.firstIndex(of: ":") else { return (device, "") }
        return (String(device[..<colon]), String(device[device.index(after: colon)...]))
    }

    /// A clear "unavailable" (69) when pcscd does not answer or has no reader of that name,
    /// before a session begins (a session would otherwise end as if the reader had failed).
    static func requirePCSCReader(_ reader: String) throws(CLIError) {
        let readers: [String]
        do {
            readers = try PCSCContext().readers()
        } catch {
            throw .unavailable("no PC/SC service: \(error) (is pcscd running? 'nfcbench doctor' checks the bench)")
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
