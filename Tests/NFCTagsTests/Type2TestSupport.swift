import Testing

@testable import NFCTags

/// Test tags built by hand: a factory NTAG with `data` written from page 4 on.
enum Type2Fixture {
    static let uid: [UInt8] = [0x04, 0xA2, 0x3B, 0x91, 0x5C, 0x6E, 0x80]

    static func core(
        _ variant: NTAG21xCore.Variant = .ntag215, cc: [UInt8]? = nil, data: [UInt8],
        edit: (inout [[UInt8]]) -> Void = { _ in }
    ) throws -> NTAG21xCore {
        var pages = try NTAG21xCore.factoryPages(variant: variant, uid: uid)
        if let cc { pages[3] = cc }
        let userEnd = variant.layout.lastUserPage
        for p in 4...userEnd { pages[p] = [0, 0, 0, 0] }
        for (i, b) in data.enumerated() { pages[4 + i / 4][i % 4] = b }
        edit(&pages)
        return try NTAG21xCore(variant: variant, pages: pages)
    }

    static func transport(_ core: NTAG21xCore, faults: [TagFault] = []) -> EmulatedType2Transport {
        EmulatedType2Transport(core: core, faults: faults)
    }

    static func bytes(_ core: NTAG21xCore, from address: Int, count: Int) -> [UInt8] {
        Array(core.pages.flatMap { $0 }[address..<(address + count)])
    }
}

/// A transport that forwards to another and fails WRITE number `failOnWrite` (0-based).
final class FailingWriteTransport: Type2TagTransport {
    let inner: EmulatedType2Transport
    let failOnWrite: Int
    private(set) var writes = 0

    init(inner: EmulatedType2Transport, failOnWrite: Int) {
        self.inner = inner
        self.failOnWrite = failOnWrite
    }

    func read(page: UInt8) throws -> [UInt8] { try inner.read(page: page) }
    func write(page: UInt8, data: [UInt8]) throws {
        defer { writes += 1 }
        if writes == failOnWrite { throw TagCommunicationError.tagLost }
        try inner.write(page: page, data: data)
    }
    func getVersion() throws -> [UInt8]? { try inner.getVersion() }
    func reactivate() throws { try inner.reactivate() }
}

/// Runs `body`, returns the Type2TagError it threw (or nil); records an issue when the code differs.
func expectType2Error(
    _ expected: Type2TagError.Code, _ body: () throws -> Void,
    sourceLocation: SourceLocation = #_sourceLocation
) -> Type2TagError? {
    do {
        try body()
        Issue.record("expected \(expected), nothing thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as Type2TagError {
        if error.code != expected { Issue.record("expected \(expected), got \(error)", sourceLocation: sourceLocation) }
        return error
    } catch {
        Issue.record("expected \(expected), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
