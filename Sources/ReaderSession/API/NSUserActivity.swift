public import Foundation
public import NFCTags

/// Foundation's `NSUserActivityTypeBrowsingWeb`: the activity type of a universal link (and
/// of web-to-app Handoff). Linux Foundation has no `NSUserActivity`, so the Core NFC surface
/// brings the part that background tag reading uses.
public let NSUserActivityTypeBrowsingWeb = "NSUserActivityTypeBrowsingWeb"

/// The part of Foundation's `NSUserActivity` that background tag reading delivers, with Core
/// NFC's `ndefMessagePayload` (iOS 12), so an iOS handler such as
///
/// ```swift
/// func scene(_ scene: UIScene, continue userActivity: NSUserActivity) {
///     guard userActivity.activityType == NSUserActivityTypeBrowsingWeb else { return }
///     let message = userActivity.ndefMessagePayload
///     …
/// }
/// ```
///
/// compiles with only its import changed. The conformance harness hands one to
/// `ConformanceApp.continueUserActivity(_:)` when the user taps a background-read
/// notification (``BackgroundTagReading/userActivity(for:)``).
// unchecked: open, as Foundation's is; made whole, then handed to the app once: this package never changes it after
open class NSUserActivity: NSObject, @unchecked Sendable {
    /// The activity's type (`NSUserActivityTypeBrowsingWeb` for a universal link).
    public let activityType: String
    /// Foundation: the `http`/`https` URL of a browsing-web activity (the universal link).
    open var webpageURL: URL?
    /// Foundation: the activity's title (`nil` for a background tag read here).
    open var title: String?
    /// Foundation: app-specific state (empty for a background tag read).
    open var userInfo: [AnyHashable: Any]?
    private let payload: NFCNDEFMessage?

    /// Foundation's `init(activityType:)`: an activity no background read made.
    public init(activityType: String) {
        self.activityType = activityType
        self.payload = nil
        super.init()
    }

    /// An activity made by background tag reading (what the system hands the app).
    public init(activityType: String, webpageURL: URL?, ndefMessagePayload: NFCNDEFMessage) {
        self.activityType = activityType
        self.webpageURL = webpageURL
        self.payload = ndefMessagePayload
        super.init()
    }

    /// Core NFC: the NDEF message read by the system in the background. For an activity not
    /// made by background tag reading, a message of one record whose `typeNameFormat` is
    /// `.empty` (documented: `NSUserActivity.ndefMessagePayload`, iOS 12).
    public var ndefMessagePayload: NFCNDEFMessage {
        payload
            ?? NFCNDEFMessage(records: [
                NFCNDEFPayload(format: .empty, type: Data(), identifier: Data(), payload: Data())
            ])
    }
}
