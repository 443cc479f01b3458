import ReaderSession
import Testing

// Every public symbol of Core NFC's reader-side API in the iOS 18.0 SDK (the headers
// NFCReaderSession.h, NFCNDEFReaderSession.h, NFCTagReaderSession.h, NFCTag.h, NFCNDEFTag.h,
// NFCMiFareTag.h, NFCISO7816Tag.h, NFCFeliCaTag.h, NFCISO15693Tag.h, NFCISO15693ReaderSession.h,
// NFCNDEFMessage.h, NFCNDEFPayload.h, NFCError.h and the Swift overlay), used once each as an
// iOS file would, against `import ReaderSession` alone. Written by us from the declarations;
// what is left out, and why, is in docs/corenfc.md ("Left out"). NFCVASReaderSession.h is
// included (declared, not modelled). This file compiling is the
// first half of the test; the second checks at run time what the shapes promise.

/// A delegate for every session kind, with every method Core NFC declares (optional ones too).
private final class EveryDelegate: NSObject, NFCNDEFReaderSessionDelegate, NFCTagReaderSessionDelegate,
    NFCReaderSessionDelegate, @unchecked Sendable
{
    func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession) {}
    func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}
    func readerSession(_ session: NFCNDEFReaderSession, didDetect tags: [any NFCNDEFTag]) {}
    func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {}
    func tagReaderSessionDidBecomeActive(_ session: NFCTagReaderSession) {}
    func tagReaderSession(_ session: NFCTagReaderSession, didDetect tags: [NFCTag]) {}
    func tagReaderSession(_ session: NFCTagReaderSession, didInvalidateWithError error: any Error) {}
    func readerSessionDidBecomeActive(_ session: NFCReaderSession) {}
    func readerSession(_ session: NFCReaderSession, didDetect tags: [any __NFCTag]) {}
    func readerSession(_ session: NFCReaderSession, didInvalidateWithError error: any Error) {}
}

/// Sessions: NFCReaderSessionProtocol, NFCReaderSession, the three session classes.
private func useSessions(_ d: EveryDelegate, queue: dispatch_queue_t) {
    let ndef = NFCNDEFReaderSession(delegate: d, queue: queue, invalidateAfterFirstRead: false)
    let any: any NFCReaderSessionProtocol = ndef
    _ = any.isReady
    ndef.alertMessage = "Hold your iPhone near the item."
    ndef.begin()
    ndef.restartPolling()
    ndef.invalidate(errorMessage: "Try again.")
    ndef.invalidate()
    _ = ndef.delegate
    _ = ndef.sessionQueue
    _ = NFCReaderSession.readingAvailable
    _ = NFCNDEFReaderSession.readingAvailable
    let options: [NFCTagReaderSession.PollingOption] = [.iso14443, .iso15693, .iso18092, .pace]
    if let tag = NFCTagReaderSession(pollingOption: [.iso14443], delegate: d) {
        _ = tag.connectedTag
        tag.restartPolling()
        _ = options
    }
    _ = NFCTagReaderSession(pollingOption: .iso18092, delegate: d, queue: nil)
    let legacy = NFCISO15693ReaderSession(delegate: d, queue: nil)
    legacy.restartPolling()
    _ = NFCISO15693ReaderSession.readingAvailable
}

private func useConnect(_ ndef: NFCNDEFReaderSession, _ tag: any NFCNDEFTag, _ t: NFCTagReaderSession, _ any: NFCTag)
    async throws
{
    ndef.connect(to: tag) { (_: (any Error)?) in }
    try await ndef.connect(to: tag)
    t.connect(to: any) { (_: (any Error)?) in }
    try await t.connect(to: any)
}

/// Tags: NFCTag (the enum), __NFCTag, NFCNDEFTag, NFCMiFareTag, NFCISO7816Tag.
private func useTags(_ tag: NFCTag) async throws {
    _ = tag.isAvailable
    switch tag {
    case .feliCa(let f): try await useFeliCa(f)
    case .iso7816(let t): try await useISO7816(t)
    case .iso15693(let t): try await useISO15693(t)
    case .miFare(let t): try await useMiFare(t)
    }
}

