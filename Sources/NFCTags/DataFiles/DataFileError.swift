/// Why a data file cannot be used: a tag file (ours, Flipper `.nfc`, Proxmark3 JSON), a
/// simulator scenario, a conformance scenario or a reader profile. Every reader of those
/// files throws this one type, and every command prints it the same way
/// (``description``):
///
/// - `FILE:LINE:COLUMN: reason` for JSON syntax (line and column 1-based, columns in characters);
/// - `FILE: field PATH: reason` for a field (`steps[2].at_ms`, the path in the JSON);
/// - `FILE:LINE: field KEY: reason` for a Flipper `.nfc` line;
/// - `FILE: reason` for the file as a whole (missing, unknown format).
///
/// ``code`` says which kind of failure it is; `nfcbench` exits 66 (sysexits `EX_NOINPUT`)
/// for ``Code/notFound`` and 65 (`EX_DATAERR`) for the rest of a file's reading.
public struct DataFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// The file (or a file it refers to) does not exist or cannot be read.
        case notFound
        /// The file could not be read to its end (an I/O error part way).
        case io
        /// None of the formats this reader knows.
        case unrecognizedFormat
        /// Text that does not parse (JSON syntax, a Flipper line without `key: value`).
        case syntax
        /// A required field is missing.
        case missingField
        /// A field holds a value of the wrong type or out of its range (bad hex, wrong length,
        /// `true` for a number, 1.5 for a whole number, an unknown name).
        case invalidValue
        /// A valid file for something this package does not handle (a later format version).
        case unsupported
    }

    public var code: Code
    /// The file as the caller named it, when known.
    public var file: String?
    /// The field's path in the JSON (`steps[2].at_ms`) or the Flipper key.
    public var field: String?
    /// 1-based line (JSON syntax errors, Flipper files).
    public var line: Int?
    /// 1-based column in characters (JSON syntax errors).
    public var column: Int?
    public var reason: String

    public init(
        _ code: Code, file: String? = nil, field: String? = nil, line: Int? = nil, column: Int? = nil,
        _ reason: String
    ) {
        self.code = code
        self.file = file
        self.field = field
        self.line = line
        self.column = column
        self.reason = reason
    }

    /// The same error with `file` set, unless it already names one (an error of a file that
    /// another file refers to keeps its own name).
    public func inFile(_ path: String) -> DataFileError {
        var e = self
        if e.file == nil { e.file = path }
        return e
    }

    public var description: String {
        var parts: [String] = []
        var location = file ?? ""
        if let line {
            if file == nil {
                location = "line \(line)" + (column.map { ", column \($0)" } ?? "")
            } else {
                location += ":\(line)" + (column.map { ":\($0)" } ?? "")
            }
        }
        if !location.isEmpty { parts.append(location) }
        if let field { parts.append("field \(field)") }
        parts.append(reason)
        return parts.joined(separator: ": ")
    }
}

/// The tag-file readers' name for ``DataFileError`` (one error type serves every data file).
public typealias TagFileError = DataFileError
