import Testing

@testable import NFCTags

@Suite("Type 2 Tag reader procedure")
struct Type2ReaderTests {
    let uriMessage: [UInt8] = [0xD1, 0x01, 0x0B, 0x55, 0x04] + Array("example.com".utf8).prefix(10)

    @Test("Reads an NDEF TLV with a 1-byte length, after NULL padding")
    func oneByteLength() throws {
        let msg: [UInt8] = [0xD1, 0x01, 0x04, 0x54, 0x02, 0x65, 0x6E, 0x68]
        let core = try Type2Fixture.core(data: [0x00, 0x00, 0x03, UInt8(msg.count)] + msg + [0xFE])
        let reader = Type2TagReader(transport: Type2Fixture.transport(core))
        #expect(try reader.readNDEF() == msg)
        let layout = try reader.readLayout()
        #expect(layout.tlvs.map(\.kind) == [.null, .null, .ndef, .terminator])
        #expect(layout.ndef?.address == 18)
    }

    @Test("Reads an NDEF TLV with a 3-byte length (FF xx yy) across many READs")
    func threeByteLength() throws {
        let msg = (0..<300).map { UInt8(truncatingIfNeeded: $0) }
        let core = try Type2Fixture.core(data: [0x03, 0xFF, 0x01, 0x2C] + msg + [0xFE])
        let transport = EmulatedType2Transport(core: core, fastReadPageLimit: 0)  // a reader with READ only
        #expect(try Type2TagReader(transport: transport).readNDEF() == msg)
        // Only READ frames, each starting inside the data area (pages 4 ..< 4 + 496/4).
        let reads = transport.frames.filter { $0.first == 0x30 }.map { Int($0[1]) }
        #expect(reads.allSatisfy { $0 < 4 + 496 / 4 })
        #expect(reads.sorted() == [0] + Array(stride(from: 4, through: 80, by: 4)))
        #expect(Set(reads).count == reads.count)  // no page read twice
    }

    @Test("Skips the bytes a Lock Control TLV and a Memory Control TLV reserve inside the data area")
    func controlTLVsSkipAreas() throws {
        // Lock Control: page 8 (nibble 8, 2^2-byte pages) byte 0, 16 lock bits (2 bytes), 2^3 bytes a bit.
        // Memory Control: page 9 byte 0, 4 reserved bytes.
        let lock: [UInt8] = [0x01, 0x03, 0x80, 0x10, 0x32]  // bytes 32-33 (2 bytes, 16 bits)
        let memory: [UInt8] = [0x02, 0x03, 0x90, 0x04, 0x02]  // bytes 36-39
        let msg: [UInt8] = Array("ABCDEFGHIJKLMNOPQRST".utf8)  // 20 bytes
        var core = try Type2Fixture.core(data: lock + memory + [0x03, UInt8(msg.count)])
        // NDEF value starts at byte 28: 28..31 = A..D, skip 32-33, 34-35 = E F, skip 36-39, 40.. = G...
        var image = core.pages
        var addr = 28
        for b in msg {
            if (32..<34).contains(addr) { addr = 34 }
            if (36..<40).contains(addr) { addr = 40 }
            image[addr / 4][addr % 4] = b
            addr += 1
        }
        image[addr / 4][addr % 4] = 0xFE
        image[8][0] = 0x00  // the lock bytes (no bit set)
        image[8][1] = 0x00
        image[9] = [0xAA, 0xBB, 0xCC, 0xDD]  // reserved
        core = try NTAG21xCore(variant: .ntag215, pages: image)
        let reader = Type2TagReader(transport: Type2Fixture.transport(core))
        #expect(try reader.readNDEF() == msg)
        let layout = try reader.readLayout()
        #expect(layout.reservedAreas.map(\.range) == [32..<34, 36..<40])
        #expect(layout.dynamicLock?.source == .lockControlTLV)
        #expect(layout.dynamicLock?.bitCount == 16)
        #expect(layout.dynamicLock?.bytesLockedPerBit == 8)
        // 496-byte area, 6 reserved bytes, NDEF TLV at byte 26: 496 - 10 - 6 = 480 for T+L+V → 476.
        #expect(layout.maximumNDEFMessageSize == 476)
    }

