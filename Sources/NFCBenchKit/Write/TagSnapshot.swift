import Foundation
public import NFCTags
import NFCTrace
public import ReaderSession

/// What a tag holds now, as our tag-file JSON: `dump`, and the backup `write`/`format`/`lock`
/// take first. One procedure for every device; it never writes.
///
/// - Type 2: GET_VERSION (`Type2TagReader/identify()`; a plain Ultralight NAKs and is
///   re-activated) names the product and its page count; without it the CC's data area
///   decides (pages 0–3 and 2 × MLEN data pages: the lock and configuration pages after the
///   data area are then not read, and a note says so). Pages come in 16-byte READs, or in
///   FAST_READ ranges as large as the reader carries when GET_VERSION names a product with it.
/// - Type 4: the CC file and the NDEF file up to NLEN/ENLEN (the rest of the file is not read).
/// - A device that does not show ATQA and SAK (PC/SC shows an ATR) gets the family's values
///   (`44 00`/`00` for Type 2, `44 03`/`20` for Type 4) and the ATS rebuilt from the ATR's
///   historical bytes, each with a note.
public enum TagSnapshot {
    /// Now as `2026-11-30T20:11:20Z` (UTC, seconds), by `gmtime_r` through the trace header's
    /// formatter: ISO8601DateFormatter would load ICU's calendar and zone data, several
    /// milliseconds of a dump's run (issue 15's start-up budget).
    public static func utcNow() -> String {
        String(TraceHeader.timestamp(Date()).prefix(19)) + "Z"
    }

    /// The tag on `connection` (just detected as `target`) read whole as a tag file, by its
    /// family's procedure; never writes. Throws the tag's own error (lost, NAK, a malformed CC),
    /// or ``BenchError/data(_:)`` (exit 65) when the reader's UID, ATQA or SAK make no activation.
    public static func take(_ target: DetectedTarget, _ connection: TagConnection) throws -> TagFile {
        switch connection {
        case .type2(let t): try type2(target, t)
        case .iso7816(let t): try type4(target, t)
        case .felica(let t): try feliCa(target, t)
        case .iso15693(let t): try iso15693(target, t)
        }
    }

    /// A FeliCa card as the NFC Forum system shows it: Polling 12FC, the attribute block and
    /// every block up to Nmaxb through service 000B (a Lite-S's user memory). Other systems
    /// and services are not enumerated (their service codes are the card's secret).
    public static func feliCa(_ target: DetectedTarget, _ t: any FeliCaTransport) throws -> TagFile {
        let reader = Type3TagReader(transport: t)
        let (idm, pmm) = try reader.pollNDEFSystem()
        let (_, attribute) = try reader.readAttribute()
        var blocks: [[UInt8]] = []
        var next = 0
        while next <= attribute.nmaxb {
            let chunk = Array(next...min(attribute.nmaxb, next + max(1, attribute.nbr) - 1))
            let data = try reader.check(idm: idm, blocks: chunk)
            for k in 0..<chunk.count { blocks.append(Array(data[(16 * k)..<(16 * k + 16)])) }
            next += chunk.count
        }
        var file = TagFile(
            type: pmm.count > 1 && (0xF0...0xF2).contains(pmm[1]) ? .feliCaLiteS : .feliCaStandard,
            activation: TagFile.noTypeAActivation,
            comment:
                "read by nfcbench \(BenchVersion.version) at \(Self.utcNow()); system 12FC only (other systems not read)"
        )
        file.feliCa = FeliCaCore(
            pmm: pmm,
            systems: [
                FeliCaCore.System(
                    code: 0x12FC, idm: idm, services: [.init(code: 0x000B), .init(code: 0x0009)], blocks: blocks)
            ],
            maximumReadBlocks: max(1, attribute.nbr), maximumWriteBlocks: max(1, attribute.nbw))
        return file
    }

