public import Foundation
import Synchronization

// Core NFC's FeliCa and ISO 15693 tag types, declared with the iOS 18.0 SDK's shapes
// (`NFCFeliCaTag.h`, `NFCISO15693Tag.h` and the Swift overlay in `CoreNFC.swiftinterface`).
// The tag objects a session delivers for them are in FeliCaISO15693TagObjects.swift.
// Raw value types follow the headers (`NS_ENUM(NSInteger)` → `Int`, `NS_OPTIONS(uint8_t)` →
// `UInt8`).

// MARK: FeliCa

/// Core NFC `NFCFeliCaPollingRequestCode` (JIS X 6319-4 Polling's Request Code).
public enum NFCFeliCaPollingRequestCode: Int, Sendable, Hashable {
    case noRequest = 0
    case systemCode = 1
    case communicationPerformance = 2
}
/// Core NFC's older name (deprecated there).
public typealias PollingRequestCode = NFCFeliCaPollingRequestCode

/// Core NFC `NFCFeliCaPollingTimeSlot` (Polling's Time Slot Number).
public enum NFCFeliCaPollingTimeSlot: Int, Sendable, Hashable {
    case max1 = 0
    case max2 = 1
    case max4 = 3
    case max8 = 7
    case max16 = 15
}
/// Core NFC's older name (deprecated there).
public typealias PollingTimeSlot = NFCFeliCaPollingTimeSlot

/// Core NFC `NFCFeliCaEncryptionId` (Request Service V2's encryption identifier).
public enum NFCFeliCaEncryptionId: Int, Sendable, Hashable {
    case AES = 0x41
    case AES_DES = 0x4F
}
/// Core NFC's older name (deprecated there).
public typealias EncryptionId = NFCFeliCaEncryptionId

/// Core NFC `NFCFeliCaPollingResponse` (iOS 14).
public struct NFCFeliCaPollingResponse: Sendable, Hashable {
    public var manufactureParameter: Data
    public var requestData: Data?
    public init(manufactureParameter: Data, requestData: Data?) {
        self.manufactureParameter = manufactureParameter
        self.requestData = requestData
    }
}

/// Core NFC `NFCFeliCaStatusFlag` (iOS 14).
public struct NFCFeliCaStatusFlag: Sendable, Hashable {
    public var statusFlag1: Int
    public var statusFlag2: Int
    public init(statusFlag1: Int, statusFlag2: Int) {
        self.statusFlag1 = statusFlag1
        self.statusFlag2 = statusFlag2
    }
}

/// Core NFC `NFCFeliCaRequsetServiceV2Response` (Apple's spelling, iOS 14).
public struct NFCFeliCaRequsetServiceV2Response: Sendable, Hashable {
    public var statusFlag1: Int
    public var statusFlag2: Int
    public var encryptionIdentifier: NFCFeliCaEncryptionId
    public var nodeKeyVersionListAES: [Data]?
    public var nodeKeyVersionListDES: [Data]?
    public init(
        statusFlag1: Int, statusFlag2: Int, encryptionIdentifier: NFCFeliCaEncryptionId,
        nodeKeyVersionListAES: [Data]?, nodeKeyVersionListDES: [Data]?
    ) {
        self.statusFlag1 = statusFlag1
        self.statusFlag2 = statusFlag2
        self.encryptionIdentifier = encryptionIdentifier
        self.nodeKeyVersionListAES = nodeKeyVersionListAES
        self.nodeKeyVersionListDES = nodeKeyVersionListDES
    }
}

/// Core NFC `NFCFeliCaRequestSpecificationVersionResponse` (iOS 14).
public struct NFCFeliCaRequestSpecificationVersionResponse: Sendable, Hashable {
    public var statusFlag1: Int
    public var statusFlag2: Int
    public var basicVersion: Data?
    public var optionVersion: Data?
    public init(statusFlag1: Int, statusFlag2: Int, basicVersion: Data?, optionVersion: Data?) {
        self.statusFlag1 = statusFlag1
        self.statusFlag2 = statusFlag2
        self.basicVersion = basicVersion
        self.optionVersion = optionVersion
    }
}

