import Foundation
import NFCTags
import Synchronization

// The tag objects a session delivers for FeliCa and ISO 15693 targets: Core NFC's
// `NFCFeliCaTag` and `NFCISO15693Tag` over the frontend's FeliCa and ISO 15693 connections.
// Each method builds the frame Core NFC's header describes, sends it through the connected
// tag, and checks the answer's shape (a wrong one is 102). What Apple leaves open is marked
// "assumed" where it is decided.

/// A FeliCa card as an `NFCTagReaderSession` (`.feliCa`) or an NDEF session delivers it.
// unchecked: restates SessionTag's conformance; adds only `current`, a Mutex
final class SessionFeliCaTag: SessionTag, NFCFeliCaTag, @unchecked Sendable {
    /// currentSystemCode and currentIDm: set by the session's Polling, updated by the app's.
    private let current: Mutex<(code: Data, idm: Data)>

    override init(
        runtime: ReaderSessionRuntime, tag: DeliveredTag, type: NFCTagType = .feliCa, session: NFCReaderSession?,
        deliver: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) {
        let code = tag.feliCaSystem?.code ?? tag.target.systemCode ?? []
        let idm = tag.feliCaSystem?.idm ?? tag.target.uid
        current = Mutex((Data(code), Data(idm)))
        super.init(runtime: runtime, tag: tag, type: .feliCa, session: session, deliver: deliver)
    }

    static var supportsSecureCoding: Bool { true }
    required init?(coder: NSCoder) { nil }

    func asNFCISO15693Tag() -> (any NFCISO15693Tag)? { nil }
    func asNFCISO7816Tag() -> (any NFCISO7816Tag)? { nil }
    func asNFCFeliCaTag() -> (any NFCFeliCaTag)? { self }
    func asNFCMiFareTag() -> (any NFCMiFareTag)? { nil }

    var currentSystemCode: Data { current.withLock { $0.code } }
    var currentIDm: Data { current.withLock { $0.idm } }

    /// Sends `LEN body` and checks the answer: LEN right, response code `code + 1`, the IDm
    /// echoed (102 otherwise). Returns what follows the IDm.
    private func command<R: Sendable>(
        _ name: String, _ code: UInt8, _ parameters: [UInt8], _ parse: @escaping @Sendable ([UInt8]) throws -> R,
        _ completion: @escaping @Sendable (Result<R, NFCReaderError>) -> Void
    ) {
        let idm = [UInt8](currentIDm)
        run(
            name,
            { c, _ -> R in
                guard case .felica(let t) = c else {
                    throw NFCReaderError(.readerErrorUnsupportedFeature, detail: "not a FeliCa tag")
                }
                let body = [code] + idm + parameters
                guard body.count <= 254 else {
                    throw NFCReaderError(.readerTransceiveErrorPacketTooLong, detail: "\(body.count + 1) bytes")
                }
                let r = try t.exchange([UInt8(body.count + 1)] + body)
                guard r.count >= 10, Int(r[0]) == r.count, r[1] == code + 1, Array(r[2..<10]) == idm else {
                    throw NFCReaderError(
                        .readerTransceiveErrorTagResponseError, detail: "unexpected answer \(r.hexString())")
                }
                return try parse(Array(r[10...]))
            }, completion)
    }

    private static func malformed(_ what: String) -> NFCReaderError {
        NFCReaderError(.readerTransceiveErrorTagResponseError, detail: what)
    }

    func polling(
        systemCode: Data, requestCode: NFCFeliCaPollingRequestCode, timeSlot: NFCFeliCaPollingTimeSlot,
        completionHandler: @escaping (Data, Data, (any Error)?) -> Void
    ) {
        let completionHandler = Handler(completionHandler)
        let sc = [UInt8](systemCode)
        let allowed = runtime.polledFeliCaSystemCodes.contains(sc.hexString())
        let frame: [UInt8] = [0x06, 0x00] + sc + [UInt8(requestCode.rawValue), UInt8(timeSlot.rawValue)]
        run(
            "polling",
            { c, _ -> ([UInt8], [UInt8]) in
                // Checked before anything is sent (documented: 2 for an invalid system code).
                guard sc.count == 2, allowed else {
                    throw NFCReaderError(
                        .readerErrorSecurityViolation,
                        detail: "system code \(sc.hexString()) is not in the Info.plist felica.systemcodes list")
                }
                guard case .felica(let t) = c else {
                    throw NFCReaderError(.readerErrorUnsupportedFeature, detail: "not a FeliCa tag")
                }
                let r = try t.exchange(frame)
                guard r.count >= 18, Int(r[0]) == r.count, r[1] == 0x01 else {
                    throw Self.malformed("Polling answered \(r.hexString())")
                }
                return (Array(r[2..<10]), Array(r[10...]))
            }
        ) { [self] r in
            switch r {
            case .success(let (idm, rest)):
                self.current.withLock { $0 = (Data(sc), Data(idm)) }
                completionHandler(Data(rest.prefix(8)), Data(rest.dropFirst(8)), nil)
            case .failure(let e):
                // "It will be empty if system selection fails" (not for an invalid code).
                if e.code != .readerErrorSecurityViolation { self.current.withLock { $0.idm = Data() } }
                completionHandler(Data(), Data(), e)
            }
        }
    }

