// NFCBenchKit opens readers by name and hands out the one reader frontend over them: a program
// that imports it gets the frontend (ReaderFrontend), its targets (ReaderSession's
// DetectedTarget) and the tag procedures and hex helpers (NFCTags, which re-exports NFCBase),
// as nfcpy's `import nfc` gives ContactlessFrontend and the tag types.
@_exported public import NFCTags
@_exported public import ReaderFrontend
@_exported public import ReaderSession
