// NDEF-formatting a blank Type 2 tag (NFC Forum T2T 1.0 §6.4.1, "Initialised state"), as
// tagtool's `format` and NXP's TagWriter do: the capability container E1 10 <size> 00 in page
// 3 and an empty NDEF TLV (03 00 FE) at the start of the data area.

/// The two writes that NDEF-format a blank Type 2 tag, in their order.
///
/// The CC is one-time programmable on every NTAG21x and Ultralight (NTAG213/215/216 data sheet
/// §8.5.6, MF0ICU1 §8.5.3): its bits can be set, never cleared, so it is written once and last
/// (a reader in between sees no NDEF tag, never an NDEF tag with stale data). The size byte is
/// the factory value of the product (``TagVersion/Product/ccSizeByte``), of the tag type when
/// there is no GET_VERSION (Ultralight 06, Ultralight C 12), or `size / 8` when given.
public struct Type2NDEFFormat: Sendable, Hashable {
    /// The empty NDEF TLV and Terminator in the first data page: `03 00 FE 00`.
    public var dataPage: (page: Int, bytes: [UInt8]) { (4, [0x03, 0x00, 0xFE, 0x00]) }
    /// The CC: `E1 10 <size> 00` (mapping 1.0, read/write access granted).
    public var capabilityContainer: (page: Int, bytes: [UInt8]) { (3, [0xE1, 0x10, sizeByte, 0x00]) }
    public var sizeByte: UInt8

    /// Why a tag can't be NDEF-formatted.
    public struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
    }

    /// The format of a tag of `type` whose page 3 reads `page3`; `size`: the data area in
    /// bytes the user asked for (a multiple of 8, at most the tag's user memory).
    public init(type: TagFile.TagType, pageCount: Int, page3: [UInt8], size: Int? = nil) throws(Refusal) {
        guard page3 == [0, 0, 0, 0] else {
            throw Refusal(
                description:
                    "the tag's CC (page 3) is \(page3.hexString(separator: " ")), not blank: its one-time-programmable bits are set already (an NDEF tag is formatted with 'format' alone)"
            )
        }
        let layout: Type2MemoryLayout? =
            switch type {
            case .ntag213: .ntag213
            case .ntag215: .ntag215
            case .ntag216: .ntag216
            case .ultralight: .ultralight
            case .ultralightC: .ultralightC
            case .ultralightEV1: pageCount > 20 ? .ultralightEV1MF0UL21 : .ultralightEV1MF0UL11
            case .type4, .mifareClassic1K, .feliCaLiteS, .feliCaStandard, .icodeSLIX, .st25tv: nil
            }
        guard let layout else { throw Refusal(description: "a \(type.rawValue) tag is no Type 2 tag") }
        if let size {
            guard size > 0, size % 8 == 0, size <= layout.userMemoryBytes else {
                throw Refusal(
                    description:
                        "--size \(size): the data area is a multiple of 8 bytes from 8 to the tag's \(layout.userMemoryBytes)"
                )
            }
            sizeByte = UInt8(size / 8)
        } else {
            sizeByte = layout.ccSizeByte
        }
    }

    /// The writes in order: the empty NDEF TLV, then the CC (irreversible).
    public var writes: [(page: Int, bytes: [UInt8])] { [dataPage, capabilityContainer] }
}