    func requestService(nodeCodeList: [Data], completionHandler: @escaping ([Data], (any Error)?) -> Void) {
        let completionHandler = Handler(completionHandler)
        guard (1...32).contains(nodeCodeList.count), nodeCodeList.allSatisfy({ $0.count == 2 }) else {
            return deliver {
                completionHandler(
                    [], NFCReaderError(.readerErrorInvalidParameter, detail: "1 to 32 node codes of 2 bytes"))
            }
        }
        let n = nodeCodeList.count
        command("requestService", 0x02, [UInt8(n)] + nodeCodeList.flatMap { [UInt8]($0) }) { rest -> [Data] in
            guard rest.count == 1 + 2 * n, Int(rest[0]) == n else { throw Self.malformed("Request Service answer") }
            return (0..<n).map { Data(rest[(1 + 2 * $0)..<(3 + 2 * $0)]) }
        } _: { r in
            switch r {
            case .success(let v): completionHandler(v, nil)
            case .failure(let e): completionHandler([], e)
            }
        }
    }

    func requestResponse(completionHandler: @escaping (Int, (any Error)?) -> Void) {
        let completionHandler = Handler(completionHandler)
        command("requestResponse", 0x04, []) { rest -> Int in
            guard rest.count == 1 else { throw Self.malformed("Request Response answer") }
            return Int(rest[0])
        } _: { r in
            switch r {
            case .success(let v): completionHandler(v, nil)
            case .failure(let e): completionHandler(0, e)
            }
        }
    }

    /// The service and block lists as the header takes them: 1–16 services of 2 bytes
    /// (little-endian, as on the wire), block-list elements of 2 or 3 bytes.
    private static func lists(_ services: [Data], _ blocks: [Data]) -> [UInt8]? {
        guard (1...16).contains(services.count), services.allSatisfy({ $0.count == 2 }), !blocks.isEmpty,
            blocks.count <= 255, blocks.allSatisfy({ $0.count == 2 || $0.count == 3 })
        else { return nil }
        return [UInt8(services.count)] + services.flatMap { [UInt8]($0) } + [UInt8(blocks.count)]
            + blocks.flatMap { [UInt8]($0) }
    }

    func readWithoutEncryption(
        serviceCodeList: [Data], blockList: [Data],
        completionHandler: @escaping (Int, Int, [Data], (any Error)?) -> Void
    ) {
        let completionHandler = Handler(completionHandler)
        guard let p = Self.lists(serviceCodeList, blockList) else {
            return deliver {
                completionHandler(
                    0, 0, [], NFCReaderError(.readerErrorInvalidParameter, detail: "service or block list"))
            }
        }
        let n = blockList.count
        command("readWithoutEncryption", 0x06, p) { rest -> (Int, Int, [Data]) in
            guard rest.count >= 2 else { throw Self.malformed("Read Without Encryption answer") }
            // A status error comes back in the flags, not as an error (documented).
            guard rest[0] == 0 else { return (Int(rest[0]), Int(rest[1]), []) }
            guard rest.count == 3 + 16 * n, Int(rest[2]) == n else {
                throw Self.malformed("Read Without Encryption answered \(rest.count) bytes for \(n) blocks")
            }
            return (0, Int(rest[1]), (0..<n).map { Data(rest[(3 + 16 * $0)..<(19 + 16 * $0)]) })
        } _: { r in
            switch r {
            case .success(let (a, b, d)): completionHandler(a, b, d, nil)
            case .failure(let e): completionHandler(0, 0, [], e)
            }
        }
    }

    func writeWithoutEncryption(
        serviceCodeList: [Data], blockList: [Data], blockData: [Data],
        completionHandler: @escaping (Int, Int, (any Error)?) -> Void
    ) {
        let completionHandler = Handler(completionHandler)
        guard let p = Self.lists(serviceCodeList, blockList), blockData.count == blockList.count,
            blockData.allSatisfy({ $0.count == 16 })
        else {
            return deliver {
                completionHandler(
                    0, 0,
                    NFCReaderError(.readerErrorInvalidParameter, detail: "lists, or block data not 16 bytes a block"))
            }
        }
        command("writeWithoutEncryption", 0x08, p + blockData.flatMap { [UInt8]($0) }) { rest -> (Int, Int) in
            guard rest.count == 2 else { throw Self.malformed("Write Without Encryption answer") }
            return (Int(rest[0]), Int(rest[1]))
        } _: { r in
            switch r {
            case .success(let (a, b)): completionHandler(a, b, nil)
            case .failure(let e): completionHandler(0, 0, e)
            }
        }
    }

