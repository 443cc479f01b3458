/// The reference apps by name: the correct one and five faulty ones, each the reference
/// app plus one habit (``ScanHabits``). `nfcbench conformance --app NAME` maps these names
/// to factories; the conformance harness itself never sees them. The fifth
/// (`resumeinterrupted`) breaks a rule only in an interleaving no shipped scenario plays: the
/// conformance explorer (`nfcbench conformance --explore`) finds it.
public enum ReferenceApps {
    public struct Entry: Sendable {
        public var name: String
        public var habits: ScanHabits
        /// What the app does, one line.
        public var summary: String
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
    ]

    /// The entry named `name`, if any.
    public static func named(_ name: String) -> Entry? { all.first { $0.name == name } }
}
