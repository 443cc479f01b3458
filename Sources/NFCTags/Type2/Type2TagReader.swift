// The NFC Forum Type 2 Tag reader procedures (T2T 1.0 §6: NDEF detection, read, write,
// transition to read-only) over a Type2TagTransport.

/// Reads and writes NDEF on a Type 2 tag through a ``/NFCBase/Type2TagTransport``.
///
/// Each call starts from fresh READs (nothing is cached between calls). Reads come in
/// 16-byte READs (`30h`) that start inside the data area the CC declares; bytes past it
/// are never interpreted as NDEF. Writes use WRITE (`A2h`), never touch the CC or lock
/// bytes, and only ``setReadOnly(lockBits:)`` changes those.
///
/// FAST_READ: when a procedure knows it will need more than three READs in a row (an NDEF
/// message's value, the data area, a dump), and the tag's GET_VERSION names a product with
/// FAST_READ (``version``, or one GET_VERSION sent then), it reads the same pages with
/// FAST_READ (`3Ah`) in ranges of at most the reader's ``/NFCBase/Type2TagTransport/fastReadPageLimit``
/// pages: each range covers exactly the 4-page windows the READs would have covered, so the
/// tag sees the same pages read (a scheduled fault hits the same read). The CC is read with
/// READ 0 first, before any GET_VERSION. A NAK to FAST_READ re-activates the tag and the
/// procedure goes on with READ.
public struct Type2TagReader {
    /// The carrier of the commands.
    public let transport: any Type2TagTransport
    /// The product, when known (``identify()``); it supplies the datasheet dynamic-lock
    /// location when the tag has no Lock Control TLV.
    public var version: TagVersion?
    /// ``identify()`` ran: the procedures never send GET_VERSION again (``version`` `nil`
    /// then means the tag has none).
    public private(set) var identified = false

    public init(transport: any Type2TagTransport, version: TagVersion? = nil) {
        self.transport = transport
        self.version = version
    }

    /// Sends GET_VERSION (`60h`) and decodes it. A tag that NAKs or stays silent (a plain
    /// Ultralight) is re-activated (``/NFCBase/Type2TagTransport/reactivate()``) and `nil` returned;
    /// so is a reader that cannot send it. Other transport failures throw `.communication`.
    public mutating func identify() throws(Type2TagError) -> TagVersion? {
        identified = true
        do {
            guard let answer = try transport.getVersion() else { return nil }
            let v = try? TagVersion(bytes: answer)
            version = v
            return v
        } catch let e as TagCommunicationError {
            switch e {
            case .nak, .noResponse:
                do { try transport.reactivate() } catch { throw Self.map(error) }
                return nil
            default: throw Type2TagError(.communication(e))
            }
        } catch {
            throw Self.map(error)
        }
    }

    /// Reads page 3 and checks it (``Type2CapabilityContainer/init(bytes:)``).
    public func readCapabilityContainer() throws(Type2TagError) -> Type2CapabilityContainer {
        let memory = PageReader(transport: transport, limit: 4)
        return try Type2CapabilityContainer(bytes: memory.bytes(12..<16))
    }

    /// NDEF detection: the CC, then the TLV walk over the data area from page 4 (T2T 1.0 §6.4.1).
    ///
    /// NULL TLVs are skipped; Lock and Memory Control TLVs (3-byte values) declare areas
    /// that later TLVs and NDEF bytes step over; NDEF, Proprietary and RFU TLVs are skipped
    /// by their length (`xx` or `FF xx yy`); a Terminator ends the walk. A Lock or Memory
    /// Control TLV whose length is not 3 declares nothing: it is skipped by its length too,
    /// with a ``Type2TLVWarning`` in ``Type2TagLayout/warnings`` (T2T 1.0 §2.3.1/§2.3.2 fix
    /// L = 3 but say nothing of another L; nfcpy's `tt2.py` skips such a TLV the same way).
    /// Throws `.ccInvalid`, `.unsupportedVersion`, `.tlvMalformed(offset:)` (a length field
    /// cut by the end of the data area, or a non-NDEF value past the end),
    /// `.lengthBeyondDataArea` (an NDEF value past the end), `.communication`.
    public func readLayout() throws(Type2TagError) -> Type2TagLayout {
        try walk(PageReader(transport: transport, limit: 4)).layout
    }