    /// Each code as the wire carries it (big-endian, as nfcpy reads it; the header says
    /// little-endian: unresolved, assumed wire order).
    func requestSystemCode(completionHandler: @escaping ([Data], (any Error)?) -> Void) {
        let completionHandler = Handler(completionHandler)
        command("requestSystemCode", 0x0C, []) { rest -> [Data] in
            guard let n = rest.first, rest.count == 1 + 2 * Int(n) else { throw Self.malformed("Request System Code") }
            return (0..<Int(n)).map { Data(rest[(1 + 2 * $0)..<(3 + 2 * $0)]) }
        } _: { r in
            switch r {
            case .success(let v): completionHandler(v, nil)
            case .failure(let e): completionHandler([], e)
            }
        }
    }

    func requestServiceV2(
        nodeCodeList: [Data],
        completionHandler: @escaping (Int, Int, NFCFeliCaEncryptionId, [Data], [Data], (any Error)?) -> Void
    ) {
        let completionHandler = Handler(completionHandler)
        guard (1...32).contains(nodeCodeList.count), nodeCodeList.allSatisfy({ $0.count == 2 }) else {
            return deliver {
                completionHandler(
                    0, 0, .AES, [], [], NFCReaderError(.readerErrorInvalidParameter, detail: "node codes"))
            }
        }
        let n = nodeCodeList.count
        command("requestServiceV2", 0x32, [UInt8(n)] + nodeCodeList.flatMap { [UInt8]($0) }) {
            rest -> (Int, Int, NFCFeliCaEncryptionId, [Data], [Data]) in
            guard rest.count >= 2 else { throw Self.malformed("Request Service V2 answer") }
            guard rest[0] == 0 else { return (Int(rest[0]), Int(rest[1]), .AES, [], []) }
            guard rest.count >= 4, let id = NFCFeliCaEncryptionId(rawValue: Int(rest[2])), Int(rest[3]) == n else {
                throw Self.malformed("Request Service V2 answer")
            }
            let aes = (0..<n).compactMap { i in
                4 + 2 * i + 2 <= rest.count ? Data(rest[(4 + 2 * i)..<(6 + 2 * i)]) : nil
            }
            let desStart = 4 + 2 * n
            let des =
                id == .AES_DES
                ? (0..<n).compactMap { i in
                    desStart + 2 * i + 2 <= rest.count ? Data(rest[(desStart + 2 * i)..<(desStart + 2 * i + 2)]) : nil
                } : []
            return (0, Int(rest[1]), id, aes, des)
        } _: { r in
            switch r {
            case .success(let (a, b, c, d, e)): completionHandler(a, b, c, d, e, nil)
            case .failure(let e): completionHandler(0, 0, .AES, [], [], e)
            }
        }
    }

    func requestSpecificationVersion(completionHandler: @escaping (Int, Int, Data, Data, (any Error)?) -> Void) {
        let completionHandler = Handler(completionHandler)
        command("requestSpecificationVersion", 0x3C, [0x00, 0x00]) { rest -> (Int, Int, Data, Data) in
            guard rest.count >= 2 else { throw Self.malformed("Request Specification Version answer") }
            guard rest[0] == 0 else { return (Int(rest[0]), Int(rest[1]), Data(), Data()) }
            // 00 00 | format 00 | basic version (2) | number of options | option versions (2 each).
            guard rest.count >= 6 else { throw Self.malformed("Request Specification Version answer") }
            return (0, Int(rest[1]), Data(rest[3..<5]), Data(rest[6...]))
        } _: { r in
            switch r {
            case .success(let (a, b, c, d)): completionHandler(a, b, c, d, nil)
            case .failure(let e): completionHandler(0, 0, Data(), Data(), e)
            }
        }
    }

    func resetMode(completionHandler: @escaping (Int, Int, (any Error)?) -> Void) {
        let completionHandler = Handler(completionHandler)
        command("resetMode", 0x3E, [0x00, 0x00]) { rest -> (Int, Int) in
            guard rest.count == 2 else { throw Self.malformed("Reset Mode answer") }
            return (Int(rest[0]), Int(rest[1]))
        } _: { r in
            switch r {
            case .success(let (a, b)): completionHandler(a, b, nil)
            case .failure(let e): completionHandler(0, 0, e)
            }
        }
    }

