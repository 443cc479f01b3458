/// A response APDU: response data followed by SW1 SW2 (ISO/IEC 7816-4:2020 §5.1).
public struct ResponseAPDU: Sendable, Hashable, CustomStringConvertible {
    /// The response data field (may be empty).
    public var data: [UInt8]
    public var statusWord: StatusWord

    public init(data: [UInt8] = [], statusWord: StatusWord) {
        self.data = data
        self.statusWord = statusWord
    }

    /// Splits received bytes into data and the final two status bytes.
    /// - Throws: ``APDUError/Code/tooShort`` for fewer than 2 bytes.
    public init(bytes: [UInt8]) throws(APDUError) {
        guard bytes.count >= 2 else {
            throw APDUError(.tooShort, "a response APDU needs SW1 SW2; got \(bytes.count) byte(s)")
        }
        data = Array(bytes[..<(bytes.count - 2)])
        statusWord = StatusWord(sw1: bytes[bytes.count - 2], sw2: bytes[bytes.count - 1])
    }

    /// Data then SW1 SW2.
    public var bytes: [UInt8] { data + statusWord.bytes }

    public var description: String {
        data.isEmpty ? statusWord.description : "\(data.hexString(separator: " ")) \(statusWord)"
    }
}
