/// What `body` finds (an enum case's payload, by `if case`), or nil: for
/// `let x = try #require(matched { if case .done(let x) = outcome { x } else { nil } }, "…")`,
/// the `try #require` form of `guard case … else { Issue.record(…); return }` (a test that
/// meets the wrong case stops there, failed). A case that binds nothing: ``matches(_:)``.
public func matched<T>(_ body: () throws -> T?) rethrows -> T? { try body() }

/// ``matched(_:)`` for a case found by awaiting (`await it.next()`).
public func matchedAsync<T>(_ body: () async throws -> T?) async rethrows -> T? { try await body() }

/// Whether `body` holds (an `if case` that binds nothing), for
/// `try #require(matches { if case .busy = r { true } else { false } }, "…")`.
public func matches(_ body: () throws -> Bool) rethrows -> Bool { try body() }

/// ``matches(_:)`` for a case found by awaiting.
public func matchesAsync(_ body: () async throws -> Bool) async rethrows -> Bool { try await body() }
