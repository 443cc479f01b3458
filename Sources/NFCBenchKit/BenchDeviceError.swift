/// Why a device string could not be resolved or its device opened.
///
/// Each kind maps to one of the `nfcbench` command's exit statuses (sysexits), which the
/// command uses for it: ``Kind/invalid`` and ``Kind/ambiguous`` 64, ``Kind/notFound`` 66,
/// ``Kind/unavailable`` 69, ``Kind/dataFile`` 65 (66 or 73 as its ``dataFileError`` says).
public struct BenchDeviceError: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// The string names no device this bench opens (`bogus`, `sim:` without a scenario).
        case invalid
        /// `pcsc:TEXT` matches several readers and names none exactly; ``candidates`` lists them.
        case ambiguous
        /// A scenario (or a tag file it names) is not there.
        case notFound
        /// The service or device is not there now: no pcscd, no such reader, a serial path
        /// that does not exist, or the device refused to open.
        case unavailable
        /// A scenario or tag file that can't be used; ``dataFileError`` says where and why.
        case dataFile
    }

    public var kind: Kind
    /// Says what is wrong and what to do, naming the device (the `nfcbench` command prints it).
    public var message: String
    /// The device strings the text could have meant (``Kind/ambiguous``), or the readers
    /// there are when the one named is not among them (``Kind/unavailable``).
    public var candidates: [String]
    /// The scenario's or tag file's own error (``Kind/dataFile``), with its file, line or field.
    public var dataFileError: DataFileError?

    public init(_ kind: Kind, _ message: String, candidates: [String] = [], dataFileError: DataFileError? = nil) {
        self.kind = kind
        self.message = message
        self.candidates = candidates
        self.dataFileError = dataFileError
    }

    /// A scenario's or tag file's error as it is.
    public init(_ error: DataFileError) {
        self.init(
            error.code == .notFound ? .notFound : .dataFile, error.description, dataFileError: error)
    }

    public var description: String { message }
}
