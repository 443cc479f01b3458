import FoundationEssentials
public import NFCTags
import ReaderSession
import Synchronization
public import VirtualHardware

/// The measurement loops of `nfcbench measure`: detection and removal of an in-process vpcd
/// card (``presence(_:card:uid:count:removal:into:interrupted:)``) or of a tag a person taps
/// (``person(_:removal:count:probe:interval:timeout:into:interrupted:)``), APDU round trips
/// and NDEF reads (``exchange(_:count:read:into:interrupted:flush:)``,
/// ``repeatedSelect(_:count:into:interrupted:)``). Each sample is a `Duration` on the
/// monotonic clock, added to ``Samples`` (or a ``/NFCBenchKit/PresenceTry`` to ``Tries``) as it
/// is taken, so a signal (``InterruptFlag``) or a failure keeps what was gathered.
public enum BenchMeasure {
    /// `d` in µs to the nanosecond, so JSON shows `2545362.888`, not `2545362.8880000003`.
    public static func roundedMicroseconds(_ d: Duration) -> Double {
        (TimingStatistics.microseconds(d) * 1000).rounded() / 1000
    }

    /// The samples taken so far (kept when a signal or a failure stops the measurement).
    public final class Samples: Sendable {
        private let list = Mutex<[Duration]>([])
        public init() {}
        public func add(_ d: Duration) { list.withLock { $0.append(d) } }
        public var all: [Duration] { list.withLock { $0 } }
    }