    /// The NDEF message bytes of the first NDEF TLV (empty for `03 00`), reserved areas
    /// skipped. Throws what ``readLayout()`` throws, and `.noNDEF`.
    public func readNDEF() throws(Type2TagError) -> [UInt8] {
        let (layout, memory) = try walk(
            PageReader(transport: transport, limit: 4, version: version, identified: identified))
        guard let ndef = layout.ndef, let start = ndef.valueAddress else {
            if layout.ndef != nil { return [] }
            throw Type2TagError(.noNDEF)
        }
        let addresses = Self.addresses(
            from: start, count: ndef.length, areas: layout.reservedAreas,
            end: layout.dataArea.upperBound)
        try memory.prefetch(addresses)
        var out: [UInt8] = []
        out.reserveCapacity(addresses.count)
        for a in addresses { out.append(try memory.byte(a)) }
        return out
    }

    /// The raw data area (bytes 16 ..< 16 + 8 × MLEN) as the tag holds it, reserved bytes included.
    public func readDataArea() throws(Type2TagError) -> [UInt8] {
        let memory = PageReader(transport: transport, limit: 4, version: version, identified: identified)
        let cc = try Type2CapabilityContainer(bytes: memory.bytes(12..<16))
        memory.limit = (16 + cc.dataAreaSize + 3) / 4
        try memory.prefetch(Array(16..<(16 + cc.dataAreaSize)))
        return try memory.bytes(16..<(16 + cc.dataAreaSize))
    }

    /// Pages `pages` as the tag answers them (a dump): READs of 4 pages, or FAST_READ ranges
    /// when ``version`` names a product with FAST_READ. Throws `.communication`.
    public func readPages(_ pages: Range<Int>) throws(Type2TagError) -> [[UInt8]] {
        let memory = PageReader(transport: transport, limit: pages.upperBound, version: version, identified: identified)
        try memory.prefetch(Array((pages.lowerBound * 4)..<(pages.upperBound * 4)))
        var out: [[UInt8]] = []
        out.reserveCapacity(pages.count)
        for p in pages { out.append(try memory.bytes((p * 4)..<(p * 4 + 4))) }
        return out
    }

    /// Pages (≥ 3) that static or dynamic lock bits lock, from the lock bytes as read now.
    public func lockedPages() throws(Type2TagError) -> Set<Int> {
        let (layout, memory) = try walk(PageReader(transport: transport, limit: 4))
        return try lockedPages(layout, memory)
    }

