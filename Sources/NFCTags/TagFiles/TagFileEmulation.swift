// The one way from a tag file to a device: every transport and `tag show` build the
// emulation core here, so a file that `tag show` accepts is a file every device presents.

extension TagFile {
    /// The emulation core that serves a tag file: the same value on every device.
    public enum EmulationCore: Sendable {
        /// An NTAG21x / Ultralight memory image (``makeCore()``).
        case type2(NTAG21xCore)
        /// A T4T NDEF Tag Application (``makeType4Core()``).
        case type4(Type4NDEFApplication)
        /// A card readers sense but this package does not read (MIFARE Classic): no core.
        case sensedOnly
    }

    /// Checks the file against what a tag can be and builds its emulation core: the Type 2
    /// image must fit the product's memory map; the Type 4 values must fit a CC of the file's
    /// mapping version (a mapping 3.0 file has a 4-byte ENLEN, so its file needs an ENDEF
    /// File Control TLV, which T4T 3.0 allows only from FFFF bytes).
    ///
    /// The in-process simulator, the conformance reader, the virtual PN532, the vpcd card
    /// and `tag show` all call this, and report its error; none of them drops it.
    /// - Throws: ``TagFileError`` `.unsupported` or `.invalidValue`, naming the field.
    public func makeEmulationCore() throws(TagFileError) -> EmulationCore {
        if type.isSensedOnly { return .sensedOnly }
        if type == .type4 { return .type4(try makeType4Core()) }
        return .type2(try makeCore())
    }
}
