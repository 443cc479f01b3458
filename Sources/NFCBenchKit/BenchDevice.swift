public import Foundation
public import NFCFiles
import NFCHardware
import ReaderSessionLocks
import VirtualHardware

/// A reader named by the strings the `nfcbench` command's `--device` takes, resolved: the
/// library's `ContactlessFrontend(path)` (nfcpy) or `nfc_open(connstring)` (libnfc).
///
/// | string | device |
/// | --- | --- |
/// | `sim:SCENARIO` | the in-process simulated reader playing `hardware/scenarios/SCENARIO.json` (or a scenario file's path) |
/// | `sim:tag:FILE` | the simulated reader with the tag file FILE (a path, or a name in `hardware/tags/`) in its field from the start; `sim:PATH` of a tag file too (a bare name is always a scenario's) |
/// | `pcsc:NAME` | the PC/SC reader of that name (`nfcbench devices` lists them) |
/// | `pcsc:0`, `pcsc:1`… | the PC/SC reader at that place in pcscd's list (`SCardListReaders`, as `pcsc_scan` and `opensc-tool -r` number them) |
/// | `pcsc:TEXT` | the one PC/SC reader whose name contains `TEXT` (any case) |
/// | `pcsc` | the only PC/SC reader |
/// | `DRIVER:…` | a libnfc connstring, for any driver the installed libnfc has (`pn532_uart:/dev/ttyUSB0`) |
/// | `libnfc` | the first device libnfc finds |
///
/// For `pcsc:`, an exact name always wins: a number or a piece of a name is read as one only
/// when no reader is called that. A piece of a name that fits several readers is
/// ``BenchDeviceError/Kind/ambiguous``, naming them.
///
/// Resolving sends nothing to a reader: it asks pcscd for its list of readers, checks that a
/// serial path exists, or reads the scenario. ``frontend(clock:presenceInterval:)`` makes the
/// reader frontend, which opens the device when polling starts (or at
/// ``/ReaderFrontend/ReaderFrontend/open()``); ``openDevice(clock:)`` opens the thin device at once.
///
/// ```swift
/// let reader = try BenchDevice("pcsc:0").frontend()
/// let tag = try await reader.firstTarget(timeout: .seconds(10))
/// print(tag.uid.hexString())
/// reader.close()
/// ```
public struct BenchDevice: Sendable, Hashable, CustomStringConvertible {
    /// What kind of reader, and how it is reached.
    public enum Kind: Sendable, Hashable {
        /// The in-process simulated reader playing the scenario file at this path.
        case simulated(String)
        /// The in-process simulated reader with the tag file at this path in its field from the
        /// start (`sim:tag:FILE`).
        case simulatedTag(String)
        /// The PC/SC reader of this exact name.
        case pcsc(reader: String)
        /// A libnfc device.
        case libnfc(connstring: String)
    }

    /// The string as given.
    public let string: String
    /// The reader's identity, which it is locked and traced by: `sim:NAME` as given,
    /// `pcsc:` and the reader's full name (so `pcsc:0` and the name are one reader), or the
    /// libnfc connstring with a serial path resolved to the device it points at (two links to
    /// one pty are one reader).
    public let identifier: String
    public let kind: Kind

    public var description: String { identifier }

    /// False for the simulated reader: nothing of the machine's hardware is touched (a command
    /// on it may keep its trace in another folder when the trace folder can't be written).
    public var touchesHardware: Bool {
        switch kind {
        case .simulated, .simulatedTag: false
        case .pcsc, .libnfc: true
        }
    }

    /// The files this device reads (a `sim:` scenario and its tag files, or `sim:tag:FILE`), for
    /// the check that no output of a command is one of them; none for hardware.
    public var inputFiles: [NamedFile] { Self.inputFiles(string) }

    /// ``inputFiles`` of a device string, without resolving it (none when it is no `sim:` one).
    public static func inputFiles(_ string: String) -> [NamedFile] {
        let (scheme, rest) = split(string)
        return scheme == "sim" ? SimulatedDevice.inputs(rest) : []
    }

