public import Foundation
public import NFCTags

/// Background tag reading: the iPhone reading NDEF tags with no reader session and no app
/// involvement (iPhone XS and later), the design the seed's time-limit article recommends for
/// "tap tags while walking around". Apple's page "Adding Support for Background Tag Reading"
/// (Core NFC) is the source of the rules marked documented; ``facts`` lists every rule with
/// its label for `docs/model.md`.
///
/// The model is pure: ``read(_:sessionInProgress:)`` says what the phone does with one tag's
/// NDEF message given the phone's ``Conditions``, the app's ``associatedDomains`` and whether
/// a reader session is in progress; ``userActivity(for:)`` is what the app then receives
/// (`NSUserActivity.ndefMessagePayload`) when the user taps the notification.
public struct BackgroundTagReading: Sendable, Hashable {
    /// The phone's state that decides whether it reads in the background at all.
    public struct Conditions: Sendable, Hashable {
        /// The model reads in the background (iPhone XS and later; documented: "iPhone X and
        /// earlier devices don't support background tag reading").
        public var supported: Bool
        /// Unlocked at least once since it booted (documented: unavailable when "the device
        /// has never been unlocked").
        public var unlockedSinceBoot: Bool
        /// The phone is in use, its display on (documented: "reads tags in the background only
        /// when the user's iPhone is in use").
        public var inUse: Bool
        /// Locked (display on, lock screen): the tag is read, and tapping the notification asks
        /// the user to unlock before the app gets the data (documented).
        public var locked: Bool
        /// Apple Pay Wallet is in use (documented: unavailable).
        public var walletInUse: Bool
        /// The camera is in use (documented: unavailable).
        public var cameraInUse: Bool
        /// Airplane mode is on (documented: unavailable).
        public var airplaneMode: Bool

        public init(
            supported: Bool = true, unlockedSinceBoot: Bool = true, inUse: Bool = true, locked: Bool = false,
            walletInUse: Bool = false, cameraInUse: Bool = false, airplaneMode: Bool = false
        ) {
            self.supported = supported
            self.unlockedSinceBoot = unlockedSinceBoot
            self.inUse = inUse
            self.locked = locked
            self.walletInUse = walletInUse
            self.cameraInUse = cameraInUse
            self.airplaneMode = airplaneMode
        }
    }

    /// Which record of the message the system looks at.
    public enum URIRecordRule: String, Sendable, Hashable, CaseIterable {
        /// The first URI record anywhere in the message (TNF well known, type `U`); records of
        /// other types before it are skipped (documented: "inspects the tag's NDEF message for
        /// a URI record … If the NDEF message contains more than one URI record, the system
        /// uses the first one"). The default.
        case firstURIRecord = "first-uri-record"
        /// Only the message's first record: a message that starts with another record type is
        /// ignored (reported: GoToTags' "iOS Background NFC Tag Reading" page, "Parses the 1st
        /// NDEF record and checks if it's a supported NDEF record type and URL scheme").
        case firstRecordOnly = "first-record-only"
    }

    /// Why no background read happened.
    public enum Unavailable: String, Sendable, Hashable, CaseIterable {
        case notSupported = "not-supported"
        case neverUnlocked = "never-unlocked"
        case notInUse = "not-in-use"
        case readerSessionInProgress = "reader-session-in-progress"
        case walletInUse = "wallet-in-use"
        case cameraInUse = "camera-in-use"
        case airplaneMode = "airplane-mode"
    }

    /// Why a tag that was read brought no notification.
    public enum Ignored: String, Sendable, Hashable, CaseIterable {
        /// Not NDEF formatted, or an empty NDEF message.
        case noNDEFMessage = "no-ndef-message"
        /// No URI record the rule accepts (a Text record, a MIME record, a Wi-Fi record…).
        case noURIRecord = "no-uri-record"
        /// A URI the URL parser refuses, or one with no scheme.
        case invalidURI = "invalid-uri"
    }

    /// Who handles the notification when the user taps it.
    public enum Target: String, Sendable, Hashable, CaseIterable {
        /// The app: an `http`/`https` URL whose host is one of the app's associated domains
        /// (a universal link). It gets an `NSUserActivity` with the NDEF message.
        case app
        /// Safari: an `http`/`https` URL that no installed app claims (documented).
        case safari
        /// The app or system service that handles the URL's scheme (`tel:`, `mailto:`, a
        /// custom scheme): not the app under test through `NSUserActivity` (assumed: Apple's
        /// page says the scheme's app is launched, not that it gets the NDEF message).
        case urlScheme = "url-scheme"
    }