    /// The packet starts at the command code; LEN is added (documented). The answer comes
    /// back without its LEN byte (assumed: the header does not say; symmetric with the packet).
    func sendFeliCaCommand(commandPacket: Data, completionHandler: @escaping (Data, (any Error)?) -> Void) {
        let completionHandler = Handler(completionHandler)
        let packet = [UInt8](commandPacket)
        run(
            "sendFeliCaCommand",
            { c, _ -> [UInt8] in
                guard !packet.isEmpty else {
                    throw NFCReaderError(.readerErrorInvalidParameterLength, detail: "empty command packet")
                }
                guard packet.count <= 254 else {
                    throw NFCReaderError(
                        .readerTransceiveErrorPacketTooLong, detail: "\(packet.count) bytes, more than 254")
                }
                guard case .felica(let t) = c else {
                    throw NFCReaderError(.readerErrorUnsupportedFeature, detail: "not a FeliCa tag")
                }
                let r = try t.exchange([UInt8(packet.count + 1)] + packet)
                guard let len = r.first, Int(len) == r.count else { throw Self.malformed("answer \(r.hexString())") }
                return Array(r.dropFirst())
            }
        ) { r in
            switch r {
            case .success(let d): completionHandler(Data(d), nil)
            case .failure(let e): completionHandler(Data(), e)
            }
        }
    }
}

/// An ISO 15693 tag as an `NFCTagReaderSession` (`.iso15693`) or an NDEF session delivers it.
// unchecked: restates SessionTag's conformance; adds no stored state
final class SessionISO15693Tag: SessionTag, NFCISO15693Tag, @unchecked Sendable {
    override init(
        runtime: ReaderSessionRuntime, tag: DeliveredTag, type: NFCTagType = .iso15693, session: NFCReaderSession?,
        deliver: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) {
        super.init(runtime: runtime, tag: tag, type: .iso15693, session: session, deliver: deliver)
    }

    static var supportsSecureCoding: Bool { true }
    required init?(coder: NSCoder) { nil }

    func asNFCISO15693Tag() -> (any NFCISO15693Tag)? { self }
    func asNFCISO7816Tag() -> (any NFCISO7816Tag)? { nil }
    func asNFCFeliCaTag() -> (any NFCFeliCaTag)? { nil }
    func asNFCMiFareTag() -> (any NFCMiFareTag)? { nil }

    /// Big-endian (documented).
    var identifier: Data { Data(target.uid) }
    /// UID bits 56–49 (ISO/IEC 7816-6).
    var icManufacturerCode: Int { target.uid.count == 8 ? Int(target.uid[1]) : 0 }
    /// UID bits 48–1, big-endian.
    var icSerialNumber: Data { target.uid.count == 8 ? Data(target.uid[2...]) : Data() }

    /// A tag error: 102 with the ISO/IEC 15693-3 error code in userInfo (reported:
    /// `Code=102 … ISO15693TagResponseErrorCode=15`).
    static func tagError(_ code: UInt8) -> NFCReaderError {
        NFCReaderError(
            .readerTransceiveErrorTagResponseError,
            userInfo: [
                NFCISO15693TagResponseErrorKey: Int(code),
                NSLocalizedDescriptionKey: "Tag response error (ISO 15693 error 0x\([code].hexString()))",
            ])
    }

    /// Sends `flags code [UID] parameters`: the Address flag and the UID are added unless
    /// the Select flag is set (documented). Returns the response flags and the data.
    private func request<R: Sendable>(
        _ name: String, _ flags: UInt8, _ code: UInt8, _ parameters: [UInt8],
        _ parse: @escaping @Sendable (UInt8, [UInt8]) throws -> R,
        _ completion: @escaping @Sendable (Result<R, NFCReaderError>) -> Void
    ) {
        let uid = [UInt8](target.uid.reversed())
        run(
            name,
            { c, _ -> R in
                guard case .iso15693(let t) = c else {
                    throw NFCReaderError(.readerErrorUnsupportedFeature, detail: "not an ISO 15693 tag")
                }
                var frame: [UInt8]
                if flags & 0x10 != 0 {
                    frame = [flags & ~0x20, code]
                } else {
                    frame = [flags | 0x20, code] + uid
                }
                frame += parameters
                guard frame.count <= 256 else {
                    throw NFCReaderError(
                        .readerTransceiveErrorPacketTooLong, detail: "\(frame.count) bytes, more than 256")
                }
                let r = try t.request(frame)
                guard let f = r.first else {
                    throw NFCReaderError(.readerTransceiveErrorTagResponseError, detail: "empty")
                }
                if f & 0x01 != 0 { throw Self.tagError(r.count > 1 ? r[1] : 0x0F) }
                return try parse(f, Array(r.dropFirst()))
            }, completion)
    }

    private func done(
        _ name: String, _ flags: NFCISO15693RequestFlag, _ code: UInt8, _ p: [UInt8], _ k: Handler<(any Error)?>
    ) {
        request(name, flags.rawValue, code, p, { _, _ in () }) { r in
            switch r {
            case .success: k(nil)
            case .failure(let e): k(e)
            }
        }
    }

    private func data(
        _ name: String, _ flags: NFCISO15693RequestFlag, _ code: UInt8, _ p: [UInt8], _ k: Handler<Data, (any Error)?>
    ) {
        request(name, flags.rawValue, code, p, { _, d in d }) { r in
            switch r {
            case .success(let d): k(Data(d), nil)
            case .failure(let e): k(Data(), e)
            }
        }
    }

