public import ReaderFrontend
public import ReaderSession

/// Turns a `--device` string into the one reader frontend over a thin device, the same for
/// every command (session, dump, measure, write, format, lock, demo), through NFCBenchKit's
/// ``BenchDevice`` (the strings it takes are in its documentation: `sim:SCENARIO`,
/// `pcsc:NAME`, `pcsc:0`, `pcsc:TEXT`, `pcsc`, any libnfc connstring, `libnfc`).
///
/// Resolving sends nothing to a reader: it checks that the PC/SC reader is listed or that a
/// serial path exists. The device itself is opened by the frontend when polling starts,
/// after the reader's lock was taken (locks before frames).
public enum DeviceFactory {
    /// A resolved device string: the name the reader is locked and traced by, and its kind.
    public typealias Spec = BenchDevice

    public struct Options: Sendable {
        /// Presence checks of hardware readers; `nil` = the device's own interval.
        public var presenceInterval: Duration? = nil

        public init(presenceInterval: Duration? = nil) { self.presenceInterval = presenceInterval }
    }

    /// Resolves `device` (see ``BenchDevice``). Throws usage (64), data (65), no input (66) or
    /// unavailable (69, also when the readers' lock folder is refused: every device is locked
    /// before use).
    public static func resolve(_ device: String) throws(BenchError) -> Spec {
        try requireLockFolder()
        do { return try BenchDevice(device) } catch { throw BenchError(error) }
    }

    /// The frontend for `spec` (nothing is opened yet).
    public static func frontend(
        _ spec: Spec, clock: any ReaderSessionClock = ContinuousReaderClock(), options: Options = Options()
    ) throws(BenchError) -> ReaderFrontend {
        do { return try spec.frontend(clock: clock, presenceInterval: options.presenceInterval) } catch {
            throw BenchError(error)
        }
    }

    /// `resolve` + `frontend`: the reader a session runs on.
    public static func backend(_ device: String, options: Options = Options()) throws(BenchError) -> ReaderFrontend {
        try frontend(resolve(device), options: options)
    }
}

extension BenchError {
    /// A device string's error with the exit status its kind documents (``BenchDeviceError``).
    public init(_ error: BenchDeviceError) {
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