    /// The notification the phone shows for one tag.
    public struct Notification: Sendable, Hashable {
        /// The URL of the URI record the system chose.
        public var url: URL
        public var target: Target
        /// The whole NDEF message as read (what `ndefMessagePayload` carries).
        public var message: NFCNDEFMessage
        /// Tapping it asks the user to unlock first (``Conditions/locked``).
        public var needsUnlock: Bool
    }

    /// What the phone does with one tag.
    public enum Outcome: Sendable, Hashable {
        /// No background read at all (the tag stays unread; a session, if any, gets it).
        case unavailable(Unavailable)
        /// Read, but no notification.
        case ignored(Ignored)
        /// Read, and a notification shown.
        case notification(Notification)
    }

    /// The phone's conditions.
    public var conditions: Conditions
    /// The app's `com.apple.developer.associated-domains` `applinks:` entries, without the
    /// prefix: `example.com`, or `*.example.com` for every subdomain (documented: Apple's
    /// Associated Domains entitlement). Matching is by host only; the site's
    /// apple-app-site-association file is taken to claim every path (assumed).
    public var associatedDomains: [String]
    public var uriRecordRule: URIRecordRule

    public init(
        conditions: Conditions = Conditions(), associatedDomains: [String] = [],
        uriRecordRule: URIRecordRule = .firstURIRecord
    ) {
        self.conditions = conditions
        self.associatedDomains = associatedDomains.map(Self.domain)
        self.uriRecordRule = uriRecordRule
    }

    /// An associated-domains entry as matched: `applinks:example.com` → `example.com`
    /// (lower-cased; a `:port` kept).
    public static func domain(_ entry: String) -> String {
        var d = entry.lowercased()
        if d.hasPrefix("applinks:") { d.removeFirst("applinks:".count) }
        return d
    }

    /// Why the phone does not read in the background now, `nil` when it does.
    public func unavailability(sessionInProgress: Bool) -> Unavailable? {
        if !conditions.supported { return .notSupported }
        if !conditions.unlockedSinceBoot { return .neverUnlocked }
        if !conditions.inUse { return .notInUse }
        if sessionInProgress { return .readerSessionInProgress }
        if conditions.walletInUse { return .walletInUse }
        if conditions.cameraInUse { return .cameraInUse }
        if conditions.airplaneMode { return .airplaneMode }
        return nil
    }

    /// What the phone does with a tag whose NDEF message is `message` (`nil`: no NDEF, or
    /// none could be read).
    public func read(_ message: NFCNDEFMessage?, sessionInProgress: Bool) -> Outcome {
        if let why = unavailability(sessionInProgress: sessionInProgress) { return .unavailable(why) }
        guard let message, !message.records.isEmpty,
            !(message.records.count == 1 && message.records[0].typeNameFormat == .empty)
        else { return .ignored(.noNDEFMessage) }
        let candidates: [NFCNDEFPayload]
        switch uriRecordRule {
        case .firstURIRecord: candidates = message.records
        case .firstRecordOnly: candidates = [message.records[0]]
        }
        guard let record = candidates.first(where: Self.isURIRecord) else { return .ignored(.noURIRecord) }
        guard let url = record.wellKnownTypeURIPayload(), let scheme = url.scheme?.lowercased(), !scheme.isEmpty else {
            return .ignored(.invalidURI)
        }
        let target: Target
        if scheme == "http" || scheme == "https" {
            target = isUniversalLink(url) ? .app : .safari
        } else {
            target = .urlScheme
        }
        return .notification(Notification(url: url, target: target, message: message, needsUnlock: conditions.locked))
    }

    /// A URI record: TNF well known (1) and type `U` (documented).
    public static func isURIRecord(_ r: NFCNDEFPayload) -> Bool {
        r.typeNameFormat == .nfcWellKnown && r.type == Data([0x55])
    }

    /// Whether `url` is a universal link of the app: `http`/`https` with a host that is one of
    /// ``associatedDomains`` (`*.example.com` matches every subdomain of `example.com`; that it
    /// does not match `example.com` itself is assumed).
    public func isUniversalLink(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            var host = url.host?.lowercased()
        else { return false }
        if let port = url.port { host += ":\(port)" }
        for d in associatedDomains {
            if d.hasPrefix("*.") {
                if host.hasSuffix(String(d.dropFirst(1))) { return true }
            } else if host == d {
                return true
            }
        }
        return false
    }

    /// What the app receives when the user taps `notification` (a universal link): UIKit's
    /// `scene(_:continue:)` / `application(_:continue:restorationHandler:)` with an
    /// `NSUserActivity` of type `NSUserActivityTypeBrowsingWeb`, its `webpageURL` the link and
    /// its `ndefMessagePayload` the tag's whole message (documented). `nil` for a
    /// notification the app does not get.
    public func userActivity(for notification: Notification) -> NSUserActivity? {
        guard notification.target == .app else { return nil }
        return NSUserActivity(
            activityType: NSUserActivityTypeBrowsingWeb, webpageURL: notification.url,
            ndefMessagePayload: notification.message)
    }

