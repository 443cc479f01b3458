import UIKit

#if canImport(CoreNFC)
    import CoreNFC
#else
    import ReaderSession
#endif

/// A tag-session feature: reads what identifies the tag held to the phone. An ISO 7816 tag
/// (its Info.plist AID selected by the session) gets SELECT of its capability container file
/// and READ BINARY; a MIFARE tag gets READ of pages 0–3. The result goes on screen and the
/// app ends the session itself (200).
public final class TagReaderViewController: UIViewController, NFCTagReaderSessionDelegate {
    public let readButton = UIButton()
    public let resultLabel = UILabel()
    /// What was read: "ISO 7816 <AID>: CC <hex>" or "MIFARE <UID>: <pages hex>".
    public private(set) var result: String?
    private var session: NFCTagReaderSession?

    public override func viewDidLoad() {
        super.viewDidLoad()
        readButton.setTitle("Read Tag", for: .normal)
        readButton.addAction(UIAction { [weak self] _ in self?.beginReading() }, for: .touchUpInside)
        view.addSubview(readButton)
        view.addSubview(resultLabel)
    }

    func beginReading() {
        session = NFCTagReaderSession(pollingOption: [.iso14443], delegate: self)
        session?.alertMessage = "Hold your iPhone near the tag."
        session?.begin()
    }

    private nonisolated func show(_ text: String) {
        DispatchQueue.main.async {
            self.result = text
            self.resultLabel.text = text
        }
    }

    // MARK: NFCTagReaderSessionDelegate

    public nonisolated func tagReaderSessionDidBecomeActive(_ session: NFCTagReaderSession) {}

    public nonisolated func tagReaderSession(_ session: NFCTagReaderSession, didDetect tags: [NFCTag]) {
        guard tags.count == 1, let tag = tags.first else {
            session.alertMessage = "More than 1 tag is detected. Please remove all tags and try again."
            session.restartPolling()
            return
        }
        session.connect(to: tag) { error in
            if let error {
                session.invalidate(errorMessage: "Connection error: \(error.localizedDescription)")
                return
            }
            switch tag {
            case .iso7816(let iso):
                let selectCC = NFCISO7816APDU(
                    instructionClass: 0x00, instructionCode: 0xA4, p1Parameter: 0x00, p2Parameter: 0x0C,
                    data: Data([0xE1, 0x03]), expectedResponseLength: -1)
                iso.sendCommand(apdu: selectCC) { _, sw1, sw2, error in
                    guard error == nil, sw1 == 0x90, sw2 == 0x00 else {
                        session.invalidate(errorMessage: "The tag refused SELECT.")
                        return
                    }
                    let readCC = NFCISO7816APDU(
                        instructionClass: 0x00, instructionCode: 0xB0, p1Parameter: 0x00, p2Parameter: 0x00,
                        data: Data(), expectedResponseLength: 15)
                    iso.sendCommand(apdu: readCC) { data, sw1, sw2, error in
                        guard error == nil, sw1 == 0x90, sw2 == 0x00 else {
                            session.invalidate(errorMessage: "The tag refused READ BINARY.")
                            return
                        }
                        self.show("ISO 7816 \(iso.initialSelectedAID): CC \(MessageText.hex(data))")
                        session.alertMessage = "Tag read."
                        session.invalidate()
                    }
                }
            case .miFare(let mifare):
                mifare.sendMiFareCommand(commandPacket: Data([0x30, 0x00])) { data, error in
                    if let error {
                        session.invalidate(errorMessage: "Read error: \(error.localizedDescription)")
                        return
                    }
                    self.show("MIFARE \(MessageText.hex(mifare.identifier)): \(MessageText.hex(data))")
                    session.alertMessage = "Tag read."
                    session.invalidate()
                }
            case .feliCa, .iso15693:
                session.invalidate(errorMessage: "This tag is not supported.")
            @unknown default:
                session.invalidate(errorMessage: "This tag is not supported.")
            }
        }
    }

    public nonisolated func tagReaderSession(_ session: NFCTagReaderSession, didInvalidateWithError error: Error) {
        DispatchQueue.main.async { self.session = nil }
    }
}