    /// Writes `message` as the NDEF TLV's value in the NFC Forum order (T2T 1.0 §6.4.3), sending
    /// only the pages whose bytes change: first the page(s) of the NDEF TLV's length with the
    /// length 0 (skipped when the tag's length is 0 already), then the other changed pages (the
    /// message, and a Terminator `FE` when a byte is left), finally the length page(s) with the
    /// real length. A message the tag already holds sends no WRITE. So a torn write leaves an
    /// empty message, never a wrong one, and a 255-byte message over an older one costs its
    /// changed pages plus two length writes.
    ///
    /// The NDEF TLV goes where the current one starts (or after the Lock/Memory Control and
    /// Proprietary TLVs); bytes after it in the data area may be overwritten. Bytes of a
    /// touched page outside the TLV are rewritten with what was read. Throws `.readOnly`
    /// (CC write access ≠ 0), `.messageTooLong`, `.pagesLocked` (before writing anything),
    /// `.writeInterrupted(writtenPages:cause:)` and what ``readLayout()`` throws.
    public func writeNDEF(_ message: [UInt8]) throws(Type2TagError) {
        let memory = PageReader(transport: transport, limit: 4)
        let (layout, _) = try walk(memory)
        guard layout.capabilityContainer.isWritable else {
            throw Type2TagError(.readOnly, "CC write access \(layout.capabilityContainer.writeAccess)h")
        }
        guard message.count <= layout.maximumNDEFMessageSize, let start = layout.ndefTLVAddress else {
            throw Type2TagError(.messageTooLong(length: message.count, maximum: layout.maximumNDEFMessageSize))
        }
        let end = layout.dataArea.upperBound
        let lengthField: [UInt8] =
            message.count < 0xFF
            ? [UInt8(message.count)] : [0xFF, UInt8(message.count >> 8), UInt8(message.count & 0xFF)]
        var stream: [UInt8] = [0x03] + lengthField + message
        let room = Self.addresses(from: start, count: Int.max, areas: layout.reservedAreas, end: end).count
        if room > stream.count { stream.append(0xFE) }
        let addresses = Self.addresses(from: start, count: stream.count, areas: layout.reservedAreas, end: end)
        guard addresses.count == stream.count else {
            throw Type2TagError(.messageTooLong(length: message.count, maximum: layout.maximumNDEFMessageSize))
        }
        let pages = Array(Set(addresses.map { $0 / 4 })).sorted()
        let locked = try lockedPages(layout, memory)
        let blocked = pages.filter { locked.contains($0) }
        guard blocked.isEmpty else { throw Type2TagError(.pagesLocked(blocked.map { UInt8(truncatingIfNeeded: $0) })) }

        // Current contents of every touched page, then the two images.
        memory.limit = max(memory.limit, (end + 3) / 4)
        var current: [Int: [UInt8]] = [:]
        for p in pages { current[p] = try memory.bytes((p * 4)..<(p * 4 + 4)) }
        var final = current
        for (a, b) in zip(addresses, stream) { final[a / 4]?[a % 4] = b }
        var first = final
        let lengthAddresses = addresses[1...lengthField.count]
        for a in lengthAddresses where lengthField.count == 1 || a != addresses[1] { first[a / 4]?[a % 4] = 0 }
        let lengthPages = Array(Set(lengthAddresses.map { $0 / 4 })).sorted()
        let changedData = pages.filter { !lengthPages.contains($0) && final[$0] != current[$0] }
        // The tag's NDEF TLV at this address reads length 0 already (`03 00`, or `03 FF 00 00`):
        // the data pages can be written before the length without a zeroing write.
        func byte(_ i: Int) -> UInt8? { i < addresses.count ? current[addresses[i] / 4]?[addresses[i] % 4] : nil }
        let lengthIsZero = byte(0) == 0x03 && (byte(1) == 0x00 || (byte(1) == 0xFF && byte(2) == 0 && byte(3) == 0))

        var written: [UInt8] = []
        func put(_ page: Int, _ data: [UInt8]) throws(Type2TagError) {
            do {
                try transport.write(page: UInt8(page), data: data)
                written.append(UInt8(page))
            } catch {
                let cause = (error as? TagCommunicationError) ?? .readerFailure(String(describing: error))
                throw Type2TagError(
                    .writeInterrupted(writtenPages: written, cause: cause),
                    "page \(page) failed")
            }
        }
        var onTag = current
        if !changedData.isEmpty && !lengthIsZero {
            for p in lengthPages where first[p] != onTag[p] {
                try put(p, first[p] ?? [])
                onTag[p] = first[p]
            }
        }
        for p in changedData { try put(p, final[p] ?? []) }
        for p in lengthPages where final[p] != onTag[p] { try put(p, final[p] ?? []) }
    }

    /// Makes the tag read-only (T2T 1.0 §6.4.4): writes CC byte 3 with write access `Fh`;
    /// with `lockBits`, also sets the static lock bits (page 2 bytes 2–3 = `FF FF`) and
    /// every dynamic lock bit in force. Permanent on a real tag (OTP). Throws
    /// `.readOnly` when already read-only, `.writeInterrupted`, and what ``readLayout()`` throws.
    public func setReadOnly(lockBits: Bool = false) throws(Type2TagError) {
        let memory = PageReader(transport: transport, limit: 4)
        let (layout, _) = try walk(memory)
        let cc = layout.capabilityContainer
        guard cc.isWritable else { throw Type2TagError(.readOnly, "already read-only") }
        var writes: [(Int, [UInt8])] = [(3, [cc.bytes[0], cc.bytes[1], cc.bytes[2], (cc.bytes[3] & 0xF0) | 0x0F])]
        if lockBits {
            writes.append((2, [0, 0, 0xFF, 0xFF]))
            if let lock = layout.dynamicLock {
                var bits = [UInt8](repeating: 0, count: (lock.bitCount + 7) / 8)
                for k in 0..<lock.bitCount { bits[k / 8] |= 1 << UInt8(k % 8) }
                memory.limit = max(memory.limit, (lock.address + bits.count + 3) / 4 + 1)
                var pageImages: [Int: [UInt8]] = [:]
                for (i, b) in bits.enumerated() {
                    let a = lock.address + i
                    if pageImages[a / 4] == nil { pageImages[a / 4] = try memory.bytes((a / 4 * 4)..<(a / 4 * 4 + 4)) }
                    pageImages[a / 4]?[a % 4] |= b
                }
                for p in pageImages.keys.sorted() { writes.append((p, pageImages[p] ?? [])) }
            }
        }
        var written: [UInt8] = []
        for (page, data) in writes {
            do {
                try transport.write(page: UInt8(page), data: data)
                written.append(UInt8(page))
            } catch {
                let cause = (error as? TagCommunicationError) ?? .readerFailure(String(describing: error))
                throw Type2TagError(.writeInterrupted(writtenPages: written, cause: cause))
            }
        }
    }

