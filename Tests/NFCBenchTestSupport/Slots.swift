/// At most `count` bodies at once: for the cases of a parameterized test that each start real
/// parts (a private pcscd, virtual PN532s through libnfc, vpcd cards). Swift Testing runs every
/// case at once; a burst of a few dozen such starts on two cores makes the parts' real-time
/// timeouts (libnfc's 100 ms for a Type 2 frame) fire, while a few at a time mostly wait
/// (pcscd's card poll, session limits) and cost little. The waiting is async: no thread of the
/// cooperative pool is held.
public actor Slots {
    private let count: Int
    private var busy = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// The slots the dump round trip's and the Type 2 probe's cases share: each case starts
    /// virtual PN532s and vpcd cards and keeps the CPU busy, and with six of each at once (twelve,
    /// beside the equivalence cases) nfc-mfultralight's reads of the witness tests, which have no
    /// limiter, missed libnfc's frame timeout in a fresh clone's full run (load average 20).
    public static let busyRealParts = Slots(4)

    public init(_ count: Int) {
        precondition(count > 0)
        self.count = count
    }

    /// Runs `body` once a slot is free, and frees it when `body` returns or throws.
    public func run<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        await take()
        defer { give() }
        return try await body()
    }

    private func take() async {
        if busy < count {
            busy += 1
            return
        }
        // The slot is handed over by `give`: busy stays as it is.
        await withCheckedContinuation { waiting.append($0) }
    }

    private func give() {
        if waiting.isEmpty { busy -= 1 } else { waiting.removeFirst().resume() }
    }
}
