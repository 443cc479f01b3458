import Foundation
import NFCTags
import NFCTrace
import ReaderFrontend
import ReaderSession
import Synchronization

/// What a session of `check equivalence` does, the same on every device.
public enum EquivalenceMode: String, CaseIterable, Sendable {
    /// `NFCNDEFReaderSession`, read-only, invalidated after the first read (`didDetectNDEFs`).
    case ndef
    /// `NFCNDEFReaderSession` with a tag delegate: connect, `readNDEF`, then Done (200).
    case ndefRW = "ndef-rw"
    /// `NFCTagReaderSession`: connect, `readNDEF` on the NDEF tag, then Done.
    case tag
    /// `NFCNDEFReaderSession` with a tag delegate: connect, `writeNDEF` of the check's
    /// message, then Done; the bytes left on the tag are compared and read back by another device.
    case write
    /// The same with an empty message: the tag formatted (`03 00 FE` on Type 2, NLEN 0000 on Type 4).
    case format

    /// Modes that change the tag.
    public var writes: Bool { self == .write || self == .format }
}

/// One session as an app runs it on a reader frontend, recording the Core NFC events (the
/// session system's trace records) and what the app did with the tag. Independent of the
/// `nfcbench` command's own session runner: every device gets the same app.
enum EquivalenceSession {
    /// The message a `write` row writes: one Text record, "check equivalence" (en), 24 bytes,
    /// small enough for a 48-byte Ultralight.
    static let writeMessage: [UInt8] = [0xD1, 0x01, 0x14, 0x54, 0x02, 0x65, 0x6E] + Array("check equivalence".utf8)

    /// Runs one session of `mode` on `frontend` (time limit `limit`, thermal model off) and
    /// returns its ending and its records, oldest first. A `tag` session polls the family of
    /// `file`'s tag (`.iso14443`, `.iso18092` or `.iso15693`); the app's Info.plist lists every
    /// system code of a FeliCa file, so its card is delivered on its first system.
    static func run(frontend: ReaderFrontend, mode: EquivalenceMode, limit: Duration, file: TagFile? = nil) async -> (
        ending: NFCReaderError.Code, records: [JSONObject]
    ) {
        let log = RecordBuffer()
        var params = ThermalModel.disabled.parameters
        params.baseLimit = limit
        if params.minimumLimit > params.baseLimit { params.minimumLimit = params.baseLimit }
        var model = ReaderSystemModel()
        model.feliCaSystemCodes = file?.feliCa?.systems.map { String(format: "%04X", $0.code) } ?? []
        let system = NFCReaderSystem(
            backend: frontend, thermal: ThermalModel(parameters: params), model: model,
            observer: { record in log.add(record.json()) })
        let polling: NFCPollingOption =
            file.map { $0.type.isFeliCa ? .iso18092 : $0.type.isISO15693 ? .iso15693 : .iso14443 } ?? .iso14443
        let ending = await withCheckedContinuation { (k: CheckedContinuation<NFCReaderError.Code, Never>) in
            let app = EquivalenceApp(mode: mode, system: system, log: log, polling: polling) { k.resume(returning: $0) }
            app.begin()
        }
        return (ending, log.all)
    }
}

/// The trace records of one run, appended from the session system's threads.
final class RecordBuffer: Sendable {
    private let records = Mutex<[JSONObject]>([])
    func add(_ r: JSONObject) { records.withLock { $0.append(r) } }
    var all: [JSONObject] { records.withLock { $0 } }
}

