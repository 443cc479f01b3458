import Foundation
import ReaderSession
import Testing

/// An iOS background-read handler as Apple's page writes it, with only the import changed:
/// it must compile against the Core NFC surface (`NSUserActivity`, `ndefMessagePayload`,
/// `NSUserActivityTypeBrowsingWeb`, `webpageURL`).
private func handle(_ userActivity: NSUserActivity) -> (URL?, NFCNDEFMessage)? {
    guard userActivity.activityType == NSUserActivityTypeBrowsingWeb else { return nil }
    let ndefMessage = userActivity.ndefMessagePayload
    return (userActivity.webpageURL, ndefMessage)
}

private func uri(_ s: String) -> NFCNDEFPayload { NFCNDEFPayload.wellKnownTypeURIPayload(string: s)! }
private func text(_ s: String) -> NFCNDEFPayload {
    NFCNDEFPayload.wellKnownTypeTextPayload(string: s, locale: Locale(identifier: "en"))!
}
private func message(_ records: NFCNDEFPayload...) -> NFCNDEFMessage { NFCNDEFMessage(records: records) }

@Suite("Background tag reading (the phone reads with no session)")
struct BackgroundTagReadingTests {
    let trail = BackgroundTagReading(associatedDomains: ["applinks:example.com", "*.example.org"])

    private func notification(_ o: BackgroundTagReading.Outcome) -> BackgroundTagReading.Notification? {
        if case .notification(let n) = o { return n }
        return nil
    }

    @Test("A universal link on one of the app's associated domains brings a notification for the app")
    func universalLink() throws {
        let n = try #require(
            notification(trail.read(message(uri("https://example.com/stop/1")), sessionInProgress: false)))
        #expect(n.target == .app)
        #expect(n.url.absoluteString == "https://example.com/stop/1")
        #expect(!n.needsUnlock)
        // *.example.org: its subdomains.
        #expect(
            notification(trail.read(message(uri("https://a.example.org/x")), sessionInProgress: false))?.target == .app)
        // Another site: Safari; another scheme: that scheme's app.
        #expect(
            notification(trail.read(message(uri("https://example.net/x")), sessionInProgress: false))?.target == .safari
        )
        #expect(notification(trail.read(message(uri("tel:+15551234")), sessionInProgress: false))?.target == .urlScheme)
    }

    @Test("No background read while a reader session is in progress, nor under any documented condition")
    func unavailable() {
        let m = message(uri("https://example.com/stop/1"))
        #expect(trail.read(m, sessionInProgress: true) == .unavailable(.readerSessionInProgress))
        let cases: [(WritableKeyPath<BackgroundTagReading.Conditions, Bool>, Bool, BackgroundTagReading.Unavailable)] =
            [
                (\.supported, false, .notSupported), (\.unlockedSinceBoot, false, .neverUnlocked),
                (\.inUse, false, .notInUse), (\.walletInUse, true, .walletInUse), (\.cameraInUse, true, .cameraInUse),
                (\.airplaneMode, true, .airplaneMode),
            ]
        for (path, value, why) in cases {
            var b = trail
            b.conditions[keyPath: path] = value
            #expect(b.read(m, sessionInProgress: false) == .unavailable(why), "\(why)")
        }
        // Locked (display on): read, and the tap asks to unlock first.
        var locked = trail
        locked.conditions.locked = true
        #expect(notification(locked.read(m, sessionInProgress: false))?.needsUnlock == true)
    }

    @Test("Which records qualify: the first URI record (documented) or only the first record (reported)")
    func records() throws {
        #expect(trail.read(message(text("hello")), sessionInProgress: false) == .ignored(.noURIRecord))
        #expect(trail.read(nil, sessionInProgress: false) == .ignored(.noNDEFMessage))
        #expect(
            trail.read(NSUserActivity(activityType: "x").ndefMessagePayload, sessionInProgress: false)
                == .ignored(.noNDEFMessage))
        let mixed = message(text("Stop"), uri("https://example.com/stop/2"), uri("https://example.com/stop/3"))
        let n = try #require(notification(trail.read(mixed, sessionInProgress: false)))
        #expect(n.url.absoluteString == "https://example.com/stop/2")
        #expect(n.message.records.count == 3)
        var strict = trail
        strict.uriRecordRule = .firstRecordOnly
        #expect(strict.read(mixed, sessionInProgress: false) == .ignored(.noURIRecord))
    }

    @Test("Tapping the notification gives the app an NSUserActivity whose ndefMessagePayload is the whole message")
    func delivery() throws {
        let m = message(uri("https://example.com/stop/4"), text("Stop 4"))
        let n = try #require(notification(trail.read(m, sessionInProgress: false)))
        let activity = try #require(trail.userActivity(for: n))
        let (url, payload) = try #require(handle(activity))
        #expect(url?.absoluteString == "https://example.com/stop/4")
        #expect(payload == m)
        // Safari's notification gives the app nothing.
        let safari = try #require(
            notification(trail.read(message(uri("https://example.net/")), sessionInProgress: false)))
        #expect(trail.userActivity(for: safari) == nil)
        // An activity no background read made: one record of TNF empty (documented).
        let other = NSUserActivity(activityType: NSUserActivityTypeBrowsingWeb).ndefMessagePayload
        #expect(other.records.count == 1 && other.records[0].typeNameFormat == .empty)
    }

    @Test("Every stored property of the model has a fact with a source label")
    func facts() {
        let keys = Set(trail.facts.map(\.key))
        for child in Mirror(reflecting: trail).children {
            guard let name = child.label else { continue }
            let named = BackgroundTagReading.factKeysByProperty[name] ?? []
            #expect(!named.isEmpty, "BackgroundTagReading.\(name) has no row")
            for k in named { #expect(keys.contains(k), "\(name): \(k)") }
        }
        #expect(trail.facts.allSatisfy { !$0.reference.isEmpty && !$0.covers.isEmpty })
    }
}
