import Testing

@testable import NFCTags

/// FAST_READ in the Type 2 read procedure: same pages as the READs it replaces, GET_VERSION
/// only when it pays, READ again after a NAK.
@Suite("Type 2 reads with FAST_READ")
struct Type2FastReadTests {
    static let longMessage = (0..<300).map { UInt8(truncatingIfNeeded: $0) }

    static func longTag(_ variant: NTAG21xCore.Variant = .ntag215) throws -> NTAG21xCore {
        try Type2Fixture.core(variant, data: [0x03, 0xFF, 0x01, 0x2C] + longMessage + [0xFE])
    }

    /// The pages each command read, in order: READ `30 p` → p…p+3, FAST_READ `3A a b` → a…b.
    static func pagesRead(_ frames: [[UInt8]]) -> [ClosedRange<Int>] {
        frames.compactMap { f in
            switch f.first {
            case 0x30: Int(f[1])...(Int(f[1]) + 3)
            case 0x3A: Int(f[1])...Int(f[2])
            default: nil
            }
        }
    }

    @Test(
        "A long message: the CC and TLV READs, one GET_VERSION, then FAST_READs over exactly the READ windows, no wider than the reader's limit"
    )
    func longMessage() throws {
        let readOnly = EmulatedType2Transport(core: try Self.longTag(), fastReadPageLimit: 0)
        let fast = EmulatedType2Transport(core: try Self.longTag(), fastReadPageLimit: 40)
        #expect(try Type2TagReader(transport: readOnly).readNDEF() == Self.longMessage)
        #expect(try Type2TagReader(transport: fast).readNDEF() == Self.longMessage)
        let probe = try #require(fast.frames.firstIndex(of: [0x60]))
        #expect(fast.frames[..<probe].allSatisfy { $0.first == 0x30 })
        #expect(fast.frames.prefix(2) == [[0x30, 0x00], [0x30, 0x04]])
        #expect(fast.frames[(probe + 1)...].allSatisfy { $0.first == 0x3A && Int($0[2]) - Int($0[1]) + 1 <= 40 })
        // The tag saw the same pages read, in the same order.
        let covered = { (ranges: [ClosedRange<Int>]) in ranges.flatMap { Array($0) } }
        #expect(covered(Self.pagesRead(fast.frames)) == covered(Self.pagesRead(readOnly.frames)))
        #expect(fast.frames.count < readOnly.frames.count)
    }

    @Test("A short message never costs a GET_VERSION: two or three READs are as quick")
    func shortMessage() throws {
        let msg: [UInt8] = [0xD1, 0x01, 0x04, 0x54, 0x02, 0x65, 0x6E, 0x68]
        let core = try Type2Fixture.core(data: [0x03, UInt8(msg.count)] + msg + [0xFE])
        let t = Type2Fixture.transport(core)
        #expect(try Type2TagReader(transport: t).readNDEF() == msg)
        #expect(t.frames.allSatisfy { $0.first == 0x30 })
    }

    @Test("A plain Ultralight's whole data area is three READs: no GET_VERSION it would not answer")
    func plainUltralight() throws {
        let core = try Type2Fixture.core(.ultralight, data: [0x03, 0x2C] + Array(repeating: 0x41, count: 44) + [0xFE])
        let t = Type2Fixture.transport(core)
        _ = try Type2TagReader(transport: t).readDataArea()
        #expect(!t.frames.contains([0x60]))
        #expect(t.frames.allSatisfy { $0.first == 0x30 })
    }

    @Test("A known version (a dump's GET_VERSION) is not asked again; the whole memory in ranges")
    func dumpRanges() throws {
        let t = EmulatedType2Transport(core: try Self.longTag(), fastReadPageLimit: 65)
        var reader = Type2TagReader(transport: t)
        #expect(try reader.identify()?.product == .ntag215)
        let pages = try reader.readPages(0..<135)
        #expect(pages.count == 135)
        #expect(Array(pages[0..<130]) == Array(t.core.pages[0..<130]))
        #expect(pages[133] == [0, 0, 0, 0])  // PWD reads as 00
        #expect(t.frames == [[0x60], [0x3A, 0, 64], [0x3A, 65, 129], [0x3A, 130, 134]])
    }

    @Test("A fault on a page hits the FAST_READ that covers it, as it hits the READ: the same failed read")
    func faultOnPage() throws {
        let fault = TagFault(.pageRead(40), kind: .tagLost)
        let readOnly = EmulatedType2Transport(core: try Self.longTag(), faults: [fault], fastReadPageLimit: 0)
        let fast = EmulatedType2Transport(core: try Self.longTag(), faults: [fault], fastReadPageLimit: 40)
        let a = expectType2Error(.communication(.tagLost)) { _ = try Type2TagReader(transport: readOnly).readNDEF() }
        let b = expectType2Error(.communication(.tagLost)) { _ = try Type2TagReader(transport: fast).readNDEF() }
        #expect(a != nil && b != nil)
    }

    @Test("after_cc_read waits past the GET_VERSION: the FAST_READ after it fails, as READ 4 does without one")
    func afterCCRead() throws {
        let fault = TagFault(.afterCCRead, kind: .noAnswer)
        let fast = EmulatedType2Transport(core: try Self.longTag(), faults: [fault], fastReadPageLimit: 40)
        var reader = Type2TagReader(transport: fast)
        _ = try reader.identify()
        _ = try reader.readCapabilityContainer()
        _ = expectType2Error(.communication(.noResponse)) { _ = try reader.readPages(4..<135) }
        #expect(fast.frames.last?.first == 0x3A)
    }

    @Test("A NAKed FAST_READ wakes the tag and the procedure READs on")
    func nakFallsBackToRead() throws {
        // AUTH0 = 0x20 with PROT: pages from 20h are read-protected, so FAST_READ over them NAKs
        // while READ rolls over to page 0 at the barrier (data sheet §8.8.2).
        var core = try Self.longTag()
        let cfg = NTAG21xCore.Variant.ntag215.layout.configurationPage!
        var pages = core.pages
        pages[cfg][3] = 0x20
        pages[cfg + 1][0] |= 0x80
        core = try NTAG21xCore(variant: .ntag215, pages: pages)
        let t = EmulatedType2Transport(core: core, fastReadPageLimit: 63)
        // Four READ windows, the last (1Eh) rolling over at the barrier; FAST_READ 12h-21h enters it.
        let data = try Type2TagReader(transport: t).readPages(0x12..<0x20)
        #expect(data == Array(core.pages[0x12..<0x20]))
        #expect(t.frames == [[0x60], [0x3A, 0x12, 0x21], [0x30, 0x12], [0x30, 0x16], [0x30, 0x1A], [0x30, 0x1E]])
    }
}