/// The app: one tag, then Done (or the first read for `ndef`).
private final class EquivalenceApp: NSObject, NFCNDEFReaderSessionTagDelegate, NFCTagReaderSessionDelegate,
    @unchecked Sendable
{
    let mode: EquivalenceMode
    let system: NFCReaderSystem
    let log: RecordBuffer
    private let finish: Mutex<(@Sendable (NFCReaderError.Code) -> Void)?>
    /// The app holds its sessions and itself until the ending (Core NFC's sessions hold their
    /// delegates weakly).
    private let held = Mutex<(AnyObject?, EquivalenceApp?)>((nil, nil))

    let polling: NFCPollingOption

    init(
        mode: EquivalenceMode, system: NFCReaderSystem, log: RecordBuffer, polling: NFCPollingOption,
        finished: @escaping @Sendable (NFCReaderError.Code) -> Void
    ) {
        self.polling = polling
        self.mode = mode
        self.system = system
        self.log = log
        self.finish = Mutex(finished)
    }

    func begin() {
        held.withLock { $0.1 = self }
        switch mode {
        case .ndef:
            // Read-only: a delegate without the tag method, so the session delivers messages.
            let delegate = ReadOnly(app: self)
            let session = NFCNDEFReaderSession(
                delegate: delegate, queue: nil, invalidateAfterFirstRead: true, system: system)
            session.alertMessage = "Hold your iPhone near an NFC tag."
            held.withLock { $0.0 = [session, delegate] as AnyObject }
            session.begin()
        case .ndefRW, .write, .format:
            let session = NFCNDEFReaderSession(
                delegate: self, queue: nil, invalidateAfterFirstRead: false, system: system)
            session.alertMessage = "Hold your iPhone near an NFC tag."
            held.withLock { $0.0 = session }
            session.begin()
        case .tag:
            guard
                let session = NFCTagReaderSession(pollingOption: polling, delegate: self, queue: nil, system: system)
            else {
                end(.readerErrorInvalidParameter)
                return
            }
            session.alertMessage = "Hold your iPhone near an NFC tag."
            held.withLock { $0.0 = session }
            session.begin()
        }
    }

    /// The read-only delegate of `ndef` mode.
    private final class ReadOnly: NSObject, NFCNDEFReaderSessionDelegate, @unchecked Sendable {
        let app: EquivalenceApp
        init(app: EquivalenceApp) { self.app = app }
        func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}
        func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
            app.end(EquivalenceApp.code(error))
        }
    }

    fileprivate func end(_ code: NFCReaderError.Code) {
        let f = finish.withLock { f in
            defer { f = nil }
            return f
        }
        f?(code)
        held.withLock { $0 = (nil, nil) }
    }

    private func note(_ event: String, _ fields: JSONObject) {
        log.add(TraceRecord(TraceRecord.Kind(rawValue: event), at: nil, fields).json)
    }

    fileprivate static func code(_ error: any Error) -> NFCReaderError.Code {
        (error as? NFCReaderError)?.code ?? .readerErrorUnsupportedFeature
    }

    // NFCNDEFReaderSessionDelegate: read-only mode's delivery is in the system's records.
    func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}

    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
        end(Self.code(error))
    }

    func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [any NFCNDEFTag]) {
        handle(tags, session: session) { tag in try await session.connect(to: tag) }
    }

    func tagReaderSession(_ session: NFCTagReaderSession, didDetect tags: [NFCTag]) {
        handle(tags.map(\.ndefTag), session: session) { tag in
            guard let t = tags.first(where: { $0.ndefTag === tag }) else { return }
            try await session.connect(to: t)
        }
    }

    func tagReaderSession(_ session: NFCTagReaderSession, didInvalidateWithError error: any Error) {
        end(Self.code(error))
    }

    /// One tag: connect, read or write it, then Done whatever happened.
    private func handle(
        _ tags: [any NFCNDEFTag], session: NFCReaderSessionCore,
        connect: @escaping @Sendable (any NFCNDEFTag) async throws -> Void
    ) {
        guard let tag = tags.first else { return }
        let mode = self.mode
        Task {
            do {
                try await connect(tag)
                switch mode {
                case .write, .format:
                    let message =
                        mode == .write
                        ? try NFCNDEFMessage(bytes: EquivalenceSession.writeMessage) : NFCNDEFMessage(records: [])
                    try await tag.writeNDEF(message)
                    note("writeNDEF", NDEFMessageBytes(message.bytes).json)
                default:
                    let message = try await tag.readNDEF()
                    note("readNDEF", NDEFMessageBytes(message.bytes).json)
                }
            } catch {
                let c = Self.code(error)
                note(
                    mode.writes ? "writeNDEFFailed" : "readNDEFFailed",
                    ["code": .int(Int64(c.rawValue)), "reason": .string(c.name)])
            }
            session.invalidate()
        }
    }
}
