// What `import CoreNFC` brings besides Core NFC's own symbols, so that an iOS file whose only
// change is `#if canImport(CoreNFC) import CoreNFC #else import ReaderSession #endif` compiles:
// Foundation (Core NFC's headers import it), Dispatch (its queues), and the NDEF types
// (`NFCNDEFMessage`, `NFCNDEFPayload`, `NFCTypeNameFormat`), which live in NFCTags.
@_exported public import Dispatch
@_exported public import Foundation
@_exported public import NFCTags
