import UIKit

#if canImport(CoreNFC)
    import CoreNFC
#else
    import ReaderSession
#endif

/// A read-write NDEF reader: the view controller is its own delegate and implements
/// `readerSession(_:didDetect:)`, which is what makes Core NFC deliver tag objects. It
/// connects, checks the NDEF status, reads, shows the message and ends the session itself
/// (200). One tag at a time: with several in the field it asks the user to remove them.
public final class ScanViewController: UIViewController, NFCNDEFReaderSessionDelegate {
    public let scanButton = UIButton()
    public let messageLabel = UILabel()
    public private(set) var detectedMessages: [NFCNDEFMessage] = []
    private var session: NFCNDEFReaderSession?

    public override func viewDidLoad() {
        super.viewDidLoad()
        scanButton.setTitle("Scan", for: .normal)
        scanButton.addAction(UIAction { [weak self] _ in self?.beginScanning() }, for: .touchUpInside)
        view.addSubview(scanButton)
        view.addSubview(messageLabel)
    }

    func beginScanning() {
        guard NFCNDEFReaderSession.readingAvailable else { return }
        session = NFCNDEFReaderSession(delegate: self, queue: nil, invalidateAfterFirstRead: false)
        session?.alertMessage = "Hold your iPhone near the item to learn more about it."
        session?.begin()
    }

    // MARK: NFCNDEFReaderSessionDelegate

    public nonisolated func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession) {}

    public nonisolated func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {
        // Not called: implementing readerSession(_:didDetect:) makes the session read-write.
    }

    public nonisolated func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [NFCNDEFTag]) {
        if tags.count > 1 {
            session.alertMessage = "More than 1 tag is detected. Please remove all tags and try again."
            session.restartPolling()
            return
        }
        let tag = tags[0]
        session.connect(to: tag) { error in
            if error != nil {
                session.alertMessage = "Unable to connect to tag."
                session.invalidate()
                return
            }
            tag.queryNDEFStatus { status, _, error in
                if error != nil {
                    session.invalidate(errorMessage: "Unable to query the NDEF status of tag.")
                    return
                }
                switch status {
                case .notSupported:
                    session.invalidate(errorMessage: "Tag is not NDEF compliant.")
                case .readOnly, .readWrite:
                    tag.readNDEF { message, error in
                        guard error == nil, let message else {
                            session.invalidate(errorMessage: "Failed to read NDEF from tag.")
                            return
                        }
                        session.alertMessage = "Found 1 NDEF message."
                        session.invalidate()
                        DispatchQueue.main.async {
                            self.detectedMessages.append(message)
                            self.messageLabel.text = MessageText.describe(message)
                        }
                    }
                @unknown default:
                    session.invalidate(errorMessage: "Unknown NDEF tag status.")
                }
            }
        }
    }

    public nonisolated func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: Error) {
        DispatchQueue.main.async { self.session = nil }
    }
}
