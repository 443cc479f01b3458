public import NFCFiles

/// Output files a command was told to write (`--out`, `--backup`, `--svg`, `--pcapng`, `--save`),
/// checked before anything is read or sent, so a typo in a folder name costs nothing; written
/// by ``/NFCFiles/OutputFile``'s rules.
public enum BenchOutputs {
    /// `path` planned for writing (``/NFCFiles/OutputFile/plan(_:label:mode:followLinks:)``);
    /// throws can't-create (73) naming `option path` (or `label`).
    public static func plan(_ path: String, option: String, label: String? = nil) throws(BenchError) -> OutputFile {
        do { return try OutputFile.plan(path, label: label ?? "\(option) \(path)") } catch { throw BenchError(error) }
    }

    /// Refuses (64) an output that is the same file as an input or another output, before
    /// anything is read or sent (``/NFCFiles/SameFile``).
    public static func refuseSameFiles(outputs: [NamedFile], inputs: [NamedFile] = []) throws(BenchError) {
        do { try SameFile.refuse(outputs: outputs, inputs: inputs) } catch { throw BenchError(error) }
    }
}