    // MARK: - Walk

    private func walk(_ memory: PageReader) throws(Type2TagError) -> (layout: Type2TagLayout, memory: PageReader) {
        let header = try memory.bytes(0..<16)
        let cc = try Type2CapabilityContainer(bytes: Array(header[12..<16]))
        let end = 16 + cc.dataAreaSize
        memory.limit = (end + 3) / 4
        var areas: [Type2ReservedArea] = []
        var tlvs: [Type2TLV] = []
        var warnings: [Type2TLVWarning] = []
        var cursor = 16

        func skip(_ a: Int) -> Int {
            var a = a
            var moved = true
            while moved {
                moved = false
                for r in areas where r.range.contains(a) {
                    a = r.range.upperBound
                    moved = true
                }
            }
            return a
        }
        func next() throws(Type2TagError) -> (address: Int, byte: UInt8)? {
            cursor = skip(cursor)
            guard cursor < end else { return nil }
            let a = cursor
            cursor += 1
            return (a, try memory.byte(a))
        }

        walking: while let (start, t) = try next() {
            let kind = Type2TLV.Kind(t)
            switch kind {
            case .null:
                tlvs.append(Type2TLV(kind: .null, address: start, length: 0, valueAddress: nil, area: nil))
                continue
            case .terminator:
                tlvs.append(Type2TLV(kind: .terminator, address: start, length: 0, valueAddress: nil, area: nil))
                break walking
            default: break
            }
            guard let (_, l0) = try next() else {
                throw Type2TagError(.tlvMalformed(offset: start), "length field cut by the end of the data area")
            }
            var length = Int(l0)
            if l0 == 0xFF {
                guard let (_, hi) = try next(), let (_, lo) = try next() else {
                    throw Type2TagError(.tlvMalformed(offset: start), "3-byte length cut by the end of the data area")
                }
                length = Int(hi) << 8 | Int(lo)
            }
            let valueStart = skip(cursor)
            let span = Self.addresses(from: valueStart, count: length, areas: areas, end: end)
            guard span.count == length else {
                if kind == .ndef {
                    throw Type2TagError(
                        .lengthBeyondDataArea,
                        "NDEF TLV at byte \(start) declares \(length) bytes, \(span.count) remain")
                }
                throw Type2TagError(.tlvMalformed(offset: start), "value of \(length) bytes runs past the data area")
            }
            var area: Type2ReservedArea? = nil
            if kind == .lockControl || kind == .memoryControl, length != 3 {
                let name = kind == .lockControl ? "Lock Control" : "Memory Control"
                warnings.append(
                    Type2TLVWarning(
                        kind: .controlTLVLength, address: start,
                        message:
                            "\(name) TLV at page \(start / 4) byte \(start % 4) has length \(length), not 3: "
                            + "skipped by its length, no area reserved"))
            } else if kind == .lockControl || kind == .memoryControl {
                var value: [UInt8] = []
                for a in span { value.append(try memory.byte(a)) }
                area = Type2ReservedArea.decode(controlValue: value, lock: kind == .lockControl)
                if let area { areas.append(area) }
            }
            tlvs.append(
                Type2TLV(
                    kind: kind, address: start, length: length,
                    valueAddress: length > 0 ? valueStart : nil, area: area))
            cursor = (span.last.map { $0 + 1 }) ?? valueStart
        }

        // Where an NDEF TLV is or would go: the first NDEF TLV, else the first NULL or
        // Terminator after the last other TLV, else the end of the walk.
        var ndefAddress: Int? = tlvs.first { $0.kind == .ndef }?.address
        if ndefAddress == nil {
            let lastOther = tlvs.lastIndex { ![.null, .terminator].contains($0.kind) }
            let after = tlvs[(lastOther.map { $0 + 1 } ?? 0)...]
            ndefAddress = after.first?.address ?? (skip(cursor) < end ? skip(cursor) : nil)
        }
        let available = ndefAddress.map { Self.addresses(from: $0, count: Int.max, areas: areas, end: end).count } ?? 0

        let lock: Type2DynamicLock?
        if let a = areas.first(where: { if case .dynamicLockBits = $0.kind { true } else { false } }),
            case .dynamicLockBits(let bits, let per) = a.kind
        {
            lock = Type2DynamicLock(source: .lockControlTLV, address: a.address, bitCount: bits, bytesLockedPerBit: per)
        } else if let layout = version?.product?.layout {
            lock = layout.dynamicLockPage.map {
                Type2DynamicLock(
                    source: .datasheet, address: $0 * 4, bitCount: layout.dynamicLockBitCount,
                    bytesLockedPerBit: layout.pagesPerDynamicLockBit * 4)
            }
        } else if cc.dataAreaSize > 48 {
            lock = Type2DynamicLock(
                source: .nfcForumDefault, address: end,
                bitCount: (cc.dataAreaSize - 48 + 7) / 8, bytesLockedPerBit: 8)
        } else {
            lock = nil
        }
        let layout = Type2TagLayout(
            capabilityContainer: cc, staticLockBytes: Array(header[10..<12]), tlvs: tlvs, reservedAreas: areas,
            dynamicLock: lock, ndefTLVAddress: ndefAddress,
            maximumNDEFMessageSize: Type2TagLayout.maximumMessage(available: available), warnings: warnings)
        return (layout, memory)
    }