    /// Splits `d` into `count` blocks (each with its security status byte when the Option
    /// flag asked for it).
    private static func blocks(_ d: [UInt8], count: Int) throws -> [Data] {
        guard count > 0, d.count % count == 0, !d.isEmpty else {
            throw NFCReaderError(.readerTransceiveErrorTagResponseError, detail: "\(d.count) bytes for \(count) blocks")
        }
        let size = d.count / count
        return (0..<count).map { Data(d[($0 * size)..<(($0 + 1) * size)]) }
    }

    private func multiple(
        _ name: String, _ flags: NFCISO15693RequestFlag, _ code: UInt8, _ range: NSRange, extended: Bool,
        _ k: Handler<[Data], (any Error)?>
    ) {
        guard (1...256).contains(range.length), range.location >= 0,
            range.location + range.length - 1 <= (extended ? 0xFFFF : 0xFF)
        else {
            return deliver { k([], NFCReaderError(.readerErrorInvalidParameter, detail: "block range")) }
        }
        let n = range.length
        let p: [UInt8] =
            extended
            ? [UInt8(range.location & 0xFF), UInt8(range.location >> 8), UInt8((n - 1) & 0xFF), UInt8((n - 1) >> 8)]
            : [UInt8(range.location), UInt8(n - 1)]
        request(name, flags.rawValue, code, p, { _, d in try Self.blocks(d, count: n) }) { r in
            switch r {
            case .success(let v): k(v, nil)
            case .failure(let e): k([], e)
            }
        }
    }

    private func writeMultiple(
        _ name: String, _ flags: NFCISO15693RequestFlag, _ code: UInt8, _ range: NSRange, _ blocks: [Data],
        extended: Bool, _ k: Handler<(any Error)?>
    ) {
        guard range.length == blocks.count, (1...256).contains(range.length), range.location >= 0 else {
            return deliver { k(NFCReaderError(.readerErrorInvalidParameter, detail: "block range and data")) }
        }
        let n = range.length
        let p: [UInt8] =
            extended
            ? [UInt8(range.location & 0xFF), UInt8(range.location >> 8), UInt8((n - 1) & 0xFF), UInt8((n - 1) >> 8)]
            : [UInt8(range.location), UInt8(n - 1)]
        done(name, flags, code, p + blocks.flatMap { [UInt8]($0) }, k)
    }

    // Legacy calls: "Calling these APIs from a tag returned by the NFCTagReaderSession
    // session will result in a NFCReaderErrorUnsupportedFeature error" (documented).
    func sendCustomCommand(
        commandConfiguration: NFCISO15693CustomCommandConfiguration,
        completionHandler: @escaping (Data, (any Error)?) -> Void
    ) {
        let k = Handler(completionHandler)
        deliver { k(Data(), NFCReaderError(.readerErrorUnsupportedFeature, detail: "legacy API; use customCommand")) }
    }

    func readMultipleBlocks(
        readConfiguration: NFCISO15693ReadMultipleBlocksConfiguration,
        completionHandler: @escaping (Data, (any Error)?) -> Void
    ) {
        let k = Handler(completionHandler)
        deliver {
            k(Data(), NFCReaderError(.readerErrorUnsupportedFeature, detail: "legacy API; use readMultipleBlocks"))
        }
    }

    func stayQuiet(completionHandler: @escaping ((any Error)?) -> Void) {
        let k = Handler(completionHandler)
        // The tag answers nothing to Stay Quiet (ISO/IEC 15693-3 §10.3.3): silence is success.
        let uid = [UInt8](target.uid.reversed())
        run(
            "stayQuiet",
            { c, _ in
                guard case .iso15693(let t) = c else {
                    throw NFCReaderError(.readerErrorUnsupportedFeature, detail: "not an ISO 15693 tag")
                }
                do { _ = try t.request([0x22, 0x02] + uid) } catch TagCommunicationError.noResponse {}
            }
        ) { r in
            switch r {
            case .success: k(nil)
            case .failure(let e): k(e)
            }
        }
    }

    func readSingleBlock(
        requestFlags flags: NFCISO15693RequestFlag, blockNumber: UInt8,
        completionHandler: @escaping (Data, (any Error)?) -> Void
    ) { data("readSingleBlock", flags, 0x20, [blockNumber], Handler(completionHandler)) }

    func writeSingleBlock(
        requestFlags flags: NFCISO15693RequestFlag, blockNumber: UInt8, dataBlock: Data,
        completionHandler: @escaping ((any Error)?) -> Void
    ) { done("writeSingleBlock", flags, 0x21, [blockNumber] + [UInt8](dataBlock), Handler(completionHandler)) }

    func lockBlock(
        requestFlags flags: NFCISO15693RequestFlag, blockNumber: UInt8,
        completionHandler: @escaping ((any Error)?) -> Void
    ) { done("lockBlock", flags, 0x22, [blockNumber], Handler(completionHandler)) }

