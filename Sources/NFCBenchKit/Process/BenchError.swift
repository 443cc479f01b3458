public import NFCFiles
public import NFCTags

/// Errors that end a command with a message and a documented exit code.
public enum BenchError: Error, Equatable {
    /// Bad words on the command line: exit 64 (EX_USAGE), message and usage on stderr.
    case usage(String)
    /// Input data that can't be used (a malformed tag file): exit 65 (EX_DATAERR).
    case data(String)
    /// An input file that does not exist or can't be read: exit 66 (EX_NOINPUT).
    case noInput(String)
    /// A needed service or device is missing (no pcscd, no reader): exit 69 (EX_UNAVAILABLE).
    case unavailable(String)
    /// An output file or folder that can't be created (`--out` in a missing folder, a trace
    /// folder that is a file): exit 73 (EX_CANTCREAT).
    case cantCreate(String)
    /// Reading or writing failed part way (a full disk, a device error): exit 74 (EX_IOERR).
    case ioError(String)
    /// Anything else: exit 1.
    case failure(String)

    public var exitCode: Int32 {
        switch self {
        case .usage: 64
        case .data: 65
        case .noInput: 66
        case .unavailable: 69
        case .cantCreate: 73
        case .ioError: 74
        case .failure: 1
        }
    }

    public var message: String {
        switch self {
        case .usage(let m), .data(let m), .noInput(let m), .unavailable(let m), .cantCreate(let m), .ioError(let m),
            .failure(let m):
            m
        }
    }

    /// A data file's error, printed as the file rule says (`FILE:LINE:COLUMN: reason`,
    /// `FILE: field PATH: reason`): 66 when the file is missing or unreadable, 73 when it
    /// can't be written, else 65.
    public init(_ error: DataFileError) {
        switch error.code {
        case .notFound: self = .noInput(error.description)
        case .io: self = .ioError(error.description)
        default: self = .data(error.description)
        }
    }

    /// A file's error (``/NFCFiles/FileError``) with its exit status: 73 can't create, 74 I/O,
    /// 66 no input, 64 the same file as an input or another output.
    public init(_ error: FileError) {
        switch error.kind {
        case .cantCreate: self = .cantCreate(error.description)
        case .io: self = .ioError(error.description)
        case .noInput: self = .noInput(error.description)
        case .sameFile: self = .usage(error.description)
        }
    }
}
