/// One latency of the phone model a sweep varies (`walk --sweep NAME=FROM..TO/STEP`).
public enum WalkSweepParameter: String, Sendable, CaseIterable {
    /// ``HCEParameters/wakeLatency``: the default app's launch after the field.
    case wake
    /// ``HCEParameters/authenticationLatency``: a locked phone's authentication (only on the
    /// path when the walk's phone is locked).
    case auth
    /// ``HCEParameters/emulationStartLatency``: the emulation sheet before the card answers.
    case sheet

    /// The parameter's key in ``HCEParameters/facts`` (and in JSON).
    public var key: String {
        switch self {
        case .wake: "wake_latency"
        case .auth: "authentication_latency"
        case .sheet: "emulation_start_latency"
        }
    }

    /// `parameters` with this latency set to `value`.
    public func applied(_ value: Duration, to parameters: HCEParameters) -> HCEParameters {
        var p = parameters
        switch self {
        case .wake: p.wakeLatency = value
        case .auth: p.authenticationLatency = value
        case .sheet: p.emulationStartLatency = value
        }
        return p
    }

    /// The latency's value in `parameters`.
    public func value(in parameters: HCEParameters) -> Duration {
        switch self {
        case .wake: parameters.wakeLatency
        case .auth: parameters.authenticationLatency
        case .sheet: parameters.emulationStartLatency
        }
    }
}

/// A walk played again for each value of one latency, counting the readers the default app
/// serves: how sensitive "served" is to a number Apple does not publish.
public struct WalkSweep: Sendable, Equatable {
    public var parameter: WalkSweepParameter
    /// The values, in order.
    public var values: [Duration]

    /// Most values one sweep may have (each is a whole walk).
    public static let maximumValues = 1000

    public enum Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        case stepNotPositive
        case emptyRange
        case tooManyValues(Int)

        public var description: String {
            switch self {
            case .stepNotPositive: "the step must be more than 0"
            case .emptyRange: "the range ends before it starts"
            case .tooManyValues(let n): "\(n) values; at most \(WalkSweep.maximumValues)"
            }
        }
    }

    /// `from`, `from + step`, … up to and including `to` (when the steps land on it).
    public init(_ parameter: WalkSweepParameter, from: Duration, to: Duration, step: Duration) throws(Error) {
        guard step > .zero else { throw .stepNotPositive }
        guard from <= to else { throw .emptyRange }
        let count = Int(((to - from) / step) + 1e-9) + 1
        guard count <= Self.maximumValues else { throw .tooManyValues(count) }
        self.parameter = parameter
        values = (0..<count).map { from + step * $0 }
    }

    /// One value's walk, counted.
    public struct Row: Sendable, Equatable {
        public var value: Duration
        public var readers: Int
        public var wakes: Int
        /// Readers whose APDUs reached the app and were answered (``WalkSummary/servableWakes``).
        public var served: Int
        public var uselessWakes: Int
        /// S(WTX) the system sent, over all readers.
        public var waitingTimeExtensions: Int
        /// The served readers' names, in the walk's order.
        public var servedReaders: [String]
    }

    /// Plays `walk` once per value, the other parameters as `walk` has them.
    public func run(_ walk: ReaderWalk) async -> [Row] {
        var rows: [Row] = []
        for value in values {
            var w = walk
            w.parameters = parameter.applied(value, to: walk.parameters)
            let s = await w.run().summary
            rows.append(
                Row(
                    value: value, readers: s.readers.count, wakes: s.wakes, served: s.servableWakes,
                    uselessWakes: s.uselessWakes,
                    waitingTimeExtensions: s.readers.reduce(0) { $0 + $1.waitingTimeExtensions },
                    servedReaders: s.readers.filter { $0.woke && $0.served }.map(\.name)))
        }
        return rows
    }
}