    func readMultipleBlocks(
        requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange,
        completionHandler: @escaping ([Data], (any Error)?) -> Void
    ) { multiple("readMultipleBlocks", flags, 0x23, blockRange, extended: false, Handler(completionHandler)) }

    func writeMultipleBlocks(
        requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange, dataBlocks: [Data],
        completionHandler: @escaping ((any Error)?) -> Void
    ) {
        writeMultiple(
            "writeMultipleBlocks", flags, 0x24, blockRange, dataBlocks, extended: false, Handler(completionHandler))
    }

    func select(requestFlags flags: NFCISO15693RequestFlag, completionHandler: @escaping ((any Error)?) -> Void) {
        // Select is addressed by nature: the Address flag stays (ISO/IEC 15693-3 §10.4.6).
        done("select", flags.subtracting(.select), 0x25, [], Handler(completionHandler))
    }

    func resetToReady(requestFlags flags: NFCISO15693RequestFlag, completionHandler: @escaping ((any Error)?) -> Void) {
        done("resetToReady", flags, 0x26, [], Handler(completionHandler))
    }

    func writeAFI(
        requestFlags flags: NFCISO15693RequestFlag, afi: UInt8, completionHandler: @escaping ((any Error)?) -> Void
    ) { done("writeAFI", flags, 0x27, [afi], Handler(completionHandler)) }

    func lockAFI(requestFlags flags: NFCISO15693RequestFlag, completionHandler: @escaping ((any Error)?) -> Void) {
        done("lockAFI", flags, 0x28, [], Handler(completionHandler))
    }

    func writeDSFID(
        requestFlags flags: NFCISO15693RequestFlag, dsfid: UInt8, completionHandler: @escaping ((any Error)?) -> Void
    ) { done("writeDSFID", flags, 0x29, [dsfid], Handler(completionHandler)) }

    func lockDFSID(requestFlags flags: NFCISO15693RequestFlag, completionHandler: @escaping ((any Error)?) -> Void) {
        done("lockDSFID", flags, 0x2A, [], Handler(completionHandler))
    }

    func lockDSFID(requestFlags flags: NFCISO15693RequestFlag, completionHandler: @escaping ((any Error)?) -> Void) {
        done("lockDSFID", flags, 0x2A, [], Handler(completionHandler))
    }

    /// Get System Information's fields: -1 for what the answer leaves out (documented).
    static func systemInfo(_ d: [UInt8]) throws -> NFCISO15693SystemInfo {
        guard d.count >= 9 else {
            throw NFCReaderError(.readerTransceiveErrorTagResponseError, detail: "Get System Information answer")
        }
        let info = d[0]
        var i = 9
        func next() -> Int? {
            guard i < d.count else { return nil }
            defer { i += 1 }
            return Int(d[i])
        }
        let dsfid = info & 0x01 != 0 ? next() ?? -1 : -1
        let afi = info & 0x02 != 0 ? next() ?? -1 : -1
        var blocks = -1
        var size = -1
        if info & 0x04 != 0, let n = next(), let s = next() {
            blocks = n + 1
            size = (s & 0x1F) + 1
        }
        let ic = info & 0x08 != 0 ? next() ?? -1 : -1
        // getSystemInfoAndUID gives the UID "in little endian byte order from the response packet".
        return NFCISO15693SystemInfo(
            uniqueIdentifier: Data(d[1..<9]), dataStorageFormatIdentifier: dsfid, applicationFamilyIdentifier: afi,
            blockSize: size, totalBlocks: blocks, icReference: ic)
    }

    func getSystemInfo(
        requestFlags flags: NFCISO15693RequestFlag,
        completionHandler: @escaping (Int, Int, Int, Int, Int, (any Error)?) -> Void
    ) {
        let k = Handler(completionHandler)
        request("getSystemInfo", flags.rawValue, 0x2B, [], { _, d in try Self.systemInfo(d) }) { r in
            switch r {
            case .success(let s):
                k(
                    s.dataStorageFormatIdentifier, s.applicationFamilyIdentifier, s.blockSize, s.totalBlocks,
                    s.icReference, nil)
            case .failure(let e): k(-1, -1, -1, -1, -1, e)
            }
        }
    }

    func getSystemInfo(
        requestFlags flags: NFCISO15693RequestFlag,
        resultHandler: @escaping (Result<NFCISO15693SystemInfo, any Error>) -> Void
    ) {
        let k = Handler(resultHandler)
        request("getSystemInfo", flags.rawValue, 0x2B, [], { _, d in try Self.systemInfo(d) }) { r in
            k(r.mapError { $0 as any Error })
        }
    }

