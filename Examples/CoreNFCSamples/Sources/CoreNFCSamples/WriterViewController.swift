import UIKit

#if canImport(CoreNFC)
    import CoreNFC
#else
    import ReaderSession
#endif

/// A tag writer (the shape of Apple's "Creating NFC Tags from Your iPhone"): a read-write
/// NDEF session that writes a product's URL and name to the tag held to the phone, then ends
/// the session itself (200). A read-only tag, a full one or one without NDEF ends it with a
/// message for the user.
public final class WriterViewController: UIViewController, NFCNDEFReaderSessionDelegate {
    public let writeButton = UIButton()
    public let statusLabel = UILabel()
    /// The URL the app writes.
    public var productURL = URL(string: "https://example.com/products/42")!
    public var productName = "Lamp 42"
    /// True once a write succeeded.
    public private(set) var wrote = false
    private var session: NFCNDEFReaderSession?
    /// Set on the main thread before the session begins, read on its queue after.
    nonisolated(unsafe) private var outgoing: NFCNDEFMessage?

    public override func viewDidLoad() {
        super.viewDidLoad()
        writeButton.setTitle("Write Tag", for: .normal)
        writeButton.addAction(UIAction { [weak self] _ in self?.beginWrite() }, for: .touchUpInside)
        view.addSubview(writeButton)
        view.addSubview(statusLabel)
    }

    func beginWrite() {
        guard NFCNDEFReaderSession.readingAvailable else { return }
        outgoing = Self.message(url: productURL, name: productName)
        session = NFCNDEFReaderSession(delegate: self, queue: nil, invalidateAfterFirstRead: false)
        session?.alertMessage = "Hold your iPhone near a writable NFC tag to update."
        session?.begin()
    }

    /// The message the app writes: the URL, then the name as a Text record.
    nonisolated static func message(url: URL, name: String) -> NFCNDEFMessage? {
        guard let uri = NFCNDEFPayload.wellKnownTypeURIPayload(url: url),
            let text = NFCNDEFPayload.wellKnownTypeTextPayload(string: name, locale: Locale(identifier: "en"))
        else { return nil }
        return NFCNDEFMessage(records: [uri, text])
    }

    // MARK: NFCNDEFReaderSessionDelegate

    public nonisolated func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}

    public nonisolated func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [NFCNDEFTag]) {
        if tags.count > 1 {
            session.alertMessage = "More than 1 tag is detected. Please remove all tags and try again."
            session.restartPolling()
            return
        }
        let tag = tags[0]
        guard let message = outgoing else { return session.invalidate(errorMessage: "Nothing to write.") }
        session.connect(to: tag) { error in
            if error != nil {
                session.invalidate(errorMessage: "Unable to connect to tag.")
                return
            }
            tag.queryNDEFStatus { status, capacity, error in
                guard error == nil else {
                    session.invalidate(errorMessage: "Unable to query the NDEF status of tag.")
                    return
                }
                switch status {
                case .notSupported:
                    session.invalidate(errorMessage: "Tag is not NDEF compliant.")
                case .readOnly:
                    session.invalidate(errorMessage: "Tag is read only.")
                case .readWrite:
                    guard message.length <= capacity else {
                        session.invalidate(errorMessage: "The tag is too small for this product.")
                        return
                    }
                    tag.writeNDEF(message) { error in
                        if let error {
                            session.invalidate(errorMessage: "Write to tag fail: \(error.localizedDescription)")
                            return
                        }
                        session.alertMessage = "Update success!"
                        session.invalidate()
                        DispatchQueue.main.async {
                            self.wrote = true
                            self.statusLabel.text = "Wrote \(MessageText.describe(message))"
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