    /// Two resolved strings are one device when they name the same reader (`pcsc:0` and its
    /// full name): same ``identifier`` and ``kind``, whatever was typed.
    public static func == (a: BenchDevice, b: BenchDevice) -> Bool { a.identifier == b.identifier && a.kind == b.kind }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(identifier)
        hasher.combine(kind)
    }

    /// The environment variable that names the default device (``default(environment:)``), as
    /// `LIBNFC_DEVICE` does for libnfc: `NFCBENCH_DEVICE`.
    public static let environmentVariable = "NFCBENCH_DEVICE"

    /// Resolves `string` (see the type's documentation).
    /// - Throws: ``BenchDeviceError``: `.invalid` for a string that names no device, `.ambiguous`,
    ///   `.notFound` for a missing scenario, `.dataFile` for one that can't be used,
    ///   `.unavailable` for no pcscd, no such reader or a serial path that does not exist.
    public init(_ string: String) throws(BenchDeviceError) {
        self.string = string
        let (scheme, rest) = Self.split(string)
        // One case per kind of reader: a new kind is one more case here and in Kind, with its
        // opener in openDevice(clock:) and frontend(clock:presenceInterval:).
        switch scheme {
        case "sim":
            switch try SimulatedDevice.source(rest) {
            case .scenario(let path): kind = .simulated(path)
            case .tag(let path): kind = .simulatedTag(path)
            }
            identifier = string
        case "pcsc":
            let readers = try Self.pcscReaders()
            let reader = try Self.pcscReader(rest, among: readers)
            kind = .pcsc(reader: reader)
            identifier = "pcsc:" + reader
        case "libnfc":
            guard let first = LibNFCDevices.firstDevice() else {
                throw BenchDeviceError(
                    .unavailable,
                    "libnfc finds no device (set LIBNFC_DEVICE or /etc/nfc/libnfc.conf; run 'nfcbench doctor')")
            }
            kind = .libnfc(connstring: first)
            identifier = LibNFCDevices.lockIdentity(first)
        default:
            guard LibNFCDevices.isConnstring(string) else {
                throw BenchDeviceError(
                    .invalid,
                    "unknown device '\(string)': use sim:SCENARIO, pcsc:READER (see 'nfcbench devices') or a libnfc connstring (drivers: \(LibNFCDevices.drivers.joined(separator: ", ")))"
                )
            }
            try LibNFCDevices.requirePath(string)
            kind = .libnfc(connstring: string)
            identifier = LibNFCDevices.lockIdentity(string)
        }
    }

    /// The device `$NFCBENCH_DEVICE` names, resolved; `nil` when it is unset or empty.
    public static func `default`(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(BenchDeviceError) -> BenchDevice? {
        guard let s = environment[environmentVariable], !s.isEmpty else { return nil }
        return try BenchDevice(s)
    }

    /// `given` when there is one, else `$NFCBENCH_DEVICE` (what a `--device` left out means).
    public static func string(
        _ given: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String? {
        if let given { return given }
        guard let s = environment[environmentVariable], !s.isEmpty else { return nil }
        return s
    }

    /// `DEVICE` → (`DEVICE`, ""); `pcsc:NAME` → (`pcsc`, `NAME`).
    public static func split(_ device: String) -> (scheme: String, rest: String) {
        guard let colon = device.firstIndex(of: ":") else { return (device, "") }
        return (String(device[..<colon]), String(device[device.index(after: colon)...]))
    }

    // MARK: PC/SC names

    /// What pcscd lists (`SCardListReaders`), in its order.
    /// - Throws: ``BenchDeviceError/Kind/unavailable`` when pcscd does not answer.
    public static func pcscReaders() throws(BenchDeviceError) -> [String] {
        do {
            return try PCSCContext().readers()
        } catch {
            throw BenchDeviceError(
                .unavailable,
                "no PC/SC service: \(error) (is pcscd running? start it, or run the command through \(BenchData.withPCSCDHint) for a private pcscd with vpcd's reader; 'nfcbench doctor' checks the bench)"
            )
        }
    }

    /// The reader `text` (what follows `pcsc:`) names among `readers` (pcscd's list, in its
    /// order): the reader of that exact name; else, for a number, the reader at that index; else
    /// the one reader whose name contains `text`, ignoring case; `""` names the only reader.
    /// Pure: the rules `pcsc:` resolves by.
    /// - Throws: ``BenchDeviceError``: `.ambiguous` (several readers fit, or `""` with several
    ///   readers), `.unavailable` (none fits; ``BenchDeviceError/candidates`` lists the readers).
    public static func pcscReader(_ text: String, among readers: [String]) throws(BenchDeviceError) -> String {
        let all = readers.map { "pcsc:" + $0 }
        if readers.contains(text) { return text }
        if text.isEmpty {
            guard let only = readers.first else { throw BenchDeviceError(.invalid, "no PC/SC reader connected") }
            guard readers.count == 1 else {
                throw BenchDeviceError(
                    .ambiguous, "several PC/SC readers; name one: \(numbered(readers))", candidates: all)
            }
            return only
        }
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            guard let i = Int(text), i < readers.count else {
                throw BenchDeviceError(
                    .unavailable,
                    "pcscd has no reader '\(text)' (\(readers.count) reader\(readers.count == 1 ? "" : "s"), numbered from 0); it has: "
                        + (readers.isEmpty ? "none" : numbered(readers)), candidates: all)
            }
            return readers[i]
        }
        let fits = readers.filter { $0.lowercased().contains(text.lowercased()) }
        if fits.count == 1 { return fits[0] }
        if fits.count > 1 {
            throw BenchDeviceError(
                .ambiguous,
                "'pcsc:\(text)' fits several PC/SC readers: \(fits.map { "pcsc:" + $0 }.joined(separator: ", ")); name one exactly, or by its number (\(numbered(readers)))",
                candidates: fits.map { "pcsc:" + $0 })
        }
        throw BenchDeviceError(
            .unavailable, "pcscd has no reader '\(text)'; it has: " + (readers.isEmpty ? "none" : numbered(readers)),
            candidates: all)
    }

    /// `pcsc:A (pcsc:0), pcsc:B (pcsc:1)`.
    static func numbered(_ readers: [String]) -> String {
        var out = ""
        for (i, r) in readers.enumerated() { out += (i == 0 ? "" : ", ") + "pcsc:\(r) (pcsc:\(i))" }
        return out
    }

    // MARK: Opening

    /// The thin device itself, opened now (`nfc_open`, `SCardEstablishContext`; the simulator
    /// starts its scenario when the field comes on), for a program that drives an
    /// ``/NFCBase/NFCDevice`` directly. Most want ``frontend(clock:presenceInterval:)``.
    /// - Parameter clock: the simulator's clock (a ``/NFCBase/ManualClock`` gives virtual time).
    /// - Throws: ``BenchDeviceError``: `.unavailable` when the device does not open, `.notFound`
    ///   or `.dataFile` for a scenario's tag files.
    public func openDevice(clock: any ReaderSessionClock = ContinuousReaderClock()) throws(BenchDeviceError)
        -> any NFCDevice
    {
        switch kind {
        case .simulated(let scenario): return try SimulatedDevice.reader(scenario, clock: clock).field
        case .simulatedTag(let path): return try SimulatedDevice.tagReader(path, clock: clock).field
        case .pcsc(let reader): return try opened { () throws(NFCDeviceError) in try PCSCReaderDevice(reader: reader) }
        case .libnfc(let connstring):
            return try opened { () throws(NFCDeviceError) in try LibNFCDevices.open(connstring: connstring) }
        }
    }

    private func opened(_ open: () throws(NFCDeviceError) -> any NFCDevice) throws(BenchDeviceError) -> any NFCDevice {
        do { return try open() } catch { throw BenchDeviceError(.unavailable, "can't open \(identifier): \(error)") }
    }

    /// The reader frontend over this device (discovery, target ids, presence, the session
    /// runtime's backend), the one every `nfcbench` command uses. Nothing is opened yet:
    /// hardware opens on the frontend's own thread when polling starts (or at
    /// ``/ReaderFrontend/ReaderFrontend/open()``), after the caller took the reader's lock.
    ///
    /// Installs the lock folder as the session arbiter's cross-process locks unless the host
    /// installed some (``/ReaderSession/SessionArbiter/installCrossProcessLocksIfNone(_:)``), so
    /// sessions on this reader exclude the `nfcbench` command's sessions on it (203), as they do
    /// each other.
    /// - Parameters:
    ///   - clock: paces presence checks and the simulator's scenario.
    ///   - presenceInterval: how often a hardware reader's target is checked; `nil`: the
    ///     device's own interval (libnfc 100 ms, PC/SC 250 ms).
    /// - Throws: ``BenchDeviceError`` (`.notFound`, `.dataFile`) for a scenario's tag files.
    public func frontend(
        clock: any ReaderSessionClock = ContinuousReaderClock(), presenceInterval: Duration? = nil
    ) throws(BenchDeviceError) -> ReaderFrontend {
        SessionArbiter.installCrossProcessLocksIfNone { LockFolder() }
        let configuration = ReaderFrontend.Configuration(presenceInterval: presenceInterval)
        switch kind {
        case .simulated(let scenario):
            let reader = try SimulatedDevice.reader(scenario, clock: clock)
            return ReaderFrontend(device: reader.field, clock: clock, configuration: configuration)
        case .simulatedTag(let path):
            let reader = try SimulatedDevice.tagReader(path, clock: clock)
            return ReaderFrontend(device: reader.field, clock: clock, configuration: configuration)
        case .pcsc(let reader):
            return ReaderFrontend(
                identifier: identifier, clock: clock, configuration: configuration,
                open: { () throws(NFCDeviceError) in try PCSCReaderDevice(reader: reader) })
        case .libnfc(let connstring):
            return ReaderFrontend(
                identifier: identifier, clock: clock, configuration: configuration,
                open: { () throws(NFCDeviceError) in try LibNFCDevices.open(connstring: connstring) })
        }
    }

    /// ``init(_:)`` and ``frontend(clock:presenceInterval:)``: the reader named by `string`, or by
    /// `$NFCBENCH_DEVICE` when `string` is `nil`.
    /// - Throws: ``BenchDeviceError``; `.invalid` when neither names a device.
    public static func open(
        _ string: String? = nil, clock: any ReaderSessionClock = ContinuousReaderClock(),
        presenceInterval: Duration? = nil
    ) throws(BenchDeviceError) -> ReaderFrontend {
        guard let s = Self.string(string) else {
            throw BenchDeviceError(.invalid, "no device given and \(environmentVariable) is not set")
        }
        return try BenchDevice(s).frontend(clock: clock, presenceInterval: presenceInterval)
    }
}
