public import Dispatch
import Foundation

// On iOS this line is `import CoreNFC` (the only change): the reference apps use only the
// Core NFC-shaped API.
public import ReaderSession

/// The seed's time-limit article's "no app involvement at all" design, as an iOS app writes
/// it: waypoint tags carry a universal link (`https://example.com/stop/N`), the phone reads
/// them in the background and shows a notification, and a tap on it opens the app at that
/// stop through `scene(_:continue:)` with the tag's NDEF message in
/// `userActivity.ndefMessagePayload`. The app begins no reader session for it; its Scan
/// button (for iPhones that do not read in the background) is the reference app's
/// (``TagScanController``).
///
/// With ``ScanHabits/rescansBackgroundTag`` it is the faulty `rescanbackground` app: on a
/// background read it begins a reader session "to read the tag again", a sheet nobody asked for.
public final class WaypointTrail: @unchecked Sendable {
    public let queue = DispatchQueue(label: "example.waypoint-trail")
    /// The Scan button's screen (the fallback).
    public let scanner: TagScanController
    public let habits: ScanHabits
    // Confined to `queue`.
    private var _stops: [Int] = []
    private var _opened: [URL] = []
    private var _status = "Hold your iPhone near a waypoint tag."

    public init(system: NFCReaderSystem? = nil, habits: ScanHabits = [], after: TagScanController.Scheduler? = nil) {
        self.habits = habits
        scanner = TagScanController(system: system, habits: habits, after: after)
    }

    /// Stops visited, in the order their tags were opened.
    public var stops: [Int] { queue.sync { _stops } }
    /// The universal links opened from tags.
    public var opened: [URL] { queue.sync { _opened } }
    /// What the screen shows.
    public var status: String { queue.sync { _status } }

    /// UIKit `scene(_:continue:)`: a background read the user tapped.
    public func continueUserActivity(_ userActivity: NSUserActivity) {
        guard userActivity.activityType == NSUserActivityTypeBrowsingWeb else { return }
        let message = userActivity.ndefMessagePayload
        // The first URI record is the one the system chose; the link is also webpageURL.
        let link =
            message.records.lazy.compactMap { $0.wellKnownTypeURIPayload() }.first ?? userActivity.webpageURL
        queue.sync {
            guard let link else {
                _status = "That tag holds no link."
                return
            }
            _opened.append(link)
            let parts = link.pathComponents
            if let i = parts.firstIndex(of: "stop"), i + 1 < parts.count, let n = Int(parts[i + 1]) {
                _stops.append(n)
                _status = "Stop \(n): \(_stops.count) visited."
            } else {
                _status = "Opened \(link.absoluteString)."
            }
        }
        if habits.contains(.rescansBackgroundTag) {
            scanner.scanTapped(tagCount: 1, tagObjects: false)
        }
    }
}
