/// Core NFC's `NFCPresentmentIntentAssertion` (iOS 17.4+): held by the foreground app,
/// it keeps the default contactless app from being woken by a reader's field.
/// It ends after ``HCEParameters/presentmentAssertionLifetime`` (15 s, Apple), when the
/// app leaves the foreground, or on ``release()`` (Core NFC: deinit); the next
/// `acquire()` must wait ``HCEParameters/presentmentReacquireCoolDown`` *(reported)*.
public struct NFCPresentmentIntentAssertion: Sendable {
    /// Why `acquire()` failed (model errors; Core NFC reports them as thrown errors).
    public enum Error: Swift.Error, Sendable, Equatable {
        /// `acquire()` works only in the foreground.
        case notInForeground
        /// The re-acquire cool-down is running; `remaining` is what is left of it.
        case coolingDown(remaining: Duration)
    }

    let id: Int
    let phone: ContactlessPhone

    /// Acquires an assertion on `phone` at its current time (Core NFC `acquire()`).
    public static func acquire(on phone: ContactlessPhone) throws(Error) -> NFCPresentmentIntentAssertion {
        try phone.acquirePresentmentIntent()
    }

    /// True until it expires or is released.
    public var isValid: Bool { phone.assertionIsHeld(id: id) }

    /// Gives the assertion up now (Core NFC: the object's deinit).
    public func release() { phone.releaseAssertion(id: id) }
}
