public import ReaderSession

extension ConformanceExplorer {
    /// One thing that happens in a generated scenario: an action and when it happens. Each
    /// move is one step of the scenario file (`hardware/conformance/FORMAT.md`).
    public struct Move: Sendable, Hashable, CustomStringConvertible {
        /// What happens: the things the harness plays.
        public enum Action: Sendable, Hashable {
            /// The user taps Scan (`"user": "scan"` with the kind's options).
            case scan(ScanKind)
            /// The user taps Done on the sheet (200).
            case done
            /// The app leaves the foreground (202 for its sessions).
            case background
            /// The app returns to the foreground and is active.
            case foreground
            /// The app stays in the foreground but is not active (a banner, Control Center).
            case inactive
            /// A tag (or two, ``TagKind/pair``) enters the field.
            case present(TagKind)
            /// One presentation of this kind leaves the field (the one presented last).
            case remove(TagKind)
            /// Another app's reader session of this length begins (203 for the app meanwhile).
            case otherAppSession(Duration)
            /// The system ends every session now with 202.
            case terminate
            /// The next `begin()` ends at once with 202.
            case terminateNextBegin
            /// The busy policy from now on.
            case busyPolicy(ReaderSystemModel.BusyPolicy)
            /// This many field-seconds of heat reach the thermal model (enough of it and the
            /// next `begin()` is refused with 203).
            case heat(fieldSeconds: Double)
        }

        /// When a move happens.
        public enum Timing: Sendable, Hashable {
            /// This long after the previous move (the first: after the start).
            case after(Duration)
            /// This long after the app's latest session ended (`after_end_ms`): inside or
            /// outside the quick-restart window, or the instant a session timed out.
            case afterEnd(Duration)
        }

        public var action: Action
        public var timing: Timing

        public init(_ action: Action, _ timing: Timing = .after(.zero)) {
            self.action = action
            self.timing = timing
        }

        /// `scan-rw +1.5 s`, `present two-tags at end +3.001 s`.
        public var description: String {
            let a: String =
                switch action {
                case .scan(let k): k.rawValue
                case .done: "done"
                case .background: "background"
                case .foreground: "foreground"
                case .inactive: "inactive"
                case .present(let k): "present \(k.rawValue)"
                case .remove(let k): "remove \(k.rawValue)"
                case .otherAppSession(let d): "other-app \(ConformanceScenario.milliseconds(d)) ms"
                case .terminate: "terminate"
                case .terminateNextBegin: "terminate-next-begin"
                case .busyPolicy(let p): "busy-policy \(p.rawValue)"
                case .heat(let h): "heat \(h)"
                }
            switch timing {
            case .after(let d): return "\(a) +\(ConformanceScenario.milliseconds(d)) ms"
            case .afterEnd(let d): return "\(a) at end +\(ConformanceScenario.milliseconds(d)) ms"
            }
        }
    }

    /// What the user asks for with a Scan.
    public enum ScanKind: String, Sendable, Hashable, CaseIterable {
        /// One tag, read-only NDEF session, ends after the first read (204).
        case readOnly = "scan"
        /// One tag, read-write NDEF session (tag objects).
        case readWrite = "scan-rw"
        /// A guided sequence of two tags in one read-write session (`restartPolling()` between).
        case twoTags = "scan-2-tags"
        /// A tag session with a slow exchange: three MIFARE READ frames (`30 04`, `30 08`,
        /// `30 0C`), one a second, so a step can land while the app is still reading.
        case exchange = "scan-exchange"

        /// The Scan's request (``ScanRequest``).
        public var request: ScanRequest {
            switch self {
            case .readOnly: ScanRequest()
            case .readWrite: ScanRequest(readWrite: true)
            case .twoTags: ScanRequest(tagCount: 2)
            case .exchange:
                ScanRequest(
                    session: .tag, commands: [[0x30, 0x04], [0x30, 0x08], [0x30, 0x0C]], commandInterval: .seconds(1))
            }
        }
    }

    /// The tags the explorer presents: one of each kind of shipped tag file, simplest first
    /// (the shrinker tries simpler kinds in this order).
    public enum TagKind: String, Sendable, Hashable, CaseIterable {
        /// An NTAG215 holding an NDEF URI record (`ntag215-uri`).
        case ndef
        /// An NTAG216 formatted for NDEF, with no message (`ntag216-empty`).
        case empty
        /// A MIFARE Classic 1K: not an NFC Forum tag, no NDEF (`mifare-classic-1k`).
        case notNDEF = "not-ndef"
        /// A Type 4 tag with an NDEF URI record (`t4t-uri`).
        case type4
        /// An NTAG215 that leaves the field while page 8 is read (`ntag215-flaky`).
        case pulled
        /// Two NTAG213 entering together (`waypoint-1`, `waypoint-2`).
        case pair = "two-tags"

