// pcapng, written by hand (the IETF draft "PCAP Next Generation (pcapng) Capture File
// Format", draft-ietf-opsawg-pcapng; blocks SHB, IDB, EPB, host byte order).
//
// Why not libpcap (Debian libpcap-dev): `pcap_dump_open` writes the old pcap format, which
// has no per-packet comments and no section options, and this export needs both (the
// decoded Type 2 command of each frame, "synthesized" marks, the tool and library versions).
// pcapng's three blocks are a few dozen lines of byte layout, and writing them here keeps
// NFCTrace free of C (the design: only NFCHardware imports C modules).

/// LINKTYPE_ISO_14443 (264, tcpdump.org link-layer header types): each packet starts with
/// the 4-byte pseudo-header published at http://www.kaiser.cx/pcap-iso14443.html — version
/// (0), event, data length (2 bytes, big-endian) — then the frame.
public enum ISO14443LinkType {
    public static let linkType: UInt16 = 264

    /// The pseudo-header's event byte.
    public enum Event: UInt8, Sendable, Equatable {
        /// Card to reader, the frame ends with its CRC.
        case piccToPCD = 0xFF
        /// Reader to card, the frame ends with its CRC.
        case pcdToPICC = 0xFE
        case fieldOff = 0xFD
        case fieldOn = 0xFC
        /// Card to reader, CRC not included (what libnfc and PC/SC hand over).
        case piccToPCDCRCDropped = 0xFB
        /// Reader to card, CRC not included.
        case pcdToPICCCRCDropped = 0xFA
    }

    /// The pseudo-header and `data`.
    public static func packet(_ event: Event, _ data: [UInt8]) -> [UInt8] {
        [0x00, event.rawValue, UInt8(truncatingIfNeeded: data.count >> 8), UInt8(truncatingIfNeeded: data.count)]
            + data
    }
}

/// pcapng blocks, host byte order (the byte-order magic says which).
public enum Pcapng {
    /// Direction of a packet for the EPB `epb_flags` option (bits 0–1), from the capture
    /// point's side: the reader (PCD).
    public enum Direction: UInt32, Sendable {
        case inbound = 1
        case outbound = 2
    }

    /// Section Header Block with `shb_comment`, `shb_hardware`, `shb_os`, `shb_userappl`.
    public static func sectionHeader(
        comment: String? = nil, hardware: String? = nil, os: String? = nil, application: String? = nil
    ) -> [UInt8] {
        var body: [UInt8] = []
        body += u32(0x1A2B_3C4D)
        body += u16(1) + u16(0)
        body += [UInt8](repeating: 0xFF, count: 8)  // section length: not specified
        var options: [UInt8] = []
        if let comment { options += option(1, Array(comment.utf8)) }
        if let hardware { options += option(2, Array(hardware.utf8)) }
        if let os { options += option(3, Array(os.utf8)) }
        if let application { options += option(4, Array(application.utf8)) }
        return block(0x0A0D_0D0A, body, options)
    }

    /// Interface Description Block: `linkType`, no snap length limit, `if_name`,
    /// `if_description`, `if_tsresol` 6 (microseconds).
    public static func interfaceDescription(linkType: UInt16, name: String? = nil, description: String? = nil)
        -> [UInt8]
    {
        let body = u16(linkType) + u16(0) + u32(0)
        var options: [UInt8] = []
        if let name { options += option(2, Array(name.utf8)) }
        if let description { options += option(3, Array(description.utf8)) }
        options += option(9, [6])
        return block(0x0000_0001, body, options)
    }

    /// Enhanced Packet Block on interface `interface`, at `timestampMicroseconds` since the
    /// Unix epoch, with an `opt_comment` and `epb_flags` (direction) when given.
    public static func enhancedPacket(
        interface: UInt32 = 0, timestampMicroseconds: Int64, data: [UInt8], comment: String? = nil,
        direction: Direction? = nil
    ) -> [UInt8] {
        let t = UInt64(max(0, timestampMicroseconds))
        var body = u32(interface) + u32(UInt32(truncatingIfNeeded: t >> 32)) + u32(UInt32(truncatingIfNeeded: t))
        body += u32(UInt32(data.count)) + u32(UInt32(data.count))
        body += padded(data)
        var options: [UInt8] = []
        if let comment, !comment.isEmpty { options += option(1, Array(comment.utf8)) }
        if let direction { options += option(2, u32(direction.rawValue)) }
        return block(0x0000_0006, body, options)
    }

    private static func block(_ type: UInt32, _ body: [UInt8], _ options: [UInt8]) -> [UInt8] {
        var opts = options
        if !opts.isEmpty { opts += u16(0) + u16(0) }  // opt_endofopt
        let total = UInt32(12 + body.count + opts.count)
        return u32(type) + u32(total) + body + opts + u32(total)
    }

    private static func option(_ code: UInt16, _ value: [UInt8]) -> [UInt8] {
        u16(code) + u16(UInt16(truncatingIfNeeded: min(value.count, 0xFFFF))) + padded(Array(value.prefix(0xFFFF)))
    }

    private static func padded(_ bytes: [UInt8]) -> [UInt8] {
        bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4)
    }

    static func u16(_ v: UInt16) -> [UInt8] { withUnsafeBytes(of: v) { Array($0) } }
    static func u32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v) { Array($0) } }
}

/// LINKTYPE_WIRESHARK_UPPER_PDU (252, tcpdump.org link-layer header types): each packet
/// starts with Wireshark's "exported PDU" tags (wsutil/exported_pdu_tlvs.h: 2-byte tag,
/// 2-byte length, big-endian, the value padded with zeros to 4 bytes and counted in the
/// length, as Wireshark writes them), then the PDU, which Wireshark hands to the dissector
/// the `EXP_PDU_TAG_DISSECTOR_NAME` (12) tag names. How this export reaches a dissector that
/// has no link type of its own: FeliCa's (`felica`, Wireshark's packet-felica.c).
public enum ExportedPDULinkType {
    public static let linkType: UInt16 = 252

    /// Wireshark's name of its FeliCa dissector (`register_dissector("felica", …)`).
    public static let feliCaDissector = "felica"

    /// The dissector-name tag, the end-of-options tag, and `data`.
    public static func packet(dissector: String, _ data: [UInt8]) -> [UInt8] {
        var name = Array(dissector.utf8.prefix(0xFFF0))
        name += [UInt8](repeating: 0, count: (4 - name.count % 4) % 4)
        return be16(12) + be16(UInt16(name.count)) + name + be16(0) + be16(0) + data
    }

    private static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(truncatingIfNeeded: v)] }
}
