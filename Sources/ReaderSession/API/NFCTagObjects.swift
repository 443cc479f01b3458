public import FoundationEssentials
public import NFCTags
import Synchronization

/// Core NFC `NFCNDEFTag`: a tag object whose NDEF area can be queried, read and written.
/// Valid until the session ends or `restartPolling()` (then 103 / 104). Completion
/// handlers run on the session's delegate queue.
public protocol NFCNDEFTag: AnyObject, Sendable {
    /// True while the tag is in the field and its session generation is current.
    var isAvailable: Bool { get }
    /// Core NFC `queryNDEFStatus(completionHandler:)`: status and capacity in bytes.
    func queryNDEFStatus(completionHandler: @escaping @Sendable (NFCNDEFStatus, Int, (any Error)?) -> Void)
    /// Core NFC `readNDEF(completionHandler:)`. An NDEF-formatted tag holding an empty
    /// message fails with 403 `ndefReaderSessionErrorZeroLengthMessage`.
    func readNDEF(completionHandler: @escaping @Sendable (NFCNDEFMessage?, (any Error)?) -> Void)
    /// Core NFC `writeNDEF(_:completionHandler:)`: 400 read-only, 402 too large.
    func writeNDEF(_ message: NFCNDEFMessage, completionHandler: @escaping @Sendable ((any Error)?) -> Void)
}

extension NFCNDEFTag {
    /// Async `queryNDEFStatus()`.
    public func queryNDEFStatus() async throws -> (NFCNDEFStatus, Int) {
        try await withCheckedThrowingContinuation { k in
            queryNDEFStatus { s, c, e in if let e { k.resume(throwing: e) } else { k.resume(returning: (s, c)) } }
        }
    }
    /// Async `readNDEF()`.
    public func readNDEF() async throws -> NFCNDEFMessage {
        try await withCheckedThrowingContinuation { k in
            readNDEF { m, e in
                if let m {
                    k.resume(returning: m)
                } else {
                    k.resume(throwing: e ?? NFCReaderError(.readerTransceiveErrorTagResponseError))
                }
            }
        }
    }
    /// Async `writeNDEF(_:)`.
    public func writeNDEF(_ message: NFCNDEFMessage) async throws {
        try await withCheckedThrowingContinuation { (k: CheckedContinuation<Void, any Error>) in
            writeNDEF(message) { e in if let e { k.resume(throwing: e) } else { k.resume() } }
        }
    }
}

/// Core NFC `NFCMiFareFamily`.
public enum NFCMiFareFamily: Int, Sendable, Hashable {
    case unknown = 1
    case ultralight = 2
    case plus = 3
    case desfire = 4
}

/// Core NFC `NFCMiFareTag`: a MIFARE / NFC Forum Type 2 tag.
public protocol NFCMiFareTag: NFCNDEFTag {
    /// UID (7 bytes for Ultralight / NTAG).
    var identifier: Data { get }
    var mifareFamily: NFCMiFareFamily { get }
    /// Core NFC `sendMiFareCommand(commandPacket:completionHandler:)`, CRC excluded: any
    /// frame reaches the tag (READ `30`, WRITE `A2`, GET_VERSION `60`, FAST_READ `3A`,
    /// READ_SIG `3C`, PWD_AUTH `1B`, READ_CNT `39`…) and its answer comes back (an ACK as
    /// `0A`). A NAK or silence fails with the model's ``ReaderSystemModel/miFareFailureCode``
    /// (100 `readerTransceiveErrorTagConnectionLost`, reported) and the connection is gone;
    /// a packet over ``ReaderSystemModel/maximumMiFareCommandLength`` fails with 105
    /// `readerTransceiveErrorPacketTooLong` before anything is sent. A DESFire delivered as
    /// MIFARE gets the frame as one ISO-DEP exchange.
    func sendMiFareCommand(commandPacket: Data, completionHandler: @escaping @Sendable (Data, (any Error)?) -> Void)
}