/// Core NFC `NFCFeliCaTag`: a FeliCa (JIS X 6319-4) card. Completion handlers run on the
/// session's queue; a failed command gives an ``NFCReaderError``.
public protocol NFCFeliCaTag: __NFCTag, NFCNDEFTag {
    /// The system code selected during discovery (2 bytes).
    var currentSystemCode: Data { get }
    /// The IDm of the selected system (8 bytes).
    var currentIDm: Data { get }
    func polling(
        systemCode: Data, requestCode: NFCFeliCaPollingRequestCode, timeSlot: NFCFeliCaPollingTimeSlot,
        completionHandler: @escaping (Data, Data, (any Error)?) -> Void)
    func requestService(nodeCodeList: [Data], completionHandler: @escaping ([Data], (any Error)?) -> Void)
    func requestResponse(completionHandler: @escaping (Int, (any Error)?) -> Void)
    func readWithoutEncryption(
        serviceCodeList: [Data], blockList: [Data],
        completionHandler: @escaping (Int, Int, [Data], (any Error)?) -> Void)
    func writeWithoutEncryption(
        serviceCodeList: [Data], blockList: [Data], blockData: [Data],
        completionHandler: @escaping (Int, Int, (any Error)?) -> Void)
    func requestSystemCode(completionHandler: @escaping ([Data], (any Error)?) -> Void)
    func requestServiceV2(
        nodeCodeList: [Data],
        completionHandler: @escaping (Int, Int, NFCFeliCaEncryptionId, [Data], [Data], (any Error)?) -> Void)
    func requestSpecificationVersion(completionHandler: @escaping (Int, Int, Data, Data, (any Error)?) -> Void)
    func resetMode(completionHandler: @escaping (Int, Int, (any Error)?) -> Void)
    func sendFeliCaCommand(commandPacket: Data, completionHandler: @escaping (Data, (any Error)?) -> Void)
}

