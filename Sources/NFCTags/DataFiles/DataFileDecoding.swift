/// The field rules every data file shares, for `init(from:)` of the files' `Decodable`
/// types (``DataFile``):
///
/// - a number is a JSON number: `true` is not 1, `"5"` is not 5;
/// - a whole number must be whole: 1.5 is refused, not cut to 1 (1.0 and 1e2 are whole);
/// - every number has a range, and a value outside it is refused;
/// - milliseconds may have decimals down to 1 µs (`2300.5`); microseconds are whole;
/// - `null` is not an absent field: an optional field is either absent or valid;
/// - names (`kind`, `type`, `technology`…) are one of a listed set, spelled exactly.
///
/// Errors are `DecodingError.dataCorrupted` at the field's coding path carrying a
/// ``DataFileError`` (its code and reason), which ``DataFileError/init(_:tree:file:)`` unpacks.
extension KeyedDecodingContainer {
    /// An error at `key` for `throw` in `init(from:)`: `reason` is what the user reads.
    public func dataError(_ key: Key, _ reason: String, code: DataFileError.Code = .invalidValue) -> DecodingError {
        DataFileError.decodingError(at: codingPath + [key], reason, code: code)
    }

    /// `decode(key)` when the file has `key` (even `null`, which is then refused), else nil.
    public func ifPresent<T>(_ key: Key, _ decode: (Key) throws -> T) throws -> T? {
        contains(key) ? try decode(key) : nil
    }

    /// A JSON number (not `true`, not a string) within `range`.
    public func decodeNumber(_ key: Key, in range: ClosedRange<Double>) throws -> Double {
        let v = try decode(Double.self, forKey: key)
        guard v.isFinite, range.contains(v) else {
            throw dataError(
                key,
                "expected a number from \(plain(range.lowerBound)) to \(plain(range.upperBound)), found \(plain(v))")
        }
        return v
    }

    /// A whole JSON number within `range` (`1.5` is refused, `1.0` is 1).
    public func decodeWholeNumber(_ key: Key, in range: ClosedRange<Int>) throws -> Int {
        let v = try decode(Double.self, forKey: key)
        guard v.isFinite, v == v.rounded(), v >= Double(range.lowerBound), v <= Double(range.upperBound) else {
            throw dataError(
                key, "expected a whole number from \(range.lowerBound) to \(range.upperBound), found \(plain(v))")
        }
        return Int(v)
    }

    /// Milliseconds (decimals allowed down to 1 µs) within `range` (in ms), as a `Duration`.
    public func decodeMilliseconds(_ key: Key, in range: ClosedRange<Double>) throws -> Duration {
        let v = try decode(Double.self, forKey: key)
        let us = v * 1000
        // Whole microseconds, allowing the few ulps of error that decimal-to-binary conversion leaves.
        let whole = us.isFinite && abs(us - us.rounded()) <= max(1e-6, 4 * us.ulp)
        guard whole, range.contains(v) else {
            throw dataError(
                key,
                "expected milliseconds from \(plain(range.lowerBound)) to \(plain(range.upperBound)) "
                    + "in steps of 0.001 (1 µs), found \(plain(v))")
        }
        return .microseconds(Int64(us.rounded()))
    }

    /// Whole microseconds within `range`, as a `Duration`.
    public func decodeMicroseconds(_ key: Key, in range: ClosedRange<Int>) throws -> Duration {
        .microseconds(try decodeWholeNumber(key, in: range))
    }

    /// Hex bytes (``Swift/Array/init(hex:)``: spaces, `:` and `-` between bytes allowed),
    /// exactly `count` of them when given.
    public func decodeHex(_ key: Key, count: Int? = nil) throws -> [UInt8] {
        let s = try decode(String.self, forKey: key)
        guard let b = [UInt8](hex: s) else { throw dataError(key, "\"\(s)\" is not hex") }
        if let count, b.count != count { throw dataError(key, "expected \(count) bytes, got \(b.count)") }
        return b
    }

    /// One of `E`'s raw values, spelled exactly.
    public func decodeChoice<E: RawRepresentable & CaseIterable>(_ type: E.Type, forKey key: Key) throws -> E
    where E.RawValue == String {
        let s = try decode(String.self, forKey: key)
        guard let e = E(rawValue: s) else {
            throw dataError(key, "\"\(s)\" is not one of \(E.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return e
    }
}

/// A coding key built at run time: a field name, or a position in a list (`intValue`).
public struct DataFileKey: CodingKey, Sendable {
    public var stringValue: String
    public var intValue: Int?
    public init(_ name: String) {
        stringValue = name
        intValue = nil
    }
    public init(index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }
    public init?(stringValue: String) { self.init(stringValue) }
    public init?(intValue: Int) { self.init(index: intValue) }
}

extension DataFileError {
    /// A `DecodingError` at `codingPath` carrying this rule's reason and code, for checks that
    /// span fields (steps in time order, a name already in the field).
    public static func decodingError(at codingPath: [any CodingKey], _ reason: String, code: Code = .invalidValue)
        -> DecodingError
    {
        .dataCorrupted(
            DecodingError.Context(
                codingPath: codingPath, debugDescription: reason, underlyingError: DataFileError(code, reason)))
    }
}

/// `1000000000000` rather than `1e+12`, `1.5` as is.
private func plain(_ v: Double) -> String {
    v.isFinite && v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : "\(v)"
}