extension NFCMiFareTag {
    /// Async `sendMiFareCommand(commandPacket:)`.
    public func sendMiFareCommand(commandPacket: Data) async throws -> Data {
        try await withCheckedThrowingContinuation { k in
            sendMiFareCommand(commandPacket: commandPacket) { d, e in
                if let e { k.resume(throwing: e) } else { k.resume(returning: d) }
            }
        }
    }
}

/// Core NFC `NFCISO7816Tag`: an ISO-DEP target taking APDUs.
public protocol NFCISO7816Tag: NFCNDEFTag {
    var identifier: Data { get }
    /// Historical bytes of the ATS (ISO/IEC 14443-4 §5.2.7), if any.
    var historicalBytes: Data? { get }
    /// Core NFC `initialSelectedAID`: the hex AID (one of the Info.plist's
    /// `select-identifiers`) the session selected when it discovered the tag.
    var initialSelectedAID: String { get }
    /// Core NFC `sendCommand(apdu:completionHandler:)`: response data, SW1, SW2. An APDU
    /// over ``ReaderSystemModel/maximumAPDULength`` fails with 105 before anything is sent.
    func sendCommand(
        apdu: NFCISO7816APDU, completionHandler: @escaping @Sendable (Data, UInt8, UInt8, (any Error)?) -> Void)
}

extension NFCISO7816Tag {
    /// Async `sendCommand(apdu:)`.
    public func sendCommand(apdu: NFCISO7816APDU) async throws -> (Data, UInt8, UInt8) {
        try await withCheckedThrowingContinuation { k in
            sendCommand(apdu: apdu) { d, s1, s2, e in
                if let e { k.resume(throwing: e) } else { k.resume(returning: (d, s1, s2)) }
            }
        }
    }
}

/// Core NFC `NFCTag` (the cases this harness reaches).
public enum NFCTag: Sendable {
    case miFare(any NFCMiFareTag)
    case iso7816(any NFCISO7816Tag)

    /// The tag object as an NDEF tag.
    public var ndefTag: any NFCNDEFTag {
        switch self {
        case .miFare(let t): t
        case .iso7816(let t): t
        }
    }
}

/// Core NFC `NFCISO7816APDU` (ISO/IEC 7816-4 §5.1 command APDU).
public struct NFCISO7816APDU: Sendable, Hashable {
    public let instructionClass: UInt8
    public let instructionCode: UInt8
    public let p1Parameter: UInt8
    public let p2Parameter: UInt8
    public let data: Data?
    /// Ne: −1 = no Le field; 256 (short) / 65536 (extended) = the maximum.
    public let expectedResponseLength: Int

    public init(
        instructionClass: UInt8, instructionCode: UInt8, p1Parameter: UInt8, p2Parameter: UInt8,
        data: Data, expectedResponseLength: Int
    ) {
        self.instructionClass = instructionClass
        self.instructionCode = instructionCode
        self.p1Parameter = p1Parameter
        self.p2Parameter = p2Parameter
        self.data = data.isEmpty ? nil : data
        self.expectedResponseLength = expectedResponseLength
    }

    /// Parses a command APDU (cases 1–4, short or extended); `nil` when malformed.
    public init?(data bytes: Data) {
        let b = [UInt8](bytes)
        guard b.count >= 4 else { return nil }
        var data: [UInt8] = []
        var ne = -1
        let body = b.count - 4
        if body == 0 {
        } else if body == 1 {
            ne = b[4] == 0 ? 256 : Int(b[4])
        } else if b[4] != 0 {
            let lc = Int(b[4])
            guard body == 1 + lc || body == 2 + lc else { return nil }
            data = Array(b[5..<(5 + lc)])
            if body == 2 + lc { ne = b[5 + lc] == 0 ? 256 : Int(b[5 + lc]) }
        } else {
            guard body >= 3 else { return nil }
            let n = Int(b[5]) << 8 | Int(b[6])
            if body == 3 {
                ne = n == 0 ? 65536 : n
            } else {
                guard n > 0, body == 3 + n || body == 5 + n else { return nil }
                data = Array(b[7..<(7 + n)])
                if body == 5 + n {
                    let le = Int(b[7 + n]) << 8 | Int(b[8 + n])
                    ne = le == 0 ? 65536 : le
                }
            }
        }
        self.init(
            instructionClass: b[0], instructionCode: b[1], p1Parameter: b[2], p2Parameter: b[3],
            data: Data(data), expectedResponseLength: ne)
    }

