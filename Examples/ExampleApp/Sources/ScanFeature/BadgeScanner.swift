#if canImport(CoreNFC)
    public import CoreNFC
#else
    public import ReaderSession
#endif

/// The "scan your badge" screen of an app: one tap, one sheet, one result.
///
/// The file compiles in both worlds: in the iOS app (or the Swift package the app's Xcode
/// project shares) against Core NFC, and on Linux against nfcbench's ReaderSession; only the
/// conditional import above tells them apart. It follows the seed
/// article's table: a session begins only on Scan; after a timeout it says so and waits;
/// when the system is busy it asks the user to try again; after leaving the foreground
/// it waits for the next tap.
public final class BadgeScanner: NSObject, NFCNDEFReaderSessionDelegate, @unchecked Sendable {
    /// What the screen shows.
    public enum State: Sendable, Equatable {
        case idle
        case scanning
        /// The badge's first record: its URI or text.
        case read(String)
        case timedOut
        case busy
        case interrupted
        case unavailable(String)
    }

    /// The sessions' delegate queue; the UI entry points hop onto it.
    public let queue = DispatchQueue(label: "example.badge-scanner")
    private var session: NFCNDEFReaderSession?
    private var _state = State.idle

    public override init() {}

    public var state: State { queue.sync { _state } }

    /// The Scan button: begins a read-only session that ends after the first tag (204).
    public func scanTapped() {
        queue.sync {
            guard session?.isReady != true else { return }
            let s = NFCNDEFReaderSession(delegate: self, queue: queue, invalidateAfterFirstRead: true)
            s.alertMessage = "Hold your iPhone near your badge."
            session = s
            _state = .scanning
            s.begin()
        }
    }

    public func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {
        guard let record = messages.first?.records.first else { return }
        if let url = record.wellKnownTypeURIPayload() {
            _state = .read(url.absoluteString)
        } else if let text = record.wellKnownTypeTextPayload().0 {
            _state = .read(text)
        } else {
            _state = .read("\(record.payload.count) bytes")
        }
    }

    public func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
        guard session === self.session else { return }
        self.session = nil
        switch (error as? NFCReaderError)?.code {
        case .readerSessionInvalidationErrorFirstNDEFTagRead?: break  // success; the state says what was read
        case .readerSessionInvalidationErrorUserCanceled?: _state = .idle
        case .readerSessionInvalidationErrorSessionTimeout?: _state = .timedOut
        case .readerSessionInvalidationErrorSystemIsBusy?: _state = .busy
        case .readerSessionInvalidationErrorSessionTerminatedUnexpectedly?: _state = .interrupted
        default: _state = .unavailable("\(error)")
        }
    }
}