    /// An ISO 15693 tag: GET SYSTEM INFO (DSFID, AFI, block size and count, IC reference),
    /// then every block with READ SINGLE (and its security status, the Option flag). A reader
    /// that cannot send GET SYSTEM INFO (a PC/SC storage-card path answers "not supported")
    /// gets ``iso15693WithoutSystemInfo(_:_:)``.
    public static func iso15693(_ target: DetectedTarget, _ t: any ISO15693Transport) throws -> TagFile {
        let r = try t.request([0x02, 0x2B])
        if r.count == 2, r[0] & 0x01 != 0 { return try iso15693WithoutSystemInfo(target, t) }
        guard r.count >= 10, r[0] == 0x00, r[1] & 0x04 != 0 else {
            throw TagCommunicationError.malformedResponse("GET SYSTEM INFO answered \(r.hexString())")
        }
        let info = r[1]
        var i = 10
        var dsfid: UInt8 = 0
        var afi: UInt8 = 0
        if info & 0x01 != 0 {
            dsfid = r[i]
            i += 1
        }
        if info & 0x02 != 0 {
            afi = r[i]
            i += 1
        }
        guard r.count >= i + 2 else { throw TagCommunicationError.malformedResponse("GET SYSTEM INFO") }
        let count = Int(r[i]) + 1
        let size = Int(r[i + 1] & 0x1F) + 1
        i += 2
        let ic: UInt8 = info & 0x08 != 0 && i < r.count ? r[i] : 0
        var blocks: [[UInt8]] = []
        var locked: Set<Int> = []
        for b in 0..<count {
            let a = try t.request([0x42, 0x20, UInt8(b)])
            guard a.count == 2 + size, a[0] == 0x00 else {
                throw TagCommunicationError.malformedResponse("READ SINGLE \(b) answered \(a.hexString())")
            }
            if a[1] & 0x01 != 0 { locked.insert(b) }
            blocks.append(Array(a[2...]))
        }
        let uid = Array(r[2..<10].reversed())
        var file = TagFile(
            type: uid.count > 1 && uid[1] == 0x02 ? .st25tv : .icodeSLIX, activation: TagFile.noTypeAActivation,
            comment: "read by nfcbench \(BenchVersion.version) at \(Self.utcNow())")
        file.iso15693 = ISO15693Core(
            uid: uid, dsfid: dsfid, afi: afi, icReference: ic, blockSize: size, blocks: blocks, lockedBlocks: locked)
        return file
    }

    /// Without GET SYSTEM INFO: the block size from block 0's answer, the blocks read until the
    /// tag answers "block not available" (`10`), the UID as the device showed it; DSFID, AFI,
    /// the IC reference and lock bits are unknown (`00`, none locked), which a note says.
    public static func iso15693WithoutSystemInfo(_ target: DetectedTarget, _ t: any ISO15693Transport) throws -> TagFile
    {
        var blocks: [[UInt8]] = []
        while blocks.count < 256 {
            let a = try t.request([0x02, 0x20, UInt8(blocks.count)])
            if a.count == 2, a[0] & 0x01 != 0, a[1] == 0x10, !blocks.isEmpty { break }
            guard a.count >= 2, a[0] == 0x00, blocks.isEmpty || a.count - 1 == blocks[0].count else {
                throw TagCommunicationError.malformedResponse("READ SINGLE \(blocks.count) answered \(a.hexString())")
            }
            blocks.append(Array(a.dropFirst()))
        }
        let uid = target.uid
        var file = TagFile(
            type: uid.count > 1 && uid[1] == 0x02 ? .st25tv : .icodeSLIX, activation: TagFile.noTypeAActivation,
            comment: "read by nfcbench \(BenchVersion.version) at \(Self.utcNow())")
        file.iso15693 = ISO15693Core(uid: uid, blockSize: blocks[0].count, blocks: blocks)
        file.notes.append(
            "the reader could not send GET SYSTEM INFO: DSFID, AFI and the IC reference read as 00, lock bits as unlocked"
        )
        return file
    }

    public static func type2(_ target: DetectedTarget, _ t: any Type2TagTransport) throws -> TagFile {
        var probe = Type2TagReader(transport: t)
        let version = try probe.identify()
        var notes: [String] = []
        var total = version?.totalPages ?? 0
        var ultralightC = false
        if total == 0 {
            let head = try t.read(page: 0)
            guard head.count == 16 else {
                throw TagCommunicationError.malformedResponse("READ 0 answered \(head.count) bytes")
            }
            if isUltralightC(t) {
                // MF0ICU2: 48 pages; 2Ch–2Fh hold the 3DES key, which no READ returns.
                ultralightC = true
                total = 48
                notes.append(
                    "an Ultralight C (no GET_VERSION; it answers AUTHENTICATE 1A): pages 2Ch-2Fh hold its 3DES key, which no reader can read: 00 placeholders here (unread_pages)"
                )
            } else {
                total = head[12] == 0xE1 ? 4 + Int(head[14]) * 2 : 16
                notes.append(
                    "no GET_VERSION answer (a plain Ultralight, or a reader without a transparent exchange): \(total) pages from the CC; pages after the data area (lock, configuration) not read"
                )
            }
        }
        // READs of 4 pages, or FAST_READ ranges when GET_VERSION named a product with it.
        var pages: [[UInt8]]
        let readable = ultralightC ? 0x2C : min(total, 0x100)
        do { pages = try probe.readPages(0..<readable) } catch {
            if case .communication(let e) = error.code { throw e }
            throw error
        }
        if ultralightC { pages += Array(repeating: [0, 0, 0, 0], count: total - readable) }
        let activation = try activation(target, type4: false, notes: &notes)
        var file = TagFile(
            type: ultralightC ? .ultralightC : fileType(version, pageCount: pages.count), activation: activation,
            getVersion: version?.bytes,
            pages: pages,
            comment: "read by nfcbench \(BenchVersion.version) at \(Self.utcNow())"
                + Self.hiddenPages(ultralightC, version)
        )
        file.notes += notes
        if ultralightC { file.unreadPages = Array(readable..<total) }
        return file
    }