        /// The tag files' references (names in `hardware/tags/` or `hardware/conformance/tags/`).
        public var references: [String] {
            switch self {
            case .ndef: ["ntag215-uri"]
            case .empty: ["ntag216-empty"]
            case .notNDEF: ["mifare-classic-1k"]
            case .type4: ["t4t-uri"]
            case .pulled: ["ntag215-flaky"]
            case .pair: ["waypoint-1", "waypoint-2"]
            }
        }

        /// The presentation names (`"as"`), one per reference.
        var names: [String] { self == .pair ? ["pair-1", "pair-2"] : [rawValue] }
    }

    /// The moves the explorer draws from: actions, the timings of the random phase and the
    /// (fewer) timings of the exhaustive phase. Each list is ordered simplest first: the
    /// shrinker replaces a timing or an action with an earlier one of the same list.
    public struct Alphabet: Sendable, Hashable {
        public var actions: [Move.Action]
        /// The random phase's timings, around the boundaries that matter: the same instant,
        /// inside the reference app's 500 ms wait, mid-exchange (1.5 s), past the 2 s
        /// user-action window and inside the 3 s quick-restart window (2.5 s), outside it
        /// (3.5 s), just before and after the 60 s time limit, and the instant a session
        /// ended, just inside and just outside the quick-restart window after it.
        public var timings: [Move.Timing]
        /// The exhaustive phase's timings.
        public var exhaustiveTimings: [Move.Timing]

        public init(actions: [Move.Action], timings: [Move.Timing], exhaustiveTimings: [Move.Timing]) {
            self.actions = actions
            self.timings = timings
            self.exhaustiveTimings = exhaustiveTimings
        }

        /// Every kind of Scan, Done, the background and foreground states, every tag kind in
        /// and out, a 5 s session of another app, the system's 202 now and at the next
        /// `begin()`, both busy policies, and 200 field-seconds of heat (the thermal model
        /// then refuses a `begin()` for about 13 s, assumed model numbers).
        public static let standard = Alphabet(
            actions: ScanKind.allCases.map { .scan($0) } + [.done, .background, .foreground, .inactive]
                + TagKind.allCases.map { .present($0) } + TagKind.allCases.map { .remove($0) }
                + [
                    .otherAppSession(.seconds(5)), .terminate, .terminateNextBegin, .busyPolicy(.queue),
                    .busyPolicy(.refuse), .heat(fieldSeconds: 200),
                ],
            timings: [
                .after(.zero), .after(.milliseconds(250)), .after(.milliseconds(1500)), .after(.milliseconds(2500)),
                .after(.milliseconds(3500)), .after(.milliseconds(59_999)), .after(.milliseconds(60_001)),
                .afterEnd(.zero), .afterEnd(.milliseconds(2999)), .afterEnd(.milliseconds(3001)),
            ],
            exhaustiveTimings: [.after(.zero), .after(.milliseconds(1500)), .after(.milliseconds(60_001))])
    }
}

/// The tags in the field as the script has them (names), to keep generated moves valid:
/// a kind is presented only when none of its names is in the field, removed only when one is.
struct ScriptField: Hashable {
    private(set) var names: [String] = []

    func allows(_ action: ConformanceExplorer.Move.Action) -> Bool {
        switch action {
        case .present(let k): !k.names.contains(where: names.contains)
        case .remove(let k): k.names.contains(where: names.contains)
        default: true
        }
    }

    /// Applies `action` (which must be allowed); returns the step's action.
    mutating func apply(_ action: ConformanceExplorer.Move.Action) -> ConformanceScenario.Action {
        switch action {
        case .scan(let k): return .user(.scan(k.request))
        case .done: return .user(.done)
        case .background: return .user(.background)
        case .foreground: return .user(.foreground)
        case .inactive: return .user(.inactive)
        case .present(let k):
            names += k.names
            return .present(zip(k.references, k.names).map { (tag: $0, name: $1, faults: []) })
        case .remove(let k):
            let name = names.last(where: k.names.contains)!
            names.removeAll { $0 == name }
            return .remove(name)
        case .otherAppSession(let d): return .otherAppSession(d)
        case .terminate: return .system(.terminate)
        case .terminateNextBegin: return .system(.terminateNextBegin)
        case .busyPolicy(let p): return .system(.busyPolicy(p))
        case .heat(let h): return .system(.heat(fieldSeconds: h))
        }
    }
}

extension SplitMix64 {
    /// A number in `0..<n` (`n` > 0), by the remainder (bias below 2^-50 for the explorer's
    /// small `n`); no standard-library sampling, so a seed draws the same moves everywhere.
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
