import Foundation
import NFCBase

/// Runs blocking work (a process, a socket, a C call that waits, a frontend's `withTag`) on a
/// thread of its own and resumes the awaiting test when it returns, so a test never blocks one
/// of the cooperative pool's two threads (a blocked pool stalls every async test beside it).
/// The one helper for every test target: `NFCBase.OffPool` under a test thread name.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await OffPool.run(name: "nfcbench.test.blocking", body)
}
