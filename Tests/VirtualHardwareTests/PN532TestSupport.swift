import Foundation
import NFCTags
import Testing
import VirtualHardware

/// A small NTAG215 for the PN532 tests (NTAG213/215/216 datasheet rev. 3.2): 135 pages,
/// READ `30` with roll-over, WRITE `A2`, GET_VERSION `60`, FAST_READ `3A`, PWD_AUTH `1B`,
/// READ_SIG `3C`; a NAK `0` for an out-of-range page, after which the tag is idle.
struct PN532TestNTAG215: PN532Type2Responder {
    static let pageCount = 135
    var pages: [[UInt8]]
    var active = true

    /// The factory-like image: UID `04 A1 B2 C3 D4 E5 F6` with valid BCCs, CC `E1 10 3E 00`,
    /// an NDEF message with one URI record, config pages with AUTH0 `FF`.
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

    init(pages: [[UInt8]] = Self.image()) { self.pages = pages }

    /// What a READ shows of page `p`: PWD and PACK read as zeros.
    func visible(_ p: Int) -> [UInt8] { p == 133 || p == 134 ? [0, 0, 0, 0] : pages[p] }

    mutating func respond(to frame: [UInt8]) -> Type2Answer {
        guard active, let command = frame.first else { return .silent }
        switch command {
        case 0x30 where frame.count == 2:
            let start = Int(frame[1])
            guard start < Self.pageCount else { return nakAndIdle() }
            return .data((0..<4).flatMap { visible((start + $0) % Self.pageCount) })
        case 0x3A where frame.count == 3:
            let (start, end) = (Int(frame[1]), Int(frame[2]))
            guard start <= end, end < Self.pageCount else { return nakAndIdle() }
            return .data((start...end).flatMap { visible($0) })
        case 0xA2 where frame.count == 6:
            let page = Int(frame[1])
            guard (2..<Self.pageCount).contains(page) else { return nakAndIdle() }
            pages[page] = Array(frame[2..<6])
            return .ack
        case 0x60 where frame.count == 1:
            return .data([0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x11, 0x03])
        case 0x1B where frame.count == 5:
            return .data([0x00, 0x00])
        case 0x3C where frame.count == 2:
            return .data([UInt8](repeating: 0, count: 32))
        default:
            return nakAndIdle()
        }
    }

    private mutating func nakAndIdle() -> Type2Answer {
        active = false
        return .nak(0x0)
    }

    mutating func halt() { active = false }
    mutating func wakeUp() { active = true }
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
    static func ntag215(_ tag: PN532TestNTAG215 = PN532TestNTAG215()) -> PN532Card {
        PN532Card(uid: [0x04, 0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6], atqa: [0x44, 0x00], sak: 0x00, function: .type2(tag))
    }
    static func isoDEP() -> PN532Card {
        PN532Card(uid: [0x04, 0xA1, 0xB2, 0xC3], atqa: [0x04, 0x00], sak: 0x20,
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

    struct Result { var status: Int32; var output: String; var timedOut: Bool }

    /// Runs `name args` with `LIBNFC_DEVICE=pn532_uart:<link>`, `LIBNFC_AUTO_SCAN=false`;
    /// kills it after `timeout`.
    static func run(_ name: String, _ arguments: [String], device link: String,
                    timeout: Duration = .seconds(20), extraEnvironment: [String: String] = [:]) throws -> Result {
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
        let deadline = ContinuousClock.now + timeout
        var timedOut = false
        while process.isRunning {
            if ContinuousClock.now > deadline { process.terminate(); timedOut = true; break }
            usleep(10_000)
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self), timedOut: timedOut)
    }
}

/// A fresh pty symlink path for one test.
func pn532TestLinkPath(_ tag: String) -> String {
    "\(NSTemporaryDirectory())nfcbench-pn532-\(tag)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
}