extension NFCFeliCaTag {
    public func polling(
        systemCode: Data, requestCode: NFCFeliCaPollingRequestCode, timeSlot: NFCFeliCaPollingTimeSlot
    ) async throws -> (Data, Data) {
        try await awaitResult { k in
            polling(systemCode: systemCode, requestCode: requestCode, timeSlot: timeSlot) { a, b, e in k(e, (a, b)) }
        }
    }
    public func polling(
        systemCode: Data, requestCode: NFCFeliCaPollingRequestCode, timeSlot: NFCFeliCaPollingTimeSlot,
        resultHandler: @escaping (Result<NFCFeliCaPollingResponse, any Error>) -> Void
    ) {
        polling(systemCode: systemCode, requestCode: requestCode, timeSlot: timeSlot) { pmm, request, e in
            resultHandler(
                result(
                    e, NFCFeliCaPollingResponse(manufactureParameter: pmm, requestData: request.isEmpty ? nil : request)
                ))
        }
    }
    public func requestService(nodeCodeList: [Data]) async throws -> [Data] {
        try await awaitResult { k in requestService(nodeCodeList: nodeCodeList) { a, e in k(e, a) } }
    }
    public func requestService(nodeCodeList: [Data], resultHandler: @escaping (Result<[Data], any Error>) -> Void) {
        requestService(nodeCodeList: nodeCodeList) { a, e in resultHandler(result(e, a)) }
    }
    public func requestResponse() async throws -> Int {
        try await awaitResult { k in requestResponse { a, e in k(e, a) } }
    }
    public func requestResponse(resultHandler: @escaping (Result<Int, any Error>) -> Void) {
        requestResponse { a, e in resultHandler(result(e, a)) }
    }
    public func readWithoutEncryption(serviceCodeList: [Data], blockList: [Data]) async throws -> (Int, Int, [Data]) {
        try await awaitResult { k in
            readWithoutEncryption(serviceCodeList: serviceCodeList, blockList: blockList) { a, b, c, e in
                k(e, (a, b, c))
            }
        }
    }
    public func readWithoutEncryption(
        serviceCodeList: [Data], blockList: [Data],
        resultHandler: @escaping (Result<(NFCFeliCaStatusFlag, [Data]), any Error>) -> Void
    ) {
        readWithoutEncryption(serviceCodeList: serviceCodeList, blockList: blockList) { a, b, c, e in
            resultHandler(result(e, (NFCFeliCaStatusFlag(statusFlag1: a, statusFlag2: b), c)))
        }
    }
    public func writeWithoutEncryption(serviceCodeList: [Data], blockList: [Data], blockData: [Data]) async throws -> (
        Int, Int
    ) {
        try await awaitResult { k in
            writeWithoutEncryption(serviceCodeList: serviceCodeList, blockList: blockList, blockData: blockData) {
                a, b, e in k(e, (a, b))
            }
        }
    }
    public func writeWithoutEncryption(
        serviceCodeList: [Data], blockList: [Data], blockData: [Data],
        resultHandler: @escaping (Result<NFCFeliCaStatusFlag, any Error>) -> Void
    ) {
        writeWithoutEncryption(serviceCodeList: serviceCodeList, blockList: blockList, blockData: blockData) {
            a, b, e in
            resultHandler(result(e, NFCFeliCaStatusFlag(statusFlag1: a, statusFlag2: b)))
        }
    }
    public func requestSystemCode() async throws -> [Data] {
        try await awaitResult { k in requestSystemCode { a, e in k(e, a) } }
    }
    public func requestSystemCode(resultHandler: @escaping (Result<[Data], any Error>) -> Void) {
        requestSystemCode { a, e in resultHandler(result(e, a)) }
    }
    public func requestServiceV2(nodeCodeList: [Data]) async throws -> (
        Int, Int, NFCFeliCaEncryptionId, [Data], [Data]
    ) {
        try await awaitResult { k in
            requestServiceV2(nodeCodeList: nodeCodeList) { a, b, c, d, f, e in k(e, (a, b, c, d, f)) }
        }
    }
    public func requestServiceV2(
        nodeCodeList: [Data], resultHandler: @escaping (Result<NFCFeliCaRequsetServiceV2Response, any Error>) -> Void
    ) {
        requestServiceV2(nodeCodeList: nodeCodeList) { a, b, c, d, f, e in
            resultHandler(
                result(
                    e,
                    NFCFeliCaRequsetServiceV2Response(
                        statusFlag1: a, statusFlag2: b, encryptionIdentifier: c,
                        nodeKeyVersionListAES: d.isEmpty ? nil : d,
                        nodeKeyVersionListDES: f.isEmpty ? nil : f)))
        }
    }
    public func requestSpecificationVersion() async throws -> (Int, Int, Data, Data) {
        try await awaitResult { k in requestSpecificationVersion { a, b, c, d, e in k(e, (a, b, c, d)) } }
    }
    public func requestSpecificationVersion(
        resultHandler: @escaping (Result<NFCFeliCaRequestSpecificationVersionResponse, any Error>) -> Void
    ) {
        requestSpecificationVersion { a, b, c, d, e in
            resultHandler(
                result(
                    e,
                    NFCFeliCaRequestSpecificationVersionResponse(
                        statusFlag1: a, statusFlag2: b, basicVersion: c.isEmpty ? nil : c,
                        optionVersion: d.isEmpty ? nil : d)))
        }
    }
    public func resetMode() async throws -> (Int, Int) {
        try await awaitResult { k in resetMode { a, b, e in k(e, (a, b)) } }
    }
    public func resetMode(resultHandler: @escaping (Result<NFCFeliCaStatusFlag, any Error>) -> Void) {
        resetMode { a, b, e in resultHandler(result(e, NFCFeliCaStatusFlag(statusFlag1: a, statusFlag2: b))) }
    }
    public func sendFeliCaCommand(commandPacket: Data) async throws -> Data {
        try await awaitResult { k in sendFeliCaCommand(commandPacket: commandPacket) { a, e in k(e, a) } }
    }
    public func sendFeliCaCommand(commandPacket: Data, resultHandler: @escaping (Result<Data, any Error>) -> Void) {
        sendFeliCaCommand(commandPacket: commandPacket) { a, e in resultHandler(result(e, a)) }
    }
}

// MARK: ISO 15693

/// Core NFC `NFCISO15693RequestFlag` (ISO/IEC 15693-3 request flags).
public struct NFCISO15693RequestFlag: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let dualSubCarriers = Self(rawValue: 1 << 0)
    public static let highDataRate = Self(rawValue: 1 << 1)
    public static let protocolExtension = Self(rawValue: 1 << 3)
    public static let select = Self(rawValue: 1 << 4)
    public static let address = Self(rawValue: 1 << 5)
    public static let option = Self(rawValue: 1 << 6)
    public static let commandSpecificBit8 = Self(rawValue: 1 << 7)
}
/// Core NFC's older name (deprecated there).
public typealias RequestFlag = NFCISO15693RequestFlag