    /// Present/remove the in-process card `count` times; time present() → detected or
    /// remove() → lost. A detection of any other card (its UID is not `uid`: another card took
    /// vpcd's port while this one was out) is an error that says so.
    public static func presence(
        _ watcher: BackendWatcher, card: VirtualCard, uid: [UInt8], count: Int, removal: Bool,
        into samples: Samples, interrupted: InterruptFlag
    ) async throws {
        defer { watcher.stop() }
        card.start()
        card.remove()
        try await Task.sleep(for: .milliseconds(800))  // pcscd sees the reader empty
        var index = watcher.count
        for _ in 0..<count where !interrupted.isSet {
            let t0 = ContinuousClock.now
            card.present()
            let (target, at, i) = try await watcher.next(
                from: index, timeout: .seconds(10), what: "detection", interrupted: interrupted,
                BackendWatcher.detected)
            index = i
            if target.uid != uid {
                throw BenchError.unavailable(
                    "the reader detected a card with UID \(target.uid.hexString(separator: " ")), not the measured one (UID \(uid.hexString(separator: " "))): another card took vpcd's port \(card.configuration.port) while this one was out of the field; stop it (vpcd serves one card per port)"
                )
            }
            if !removal { samples.add(at - t0) }
            try await Task.sleep(for: .milliseconds(100))
            let t1 = ContinuousClock.now
            card.remove()
            let (_, lostAt, j) = try await watcher.next(
                from: index, timeout: .seconds(10), what: "removal", interrupted: interrupted, BackendWatcher.lost)
            index = j
            if removal { samples.add(lostAt - t1) }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The tries of a measurement with a person (``/NFCBenchKit/PresenceTry``).
    public final class Tries: Sendable {
        private let list = Mutex<[PresenceTry]>([])
        public init() {}
        public func add(_ t: PresenceTry) { list.withLock { $0.append(t) } }
        public var all: [PresenceTry] { list.withLock { $0 } }
    }

    /// `count` tries with a person: "tap the tag now" (a detection times from the prompt to
    /// the reader's detection, the hand included), "remove it now" (a removal: with `probe`, a
    /// READ / SELECT every `interval` until the tag stops answering, beside the reader's loss;
    /// the figure is the reader's lag behind the probe). Prompts on stderr.
    public static func person(
        _ reader: BenchReader, removal: Bool, count: Int, probe: Bool, interval: Duration, timeout: Duration,
        into tries: Tries, interrupted: InterruptFlag
    ) async throws {
        let watcher = reader.watcher()
        defer { watcher.stop() }
        var index = 0
        var present: DetectedTarget? = nil
        /// An event's time on the wall clock (the watcher stamps it on the monotonic clock).
        func wall(_ at: ContinuousClock.Instant) -> Double {
            PresenceTry.now() - TimingStatistics.microseconds(ContinuousClock.now - at) / 1000
        }
        func arrival(_ n: Int) async throws -> (DetectedTarget, prompt: Double, at: Double) {
            let prompt = PresenceTry.now()
            BenchOutput.err("tap the tag now (try \(n) of \(count))")
            let (t, at, i) = try await watcher.next(
                from: index, timeout: timeout, what: "tag", interrupted: interrupted, BackendWatcher.detected)
            index = i
            return (t, prompt, wall(at))
        }
        for n in 1...count where !interrupted.isSet {
            if !removal {
                if present != nil {
                    BenchOutput.err("remove the tag")
                    (_, _, index) = try await watcher.next(
                        from: index, timeout: timeout, what: "removal", interrupted: interrupted, BackendWatcher.lost)
                }
                let (t, prompt, at) = try await arrival(n)
                present = t
                tries.add(PresenceTry(index: n, promptAt: prompt, eventAt: at))
                continue
            }
            let target: DetectedTarget
            if let p = present { target = p } else { target = try await arrival(n).0 }
            present = nil
            let prompt = PresenceTry.now()
            BenchOutput.err("remove the tag now (try \(n) of \(count))")
            var lastPresent: Double? = nil
            var probeLost: Double? = nil
            if probe {
                while !interrupted.isSet {
                    let answered = (try? await reader.withTag(target) { PresenceProbe.answered($0) }) ?? false
                    let at = PresenceTry.now()
                    if !answered {
                        probeLost = at
                        break
                    }
                    lastPresent = at
                    try await Task.sleep(for: interval)
                }
            }
            let (_, lostAt, i) = try await watcher.next(
                from: index, timeout: timeout, what: "removal", interrupted: interrupted, BackendWatcher.lost)
            index = i
            tries.add(
                PresenceTry(
                    index: n, promptAt: prompt, lastPresentAt: lastPresent, probeLostAt: probeLost,
                    eventAt: wall(lostAt)))
        }
    }

    /// APDU round trips (SELECT of the NDEF application for ISO-DEP, READ of page 0 for
    /// Type 2) or whole NDEF reads on the tag, timed one by one.
    /// `flush` runs outside the timing after every ``flushEvery`` samples (the trace's frames;
    /// the caller flushes the rest at the end), not between every two: a JSON line and a
    /// `write(2)` per APDU made the measuring thread spend ≈ 50 µs of CPU per round trip
    /// (its user + system ticks over 9,000 APDUs) beside the C loop's ≈ 14 µs, on cores that
    /// pcscd and the card share.
    public static func exchange(
        _ c: TagConnection, count: Int, read: Bool, into samples: Samples, interrupted: InterruptFlag,
        flush: () -> Void = {}
    ) throws {
        let clock = ContinuousClock()
        var taken = 0
        func sample(_ body: () throws -> Void) throws {
            samples.add(try clock.measure(body))
            taken += 1
            if taken % flushEvery == 0 { flush() }
        }
        switch c {
        case .iso7816(let t):
            let reader = Type4TagReader(transport: AnyAPDUTransport(t))
            for _ in 0..<count where !interrupted.isSet {
                try sample { if read { _ = try reader.readNDEF() } else { _ = try t.transmit(selectNDEFApplication) } }
            }
        case .type2(let t):
            for _ in 0..<count where !interrupted.isSet {
                try sample {
                    if read { _ = try Type2TagReader(transport: t).readNDEF() } else { _ = try t.read(page: 0) }
                }
            }
        case .felica(let t):
            for _ in 0..<count where !interrupted.isSet {
                try sample {
                    if read {
                        _ = try Type3TagReader(transport: t).readNDEF()
                    } else {
                        _ = try t.exchange([0x06, 0x00, 0xFF, 0xFF, 0x00, 0x00])
                    }
                }
            }
        case .iso15693(let t):
            for _ in 0..<count where !interrupted.isSet {
                try sample {
                    if read {
                        _ = try Type5TagReader(transport: t).readNDEF()
                    } else {
                        _ = try t.request([0x02, 0x20, 0x00])
                    }
                }
            }
        }
    }

    /// Samples between two writes of the trace's frames during a measurement.
    public static let flushEvery = 256

    /// `measure apdu`'s command on an ISO-DEP tag: SELECT of the NDEF Tag Application by its
    /// AID D2760000850101 (NFC Forum Type 4 Tag 1.0 §5.4.2), Le 00.
    public static let selectNDEFApplication: [UInt8] =
        [0x00, 0xA4, 0x04, 0x00, 0x07] + Type4NDEFApplication.version2ApplicationName + [0x00]

    /// `measure apdu` where the transport times its own round trips (PC/SC,
    /// `RepeatingAPDUTransport`): the SELECTs go in runs of ``flushEvery`` with the clock read
    /// right around each `SCardTransmit` and nothing of ours allocated or locked in between,
    /// as a C loop around the same call does; each run's samples and trace frames are
    /// taken after it. A failure keeps the samples before it.
    public static func repeatedSelect(_ tag: TimedTag, count: Int, into samples: Samples, interrupted: InterruptFlag)
        throws
    {
        var exchanges = TimedAPDUExchanges()
        var left = count
        while left > 0, !interrupted.isSet {
            let run = min(left, flushEvery)
            defer {
                for d in exchanges.durations { samples.add(d) }
                exchanges.removeAll()
                tag.flush()
            }
            try tag.transmitRepeatedly(
                selectNDEFApplication, count: run, into: &exchanges, shouldStop: { interrupted.isSet })
            left -= run
        }
    }
}