private func useBaseTag(_ t: any __NFCTag) {
    let type: NFCTagType = t.type
    _ = [NFCTagType.iso15693, .feliCa, .iso7816Compatible, .miFare].contains(type)
    _ = t.session
    _ = t.isAvailable
    _ = t.asNFCISO15693Tag()
    _ = t.asNFCISO7816Tag()
    _ = t.asNFCFeliCaTag()
    _ = t.asNFCMiFareTag()
    _ = t.isKind(of: (any NFCFeliCaTag).self)
}

private func useNDEFTag(_ t: any NFCNDEFTag) async throws {
    _ = t.isAvailable
    t.queryNDEFStatus { (status: NFCNDEFStatus, capacity: Int, _: (any Error)?) in
        _ = [NFCNDEFStatus.notSupported, .readWrite, .readOnly].contains(status)
        _ = capacity
    }
    let (_, _): (NFCNDEFStatus, Int) = try await t.queryNDEFStatus()
    t.readNDEF { (_: NFCNDEFMessage?, _: (any Error)?) in }
    let message: NFCNDEFMessage = try await t.readNDEF()
    t.writeNDEF(message) { (_: (any Error)?) in }
    try await t.writeNDEF(message)
    t.writeLock { (_: (any Error)?) in }
    try await t.writeLock()
}

private func useMiFare(_ t: any NFCMiFareTag) async throws {
    useBaseTag(t)
    try await useNDEFTag(t)
    let family: NFCMiFareFamily = t.mifareFamily
    _ = [NFCMiFareFamily.unknown, .ultralight, .plus, .desfire].contains(family)
    _ = t.identifier
    _ = t.historicalBytes
    t.sendMiFareCommand(commandPacket: Data([0x30, 0x00])) { (_: Data, _: (any Error)?) in }
    t.sendMiFareCommand(commandPacket: Data([0x30, 0x00])) { (_: Result<Data, any Error>) in }
    _ = try await t.sendMiFareCommand(commandPacket: Data([0x60]))
    let apdu = NFCISO7816APDU(
        instructionClass: 0x90, instructionCode: 0x60, p1Parameter: 0, p2Parameter: 0, data: Data(),
        expectedResponseLength: 256)
    t.sendMiFareISO7816Command(apdu) { (_: Data, _: UInt8, _: UInt8, _: (any Error)?) in }
    t.sendMiFareISO7816Command(apdu) { (_: Result<NFCISO7816ResponseAPDU, any Error>) in }
    let (_, _, _): (Data, UInt8, UInt8) = try await t.sendMiFareISO7816Command(apdu)
    let _: NFCISO7816ResponseAPDU = try await t.sendMiFareISO7816Command(apdu)
}

private func useISO7816(_ t: any NFCISO7816Tag) async throws {
    useBaseTag(t)
    try await useNDEFTag(t)
    _ = t.initialSelectedAID
    _ = t.identifier
    _ = t.historicalBytes
    _ = t.applicationData
    _ = t.proprietaryApplicationDataCoding
    let apdu = try #require(NFCISO7816APDU(data: Data([0x00, 0xA4, 0x04, 0x00, 0x00])))
    _ = (apdu.instructionClass, apdu.instructionCode, apdu.p1Parameter, apdu.p2Parameter)
    _ = (apdu.data, apdu.expectedResponseLength)
    t.sendCommand(apdu: apdu) { (_: Data, _: UInt8, _: UInt8, _: (any Error)?) in }
    t.sendCommand(apdu: apdu) { (_: Result<NFCISO7816ResponseAPDU, any Error>) in }
    let (_, _, _): (Data, UInt8, UInt8) = try await t.sendCommand(apdu: apdu)
    let r: NFCISO7816ResponseAPDU = try await t.sendCommand(apdu: apdu)
    _ = (r.statusWord1, r.statusWord2, r.payload)
    _ = NFCISO7816ResponseAPDU(statusWord1: 0x90, statusWord2: 0x00, payload: nil)
}