/// Core NFC `NFCISO15693ResponseFlag` (iOS 14; ISO/IEC 15693-3 response flags).
public struct NFCISO15693ResponseFlag: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let error = Self(rawValue: 1 << 0)
    public static let responseBufferValid = Self(rawValue: 1 << 1)
    public static let finalResponse = Self(rawValue: 1 << 2)
    public static let protocolExtension = Self(rawValue: 1 << 3)
    public static let blockSecurityStatusBit5 = Self(rawValue: 1 << 4)
    public static let blockSecurityStatusBit6 = Self(rawValue: 1 << 5)
    public static let waitTimeExtension = Self(rawValue: 1 << 6)
}

/// Core NFC `NFCISO15693CustomCommandConfiguration` (legacy Manufacturer Custom command).
// unchecked: restates the base's conformance; its own fields are guarded by `fields`
public final class NFCISO15693CustomCommandConfiguration: NFCTagCommandConfiguration, @unchecked Sendable {
    private let fields: Mutex<(manufacturerCode: Int, customCommandCode: Int, requestParameters: Data)>
    /// 0x00–0xFF.
    public var manufacturerCode: Int {
        get { fields.withLock { $0.manufacturerCode } }
        set { fields.withLock { $0.manufacturerCode = newValue } }
    }
    /// 0xA0–0xDF.
    public var customCommandCode: Int {
        get { fields.withLock { $0.customCommandCode } }
        set { fields.withLock { $0.customCommandCode = newValue } }
    }
    public var requestParameters: Data {
        get { fields.withLock { $0.requestParameters } }
        set { fields.withLock { $0.requestParameters = newValue } }
    }

    public init(manufacturerCode: Int, customCommandCode: Int, requestParameters: Data?) {
        fields = Mutex((manufacturerCode, customCommandCode, requestParameters ?? Data()))
        super.init()
    }

    public convenience init(
        manufacturerCode: Int, customCommandCode: Int, requestParameters: Data?, maximumRetries: Int,
        retryInterval: TimeInterval
    ) {
        self.init(
            manufacturerCode: manufacturerCode, customCommandCode: customCommandCode,
            requestParameters: requestParameters)
        self.maximumRetries = maximumRetries
        self.retryInterval = retryInterval
    }
}

/// Core NFC `NFCISO15693ReadMultipleBlocksConfiguration` (legacy Read Multiple Blocks).
// unchecked: restates the base's conformance; its own fields are guarded by `fields`
public final class NFCISO15693ReadMultipleBlocksConfiguration: NFCTagCommandConfiguration, @unchecked Sendable {
    private let fields: Mutex<(range: NSRange, chunkSize: Int)>
    public var range: NSRange {
        get { fields.withLock { $0.range } }
        set { fields.withLock { $0.range = newValue } }
    }
    public var chunkSize: Int {
        get { fields.withLock { $0.chunkSize } }
        set { fields.withLock { $0.chunkSize = newValue } }
    }

    public init(range: NSRange, chunkSize: Int) {
        fields = Mutex((range, chunkSize))
        super.init()
    }

    public convenience init(range: NSRange, chunkSize: Int, maximumRetries: Int, retryInterval: TimeInterval) {
        self.init(range: range, chunkSize: chunkSize)
        self.maximumRetries = maximumRetries
        self.retryInterval = retryInterval
    }
}

/// Core NFC `NFCISO15693SystemInfo` (iOS 14; Get System Information's answer).
public struct NFCISO15693SystemInfo: Sendable, Hashable {
    public var uniqueIdentifier: Data
    public var dataStorageFormatIdentifier: Int
    public var applicationFamilyIdentifier: Int
    public var blockSize: Int
    public var totalBlocks: Int
    public var icReference: Int
    public init(
        uniqueIdentifier: Data, dataStorageFormatIdentifier: Int, applicationFamilyIdentifier: Int, blockSize: Int,
        totalBlocks: Int, icReference: Int
    ) {
        self.uniqueIdentifier = uniqueIdentifier
        self.dataStorageFormatIdentifier = dataStorageFormatIdentifier
        self.applicationFamilyIdentifier = applicationFamilyIdentifier
        self.blockSize = blockSize
        self.totalBlocks = totalBlocks
        self.icReference = icReference
    }
}

