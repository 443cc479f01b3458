public import FoundationEssentials
public import NFCTags

// The file side of NFCTags' data files: NFCTags parses and encodes bytes and does no file I/O;
// these read and write them through ``InputFile`` and ``OutputFile``.

extension DataFile {
    /// The bytes of `path` (`-`: standard input), through ``InputFile/read(_:label:)``. Throws
    /// ``/NFCTags/DataFileError/Code/notFound`` naming the file when it does not exist, is a
    /// folder, or cannot be opened; ``/NFCTags/DataFileError/Code/io`` when a read fails part way.
    public static func read(_ path: String) throws(DataFileError) -> Data {
        do { return Data(try InputFile.read(path)) } catch {
            throw DataFileError(error.kind == .io ? .io : .notFound, file: path, error.reason)
        }
    }

    /// Reads `path` and decodes it (``/NFCTags/DataFile/decode(_:from:file:)``), every error naming `path`.
    public static func load<T: Decodable>(_ type: T.Type, path: String) throws(DataFileError) -> T {
        try decode(type, from: try read(path), file: path)
    }
}

extension TagFile {
    /// Reads `path` (`-`: standard input) and parses it (``/NFCTags/TagFile/parse(bytes:file:)``);
    /// every error names `path` (``/NFCTags/DataFileError/Code/notFound`` when it does not exist
    /// or can't be read).
    public static func load(path: String) throws(TagFileError) -> TagFile {
        let bytes: [UInt8]
        do { bytes = try InputFile.read(path) } catch {
            throw TagFileError(error.kind == .io ? .io : .notFound, file: path, error.reason)
        }
        return try parse(bytes: bytes, file: path)
    }

    /// Writes ``/NFCTags/TagFile/jsonText()`` to `path` by ``OutputFile``'s rules (`-` is standard
    /// output; a new file is 0600: a tag file holds the tag's UID and content). `label` names it
    /// in errors (`--out x`; the path by default). Throws ``FileError``.
    public func save(path: String, label: String? = nil) throws(FileError) {
        try OutputFile.plan(path, label: label).write(Array(jsonText().utf8))
    }
}