/// NFCFeliCaTag and its types.
private func useFeliCa(_ t: any NFCFeliCaTag) async throws {
    useBaseTag(t)
    try await useNDEFTag(t)
    _ = (t.currentSystemCode, t.currentIDm)
    let codes: [NFCFeliCaPollingRequestCode] = [.noRequest, .systemCode, .communicationPerformance]
    let slots: [NFCFeliCaPollingTimeSlot] = [.max1, .max2, .max4, .max8, .max16]
    let ids: [NFCFeliCaEncryptionId] = [.AES, .AES_DES]
    let _: (PollingRequestCode, PollingTimeSlot, EncryptionId) = (codes[0], slots[0], ids[0])
    let sc = Data([0x00, 0x03])
    t.polling(systemCode: sc, requestCode: .systemCode, timeSlot: .max1) { (_: Data, _: Data, _: (any Error)?) in }
    t.polling(systemCode: sc, requestCode: .systemCode, timeSlot: .max1) {
        (r: Result<NFCFeliCaPollingResponse, any Error>) in
        if case .success(let p) = r { _ = (p.manufactureParameter, p.requestData) }
    }
    let (_, _): (Data, Data) = try await t.polling(systemCode: sc, requestCode: .noRequest, timeSlot: .max16)
    t.requestService(nodeCodeList: [sc]) { (_: [Data], _: (any Error)?) in }
    t.requestService(nodeCodeList: [sc]) { (_: Result<[Data], any Error>) in }
    _ = try await t.requestService(nodeCodeList: [sc])
    t.requestResponse { (_: Int, _: (any Error)?) in }
    t.requestResponse { (_: Result<Int, any Error>) in }
    _ = try await t.requestResponse()
    t.readWithoutEncryption(serviceCodeList: [sc], blockList: [Data([0x80, 0])]) {
        (_: Int, _: Int, _: [Data], _: (any Error)?) in
    }
    t.readWithoutEncryption(serviceCodeList: [sc], blockList: [Data([0x80, 0])]) {
        (r: Result<(NFCFeliCaStatusFlag, [Data]), any Error>) in
        if case .success(let (flag, _)) = r { _ = (flag.statusFlag1, flag.statusFlag2) }
    }
    _ = try await t.readWithoutEncryption(serviceCodeList: [sc], blockList: [])
    t.writeWithoutEncryption(serviceCodeList: [sc], blockList: [], blockData: []) { (_: Int, _: Int, _: (any Error)?) in
    }
    t.writeWithoutEncryption(serviceCodeList: [sc], blockList: [], blockData: []) {
        (_: Result<NFCFeliCaStatusFlag, any Error>) in
    }
    _ = try await t.writeWithoutEncryption(serviceCodeList: [sc], blockList: [], blockData: [])
    t.requestSystemCode { (_: [Data], _: (any Error)?) in }
    t.requestSystemCode { (_: Result<[Data], any Error>) in }
    _ = try await t.requestSystemCode()
    t.requestServiceV2(nodeCodeList: [sc]) {
        (_: Int, _: Int, _: NFCFeliCaEncryptionId, _: [Data], _: [Data], _: (any Error)?) in
    }
    t.requestServiceV2(nodeCodeList: [sc]) { (r: Result<NFCFeliCaRequsetServiceV2Response, any Error>) in
        if case .success(let v) = r {
            _ = (v.statusFlag1, v.statusFlag2, v.encryptionIdentifier, v.nodeKeyVersionListAES, v.nodeKeyVersionListDES)
        }
    }
    _ = try await t.requestServiceV2(nodeCodeList: [sc])
    t.requestSpecificationVersion { (_: Int, _: Int, _: Data, _: Data, _: (any Error)?) in }
    t.requestSpecificationVersion { (r: Result<NFCFeliCaRequestSpecificationVersionResponse, any Error>) in
        if case .success(let v) = r { _ = (v.statusFlag1, v.statusFlag2, v.basicVersion, v.optionVersion) }
    }
    _ = try await t.requestSpecificationVersion()
    t.resetMode { (_: Int, _: Int, _: (any Error)?) in }
    t.resetMode { (_: Result<NFCFeliCaStatusFlag, any Error>) in }
    _ = try await t.resetMode()
    t.sendFeliCaCommand(commandPacket: Data([0x06])) { (_: Data, _: (any Error)?) in }
    t.sendFeliCaCommand(commandPacket: Data([0x06])) { (_: Result<Data, any Error>) in }
    _ = try await t.sendFeliCaCommand(commandPacket: Data([0x06]))
}