    /// What the dump's comment says of the pages a tag never reveals: an Ultralight C's 3DES key
    /// (pages 2Ch-2Fh, which the MF0ICU2 never returns to a READ: kept as 00 and listed in `unread_pages`); the
    /// PWD and PACK of a tag that answers GET_VERSION (NTAG21x, Ultralight EV1: they read as 00);
    /// nothing for a plain Ultralight or NTAG203, which have neither.
    static func hiddenPages(_ ultralightC: Bool, _ version: TagVersion?) -> String {
        if ultralightC { return "; the 3DES key pages 2Ch-2Fh are not readable: kept as 00 and listed in unread_pages" }
        return version == nil ? "" : "; PWD/PACK pages read as 00 (a tag never reveals them)"
    }

    /// Whether a Type 2 tag without GET_VERSION is an Ultralight C (MF0ICU2): it answers
    /// AUTHENTICATE part 1 (`1A 00`, §7.5.5) with `AF` and 8 bytes, where a plain Ultralight or
    /// an NTAG203 NAKs; through a reader with no raw frames (a PC/SC storage card), a READ of
    /// page 2Bh, which only its 44 readable pages reach. The tag is re-activated after the
    /// probe (a half-done authentication, or a NAK, leaves it waiting or idle).
    public static func isUltralightC(_ t: any Type2TagTransport) -> Bool {
        do {
            let answer = try t.transceive([0x1A, 0x00])
            try? t.reactivate()
            if case .data(let d) = answer, d.count == 9, d[0] == 0xAF { return true }
            return false
        } catch TagCommunicationError.unsupportedCommand {
            do { return try t.read(page: 0x2B).count == 16 } catch {
                try? t.reactivate()
                return false
            }
        } catch {
            try? t.reactivate()
            return false
        }
    }

    public static func type4(_ target: DetectedTarget, _ t: any APDUTransport) throws -> TagFile {
        let reader = Type4TagReader(transport: AnyAPDUTransport(t))
        let cc = try reader.detect()
        let message = try reader.readNDEF(capabilityContainer: cc)
        let width = cc.lengthFieldSize
        let length = (0..<width).reversed().map { UInt8((message.count >> ($0 * 8)) & 0xFF) }
        var notes: [String] = []
        let contents = TagFile.Type4Contents(
            ndefFile: length + message, maximumNDEFFileSize: cc.maximumNDEFFileSize,
            mappingVersion: "\(cc.majorVersion).\(cc.mappingVersion & 0x0F)", readOnly: !cc.isWritable,
            fileID: [UInt8(cc.ndefFileID >> 8), UInt8(cc.ndefFileID & 0xFF)])
        var file = TagFile(
            type: .type4, activation: try activation(target, type4: true, notes: &notes), type4: contents,
            comment:
                "read by nfcbench \(BenchVersion.version) at \(Self.utcNow()); NDEF file up to its length field (the rest is not read)"
        )
        file.notes += notes
        return file
    }

    /// The tag file type for a Type 2 tag, from GET_VERSION, else the page count.
    public static func fileType(_ version: TagVersion?, pageCount: Int) -> TagFile.TagType {
        switch version?.product {
        case .ntag213?: .ntag213
        case .ntag215?: .ntag215
        case .ntag216?: .ntag216
        case .ultralightEV1MF0UL11?, .ultralightEV1MF0UL21?: .ultralightEV1
        default:
            switch pageCount {
            case 45: .ntag213
            case 135: .ntag215
            case 231: .ntag216
            default: .ultralight
            }
        }
    }

    /// The activation the device showed, or the family's values with a note when it showed
    /// only an ATR.
    public static func activation(_ target: DetectedTarget, type4: Bool, notes: inout [String]) throws
        -> ISO14443AActivation
    {
        var atqa = target.atqa
        var sak = target.sak
        var ats = target.ats
        if atqa == nil || sak == nil {
            atqa = type4 ? [0x44, 0x03] : [0x44, 0x00]
            sak = type4 ? 0x20 : 0x00
            notes.append(
                "the reader does not report ATQA and SAK (PC/SC): \(ISO14443AActivation.atqaText(atqa!)) / \([sak!].hexString()) assumed for the family"
            )
        }
        if type4 && ats == nil {
            let historical = (try? ATR(bytes: target.atr ?? []))?.historicalBytes ?? []
            ats = [UInt8(2 + historical.count), 0x05] + historical  // T0: FSCI 5, no TA/TB/TC
            notes.append("ATS rebuilt from the ATR's historical bytes")
        }
        do {
            return try ISO14443AActivation(uid: target.uid, atqa: atqa!, sak: sak!, ats: type4 ? ats : nil)
        } catch {
            throw BenchError.data("the reader gave UID \(target.uid.hexString()): \(error)")
        }
    }
}

/// `any APDUTransport` as a concrete type for `Type4TagReader<Transport>`.
public struct AnyAPDUTransport: APDUTransport {
    public let base: any APDUTransport
    public init(_ base: any APDUTransport) { self.base = base }
    public func transmit(_ command: [UInt8]) throws -> [UInt8] { try base.transmit(command) }
    public var maximumResponseLength: Int { base.maximumResponseLength }
}
