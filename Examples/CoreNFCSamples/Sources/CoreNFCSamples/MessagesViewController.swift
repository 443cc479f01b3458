import UIKit

#if canImport(CoreNFC)
    import CoreNFC
#else
    import ReaderSession
#endif

/// The Scan screen of a tag-reader app: one read-only NDEF session that ends after the
/// first tag (204), the message shown on screen. Written as an iOS app's view controller is
/// (Apple's "Building an NFC Tag-Reader App" has this shape); only the import above differs
/// between iOS and the bench.
public final class MessagesViewController: UIViewController, NFCNDEFReaderSessionDelegate {
    public let scanButton = UIButton()
    public let messageLabel = UILabel()
    public private(set) var detectedMessages: [NFCNDEFMessage] = []
    /// The last ending's text when it was not the expected one (204) or the user's (200).
    public private(set) var alertText: String?
    private var session: NFCNDEFReaderSession?

    public override func viewDidLoad() {
        super.viewDidLoad()
        scanButton.setTitle("Scan", for: .normal)
        scanButton.addAction(UIAction { [weak self] _ in self?.beginScanning() }, for: .touchUpInside)
        view.addSubview(scanButton)
        view.addSubview(messageLabel)
    }

    func beginScanning() {
        guard NFCNDEFReaderSession.readingAvailable else {
            let alert = UIAlertController(
                title: "Scanning Not Supported", message: "This device doesn't support tag scanning.",
                preferredStyle: .alert)
            alert.addAction(UIAlertAction(title: "OK", style: .default))
            present(alert, animated: true)
            return
        }
        session = NFCNDEFReaderSession(delegate: self, queue: nil, invalidateAfterFirstRead: true)
        session?.alertMessage = "Hold your iPhone near the item to learn more about it."
        session?.begin()
    }

    // MARK: NFCNDEFReaderSessionDelegate (called on the session's own queue)

    public nonisolated func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {
        DispatchQueue.main.async {
            self.detectedMessages.append(contentsOf: messages)
            self.messageLabel.text = messages.first.map(MessageText.describe) ?? "No message"
        }
    }

    public nonisolated func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: Error) {
        let code = (error as? NFCReaderError)?.code
        let text = error.localizedDescription
        DispatchQueue.main.async {
            self.session = nil
            if code != .readerSessionInvalidationErrorFirstNDEFTagRead
                && code != .readerSessionInvalidationErrorUserCanceled
            {
                self.alertText = text
                let alert = UIAlertController(title: "Session Invalidated", message: text, preferredStyle: .alert)
                alert.addAction(UIAlertAction(title: "OK", style: .default))
                self.present(alert, animated: true)
            }
        }
    }
}

/// What the screens show of a message: its first record's URI or text, else its size.
enum MessageText {
    static func describe(_ message: NFCNDEFMessage) -> String {
        guard let record = message.records.first else { return "Empty message" }
        if let url = record.wellKnownTypeURIPayload() { return url.absoluteString }
        let (text, _) = record.wellKnownTypeTextPayload()
        if let text { return text }
        return "\(record.payload.count) bytes"
    }

    static func hex(_ data: Data) -> String {
        data.map { String(format: "%02X", $0) }.joined()
    }
}
