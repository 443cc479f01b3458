import Foundation
import NFCTags
public import NFCTrace
public import ReaderSession

/// What background tag reading did in a run: a tag read (and its notification), a tag not
/// read or not notified (with why), a notification tapped, and the `NSUserActivity` handed
/// to the app. Its ``json`` is what `expect_events` matches (`"event"`: ``Kind``'s raw value).
public struct ConformanceBackgroundEvent: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A tag read in the background, its notification shown (`url`, `target`).
        case read = "backgroundTagRead"
        /// A tag the phone did not read in the background (`reason`: a session in progress,
        /// the camera…; ``/ReaderSession/BackgroundTagReading/Unavailable``).
        case unavailable = "backgroundReadUnavailable"
        /// A tag read but not notified (`reason`: no URI record…).
        case ignored = "backgroundReadIgnored"
        /// The user tapped a notification (`target`: who got it).
        case tapped = "notificationTapped"
        /// The app got the `NSUserActivity` (`continueUserActivity`).
        case delivered = "userActivityDelivered"
    }

    public var time: Duration
    public var kind: Kind
    /// The presentation's name.
    public var tag: String
    public var url: String?
    public var target: BackgroundTagReading.Target?
    public var reason: String?

    /// `{"event": "backgroundTagRead", "tag": …, "url": …, "target": "app", "t_ms": …}`.
    public var json: JSONObject {
        var o: JSONObject = ["tag": .string(tag)]
        if let url { o["url"] = .string(url) }
        if let target { o["target"] = .string(target.rawValue) }
        if let reason { o["reason"] = .string(reason) }
        o["t_ms"] = .string(ConformanceScenario.milliseconds(time))
        return TraceRecord(TraceRecord.Kind(rawValue: kind.rawValue), at: nil, o).json
    }
}

/// The phone's side of background tag reading in one run: which presentation brought which
/// notification, and which notifications the user has not tapped yet.
struct BackgroundPhone {
    let model: BackgroundTagReading
    /// Notifications not yet tapped, oldest first.
    private(set) var pending: [(tag: String, notification: BackgroundTagReading.Notification)] = []

    init(model: BackgroundTagReading) { self.model = model }

    /// Tags entering the field together: each is read in the background unless the phone's
    /// conditions or a reader session in progress (checked as they enter) say no. The read
    /// takes the tag file's NDEF message as the file holds it (assumed: no virtual time, no
    /// faults played).
    mutating func present(
        _ batch: [(name: String, file: TagFile, faults: [TagFault])], sessionInProgress: Bool, at now: Duration
    ) -> [ConformanceBackgroundEvent] {
        var out: [ConformanceBackgroundEvent] = []
        for item in batch {
            let message = TagReport(file: item.file).ndefMessage
            switch model.read(message, sessionInProgress: sessionInProgress) {
            case .unavailable(let why):
                out.append(.init(time: now, kind: .unavailable, tag: item.name, reason: why.rawValue))
            case .ignored(let why):
                out.append(.init(time: now, kind: .ignored, tag: item.name, reason: why.rawValue))
            case .notification(let n):
                pending.append((item.name, n))
                out.append(
                    .init(time: now, kind: .read, tag: item.name, url: n.url.absoluteString, target: n.target))
            }
        }
        return out
    }

    /// The user taps the newest notification not yet tapped: `nil` when there is none.
    mutating func tapNewest() -> (tag: String, notification: BackgroundTagReading.Notification)? {
        pending.popLast()
    }
}

extension ConformanceHarness {
    /// The user taps the newest background-read notification. For the app's universal link
    /// the app comes forward (from the background: `willEnterForeground`), gets
    /// `continueUserActivity(_:)` with the `NSUserActivity`, then `didBecomeActive`; for
    /// Safari or another scheme's app the app under test is told nothing.
    static func tapNotification(
        _ phone: inout BackgroundPhone?, app: any ConformanceApp, system: NFCReaderSystem,
        appState: inout NFCReaderSystem.AppState, recorder: ConformanceRecorder, now: Duration
    ) {
        guard var p = phone, let (tag, n) = p.tapNewest() else {
            recorder.note(
                "the user tapped a notification at \(format(now)) but background reading showed none (background_reading off, or no tag with a URI record was read while no session was in progress)"
            )
            return
        }
        phone = p
        recorder.background(
            .init(
                time: now, kind: .tapped, tag: tag, url: n.url.absoluteString, target: n.target,
                reason: n.needsUnlock ? "unlocked-first" : nil))
        guard let activity = p.model.userActivity(for: n) else { return }
        HostWork.run {
            if appState == .background { app.willEnterForeground() }
            system.appDidBecomeActive()
            recorder.background(
                .init(time: now, kind: .delivered, tag: tag, url: n.url.absoluteString, target: n.target))
            app.continueUserActivity(activity)
            if appState != .foreground { app.didBecomeActive() }
            appState = .foreground
        }
    }
}
