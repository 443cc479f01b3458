// Memory maps of the NXP Type 2 tags this package reads and emulates, from the datasheets:
// NTAG213/215/216 Rev 3.2 §8.5 (memory organisation) and §8.5.7 (configuration pages),
// NTAG210/212 Rev 3.0 §8.5, MF0ULX1 (Ultralight EV1) Rev 3.2 §8.5, MF0ICU1 (Ultralight) §8.5,
// MF0ICU2 (Ultralight C) Rev 3.3 §7.5.

/// Where a Type 2 tag keeps its user memory, dynamic lock bytes and configuration pages.
///
/// Pages are 4 bytes. Pages 0–2 hold UID, BCCs and static lock bytes, page 3 the CC,
/// user memory starts at page 4. Configuration pages, when present, are CFG0 (`MIRROR`/`MOD`,
/// RFUI, `MIRROR_PAGE`/RFUI, `AUTH0`), CFG1 (`ACCESS`, ...), PWD and PACK, in that order.
public struct Type2MemoryLayout: Sendable, Hashable {
    /// Pages the tag answers READ for (0 ... totalPages − 1).
    public let totalPages: Int
    /// User memory in bytes, from page 4 on.
    public let userMemoryBytes: Int
    /// The CC size byte NXP writes at the factory (data area = 8 × this).
    public let ccSizeByte: UInt8
    /// Page of the 3 dynamic lock bytes (`nil`: the tag has none).
    public let dynamicLockPage: Int?
    /// User pages each dynamic lock bit locks, starting at page 16 (datasheet lock-byte tables).
    public let pagesPerDynamicLockBit: Int
    /// Page of CFG0 (`nil`: no configuration pages, plain Ultralight).
    public let configurationPage: Int?

    /// The last page of user memory.
    public var lastUserPage: Int { 3 + userMemoryBytes / 4 }
    /// Dynamic lock bits in use (bit k of the lock bytes locks pages 16 + k·n ..< 16 + (k+1)·n).
    public var dynamicLockBitCount: Int {
        guard dynamicLockPage != nil, pagesPerDynamicLockBit > 0 else { return 0 }
        let pages = lastUserPage + 1 - 16
        return pages <= 0 ? 0 : (pages + pagesPerDynamicLockBit - 1) / pagesPerDynamicLockBit
    }
    /// CFG1's page (`ACCESS` in byte 0).
    public var accessPage: Int? { configurationPage.map { $0 + 1 } }
    /// The PWD page (reads as `00`).
    public var passwordPage: Int? { configurationPage.map { $0 + 2 } }
    /// The PACK page (bytes 0–1 PACK, reads as `00`).
    public var packPage: Int? { configurationPage.map { $0 + 3 } }

    public init(
        totalPages: Int, userMemoryBytes: Int, ccSizeByte: UInt8, dynamicLockPage: Int?,
        pagesPerDynamicLockBit: Int, configurationPage: Int?
    ) {
        self.totalPages = totalPages
        self.userMemoryBytes = userMemoryBytes
        self.ccSizeByte = ccSizeByte
        self.dynamicLockPage = dynamicLockPage
        self.pagesPerDynamicLockBit = pagesPerDynamicLockBit
        self.configurationPage = configurationPage
    }

    /// NTAG213: 45 pages, 144 user bytes, CC `12`, dynamic lock page `28h` (2 pages a bit), CFG0 `29h`.
    public static let ntag213 = Type2MemoryLayout(
        totalPages: 45, userMemoryBytes: 144, ccSizeByte: 0x12,
        dynamicLockPage: 0x28, pagesPerDynamicLockBit: 2, configurationPage: 0x29)
    /// NTAG215: 135 pages, 504 user bytes, CC `3E`, dynamic lock page `82h` (16 pages a bit), CFG0 `83h`.
    public static let ntag215 = Type2MemoryLayout(
        totalPages: 135, userMemoryBytes: 504, ccSizeByte: 0x3E,
        dynamicLockPage: 0x82, pagesPerDynamicLockBit: 16, configurationPage: 0x83)
    /// NTAG216: 231 pages, 888 user bytes, CC `6D`, dynamic lock page `E2h` (16 pages a bit), CFG0 `E3h`.
    public static let ntag216 = Type2MemoryLayout(
        totalPages: 231, userMemoryBytes: 888, ccSizeByte: 0x6D,
        dynamicLockPage: 0xE2, pagesPerDynamicLockBit: 16, configurationPage: 0xE3)
    /// NTAG210: 20 pages, 48 user bytes, CC `06`, no dynamic lock bytes, CFG0 `10h`.
    public static let ntag210 = Type2MemoryLayout(
        totalPages: 20, userMemoryBytes: 48, ccSizeByte: 0x06,
        dynamicLockPage: nil, pagesPerDynamicLockBit: 0, configurationPage: 0x10)
    /// NTAG212: 41 pages, 128 user bytes, CC `10`, dynamic lock page `24h` (2 pages a bit), CFG0 `25h`.
    public static let ntag212 = Type2MemoryLayout(
        totalPages: 41, userMemoryBytes: 128, ccSizeByte: 0x10,
        dynamicLockPage: 0x24, pagesPerDynamicLockBit: 2, configurationPage: 0x25)
    /// MIFARE Ultralight (MF0ICU1): 16 pages, 48 user bytes, CC `06`, no configuration pages.
    public static let ultralight = Type2MemoryLayout(
        totalPages: 16, userMemoryBytes: 48, ccSizeByte: 0x06,
        dynamicLockPage: nil, pagesPerDynamicLockBit: 0, configurationPage: nil)
    /// MIFARE Ultralight C (MF0ICU2): 48 pages (READ reaches `00h`–`2Bh`; the 3DES key in
    /// `2Ch`–`2Fh` is never readable), 144 user bytes (`04h`–`27h`), CC `12`; lock bytes 2–3
    /// in `28h`, counter `29h`, AUTH0 `2Ah`, AUTH1 `2Bh` (no NTAG configuration pages).
    public static let ultralightC = Type2MemoryLayout(
        totalPages: 48, userMemoryBytes: 144, ccSizeByte: 0x12,
        dynamicLockPage: nil, pagesPerDynamicLockBit: 0, configurationPage: nil)
    /// Ultralight EV1 MF0UL11: 20 pages, 48 user bytes, CC `06`, CFG0 `10h`.
    public static let ultralightEV1MF0UL11 = Type2MemoryLayout(
        totalPages: 20, userMemoryBytes: 48, ccSizeByte: 0x06,
        dynamicLockPage: nil, pagesPerDynamicLockBit: 0, configurationPage: 0x10)
    /// Ultralight EV1 MF0UL21: 41 pages, 128 user bytes, CC `10`, dynamic lock page `24h` (4 pages a bit), CFG0 `25h`.
    public static let ultralightEV1MF0UL21 = Type2MemoryLayout(
        totalPages: 41, userMemoryBytes: 128, ccSizeByte: 0x10,
        dynamicLockPage: 0x24, pagesPerDynamicLockBit: 4, configurationPage: 0x25)
}
