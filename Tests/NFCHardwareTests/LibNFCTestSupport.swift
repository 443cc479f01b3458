import Foundation
import NFCTags
import VirtualHardware

/// A minimal NTAG215 for the libnfc wrapper tests (READ, WRITE, GET_VERSION; NAK `0` and
/// idle on a bad page). Replace with NFCTags' `NTAG21xCore` once it lands on main.
struct LibNFCTestNTAG215: PN532Type2Responder {
    static let pageCount = 135
    var pages: [[UInt8]] = (0..<135).map { p in
        switch p {
        case 0: [0x04, 0xA1, 0xB2, 0x88 ^ 0x04 ^ 0xA1 ^ 0xB2]
        case 1: [0xC3, 0xD4, 0xE5, 0xF6]
        case 2: [0xC3 ^ 0xD4 ^ 0xE5 ^ 0xF6, 0x48, 0x00, 0x00]
        case 3: [0xE1, 0x10, 0x3E, 0x00]
        case 133, 134: [0, 0, 0, 0]
        default: [UInt8(p), 0x11, 0x22, UInt8(255 - p)]
        }
    }
    var active = true

    mutating func respond(to frame: [UInt8]) -> Type2Answer {
        guard active, let command = frame.first else { return .silent }
        switch command {
        case 0x30 where frame.count == 2 && Int(frame[1]) < Self.pageCount:
            return .data((0..<4).flatMap { pages[(Int(frame[1]) + $0) % Self.pageCount] })
        case 0xA2 where frame.count == 6 && (2..<Self.pageCount).contains(Int(frame[1])):
            pages[Int(frame[1])] = Array(frame[2...])
            return .ack
        case 0x60 where frame.count == 1:
            return .data([0x00, 0x04, 0x04, 0x02, 0x01, 0x00, 0x11, 0x03])
        default:
            active = false
            return .nak(0x0)
        }
    }
    mutating func halt() { active = false }
    mutating func wakeUp() { active = true }
}

struct LibNFCTestSelectApp: PN532APDUResponder {
    mutating func respond(to apdu: [UInt8]) -> [UInt8] {
        apdu.count >= 2 && apdu[0] == 0x00 && apdu[1] == 0xA4 ? [0x90, 0x00] : [0x6D, 0x00]
    }
}

enum LibNFCTestBench {
    static let uid: [UInt8] = [0x04, 0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6]
    static func ntag215() -> PN532Card {
        PN532Card(uid: uid, atqa: [0x44, 0x00], sak: 0x00, function: .type2(LibNFCTestNTAG215()))
    }
    static func isoDEP() -> PN532Card {
        PN532Card(uid: [0x08, 0x11, 0x22, 0x33], atqa: [0x04, 0x00], sak: 0x20,
                  ats: [0x06, 0x75, 0x77, 0x80, 0x02, 0x7A], function: .isoDEP(LibNFCTestSelectApp()))
    }
    static func linkPath(_ tag: String) -> String {
        "\(NSTemporaryDirectory())nfcbench-libnfc-\(tag)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }
    /// libnfc is installed (its tools come with the same Debian source); always required under CI.
    static var enabled: Bool {
        ProcessInfo.processInfo.environment["CI"] == "true" || FileManager.default.fileExists(atPath: "/usr/bin/nfc-list")
    }
}