/// Core NFC `NFCISO15693MultipleBlockSecurityStatus` (iOS 14).
public struct NFCISO15693MultipleBlockSecurityStatus: Sendable, Hashable {
    public var blockSecurityStatus: [Int]
    public init(blockSecurityStatus: [Int]) { self.blockSecurityStatus = blockSecurityStatus }
}

/// Core NFC `NFCISO15693Tag`: an ISO/IEC 15693 vicinity tag. The requirements are the
/// header's completion-handler methods under their Swift names, plus the overlay's
/// (`resultHandler:`) spellings of the methods iOS 18 refines for Swift.
public protocol NFCISO15693Tag: __NFCTag, NFCNDEFTag {
    /// The 64-bit UID, big-endian.
    var identifier: Data { get }
    var icManufacturerCode: Int { get }
    var icSerialNumber: Data { get }
    // Legacy (the tag-identifiers entitlement).
    func sendCustomCommand(
        commandConfiguration: NFCISO15693CustomCommandConfiguration,
        completionHandler: @escaping (Data, (any Error)?) -> Void)
    func readMultipleBlocks(
        readConfiguration: NFCISO15693ReadMultipleBlocksConfiguration,
        completionHandler: @escaping (Data, (any Error)?) -> Void)
    // ISO/IEC 15693-3 commands.
    func stayQuiet(completionHandler: @escaping ((any Error)?) -> Void)
    func readSingleBlock(
        requestFlags flags: NFCISO15693RequestFlag, blockNumber: UInt8,
        completionHandler: @escaping (Data, (any Error)?) -> Void)
    func writeSingleBlock(
        requestFlags flags: NFCISO15693RequestFlag, blockNumber: UInt8, dataBlock: Data,
        completionHandler: @escaping ((any Error)?) -> Void)
    func lockBlock(
        requestFlags flags: NFCISO15693RequestFlag, blockNumber: UInt8,
        completionHandler: @escaping ((any Error)?) -> Void)
    func readMultipleBlocks(
        requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange,
        completionHandler: @escaping ([Data], (any Error)?) -> Void)
    func writeMultipleBlocks(
        requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange, dataBlocks: [Data],
        completionHandler: @escaping ((any Error)?) -> Void)
    func select(requestFlags flags: NFCISO15693RequestFlag, completionHandler: @escaping ((any Error)?) -> Void)
    func resetToReady(requestFlags flags: NFCISO15693RequestFlag, completionHandler: @escaping ((any Error)?) -> Void)
    func writeAFI(
        requestFlags flags: NFCISO15693RequestFlag, afi: UInt8, completionHandler: @escaping ((any Error)?) -> Void)
    func lockAFI(requestFlags flags: NFCISO15693RequestFlag, completionHandler: @escaping ((any Error)?) -> Void)
    func writeDSFID(
        requestFlags flags: NFCISO15693RequestFlag, dsfid: UInt8, completionHandler: @escaping ((any Error)?) -> Void)
    @available(*, deprecated, renamed: "lockDSFID(requestFlags:completionHandler:)")
    func lockDFSID(requestFlags flags: NFCISO15693RequestFlag, completionHandler: @escaping ((any Error)?) -> Void)
    func lockDSFID(requestFlags flags: NFCISO15693RequestFlag, completionHandler: @escaping ((any Error)?) -> Void)
    @available(*, deprecated, message: "use getSystemInfo(requestFlags:resultHandler:)")
    func getSystemInfo(
        requestFlags flags: NFCISO15693RequestFlag,
        completionHandler: @escaping (Int, Int, Int, Int, Int, (any Error)?) -> Void)
    func getSystemInfo(
        requestFlags flags: NFCISO15693RequestFlag,
        resultHandler: @escaping (Result<NFCISO15693SystemInfo, any Error>) -> Void)
    func getMultipleBlockSecurityStatus(
        requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange,
        completionHandler: @escaping ([NSNumber], (any Error)?) -> Void)
    func fastReadMultipleBlocks(
        requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange,
        resultHandler: @escaping (Result<[Data], any Error>) -> Void)
    func customCommand(
        requestFlags flags: NFCISO15693RequestFlag, customCommandCode: Int, customRequestParameters: Data,
        completionHandler: @escaping (Data, (any Error)?) -> Void)
    func extendedReadSingleBlock(
        requestFlags flags: NFCISO15693RequestFlag, blockNumber: Int,
        completionHandler: @escaping (Data, (any Error)?) -> Void)
    func extendedWriteSingleBlock(
        requestFlags flags: NFCISO15693RequestFlag, blockNumber: Int, dataBlock: Data,
        completionHandler: @escaping ((any Error)?) -> Void)
    func extendedLockBlock(
        requestFlags flags: NFCISO15693RequestFlag, blockNumber: Int,
        completionHandler: @escaping ((any Error)?) -> Void)
    func extendedReadMultipleBlocks(
        requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange,
        completionHandler: @escaping ([Data], (any Error)?) -> Void)
    func extendedWriteMultipleBlocks(
        requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange, dataBlocks: [Data],
        completionHandler: @escaping ((any Error)?) -> Void)
    func authenticate(
        requestFlags flags: NFCISO15693RequestFlag, cryptoSuiteIdentifier: Int, message: Data,
        resultHandler: @escaping (Result<(NFCISO15693ResponseFlag, Data), any Error>) -> Void)
    func keyUpdate(
        requestFlags flags: NFCISO15693RequestFlag, keyIdentifier: Int, message: Data,
        resultHandler: @escaping (Result<(NFCISO15693ResponseFlag, Data), any Error>) -> Void)
    func challenge(
        requestFlags flags: NFCISO15693RequestFlag, cryptoSuiteIdentifier: Int, message: Data,
        completionHandler: @escaping ((any Error)?) -> Void)
    func readBuffer(
        requestFlags flags: NFCISO15693RequestFlag,
        resultHandler: @escaping (Result<(NFCISO15693ResponseFlag, Data), any Error>) -> Void)
    func extendedGetMultipleBlockSecurityStatus(
        requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange,
        resultHandler: @escaping (Result<NFCISO15693MultipleBlockSecurityStatus, any Error>) -> Void)
    func extendedFastReadMultipleBlocks(
        requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange,
        resultHandler: @escaping (Result<[Data], any Error>) -> Void)
    func sendRequest(
        requestFlags flags: Int, commandCode: Int, data: Data?,
        resultHandler: @escaping (Result<(NFCISO15693ResponseFlag, Data?), any Error>) -> Void)
}