    /// The APDU's bytes: short form when Lc ≤ 255 and Ne ≤ 256, extended otherwise.
    public var bytes: [UInt8] {
        let d = data.map { [UInt8]($0) } ?? []
        var out = [instructionClass, instructionCode, p1Parameter, p2Parameter]
        let extended = d.count > 255 || expectedResponseLength > 256
        if !extended {
            if !d.isEmpty {
                out.append(UInt8(d.count))
                out += d
            }
            if expectedResponseLength > 0 { out.append(UInt8(expectedResponseLength & 0xFF)) }
        } else {
            out.append(0)
            if !d.isEmpty { out += [UInt8(d.count >> 8 & 0xFF), UInt8(d.count & 0xFF)] + d }
            if expectedResponseLength > 0 {
                let le = expectedResponseLength >= 65536 ? 0 : expectedResponseLength
                out += [UInt8(le >> 8 & 0xFF), UInt8(le & 0xFF)]
            }
        }
        return out
    }
}

// MARK: Implementation

/// The tag object behind both protocols: a handle into a runtime plus activation data.
/// The app must `connect(to:)` it before any operation (else 104), as in Core NFC; the
/// session's machine keeps which tag is connected.
final class SessionTagObject: NFCMiFareTag, NFCISO7816Tag, @unchecked Sendable {
    // Immutable after init.
    let runtime: ReaderSessionRuntime
    let handle: TagHandle
    let target: DetectedTarget
    let initialSelectedAID: String
    let deliver: @Sendable (@escaping @Sendable () -> Void) -> Void

    init(
        runtime: ReaderSessionRuntime, tag: DeliveredTag,
        deliver: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) {
        self.runtime = runtime
        self.handle = tag.handle
        self.target = tag.target
        self.initialSelectedAID = tag.initialSelectedAID ?? ""
        self.deliver = deliver
    }

    var identifier: Data { Data(target.uid) }
    /// The ATS's historical bytes: after TL, T0 and the interface bytes T0 announces
    /// (ISO/IEC 14443-4 §5.2).
    var historicalBytes: Data? {
        guard let ats = target.ats, ats.count >= 2 else { return nil }
        let length = min(Int(ats[0]), ats.count)
        let t0 = ats[1]
        var i = 2
        for bit: UInt8 in [0x10, 0x20, 0x40] where t0 & bit != 0 { i += 1 }
        return i <= length ? Data(ats[i..<length]) : nil
    }

    var mifareFamily: NFCMiFareFamily {
        switch target.kind {
        case .type2: .ultralight
        case .type4: .desfire
        case .other: .unknown
        }
    }

    var isAvailable: Bool { runtime.isAvailable(handle) }

    /// Runs an operation; the machine fails it with 104 unless this tag is the connected one.
    func run<R: Sendable>(
        _ name: String, kind: ReaderSessionMachine.OperationKind = .needsConnection,
        _ body: @escaping @Sendable (TagConnection, any NDEFTagProcedures) throws -> R,
        _ completion: @escaping @Sendable (Result<R, NFCReaderError>) -> Void
    ) {
        let deliver = self.deliver
        runtime.perform(name, on: handle, kind: kind, body) { r in deliver { completion(r) } }
    }

    func queryNDEFStatus(completionHandler: @escaping @Sendable (NFCNDEFStatus, Int, (any Error)?) -> Void) {
        run("queryNDEFStatus", { c, p in try p.queryNDEFStatus(c) }) { r in
            switch r {
            case .success(let v): completionHandler(v.status, v.capacity, nil)
            case .failure(let e): completionHandler(.notSupported, 0, e)
            }
        }
    }