    private func lockedPages(_ layout: Type2TagLayout, _ memory: PageReader) throws(Type2TagError) -> Set<Int> {
        var locked = Set<Int>()
        let s0 = layout.staticLockBytes[0]
        let s1 = layout.staticLockBytes[1]
        if s0 & 0x08 != 0 { locked.insert(3) }
        for bit in 4..<8 where s0 & (1 << UInt8(bit)) != 0 { locked.insert(bit) }
        for bit in 0..<8 where s1 & (1 << UInt8(bit)) != 0 { locked.insert(8 + bit) }
        if let lock = layout.dynamicLock, lock.bitCount > 0 {
            let count = (lock.bitCount + 7) / 8
            memory.limit = max(memory.limit, (lock.address + count + 3) / 4)
            let bytes = try memory.bytes(lock.address..<(lock.address + count))
            for k in 0..<lock.bitCount where bytes[k / 8] & (1 << UInt8(k % 8)) != 0 {
                let first = 64 + k * lock.bytesLockedPerBit
                for p in (first / 4)..<((first + lock.bytesLockedPerBit + 3) / 4) { locked.insert(p) }
            }
        }
        return locked
    }

    /// Up to `count` byte addresses from `start` (inclusive) below `end`, stepping over `areas`.
    static func addresses(from start: Int, count: Int, areas: [Type2ReservedArea], end: Int) -> [Int] {
        var out: [Int] = []
        var a = start
        while out.count < count && a < end {
            if let r = areas.first(where: { $0.range.contains(a) }) {
                a = r.range.upperBound
                continue
            }
            out.append(a)
            a += 1
        }
        return out
    }

    static func map(_ error: any Error) -> Type2TagError {
        if let e = error as? TagCommunicationError { return Type2TagError(.communication(e)) }
        if let e = error as? Type2TagError { return e }
        return Type2TagError(.communication(.readerFailure(String(describing: error))))
    }
}

/// Page reads for one procedure: 16-byte READs, each starting below `limit` (a page count),
/// or FAST_READ ranges covering the same windows (``prefetch(_:)``).
final class PageReader {
    let transport: any Type2TagTransport
    var limit: Int
    private var pages: [Int: [UInt8]] = [:]
    /// The tag's GET_VERSION, when known: FAST_READ needs a product that has it.
    private var version: TagVersion?
    /// GET_VERSION was sent (or the version was given): never ask twice.
    private var identified: Bool
    /// The tag NAKed a FAST_READ: READ from then on.
    private var fastReadRefused = false

    /// READs needed in a row before FAST_READ (and a GET_VERSION to allow it) pays: with three
    /// or fewer, the GET_VERSION would cost about what it saves. A plain Ultralight's whole
    /// data area is three READs, so it never gets a GET_VERSION it would not answer.
    static let fastReadThreshold = 4