extension NFCISO15693Tag {
    // The overlay's `resultHandler:` spellings of the completion-handler requirements.
    public func readSingleBlock(
        requestFlags flags: NFCISO15693RequestFlag, blockNumber: UInt8,
        resultHandler: @escaping (Result<Data, any Error>) -> Void
    ) { readSingleBlock(requestFlags: flags, blockNumber: blockNumber) { d, e in resultHandler(result(e, d)) } }
    public func readMultipleBlocks(
        requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange,
        resultHandler: @escaping (Result<[Data], any Error>) -> Void
    ) { readMultipleBlocks(requestFlags: flags, blockRange: blockRange) { d, e in resultHandler(result(e, d)) } }
    public func customCommand(
        requestFlags flags: NFCISO15693RequestFlag, customCommandCode: Int, customRequestParameters: Data,
        resultHandler: @escaping (Result<Data, any Error>) -> Void
    ) {
        customCommand(
            requestFlags: flags, customCommandCode: customCommandCode, customRequestParameters: customRequestParameters
        ) {
            d, e in resultHandler(result(e, d))
        }
    }
    public func extendedReadSingleBlock(
        requestFlags flags: NFCISO15693RequestFlag, blockNumber: Int,
        resultHandler: @escaping (Result<Data, any Error>) -> Void
    ) { extendedReadSingleBlock(requestFlags: flags, blockNumber: blockNumber) { d, e in resultHandler(result(e, d)) } }