    /// The stored properties and the ``facts`` keys that state them (a test checks each).
    public static let factKeysByProperty: [String: [String]] = [
        "conditions": [
            "background_reading_supported", "background_reading_conditions", "background_reading_session_rule",
            "background_reading_locked",
        ],
        "associatedDomains": ["background_reading_universal_link", "background_reading_delivery"],
        "uriRecordRule": ["background_reading_uri_record", "background_reading_notification"],
    ]

    static let page =
        "Apple, Core NFC: Adding Support for Background Tag Reading (developer.apple.com/documentation/corenfc/adding_support_for_background_tag_reading)"

    /// Every rule with its source.
    public var facts: [ModelFact] {
        var out: [ModelFact] = []
        func add(_ key: String, _ text: String, _ source: ModelSource, _ ref: String, covers: String) {
            out.append(
                ModelFact(key: key, value: .text(text), text: text, source: source, reference: ref, covers: covers))
        }
        add(
            "background_reading_supported", conditions.supported ? "yes" : "no", .documented,
            Self.page + ": iPhone X and earlier devices don't support background tag reading",
            covers:
                "which iPhones read in the background; a conformance scenario turns it on with background_reading (off otherwise: the suite's older scenarios are unchanged)"
        )
        add(
            "background_reading_conditions",
            "display on and in use; unlocked since boot; Wallet, camera, airplane mode off", .documented,
            Self.page
                + ": reads only when the iPhone is in use; unavailable when the device has never been unlocked, Apple Pay Wallet or the camera is in use, or airplane mode is on",
            covers: "when the phone reads; the order in which several apply (the first is reported here) is assumed")
        add(
            "background_reading_session_rule", "no background read while a reader session is in progress",
            .documented,
            Self.page
                + ": unavailable when a Core NFC reader session is in progress; here: any session of any app begun and not yet ended (queued, never active, or closing with its sheet up)",
            covers:
                "a session in progress; that a tag left in the field when the session ends is not read until it is presented again is assumed"
        )
        add(
            "background_reading_locked", conditions.locked ? "locked: unlock before delivery" : "unlocked",
            .documented,
            Self.page
                + ": if the iPhone is locked, the system prompts the user to unlock before providing the tag data",
            covers: "the prompt; the conformance harness takes the user to unlock at once (assumed)")
        add(
            "background_reading_uri_record", uriRecordRule.rawValue,
            uriRecordRule == .firstURIRecord ? .documented : .reported,
            uriRecordRule == .firstURIRecord
                ? Self.page
                    + ": the system looks for a URI record (TNF well known, type U) and uses the first of several; the other choice (first-record-only) is GoToTags' report (learn.gototags.com/nfc/software/iphone/reading/background)"
                : "https://learn.gototags.com/nfc/software/iphone/reading/background: the 1st NDEF record is parsed and must be a supported type",
            covers:
                "which record decides; Apple and GoToTags disagree when another record comes first, so both are selectable"
        )
        add(
            "background_reading_universal_link",
            associatedDomains.isEmpty ? "no associated domains" : associatedDomains.joined(separator: ","),
            .documented,
            Self.page
                + ": a universal link launches or brings forward the app associated with it after the notification is tapped; no app: Safari; another scheme: the app of the scheme",
            covers:
                "http(s) links matched to the app's applinks: domains by host (a *. entry: subdomains); the site's association file is taken to claim every path (assumed)"
        )
        add(
            "background_reading_notification", "one per tag presented; shown until tapped", .documented,
            Self.page
                + ": a pop-up notification each time it reads a new tag; delivery only after the user taps it",
            covers:
                "a notification per new tag; a tag presented again counts as new and the read takes no virtual time (assumed); untapped notifications staying in Notification Center is reported (Apple's 2018 Core NFC tech talk, in third-party notes)"
        )
        add(
            "background_reading_delivery", "NSUserActivity (browsing web), ndefMessagePayload = the whole message",
            .documented,
            "NSUserActivity.ndefMessagePayload (iOS 12, developer.apple.com/documentation/foundation/nsuseractivity/ndefmessagepayload): the NDEF message read by the system in the background; for other activities one record of TNF empty. "
                + Self.page + ": the system sends the NDEF message to the app as an NSUserActivity object",
            covers:
                "the activity and its payload; the harness calls continueUserActivity between willEnterForeground and didBecomeActive (the UIKit order is assumed)"
        )
        return out
    }
}
