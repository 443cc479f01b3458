import Foundation
import NFCBenchTestSupport
import NFCTags
import Testing
import VirtualHardware

/// The NTAG215 the PN532 tests use, served by NFCTags' `NTAG21xCore` (the same core the
/// simulator and the bench use): 135 pages, UID `04 A1 B2 C3 D4 E5 F6`.
enum PN532TestNTAG215 {
    static let pageCount = 135

    /// The factory-like image: UID with valid BCCs, CC `E1 10 3E 00`, an NDEF message with
    /// one URI record, a pattern after it, config pages with AUTH0 `FF`.
    static func image(uid: [UInt8] = [0x04, 0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6]) -> [[UInt8]] {
        var pages = [[UInt8]](repeating: [0, 0, 0, 0], count: pageCount)
        let bcc0 = 0x88 ^ uid[0] ^ uid[1] ^ uid[2]
        let bcc1 = uid[3] ^ uid[4] ^ uid[5] ^ uid[6]
        pages[0] = [uid[0], uid[1], uid[2], bcc0]
        pages[1] = [uid[3], uid[4], uid[5], uid[6]]
        pages[2] = [bcc1, 0x48, 0x00, 0x00]
        pages[3] = [0xE1, 0x10, 0x3E, 0x00]
        // NDEF TLV: URI record "https://example.org" then terminator; the rest is a pattern.
        let record: [UInt8] = [0xD1, 0x01, 0x0C, 0x55, 0x04] + Array("example.org".utf8)
        let tlv: [UInt8] = [0x03, UInt8(record.count)] + record + [0xFE]
        for (i, b) in tlv.enumerated() { pages[4 + i / 4][i % 4] = b }
        for p in 12..<130 { pages[p] = [UInt8(p), UInt8(p) ^ 0xFF, 0x5A, 0xA5] }
        pages[130] = [0x00, 0x00, 0x00, 0xBD]  // dynamic lock bytes
        pages[131] = [0x04, 0x00, 0x00, 0xFF]  // CFG0: AUTH0 FF
        pages[132] = [0x00, 0x05, 0x00, 0x00]  // CFG1
        pages[133] = [0xFF, 0xFF, 0xFF, 0xFF]  // PWD (reads as 00)
        pages[134] = [0x00, 0x00, 0x00, 0x00]  // PACK, RFUI
        return pages
    }

    /// The emulation core holding `pages`.
    static func core(pages: [[UInt8]] = image()) throws -> NTAG21xCore {
        try NTAG21xCore(variant: .ntag215, pages: pages)
    }

    /// What a READ shows of page `p`: PWD and PACK read as zeros.
    static func visible(_ pages: [[UInt8]], _ p: Int) -> [UInt8] { p == 133 || p == 134 ? [0, 0, 0, 0] : pages[p] }
}

/// An ISO-DEP card that answers SELECT by AID with `90 00` and anything else with `6D 00`.
struct PN532TestAPDUCard: PN532APDUResponder {
    var commands: [[UInt8]] = []
    mutating func respond(to apdu: [UInt8]) -> [UInt8] {
        commands.append(apdu)
        if apdu.count >= 4, apdu[0] == 0x00, apdu[1] == 0xA4 { return [0x90, 0x00] }
        return [0x6D, 0x00]
    }
}

enum PN532TestCards {
    static func ntag215(_ core: NTAG21xCore? = nil) throws -> PN532Card {
        PN532Card(
            uid: [0x04, 0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6], atqa: [0x44, 0x00], sak: 0x00,
            function: .type2(try core ?? PN532TestNTAG215.core()))
    }
    static func isoDEP() -> PN532Card {
        PN532Card(
            uid: [0x04, 0xA1, 0xB2, 0xC3], atqa: [0x04, 0x00], sak: 0x20,
            ats: [0x06, 0x75, 0x77, 0x80, 0x02, 0x7A], function: .isoDEP(PN532TestAPDUCard()))
    }
}

/// Runs libnfc's own tools against a virtual PN532.
enum LibNFCTool {
    static let directory = "/usr/bin"

    static func available(_ name: String) -> Bool {
        FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)")
    }

    /// `true` when the tools must be there (under CI) or are there.
    static func shouldRun(_ names: String...) -> Bool {
        ProcessInfo.processInfo.environment["CI"] == "true" || names.allSatisfy(available)
    }

    struct Result {
        var status: Int32
        var output: String
        var timedOut: Bool
    }

    /// Runs `name args` with `LIBNFC_DEVICE=pn532_uart:<link>`, `LIBNFC_AUTO_SCAN=false`;
    /// kills it after `timeout`.
    /// Runs a libnfc tool on a thread of its own (a waiting test must not hold one of the
    /// cooperative pool's two threads).
    static func run(
        _ name: String, _ arguments: [String], device link: String,
        timeout: Duration = .seconds(20), extraEnvironment: [String: String] = [:]
    ) async throws -> Result {
        try await offPool {
            try runBlocking(name, arguments, device: link, timeout: timeout, extraEnvironment: extraEnvironment)
        }
    }

    static func runBlocking(
        _ name: String, _ arguments: [String], device link: String,
        timeout: Duration, extraEnvironment: [String: String]
    ) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "\(directory)/\(name)")
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["LIBNFC_DEVICE"] = "pn532_uart:\(link)"
        env["LIBNFC_AUTO_SCAN"] = "false"
        env["LIBNFC_INTRUSIVE_SCAN"] = "false"
        for (k, v) in extraEnvironment { env[k] = v }
        process.environment = env
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        var end = processEndBlocking(of: process, timeout: timeout)
        let timedOut = end == nil
        if timedOut {
            process.terminate()
            end = processEndBlocking(of: process)
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        return Result(
            status: end?.status ?? -1, output: String(decoding: data, as: UTF8.self), timedOut: timedOut)
    }
}