    // Async forms.
    public func stayQuiet() async throws { try await awaitDone { k in stayQuiet(completionHandler: k) } }
    public func readSingleBlock(requestFlags flags: NFCISO15693RequestFlag, blockNumber: UInt8) async throws -> Data {
        try await awaitResult { k in readSingleBlock(requestFlags: flags, blockNumber: blockNumber) { d, e in k(e, d) }
        }
    }
    public func writeSingleBlock(requestFlags flags: NFCISO15693RequestFlag, blockNumber: UInt8, dataBlock: Data)
        async throws
    {
        try await awaitDone { k in
            writeSingleBlock(requestFlags: flags, blockNumber: blockNumber, dataBlock: dataBlock, completionHandler: k)
        }
    }
    public func lockBlock(requestFlags flags: NFCISO15693RequestFlag, blockNumber: UInt8) async throws {
        try await awaitDone { k in lockBlock(requestFlags: flags, blockNumber: blockNumber, completionHandler: k) }
    }
    public func readMultipleBlocks(requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange) async throws
        -> [Data]
    {
        try await awaitResult { k in readMultipleBlocks(requestFlags: flags, blockRange: blockRange) { d, e in k(e, d) }
        }
    }
    public func writeMultipleBlocks(requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange, dataBlocks: [Data])
        async throws
    {
        try await awaitDone { k in
            writeMultipleBlocks(
                requestFlags: flags, blockRange: blockRange, dataBlocks: dataBlocks, completionHandler: k)
        }
    }
    public func select(requestFlags flags: NFCISO15693RequestFlag) async throws {
        try await awaitDone { k in select(requestFlags: flags, completionHandler: k) }
    }
    public func resetToReady(requestFlags flags: NFCISO15693RequestFlag) async throws {
        try await awaitDone { k in resetToReady(requestFlags: flags, completionHandler: k) }
    }
    public func writeAFI(requestFlags flags: NFCISO15693RequestFlag, afi: UInt8) async throws {
        try await awaitDone { k in writeAFI(requestFlags: flags, afi: afi, completionHandler: k) }
    }
    public func lockAFI(requestFlags flags: NFCISO15693RequestFlag) async throws {
        try await awaitDone { k in lockAFI(requestFlags: flags, completionHandler: k) }
    }
    public func writeDSFID(requestFlags flags: NFCISO15693RequestFlag, dsfid: UInt8) async throws {
        try await awaitDone { k in writeDSFID(requestFlags: flags, dsfid: dsfid, completionHandler: k) }
    }
    public func lockDSFID(requestFlags flags: NFCISO15693RequestFlag) async throws {
        try await awaitDone { k in lockDSFID(requestFlags: flags, completionHandler: k) }
    }
    public func systemInfo(requestFlags flags: NFCISO15693RequestFlag) async throws -> NFCISO15693SystemInfo {
        try await awaitResult { k in getSystemInfo(requestFlags: flags) { r in k(r.failure, r.success) } }
    }
    public func getMultipleBlockSecurityStatus(requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange)
        async throws
        -> [NSNumber]
    {
        try await awaitResult { k in
            getMultipleBlockSecurityStatus(requestFlags: flags, blockRange: blockRange) { d, e in k(e, d) }
        }
    }
    public func fastReadMultipleBlocks(requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange) async throws
        -> [Data]
    {
        try await awaitResult { k in
            fastReadMultipleBlocks(requestFlags: flags, blockRange: blockRange) { r in k(r.failure, r.success) }
        }
    }
    public func customCommand(
        requestFlags flags: NFCISO15693RequestFlag, customCommandCode: Int, customRequestParameters: Data
    ) async throws -> Data {
        try await awaitResult { k in
            customCommand(
                requestFlags: flags, customCommandCode: customCommandCode,
                customRequestParameters: customRequestParameters
            ) {
                d, e in k(e, d)
            }
        }
    }
    public func extendedReadSingleBlock(requestFlags flags: NFCISO15693RequestFlag, blockNumber: Int) async throws
        -> Data
    {
        try await awaitResult { k in
            extendedReadSingleBlock(requestFlags: flags, blockNumber: blockNumber) { d, e in k(e, d) }
        }
    }
    public func extendedWriteSingleBlock(requestFlags flags: NFCISO15693RequestFlag, blockNumber: Int, dataBlock: Data)
        async throws
    {
        try await awaitDone { k in
            extendedWriteSingleBlock(
                requestFlags: flags, blockNumber: blockNumber, dataBlock: dataBlock, completionHandler: k)
        }
    }
    public func extendedLockBlock(requestFlags flags: NFCISO15693RequestFlag, blockNumber: Int) async throws {
        try await awaitDone { k in
            extendedLockBlock(requestFlags: flags, blockNumber: blockNumber, completionHandler: k)
        }
    }
    public func extendedReadMultipleBlocks(requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange) async throws
        -> [Data]
    {
        try await awaitResult { k in
            extendedReadMultipleBlocks(requestFlags: flags, blockRange: blockRange) { d, e in k(e, d) }
        }
    }
    public func extendedWriteMultipleBlocks(
        requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange, dataBlocks: [Data]
    ) async throws {
        try await awaitDone { k in
            extendedWriteMultipleBlocks(
                requestFlags: flags, blockRange: blockRange, dataBlocks: dataBlocks, completionHandler: k)
        }
    }
    public func authenticate(requestFlags flags: NFCISO15693RequestFlag, cryptoSuiteIdentifier: Int, message: Data)
        async throws -> (NFCISO15693ResponseFlag, Data)
    {
        try await awaitResult { k in
            authenticate(requestFlags: flags, cryptoSuiteIdentifier: cryptoSuiteIdentifier, message: message) { r in
                k(r.failure, r.success)
            }
        }
    }
    public func keyUpdate(requestFlags flags: NFCISO15693RequestFlag, keyIdentifier: Int, message: Data) async throws
        -> (
            NFCISO15693ResponseFlag, Data
        )
    {
        try await awaitResult { k in
            keyUpdate(requestFlags: flags, keyIdentifier: keyIdentifier, message: message) { r in
                k(r.failure, r.success)
            }
        }
    }
    public func challenge(requestFlags flags: NFCISO15693RequestFlag, cryptoSuiteIdentifier: Int, message: Data)
        async throws
    {
        try await awaitDone { k in
            challenge(
                requestFlags: flags, cryptoSuiteIdentifier: cryptoSuiteIdentifier, message: message,
                completionHandler: k)
        }
    }
    public func readBuffer(requestFlags flags: NFCISO15693RequestFlag) async throws -> (NFCISO15693ResponseFlag, Data) {
        try await awaitResult { k in readBuffer(requestFlags: flags) { r in k(r.failure, r.success) } }
    }
    public func extendedGetMultipleBlockSecurityStatus(requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange)
        async throws -> NFCISO15693MultipleBlockSecurityStatus
    {
        try await awaitResult { k in
            extendedGetMultipleBlockSecurityStatus(requestFlags: flags, blockRange: blockRange) { r in
                k(r.failure, r.success)
            }
        }
    }
    public func extendedFastReadMultipleBlocks(requestFlags flags: NFCISO15693RequestFlag, blockRange: NSRange)
        async throws -> [Data]
    {
        try await awaitResult { k in
            extendedFastReadMultipleBlocks(requestFlags: flags, blockRange: blockRange) { r in k(r.failure, r.success) }
        }
    }
    public func sendRequest(requestFlags flags: Int, commandCode: Int, data: Data?) async throws -> (
        NFCISO15693ResponseFlag, Data?
    ) {
        try await awaitResult { k in
            sendRequest(requestFlags: flags, commandCode: commandCode, data: data) { r in k(r.failure, r.success) }
        }
    }
}

// MARK: Helpers

func result<T>(_ error: (any Error)?, _ value: T) -> Result<T, any Error> {
    if let error { return .failure(error) }
    return .success(value)
}

extension Result {
    var failure: Failure? {
        if case .failure(let e) = self { return e }
        return nil
    }
    var success: Success? {
        if case .success(let v) = self { return v }
        return nil
    }
}

/// Awaits a completion that gives an error or a value (the value is used when no error).
func awaitResult<T>(_ start: (@escaping ((any Error)?, T?) -> Void) -> Void) async throws -> T {
    try await withCheckedThrowingContinuation { (k: CheckedContinuation<T, any Error>) in
        start { e, v in
            if let e {
                k.resume(throwing: e)
            } else if let v {
                // unsafe: the tag object's answer, made for this one call and handed over once
                nonisolated(unsafe) let answer = v
                k.resume(returning: answer)
            } else {
                k.resume(throwing: NFCReaderError(.readerTransceiveErrorTagResponseError))
            }
        }
    }
}

/// Awaits a completion that gives only an optional error.
func awaitDone(_ start: (@escaping ((any Error)?) -> Void) -> Void) async throws {
    let _: Bool = try await awaitResult { k in start { e in k(e, true) } }
}