    func readNDEF(completionHandler: @escaping @Sendable (NFCNDEFMessage?, (any Error)?) -> Void) {
        run(
            "readNDEF",
            { c, p -> NFCNDEFMessage in
                switch try p.readNDEF(c) {
                case .message(let m):
                    do { return try NFCNDEFMessage(bytes: m.bytes) } catch {
                        throw NFCReaderError(
                            .readerTransceiveErrorTagResponseError, detail: "malformed NDEF message: \(error)")
                    }
                case .empty: throw NFCReaderError(.ndefReaderSessionErrorZeroLengthMessage)
                case .notNDEF: throw NFCReaderError(.readerErrorUnsupportedFeature, detail: "the tag has no NDEF area")
                case .failed(let code): throw NFCReaderError(code)
                }
            }
        ) { r in
            switch r {
            case .success(let m): completionHandler(m, nil)
            case .failure(let e): completionHandler(nil, e)
            }
        }
    }

    func writeNDEF(_ message: NFCNDEFMessage, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        run("writeNDEF", { c, p in try p.writeNDEF(NDEFMessageBytes(message.bytes), c) }) { r in
            switch r {
            case .success: completionHandler(nil)
            case .failure(let e): completionHandler(e)
            }
        }
    }

    func sendMiFareCommand(commandPacket: Data, completionHandler: @escaping @Sendable (Data, (any Error)?) -> Void) {
        let frame = [UInt8](commandPacket)
        let model = runtime.system.model
        run("sendMiFareCommand", { c, _ in try Self.miFareExchange(c, frame, model) }) { r in
            switch r {
            case .success(let d): completionHandler(d, nil)
            case .failure(let e): completionHandler(Data(), e)
            }
        }
    }

    /// One `sendMiFareCommand` exchange: the length rule, then the frame to the tag.
    static func miFareExchange(_ c: TagConnection, _ frame: [UInt8], _ model: ReaderSystemModel) throws -> Data {
        guard !frame.isEmpty else {
            throw NFCReaderError(.readerErrorInvalidParameterLength, detail: "empty command packet")
        }
        let limit = model.maximumMiFareCommandLength
        guard frame.count <= limit else {
            throw NFCReaderError(
                .readerTransceiveErrorPacketTooLong, detail: "\(frame.count) bytes, more than \(limit)")
        }
        let t: any Type2TagTransport
        switch c {
        case .iso7816(let apdu): return Data(try apdu.transmit(frame))
        case .type2(let type2): t = type2
        }
        let answer: Type2Answer
        do {
            answer = try t.transceive(frame)
        } catch let e as TagCommunicationError {
            guard case .nak(let v) = e else { throw e }
            answer = Type2Answer.nak(v)
        }
        let hex = frame.hexString()
        switch answer {
        case .data(let d): return Data(d)
        case .ack: return Data([0x0A])
        case .nak(let v):
            let code = String(v, radix: 16, uppercase: true)
            throw NFCReaderError(model.miFareFailureCode, detail: "the tag answered NAK 0x" + code + " to " + hex)
        case .silent:
            throw NFCReaderError(model.miFareFailureCode, detail: "no answer to " + hex)
        }
    }

    func sendCommand(
        apdu: NFCISO7816APDU, completionHandler: @escaping @Sendable (Data, UInt8, UInt8, (any Error)?) -> Void
    ) {
        let command = apdu.bytes
        let limit = runtime.system.model.maximumAPDULength
        run(
            "sendCommand",
            { c, _ -> [UInt8] in
                guard command.count <= limit else {
                    throw NFCReaderError(
                        .readerTransceiveErrorPacketTooLong, detail: "\(command.count) bytes, more than \(limit)")
                }
                guard case .iso7816(let t) = c else {
                    throw NFCReaderError(.readerErrorUnsupportedFeature, detail: "not an ISO 7816 tag")
                }
                let r = try t.transmit(command)
                guard r.count >= 2 else {
                    throw NFCReaderError(
                        .readerTransceiveErrorTagResponseError, detail: "response shorter than SW1 SW2")
                }
                return r
            }
        ) { r in
            switch r {
            case .success(let b): completionHandler(Data(b.dropLast(2)), b[b.count - 2], b[b.count - 1], nil)
            case .failure(let e): completionHandler(Data(), 0, 0, e)
            }
        }
    }
}