/// NFCISO15693Tag and its types (the deprecated members in ``useDeprecated(_:)``).
private func useISO15693(_ t: any NFCISO15693Tag) async throws {
    useBaseTag(t)
    try await useNDEFTag(t)
    _ = (t.identifier, t.icManufacturerCode, t.icSerialNumber)
    let f: NFCISO15693RequestFlag = [
        .dualSubCarriers, .highDataRate, .protocolExtension, .select, .address, .option, .commandSpecificBit8,
    ]
    let _: RequestFlag = f
    let responseFlags: NFCISO15693ResponseFlag = [
        .error, .responseBufferValid, .finalResponse, .protocolExtension, .blockSecurityStatusBit5,
        .blockSecurityStatusBit6, .waitTimeExtension,
    ]
    _ = responseFlags
    let range = NSRange(location: 0, length: 4)
    let custom = NFCISO15693CustomCommandConfiguration(
        manufacturerCode: 0x04, customCommandCode: 0xA0, requestParameters: nil)
    _ = NFCISO15693CustomCommandConfiguration(
        manufacturerCode: 0x04, customCommandCode: 0xA0, requestParameters: Data(), maximumRetries: 2,
        retryInterval: 0.1)
    _ = (custom.manufacturerCode, custom.customCommandCode, custom.requestParameters, custom.maximumRetries)
    let read = NFCISO15693ReadMultipleBlocksConfiguration(range: range, chunkSize: 2)
    _ = NFCISO15693ReadMultipleBlocksConfiguration(range: range, chunkSize: 2, maximumRetries: 1, retryInterval: 0)
    _ = (read.range, read.chunkSize, read.retryInterval)
    let base = NFCTagCommandConfiguration()
    base.maximumRetries = 1
    base.retryInterval = 0.5
    _ = base.copy()
    t.sendCustomCommand(commandConfiguration: custom) { (_: Data, _: (any Error)?) in }
    t.readMultipleBlocks(readConfiguration: read) { (_: Data, _: (any Error)?) in }
    t.stayQuiet { (_: (any Error)?) in }
    try await t.stayQuiet()
    t.readSingleBlock(requestFlags: f, blockNumber: 0) { (_: Data, _: (any Error)?) in }
    t.readSingleBlock(requestFlags: f, blockNumber: 0) { (_: Result<Data, any Error>) in }
    _ = try await t.readSingleBlock(requestFlags: f, blockNumber: 0)
    t.writeSingleBlock(requestFlags: f, blockNumber: 0, dataBlock: Data(count: 4)) { (_: (any Error)?) in }
    try await t.writeSingleBlock(requestFlags: f, blockNumber: 0, dataBlock: Data(count: 4))
    t.lockBlock(requestFlags: f, blockNumber: 0) { (_: (any Error)?) in }
    try await t.lockBlock(requestFlags: f, blockNumber: 0)
    t.readMultipleBlocks(requestFlags: f, blockRange: range) { (_: [Data], _: (any Error)?) in }
    t.readMultipleBlocks(requestFlags: f, blockRange: range) { (_: Result<[Data], any Error>) in }
    _ = try await t.readMultipleBlocks(requestFlags: f, blockRange: range)
    t.writeMultipleBlocks(requestFlags: f, blockRange: range, dataBlocks: []) { (_: (any Error)?) in }
    try await t.writeMultipleBlocks(requestFlags: f, blockRange: range, dataBlocks: [])
    t.select(requestFlags: f) { (_: (any Error)?) in }
    try await t.select(requestFlags: f)
    t.resetToReady(requestFlags: f) { (_: (any Error)?) in }
    try await t.resetToReady(requestFlags: f)
    t.writeAFI(requestFlags: f, afi: 0) { (_: (any Error)?) in }
    try await t.writeAFI(requestFlags: f, afi: 0)
    t.lockAFI(requestFlags: f) { (_: (any Error)?) in }
    try await t.lockAFI(requestFlags: f)
    t.writeDSFID(requestFlags: f, dsfid: 0) { (_: (any Error)?) in }
    try await t.writeDSFID(requestFlags: f, dsfid: 0)
    t.lockDSFID(requestFlags: f) { (_: (any Error)?) in }
    try await t.lockDSFID(requestFlags: f)
    t.getSystemInfo(requestFlags: f) { (r: Result<NFCISO15693SystemInfo, any Error>) in
        if case .success(let i) = r {
            _ = (i.uniqueIdentifier, i.dataStorageFormatIdentifier, i.applicationFamilyIdentifier)
            _ = (i.blockSize, i.totalBlocks, i.icReference)
        }
    }
    _ = try await t.systemInfo(requestFlags: f)
    t.getMultipleBlockSecurityStatus(requestFlags: f, blockRange: range) { (_: [NSNumber], _: (any Error)?) in }
    _ = try await t.getMultipleBlockSecurityStatus(requestFlags: f, blockRange: range)
    t.fastReadMultipleBlocks(requestFlags: f, blockRange: range) { (_: Result<[Data], any Error>) in }
    _ = try await t.fastReadMultipleBlocks(requestFlags: f, blockRange: range)
    t.customCommand(requestFlags: f, customCommandCode: 0xA0, customRequestParameters: Data()) {
        (_: Data, _: (any Error)?) in
    }
    t.customCommand(requestFlags: f, customCommandCode: 0xA0, customRequestParameters: Data()) {
        (_: Result<Data, any Error>) in
    }
    _ = try await t.customCommand(requestFlags: f, customCommandCode: 0xA0, customRequestParameters: Data())
    t.extendedReadSingleBlock(requestFlags: f, blockNumber: 300) { (_: Data, _: (any Error)?) in }
    t.extendedReadSingleBlock(requestFlags: f, blockNumber: 300) { (_: Result<Data, any Error>) in }
    _ = try await t.extendedReadSingleBlock(requestFlags: f, blockNumber: 300)
    t.extendedWriteSingleBlock(requestFlags: f, blockNumber: 300, dataBlock: Data()) { (_: (any Error)?) in }
    try await t.extendedWriteSingleBlock(requestFlags: f, blockNumber: 300, dataBlock: Data())
    t.extendedLockBlock(requestFlags: f, blockNumber: 300) { (_: (any Error)?) in }
    try await t.extendedLockBlock(requestFlags: f, blockNumber: 300)
    t.extendedReadMultipleBlocks(requestFlags: f, blockRange: range) { (_: [Data], _: (any Error)?) in }
    _ = try await t.extendedReadMultipleBlocks(requestFlags: f, blockRange: range)
    t.extendedWriteMultipleBlocks(requestFlags: f, blockRange: range, dataBlocks: []) { (_: (any Error)?) in }
    try await t.extendedWriteMultipleBlocks(requestFlags: f, blockRange: range, dataBlocks: [])
    t.authenticate(requestFlags: f, cryptoSuiteIdentifier: 0, message: Data()) {
        (_: Result<(NFCISO15693ResponseFlag, Data), any Error>) in
    }
    _ = try await t.authenticate(requestFlags: f, cryptoSuiteIdentifier: 0, message: Data())
    t.keyUpdate(requestFlags: f, keyIdentifier: 0, message: Data()) {
        (_: Result<(NFCISO15693ResponseFlag, Data), any Error>) in
    }
    _ = try await t.keyUpdate(requestFlags: f, keyIdentifier: 0, message: Data())
    t.challenge(requestFlags: f, cryptoSuiteIdentifier: 0, message: Data()) { (_: (any Error)?) in }
    try await t.challenge(requestFlags: f, cryptoSuiteIdentifier: 0, message: Data())
    t.readBuffer(requestFlags: f) { (_: Result<(NFCISO15693ResponseFlag, Data), any Error>) in }
    _ = try await t.readBuffer(requestFlags: f)
    t.extendedGetMultipleBlockSecurityStatus(requestFlags: f, blockRange: range) {
        (r: Result<NFCISO15693MultipleBlockSecurityStatus, any Error>) in
        if case .success(let s) = r { _ = s.blockSecurityStatus }
    }
    _ = try await t.extendedGetMultipleBlockSecurityStatus(requestFlags: f, blockRange: range)
    t.extendedFastReadMultipleBlocks(requestFlags: f, blockRange: range) { (_: Result<[Data], any Error>) in }
    _ = try await t.extendedFastReadMultipleBlocks(requestFlags: f, blockRange: range)
    t.sendRequest(requestFlags: 0x22, commandCode: 0x2B, data: nil) {
        (_: Result<(NFCISO15693ResponseFlag, Data?), any Error>) in
    }
    _ = try await t.sendRequest(requestFlags: 0x22, commandCode: 0x2B, data: nil)
}