    @Test("Skips a Proprietary TLV and reads the NDEF TLV after it")
    func proprietaryTLV() throws {
        let msg: [UInt8] = [0xD0, 0x00, 0x00]
        let core = try Type2Fixture.core(data: [0xFD, 0x03, 0x11, 0x22, 0x33, 0x03, 0x03] + msg + [0xFE])
        let reader = Type2TagReader(transport: Type2Fixture.transport(core))
        #expect(try reader.readNDEF() == msg)
        #expect(try reader.readLayout().tlvs.map(\.kind) == [.proprietary, .ndef, .terminator])
    }

    @Test("An NDEF length beyond the data area is a typed error")
    func lengthBeyondDataArea() throws {
        // NTAG213, CC 12 → 144-byte data area; NDEF claims 200 bytes.
        let core = try Type2Fixture.core(.ntag213, data: [0x03, 0xC8, 0xD1])
        let reader = Type2TagReader(transport: Type2Fixture.transport(core))
        #expect(expectType2Error(.lengthBeyondDataArea) { try _ = reader.readNDEF() }?.code == .lengthBeyondDataArea)
    }

    @Test("A length field cut by the end of the data area is tlvMalformed at the T byte")
    func truncatedLength() throws {
        // CC 02 → 16-byte data area; a Proprietary TLV whose 3-byte length starts at the last byte.
        let core = try Type2Fixture.core(
            .ntag213, cc: [0xE1, 0x10, 0x02, 0x00],
            data: [UInt8](repeating: 0, count: 14) + [0xFD, 0xFF, 0x00])
        let reader = Type2TagReader(transport: Type2Fixture.transport(core))
        #expect(
            expectType2Error(.tlvMalformed(offset: 30)) { try _ = reader.readLayout() }?.code
                == .tlvMalformed(offset: 30))
    }

    @Test("CC checks: magic, major version above 1, and an NTAG216's 872-byte area with a 868-byte maximum")
    func capabilityContainer() throws {
        #expect(throws: Type2TagError(.ccInvalid)) { try Type2CapabilityContainer(bytes: [0xE0, 0x10, 0x6D, 0x00]) }
        #expect(throws: Type2TagError(.unsupportedVersion(0x20))) {
            try Type2CapabilityContainer(bytes: [0xE1, 0x20, 0x6D, 0x00])
        }
        let cc = try Type2CapabilityContainer(bytes: [0xE1, 0x11, 0x6D, 0x0F])
        #expect(cc.dataAreaSize == 872 && !cc.isWritable && cc.minorVersion == 1)
        let core = try Type2Fixture.core(.ntag216, data: [0x03, 0x00, 0xFE])
        let layout = try Type2TagReader(transport: Type2Fixture.transport(core)).readLayout()
        #expect(layout.dataAreaSize == 872)
        #expect(layout.maximumNDEFMessageSize == 868)
        // An odd MLEN: 8 × 0x13 = 152 bytes, no rounding.
        #expect(try Type2CapabilityContainer(bytes: [0xE1, 0x10, 0x13, 0x00]).dataAreaSize == 152)
    }

    @Test(
        "Writes in the safe order: on an empty tag (length 0 already) the data pages, then the length; Terminator added"
    )
    func writeOrder() throws {
        let core = try Type2Fixture.core(data: [0x03, 0x00, 0xFE])
        let transport = Type2Fixture.transport(core)
        let msg = Array(uriMessage)
        try Type2TagReader(transport: transport).writeNDEF(msg)
        let writes = transport.frames.filter { $0.first == 0xA2 }
        let pages = writes.map { Int($0[1]) }
        let dataPages = Array(5...((16 + 2 + msg.count) / 4))
        #expect(pages == dataPages + [4], "the length reads 0 already: no zeroing write")
        #expect(writes.last.map { Array($0[2...]) } == [0x03, UInt8(msg.count), msg[0], msg[1]])
        let stored = Type2Fixture.bytes(transport.core, from: 16, count: msg.count + 3)
        #expect(stored == [0x03, UInt8(msg.count)] + msg + [0xFE])
        #expect(try Type2TagReader(transport: transport).readNDEF() == msg)
    }

    @Test(
        "Over an older message: length 0 first, only the pages that change, then the length; the same message writes nothing"
    )
    func changedPagesOnly() throws {
        let core = try Type2Fixture.core(data: [0x03, 0x00, 0xFE])
        let transport = Type2Fixture.transport(core)
        let old = Array(uriMessage)
        try Type2TagReader(transport: transport).writeNDEF(old)
        var new = old
        new[new.count - 1] ^= 0x01  // one byte of the record changes
        let before = transport.frames.count
        try Type2TagReader(transport: transport).writeNDEF(new)
        let writes = transport.frames[before...].filter { $0.first == 0xA2 }
        let changed = (16 + 2 + old.count - 1) / 4
        #expect(writes.map { Int($0[1]) } == [4, changed, 4], "zero the length, the one page, the length")
        #expect(writes.first.map { Array($0[2...]) } == [0x03, 0x00, new[0], new[1]])
        #expect(try Type2TagReader(transport: transport).readNDEF() == new)
        let again = transport.frames.count
        try Type2TagReader(transport: transport).writeNDEF(new)
        #expect(!transport.frames[again...].contains { $0.first == 0xA2 }, "the tag holds it already")
    }

    @Test(
        "A 255-byte message over another of 255 bytes differing in its last 7 bytes: 2 changed pages + 2 length writes")
    func message255() throws {
        let core = try Type2Fixture.core(data: [0x03, 0x00, 0xFE])
        let transport = Type2Fixture.transport(core)
        let old = (0..<255).map { UInt8(truncatingIfNeeded: $0 * 3) }
        try Type2TagReader(transport: transport).writeNDEF(old)
        let first = transport.frames.filter { $0.first == 0xA2 }.count
        #expect(first == 65, "03 FF 00 FF + 255 + FE = 260 bytes: 65 pages, the first one last (length 0 already)")
        var new = old
        for i in 248..<255 { new[i] ^= 0xFF }  // bytes 268-274 of the tag: pages 67 and 68
        let before = transport.frames.count
        try Type2TagReader(transport: transport).writeNDEF(new)
        let writes = transport.frames[before...].filter { $0.first == 0xA2 }
        #expect(writes.count == 4, "\(writes.map { $0[1] })")
        #expect(try Type2TagReader(transport: transport).readNDEF() == new)
    }

    @Test("A 3-byte length write reads back, and a message over the maximum is refused before writing")
    func longWrite() throws {
        let core = try Type2Fixture.core(.ntag216, data: [0x03, 0x00, 0xFE])
        let transport = Type2Fixture.transport(core)
        let msg = (0..<868).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try Type2TagReader(transport: transport).writeNDEF(msg)
        #expect(try Type2TagReader(transport: transport).readNDEF() == msg)
        #expect(Type2Fixture.bytes(transport.core, from: 16, count: 4) == [0x03, 0xFF, 0x03, 0x64])
        let before = transport.frames.count
        let e = expectType2Error(.messageTooLong(length: 869, maximum: 868)) {
            try Type2TagReader(transport: transport).writeNDEF(msg + [0])
        }
        #expect(e?.code == .messageTooLong(length: 869, maximum: 868))
        #expect(transport.frames[before...].allSatisfy { $0.first != 0xA2 })
    }

    @Test("A read-only CC refuses the write without touching the tag")
    func readOnlyCC() throws {
        let core = try Type2Fixture.core(cc: [0xE1, 0x10, 0x3E, 0x0F], data: [0x03, 0x00, 0xFE])
        let transport = Type2Fixture.transport(core)
        let e = expectType2Error(.readOnly) { try Type2TagReader(transport: transport).writeNDEF([0xD0, 0, 0]) }
        #expect(e?.code == .readOnly)
        #expect(transport.frames.allSatisfy { $0.first == 0x30 })
    }

    @Test("Static lock bits on page 5 and a dynamic lock bit refuse the write, naming the pages")
    func lockedPages() throws {
        let staticLocked = try Type2Fixture.core(data: [0x03, 0x00, 0xFE]) { $0[2][2] = 0x20 }  // L5
        let e = expectType2Error(.pagesLocked([5])) {
            try Type2TagReader(transport: Type2Fixture.transport(staticLocked)).writeNDEF(
                [UInt8](repeating: 0x41, count: 6))
        }
        #expect(e?.code == .pagesLocked([5]))
        // NTAG215 datasheet: dynamic lock byte 0 bit 0 locks pages 16-31 (page 130).
        let dynLocked = try Type2Fixture.core(data: [0x03, 0x00, 0xFE]) { $0[0x82][0] = 0x01 }
        var reader = Type2TagReader(transport: Type2Fixture.transport(dynLocked))
        _ = try reader.identify()
        let long = [UInt8](repeating: 0x42, count: 60)  // T L + 60 + FE = 63 bytes → pages 4..19
        let e2 = expectType2Error(.pagesLocked([16, 17, 18, 19])) { try reader.writeNDEF(long) }
        #expect(e2?.code == .pagesLocked([16, 17, 18, 19]))
        #expect(try reader.lockedPages().isSuperset(of: Set(16...31)))
    }

    @Test("A transport that fails mid-write reports exactly the pages written")
    func interruptedWrite() throws {
        let core = try Type2Fixture.core(data: [0x03, 0x00, 0xFE])
        let inner = Type2Fixture.transport(core)
        let failing = FailingWriteTransport(inner: inner, failOnWrite: 3)
        let msg = [UInt8](repeating: 0x55, count: 20)  // pages 4..9
        let e = expectType2Error(.writeInterrupted(writtenPages: [5, 6, 7], cause: .tagLost)) {
            try Type2TagReader(transport: failing).writeNDEF(msg)
        }
        #expect(e?.code == .writeInterrupted(writtenPages: [5, 6, 7], cause: .tagLost))
        // The length still says 0: a reader sees an empty message, not a torn one.
        #expect(try Type2TagReader(transport: inner).readNDEF() == [])
    }

    @Test("A scheduled no-answer fault surfaces as a communication error")
    func faultDuringRead() throws {
        let core = try Type2Fixture.core(data: [0x03, 0x00, 0xFE])
        let reader = Type2TagReader(
            transport: Type2Fixture.transport(core, faults: [TagFault(afterCommands: 1, kind: .noAnswer)]))
        #expect(
            expectType2Error(.communication(.noResponse)) { try _ = reader.readNDEF() }?.code
                == .communication(.noResponse))
    }

    @Test("setReadOnly writes the CC access byte and, when asked, the lock bits; later writes are refused")
    func setReadOnly() throws {
        let core = try Type2Fixture.core(.ntag213, data: [0x03, 0x00, 0xFE])
        let transport = Type2Fixture.transport(core)
        var reader = Type2TagReader(transport: transport)
        _ = try reader.identify()
        try reader.setReadOnly(lockBits: true)
        let pages = transport.core.pages
        #expect(pages[3] == [0xE1, 0x10, 0x12, 0x0F])
        #expect(pages[2][2...] == [0xFF, 0xFF])
        #expect(pages[0x28][0...1] == [0xFF, 0x0F])
        #expect(expectType2Error(.readOnly) { try reader.writeNDEF([]) }?.code == .readOnly)
    }

    @Test("identify() reads GET_VERSION, and re-activates a plain Ultralight that NAKs it")
    func identify() throws {
        var ntag = Type2TagReader(transport: Type2Fixture.transport(try Type2Fixture.core(.ntag216, data: [])))
        #expect(try ntag.identify()?.product == .ntag216)
        let ul = Type2Fixture.transport(try Type2Fixture.core(.ultralight, data: [0x03, 0x00, 0xFE]))
        var reader = Type2TagReader(transport: ul)
        #expect(try reader.identify() == nil)
        #expect(try reader.readNDEF() == [])
    }
}
