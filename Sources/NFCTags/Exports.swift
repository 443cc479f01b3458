// The thin-device protocol, its target types, the byte carriers' seams (Type2TagTransport,
// APDUTransport, TagCommunicationError) and the hex helpers live in NFCBase, the module under
// every layer. NFCTags re-exports it, so code written against NFCTags before the move
// (`import NFCTags`, then NFCDevice, SensedTarget, TagConnection…) compiles unchanged.
@_exported public import NFCBase