/// Core NFC's deprecated spellings (deprecated here too, so only a deprecated caller uses them).
@available(*, deprecated)
private func useDeprecated(_ t: any NFCISO15693Tag) {
    t.lockDFSID(requestFlags: [.highDataRate]) { (_: (any Error)?) in }
    t.getSystemInfo(requestFlags: [.highDataRate]) { (_: Int, _: Int, _: Int, _: Int, _: Int, _: (any Error)?) in }
    _ = NFCNDEFPayload.wellKnowTypeTextPayload(string: "Hi", locale: Locale(identifier: "en"))
    _ = NFCISO7816ResponseAPDU(statusWord1: 0x90, statusWord2: 0, paylaod: nil)
}

/// NDEF: NFCNDEFMessage, NFCNDEFPayload, NFCTypeNameFormat.
private func useNDEF() -> NFCNDEFMessage? {
    let formats: [NFCTypeNameFormat] = [
        .empty, .nfcWellKnown, .media, .absoluteURI, .nfcExternal, .unknown, .unchanged,
    ]
    let p = NFCNDEFPayload(format: formats[1], type: Data("T".utf8), identifier: Data(), payload: Data())
    let q = NFCNDEFPayload(
        format: .media, type: Data("text/plain".utf8), identifier: Data(), payload: Data(), chunkSize: 0)
    p.typeNameFormat = .nfcWellKnown
    p.type = Data("U".utf8)
    p.identifier = Data()
    p.payload = Data([0x04]) + Data("example.com".utf8)
    q.chunkSize = 64
    _ = p.wellKnownTypeURIPayload()
    _ = p.wellKnownTypeTextPayload()
    _ = NFCNDEFPayload.wellKnownTypeURIPayload(string: "https://example.com")
    _ = URL(string: "https://example.com").flatMap { NFCNDEFPayload.wellKnownTypeURIPayload(url: $0) }
    _ = NFCNDEFPayload.wellKnownTypeTextPayload(string: "Hi", locale: Locale(identifier: "en"))
    let m = NFCNDEFMessage(records: [p, q])
    m.records = [p]
    _ = m.length
    return NFCNDEFMessage(data: Data([0xD1, 0x01, 0x01, 0x55, 0x01]))
}

