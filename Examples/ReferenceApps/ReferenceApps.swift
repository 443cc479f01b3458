/// The reference apps by name: the correct one and five faulty ones, each the reference
/// app plus one habit (``ScanHabits``). `nfcbench conformance --app NAME` maps these names
/// to factories; the conformance harness itself never sees them. The fifth
/// (`resumeinterrupted`) breaks a rule only in an interleaving no shipped scenario plays: the
/// conformance explorer (`nfcbench conformance --explore`) finds it.
public enum ReferenceApps {
    /// Which app the entry is.
    public enum Design: Sendable, Hashable {
        /// ``TagScanController``: a Scan button and a reader session.
        case scanButton
        /// ``WaypointTrail``: the seed article's background tag reading (universal links, no
        /// session), with the Scan button as a fallback.
        case waypointTrail
    }

    public struct Entry: Sendable {
        public var name: String
        public var habits: ScanHabits
        /// What the app does, one line.
        public var summary: String
        public var design: Design = .scanButton
    }

    public static let all: [Entry] = [
        Entry(
            name: "reference", habits: [],
            summary: "correct: begins only on Scan, waits for the user after every ending"),
        Entry(
            name: "autorestart", habits: .restartsAfterTimeout,
            summary: "begins a new session as soon as one times out (201)"),
        Entry(
            name: "busyloop", habits: .retriesWhenBusy,
            summary: "retries begin() every 250 ms while the system is busy (203)"),
        Entry(
            name: "staletag", habits: .reusesTagsAfterRestartPolling,
            summary: "reads the previous tag object after restartPolling()"),
        Entry(
            name: "restartonreturn", habits: .restartsOnReturn,
            summary: "begins again on return to the foreground after 202, unasked"),
        Entry(
            name: "resumeinterrupted", habits: .resumesInterruptedRead,
            summary: "begins a new session when its session ends while a tag is still being read"),
        Entry(
            name: "waypoints", habits: [],
            summary: "correct: the article's background reading; a tapped notification opens the stop, no session",
            design: .waypointTrail),
        Entry(
            name: "rescanbackground", habits: .rescansBackgroundTag,
            summary: "waypoints, but begins a session to read the tag again when a background read opens it",
            design: .waypointTrail),
    ]

    /// The entry named `name`, if any.
    public static func named(_ name: String) -> Entry? { all.first { $0.name == name } }
}
