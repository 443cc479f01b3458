// The clock (ReaderSessionClock, ContinuousReaderClock, ManualClock, ReaderSessionTimer) and
// SplitMix64 live in NFCBase, the module under every layer, so the frontend's device thread
// and the virtual hardware use them without the Core NFC rules. ReaderSession re-exports
// NFCBase, so code that imports only ReaderSession (a host's `ManualClock()`) compiles unchanged.
@_exported public import NFCBase