/// Errors: NFCReaderError, its codes and the userInfo keys.
private func useErrors(_ error: any Error) -> String {
    let codes: [NFCReaderError.Code] = [
        .readerErrorUnsupportedFeature, .readerErrorSecurityViolation, .readerErrorInvalidParameter,
        .readerErrorInvalidParameterLength, .readerErrorParameterOutOfBound, .readerErrorRadioDisabled,
        .readerErrorIneligible, .readerErrorAccessNotAccepted, .readerTransceiveErrorTagConnectionLost,
        .readerTransceiveErrorRetryExceeded, .readerTransceiveErrorTagResponseError,
        .readerTransceiveErrorSessionInvalidated, .readerTransceiveErrorTagNotConnected,
        .readerTransceiveErrorPacketTooLong, .readerSessionInvalidationErrorUserCanceled,
        .readerSessionInvalidationErrorSessionTimeout, .readerSessionInvalidationErrorSessionTerminatedUnexpectedly,
        .readerSessionInvalidationErrorSystemIsBusy, .readerSessionInvalidationErrorFirstNDEFTagRead,
        .tagCommandConfigurationErrorInvalidParameters, .ndefReaderSessionErrorTagNotWritable,
        .ndefReaderSessionErrorTagUpdateFailure, .ndefReaderSessionErrorTagSizeTooSmall,
        .ndefReaderSessionErrorZeroLengthMessage,
    ]
    _ = codes
    _ = [NFCErrorDomain, NFCISO15693TagResponseErrorKey, NFCTagResponseUnexpectedLengthErrorKey]
    let e = NFCReaderError(.readerSessionInvalidationErrorUserCanceled, userInfo: [:])
    _ = (e.code, e.errorCode, e.errorUserInfo, e.userInfo, NFCReaderError.errorDomain)
    switch error {
    case NFCReaderError.readerSessionInvalidationErrorFirstNDEFTagRead: return "read"
    case NFCReaderError.readerSessionInvalidationErrorUserCanceled: return "cancelled"
    default:
        if let e = error as? NFCReaderError, e.code == NFCReaderError.readerSessionInvalidationErrorSessionTimeout {
            return "timeout"
        }
        return "other"
    }
}