    func getMultipleBlockSecurityStatus(
        requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange,
        completionHandler: @escaping ([NSNumber], (any Error)?) -> Void
    ) {
        let k = Handler(completionHandler)
        guard (1...256).contains(blockRange.length), blockRange.location >= 0 else {
            return deliver { k([], NFCReaderError(.readerErrorInvalidParameter, detail: "block range")) }
        }
        let p: [UInt8] = [UInt8(blockRange.location & 0xFF), UInt8(blockRange.length - 1)]
        request("getMultipleBlockSecurityStatus", flags.rawValue, 0x2C, p, { _, d in d.map(Int.init) }) { r in
            switch r {
            case .success(let v): k(v.map { NSNumber(value: $0) }, nil)
            case .failure(let e): k([], e)
            }
        }
    }

    func fastReadMultipleBlocks(
        requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange,
        resultHandler: @escaping (Result<[Data], any Error>) -> Void
    ) {
        let k = Handler(resultHandler)
        multiple(
            "fastReadMultipleBlocks", flags, 0x2D, blockRange, extended: false, Handler { v, e in k(result(e, v)) })
    }

    /// The IC manufacturer code follows the command code (documented).
    func customCommand(
        requestFlags flags: NFCISO15693RequestFlag, customCommandCode: Int, customRequestParameters: Data,
        completionHandler: @escaping (Data, (any Error)?) -> Void
    ) {
        let k = Handler(completionHandler)
        guard (0xA0...0xDF).contains(customCommandCode) else {
            return deliver {
                k(Data(), NFCReaderError(.readerErrorInvalidParameter, detail: "custom command code A0-DF"))
            }
        }
        // The manufacturer code goes after the command, before the UID (ISO/IEC 15693-3 §10.5).
        let ic = UInt8(icManufacturerCode & 0xFF)
        let uid = [UInt8](target.uid.reversed())
        let code = UInt8(customCommandCode)
        let params = [UInt8](customRequestParameters)
        run(
            "customCommand",
            { c, _ -> [UInt8] in
                guard case .iso15693(let t) = c else {
                    throw NFCReaderError(.readerErrorUnsupportedFeature, detail: "not an ISO 15693 tag")
                }
                let frame: [UInt8] =
                    flags.contains(.select)
                    ? [flags.rawValue & ~0x20, code, ic] + params : [flags.rawValue | 0x20, code, ic] + uid + params
                let r = try t.request(frame)
                guard let f = r.first else {
                    throw NFCReaderError(.readerTransceiveErrorTagResponseError, detail: "empty")
                }
                if f & 0x01 != 0 { throw Self.tagError(r.count > 1 ? r[1] : 0x0F) }
                return Array(r.dropFirst())
            }
        ) { r in
            switch r {
            case .success(let d): k(Data(d), nil)
            case .failure(let e): k(Data(), e)
            }
        }
    }

    private static func extendedBlock(_ b: Int) -> [UInt8]? {
        (0...0xFFFF).contains(b) ? [UInt8(b & 0xFF), UInt8(b >> 8)] : nil
    }

    func extendedReadSingleBlock(
        requestFlags flags: NFCISO15693RequestFlag, blockNumber: Int,
        completionHandler: @escaping (Data, (any Error)?) -> Void
    ) {
        let k = Handler(completionHandler)
        guard let b = Self.extendedBlock(blockNumber) else {
            return deliver { k(Data(), NFCReaderError(.readerErrorInvalidParameter, detail: "block 0-65535")) }
        }
        data("extendedReadSingleBlock", flags, 0x30, b, k)
    }

    func extendedWriteSingleBlock(
        requestFlags flags: NFCISO15693RequestFlag, blockNumber: Int, dataBlock: Data,
        completionHandler: @escaping ((any Error)?) -> Void
    ) {
        let k = Handler(completionHandler)
        guard let b = Self.extendedBlock(blockNumber) else {
            return deliver { k(NFCReaderError(.readerErrorInvalidParameter, detail: "block 0-65535")) }
        }
        done("extendedWriteSingleBlock", flags, 0x31, b + [UInt8](dataBlock), k)
    }

    func extendedLockBlock(
        requestFlags flags: NFCISO15693RequestFlag, blockNumber: Int,
        completionHandler: @escaping ((any Error)?) -> Void
    ) {
        let k = Handler(completionHandler)
        guard let b = Self.extendedBlock(blockNumber) else {
            return deliver { k(NFCReaderError(.readerErrorInvalidParameter, detail: "block 0-65535")) }
        }
        done("extendedLockBlock", flags, 0x32, b, k)
    }

    func extendedReadMultipleBlocks(
        requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange,
        completionHandler: @escaping ([Data], (any Error)?) -> Void
    ) { multiple("extendedReadMultipleBlocks", flags, 0x33, blockRange, extended: true, Handler(completionHandler)) }

    func extendedWriteMultipleBlocks(
        requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange, dataBlocks: [Data],
        completionHandler: @escaping ((any Error)?) -> Void
    ) {
        writeMultiple(
            "extendedWriteMultipleBlocks", flags, 0x34, blockRange, dataBlocks, extended: true,
            Handler(completionHandler))
    }