    init(transport: any Type2TagTransport, limit: Int, version: TagVersion? = nil, identified: Bool = false) {
        self.transport = transport
        self.limit = limit
        self.version = version
        self.identified = identified || version != nil
    }

    /// Reads ahead what the procedure is about to read byte by byte (`addresses`, in its
    /// order): the 4-page READ windows those reads would start (same rule as ``byte(_:)``), as
    /// FAST_READ ranges when the tag and the reader allow it. Nothing when they do not, or
    /// when the windows are too few to gain: ``byte(_:)`` then READs as always.
    func prefetch(_ addresses: [Int]) throws(Type2TagError) {
        var seen = Set(pages.keys)
        var windows: [Int] = []
        for a in addresses {
            let page = a / 4
            if seen.contains(page) { continue }
            guard page < limit, page <= 0xFF else { break }
            windows.append(page)
            for i in 0..<4 where page + i < limit || i == 0 { seen.insert(page + i) }
        }
        guard windows.count >= Self.fastReadThreshold, !fastReadRefused, transport.fastReadPageLimit >= 4 else {
            return
        }
        if !identified {
            identified = true
            version = try probeVersion()
        }
        guard let total = version?.product?.layout?.totalPages, transport.fastReadPageLimit >= 4 else { return }
        // Contiguous windows form one range; a range is cut into FAST_READs of at most the
        // reader's limit. A window past the tag's last page (a READ there rolls over) ends at it.
        var ranges: [ClosedRange<Int>] = []
        for w in windows {
            let last = min(w + 3, total - 1)
            guard w <= last else { break }
            if let r = ranges.last, r.upperBound + 1 == w {
                ranges[ranges.count - 1] = r.lowerBound...last
            } else {
                ranges.append(w...last)
            }
        }
        let most = transport.fastReadPageLimit
        for r in ranges {
            var first = r.lowerBound
            while first <= r.upperBound {
                let last = min(first + most - 1, r.upperBound)
                let data: [UInt8]
                do {
                    data = try transport.fastRead(from: UInt8(first), to: UInt8(last))
                } catch TagCommunicationError.nak(_) {
                    // A tag that refuses FAST_READ (a protected range) is IDLE: wake it, READ on.
                    fastReadRefused = true
                    do { try transport.reactivate() } catch { throw Type2TagReader.map(error) }
                    return
                } catch {
                    throw Type2TagReader.map(error)
                }
                guard data.count == 4 * (last - first + 1) else {
                    throw Type2TagError(
                        .communication(
                            .malformedResponse(
                                "FAST_READ answered \(data.count) bytes, expected \(4 * (last - first + 1))")))
                }
                for p in first...last where p < limit || windows.contains(p) {
                    pages[p] = Array(data[((p - first) * 4)..<((p - first) * 4 + 4)])
                }
                first = last + 1
            }
        }
    }

    /// GET_VERSION once, as ``Type2TagReader/identify()`` does it: a tag that NAKs it or stays
    /// silent (a plain Ultralight, an Ultralight C) is re-activated and `nil` returned.
    private func probeVersion() throws(Type2TagError) -> TagVersion? {
        do {
            guard let answer = try transport.getVersion() else { return nil }
            return try? TagVersion(bytes: answer)
        } catch let e as TagCommunicationError {
            switch e {
            case .nak, .noResponse:
                do { try transport.reactivate() } catch { throw Type2TagReader.map(error) }
                return nil
            default: throw Type2TagError(.communication(e))
            }
        } catch {
            throw Type2TagReader.map(error)
        }
    }

    func byte(_ address: Int) throws(Type2TagError) -> UInt8 {
        let page = address / 4
        if let p = pages[page] { return p[address % 4] }
        guard page < limit, page <= 0xFF else {
            throw Type2TagError(.communication(.malformedResponse("read of page \(page) outside the area in use")))
        }
        let data: [UInt8]
        do { data = try transport.read(page: UInt8(page)) } catch { throw Type2TagReader.map(error) }
        guard data.count == 16 else {
            throw Type2TagError(.communication(.malformedResponse("READ answered \(data.count) bytes, expected 16")))
        }
        for i in 0..<4 where page + i < limit || i == 0 {
            pages[page + i] = Array(data[(i * 4)..<(i * 4 + 4)])
        }
        return data[address % 4]
    }

    func bytes(_ range: Range<Int>) throws(Type2TagError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(range.count)
        for a in range { out.append(try byte(a)) }
        return out
    }
}