@Suite("Core NFC's public symbols (iOS 18.0 SDK) through import ReaderSession")
struct CoreNFCSymbolsTests {
    @Test(
        "Every symbol compiles as an iOS file uses it; the NSError bridge gives domain NFCError, the code and the sourced text"
    )
    func errorsBridge() throws {
        // The uses above compile; these run.
        let uses: [Any] = [useSessions, useConnect, useTags, useNDEF, useErrors, useVAS]
        #expect(uses.count == 6)
        let timeout: any Error = NFCReaderError(.readerSessionInvalidationErrorSessionTimeout)
        let ns = timeout as NSError
        #expect(ns.domain == "NFCError")
        #expect(ns.code == 201)
        #expect(ns.localizedDescription == "Session timeout")
        #expect(ns.userInfo[NSLocalizedDescriptionKey] as? String == "Session timeout")
        #expect(timeout.localizedDescription == "Session timeout")
        #expect(useErrors(timeout) == "timeout")
        #expect(useErrors(NFCReaderError(.readerSessionInvalidationErrorUserCanceled)) == "cancelled")
        #expect(useErrors(NFCReaderError(.readerSessionInvalidationErrorFirstNDEFTagRead)) == "read")
        let given = NFCReaderError(
            .readerTransceiveErrorTagResponseError, userInfo: [NFCISO15693TagResponseErrorKey: 0x0F])
        #expect((given as NSError).userInfo[NFCISO15693TagResponseErrorKey] as? Int == 0x0F)
        #expect(given.errorCode == 102)
        let detailed = NFCReaderError(.readerTransceiveErrorTagConnectionLost, detail: "no answer to 3000")
        #expect((detailed as NSError).userInfo[NSDebugDescriptionErrorKey] as? String == "no answer to 3000")
        #expect(NFCReaderError.Code.allCases.allSatisfy { !$0.localizedDescription.isEmpty })
    }

    @Test(
        "Raw value types are Core NFC's: UInt for NFCNDEFStatus, NFCMiFareFamily, NFCTagType; UInt8 for TNF and ISO 15693 flags"
    )
    func rawValues() {
        let status: UInt = NFCNDEFStatus.readWrite.rawValue
        let family: UInt = NFCMiFareFamily.desfire.rawValue
        let type: UInt = NFCTagType.iso7816Compatible.rawValue
        let tnf: UInt8 = NFCTypeNameFormat.nfcExternal.rawValue
        let flag: UInt8 = NFCISO15693RequestFlag.commandSpecificBit8.rawValue
        #expect([status, family, type] == [2, 4, 3])
        #expect(tnf == 4 && flag == 0x80)
        #expect(NFCFeliCaEncryptionId.AES_DES.rawValue == 0x4F)
        #expect(NFCFeliCaPollingTimeSlot.max16.rawValue == 15)
    }

    @Test(
        "NDEF messages and payloads are NSObject classes: shared by reference, copied by copy(), archived with NSSecureCoding"
    )
    func ndefClasses() throws {
        let m = try #require(useNDEF())
        #expect(m.records.first?.wellKnownTypeURIPayload()?.absoluteString == "http://www.")
        let p = try #require(NFCNDEFPayload.wellKnownTypeURIPayload(string: "https://example.com/a"))
        let alias = p
        let copy = try #require(p.copy() as? NFCNDEFPayload)
        alias.payload = Data([0x04]) + Data("example.com/b".utf8)
        #expect(p.wellKnownTypeURIPayload()?.absoluteString == "https://example.com/b")
        #expect(copy.wellKnownTypeURIPayload()?.absoluteString == "https://example.com/a")
        #expect(copy != p)
        let message = NFCNDEFMessage(records: [p])
        let data = try NSKeyedArchiver.archivedData(withRootObject: message, requiringSecureCoding: true)
        let back = try #require(
            try NSKeyedUnarchiver.unarchivedObject(ofClass: NFCNDEFMessage.self, from: data))
        #expect(back == message)
        #expect(back !== message)
        #expect((message as AnyObject) is NSObject)
        let apdu = NFCISO7816APDU(
            instructionClass: 0, instructionCode: 0xB0, p1Parameter: 0, p2Parameter: 0, data: Data(),
            expectedResponseLength: 15)
        #expect(apdu == NFCISO7816APDU(data: Data([0x00, 0xB0, 0x00, 0x00, 0x0F])))
    }

    @Test("The NDEF session's mode follows the delegate's shape: read-write when it implements didDetect tags")
    func modeFromShape() {
        final class ReadOnly: NSObject, NFCNDEFReaderSessionDelegate {
            func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}
            func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {}
        }
        let every = EveryDelegate()
        let readOnly = ReadOnly()
        let rw = NFCNDEFReaderSession(delegate: every, queue: nil, invalidateAfterFirstRead: true, system: nil)
        let ro = NFCNDEFReaderSession(delegate: readOnly, queue: nil, invalidateAfterFirstRead: true, system: nil)
        #expect(rw.isReadWrite)
        #expect(!ro.isReadWrite)
        #expect(rw.delegate as? EveryDelegate === every)
        #expect(NFCTagReaderSession(pollingOption: [], delegate: every, queue: nil) == nil)
        let vas = VASDelegate()
        #expect(useVAS(vas).delegate as? VASDelegate === vas)
        #expect(!NFCVASReaderSession.readingAvailable)
    }
}

