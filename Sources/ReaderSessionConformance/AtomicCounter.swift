import Synchronization

/// A thread-safe integer.
final class AtomicCounter: Sendable {
    private let v = Atomic<Int>(0)
    var value: Int { v.load(ordering: .acquiring) }
    func add(_ d: Int) { v.add(d, ordering: .acquiringAndReleasing) }
}
