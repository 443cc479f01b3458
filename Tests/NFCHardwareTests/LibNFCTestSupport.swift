import Foundation
import NFCBenchTestSupport
import NFCTags
import VirtualHardware

/// The NTAG215 image of the libnfc wrapper tests, served by NFCTags' `NTAG21xCore`:
/// UID `04 A1 B2 C3 D4 E5 F6`, CC `E1 10 3E 00`, a recognisable pattern in every other page.
enum LibNFCTestNTAG215 {
    static let pageCount = 135
    static let pages: [[UInt8]] = (0..<135).map { p in
        switch p {
        case 0: [0x04, 0xA1, 0xB2, 0x88 ^ 0x04 ^ 0xA1 ^ 0xB2]
        case 1: [0xC3, 0xD4, 0xE5, 0xF6]
        case 2: [0xC3 ^ 0xD4 ^ 0xE5 ^ 0xF6, 0x48, 0x00, 0x00]
        case 3: [0xE1, 0x10, 0x3E, 0x00]
        case 130: [0x00, 0x00, 0x00, 0xBD]  // dynamic lock bytes
        case 131: [0x04, 0x00, 0x00, 0xFF]  // CFG0: AUTH0 FF (no page protected)
        case 132: [0x00, 0x05, 0x00, 0x00]  // CFG1
        case 133, 134: [0, 0, 0, 0]  // PWD, PACK (read as 00 anyway)
        default: [UInt8(p), 0x11, 0x22, UInt8(255 - p)]
        }
    }
    static func core() throws -> NTAG21xCore { try NTAG21xCore(variant: .ntag215, pages: pages) }
}

struct LibNFCTestSelectApp: PN532APDUResponder {
    mutating func respond(to apdu: [UInt8]) -> [UInt8] {
        apdu.count >= 2 && apdu[0] == 0x00 && apdu[1] == 0xA4 ? [0x90, 0x00] : [0x6D, 0x00]
    }
}

enum LibNFCTestBench {
    static let uid: [UInt8] = [0x04, 0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6]
    static func ntag215() throws -> PN532Card {
        PN532Card(uid: uid, atqa: [0x44, 0x00], sak: 0x00, function: .type2(try LibNFCTestNTAG215.core()))
    }
    static func isoDEP() -> PN532Card {
        PN532Card(
            uid: [0x08, 0x11, 0x22, 0x33], atqa: [0x04, 0x00], sak: 0x20,
            ats: [0x06, 0x75, 0x77, 0x80, 0x02, 0x7A], function: .isoDEP(LibNFCTestSelectApp()))
    }
    /// A fresh pty link path in ``linkFolder``.
    static func linkPath(_ tag: String) -> String {
        linkFolder.file("\(tag)-\(UInt32.random(in: 0...UInt32.max))")
    }
    /// This test process's folder of pty links: private (``TestFolder``), removed with what is
    /// left in it when the process exits (each virtual PN532's `stop()` removes its own link).
    static let linkFolder: TestFolder = {
        let folder = try! TestFolder("libnfc-links")
        atexit { LibNFCTestBench.linkFolder.remove() }
        return folder
    }()
    /// libnfc is installed (its tools come with the same Debian source); always required under CI.
    static var enabled: Bool {
        ProcessInfo.processInfo.environment["CI"] == "true"
            || FileManager.default.fileExists(atPath: "/usr/bin/nfc-list")
    }
}
