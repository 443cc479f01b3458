public import Foundation
import Synchronization

/// An NDEF message: one or more records (NFC Forum NDEF 1.0 §2.3), as Core NFC's
/// `NFCNDEFMessage`.
///
/// A class, as Core NFC's is (`NSObject`, `NSSecureCoding`, `NSCopying`); its records are
/// guarded by a lock, so a message can cross threads. Equality (`==`, `isEqual(_:)`)
/// compares the records.
public final class NFCNDEFMessage: NSObject, NSSecureCoding, NSCopying, Sendable {
    private let storage: Mutex<[NFCNDEFPayload]>

    /// The records in order; chunked records appear once, reassembled.
    public var records: [NFCNDEFPayload] {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }

    /// Core NFC: `init(records:)`.
    public init(records: [NFCNDEFPayload]) {
        storage = Mutex(records)
        super.init()
    }

    /// Core NFC's failable parse: `nil` wherever ``init(bytes:limits:)`` throws.
    /// Core NFC: `init?(data:)`.
    public convenience init?(data: Data) {
        guard let records = try? NDEFParser.parse(ArraySlice(data), limits: .default) else { return nil }
        self.init(records: records)
    }

    /// Parses a whole NDEF message, strictly (NFC Forum NDEF 1.0 §3): MB on the first
    /// record only, ME on the last with nothing after it, chunk sequences per §2.3.3
    /// reassembled into one record, TNF/length rules per §3.2.6, every length checked
    /// before use. Record bodies (RTDs) are not judged here; see ``NFCNDEFPayload/content``.
    ///
    /// - Throws: ``NDEFError`` with the broken rule and the byte offset in `bytes`.
    public convenience init(bytes: some Collection<UInt8>, limits: NDEFLimits = .default) throws(NDEFError) {
        self.init(records: try NDEFParser.parse(ArraySlice(bytes), limits: limits))
    }

    /// The serialized message (NDEF 1.0 §3.2): MB on the first record, ME on the last, SR
    /// when a (chunk's) payload is shorter than 256 bytes, IL when an ID is present, and
    /// for a record with `chunkSize` > 0 an initial chunk, middle chunks and a terminating
    /// chunk of TNF `unchanged` (an empty terminating chunk when the payload fits one chunk).
    /// Fields are written as given, even where they break a TNF rule, so a bench can write
    /// malformed tags on purpose. Empty for a message with no record.
    ///
    /// - Precondition: every TYPE and ID is at most 255 bytes (they have 1-byte lengths).
    public var bytes: [UInt8] {
        let records = self.records
        var out: [UInt8] = []
        out.reserveCapacity(records.reduce(0) { $0 + NDEFSerializer.size(of: $1) })
        NDEFSerializer.write(records, into: &out)
        return out
    }

    /// Size of ``bytes`` in bytes, computed without serializing. Core NFC: `length`.
    public var length: Int {
        records.reduce(0) { $0 + NDEFSerializer.size(of: $1) }
    }

    /// One flat summary per record, bodies decoded (for `tag show` and JSON).
    public var descriptions: [NDEFRecordDescription] {
        records.map { NDEFRecordDescription($0) }
    }

    // MARK: NSSecureCoding, NSCopying

    /// Core NFC: `supportsSecureCoding` (true).
    public static var supportsSecureCoding: Bool { true }

    /// Core NFC: `encode(with:)`: the message's bytes (NDEF 1.0 §3.2).
    public func encode(with coder: NSCoder) {
        coder.encode(Data(bytes), forKey: "ndef")
    }

    /// Core NFC: `init?(coder:)`; `nil` when the bytes are missing or do not parse.
    public required convenience init?(coder: NSCoder) {
        guard let d = coder.decodeObject(of: NSData.self, forKey: "ndef"),
            let records = try? NDEFParser.parse(ArraySlice(Data(d)), limits: .default)
        else { return nil }
        self.init(records: records)
    }

    /// Core NFC: `copy(with:)`: a message of copies of the records.
    public func copy(with zone: NSZone? = nil) -> Any {
        NFCNDEFMessage(records: records.map { $0.copy() as! NFCNDEFPayload })
    }

    // MARK: Equality

    public override func isEqual(_ object: Any?) -> Bool {
        guard let o = object as? NFCNDEFMessage else { return false }
        return o === self || o.records == records
    }

    public override var hash: Int { records.hashValue }

    public override var description: String {
        "NFCNDEFMessage(\(records.count) record(s), \(length) B)"
    }
}

enum NDEFSerializer {
    static func chunks(of record: NFCNDEFPayload) -> [Range<Int>] {
        let n = record.payload.count
        guard record.chunkSize > 0 else { return [0..<n] }
        var ranges: [Range<Int>] = []
        var start = 0
        while start < n {
            let end = min(n, start + record.chunkSize)
            ranges.append(start..<end)
            start = end
        }
        while ranges.count < 2 { ranges.append(n..<n) }
        return ranges
    }

    static func size(of record: NFCNDEFPayload) -> Int {
        var total = 0
        for (i, r) in chunks(of: record).enumerated() {
            total += 2 + (r.count < 256 ? 1 : 4) + r.count
            if i == 0 {
                total += record.type.count + record.identifier.count + (record.identifier.isEmpty ? 0 : 1)
            }
        }
        return total
    }

    static func write(_ records: [NFCNDEFPayload], into out: inout [UInt8]) {
        for (index, record) in records.enumerated() {
            precondition(
                record.type.count <= 255 && record.identifier.count <= 255,
                "NDEF TYPE and ID fields are at most 255 bytes")
            let ranges = chunks(of: record)
            let payload = [UInt8](record.payload)
            for (c, range) in ranges.enumerated() {
                let first = c == 0
                var header: UInt8 = first ? record.typeNameFormat.rawValue : NFCTypeNameFormat.unchanged.rawValue
                if index == 0 && first { header |= 0x80 }
                if index == records.count - 1 && c == ranges.count - 1 { header |= 0x40 }
                if c < ranges.count - 1 { header |= 0x20 }
                let short = range.count < 256
                if short { header |= 0x10 }
                let hasID = first && !record.identifier.isEmpty
                if hasID { header |= 0x08 }
                out.append(header)
                out.append(first ? UInt8(record.type.count) : 0)
                if short {
                    out.append(UInt8(range.count))
                } else {
                    let n = UInt32(range.count)
                    out += [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
                }
                if hasID { out.append(UInt8(record.identifier.count)) }
                if first {
                    out += record.type
                    out += record.identifier
                }
                out += payload[range]
            }
        }
    }
}