    private func flagged(
        _ name: String, _ flags: NFCISO15693RequestFlag, _ code: UInt8, _ p: [UInt8],
        _ k: Handler<Result<(NFCISO15693ResponseFlag, Data), any Error>>
    ) {
        request(name, flags.rawValue, code, p, { f, d in (NFCISO15693ResponseFlag(rawValue: f), Data(d)) }) { r in
            k(r.mapError { $0 as any Error })
        }
    }

    func authenticate(
        requestFlags flags: NFCISO15693RequestFlag, cryptoSuiteIdentifier: Int, message: Data,
        resultHandler: @escaping (Result<(NFCISO15693ResponseFlag, Data), any Error>) -> Void
    ) { flagged("authenticate", flags, 0x35, [UInt8(cryptoSuiteIdentifier & 0xFF)] + message, Handler(resultHandler)) }

    func keyUpdate(
        requestFlags flags: NFCISO15693RequestFlag, keyIdentifier: Int, message: Data,
        resultHandler: @escaping (Result<(NFCISO15693ResponseFlag, Data), any Error>) -> Void
    ) { flagged("keyUpdate", flags, 0x36, [UInt8(keyIdentifier & 0xFF)] + message, Handler(resultHandler)) }

    func challenge(
        requestFlags flags: NFCISO15693RequestFlag, cryptoSuiteIdentifier: Int, message: Data,
        completionHandler: @escaping ((any Error)?) -> Void
    ) {
        done("challenge", flags, 0x39, [UInt8(cryptoSuiteIdentifier & 0xFF)] + message, Handler(completionHandler))
    }

    func readBuffer(
        requestFlags flags: NFCISO15693RequestFlag,
        resultHandler: @escaping (Result<(NFCISO15693ResponseFlag, Data), any Error>) -> Void
    ) { flagged("readBuffer", flags, 0x3A, [], Handler(resultHandler)) }

    func extendedGetMultipleBlockSecurityStatus(
        requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange,
        resultHandler: @escaping (Result<NFCISO15693MultipleBlockSecurityStatus, any Error>) -> Void
    ) {
        let k = Handler(resultHandler)
        guard (1...256).contains(blockRange.length), let first = Self.extendedBlock(blockRange.location) else {
            return deliver { k(.failure(NFCReaderError(.readerErrorInvalidParameter, detail: "block range"))) }
        }
        let n = blockRange.length - 1
        request(
            "extendedGetMultipleBlockSecurityStatus", flags.rawValue, 0x3C, first + [UInt8(n & 0xFF), UInt8(n >> 8)],
            { _, d in NFCISO15693MultipleBlockSecurityStatus(blockSecurityStatus: d.map(Int.init)) }
        ) { r in k(r.mapError { $0 as any Error }) }
    }

    func extendedFastReadMultipleBlocks(
        requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange,
        resultHandler: @escaping (Result<[Data], any Error>) -> Void
    ) {
        let k = Handler(resultHandler)
        multiple(
            "extendedFastReadMultipleBlocks", flags, 0x3D, blockRange, extended: true,
            Handler { v, e in k(result(e, v)) })
    }

    /// "The request data frame is concatenation of 8 bits request flag, 8 bits command code,
    /// and optional data … The 8 bits response flag and the data are returned" (documented).
    /// As for every request, the Address flag and the UID are added unless the Select flag is
    /// set (documented for the request flags). A response with the error flag is returned
    /// too (the flag says so), not turned into an error (assumed).
    func sendRequest(
        requestFlags flags: Int, commandCode: Int, data: Data?,
        resultHandler: @escaping (Result<(NFCISO15693ResponseFlag, Data?), any Error>) -> Void
    ) {
        let k = Handler(resultHandler)
        let f = UInt8(flags & 0xFF)
        let uid = [UInt8](target.uid.reversed())
        let frame =
            (f & 0x10 != 0 ? [f & ~0x20, UInt8(commandCode & 0xFF)] : [f | 0x20, UInt8(commandCode & 0xFF)] + uid)
            + [UInt8](data ?? Data())
        run(
            "sendRequest",
            { c, _ -> [UInt8] in
                guard frame.count <= 256 else {
                    throw NFCReaderError(
                        .readerTransceiveErrorPacketTooLong, detail: "\(frame.count) bytes, more than 256")
                }
                guard case .iso15693(let t) = c else {
                    throw NFCReaderError(.readerErrorUnsupportedFeature, detail: "not an ISO 15693 tag")
                }
                return try t.request(frame)
            }
        ) { r in
            switch r {
            case .success(let d):
                let rest = Data(d.dropFirst())
                k(.success((NFCISO15693ResponseFlag(rawValue: d.first ?? 0), rest.isEmpty ? nil : rest)))
            case .failure(let e): k(.failure(e))
            }
        }
    }
}
