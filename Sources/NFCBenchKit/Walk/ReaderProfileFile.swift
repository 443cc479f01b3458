public import HCEEvents
import NFCFiles
public import NFCTags

extension ReaderProfile {
    /// Reads and parses `path` (`-`: standard input); `/NFCTags/DataFileError/Code/notFound`
    /// when it can't be read. (HCEEvents parses; the file is read here, through NFCFiles.)
    public static func load(path: String) throws(DataFileError) -> ReaderProfile {
        try ReaderProfile(json: try DataFile.read(path), file: path)
    }
}
