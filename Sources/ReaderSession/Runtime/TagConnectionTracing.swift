public import NFCTags

extension TagConnection {
    /// The same connection, telling `record` each exchange as the trace's `frame` records
    /// show it: a Type 2 command as its frame (`30 pp`, `A2 pp d0..d3` answered `0A`, `60`)
    /// or a command APDU, with the answer (nil when the exchange failed), after it returns.
    public func traced(_ record: @escaping @Sendable ([UInt8], [UInt8]?) -> Void) -> TagConnection {
        switch self {
        case .type2(let t): .type2(TracingType2Transport(base: t, record: record))
        case .iso7816(let t): .iso7816(TracingAPDUTransport(base: t, record: record))
        }
    }
}