/// Value Added Services: declared, not modelled (docs/corenfc.md).
private final class VASDelegate: NSObject, NFCVASReaderSessionDelegate, @unchecked Sendable {
    func readerSessionDidBecomeActive(_ session: NFCVASReaderSession) {}
    func readerSession(_ session: NFCVASReaderSession, didInvalidateWithError error: any Error) {}
    func readerSession(_ session: NFCVASReaderSession, didReceive responses: [NFCVASResponse]) {
        for r in responses {
            let codes: [NFCVASResponse.ErrorCode] = [
                .success, .dataNotFound, .dataNotActivated, .wrongParameters, .wrongLCField, .userIntervention,
                .incorrectData, .unsupportedApplicationVersion,
            ]
            _ = (codes.contains(r.status), r.vasData, r.mobileToken, r.copy())
        }
    }
}

private func useVAS(_ d: VASDelegate) -> NFCVASReaderSession {
    let modes: [NFCVASCommandConfiguration.Mode] = [.urlOnly, .normal]
    let c = NFCVASCommandConfiguration(
        vasMode: modes[1], passTypeIdentifier: "pass.com.example", url: URL(string: "https://example.com"))
    c.mode = .urlOnly
    c.passTypeIdentifier = "pass.com.example.other"
    c.url = nil
    _ = c.copy()
    let _: NFCVASCommandConfiguration.VASMode = .normal
    let _: NFCVASResponse.VASErrorCode = .success
    return NFCVASReaderSession(vasCommandConfigurations: [c], delegate: d, queue: nil)
}

/// Hands each session's ending to a continuation. Sessions hold their delegate weakly, as
/// Core NFC does, so the catcher keeps itself alive until its session has ended.
private final class EndingCatcher: NSObject, NFCVASReaderSessionDelegate, NFCReaderSessionDelegate,
    @unchecked Sendable
{
    private let ended: @Sendable (NFCReaderError.Code?) -> Void
    private var keepAlive: EndingCatcher?
    init(_ ended: @escaping @Sendable (NFCReaderError.Code?) -> Void) {
        self.ended = ended
        super.init()
        keepAlive = self
    }
    private func end(_ error: any Error) {
        ended((error as? NFCReaderError)?.code)
        keepAlive = nil
    }
    func readerSession(_ session: NFCVASReaderSession, didInvalidateWithError error: any Error) { end(error) }
    func readerSession(_ session: NFCVASReaderSession, didReceive responses: [NFCVASResponse]) {}
    func readerSessionDidBecomeActive(_ session: NFCReaderSession) {}
    func readerSession(_ session: NFCReaderSession, didInvalidateWithError error: any Error) { end(error) }
}

@Suite("Sessions declared but not modelled end as Core NFC ends an unsupported feature")
struct UnmodelledSessionTests {
    @Test("NFCVASReaderSession and NFCISO15693ReaderSession: begin() ends with 1 (readerErrorUnsupportedFeature)")
    func endWithUnsupported() async {
        for kind in ["vas", "iso15693"] {
            let code: NFCReaderError.Code? = await withCheckedContinuation { k in
                let catcher = EndingCatcher { k.resume(returning: $0) }
                let session: NFCReaderSession =
                    kind == "vas"
                    ? NFCVASReaderSession(
                        vasCommandConfigurations: [
                            NFCVASCommandConfiguration(vasMode: .normal, passTypeIdentifier: "pass.example", url: nil)
                        ], delegate: catcher, queue: nil)
                    : NFCISO15693ReaderSession(delegate: catcher, queue: nil)
                session.begin()
            }
            #expect(code == .readerErrorUnsupportedFeature, "\(kind)")
        }
    }
}
