public import NFCTags

extension TagConnection {
    /// The same connection, telling `record` each exchange as the trace's `frame` records
    /// show it: a Type 2 command as its frame (`30 pp`, `A2 pp d0..d3` answered `0A`, `60`)
    /// or a command APDU, with the answer (nil when the exchange failed), after it returns.
    public func traced(_ record: @escaping @Sendable ([UInt8], [UInt8]?) -> Void) -> TagConnection {
        switch self {
        case .type2(let t): .type2(TracingType2Transport(base: t, record: record))
        case .iso7816(let t): .iso7816(TracingAPDUTransport(base: t, record: record))
        case .felica(let t): .felica(TracingFeliCaTransport(base: t, record: record))
        case .iso15693(let t): .iso15693(TracingISO15693Transport(base: t, record: record))
        }
    }
}

/// Records each FeliCa frame (LEN first) and answer.
struct TracingFeliCaTransport: FeliCaTransport {
    let base: any FeliCaTransport
    let record: @Sendable ([UInt8], [UInt8]?) -> Void
    func exchange(_ frame: [UInt8]) throws -> [UInt8] {
        do {
            let r = try base.exchange(frame)
            record(frame, r)
            return r
        } catch {
            record(frame, nil)
            throw error
        }
    }
}

/// Records each ISO 15693 request (flags first) and response.
struct TracingISO15693Transport: ISO15693Transport {
    let base: any ISO15693Transport
    let record: @Sendable ([UInt8], [UInt8]?) -> Void
    func request(_ request: [UInt8]) throws -> [UInt8] {
        do {
            let r = try base.request(request)
            record(request, r)
            return r
        } catch {
            record(request, nil)
            throw error
        }
    }
}
